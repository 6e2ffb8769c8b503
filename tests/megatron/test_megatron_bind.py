"""argparse semantics of binding, with the exact spans of the words."""

from __future__ import annotations

import pytest

from megalint.megatron.argv_words import cut_word, literal_argv
from megalint.megatron.bind import bind
from megalint.megatron.bound import BoundArgs, ProblemKind
from megalint.megatron.catalogue import Catalogue, FlagSpec
from megalint.megatron.convert import evaluate_default
from megalint.shell.values import Segment, Unknown, Word
from megalint.source import Span

HEAD = Catalogue.load("HEAD")


def b(text: str, version: str = "HEAD") -> BoundArgs:
    return bind(literal_argv(text), Catalogue.load(version))


def col(span: Span | None) -> tuple[int, int] | None:
    return None if span is None else (span.start_col, span.end_col)


def kinds(bound: BoundArgs) -> list[str]:
    return [p.kind.value for p in bound.problems]


def test_defaults_when_not_given():
    r = b("")
    assert r["tensor_model_parallel_size"].value == 1
    assert r["tensor_model_parallel_size"].given is False
    assert r["tensor_model_parallel_size"].span is None
    assert r["bf16"].value is False
    assert r["add_bias_linear"].value is True
    assert r["cp_comm_type"].value == ("p2p",)
    assert r["ffn_hidden_size"].value is None
    assert r["initial_loss_scale"].value == 2**32
    assert r["attention_backend"].value == "auto"
    assert r["exit_signal"].value == "SIGTERM"
    assert isinstance(r["local_rank"].value, Unknown)
    assert "LOCAL_RANK" in r["local_rank"].value.reason
    assert isinstance(r["inprocess_active_world_size"].value, Unknown)
    assert r.problems == [] and r.complete


def test_store_and_spans():
    r = b("--tensor-model-parallel-size 4 --lr 3e-4")
    tp = r["tensor_model_parallel_size"]
    assert tp.value == 4 and tp.given
    assert col(tp.flag_span) == (1, 29)
    assert col(tp.value_span) == (30, 31)
    assert col(tp.last.span) == (1, 31)
    assert r["lr"].value == pytest.approx(3e-4)
    assert col(r["lr"].value_span) == (37, 41)


def test_equals_form_cuts_the_word():
    r = b("--num-layers=24 --micro-batch-size=")
    nl = r["num_layers"]
    assert nl.value == 24 and nl.last.explicit
    assert col(nl.flag_span) == (1, 13)
    assert col(nl.value_span) == (14, 16)
    assert nl.value_words[0].text == "24"
    # "--x=" gives the empty string, which int() refuses.
    p = r.problems_of(ProblemKind.INVALID_TYPE)[0]
    assert p.message == "argument --micro-batch-size: invalid int value: ''"


def test_last_one_wins_and_repeats_are_kept():
    r = b("--num-layers 24 --hidden-size 8 --num-layers=32")
    nl = r["num_layers"]
    assert nl.value == 32
    assert [o.value for o in nl.occurrences] == [24, 32]
    (p,) = r.problems_of(ProblemKind.REPEATED_FLAG)
    assert p.dest == "num_layers" and col(p.span) == (33, 45)
    assert [col(s) for s in p.related] == [(1, 13)]
    assert not p.fatal


def test_given_dests_keep_the_catalogues_order_and_the_rest_share_their_default():
    # Only the given dests are bound anew; every binding of a catalogue shares the others.
    r = b("--seq-length 8 --num-layers 2 --seq-length 16 --num-layers 4")
    other = b("--hidden-size 8")
    assert list(r.args) == list(HEAD.dests())
    assert [a.dest for a in r.given_args()] == [d for d in HEAD.dests() if d in ("num_layers", "seq_length")]
    assert r["ffn_hidden_size"] is other["ffn_hidden_size"] and not r["ffn_hidden_size"].given
    assert r["hidden_size"] is not other["hidden_size"] and other["hidden_size"].value == 8
    # Two repeats at once: their problems in the order of the words, whatever the dests' order.
    assert [p.dest for p in r.problems_of(ProblemKind.REPEATED_FLAG)] == ["seq_length", "num_layers"]


def test_aliases_share_a_dest():
    r = b("--save-interval 100 --persistent-save-interval 200", "0.15")
    assert r["save_interval"].value == 200
    assert r["save_interval"].option == "--persistent-save-interval"
    assert kinds(r) == ["repeated-flag"]


def test_store_true_false_and_negations():
    r = b("--bf16 --disable-bias-linear --no-rope-fusion")
    assert r["bf16"].value is True
    assert r["add_bias_linear"].value is False
    assert r["apply_rope_fusion"].value is False
    assert col(r["bf16"].flag_span) == (1, 7) and r["bf16"].value_words == ()


def test_boolean_optional():
    r = b("--rl-skip-bos-token --no-rl-use-sequence-packing")
    assert r["rl_skip_bos_token"].value is True
    assert r["rl_use_sequence_packing"].value is False


def test_tri_state_dest_from_two_actions():
    assert b("")["yarn_correction_range_round_to_int"].value is None
    r = b("--yarn-correction-range-round-to-int --no-yarn-correction-range-round-to-int")
    assert r["yarn_correction_range_round_to_int"].value is False
    assert r["yarn_correction_range_round_to_int"].spec.action == "store_false"


def test_explicit_value_on_a_switch():
    r = b("--bf16=true")
    (p,) = r.problems
    assert p.kind is ProblemKind.UNEXPECTED_VALUE and p.fatal
    assert p.message == "argument --bf16: ignored explicit argument 'true'"
    assert col(p.span) == (8, 12)


def test_abbreviations_are_unknown():
    r = b("--hidden 512")
    (p,) = r.problems
    assert p.kind is ProblemKind.UNKNOWN_FLAG
    assert "--hidden-size" in p.suggestions
    assert col(p.span) == (1, 9)
    assert [w.text for w in p.words] == ["--hidden", "512"]
    assert p.message.startswith("unrecognized arguments: --hidden 512")


def test_underscore_spelling():
    r = b("--hidden_size 4096 --num-layers 2")
    (p,) = r.problems
    assert p.kind is ProblemKind.UNKNOWN_FLAG and p.suggestions[0] == "--hidden-size"
    assert r["num_layers"].value == 2 and r["hidden_size"].given is False


def test_flag_from_another_version():
    r = b("--use-legacy-models")
    (p,) = r.problems
    assert p.kind is ProblemKind.OTHER_VERSION
    assert p.history.relation("HEAD") == "removed" and p.history.last == "0.15"
    assert "removed after Megatron-LM 0.15" in p.message
    r = b("--moe-router-padding-for-quantization", "0.12")
    (p,) = r.problems
    assert p.kind is ProblemKind.OTHER_VERSION and p.history.relation("0.12") == "added"
    r = b("--local_rank=3")
    (p,) = r.problems
    assert p.kind is ProblemKind.OTHER_VERSION and p.option == "--local_rank"
    assert p.suggestions[0] == "--local-rank" and col(p.span) == (1, 13)
    assert b("--local_rank 3", "0.8")["local_rank"].value == 3


def test_invalid_type_and_choice():
    r = b("--num-layers 2.5 --attention-backend flashy --transformer-impl local")
    inv = r.problems_of(ProblemKind.INVALID_TYPE)[0]
    assert inv.message == "argument --num-layers: invalid int value: '2.5'"
    assert col(inv.span) == (14, 17)
    ch = r.problems_of(ProblemKind.INVALID_CHOICE)[0]
    assert "invalid choice: 'flashy'" in ch.message and col(ch.span) == (38, 44)
    assert isinstance(r["num_layers"].value, Unknown)
    assert r["transformer_impl"].value == "local"


def test_version_specific_choices():
    assert kinds(b("--moe-token-dispatcher-type flex", "0.8")) == ["invalid-choice"]
    assert kinds(b("--moe-token-dispatcher-type flex", "0.12")) == []
    assert kinds(b("--optimizer muon", "0.15")) == ["invalid-choice"]


def test_int_choices_are_typed():
    assert b("--timing-log-level 2")["timing_log_level"].value == 2
    assert kinds(b("--timing-log-level 3")) == ["invalid-choice"]


def test_missing_value():
    r = b("--lr --bf16")
    (p,) = r.problems
    assert p.kind is ProblemKind.MISSING_VALUE
    assert p.message == "argument --lr: expected one argument" and col(p.span) == (1, 5)
    assert isinstance(r["lr"].value, Unknown) and r["lr"].given
    assert r["bf16"].value is True
    assert kinds(b("--num-layers")) == ["missing-value"]
    assert b("--data-path")["data_path"].value == ()  # nargs '*' takes none


def test_nargs():
    r = b("--data-path 0.3 a 0.7 b --lr 1 --cp-comm-type a2a")
    assert r["data_path"].value == ("0.3", "a", "0.7", "b")
    assert col(r["data_path"].value_span) == (13, 24)
    assert r["cp_comm_type"].value == ("a2a",)
    assert kinds(b("--cp-comm-type --bf16")) == ["missing-value"]
    assert b("--cp-comm-type --bf16").problems[0].message.endswith("expected at least one argument")
    r = b("--rampup-batch-size 32 32 1000 --lr 1", "HEAD")
    assert r["rampup_batch_size"].value == (32, 32, 1000)
    p = b("--rampup-batch-size 32 32 --lr 1").problems_of(ProblemKind.MISSING_VALUE)[0]
    assert p.message == "argument --rampup-batch-size: expected 3 arguments"
    # nargs 3 stops after three words: the fourth is left over.
    assert "positional" in kinds(b("--rampup-batch-size 1 2 3 4"))


def test_negative_numbers_are_values():
    r = b("--lr-warmup-init -1 --min-lr -.5")
    assert r["lr_warmup_init"].value == -1.0 and r["min_lr"].value == -0.5
    assert r.problems == []
    r = b("--lr -1e-5")
    assert r["lr"].value == pytest.approx(-1e-5)
    (p,) = r.problems
    assert p.kind is ProblemKind.NEGATIVE_NUMBER and col(p.span) == (6, 11)
    assert b("--lr=-1e-5").problems == []


def test_bool_type_is_python_bool():
    r = b("--onnx-safe False")
    assert r["onnx_safe"].value is True
    assert kinds(r) == ["bool-string"]
    assert b("--onnx-safe 1").problems == []


def test_positional_junk():
    r = b("pretrain_gpt.py --num-layers 2 extra words")
    assert [p.kind for p in r.problems] == [ProblemKind.POSITIONAL] * 2
    assert col(r.problems[0].span) == (1, 16)
    assert col(r.problems[1].span) == (32, 43)
    assert r.problems[1].message == "unrecognized arguments: extra words"
    r = b("--num-layers 2 -- --lr 1")
    assert kinds(r) == ["positional"] and not r.given("lr")


def test_help_and_deprecated():
    assert kinds(b("--help")) == ["help"]
    r = b("--checkpoint-activations")
    (p,) = r.problems
    assert p.kind is ProblemKind.DEPRECATED and "exit()" in p.message and not p.fatal
    assert kinds(b("--optimizer adam")) == []
    (p,) = b("--optimizer dist_muon").problems
    assert p.kind is ProblemKind.DEPRECATED and col(p.span) == (13, 22)
    assert kinds(b("--hybrid-override-pattern M*M*", "0.12")) == []


def test_converters():
    r = b("--moe-layer-freq ([0]*1+[1]*3)*2 --window-size 128,0")
    assert r["moe_layer_freq"].value == [0, 1, 1, 1, 0, 1, 1, 1]
    assert r["window_size"].value == (128, 0)
    assert b("--moe-layer-freq 2")["moe_layer_freq"].value == 2
    assert kinds(b("--moe-layer-freq __import__('os')")) == ["invalid-type"]
    assert b("")["moe_layer_freq"].value == 1


# ---- words the evaluator could not know ------------------------------------------------


def seg(text, start, line=1, origin=()):
    if text is None:
        return Segment.unknown_at(
            "$X is not set", Span("s.sh", line, start + 1, line, start + 3, start, start + 2), origin
        )
    return Segment(text, Span("s.sh", line, start + 1, line, start + 1 + len(text), start, start + len(text)), origin)


def test_unknown_value_word():
    words = [Word((seg("--num-layers", 0),)), Word((seg(None, 13),))]
    r = bind(words, HEAD)
    nl = r["num_layers"]
    assert nl.given and isinstance(nl.value, Unknown)
    assert nl.value.reason == "$X is not set"
    assert r.problems == []


def test_unknown_value_after_equals():
    words = [Word((seg("--num-layers=", 0), seg(None, 13)))]
    r = bind(words, HEAD)
    nl = r["num_layers"]
    assert nl.given and isinstance(nl.value, Unknown)
    assert col(nl.flag_span) == (1, 13)
    assert r.problems == []


def test_value_from_a_variable_keeps_its_origin():
    origin = (Span("s.sh", 3, 1, 3, 5, 40, 44),)
    words = [Word((seg("--num-layers", 0),)), Word((seg("24", 13, origin=origin),))]
    arg = bind(words, HEAD)["num_layers"]
    assert arg.value == 24 and arg.value_words[0].origins == origin


def test_splat_is_passthrough_and_binding_goes_on():
    splat = Word((), splat=Unknown('"$@" of the script', Span("s.sh", 1, 1, 1, 5, 0, 4)))
    words = [splat, *literal_argv("--num-layers 4")]
    r = bind(words, HEAD)
    assert len(r.passthrough) == 1 and r.passthrough[0].splat
    assert r["num_layers"].value == 4 and not r.complete


def test_splat_in_value_position():
    splat = Word((), splat=Unknown('"$@"', None))
    words = [*literal_argv("--lr"), splat, *literal_argv("--bf16")]
    r = bind(words, HEAD)
    assert isinstance(r["lr"].value, Unknown) and r["bf16"].value is True
    assert r.problems == [] and r.passthrough


def test_unknown_word_in_flag_position():
    words = [Word((seg(None, 0),)), *literal_argv("8")]
    r = bind(words, HEAD)
    assert r.problems == []
    (pt,) = r.passthrough
    assert [w.text for w in pt.following] == ["8"]


def test_unreadable_flag_name():
    words = [Word((seg("--", 0), seg(None, 2), seg("-size", 4))), *literal_argv("8")]
    r = bind(words, HEAD)
    assert r.problems == [] and len(r.passthrough) == 1


def test_cut_word_keeps_exact_sites():
    w = Word((seg("--lr=", 10), seg("0.1", 15)))
    left, right = cut_word(w, 0, 4), cut_word(w, 5)
    assert left.text == "--lr" and col(left.span) == (11, 15)
    assert right.text == "0.1" and col(right.span) == (16, 19)
    # A segment whose site is not its literal text (a quoted string) keeps the whole site.
    quoted = Word((Segment("--lr=1", Span("s.sh", 1, 1, 1, 9, 0, 8)),))
    assert col(cut_word(quoted, 0, 4).span) == (1, 9)


def test_every_word_kind_binds_in_one_catalogue():
    # Each flag of every version binds with a plausible value without crashing.
    for version in ("HEAD", "0.19", "0.15", "0.12", "0.8"):
        cat = Catalogue.load(version)
        for spec in cat.flags:
            argv = [spec.name]
            if spec.takes_value:
                n = spec.nargs if isinstance(spec.nargs, int) else 1
                sample = spec.choices[0] if spec.choices else {"int": "1", "float": "1.0"}.get(spec.type or "", "1")
                argv += [str(sample)] * n
            r = bind(literal_argv(" ".join(argv)), cat)
            assert r[spec.dest].given, (version, spec.name)
            assert not [p for p in r.problems if p.fatal], (version, spec.name, r.problems)


def test_evaluate_default():
    spec = FlagSpec(("--x",), "x", type="int", default="7")
    assert evaluate_default(spec) == 7


def test_other_actions_from_a_user_catalogue():
    cat = Catalogue.from_dict(
        {
            "version": "custom",
            "flags": [
                {"option_strings": ["--tag"], "dest": "tags", "action": "append"},
                {"option_strings": ["-v", "--verbose"], "dest": "verbose", "action": "count"},
                {
                    "option_strings": ["--mode-fast"],
                    "dest": "mode",
                    "action": "store_const",
                    "const": "fast",
                    "default": "slow",
                },
                {"option_strings": ["--opt"], "dest": "opt", "nargs": "?", "const": "c", "default": "d"},
                {"option_strings": ["--point"], "dest": "point", "nargs": 2, "type": "float"},
                {"option_strings": ["--level"], "dest": "level", "type": "int", "choices": [1, 2]},
            ],
        }
    )
    r = bind(literal_argv("--tag a --tag b -v --verbose --mode-fast --opt --point 1 -2.5"), cat)
    assert r["tags"].value == ("a", "b")
    assert r["verbose"].value == 2
    assert r["mode"].value == "fast"
    assert r["opt"].value == "c"
    assert r["point"].value == (1.0, -2.5)
    assert r.problems == []  # append and count accumulate: no repeated-flag problem
    r = bind(literal_argv("--opt x --level 3"), cat)
    assert r["opt"].value == "x" and kinds(r) == ["invalid-choice"]
    assert bind(literal_argv(""), cat)["mode"].value == "slow"
