"""Deciding rules on hand-made contexts, with a Locator over the script text."""

from __future__ import annotations

import json
import pickle
import time
from pathlib import Path

from megalint.diagnostics import Applicability, Severity
from megalint.engine import (
    Missing,
    Target,
    evaluate_one,
    load_rule_texts,
    load_rules,
)
from megalint.engine.evaluate import FAILED, FIRED, NOT_APPLICABLE, PASSED, UNDECIDED, evaluate
from megalint.engine.rule import rule_url

from .textlocator import TextLocator, apply_fix

DATA = Path(__file__).parent / "data"
DEMO = load_rules([DATA / "demo"], packaged=False)

SCRIPT = """\
#!/bin/bash
export NCCL_DEBUG=INFO
TP=8
torchrun --nproc-per-node 8 pretrain_gpt.py \\
    --num-attention-heads 12 \\
    --fp16 \\
    --tensor-model-parallel-size $TP
"""


def make_rules(*rules: dict):
    sources = []
    for i, fields in enumerate(rules):
        rule = {
            "code": f"ML9{i:02d}",
            "name": f"rule-{i}",
            "severity": "warning",
            "category": "test",
            "message": "m",
            "at": "launch",
            "docs": {"what": "w", "why": "y"},
            "examples": [{"bad": "x\n", "expect": [{"line": 1, "column": 1}]}],
        }
        if "fix" in fields:
            rule["docs"]["fix_safety"] = "s"
        rule.update(fields)
        sources.append((f"r{i}.yaml", json.dumps(rule)))
    # The rules read made-up arguments (args.a, args.flag_3 ...).
    return load_rule_texts(sources, check_arguments=False)


def heads_ctx(**over):
    ctx = {
        "args": {"num_attention_heads": 12, "tensor_model_parallel_size": 8, "fp16": True},
        "given": {"num_attention_heads": True, "tensor_model_parallel_size": True},
        "megatron": "0.15",
    }
    ctx.update(over)
    return ctx


def test_demo_rule_fires_with_places_labels_help_and_fix():
    loc = TextLocator(SCRIPT)
    ev = evaluate(DEMO, [Target(heads_ctx(), loc)])
    (d,) = ev.diagnostics
    assert (d.code, d.name, d.severity) == ("DM101", "tp-divides-heads", Severity.ERROR)
    assert d.message == "12 attention heads cannot be split over tensor-parallel size 8"
    assert (d.span.start_line, d.span.start_col, d.span.end_line, d.span.end_col) == (7, 34, 7, 37)
    assert [(lab.text, lab.span.start_line, lab.span.start_col) for lab in d.labels] == [
        ("tensor-parallel size set to 8 here", 3, 1),
        ("12 heads", 5, 27),
    ]
    assert d.help == "use a tensor-parallel size that divides 12"
    assert d.url == rule_url("tp-divides-heads")
    assert d.fix.message == "set --tensor-model-parallel-size to 1"
    assert d.fix.applicability is Applicability.UNSAFE
    assert apply_fix(SCRIPT, d.fix).splitlines()[2] == "TP=1"
    assert ev.outcomes["DM101"] == {FIRED}
    assert ev.outcomes["DM102"] == {UNDECIDED}  # this context has no `problems`


def test_rule_passes():
    ctx = heads_ctx(args={"num_attention_heads": 16, "tensor_model_parallel_size": 8})
    ev = evaluate(DEMO, [Target(ctx, TextLocator(SCRIPT))])
    assert ev.diagnostics == [] and ev.outcomes["DM101"] == {PASSED}


def test_undecided_names_missing_inputs_and_reasons():
    ctx = heads_ctx(args={"num_attention_heads": 12}, unknown={"args.tensor_model_parallel_size": "TP is read from $1"})
    ev = evaluate(DEMO.subset(["DM101"]), [Target(ctx, TextLocator(SCRIPT))])
    assert ev.diagnostics == []
    (u,) = ev.undecided
    assert u.rule.code == "DM101"
    assert u.missing == (Missing("args.tensor_model_parallel_size", "TP is read from $1"),)
    assert u.to_json() == {
        "code": "DM101",
        "name": "tp-divides-heads",
        "condition": None,
        "missing": [{"path": "args.tensor_model_parallel_size", "reason": "TP is read from $1"}],
    }


def test_condition_reading_an_absent_value_is_undecided_with_prefix_reason():
    rules = make_rules({"when": "gpu.compute_capability < 8.9 && args.fp8_format != null"})
    ctx = {"args": {"fp8_format": "hybrid"}, "unknown": {"gpu": "no GPU named in the script"}}
    ev = evaluate(rules, [Target(ctx, TextLocator(SCRIPT))])
    assert [u.missing for u in ev.undecided] == [(Missing("gpu.compute_capability", "no GPU named in the script"),)]
    assert ev.failures == []


def test_megatron_version_range():
    loc = TextLocator(SCRIPT)
    old = evaluate(DEMO.subset(["DM101"]), [Target(heads_ctx(megatron="0.7"), loc)])
    assert old.diagnostics == [] and old.outcomes["DM101"] == {NOT_APPLICABLE}
    ctx = heads_ctx()
    del ctx["megatron"]
    none = evaluate(DEMO.subset(["DM101"]), [Target(ctx, loc)])
    assert [u.missing for u in none.undecided] == [(Missing("megatron"),)]
    head = evaluate(DEMO.subset(["DM101"]), [Target(heads_ctx(megatron="HEAD"), loc)])
    assert len(head.diagnostics) == 1
    odd = evaluate(DEMO.subset(["DM101"]), [Target(heads_ctx(megatron="nightly"), loc)])
    assert [u.missing for u in odd.undecided] == [
        (Missing("megatron", "'nightly' is not a Megatron version (like 0.15, 0.15.1, core_v0.15.0 or HEAD)"),)
    ]
    assert odd.failures == []


def test_primary_place_falls_back_to_launch_and_fix_is_dropped():
    script = "torchrun pretrain_gpt.py --num-attention-heads 12\n"  # TP from a config file
    ev = evaluate(DEMO.subset(["DM101"]), [Target(heads_ctx(), TextLocator(script))])
    (d,) = ev.diagnostics
    assert (d.span.start_line, d.span.start_col, d.span.end_col) == (1, 1, 50)
    assert d.fix is None
    assert [lab.text for lab in d.labels] == ["12 heads"]


def test_fix_dropped_when_the_edit_is_not_safe():
    script = "TP=8\ntorchrun pretrain_gpt.py --tensor-model-parallel-size $TP --num-attention-heads 12 --x $TP\n"
    ev = evaluate(DEMO.subset(["DM101"]), [Target(heads_ctx(), TextLocator(script))])
    assert ev.diagnostics[0].fix is None  # $TP feeds two places


def test_for_each_over_problems():
    script = "torchrun pretrain_gpt.py --hidden_size 1024 --num_layers 2 --lr 1\n"
    problems = [
        {"kind": "unknown-flag", "flag": "--hidden_size", "suggestions": ["--hidden-size"], "index": 0},
        {"kind": "unknown-flag", "flag": "--num_layers", "suggestions": [], "index": 2},
        {"kind": "bad-choice", "flag": "--lr", "index": 4},
    ]
    ev = evaluate(DEMO.subset(["DM102"]), [Target({"problems": problems}, TextLocator(script))])
    first, second = ev.diagnostics
    assert (first.message, first.span.start_col, first.span.end_col) == ("unknown option --hidden_size", 26, 39)
    assert first.help == "did you mean --hidden-size?"
    assert apply_fix(script, first.fix) == script.replace("--hidden_size", "--hidden-size")
    assert (second.message, second.span.start_col, second.help) == ("unknown option --num_layers", 45, "remove it")
    assert second.fix is None  # no suggestion to put in its place
    empty = evaluate(DEMO.subset(["DM102"]), [Target({"problems": []}, TextLocator(script))])
    assert empty.diagnostics == [] and empty.outcomes["DM102"] == {PASSED}


def test_rule_failures_are_reported_not_raised():
    rules = make_rules(
        {"when": "args.a + 1.5 > 2"},
        {"when": "args.a"},
        {"when": "true", "for_each": {"var": "x", "in": "args.a"}},
    )
    ev = evaluate(rules, [Target({"args": {"a": 1}}, TextLocator(SCRIPT))])
    assert ev.diagnostics == []
    assert [(f.rule.code, f.message.split(":")[0]) for f in ev.failures] == [
        ("ML900", "when"),
        ("ML901", "when gave 1, not true or false"),
        ("ML902", "for_each.in gave int, not a list"),
    ]
    assert ev.outcomes == {"ML900": {FAILED}, "ML901": {FAILED}, "ML902": {FAILED}}


def test_findings_merge_across_paths():
    loc = TextLocator(SCRIPT)
    ctx16 = heads_ctx(args={"num_attention_heads": 16, "tensor_model_parallel_size": 8})
    rules = DEMO.subset(["DM101"])
    ev = evaluate(
        rules,
        [
            Target(heads_ctx(), loc, "MODEL=small"),
            Target(heads_ctx(), loc, "MODEL=tiny"),
            Target(ctx16, loc, "MODEL=big"),
        ],
    )
    (d,) = ev.diagnostics
    assert d.condition == "(MODEL=small) or (MODEL=tiny)"
    ev = evaluate(rules, [Target(heads_ctx(), loc, "MODEL=small"), Target(heads_ctx(), loc)])
    assert [d.condition for d in ev.diagnostics] == [None]
    ctx10 = heads_ctx(args={"num_attention_heads": 10, "tensor_model_parallel_size": 8})
    ev = evaluate(rules, [Target(heads_ctx(), loc, "A"), Target(ctx10, loc, "B")])
    assert sorted((d.message.split()[0], d.condition) for d in ev.diagnostics) == [("10", "B"), ("12", "A")]


def test_env_places_and_export_fixes():
    rules = make_rules(
        {
            "requires": ["launch.multi_node", "env_set"],
            "when": "launch.multi_node && !('NCCL_IB_TIMEOUT' in env_set)",
            "message": "multi-node job without NCCL_IB_TIMEOUT",
            "at": ["env(NCCL_SOCKET_IFNAME)", "last_export"],
            "labels": [
                {"at": "launcher(nproc_per_node)", "text": "{launch.nproc_per_node} per node"},
                {"at": "entry", "text": "entry"},
            ],
            "fix": {
                "message": "export NCCL_IB_TIMEOUT=22",
                "applicability": "safe",
                "edits": ['insert_export(NCCL_IB_TIMEOUT, "22")'],
            },
        }
    )
    ctx = {"launch": {"multi_node": True, "nproc_per_node": 8}, "env_set": ["NCCL_DEBUG"]}
    loc = TextLocator(SCRIPT)
    (d,) = evaluate(rules, [Target(ctx, loc)]).diagnostics
    assert (d.span.start_line, d.span.start_col, d.span.end_col) == (2, 1, 23)
    assert [(lab.text, lab.span.start_line, lab.span.start_col) for lab in d.labels] == [
        ("8 per node", 4, 10),
        ("entry", 4, 29),
    ]
    assert apply_fix(SCRIPT, d.fix).splitlines()[1:3] == ["export NCCL_DEBUG=INFO", "export NCCL_IB_TIMEOUT=22"]
    assert d.fix.applicability is Applicability.SAFE
    ok = evaluate(rules, [Target({**ctx, "env_set": ["NCCL_IB_TIMEOUT"]}, loc)])
    assert ok.diagnostics == []


def test_flag_edits():
    rules = make_rules(
        {
            "requires": ["args.fp16"],
            "when": "args.fp16",
            "at": "flag(fp16)",
            "fix": {"message": "use bf16", "applicability": "unsafe", "edits": ['replace_flag(fp16, "--bf16")']},
        },
        {
            "requires": ["args.fp16"],
            "when": "args.fp16",
            "at": "flag(fp16)",
            "fix": {"message": "drop", "applicability": "unsafe", "edits": ["remove_flag(fp16)"]},
        },
        {
            "when": "!has(args.seq_length)",
            "at": "entry",
            "fix": {
                "message": "add",
                "applicability": "display-only",
                "edits": ['add_flag("--seq-length {args.num_attention_heads * 256}")'],
            },
        },
    )
    ctx = heads_ctx()
    loc = TextLocator(SCRIPT)
    d0, d1, d2 = sorted(evaluate(rules, [Target(ctx, loc)]).diagnostics, key=lambda d: d.code)
    assert "    --bf16 \\" in apply_fix(SCRIPT, d0.fix).splitlines()
    assert " \\" in apply_fix(SCRIPT, d1.fix).splitlines()  # the option and its indentation
    assert apply_fix(SCRIPT, d2.fix).endswith("$TP --seq-length 3072\n")
    assert d2.fix.applicability is Applicability.DISPLAY_ONLY
    assert [c[0] for c in loc.calls] == ["replace_flag", "remove_flag", "add_flag"]


def test_fix_template_with_unknown_value_drops_the_fix():
    rules = make_rules(
        {"when": "true", "fix": {"message": "m", "applicability": "safe", "edits": ['add_flag("--x {args.nope}")']}}
    )
    (d,) = evaluate(rules, [Target({}, TextLocator(SCRIPT))]).diagnostics
    assert d.fix is None


def test_label_on_the_primary_span_is_left_out():
    rules = make_rules(
        {
            "when": "true",
            "at": "flag(fp16)",
            "labels": [{"at": "flag(fp16)", "text": "same"}, {"at": "gpu", "text": "none here"}],
        }
    )
    (d,) = evaluate(rules, [Target(heads_ctx(), TextLocator(SCRIPT))]).diagnostics
    assert d.labels == ()


def test_evaluate_one_accepts_plain_rule_lists():
    ev = evaluate_one(list(DEMO), Target(heads_ctx(), TextLocator(SCRIPT)))
    assert [d.code for d in ev.diagnostics] == ["DM101"]


def test_hundred_rules_take_a_few_milliseconds():
    many = []
    for i in range(100):
        many.append(
            {
                "requires": ["args.num_attention_heads", "args.tensor_model_parallel_size"],
                "megatron": ">=0.12",
                "when": f"args.num_attention_heads % args.tensor_model_parallel_size != 0 "
                f"&& args.flag_{i} >= {i} && gpu.compute_capability >= 8.0",
                "message": "{args.num_attention_heads} over {args.tensor_model_parallel_size}: " + str(i),
                "at": "value(tensor_model_parallel_size)",
                "labels": [{"at": "origin(tensor_model_parallel_size)", "text": "set here"}],
            }
        )
    rules = make_rules(*many)
    loc = TextLocator(SCRIPT)
    timings = {}
    for heads in (16, 12):  # no rule fires; every rule fires
        args = {f"flag_{i}": i for i in range(900)}
        args.update(num_attention_heads=heads, tensor_model_parallel_size=8)
        ctx = {
            "args": args,
            "given": {k: True for k in args},
            "gpu": {"compute_capability": 9.0},
            "env": {f"V{i}": "x" for i in range(50)},
            "megatron": "0.15",
        }
        best = float("inf")
        for _ in range(5):
            t = time.perf_counter()
            ev = evaluate(rules, [Target(ctx, loc)])
            best = min(best, time.perf_counter() - t)
        timings[heads] = best
        assert len(ev.diagnostics) == (100 if heads == 12 else 0)
    print(f"100 rules: {timings[16] * 1e3:.2f} ms when none fires, {timings[12] * 1e3:.2f} ms when all fire")
    assert timings[16] < 0.02 and timings[12] < 0.1


def test_rule_sets_pickle_for_worker_processes():
    copy = pickle.loads(pickle.dumps(DEMO))
    loc = TextLocator(SCRIPT)
    original = evaluate(DEMO, [Target(heads_ctx(), loc)]).diagnostics
    assert [d.to_json() for d in evaluate(copy, [Target(heads_ctx(), loc)]).diagnostics] == [
        d.to_json() for d in original
    ]


def _outcome(when: str, args: dict, requires: tuple[str, ...] = ()) -> set[str]:
    fields: dict = {"when": when}
    if requires:
        fields["requires"] = list(requires)
    ev = evaluate(make_rules(fields), [Target({"args": args}, TextLocator(SCRIPT))])
    return ev.outcomes["ML900"]


def test_a_condition_decided_by_one_side_is_decided_when_the_other_is_unknown():
    assert _outcome("args.a > 1 || args.b > 1", {"b": 2}) == {FIRED}  # unknown || true
    assert _outcome("args.a > 1 && args.b > 1", {"b": 0}) == {PASSED}  # unknown && false
    assert _outcome("args.a > 1 && args.b > 1", {"b": 2}) == {UNDECIDED}
    assert _outcome("args.a > 1 || args.b > 1", {"b": 0}) == {UNDECIDED}


def test_a_rule_missing_a_required_input_passes_when_its_condition_is_false_without_it():
    assert _outcome("args.b > 1 && args.a > 1", {"b": 0}, requires=("args.a",)) == {PASSED}
    # It never fires without what it requires: the message may need it.
    assert _outcome("args.b > 1 || args.a > 1", {"b": 2}, requires=("args.a",)) == {UNDECIDED}


DEFAULT_B = "the default B=2; the environment may set it"


def _assumed(when: str, args: dict, severity: str = "error"):
    rules = make_rules({"when": when, "severity": severity, "message": "b is {args.b}"})
    ctx = {"args": args, "assumed": {"args.b": (DEFAULT_B,)}}
    return evaluate(rules, [Target(ctx, TextLocator(SCRIPT))]).diagnostics


def test_a_finding_resting_on_a_default_says_so_one_severity_lower():
    (d,) = _assumed("args.b > 1", {"b": 2})
    assert (d.severity, d.message, d.assumed) == (
        Severity.WARNING,
        "b is 2 (with the default B=2; the environment may set it)",
        (DEFAULT_B,),
    )
    (d,) = _assumed("args.b > 1", {"b": 2}, severity="warning")
    assert d.severity == Severity.INFO
    (d,) = _assumed("args.b > 1", {"b": 2}, severity="info")
    assert d.severity == Severity.INFO


def test_a_finding_another_side_decides_does_not_rest_on_the_default():
    (d,) = _assumed("args.a > 1 || args.b > 1", {"a": 5, "b": 2})
    assert (d.severity, d.message, d.assumed) == (Severity.ERROR, "b is 2", ())


def test_an_unknown_reason_is_that_of_the_nearest_recorded_prefix() -> None:
    from megalint.engine.context import unknown_reason

    ctx = {"unknown": {"args": "no binding", "args.seq_length": "set in a loop", "memory.peak": "no GPU"}}
    assert unknown_reason(ctx, "args.seq_length") == "set in a loop"
    assert unknown_reason(ctx, "args.seq_length.x") == "set in a loop"
    assert unknown_reason(ctx, "args.hidden_size") == "no binding"
    assert unknown_reason(ctx, "memory") is None
    assert unknown_reason(ctx, "derived.world") is None
    assert unknown_reason(ctx, "") is None
    assert unknown_reason({"unknown": {"a.": "dotted", "a": "top"}}, "a..b") == "dotted"
    assert unknown_reason({}, "args.x") is None
