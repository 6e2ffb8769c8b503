"""The shell stage runs first: it imports nothing of the stages that run after it (launch,
megatron, rules), only itself, the source model, the error hierarchy, the record of what it
asks the file system (probes.py, which the caches read) and the patterns compiled on first use
(lazy_re.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import megalint.shell

SHELL = Path(megalint.shell.__file__).parent
ALLOWED = ("megalint.shell", "megalint.source", "megalint.errors", "megalint.probes", "megalint.lazy_re")


def _imports(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            # `from megalint import lazy_re` imports megalint.lazy_re: each name as the module it may be
            names.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_the_shell_stage_imports_no_later_stage() -> None:
    later = {
        f"{path.relative_to(SHELL.parent)}: {name}"
        for path in sorted(SHELL.rglob("*.py"))
        for name in _imports(path)
        if name.startswith("megalint") and not any(name == a or name.startswith(a + ".") for a in ALLOWED)
    }
    assert not later
