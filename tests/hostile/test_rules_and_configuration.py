"""Rule folders and configuration files as a stranger's pull request may hold them: each ends in
a `file:line:col` message and exit status 2, never a hang, a traceback or a silently dropped rule.
Each runs in a child process under a memory limit and a timeout."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.hostile.limited import megalint

SCRIPT = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 200\n"


def _rule(code: str, name: str, when: str, extra: str = "") -> str:
    return (
        f"code: {code}\nname: {name}\nseverity: error\ncategory: site\nrequires: [args.num_layers]\n"
        f"when: >-\n  {when}\nmessage: m\nat: [launch]\ndocs:\n  what: W.\n  why: Y.\n{extra}"
        "examples:\n  - bad: |\n      torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 200\n"
        "    expect: [{line: 1, column: 1}]\n"
    )


@pytest.fixture
def job(tmp_path: Path) -> Path:
    (tmp_path / "t.sh").write_text(SCRIPT)
    return tmp_path


def test_a_rule_whose_condition_fails_is_reported_not_dropped(job: Path) -> None:
    (job / "site").mkdir()
    (job / "site" / "bad-div.yaml").write_text(_rule("SITE001", "bad-div", "args.num_layers / 0 > 1"))
    ran = megalint("--rule-dir", "site", "t.sh", cwd=job)
    assert ran.rc == 2
    assert "site/bad-div.yaml:1:1: rule SITE001 [bad-div] failed on t.sh and was not applied" in ran.err
    assert "division by zero" in ran.err


def test_a_condition_over_the_evaluation_budget_is_not_run(job: Path) -> None:
    items = "[" + ",".join(map(str, range(1000))) + "]"
    when = f"{items}.all(a, {items}.all(b, {items}.all(c, a + b + c >= 0))) && args.num_layers > 1"
    (job / "site").mkdir()
    (job / "site" / "slow.yaml").write_text(_rule("SITE002", "slow", when))
    ran = megalint("--rule-dir", "site", "t.sh", cwd=job, timeout=60)
    assert ran.rc == 2
    assert "over the budget of 10,000,000: 3 comprehensions nested over lists of up to 1,000 items" in ran.err


def test_lists_range_is_bounded(job: Path) -> None:
    (job / "site").mkdir()
    (job / "site" / "range.yaml").write_text(_rule("SITE003", "range", "size(lists.range(1000000000)) > 0"))
    ran = megalint("--rule-dir", "site", "t.sh", cwd=job, timeout=60)
    assert ran.rc == 2 and "lists.range(1000000000) is longer than 100,000" in ran.err
    assert len(ran.err.splitlines()) == 1  # the binding's own log line is not shown


def test_a_yaml_alias_bomb_is_refused_where_it_grows(job: Path) -> None:
    levels = ['    - &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    levels += [f"    - &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    sources = "  sources:\n" + "\n".join(levels) + "\n"
    (job / "site").mkdir()
    (job / "site" / "bomb.yaml").write_text(_rule("SITE004", "bomb", "true", sources))
    ran = megalint("--rule-dir", "site", "t.sh", cwd=job, timeout=60)
    assert ran.rc == 2
    line = 13 + 5  # the list of a5: 10**5 values once expanded, more than the 100,000 allowed
    assert f"site/bomb.yaml:{line}:7: invalid rule file: more than 100,000 values once its aliases are expanded" in (
        ran.err
    )


def test_yaml_nested_thousands_deep_is_refused(job: Path) -> None:
    (job / "site").mkdir()
    (job / "site" / "deep.yaml").write_text("code: " + "[" * 5000 + "]" * 5000 + "\n")
    ran = megalint("--rule-dir", "site", "t.sh", cwd=job, timeout=60)
    assert ran.rc == 2 and "site/deep.yaml:" in ran.err and "nested more than 64 deep" in ran.err


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda d: os.mkfifo(d / "x.yaml"), "site/x.yaml:1:1: not a regular file"),
        (lambda d: os.symlink("nowhere.yaml", d / "x.yaml"), "site/x.yaml:1:1: a link to a file that does not exist"),
        (lambda d: (d / "x.yaml").write_bytes(b"#" * (2 << 20)), "site/x.yaml:1:1: larger than 1,048,576 bytes"),
    ],
    ids=["fifo", "dangling-link", "too-large"],
)
def test_a_rule_file_that_is_no_file(job: Path, make, said: str) -> None:
    (job / "site").mkdir()
    make(job / "site")
    ran = megalint("--rule-dir", "site", "t.sh", cwd=job, timeout=60)
    assert ran.rc == 2 and said in ran.err, ran.err


def test_a_rule_dir_that_is_a_device_or_the_whole_disk(job: Path) -> None:
    ran = megalint("--rule-dir", "/dev/zero", "t.sh", cwd=job, timeout=60)
    assert ran.rc == 2 and "/dev/zero:1:1: not a regular file" in ran.err
    (job / "megalint.toml").write_text('rule-dirs = ["/"]\n')
    ran = megalint("t.sh", cwd=job, timeout=100)
    assert ran.rc == 2 and "Traceback" not in ran.err


def test_links_back_up_the_tree_are_walked_once(job: Path) -> None:
    (job / "site" / "d").mkdir(parents=True)
    for name in "abcdef":
        os.symlink("..", job / "site" / "d" / name)
    (job / "site" / "bad-div.yaml").write_text(_rule("SITE001", "bad-div", "args.num_layers > 1"))
    ran = megalint("--rule-dir", "site", "--output-format", "concise", "t.sh", cwd=job, timeout=60)
    assert ran.rc == 1 and ran.out.count("SITE001") == 1, ran.err


def test_configuration_nested_thousands_deep(job: Path) -> None:
    (job / "megalint.toml").write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    ran = megalint("t.sh", cwd=job, timeout=60)
    assert ran.rc == 2
    assert ran.err.strip() == f"megalint: {job / 'megalint.toml'}:1:37: invalid TOML: values nested more than 32 deep"


def test_configuration_brackets_in_strings_and_comments_are_no_nesting(job: Path) -> None:
    (job / "megalint.toml").write_text('exclude = ["[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["]  # ' + "[" * 40 + "\n")
    ran = megalint("t.sh", cwd=job, timeout=60)
    assert ran.rc == 0, ran.err


def test_configuration_with_a_byte_order_mark_is_read(job: Path) -> None:
    (job / "megalint.toml").write_bytes(b'\xef\xbb\xbfselect = ["ML5"]\nbogus = 1\n')
    ran = megalint("t.sh", cwd=job, timeout=60)
    assert ran.rc == 2 and ran.err.strip() == f"megalint: {job / 'megalint.toml'}:2:1: unknown key `bogus`", ran.err


def test_configuration_that_is_a_fifo(job: Path) -> None:
    os.mkfifo(job / "megalint.toml")
    ran = megalint("--config", "megalint.toml", "t.sh", cwd=job, timeout=60)
    assert ran.rc == 2 and "megalint.toml:1:1: cannot read the configuration: not a regular file" in ran.err
    assert megalint("t.sh", cwd=job, timeout=60).rc == 0  # found by its name, it is no file: not read


def test_a_nul_in_a_rule_file_is_a_yaml_error_at_its_place() -> None:
    # Found by tools/fuzz_hostile.py: ruamel's ReaderError escaped as an internal error.
    from megalint.engine.rulefile import read_rule_file

    assert [str(e) for e in read_rule_file("code: A\nna\x00me: b\n", "x.yaml")[1]] == [
        "x.yaml:2:3: invalid YAML: character U+0000 is not allowed"
    ]
