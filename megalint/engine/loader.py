"""Load rule files: YAML with positions, validated by schema.json, then compiled.

Every problem is reported as `file:line:col: message` (1-based), pointing at the offending key or
value, and all problems of all files are reported together in one `RuleFileError`.
"""

from __future__ import annotations

import importlib.resources
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from difflib import get_close_matches
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError
from ruamel.yaml.scalarstring import (
    DoubleQuotedScalarString,
    FoldedScalarString,
    LiteralScalarString,
    SingleQuotedScalarString,
)

from megalint.diagnostics import Applicability, Severity
from megalint.engine import yamlpos
from megalint.engine.context import ROOTS
from megalint.engine.expressions import ExprError, compile_expr
from megalint.engine.forms import EDITS, PLACES, parse_call
from megalint.engine.rule import (
    Docs,
    Example,
    Expected,
    FixSpec,
    ForEach,
    LabelSpec,
    Rule,
    RuleSet,
    rule_url,
)
from megalint.engine.templates import parse_template
from megalint.engine.versions import VersionError, VersionRange, parse_version

RULE_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class RuleError:
    path: str
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.message}"


class RuleFileError(Exception):
    """One or more rule files are invalid; `str()` is one `file:line:col: message` per line."""

    def __init__(self, errors: list[RuleError]):
        self.errors = sorted(errors, key=lambda e: (e.path, e.line, e.column))
        super().__init__("\n".join(str(e) for e in self.errors))


@lru_cache(maxsize=1)
def rule_schema() -> dict:
    text = importlib.resources.files("megalint.engine").joinpath("schema.json").read_text("utf-8")
    return json.loads(text)


@lru_cache(maxsize=1)
def _validator() -> jsonschema.protocols.Validator:
    schema = rule_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


# ---------------------------------------------------------------------------------------------
# Positions


class _Doc:
    """One rule file's text and tree, answering 1-based positions of keys and values."""

    def __init__(self, path: str, text: str, root: Any):
        self.path = path
        self.lines = text.split("\n")
        self.root = root
        self.errors: list[RuleError] = []

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


def _load_yaml(path: str, text: str) -> Any:
    return yamlpos.load(text)


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


def _schema_error(doc: _Doc, err: jsonschema.ValidationError) -> None:
    path = list(err.absolute_path)
    parent: Any = None
    node: Any = doc.root
    for p in path:
        parent, node = node, node[p]
    last = path[-1] if path else None

    def here(offset: int | None = None) -> tuple[int, int]:
        if parent is None:
            return (1, 1) if not hasattr(node, "lc") else doc.node_pos(node)
        if isinstance(parent, CommentedSeq):
            return doc.item_pos(parent, last, offset)
        return doc.value_pos(parent, last, offset)

    what = f"'{last}'" if isinstance(last, str) else ("this item" if last is not None else "the file")
    v = err.validator
    if v == "additionalProperties" and isinstance(node, CommentedMap):
        known = list(err.schema.get("properties", {}))
        for key in node:
            if key not in known:
                close = get_close_matches(str(key), known, n=1)
                hint = f"; did you mean '{close[0]}'?" if close else f" (known: {', '.join(known)})"
                doc.error(doc.key_pos(node, key), f"unknown key '{key}'{hint}")
        return
    if v == "required" and isinstance(node, CommentedMap):
        missing = [k for k in err.validator_value if k not in node]
        for key in missing:
            doc.error(doc.node_pos(node), f"missing required key '{key}'")
        return
    if v == "enum":
        allowed = ", ".join(str(x) for x in err.validator_value)
        doc.error(
            here(),
            f"{what} must be one of {allowed}, not {node!r}"
            if not isinstance(node, str)
            else f"{what} must be one of {allowed}, not '{node}'",
        )
        return
    if v == "type":
        want = err.validator_value
        want_text = " or ".join(_TYPE_NAMES.get(t, t) for t in ([want] if isinstance(want, str) else want))
        if parent is None:
            doc.error((1, 1), f"a rule file holds a mapping (one rule, or rules: [...]), not {_kind(node)}")
        else:
            doc.error(here(), f"{what} must be {want_text}, not {_kind(node)}")
        return
    if v == "pattern":
        hint = err.schema.get("x-message") or f"must match {err.validator_value}"
        doc.error(here(), f"{hint}, not '{node}'")
        return
    if v == "oneOf":
        hint = err.schema.get("x-message") or err.message
        doc.error(here(), hint)
        return
    if v in ("minItems", "minLength"):
        doc.error(here(), f"{what} must not be empty")
        return
    if v == "minimum":
        doc.error(here(), f"{what} must be at least {err.validator_value}, not {node}")
        return
    if v == "uniqueItems":
        doc.error(here(), f"{what} lists an item twice")
        return
    doc.error(here(), err.message)


# ---------------------------------------------------------------------------------------------
# Rules


def _check_path(path: str) -> str | None:
    parts = path.split(".")
    if parts[0] not in ROOTS:
        return f"unknown context root '{parts[0]}' (known: {', '.join(ROOTS)})"
    fields = ROOTS[parts[0]]
    if fields is not None and len(parts) > 1 and parts[1] not in fields:
        return f"unknown field '{parts[0]}.{parts[1]}' (known: {', '.join(sorted(fields))})"
    return None


class _RuleBuilder:
    def __init__(self, doc: _Doc, m: CommentedMap):
        self.doc = doc
        self.m = m
        self.ok = True

    def fail(self, pos: tuple[int, int], message: str) -> None:
        self.doc.error(pos, message)
        self.ok = False

    def expr(self, mapping: CommentedMap, key: str, names=(), label: str | None = None):
        value = mapping[key]
        source = ("true" if value else "false") if isinstance(value, bool) else str(value)
        try:
            return compile_expr(source, names)
        except ExprError as e:
            self.fail(self.doc.value_pos(mapping, key, e.offset), f"{label or key}: {e.message}")
            return None

    def template(self, mapping: CommentedMap, key: str, names=(), label: str | None = None):
        if key not in mapping:
            return None
        try:
            return parse_template(str(mapping[key]), names)
        except ExprError as e:
            self.fail(self.doc.value_pos(mapping, key, e.offset), f"{label or key}: {e.message}")
            return None

    def call(self, container, index, vocabulary, what, label, names=()):
        text = str(container[index])

        def pos(offset):
            return (
                self.doc.item_pos(container, index, offset)
                if isinstance(container, CommentedSeq)
                else self.doc.value_pos(container, index, offset)
            )

        try:
            call = parse_call(text, vocabulary, what, names)
        except ExprError as e:
            self.fail(pos(e.offset), f"{label}: {e.message}")
            return None
        if call.name in ("item", "replace_item") and not names:
            self.fail(
                pos(None), f"{label}: {call.name} works on the current element of for_each, and this rule has none"
            )
            return None
        return call

    def build(self) -> Rule | None:
        m, doc = self.m, self.doc
        try:
            megatron = VersionRange.parse(str(m.get("megatron", "*")))
        except VersionError as e:
            self.fail(doc.value_pos(m, "megatron"), f"megatron: {e}")
            megatron = None
        requires = tuple(str(x) for x in m.get("requires", []))
        for i, p in enumerate(requires):
            problem = _check_path(p)
            if problem:
                self.fail(doc.item_pos(m["requires"], i), f"requires: {problem}")

        for_each = None
        names: tuple[str, ...] = ()
        if "for_each" in m:
            fe = m["for_each"]
            var = str(fe["var"])
            if var in ROOTS:
                self.fail(doc.value_pos(fe, "var"), f"for_each: var '{var}' hides the context root of that name")
            names = (var,)
            src = self.expr(fe, "in", label="for_each.in")
            if src is not None:
                for_each = ForEach(var, src)
        when = self.expr(m, "when", names)
        message = self.template(m, "message", names)
        help_ = self.template(m, "help", names)

        at_value = m["at"]
        at_calls = []
        places = PLACES
        if isinstance(at_value, CommentedSeq):
            for i in range(len(at_value)):
                at_calls.append(self.call(at_value, i, places, "place", "at", names))
        else:
            at_calls.append(self.call(m, "at", places, "place", "at", names))

        labels = []
        for lab in m.get("labels", []):
            call = self.call(lab, "at", places, "place", "labels.at", names)
            text = self.template(lab, "text", names, "labels.text")
            if call is not None and text is not None:
                labels.append(LabelSpec(call, text))

        fix = None
        if "fix" in m:
            f = m["fix"]
            fmsg = self.template(f, "message", names, "fix.message")
            edits = [self.call(f["edits"], i, EDITS, "edit", "fix.edits", names) for i in range(len(f["edits"]))]
            if fmsg is not None and all(e is not None for e in edits):
                fix = FixSpec(fmsg, Applicability(str(f["applicability"])), tuple(edits))

        d = m["docs"]
        if "fix" in m and "fix_safety" not in d:
            self.fail(doc.key_pos(m, "docs"), "docs: fix_safety is required when the rule has a fix")
        docs = Docs(
            what=str(d["what"]),
            why=str(d["why"]),
            example=_opt(d, "example"),
            use_instead=_opt(d, "use_instead"),
            fix_safety=_opt(d, "fix_safety"),
            sources=tuple(str(s) for s in d.get("sources", [])),
            references=tuple(str(s) for s in d.get("references", [])),
        )
        examples = self.examples(fix is not None or "fix" in m)

        if not self.ok:
            return None
        name = str(m["name"])
        category = str(m["category"])
        return Rule(
            code=str(m["code"]),
            name=name,
            severity=Severity(str(m["severity"])),
            url=rule_url(name),
            docs=docs,
            tags=(category,),
            category=category,
            status=str(m.get("status", "stable")),
            megatron=megatron,
            requires=requires,
            when=when,
            for_each=for_each,
            message=message,
            at=tuple(at_calls),
            labels=tuple(labels),
            help=help_,
            fix=fix,
            examples=tuple(examples),
            origin=f"{doc.path}:{doc.node_pos(m)[0]}:{doc.node_pos(m)[1]}",
        )

    def examples(self, has_fix: bool) -> list[Example]:
        doc, m = self.doc, self.m
        out = []
        seq = m["examples"]
        any_bad = False
        for i, ex in enumerate(seq):
            pos = doc.node_pos(ex)
            kinds = [k for k in ("bad", "good") if k in ex]
            if len(kinds) != 1:
                self.fail(
                    pos,
                    "examples: an example has either bad or good, not both"
                    if kinds
                    else "examples: an example needs bad (a script the rule reports) or good (one it accepts)",
                )
                continue
            kind = kinds[0]
            script = str(ex[kind])
            expect = []
            for e in ex.get("expect", []):
                expect.append(
                    Expected(int(e["line"]), int(e["column"]), _int(e.get("end_line")), _int(e.get("end_column")))
                )
                problem = _outside(script, expect[-1])
                if problem:
                    self.fail(doc.node_pos(e), f"examples: expect {expect[-1]} {problem}")
            if kind == "bad":
                any_bad = True
                if not expect:
                    self.fail(pos, "examples: a bad example needs expect: the positions the rule reports")
            else:
                for key in ("expect", "fixed"):
                    if key in ex:
                        self.fail(doc.key_pos(ex, key), f"examples: a good example cannot have {key}")
            if "fixed" in ex and not has_fix:
                self.fail(doc.key_pos(ex, "fixed"), "examples: fixed needs the rule to have a fix")
            if "megatron" in ex:
                try:
                    parse_version(str(ex["megatron"]))
                except VersionError as err:
                    self.fail(doc.value_pos(ex, "megatron"), f"examples: {err}")
            out.append(
                Example(
                    kind=kind,
                    script=script,
                    expect=tuple(expect),
                    index=i,
                    origin=f"{doc.path}:{pos[0]}:{pos[1]}",
                    fixed=_opt(ex, "fixed"),
                    megatron=_opt(ex, "megatron"),
                    gpu=_opt(ex, "gpu"),
                    assume={str(k): v for k, v in ex.get("assume", {}).items()},
                    note=_opt(ex, "note"),
                )
            )
        if not any_bad and self.ok:
            self.fail(doc.key_pos(m, "examples"), "examples: a rule needs at least one bad example")
        return out


def _opt(m: CommentedMap, key: str) -> str | None:
    return None if m.get(key) is None else str(m[key])


def _int(v: Any) -> int | None:
    return None if v is None else int(v)


def _outside(script: str, e: Expected) -> str | None:
    lines = script.split("\n")
    if script.endswith("\n"):
        lines = lines[:-1]

    def check(line: int, col: int, end: bool) -> str | None:
        if line > len(lines):
            return f"is outside the example script ({len(lines)} line{'s' if len(lines) != 1 else ''})"
        if col > len(lines[line - 1]) + 1:
            return f"is outside line {line} ({len(lines[line - 1])} characters)"
        return None

    problem = check(e.line, e.column, False)
    if problem is None and e.end_line is not None:
        problem = check(e.end_line, e.end_column or 1, True)
        if problem is None and (e.end_line, e.end_column or 1) < (e.line, e.column):
            problem = "ends before it starts"
    return problem


def parse_rule_text(text: str, path: str) -> tuple[list[Rule], list[RuleError], list[tuple[Rule, tuple, tuple]]]:
    """The rules of one file, its errors, and (rule, code pos, name pos) for duplicate checks."""
    try:
        root = _load_yaml(path, text)
    except MarkedYAMLError as e:
        return [], [_yaml_error(path, e)], []
    if root is None:
        return [], [RuleError(path, 1, 1, "empty rule file")], []
    doc = _Doc(path, text, root)
    if not isinstance(root, CommentedMap):
        doc.error((1, 1), f"a rule file holds a mapping (one rule, or rules: [...]), not {_kind(root)}")
        return [], doc.errors, []
    errors = sorted(_validator().iter_errors(root), key=lambda e: list(map(str, e.absolute_path)))
    for err in errors:
        _schema_error(doc, err)
    if doc.errors:
        return [], _dedupe(doc.errors), []
    mappings = list(root["rules"]) if "rules" in root else [root]
    rules, keys = [], []
    for m in mappings:
        rule = _RuleBuilder(doc, m).build()
        if rule is not None:
            rules.append(rule)
            keys.append((rule, doc.value_pos(m, "code"), doc.value_pos(m, "name")))
    return rules, _dedupe(doc.errors), keys


def _dedupe(errors: list[RuleError]) -> list[RuleError]:
    seen, out = set(), []
    for e in errors:
        if e not in seen:
            seen.add(e)
            out.append(e)
    return out


def packaged_rules_dir():
    """The rules shipped with megalint: the `megalint.rules` package (the repository's rules/)."""
    try:
        return importlib.resources.files("megalint.rules")
    except ModuleNotFoundError:
        # A source checkout run without installing: rules/ sits next to the package.
        return Path(__file__).resolve().parent.parent.parent / "rules"


def _rule_files(folder) -> list:
    out = []

    def walk(node, rel: str) -> None:
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            name = child.name
            if child.is_dir():
                if not name.startswith((".", "__")):
                    walk(child, f"{rel}{name}/")
            elif name.endswith(RULE_SUFFIXES):
                out.append((child, f"{rel}{name}"))

    walk(folder, "")
    return out


def load_rules(paths: Iterable[Path | str] | None = None, *, packaged: bool = True) -> RuleSet:
    """The packaged rules plus the rule files and folders in `paths` (searched recursively).

    Raises `RuleFileError` listing every problem of every file.
    """
    sources: list[tuple[str, str]] = []  # (shown path, text)
    errors: list[RuleError] = []
    if packaged:
        for res, rel in _rule_files(packaged_rules_dir()):
            sources.append((f"rules/{rel}", res.read_text("utf-8")))
    for p in paths or []:
        p = Path(p)
        if p.is_dir():
            files = [f for f, _ in _rule_files(p)]
        elif p.exists():
            files = [p]
        else:
            errors.append(RuleError(str(p), 1, 1, "no such rule file or folder"))
            continue
        for f in files:
            try:
                sources.append((str(f), Path(f).read_text("utf-8")))
            except UnicodeDecodeError as e:
                errors.append(RuleError(str(f), 1, 1, f"not UTF-8 text ({e.reason} at byte {e.start})"))
    return _build(sources, errors)


def load_rule_texts(sources: Iterable[tuple[str, str]]) -> RuleSet:
    """Rules from (path, text) pairs, as `load_rules` does for files."""
    return _build(list(sources), [])


def _build(sources: list[tuple[str, str]], errors: list[RuleError]) -> RuleSet:
    rules: list[Rule] = []
    seen_code: dict[str, str] = {}
    seen_name: dict[str, str] = {}
    for path, text in sources:
        file_rules, file_errors, keys = parse_rule_text(text, path)
        errors.extend(file_errors)
        for rule, code_pos, name_pos in keys:
            dup = False
            if rule.code in seen_code:
                errors.append(
                    RuleError(
                        path, *code_pos, f"duplicate rule code {rule.code} (also defined at {seen_code[rule.code]})"
                    )
                )
                dup = True
            if rule.name in seen_name:
                errors.append(
                    RuleError(
                        path, *name_pos, f"duplicate rule name {rule.name} (also defined at {seen_name[rule.name]})"
                    )
                )
                dup = True
            if not dup:
                seen_code[rule.code] = f"{path}:{code_pos[0]}:{code_pos[1]}"
                seen_name[rule.name] = f"{path}:{name_pos[0]}:{name_pos[1]}"
                rules.append(rule)
    if errors:
        raise RuleFileError(errors)
    return RuleSet(rules)
