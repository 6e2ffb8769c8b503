"""The shell findings as rules read them, in the `shell` list of every context."""

from __future__ import annotations

from megalint.megatron.plain import plain
from megalint.shell.facts import ShellFinding


def shell_entries(findings: list[ShellFinding]) -> list[dict[str, object]]:
    """One dict per finding; its `index` is how a Locator finds the finding again."""
    return [
        {"index": i, "kind": f.kind, "message": f.message, **{k: plain(v) for k, v in f.data.items()}}
        for i, f in enumerate(findings)
    ]
