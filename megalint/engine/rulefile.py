"""One rule file read: YAML with positions, checked against schema.json.

Every problem is a `RuleError` at `file:line:col` (1-based), pointing at the offending key or
value; `RuleFile` answers the positions of keys, values and the characters inside a scalar.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from difflib import get_close_matches
from functools import lru_cache
from typing import Any

import jsonschema
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError
from ruamel.yaml.reader import ReaderError
from ruamel.yaml.scalarstring import (
    DoubleQuotedScalarString,
    FoldedScalarString,
    LiteralScalarString,
    SingleQuotedScalarString,
)

from megalint import packaged
from megalint.engine import yamlpos
from megalint.errors import RuleError


@lru_cache(maxsize=1)
def rule_schema() -> dict[str, Any]:
    text = packaged.files("megalint.engine").joinpath("schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@lru_cache(maxsize=1)
def _validator() -> jsonschema.protocols.Validator:
    schema = rule_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


# ---------------------------------------------------------------------------------------------
# Positions


class RuleFile:
    """One rule file's text and tree, answering 1-based positions of keys and values."""

    def __init__(self, path: str, text: str, root: Any):
        self.path = path
        self.lines = text.split("\n")
        self.root = root
        self.errors: list[RuleError] = []

    def rule_mappings(self) -> list[CommentedMap]:
        """The rules of the file: the one rule, or the items of `rules:`."""
        return list(self.root["rules"]) if "rules" in self.root else [self.root]

    def error(self, pos: tuple[int, int], message: str) -> None:
        self.errors.append(RuleError(self.path, pos[0], pos[1], message))

    @staticmethod
    def node_pos(node: Any) -> tuple[int, int]:
        return node.lc.line + 1, node.lc.col + 1

    def key_pos(self, mapping: CommentedMap, key: Any) -> tuple[int, int]:
        line, col = mapping.lc.key(key)
        return line + 1, col + 1

    def value_pos(self, mapping: CommentedMap, key: Any, offset: int | None = None) -> tuple[int, int]:
        value = mapping[key]
        if isinstance(value, (CommentedMap, CommentedSeq)):
            return self.node_pos(value)
        if value is None:
            return self.key_pos(mapping, key)
        line, col = mapping.lc.value(key)
        return self._inside(line, col, value, offset)

    def item_pos(self, seq: CommentedSeq, index: int, offset: int | None = None) -> tuple[int, int]:
        value = seq[index]
        if isinstance(value, (CommentedMap, CommentedSeq)):
            return self.node_pos(value)
        line, col = seq.lc.item(index)
        return self._inside(line, col, value, offset)

    def _inside(self, line: int, col: int, value: Any, offset: int | None) -> tuple[int, int]:
        """The position of character `offset` of a string scalar starting at (line, col), 0-based.

        Exact for plain and quoted scalars on one line without escapes, and for block scalars
        (`|`, `>`) whose lines share one indentation; otherwise the start of the scalar.
        """
        start = (line + 1, col + 1)
        if offset is None or not isinstance(value, str):
            return start
        if isinstance(value, (LiteralScalarString, FoldedScalarString)):
            # The content starts on the line after the indicator; folding turns each line
            # break into one space, so offsets count the same in both styles.
            indent = None
            remaining = offset
            for k, text in enumerate(self.lines[line + 1 :]):
                if not text.strip():
                    return start
                ind = len(text) - len(text.lstrip(" "))
                if indent is None:
                    indent = ind
                elif ind != indent:
                    return start
                content = text[indent:]
                if remaining <= len(content):
                    return line + 2 + k, indent + remaining + 1
                remaining -= len(content) + 1
            return start
        if "\n" in value:
            return start
        if isinstance(value, DoubleQuotedScalarString):
            if '"' in value or "\\" in value:
                return start
            return line + 1, col + 2 + offset
        if isinstance(value, SingleQuotedScalarString):
            if "'" in value:
                return start
            return line + 1, col + 2 + offset
        return line + 1, col + 1 + offset


# ---------------------------------------------------------------------------------------------
# YAML


def _yaml_error(path: str, e: MarkedYAMLError) -> RuleError:
    mark = e.problem_mark or e.context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    problem = (e.problem or "").strip()
    m = re.match(r'found duplicate key "(.*?)"', problem)
    if m:
        return RuleError(path, line, col, f"duplicate key '{m.group(1)}'")
    message = f"invalid YAML: {problem}" if problem else "invalid YAML"
    if e.context and e.context_mark is not None and e.problem_mark is not None:
        message += f" ({e.context} started at {e.context_mark.line + 1}:{e.context_mark.column + 1})"
    return RuleError(path, line, col, message)


def _code_point(character: object) -> str:
    return f"U+{character if isinstance(character, int) else ord(str(character)[:1] or ' '):04X}"


def _load_yaml(path: str, text: str) -> Any:
    return yamlpos.load(text)


# A rule file is a few hundred values; YAML aliases can make a small file stand for billions
# (each `*a` a reference to a list of ten `*b` ...), which validation would walk one by one.
MAX_YAML_VALUES = 100_000
MAX_YAML_DEPTH = 64


def _too_large(root: Any) -> tuple[Any, str] | None:
    """The value where the document, aliases expanded, grows past MAX_YAML_VALUES or nests past
    MAX_YAML_DEPTH (with why); None when it stays within both. Each shared value is counted once
    per place it is used, without expanding it."""
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        if not isinstance(node, (CommentedMap, CommentedSeq)) or (id(node) in sizes and not done):
            continue
        children = list(node.values()) if isinstance(node, CommentedMap) else list(node)
        if not done:
            if depth > MAX_YAML_DEPTH:
                return node, f"values nested more than {MAX_YAML_DEPTH} deep"
            stack.append((node, depth, True))
            stack.extend((child, depth + 1, False) for child in children)
            continue
        size = 1 + sum(sizes.get(id(c), 1) for c in children)
        if size > MAX_YAML_VALUES:
            return node, f"more than {MAX_YAML_VALUES:,} values once its aliases are expanded"
        sizes[id(node)] = size
    return None


# ---------------------------------------------------------------------------------------------
# Schema errors

_TYPE_NAMES = {
    "string": "a string",
    "array": "a list",
    "object": "a mapping",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "null": "empty",
}


def _kind(value: Any) -> str:
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _schema_error(doc: RuleFile, err: jsonschema.ValidationError) -> None:
    path = list(err.absolute_path)
    parent: Any = None
    node: Any = doc.root
    for p in path:
        parent, node = node, node[p]
    last = path[-1] if path else None

    def here(offset: int | None = None) -> tuple[int, int]:
        if parent is None:
            return (1, 1) if not hasattr(node, "lc") else doc.node_pos(node)
        if isinstance(parent, CommentedSeq) and isinstance(last, int):
            return doc.item_pos(parent, last, offset)
        return doc.value_pos(parent, last, offset)

    what = f"'{last}'" if isinstance(last, str) else ("this item" if last is not None else "the file")
    v = err.validator
    schema: Mapping[str, Any] = err.schema if isinstance(err.schema, Mapping) else {}
    value: Any = err.validator_value
    if v == "additionalProperties" and isinstance(node, CommentedMap):
        known = list(schema.get("properties", {}))
        for key in node:
            if key not in known:
                close = get_close_matches(str(key), known, n=1)
                hint = f"; did you mean '{close[0]}'?" if close else f" (known: {', '.join(known)})"
                doc.error(doc.key_pos(node, key), f"unknown key '{key}'{hint}")
        return
    if v == "required" and isinstance(node, CommentedMap):
        missing = [k for k in value if k not in node]
        for key in missing:
            doc.error(doc.node_pos(node), f"missing required key '{key}'")
        return
    if v == "enum":
        allowed = ", ".join(str(x) for x in value)
        doc.error(
            here(),
            f"{what} must be one of {allowed}, not {node!r}"
            if not isinstance(node, str)
            else f"{what} must be one of {allowed}, not '{node}'",
        )
        return
    if v == "type":
        want_text = " or ".join(_TYPE_NAMES.get(t, t) for t in ([value] if isinstance(value, str) else value))
        if parent is None:
            doc.error((1, 1), f"a rule file holds a mapping (one rule, or rules: [...]), not {_kind(node)}")
        else:
            doc.error(here(), f"{what} must be {want_text}, not {_kind(node)}")
        return
    if v == "pattern":
        hint = schema.get("x-message") or f"must match {value}"
        doc.error(here(), f"{hint}, not '{node}'")
        return
    if v == "oneOf":
        hint = schema.get("x-message") or err.message
        doc.error(here(), hint)
        return
    if v in ("minItems", "minLength"):
        doc.error(here(), f"{what} must not be empty")
        return
    if v == "minimum":
        doc.error(here(), f"{what} must be at least {value}, not {node}")
        return
    if v == "uniqueItems":
        doc.error(here(), f"{what} lists an item twice")
        return
    doc.error(here(), err.message)


# ---------------------------------------------------------------------------------------------
# A file


def read_rule_file(text: str, path: str) -> tuple[RuleFile | None, list[RuleError]]:
    """The file read and checked against the schema, or None and the errors that stop it."""
    try:
        root = _load_yaml(path, text)
    except MarkedYAMLError as e:
        return None, [_yaml_error(path, e)]
    except ReaderError as e:  # a character YAML does not allow (a NUL, a control character)
        at = e.position if isinstance(e.position, int) else 0
        line = text.count("\n", 0, at) + 1
        col = at - (text.rfind("\n", 0, at) + 1) + 1
        return None, [RuleError(path, line, col, f"invalid YAML: character {_code_point(e.character)} is not allowed")]
    except RecursionError:
        return None, [RuleError(path, 1, 1, f"invalid rule file: values nested more than {MAX_YAML_DEPTH} deep")]
    if root is None:
        return None, [RuleError(path, 1, 1, "empty rule file")]
    big = _too_large(root)
    if big is not None:
        line, col = RuleFile.node_pos(big[0])
        return None, [RuleError(path, line, col, f"invalid rule file: {big[1]}")]
    doc = RuleFile(path, text, root)
    if not isinstance(root, CommentedMap):
        doc.error((1, 1), f"a rule file holds a mapping (one rule, or rules: [...]), not {_kind(root)}")
        return None, doc.errors
    errors = sorted(_validator().iter_errors(root), key=lambda e: list(map(str, e.absolute_path)))
    for err in errors:
        _schema_error(doc, err)
    if doc.errors:
        return None, dedupe(doc.errors)
    return doc, []


def dedupe(errors: list[RuleError]) -> list[RuleError]:
    seen, out = set(), []
    for e in errors:
        if e not in seen:
            seen.add(e)
            out.append(e)
    return out
