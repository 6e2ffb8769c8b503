"""Reading a file into a tree-sitter-bash tree, with the normalisations real scripts need.

- A file that ends in a continuation backslash parses as bash accepts it (tree-sitter-bash
  otherwise emits an ERROR): we append a blank line.
- Unfilled template placeholders (`CHECKPOINT_PATH=<Specify path>`) are redirections to bash;
  we rewrite each to a single-quoted word of the same length, so that offsets stay exact and
  the evaluator can mark the value as a placeholder instead of a parse failure.
- Binary and non-UTF-8 input is refused with a message, never a traceback.
"""

from __future__ import annotations

import codecs
import importlib.machinery
import importlib.util
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import tree_sitter

from megalint import lazy_re
from megalint.errors import InputError
from megalint.shell.node_query import NodeQuery, Pattern
from megalint.source import SourceFile, Span, decode

if TYPE_CHECKING:
    from megalint.shell.interp.pieces import Expansion, Piece
    from megalint.shell.values import Word

# What the evaluator remembers of one computation (see Evaluator.memo): the objects it read
# (variable name -> value), the count of sourced names then, and what it gave.
MemoEntry = tuple[tuple[tuple[str, object], ...], int, object]


def _bash_grammar() -> object:
    """tree-sitter-bash's grammar, from its compiled module. The package's own `__init__` also
    readies reading its query files, which megalint never reads, by importing
    `importlib.resources` (and with it `tempfile`, `random`, `zipfile`…: about 4 ms, a twentieth
    of a first check): where the module is a file beside it, it is loaded alone."""
    spec = importlib.util.find_spec("tree_sitter_bash")
    folders = spec.submodule_search_locations if spec is not None else None
    for folder in folders or ():
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(folder, "_binding" + suffix)
            if os.path.isfile(path):
                loader = importlib.machinery.ExtensionFileLoader("tree_sitter_bash._binding", path)
                binding = importlib.util.spec_from_loader(loader.name, loader)
                if binding is not None:
                    module = importlib.util.module_from_spec(binding)
                    loader.exec_module(module)
                    return module.language()
    import tree_sitter_bash

    return tree_sitter_bash.language()


LANGUAGE = tree_sitter.Language(_bash_grammar())

# `<Specify path>` right after `=`, `/`, `:` or a blank, starting with a letter, on one line.
# `<<EOF`, `< file`, `<(cmd)` and `<&3` do not match.
# Led by its literal `<` (a look-behind first would be tried at every position); the
# character before it is checked by hand.
_PLACEHOLDER_B = lazy_re.compile(rb"<[A-Za-z_][^<>\n]*>")
_PLACEHOLDER_AFTER = frozenset(bytes([c]) for c in b"=/: \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f")
_NOT_PLACEHOLDER_CONTEXT = {
    "string",
    "raw_string",
    "heredoc_body",
    "heredoc_content",
    "comment",
    "ansi_c_string",
    "string_content",
}


@dataclass
class ParsedScript:
    """A script's text and its syntax tree."""

    source: SourceFile
    tree: tree_sitter.Tree
    placeholders: list[Span] = field(default_factory=list)
    ends_with_continuation: Span | None = None
    parse_text: bytes = b""  # what tree-sitter parsed (offsets equal the file's)
    # Expansions of literal words do not depend on the state: the evaluator keeps them here,
    # the words by (start byte, end byte), the literal pieces by (start byte, end byte, escapes,
    # expansion), and what its memo remembers by the memo's key.
    word_cache: dict[tuple[int, int], list[Word]] = field(default_factory=dict)
    literal_cache: dict[tuple[int, int, str | None, Expansion | None], list[Piece]] = field(default_factory=dict)
    memo_cache: dict[tuple[object, ...], list[MemoEntry]] = field(default_factory=dict)
    # Spans by (start byte, end byte): each path that reads a node gets the same Span, whose
    # hash is then worked out once (paths are compared, and values cached, by hashing spans).
    spans: dict[tuple[int, int], Span] = field(default_factory=dict)
    _syntax: dict[str, list[tree_sitter.Node]] | None = None
    _assigned: dict[int, bytes] | None = None
    _top: list[tree_sitter.Node] | None = None
    _assigned_nodes: dict[int, tuple[tree_sitter.Node, bool]] | None = None

    @property
    def root(self) -> tree_sitter.Node:
        return self.tree.root_node

    def span(self, node: tree_sitter.Node) -> Span:
        return self.span_of(node.start_byte, node.end_byte)

    def span_of(self, start_byte: int, end_byte: int) -> Span:
        """The span of bytes [start_byte, end_byte) of the parsed text, made once."""
        key = (start_byte, end_byte)
        span = self.spans.get(key)
        if span is None:
            span = self.spans[key] = self.source.span_bytes(start_byte, end_byte)
        return span

    def text(self, node: tree_sitter.Node) -> str:
        return self.parse_text[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def syntax(self, name: str) -> list[tree_sitter.Node]:
        """The nodes of one kind in the whole file (see SYNTAX), in file order. One query
        finds every kind at once: each walk of the tree costs about as much as the next."""
        if self._syntax is None:
            self._syntax = SYNTAX.captures(self.root)
        return self._syntax.get(name, [])

    def top_level(self) -> list[tree_sitter.Node]:
        """The named children of the root (statements and comments), read once."""
        if self._top is None:
            self._top = self.root.named_children
        return self._top

    def assigned_names(self) -> dict[int, bytes]:
        """start byte -> the name (bytes, without a subscript) of every variable an assignment
        or a `for` loop sets."""
        if self._assigned is None:
            data = self.parse_text
            self._assigned = {
                n.start_byte: data[n.start_byte : n.end_byte].split(b"[", 1)[0]
                for n in self.syntax("assigned") + self.syntax("for_variable")
            }
        return self._assigned

    def assigned_nodes(self) -> dict[int, tuple[tree_sitter.Node, bool]]:
        """start byte -> (the name node of an assignment or `for` loop, whether it is a loop's):
        its parent is the assignment or the loop."""
        if self._assigned_nodes is None:
            nodes = {n.start_byte: (n, False) for n in self.syntax("assigned")}
            nodes.update((n.start_byte, (n, True)) for n in self.syntax("for_variable"))
            self._assigned_nodes = nodes
        return self._assigned_nodes


# What the passes over the whole file look for (relevance.py, hazards.py, analyze.py, the
# evaluator's first-assignment table).
SYNTAX = NodeQuery(
    LANGUAGE,
    [
        Pattern("comment", "comment"),
        Pattern("case_statement", "case"),
        Pattern("command", field="name", child="command_name", child_capture="command_name"),
        Pattern("declaration_command", "unsafe"),
        Pattern("unset_command", "unsafe"),
        Pattern("function_definition", "unsafe", field="name", child="word", child_capture="function"),
        Pattern("c_style_for_statement", "unsafe"),
        Pattern("ERROR", "unsafe"),
        Pattern("compound_statement", "compound"),
        Pattern("arithmetic_expansion", "arith"),
        Pattern("variable_assignment", field="name", child_capture="assigned"),
        Pattern("for_statement", field="variable", child_capture="for_variable"),
    ],
)


# The one tree-sitter-bash parser of the process: parse_text below, and the readers of a script
# as written (suppression comments, whether a fixed script still parses) through parse_bash.
_PARSER = tree_sitter.Parser(LANGUAGE)


def parse_bash(data: bytes) -> tree_sitter.Tree:
    """tree-sitter-bash's tree of `data` as it stands, without the normalisations of parse_text."""
    return _PARSER.parse(data)


def parse_text(path: str, text: str, data: bytes | None = None) -> ParsedScript:
    """Parse `text`; `data`, when given, is its UTF-8 (the file's bytes, read already)."""
    try:
        source = SourceFile(path, text, data)
    except UnicodeEncodeError as exc:
        # Only a str built in Python can hold lone surrogates; a file read by decode() cannot.
        line = text[: exc.start].count("\n") + 1
        raise InputError(
            f"{path}:{line}: the text holds a character that is not valid Unicode (U+{ord(text[exc.start]):04X})"
        ) from None
    data = source.data
    ends_cont = _trailing_continuation(source)
    if ends_cont is not None:
        data = data + b"\n\n"
    tree, placeholders, data = _parse_placeholders(source, data)
    return ParsedScript(source, tree, placeholders, ends_cont, data)


def parse_padded(source: SourceFile, data: bytes) -> ParsedScript:
    """Parse `data`, whose byte offsets are those of `source` (a command string re-read in
    place, everything around it blanked): nodes keep their real lines and columns."""
    tree, placeholders, data = _parse_placeholders(source, data)
    return ParsedScript(source, tree, placeholders, None, data)


def _parse_placeholders(source: SourceFile, data: bytes) -> tuple[tree_sitter.Tree, list[Span], bytes]:
    """Parse; where unfilled placeholders stand, quote each (same length) and parse again."""
    tree = _PARSER.parse(data)
    placeholders: list[Span] = []
    found = _find_placeholders(tree, data) if b"<" in data else None
    if found:
        buf = bytearray(data)
        for start, end in found:
            inner = bytes(buf[start + 1 : end - 1]).replace(b"'", b"_")
            buf[start:end] = b"'" + inner + b"'"
            placeholders.append(source.span_bytes(start, end))
        data = bytes(buf)
        tree = _PARSER.parse(data)
    return tree, placeholders, data


def parse_file(path: str, data: bytes) -> ParsedScript:
    text = decode(path, data)  # without a leading BOM; so are the bytes kept with it
    return parse_text(path, text, data[len(codecs.BOM_UTF8) :] if data.startswith(codecs.BOM_UTF8) else data)


def _trailing_continuation(source: SourceFile) -> Span | None:
    stripped = source.text.rstrip("\n")
    if stripped.endswith("\\") and not stripped.endswith("\\\\"):
        pos = len(stripped) - 1
        return source.span(pos, pos + 1)
    return None


def _find_placeholders(tree: tree_sitter.Tree, data: bytes) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    for m in _PLACEHOLDER_B.finditer(data):
        start, end = m.span()
        if start == 0 or data[start - 1 : start] not in _PLACEHOLDER_AFTER:
            continue
        node = tree.root_node.descendant_for_byte_range(start, start + 1)
        inside = False
        while node is not None:
            if node.type in _NOT_PLACEHOLDER_CONTEXT:
                inside = True
                break
            node = node.parent
        if not inside:
            found.append((start, end))
    return found
