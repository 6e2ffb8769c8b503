"""bench/realbench/count.py and aggregate.py: what is recorded of a checked file, and a
repository's figures from the records of its files."""

from __future__ import annotations

import json
import os
from collections import Counter

from linting import packaged_rules

from bench.realbench.aggregate import NOT_HELD, Figures, aggregate, kind_of
from bench.realbench.count import NO_VALUE, FileRecord, Finding, record_of
from bench.realbench.files import flag_sites, known_flags
from bench.realbench.report import errors_json, render, total_line
from megalint.engine import RuleSet
from megalint.pipeline import Settings, lint_text

KNOWN = known_flags(
    ["--num-layers", "--tensor-model-parallel-size", "--pipeline-model-parallel-size", "--micro-batch-size", "--lr"]
)
CONFIG = "MODEL=(\n  --num-layers 4\n  --micro-batch-size 2\n  --lr 0.1\n)\n"
LAUNCH = (
    'source "$(dirname "$0")/config.sh"\n'
    'torchrun --nproc_per_node 8 pretrain_gpt.py "${MODEL[@]}" \\\n'
    "  --tensor-model-parallel-size=2 \\\n"
    "  --pipeline-model-parallel-size $1\n"
)


def checked(folder: str, name: str, text: str) -> FileRecord:
    path = os.path.realpath(os.path.join(folder, name))
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    result = lint_text(path, text, Settings(rules=RuleSet([]), root_dir=folder, with_memory=False))
    return record_of(path, flag_sites(text, KNOWN), result, result.diagnostics, KNOWN)


def test_a_launch_holds_its_flags_where_they_are_written_and_says_which_values_are_known(tmp_path):
    folder = os.path.realpath(tmp_path)
    config = os.path.join(folder, "config.sh")
    launch = os.path.join(folder, "launch.sh")
    checked(folder, "config.sh", CONFIG)
    rec = checked(folder, "launch.sh", LAUNCH)
    assert (rec.launches, rec.fragments) == (1, 0)
    assert rec.written == [(3, "--tensor-model-parallel-size"), (4, "--pipeline-model-parallel-size")]
    assert rec.covered == {
        (config, 2, "--num-layers"),
        (config, 3, "--micro-batch-size"),
        (config, 4, "--lr"),
        (launch, 3, "--tensor-model-parallel-size"),
        (launch, 4, "--pipeline-model-parallel-size"),
    }
    assert rec.resolved == {
        (config, 2, "--num-layers"),
        (config, 3, "--micro-batch-size"),
        (launch, 3, "--tensor-model-parallel-size"),
    }
    ((key, why),) = rec.unresolved.items()
    assert key == (launch, 4, "--pipeline-model-parallel-size")
    assert kind_of(why) == 'a script argument ($1, "$@")'


def test_a_sourced_config_is_checked_and_resolved_through_the_launch_that_sources_it(tmp_path):
    folder = os.path.realpath(tmp_path)
    config = checked(folder, "config.sh", CONFIG)
    launch = checked(folder, "launch.sh", LAUNCH)
    # Alone, the config is a fragment: its flags are checked there as well as through the launch.
    assert (config.launches, config.fragments) == (0, 1)
    assert {k[1:] for k in config.covered} == {(2, "--num-layers"), (3, "--micro-batch-size"), (4, "--lr")}
    fig = aggregate("acme/fork", [config, launch])
    assert (fig.files, fig.launches, fig.launch_files, fig.flag_files, fig.unchecked) == (2, 1, 1, 2, [])
    # --num-layers and --micro-batch-size in the config, the two parallel sizes in the launch
    assert (fig.tracked_written, fig.tracked_resolved) == (4, 3)
    assert [k[1:] for k, _ in fig.unresolved] == [(4, "--pipeline-model-parallel-size")]


def record(path: str, **kw: object) -> FileRecord:
    return FileRecord(path, **kw)


def test_aggregate_counts_unchecked_files_tracked_flags_findings_and_problems():
    held = ("/r/a.sh", 1, "--num-layers")
    recs = [
        record("/r/a.sh", written=[(1, "--num-layers"), (2, "--lr")], launches=2, covered={held}, resolved={held}),
        record("/r/b.sh", written=[(5, "--micro-batch-size")], fragments=1, covered={("/r/b.sh", 5, "--lr")}),
        record("/r/c.sh", written=[(7, "--tensor-model-parallel-size")], unresolved={}),
        record("/r/d.sh", problem="binary file"),
        record(
            "/r/e.sh",
            findings=[
                Finding("/r/e.sh", 3, 1, "ML501", "unknown-flag", "error", "m1"),
                Finding("/r/e.sh", 4, 1, "ML501", "unknown-flag", "error", "m2"),
                Finding("/r/e.sh", 5, 1, "ML511", "deprecated-flag", "warning", "m3"),
                Finding("/r/e.sh", 6, 1, "ML900", "a-note", "info", "m4"),
            ],
        ),
    ]
    fig = aggregate("acme/fork", recs, left_out=["/r/z.sh"])
    assert (fig.files, fig.launches, fig.launch_files, fig.fragment_files, fig.flag_files) == (5, 2, 1, 1, 3)
    assert fig.unchecked == ["/r/b.sh", "/r/c.sh"]
    assert (fig.tracked_written, fig.tracked_resolved) == (3, 1)
    assert [(k[0], why) for k, why in fig.unresolved] == [("/r/b.sh", NOT_HELD), ("/r/c.sh", NOT_HELD)]
    assert fig.errors == Counter({("ML501", "unknown-flag"): 2})
    assert fig.warnings == Counter({("ML511", "deprecated-flag"): 1})
    assert [f.message for f in fig.findings] == ["m1", "m2", "m3"]
    assert fig.problems == [("/r/d.sh", "binary file")]
    assert fig.left_out == ["/r/z.sh"]

    total = Figures("total")
    total.add(fig)
    total.add(fig)
    assert (total.files, total.tracked_resolved, len(total.unchecked)) == (10, 2, 4)
    assert total.errors[("ML501", "unknown-flag")] == 4


def test_reasons_are_grouped_by_kind():
    assert kind_of("$5 is an argument given to the script") == kind_of("$12 is an argument given to the script")
    assert kind_of("`TP` is changed in a loop (line 3) that runs an unknown number of times") == "changed in a loop"
    assert kind_of("$TP is not set in the script; it comes from the environment") == "an environment input"
    assert kind_of("differs between branches (too many paths, merged at line 9)") == "differs between branches"
    assert kind_of(NO_VALUE) == "no value word follows the flag"
    assert kind_of("something new").startswith("other: something new")


def test_the_report_prints_each_category_with_examples_and_the_json_holds_every_error():
    recs = [
        record(
            "/root/acme+fork/e.sh",
            written=[(2, "--num-layers")],
            findings=[
                Finding("/root/acme+fork/e.sh", 3, 7, "ML501", "unknown-flag", "error", "unknown flag --x"),
                Finding("/root/acme+fork/e.sh", 5, 1, "ML511", "deprecated-flag", "warning", "old"),
            ],
        )
    ]
    fig = aggregate("acme/fork", recs)
    fig.notes = ["acme/fork: the checkout is at fedcba987654, not at the recorded commit 0123456789ab"]
    text = render(fig, "/root", 1, "acme/fork @ 0123456789ab")
    assert "  warning: acme/fork: the checkout is at fedcba987654" in text
    assert "  files writing Megatron flags: 1; checked by nothing: 1 (100.0% of files)\n        acme+fork/e.sh" in text
    assert f"    unresolved, {NOT_HELD}: 1\n        acme+fork/e.sh:2 --num-layers" in text
    assert "    ML501 unknown-flag: 1\n        acme+fork/e.sh:3:7" in text
    assert "  warnings: 1\n    ML511 deprecated-flag: 1" in text
    assert total_line(fig, 1.25, 2).endswith("1 errors, 1 warnings, 0 not checked; 1.2 s with 2 job(s)")
    assert errors_json([fig], "/root") == (
        '[\n {\n  "repository": "acme/fork",\n  "file": "acme+fork/e.sh",\n  "line": 3,\n  "column": 7,\n'
        '  "code": "ML501",\n  "name": "unknown-flag",\n  "severity": "error",\n  "message": "unknown flag --x",\n'
        '  "assumed": []\n }\n]\n'
    )


def test_flags_reached_through_a_command_string_count_where_they_are_written(tmp_path):
    folder = os.path.realpath(tmp_path)
    text = (
        "#!/bin/bash\n"
        'options="--num-layers 2 \\\n'
        '  --tensor-model-parallel-size 2"\n'
        'run_cmd="python pretrain_gpt.py ${options}"\n'
        'srun sh -c "${run_cmd}"\n'
    )
    rec = checked(folder, "run.sh", text)
    path = os.path.join(folder, "run.sh")
    assert {(path, 2, "--num-layers"), (path, 3, "--tensor-model-parallel-size")} <= rec.covered
    assert (path, 3, "--tensor-model-parallel-size") in rec.resolved


def test_findings_resting_on_an_assumption_are_counted_listed_and_flagged_in_the_json():
    default = "the default NNODES=2; the environment may set it"
    module = "assuming `module load` at e.sh:2 sets no NCCL/CUDA tuning variables"
    recs = [
        record(
            "/root/acme+fork/e.sh",
            findings=[
                Finding("/root/acme+fork/e.sh", 3, 7, "ML101", "world-size-divisibility", "warning", "w", (default,)),
                Finding(
                    "/root/acme+fork/e.sh", 4, 1, "ML745", "cuda-device-max-connections", "warning", "c", (module,)
                ),
                Finding("/root/acme+fork/e.sh", 5, 1, "ML301", "missing-nccl-ib-timeout", "info", "i", (default,)),
                Finding("/root/acme+fork/e.sh", 6, 1, "ML511", "deprecated-flag", "warning", "old"),
            ],
        )
    ]
    fig = aggregate("acme/fork", recs)
    assert [f.code for f in fig.assumed] == ["ML101", "ML745"]  # errors and warnings only
    text = render(fig, "/root", 2, "acme/fork @ 0123456789ab")
    assert (
        "  errors and warnings resting on an assumption: 2 (a default: 1, a loaded module: 1)\n"
        "        acme+fork/e.sh:3:7 ML101 warning\n"
        "        acme+fork/e.sh:4:1 ML745 warning"
    ) in text
    rows = json.loads(errors_json([fig], "/root"))
    assert [(r["code"], r["severity"], r["assumed"]) for r in rows] == [
        ("ML101", "warning", [default]),
        ("ML745", "warning", [module]),
    ]


def test_a_default_node_count_marks_its_findings_in_the_record(tmp_path):
    folder = os.path.realpath(tmp_path)
    text = (
        "NNODES=${NNODES:-2}\n"
        "torchrun --nnodes $NNODES --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 8 "
        "--pipeline-model-parallel-size 4\n"
    )
    path = os.path.join(folder, "run.sh")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    result = lint_text(path, text, Settings(rules=packaged_rules(), root_dir=folder, with_memory=False))
    rec = record_of(path, flag_sites(text, KNOWN), result, result.diagnostics, KNOWN)
    (f,) = [f for f in rec.findings if f.code == "ML101"]
    assert (f.severity, f.assumed) == ("warning", ("the default NNODES=2; the environment may set it",))
