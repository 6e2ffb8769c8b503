"""The package's units stand in one order, the order of the pipeline in ARCHITECTURE.md: each
imports only units below it. A cycle, or a low unit reaching up (the memory model importing the
pipeline that runs it), is what makes a newcomer lost; this test names the import that does it.

Every import counts, including those inside functions: a lazy import is still a dependency."""

from __future__ import annotations

import ast
from pathlib import Path

import megalint

PACKAGE = Path(megalint.__file__).parent

# Lowest first. One entry per top-level module or package of megalint/.
LAYERS: list[str] = [
    "data",  # packaged data files (the catalogues, the GPU table); no code of its own
    "errors",  # the error hierarchy and exit statuses
    "lazy_re",  # regular expressions compiled when first used
    "packaged",  # where the packaged files are
    "levels",  # the severities and failure thresholds, by name
    "source",  # a script's text and positions
    "digests",  # the hashes cache entries are named and checked with
    "cachedir",  # where megalint keeps what later runs reuse
    "probes",  # what a check asks the file system, kept with the answers for the caches
    "stamp",  # which build of megalint runs, named without reading its files
    "cache_entry",  # how it keeps an entry there
    "classcode",  # the methods dataclasses compile, kept between runs of the command line
    "replay",  # the output of a repeated command, kept and printed again while nothing changed
    "diagnostics",  # what a finding is
    "shell",  # parse and interpret the script
    "launch",  # the launches and their environment
    "megatron",  # Megatron's arguments by version, forks, derived values
    "hardware",  # GPUs and the script's hints of them
    "memory",  # the per-GPU memory model
    "rulecontext",  # what a rule reads of one launch or of the script
    "engine",  # rules: loading, CEL conditions, evaluation
    "pipeline",  # one script from text to findings
    "config",  # configuration files
    "suppress",  # suppression comments
    "fix",  # applying fixes
    "selection",  # which rules run, at which severity
    "output",  # the output formats
    "discovery",  # which files a run checks
    "checking",  # the files of one run, checked
    "reports",  # what `explain` and `memory` show
    "cli",  # the command line
    "__main__",
]
# Importable from anywhere: the package root only holds the version and the project's address.
ROOT = "megalint"


def _unit(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _imports(path: Path, source: str | None = None) -> list[tuple[int, str]]:
    """(line, unit) of each megalint import in the file."""
    out = []
    # The package a relative import starts from: `from . import x` in megalint/a/b.py is megalint.a.
    where = path.relative_to(PACKAGE).parent.parts if path.is_relative_to(PACKAGE) else ()
    package = [ROOT, *where]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8") if source is None else source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            names = [base if base != ROOT else f"{ROOT}.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == ROOT and len(parts) > 1:
                out.append((node.lineno, parts[1]))
    return out


def _sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__init__.py" or p.parent != PACKAGE)


def test_every_unit_has_a_place():
    units = {_unit(p) for p in _sources()}
    assert units - set(LAYERS) == set(), "place the new unit in LAYERS, at the height of what it imports"
    assert set(LAYERS) - units == set(), "a unit listed in LAYERS no longer exists"


def test_each_unit_imports_only_units_below_it():
    height = {u: i for i, u in enumerate(LAYERS)}
    upward = []
    for path in _sources():
        here = _unit(path)
        for line, there in _imports(path):
            if there in ("__version__", "REPOSITORY_URL") or there == here:
                continue
            if height[there] > height[here]:
                upward.append(
                    f"{path.relative_to(PACKAGE.parent)}:{line}: {here} imports {there}, which stands above it"
                )
    assert upward == []


def test_the_check_catches_an_upward_import(tmp_path):
    # The reader of imports must see a lazy one inside a function.
    p = tmp_path / "x.py"
    p.write_text("def f():\n    from megalint.pipeline import lint_text\n")
    assert _imports(p) == [(2, "pipeline")]


def test_relative_imports_are_resolved():
    inside = PACKAGE / "memory" / "x.py"  # read only for its place in the package
    assert _resolve_relative(inside, "from .. import pipeline") == [(1, "pipeline")]
    assert _resolve_relative(inside, "from .shape import f") == [(1, "memory")]


def _resolve_relative(path: Path, source: str) -> list[tuple[int, str]]:
    return _imports(path, source)
