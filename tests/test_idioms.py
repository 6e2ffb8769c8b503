"""Each construct of the real-script survey, in fixtures of our own: resolved values and positions.

Every expected position is checked twice: its line:column, and the script text found there.
"""

import pytest
from modelhelp import has_flag, load, pos, text_at, value

# fixture, launch index, flag, value, line:col of the value, text written there
CASES = [
    ("idioms/strings_and_exports.sh", 0, "--tensor-model-parallel-size", "2", "13:34", "$TP"),
    ("idioms/strings_and_exports.sh", 0, "--pipeline-model-parallel-size", "2", "14:36", "${PP}"),
    ("idioms/strings_and_exports.sh", 0, "--num-layers", "24", "15:18", "$LAYERS"),
    ("idioms/strings_and_exports.sh", 0, "--hidden-size", "4096", "16:19", "4096"),
    ("idioms/arrays.sh", 0, "--tensor-model-parallel-size", "4", "4:34", "4"),
    ("idioms/arrays.sh", 0, "--global-batch-size", "256", "8:37", "256"),
    ("idioms/arrays.sh", 0, "--data-path", "/data/tokens", "10:25", "/data/tokens"),
    ("idioms/arrays.sh", 0, "--split", "99,1,0", "11:36", "99,1,0"),
    ("idioms/arrays.sh", 0, "--eval-iters", "4", "15:29", "$N_ARGS"),
    ("idioms/branches.sh", 0, "--hidden-size", "1024", "18:67", "$HIDDEN"),
    ("idioms/branches.sh", 0, "--num-layers", "48", "18:88", "$LAYERS"),
    ("idioms/expansions.sh", 0, "--load", "/ckpt", "13:33", "$ROOT"),
    ("idioms/expansions.sh", 0, "--save", "/out/llama-7b", "13:46", "/out/$STEM"),
    ("idioms/expansions.sh", 0, "--exp-name", "LLAMA-7B", "13:68", "$UP"),
    ("idioms/expansions.sh", 0, "--seq-length", "4096", "13:85", "$SEQ"),
    ("idioms/expansions.sh", 0, "--num-layers", "8", "14:18", "$LEN"),
    ("idioms/expansions.sh", 0, "--tensor-model-parallel-size", "7", "14:52", "${SUB:0:1}"),
    ("idioms/expansions.sh", 0, "--tokenizer-model", "/ckpt/mistral-7b.tar", "14:81", "${ALT}"),
    ("idioms/loops_functions.sh", 0, "--tensor-model-parallel-size", "2", "19:40", "$tp"),
    ("idioms/loops_functions.sh", 0, "--num-layers", "24", "19:57", "$LAYERS"),
    ("idioms/loops_functions.sh", 0, "--micro-batch-size", "2", "23:74", "$count"),
    ("idioms/eval_and_shell_c.sh", 0, "--tensor-model-parallel-size", "8", "5:51", "8"),
    ("idioms/eval_and_shell_c.sh", 0, "--micro-batch-size", "1", "6:41", "1"),
    ("idioms/eval_and_shell_c.sh", 1, "--tensor-model-parallel-size", "2", "7:100", "2"),
    ("idioms/eval_and_shell_c.sh", 2, "--micro-batch-size", "2", "8:65", "2"),
    ("idioms/eval_and_shell_c.sh", 3, "--pipeline-model-parallel-size", "4", "12:102", "4"),
    ("idioms/sourced.sh", 0, "--tensor-model-parallel-size", "4", "6:74", "$TP"),
    ("idioms/sourced.sh", 0, "--num-layers", "32", "6:91", "$NUM_LAYERS"),
    ("idioms/misc_constructs.sh", 0, "--micro-batch-size", "2", "7:27", "$MBS"),
    ("idioms/misc_constructs.sh", 0, "--global-batch-size", "128", "8:30", "$GBS"),
    ("idioms/misc_constructs.sh", 0, "--train-iters", "1000", "12:47", "$ITERS"),
    ("idioms/misc_constructs.sh", 0, "--lr-warmup-iters", "100", "12:72", "$WARMUP"),
    ("idioms/case_args.sh", 0, "--num-layers", "2", "11:112", "2"),
    ("idioms/placeholders.sh", 0, "--tensor-model-parallel-size", "2", "5:90", "2"),
    ("launchers/srun_per_node.slurm", 0, "--tensor-model-parallel-size", "4", "15:51", "4"),
    ("launchers/torch_distributed_launch.sh", 0, "--tensor-model-parallel-size", "2", "9:99", "2"),
]


@pytest.mark.parametrize("fixture,index,flag,expected,at,written", CASES)
def test_resolved_value_and_position(fixture, index, flag, expected, at, written):
    facts, launches = load(fixture)
    word = value(launches[index], flag)
    assert word.text == expected
    assert pos(word.span) == at
    assert text_at(facts, word.span) == written


# fixture, launch index, flag, fragment of the reason it is unknown
UNKNOWN = [
    ("idioms/loops_functions.sh", 0, "--save", "loop"),
    ("idioms/misc_constructs.sh", 0, "--data-path", "DATA_ROOT"),
    ("idioms/case_args.sh", 0, "--tensor-model-parallel-size", "loop"),
    ("idioms/placeholders.sh", 0, "--save", "unfilled template placeholder <Specify path>"),
    ("idioms/placeholders.sh", 0, "--vocab-file", "unfilled template placeholder <Specify path to file>"),
]


@pytest.mark.parametrize("fixture,index,flag,reason", UNKNOWN)
def test_unknown_values_say_why(fixture, index, flag, reason):
    _, launches = load(fixture)
    word = value(launches[index], flag)
    assert word.text is None
    assert reason in word.unknown.reason


def test_value_chain_goes_back_to_the_assignment():
    facts, launches = load("idioms/strings_and_exports.sh")
    word = value(launches[0], "--tensor-model-parallel-size")
    assert [text_at(facts, s) for s in word.origins] == ["${TP:-2}", "2"]
    assert "TP" in word.assumed  # a default for an input the script does not control
    layers = value(launches[0], "--num-layers")
    assert [text_at(facts, s) for s in layers.origins] == ["$((PP * 12))", "2"]
    assert layers.assumed is None


def test_function_argument_chain():
    facts, launches = load("idioms/loops_functions.sh")
    word = value(launches[0], "--tensor-model-parallel-size")
    assert [text_at(facts, s) for s in word.origins] == ["$1", "2"]


def test_sourced_value_points_into_the_sourced_file():
    facts, launches = load("idioms/sourced.sh")
    word = value(launches[0], "--tensor-model-parallel-size")
    assert [s.path.rsplit("/", 1)[-1] for s in word.origins] == ["params.sh"]
    assert any("cycle" in n for n in facts.notes)


def test_exports_reach_the_launch():
    facts, launches = load("idioms/strings_and_exports.sh")
    env = launches[0].env
    assert env["CUDA_DEVICE_MAX_CONNECTIONS"].text == "1"
    assert env["NCCL_IB_TIMEOUT"].text == "22"
    assert pos(env["NCCL_IB_TIMEOUT"].span) == "4:24"
    assert env["OMP_NUM_THREADS"].text is None  # exported but never given a value here


def test_if_branches_are_decided_on_literals_and_kept_apart_otherwise():
    _, launches = load("idioms/branches.sh")
    assert len(launches) == 2  # `[ -n "$USE_SP" ]` cannot be decided
    for launch in launches:
        assert has_flag(launch, "--bf16") and not has_flag(launch, "--fp16")
    assert sorted(has_flag(la, "--sequence-parallel") for la in launches) == [False, True]
    with_sp = next(la for la in launches if has_flag(la, "--sequence-parallel"))
    assert with_sp.condition == ('`[ -n "$USE_SP" ]` true',)


def test_empty_expansion_disappears_and_unset_default_plus_is_empty():
    _, launches = load("idioms/expansions.sh")
    assert not has_flag(launches[0], "--use-flash-attn")


def test_eval_bash_c_sh_c_and_srun_bash_c_are_all_read():
    _, launches = load("idioms/eval_and_shell_c.sh")
    assert [(la.launcher, la.entry.text, la.world_size.value) for la in launches] == [
        ("torchrun", "pretrain_gpt.py", 16),
        ("torchrun", "pretrain_bert.py", 4),
        ("python", "pretrain_t5.py", 1),
        ("srun+torchrun", "pretrain_gpt.py", 16),
    ]


# fixture, kind, line:col
FINDINGS = [
    ("idioms/case_args.sh", "shift-mismatch", "7:18"),
    ("idioms/placeholders.sh", "unfilled-placeholder", "3:17"),
    ("idioms/placeholders.sh", "unfilled-placeholder", "4:12"),
    ("idioms/placeholders.sh", "backslash-at-eof", "6:54"),
    ("idioms/hazards.sh", "stray-backslash-in-string", "3:23"),
    ("idioms/hazards.sh", "flag-run-as-command", "7:5"),
    ("idioms/hazards.sh", "backslash-trailing-blank", "8:26"),
]


@pytest.mark.parametrize("fixture,kind,at", FINDINGS)
def test_shell_findings_at_exact_positions(fixture, kind, at):
    facts, _ = load(fixture)
    assert (kind, at) in [(f.kind, pos(f.span)) for f in facts.findings]


@pytest.mark.parametrize(
    "fixture",
    [
        "idioms/strings_and_exports.sh",
        "idioms/arrays.sh",
        "idioms/branches.sh",
        "idioms/expansions.sh",
        "idioms/loops_functions.sh",
        "idioms/sourced.sh",
        "idioms/misc_constructs.sh",
        "idioms/eval_and_shell_c.sh",
    ],
)
def test_clean_idioms_have_no_shell_findings(fixture):
    facts, _ = load(fixture)
    assert facts.findings == []


def test_placeholders_are_not_parse_errors():
    facts, _ = load("idioms/placeholders.sh")
    assert not any(f.kind == "parse-error" for f in facts.findings)


def test_fall_through_an_undecided_chain_leaves_its_variables_unknown_not_empty():
    from modelhelp import load_text

    _, launches = load_text(
        "MODEL_SIZE=$1\n"
        "if [ $MODEL_SIZE = 7B ]; then NUM_LAYERS=32; elif [ $MODEL_SIZE = 13B ]; then NUM_LAYERS=40; fi\n"
        "case $2 in a) TP=2 ;; esac\n"
        "torchrun pretrain_gpt.py --num-layers $NUM_LAYERS --tensor-model-parallel-size $TP\n"
    )
    layers = [value(la, "--num-layers") for la in launches]
    assert sorted(w.text for w in layers if w.text) == ["32", "32", "40", "40"]
    unknown = [w for w in layers if w.text is None]
    assert len(unknown) == 2 and all("if` chain" in w.unknown.reason for w in unknown)
    tps = [value(la, "--tensor-model-parallel-size") for la in launches]
    assert all(w.text == "2" or "`case`" in w.unknown.reason for w in tps)
