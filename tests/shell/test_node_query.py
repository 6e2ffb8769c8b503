"""Nodes by capture name (shell/node_query.py): the walk in Python and the tree-sitter query find
the same nodes in the same (file) order, on every fixture and on the constructs the patterns name."""

from __future__ import annotations

from pathlib import Path

import pytest
import tree_sitter

from megalint.shell import node_query
from megalint.shell.interp import syntax
from megalint.shell.node_query import NodeQuery, Pattern
from megalint.shell.parse import LANGUAGE, SYNTAX, parse_text

ROOT = Path(__file__).resolve().parents[2]
QUERIES = {"syntax": SYNTAX, "assigned": syntax._ASSIGNED}

CONSTRUCTS = """\
#!/bin/bash
# a comment
A=$(uname -m)
curl https://example.invalid/${ARCH}/pkg.deb
dpkg -i pkg.deb
declare -a ARR=(1 2)
unset ARR
setup() { local X=1; read -r Y; let "Z=1"; }
for ((i = 0; i < 2; i++)); do echo $((i + 1)); done
for f in a b; do ARR[0]=$f; done
(( N = 2 ))
case "$A" in x) B=1 ;; esac
mapfile -t LINES < file
echo ( broken
"""


def _shape(found: dict[str, list[tree_sitter.Node]]) -> dict[str, list[tuple[str, int, int]]]:
    return {k: [(n.type, n.start_byte, n.end_byte) for n in v] for k, v in sorted(found.items())}


def _scripts() -> list[Path]:
    return sorted(p for p in (ROOT / "fixtures").rglob("*.sh") if p.stat().st_size < 200_000)


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_walk_and_query_agree_on_the_constructs(name: str) -> None:
    q = QUERIES[name]
    ps = parse_text("t.sh", CONSTRUCTS)
    for node in [ps.root, *ps.root.named_children]:
        assert _shape(q.walk(node)) == _shape(q.query(node))
    found = q.walk(ps.root)
    assert all(len(v) > 0 for v in found.values()) and len(found) == len(
        {c for p in q.patterns for c in (p.capture, p.child_capture) if c}
    )


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_walk_and_query_agree_on_every_fixture(name: str) -> None:
    q = QUERIES[name]
    scripts = _scripts()
    assert len(scripts) > 100
    for path in scripts:
        ps = parse_text(str(path), path.read_text(encoding="utf-8", errors="replace"))
        for node in [ps.root, *ps.root.named_children]:
            assert _shape(q.walk(node)) == _shape(q.query(node)), f"{path}: {node.type} at {node.start_point}"


def test_captures_are_in_file_order() -> None:
    # Seen on a real script: tree-sitter listed the command inside `$(…)` first and then the
    # command after the next one, depending on how its matches ended.
    script = "A=$(uname -m)\ncurl https://x/${ARCH}/y.deb\ndpkg -i y.deb\n"
    ps = parse_text("t.sh", script)
    for found in (SYNTAX.walk(ps.root), SYNTAX.query(ps.root)):
        assert [ps.text(n) for n in found["command_name"]] == ["uname", "curl", "dpkg"]


def test_pattern_source_is_tree_sitters_query_language() -> None:
    assert Pattern("comment", "comment").source() == "(comment) @comment"
    assert (
        Pattern("variable_assignment", field="name", child_capture="a").source() == "(variable_assignment name: (_) @a)"
    )
    reader = Pattern("command", "r", field="name", child="command_name", child_capture="n", any_of=("read", "let"))
    assert reader.source() == '(command name: (command_name) @n (#any-of? @n "read" "let")) @r'
    tree_sitter.Query(LANGUAGE, "\n".join(p.source() for p in (reader,)))  # compiles


def test_a_large_tree_takes_the_query_and_later_trees_keep_it(monkeypatch: pytest.MonkeyPatch) -> None:
    q = NodeQuery(LANGUAGE, [Pattern("command", field="name", child="command_name", child_capture="c")])
    monkeypatch.setattr(node_query, "WALK_LIMIT", 50)
    small = parse_text("s.sh", "echo a\n")
    big = parse_text("b.sh", "".join(f"echo {i}\n" for i in range(40)))
    assert len(q.captures(small.root)["c"]) == 1 and q._query is None, "a small tree is walked"
    assert len(q.captures(big.root)["c"]) == 40 and q._query is not None, "a large one makes the query"
    assert len(q.captures(small.root)["c"]) == 1
