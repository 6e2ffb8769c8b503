"""Nodes of a tree by capture name, for patterns as simple as "a node of this type" or "the
node in this field of it": a tree-sitter query on a large tree, a walk in Python on a small one.

Making a tree-sitter query costs 2-6 ms whatever it asks (tree-sitter analyses the grammar's
tables), which is more than walking a launch script's few hundred nodes in Python; the query
walks in C, which wins on a large tree. So a small tree is walked until some tree needed the
query, and then the query, made once per process, serves every tree. Both give the same
captures, in file order (a node before the nodes inside it); tests/shell/test_node_query.py
holds them to it.
"""

from __future__ import annotations

from typing import NamedTuple

import tree_sitter

# Past this many nodes, making the query once costs less than walking the tree in Python.
WALK_LIMIT = 6_000


class Pattern(NamedTuple):
    """`(type field: (child) @child_capture) @capture`, the field part optional."""

    type: str
    capture: str | None = None
    field: str | None = None
    child: str | None = None  # the field's node type; None: any named node
    child_capture: str | None = None
    any_of: tuple[str, ...] = ()  # the field's node's text is one of these (`#any-of?`)

    def source(self) -> str:
        """The pattern in tree-sitter's query language."""
        inner = ""
        if self.field is not None:
            child = f"({self.child or '_'})" + (f" @{self.child_capture}" if self.child_capture else "")
            if self.any_of:
                words = " ".join(f'"{w}"' for w in self.any_of)
                child += f" (#any-of? @{self.child_capture} {words})"
            inner = f" {self.field}: {child}"
        return f"({self.type}{inner})" + (f" @{self.capture}" if self.capture else "")


def _file_order(node: tree_sitter.Node) -> tuple[int, int]:
    return node.start_byte, -node.end_byte


class NodeQuery:
    """A set of patterns, found together in one pass over a tree."""

    def __init__(self, language: tree_sitter.Language, patterns: list[Pattern]):
        self.language = language
        self.patterns = patterns
        self.source = "\n".join(p.source() for p in patterns)
        self._by_type: dict[str, list[Pattern]] = {}
        for p in patterns:
            self._by_type.setdefault(p.type, []).append(p)
        self._query: tree_sitter.Query | None = None

    def captures(self, node: tree_sitter.Node) -> dict[str, list[tree_sitter.Node]]:
        """The nodes under `node` (itself included) each pattern captures, by capture name, in
        file order."""
        if self._query is None and node.descendant_count <= WALK_LIMIT:
            return self.walk(node)
        return self.query(node)

    def query(self, node: tree_sitter.Node) -> dict[str, list[tree_sitter.Node]]:
        if self._query is None:
            self._query = tree_sitter.Query(self.language, self.source)
        found = tree_sitter.QueryCursor(self._query).captures(node)
        # A query gives the captures of a match as the match ends, which is not always file
        # order (a long command may end after the next one starts its match): put them in it.
        for nodes in found.values():
            nodes.sort(key=_file_order)
        return found

    def walk(self, node: tree_sitter.Node) -> dict[str, list[tree_sitter.Node]]:
        out: dict[str, list[tree_sitter.Node]] = {}
        by_type = self._by_type
        cursor = node.walk()
        while True:
            here = cursor.node
            assert here is not None  # a cursor always stands on a node
            patterns = by_type.get(here.type)
            if patterns is not None and here.is_named:
                self._match(here, patterns, out)
            if cursor.goto_first_child():
                continue
            while not cursor.goto_next_sibling():
                if not cursor.goto_parent():
                    return out

    @staticmethod
    def _match(node: tree_sitter.Node, patterns: list[Pattern], out: dict[str, list[tree_sitter.Node]]) -> None:
        for p in patterns:
            child = None
            if p.field is not None:
                child = node.child_by_field_name(p.field)
                if child is None or not child.is_named or (p.child is not None and child.type != p.child):
                    continue
                if p.any_of and (child.text or b"").decode("utf-8", "replace") not in p.any_of:
                    continue
            # A query lists a match's captures in file order: the node before a child of it.
            if p.capture is not None:
                out.setdefault(p.capture, []).append(node)
            if child is not None and p.child_capture is not None:
                out.setdefault(p.child_capture, []).append(child)
