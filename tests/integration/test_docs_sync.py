"""The generated documentation matches the code, and the README's commands are the ones CI runs.

Fast (no installs): not marked `integration`.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import gen_docs  # noqa: E402

from megalint.cli import main as cli_main  # noqa: E402
from megalint.engine import check_example, iter_examples, load_rules  # noqa: E402
from megalint.pipeline import Settings, lint_text  # noqa: E402


@pytest.fixture(scope="module")
def generated():
    return gen_docs.generate(ROOT)


def test_generated_docs_are_current(generated):
    stale = gen_docs.stale(ROOT, generated)
    assert not stale, f"stale generated files {stale}: run `python tools/gen_docs.py` and commit the result"


def test_one_page_per_rule_and_one_table_row(generated):
    rules = gen_docs.all_rules()
    pages = sorted(p.name for p in (ROOT / "docs" / "rules").glob("*.md"))
    assert pages == sorted(f"{d.name}.md" for d in rules)
    readme = (ROOT / "README.md").read_text("utf-8")
    table = readme[readme.index("<!-- rules:start -->") : readme.index("<!-- rules:end -->")]
    rows = re.findall(r"^\| (ML\d+|[A-Z]+\d+) \| \[([a-z0-9-]+)\]\(docs/rules/([a-z0-9-]+)\.md\)", table, re.M)
    assert [(c, n, n) for c, n, _ in rows] == [(d.code, d.name, d.name) for d in rules]
    assert all(n == f for _, n, f in rows)
    # The codes the command line knows are exactly the documented ones.
    listed = subprocess.run(
        [sys.executable, "-m", "megalint", "rules"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert sorted(re.findall(r"^(ML\d+)\s", listed, re.M)) == sorted(d.code for d in rules)


def test_generation_is_idempotent_and_markers_are_strict(generated):
    readme = generated["README.md"]
    # Replacing a filled region gives the same text: nothing is ever written twice.
    again = gen_docs.replace_between(readme, "rules", gen_docs.rules_table(gen_docs.all_rules()), "README.md")
    assert again == readme
    assert readme.count("<!-- rules:start -->") == 1 and readme.count("| ML101 |") == 1
    with pytest.raises(gen_docs.MarkerError):
        gen_docs.replace_between(readme + "\n<!-- rules:start -->\n", "rules", "x", "README.md")
    with pytest.raises(gen_docs.MarkerError):
        gen_docs.replace_between("no markers", "rules", "x", "README.md")


def test_a_changed_rule_makes_its_page_stale(tmp_path, monkeypatch, generated):
    page = ROOT / "docs" / "rules" / "world-size-divisibility.md"
    text = page.read_text("utf-8")
    assert "## What it does" in text and "`ML101`" in text and "## Examples from the rule's tests" in text
    # A rule with no page yet and a page of a rule that is gone are both reported.
    fake = dict(generated)
    fake["docs/rules/not-a-rule.md"] = None
    fake["docs/rules/world-size-divisibility.md"] = text + "changed\n"
    (ROOT / "docs" / "rules" / "not-a-rule.md").exists() and pytest.fail("stray page in docs/rules")
    bad = gen_docs.stale(ROOT, fake)
    assert bad == ["docs/rules/world-size-divisibility.md"]


def test_readme_example_run_is_the_real_output(generated):
    # generate() ran the real command line on the fixture; README.md must hold exactly that.
    readme = (ROOT / "README.md").read_text("utf-8")
    region = generated["README.md"]
    region = region[region.index("<!-- example:start -->") : region.index("<!-- example:end -->")]
    assert region in readme
    cmd = f"megalint {gen_docs.EXAMPLE_FIXTURE}"
    output = region[region.index(f"$ {cmd}\n") + len(cmd) + 3 :]
    # A multi-finding run, rendered for 100 columns: code frames are cut at the width.
    assert output.count("docs: https://") >= 3
    frame_lines = [ln for ln in output.splitlines() if re.match(r"^\s*\d+ [|+-] ", ln)]
    assert frame_lines and max(len(ln) for ln in frame_lines) <= gen_docs.EXAMPLE_WIDTH


def _quick_start() -> list[str]:
    readme = (ROOT / "README.md").read_text("utf-8")
    section = readme[readme.index("## Quick start") :]
    section = section[: section.index("\n## ", 3)]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [ln for ln in block.splitlines() if ln.strip()]


def test_quick_start_is_two_commands_and_ci_runs_the_second():
    commands = _quick_start()
    assert len(commands) == 2, commands
    install_and_lint, install_and_test = commands
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    assert re.search(rf"^{re.escape(install_and_test)} \|\| rc=\$\?$", ci, re.M), (
        ".ci/run must run the README's second quick-start command verbatim"
    )
    assert "set -euo pipefail" in ci and '"$rc" -eq 5' in ci
    # The first command lints the bundled examples, which exist and are launch scripts.
    words = shlex.split(install_and_lint.split("&&")[1])
    assert words[0] == "megalint"
    target = ROOT / words[1]
    assert target.is_dir() and len(list(target.iterdir())) >= 3


def test_ci_script_fails_when_no_test_ran(tmp_path):
    # .ci/run with the commands replaced by stubs: pytest's 5 (nothing collected) must fail CI.
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "pip").write_text("#!/bin/sh\nexit 0\n")
    (stub / "python").write_text('#!/bin/sh\nexit "$STUB_RC"\n')
    for f in stub.iterdir():
        f.chmod(0o755)
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    (repo / ".ci" / "run").write_text(ci)
    import os

    for rc, want in ((0, 0), (1, 1), (5, 1)):
        env = dict(os.environ, PATH=f"{stub}{os.pathsep}{os.environ['PATH']}", STUB_RC=str(rc))
        got = subprocess.run(["bash", str(repo / ".ci" / "run")], env=env, capture_output=True, text=True).returncode
        assert got == want, (rc, got)


def test_examples_lint_as_the_readme_says(capsys):
    ex = ROOT / "fixtures" / "examples"
    codes = {}
    for script in sorted(ex.iterdir()):
        rc = cli_main(["--output-format", "concise", "--color", "never", str(script)])
        out = capsys.readouterr().out
        codes[script.name] = (rc, sorted(set(re.findall(r": (ML\d+) ", out))))
    assert codes["gpt_1b_single_node.sh"] == (0, [])
    assert codes["fp8_on_a100.sh"] == (1, ["ML201"])
    assert codes["gpt_13b_multinode.sbatch"] == (1, ["ML011", "ML101", "ML301", "ML607"])


def test_site_rule_example_loads_and_its_examples_hold():
    path = ROOT / gen_docs.SITE_RULE
    rules = load_rules([path], packaged=False)
    examples = list(iter_examples(rules))
    assert [r.code for r in rules] == ["SITE001"] and len(examples) >= 3
    for rule, ex in examples:
        settings = Settings(
            rules=rules, megatron_version=ex.megatron, gpu=ex.gpu, assume={k: str(v) for k, v in ex.assume.items()}
        )
        result = lint_text("example.sh", ex.script, settings)
        assert not result.evaluation.failures
        assert check_example(ex, rule, result.diagnostics) == [], (ex.origin, result.diagnostics)


def test_hook_manifest_is_valid_and_documented():
    clientlib = pytest.importorskip("pre_commit.clientlib")
    hooks = clientlib.load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))
    by_id = {h["id"]: h for h in hooks}
    assert set(by_id) == {"megalint", "megalint-fix"}
    for h in hooks:
        assert h["language"] == "python" and h["types"] == ["text"] and h["require_serial"] is True
        assert h["exclude_types"] == ["zsh"] and "sbatch|slurm" in h["files"]
        assert h["entry"].split()[:2] == ["megalint", "--force-exclude"]
    assert "--fix" in by_id["megalint-fix"]["entry"].split()
    doc = (ROOT / "docs" / "pre-commit.md").read_text("utf-8")
    assert "args: [--fix]" in doc and "`megalint-fix`" in doc


def test_docs_links_resolve():
    for md in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = md.read_text("utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            assert (md.parent / target).exists(), f"{md.relative_to(ROOT)}: broken link {target}"
