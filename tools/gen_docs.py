"""Generate the documentation that is derived from the code, so that it cannot drift from it.

    python tools/gen_docs.py           # (re)write every generated file
    python tools/gen_docs.py --check   # write nothing; exit 1 and name every stale file

What it writes:
- docs/rules/<name>.md: one page per rule, from the rule's own metadata, docs and examples;
- README.md between `<!-- rules:start -->` / `<!-- rules:end -->`: the rule table;
- README.md between `<!-- example:start -->` / `<!-- example:end -->`: the output of a real
  `megalint` run on a fixture, at 100 columns, without colour; between `<!-- site-rule:start -->`
  / `<!-- site-rule:end -->` the example site rule;
- docs/github-actions.md between `<!-- inputs:start -->` / `<!-- inputs:end -->`: the action's
  inputs and outputs from action.yml, and between `<!-- workflow:start -->` /
  `<!-- workflow:end -->` the example workflow docs/examples/megalint.yml.

Every region is replaced whole, so running the tool twice gives the same files. Pages in
docs/rules/ for rules that no longer exist are deleted (reported by --check).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    # The source tree, never an installed megalint that may be older.
    sys.path.insert(0, str(ROOT))

from megalint.diagnostics import Applicability  # noqa: E402
from megalint.engine import Rule, load_rules  # noqa: E402
from megalint.reports.rule_page import RULES_DIR, fenced, rule_page  # noqa: E402

EXAMPLE_FIXTURE = "fixtures/examples/gpt_13b_multinode.sbatch"
EXAMPLE_WIDTH = 100  # megalint's width when its output is not a terminal
SITE_RULE = "docs/examples/site-rules/checkpoint-interval.yaml"


def page_path(rule: Rule) -> str:
    return f"{RULES_DIR}/{rule.name}.md"


def first_sentence(text: str) -> str:
    text = " ".join((text or "").split())
    m = re.match(r"(.+?[.!?])(?=\s+[A-Z`(]|$)", text)
    return m.group(1) if m else text


def table_summary(rule: Rule) -> str:
    return first_sentence(rule.docs.what) or rule.name


def all_rules() -> list[Rule]:
    rules = list(load_rules([]))
    codes = [r.code for r in rules]
    names = [r.name for r in rules]
    dup = {x for x in codes + names if codes.count(x) > 1 or names.count(x) > 1}
    if dup:
        raise SystemExit(f"gen_docs: duplicate rule codes or names: {', '.join(sorted(dup))}")
    return sorted(rules, key=lambda r: (re.sub(r"\d+$", "", r.code), int(re.sub(r"^\D+", "", r.code) or 0)))


def md_cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def rules_table(rules: list[Rule], link_prefix: str = "") -> str:
    rows = ["| Code | Name | Severity | Fix | What it checks |", "|---|---|---|---|---|"]
    for d in rules:
        fix = {
            None: "",
            Applicability.SAFE: "safe",
            Applicability.UNSAFE: "unsafe",
            Applicability.DISPLAY_ONLY: "shown",
        }.get(d.fix.applicability if d.fix else None, "")
        rows.append(
            f"| {d.code} | [{d.name}]({link_prefix}{page_path(d)}) | {d.severity.value} | {fix} "
            f"| {md_cell(table_summary(d))} |"
        )
    return "\n".join(rows)


def example_run(root: Path = ROOT) -> tuple[str, str]:
    """The command and the output of a real megalint run on the example fixture."""
    argv = [EXAMPLE_FIXTURE]
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GITHUB_", "MEGALINT_")) and k not in ("FORCE_COLOR", "CLICOLOR_FORCE", "COLUMNS")
    }
    env["NO_COLOR"] = "1"
    env["PYTHONPATH"] = str(root) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    # Not a terminal: megalint renders at its default 100 columns.
    proc = subprocess.run(
        [sys.executable, "-m", "megalint", "--color", "never", *argv],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if proc.returncode not in (0, 1) or proc.stderr.strip():
        raise SystemExit(f"gen_docs: megalint {' '.join(argv)} exited {proc.returncode}: {proc.stderr.strip()}")
    return "megalint " + " ".join(argv), proc.stdout.rstrip("\n") + f"\n$ echo $?\n{proc.returncode}"


def example_block(root: Path = ROOT) -> str:
    cmd, output = example_run(root)
    return fenced(f"$ {cmd}\n{output}", "console")


def action_io_tables(action_yml: Path) -> str:
    import yaml

    doc = yaml.safe_load(action_yml.read_text("utf-8"))
    rows = ["| Input | Default | Meaning |", "|---|---|---|"]
    for name, spec in (doc.get("inputs") or {}).items():
        default = spec.get("default", "")
        rows.append(
            f"| `{name}` | {f'`{default}`' if default != '' else '(empty)'} | {md_cell(spec.get('description', ''))} |"
        )
    rows += ["", "| Output | Meaning |", "|---|---|"]
    for name, spec in (doc.get("outputs") or {}).items():
        rows.append(f"| `{name}` | {md_cell(spec.get('description', ''))} |")
    return "\n".join(rows)


class MarkerError(Exception):
    pass


def replace_between(text: str, key: str, body: str, where: str) -> str:
    start, end = f"<!-- {key}:start -->", f"<!-- {key}:end -->"
    if text.count(start) != 1 or text.count(end) != 1:
        raise MarkerError(f"{where}: needs exactly one `{start}` and one `{end}`")
    a = text.index(start) + len(start)
    b = text.index(end)
    if b < a:
        raise MarkerError(f"{where}: `{end}` comes before `{start}`")
    return text[:a] + "\n" + body.rstrip("\n") + "\n" + text[b:]


def generate(root: Path = ROOT) -> dict[str, str | None]:
    """Every generated file, repository-relative path -> content (None: the file must not exist)."""
    rules = all_rules()
    out: dict[str, str | None] = {page_path(d): rule_page(d) for d in rules}
    rules_dir = root / RULES_DIR
    if rules_dir.is_dir():
        for p in sorted(rules_dir.glob("*.md")):
            rel = f"{RULES_DIR}/{p.name}"
            if rel not in out:
                out[rel] = None
    readme = (root / "README.md").read_text("utf-8")
    readme = replace_between(readme, "rules", rules_table(rules), "README.md")
    readme = replace_between(readme, "example", example_block(root), "README.md")
    site_rule = (root / SITE_RULE).read_text("utf-8")
    readme = replace_between(readme, "site-rule", fenced(site_rule, "yaml"), "README.md")
    out["README.md"] = readme
    gha = (root / "docs/github-actions.md").read_text("utf-8")
    gha = replace_between(gha, "inputs", action_io_tables(root / "action.yml"), "docs/github-actions.md")
    workflow = (root / "docs/examples/megalint.yml").read_text("utf-8")
    gha = replace_between(gha, "workflow", fenced(workflow, "yaml"), "docs/github-actions.md")
    out["docs/github-actions.md"] = gha
    return out


def stale(root: Path = ROOT, generated: dict[str, str | None] | None = None) -> list[str]:
    """Generated files whose content on disk differs (or that should not exist)."""
    generated = generate(root) if generated is None else generated
    bad = []
    for rel, content in sorted(generated.items()):
        p = root / rel
        current = p.read_text("utf-8") if p.is_file() else None
        if current != content:
            bad.append(rel)
    return bad


def write(root: Path = ROOT, generated: dict[str, str | None] | None = None) -> list[str]:
    generated = generate(root) if generated is None else generated
    changed = stale(root, generated)
    for rel in changed:
        p = root / rel
        content = generated[rel]
        if content is None:
            p.unlink()
        else:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(content, "utf-8", newline="\n")
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if a generated file is stale")
    args = ap.parse_args(argv)
    try:
        generated = generate(ROOT)
    except MarkerError as exc:
        print(f"gen_docs: {exc}", file=sys.stderr)
        return 2
    if args.check:
        bad = stale(ROOT, generated)
        for rel in bad:
            print(f"stale: {rel}", file=sys.stderr)
        if bad:
            print("run `python tools/gen_docs.py` and commit the result", file=sys.stderr)
        return 1 if bad else 0
    for rel in write(ROOT, generated):
        print(f"{'deleted' if generated[rel] is None else 'wrote'} {rel}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
