"""Configuration files: discovery, precedence, and errors with file:line:col."""

from __future__ import annotations

import json

import pytest

from megalint.config import load_config, position

from .conftest import CLEAN, INFO

# World size from $NNODES: undecided without a value for it.
NODES = (
    "torchrun --nnodes $NNODES --nproc_per_node 8 pretrain_gpt.py --num-layers 6 "
    "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 3\n"
)
FP8 = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --fp8-format hybrid\n"


def codes(r):
    return sorted(d["code"] for d in json.loads(r.out))


def test_assume_from_config(megalint, scripts):
    p = scripts("job.sh", NODES)
    assert codes(megalint("--output-format", "json", str(p))) == []  # NNODES unknown: nothing to say
    scripts("megalint.toml", "assume = { NNODES = 4 }\n")
    assert codes(megalint("--output-format", "json", str(p))) == ["ML101", "ML301"]  # 32 % 24
    assert codes(megalint("--output-format", "json", "--assume", "NNODES=3", str(p))) == ["ML301"]  # 24: CLI wins


def test_gpu_and_version_from_config(megalint, scripts):
    p = scripts("job.sh", FP8)
    assert codes(megalint("--output-format", "json", str(p))) == []
    scripts("pyproject.toml", '[project]\nname = "x"\n\n[tool.megalint]\ngpu = "a100"\nmegatron-version = "0.15"\n')
    assert codes(megalint("--output-format", "json", str(p))) == ["ML201"]
    assert codes(megalint("--output-format", "json", "--gpu", "h100", str(p))) == []
    assert codes(megalint("--output-format", "json", "--isolated", str(p))) == []


def test_nearest_config_per_file(megalint, scripts, tmp_path):
    top = scripts("top.sh", FP8)
    sub = scripts("sub/job.sh", FP8)
    scripts("megalint.toml", 'gpu = "a100"\n')
    scripts("sub/pyproject.toml", '[tool.megalint]\ngpu = "h100"\n')
    r = megalint("--output-format", "concise", str(tmp_path))
    assert r.out.splitlines()[0].startswith(f"{top}:")
    assert str(sub) not in r.out


def test_pyproject_without_table_is_skipped(megalint, scripts, tmp_path):
    scripts("megalint.toml", 'gpu = "a100"\n')
    p = scripts("sub/job.sh", FP8)
    scripts("sub/pyproject.toml", '[project]\nname = "x"\n')
    assert codes(megalint("--output-format", "json", str(p))) == ["ML201"]


def test_explicit_config(megalint, scripts, tmp_path):
    p = scripts("job.sh", FP8)
    scripts("megalint.toml", 'gpu = "h100"\n')
    other = scripts("ci/strict.toml", 'gpu = "v100"\n')
    assert codes(megalint("--output-format", "json", str(p))) == []
    assert codes(megalint("--output-format", "json", "--config", str(other), str(p))) == ["ML201"]


def test_rule_dirs_are_relative_to_the_config(megalint, scripts, tmp_path):
    scripts("ci/rules/echo.yaml", ECHO_RULE)
    scripts("megalint.toml", 'rule-dirs = ["ci/rules"]\n')
    p = scripts("job.sh", CLEAN)
    r = megalint("--output-format", "concise", str(p))
    assert r.codes == ["ML990"]


ECHO_RULE = """\
code: ML990
name: every-launch
severity: warning
category: test
megatron: "*"
when: true
message: a launch
at: [launch]
docs: {what: "Reports every launch.", why: "For tests."}
examples:
  - bad: "torchrun pretrain_gpt.py --num-layers 2\\n"
    expect: [{line: 1, column: 1}]
"""


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("megalint.toml", 'gpu = "h100"\nselct = ["ML1"]\n', "2:1: unknown key `selct` (did you mean `select`?)"),
        ("megalint.toml", "gpu = 100\n", "1:1: `gpu` must be a string, not an integer"),
        ("megalint.toml", 'select = "ML1"\n', "1:1: `select` must be an array, not a string"),
        (
            "megalint.toml",
            'ignore = ["ML1", 3]\n',
            "1:1: `ignore` must be an array of strings, not an array with an integer",
        ),
        (
            "megalint.toml",
            'follow-source-outside-root = "yes"\n',
            "1:1: `follow-source-outside-root` must be a boolean, not a string",
        ),
        (
            "megalint.toml",
            'failure-threshold = "fatal"\n',
            "1:1: `failure-threshold` must be one of error, warning, info, none, not `fatal`",
        ),
        (
            "megalint.toml",
            'gpu = "h100"\nassume = { NNODES = 4, DEBUG = true }\n',
            "2:24: `assume.DEBUG` must be a string or an integer, not a boolean",
        ),
        (
            "megalint.toml",
            "[assume]\nNNODES = 4\nGPUS = [8]\n",
            "3:1: `assume.GPUS` must be a string or an integer, not an array",
        ),
        ("megalint.toml", 'gpu = "h1000"\n', '1:1: unknown GPU `h1000` (e.g. "h100", "a100-80gb", "v100")'),
        (
            "megalint.toml",
            'megatron-version = "latest-ish"\n',
            '1:1: `latest-ish` is not a Megatron-LM version (e.g. "0.15", "core_v0.12.0", "HEAD")',
        ),
        (
            "megalint.toml",
            'gpu = "h100"\nrule-dirs = ["ci", "nowhere"]\n',
            "2:20: rule folder `nowhere` does not exist (relative to {root})",
        ),
        (
            "megalint.toml",
            '[severity]\nML101 = "fatal"\n',
            "2:1: severity of `ML101` must be one of error, warning, info, not `fatal`",
        ),
        (
            "megalint.toml",
            "severity = { ML101 = 1 }\n",
            "1:14: severity of `ML101` must be one of error, warning, info, not an integer",
        ),
        (
            "megalint.toml",
            '[per-file-ignores]\n"a/*.sh" = "ML101"\n',
            "2:1: per-file-ignores `a/*.sh` must be an array of rule codes",
        ),
        ("megalint.toml", 'gpu = "h100"\ngpu = "a100"\n', "2:13: invalid TOML: Cannot overwrite a value"),
        ("megalint.toml", 'select = ["ML1"\n', "2:1: invalid TOML: Unclosed array"),
        ("megalint.toml", "gpu = h100\n", "1:7: invalid TOML: Invalid value"),
        (
            "pyproject.toml",
            '[project]\nname = "x"\n\n[tool.megalint]\ngpu = "h100"\n\n[tool.megalint.severity]\n'
            'ML101 = "error"\nML201 = "loud"\n',
            "9:1: severity of `ML201` must be one of error, warning, info, not `loud`",
        ),
        (
            "pyproject.toml",
            '[tool.megalint]\nexclude = ["x"]\n[tool.megalint.assume]\nNNODES = 2.5\n',
            "4:1: `assume.NNODES` must be a string or an integer, not a float",
        ),
        ("pyproject.toml", "[tool]\nmegalint = 3\n", "2:1: `tool.megalint` must be a table, not an integer"),
        ("pyproject.toml", "[tool.megalint]\nverbose = true\n", "2:1: unknown key `verbose`"),
    ],
)
def test_config_errors(megalint, scripts, tmp_path, name, text, message):
    (tmp_path / "ci").mkdir()
    cfg = scripts(name, text)
    p = scripts("job.sh", CLEAN)
    r = megalint(str(p))
    assert r.rc == 2
    assert r.err == f"megalint: {cfg}:{message.format(root=tmp_path)}\n"


def test_config_error_through_explicit_config(megalint, scripts):
    cfg = scripts("other.toml", 'gpu = "h100"\n\nexclude = "x"\n')
    p = scripts("job.sh", CLEAN)
    r = megalint("--config", str(cfg), str(p))
    assert (r.rc, r.err) == (2, f"megalint: {cfg}:3:1: `exclude` must be an array, not a string\n")


def test_missing_explicit_config(megalint, scripts, tmp_path):
    p = scripts("job.sh", CLEAN)
    r = megalint("--config", str(tmp_path / "nope.toml"), str(p))
    assert (r.rc, r.err) == (
        2,
        f"megalint: {tmp_path / 'nope.toml'}:1:1: cannot read the configuration: No such file or directory\n",
    )


def test_isolated_ignores_a_broken_config(megalint, scripts):
    scripts("megalint.toml", "this is not toml\n")
    p = scripts("job.sh", INFO)
    assert megalint(str(p)).rc == 2
    assert megalint("--isolated", str(p)).rc == 0


def test_loaded_values(tmp_path):
    (tmp_path / "rules").mkdir()
    p = tmp_path / "megalint.toml"
    p.write_text(
        'megatron-version = "0.12"\ngpu = "a100"\nassume = { NNODES = 4, MODE = "pp" }\n'
        'rule-dirs = ["rules"]\nexclude = ["old/"]\nfailure-threshold = "info"\n'
        '[per-file-ignores]\n"x/*.sh" = ["ML1"]\n'
    )
    cfg = load_config(str(p))
    assert cfg.assume == {"NNODES": "4", "MODE": "pp"}
    assert cfg.rule_dirs == [str(tmp_path / "rules")]
    assert (cfg.megatron_version, cfg.gpu, cfg.failure_threshold) == ("0.12", "a100", "info")
    assert cfg.exclude == ["old/"] and cfg.per_file_ignores == {"x/*.sh": ["ML1"]}


@pytest.mark.parametrize(
    "keys, value, where",
    [
        (("tool", "megalint", "gpu"), None, (5, 1)),
        (("tool", "megalint", "assume", "NNODES"), None, (6, 12)),
        (("tool", "megalint", "assume", "GPUS"), None, (6, 24)),
        (("tool", "megalint", "select"), "ML999", (9, 3)),
        (("tool", "megalint", "severity", "ML101"), None, (11, 10)),
        (("tool", "megalint", "severity", "ML201"), None, (14, 1)),
        (("tool", "megalint", "per-file-ignores", "a/*.sh"), "ML1", (17, 13)),
        (("tool", "megalint", "unknown"), None, (4, 2)),  # the nearest enclosing table
        (("nowhere",), None, (1, 1)),
    ],
)
def test_position(keys, value, where):
    text = (
        '[project]\nname = "x"\n\n[tool.megalint]\ngpu = "h100"\n'
        'assume = { NNODES = 4, "GPUS" = true }\nselect = [\n  "ML1",\n  "ML999",\n]\n'
        'severity.ML101 = "error"\n\n[tool.megalint.severity]\nML201 = "fatal"\n\n'
        '[tool.megalint.per-file-ignores]\n"a/*.sh" = ["ML1"]\n'
    )
    assert position(text, keys, value) == where


def test_position_skips_multiline_strings():
    text = 'a = """\ngpu = 1\n"""\ngpu = "h100"\n'
    assert position(text, ("gpu",)) == (4, 1)
