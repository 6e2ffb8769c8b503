"""One rule mapping of a rule file compiled into a `Rule`: expressions, templates, places, edits
and examples, each problem reported at its position in the file."""

from __future__ import annotations

from collections.abc import Callable, Collection
from functools import partial
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from megalint.diagnostics import Applicability, Severity
from megalint.engine.context import DEST_ROOTS, ROOTS
from megalint.engine.expectations import caret_expectations, outside
from megalint.engine.expressions import Expr, ExprError, compile_expr, unknown_dest
from megalint.engine.forms import EDITS, PLACES, Call, parse_call
from megalint.engine.rule import (
    ALL_FORKS,
    FINDING,
    LAUNCH,
    Docs,
    Example,
    Expected,
    FixSpec,
    ForEach,
    LabelSpec,
    PlaceSpec,
    Rule,
    rule_url,
)
from megalint.engine.rulefile import RuleFile
from megalint.engine.templates import Template, parse_template
from megalint.engine.versions import VersionError, VersionRange, parse_version

Forms = dict[str, tuple[str, ...]]  # form -> the kinds of its arguments


def _check_path(path: str, dests: Collection[str] | None) -> tuple[str, int] | None:
    """What is wrong with a required input, and where in it."""
    parts = path.split(".")
    if parts[0] not in ROOTS:
        return f"unknown context root '{parts[0]}' (known: {', '.join(ROOTS)})", 0
    fields = ROOTS[parts[0]]
    if fields is not None and len(parts) > 1 and parts[1] not in fields:
        return f"unknown field '{parts[0]}.{parts[1]}' (known: {', '.join(sorted(fields))})", 0
    if dests is not None and parts[0] in DEST_ROOTS and len(parts) > 1 and parts[1] not in dests:
        return unknown_dest(parts[1], dests), len(parts[0]) + 1
    return None


class RuleBuilder:
    """`dests`: the Megatron arguments the rule may name (args.NAME, given.NAME, flag(NAME) ...);
    None: any."""

    def __init__(self, doc: RuleFile, m: CommentedMap, dests: Collection[str] | None):
        self.doc = doc
        self.m = m
        self.ok = True
        self.dests = dests

    def fail(self, pos: tuple[int, int], message: str) -> None:
        self.doc.error(pos, message)
        self.ok = False

    def expr(
        self, mapping: CommentedMap, key: str, names: tuple[str, ...] = (), label: str | None = None
    ) -> Expr | None:
        value = mapping[key]
        source = ("true" if value else "false") if isinstance(value, bool) else str(value)
        try:
            return compile_expr(source, names, self.dests)
        except ExprError as e:
            self.fail(self.doc.value_pos(mapping, key, e.offset), f"{label or key}: {e.message}")
            return None

    def template(
        self, mapping: CommentedMap, key: str, names: tuple[str, ...] = (), label: str | None = None
    ) -> Template | None:
        if key not in mapping:
            return None
        try:
            return parse_template(str(mapping[key]), names, self.dests)
        except ExprError as e:
            self.fail(self.doc.value_pos(mapping, key, e.offset), f"{label or key}: {e.message}")
            return None

    def value_call(
        self, mapping: CommentedMap, key: str, vocabulary: Forms, what: str, label: str, names: tuple[str, ...]
    ) -> Call | None:
        """The place or edit written as the value of `key`."""
        return self.call(str(mapping[key]), partial(self.doc.value_pos, mapping, key), vocabulary, what, label, names)

    def item_call(
        self, seq: CommentedSeq, i: int, vocabulary: Forms, what: str, label: str, names: tuple[str, ...]
    ) -> Call | None:
        """The place or edit written as item `i` of a list."""
        return self.call(str(seq[i]), partial(self.doc.item_pos, seq, i), vocabulary, what, label, names)

    def call(
        self,
        text: str,
        pos: Callable[[int | None], tuple[int, int]],
        vocabulary: Forms,
        what: str,
        label: str,
        names: tuple[str, ...],
    ) -> Call | None:
        try:
            call = parse_call(text, vocabulary, what, names, self.dests)
        except ExprError as e:
            self.fail(pos(e.offset), f"{label}: {e.message}")
            return None
        if call.name in ("item", "replace_item", "expansion") and not names:
            self.fail(
                pos(None), f"{label}: {call.name} works on the current element of for_each, and this rule has none"
            )
            return None
        return call

    def build(self) -> Rule | None:
        m, doc = self.m, self.doc
        emitted_by = _opt(m, "emitted_by")
        if emitted_by is not None:
            self.emitted_rule_keys()
        try:
            megatron = VersionRange.parse(str(m.get("megatron", "*")))
        except VersionError as e:
            self.fail(doc.value_pos(m, "megatron"), f"megatron: {e}")
            megatron = None
        requires = tuple(str(x) for x in m.get("requires", []))
        for i, p in enumerate(requires):
            problem = _check_path(p, self.dests)
            if problem:
                self.fail(doc.item_pos(m["requires"], i, problem[1]), f"requires: {problem[0]}")

        for_each = None
        names: tuple[str, ...] = (FINDING,) if emitted_by is not None else ()
        if "for_each" in m:
            fe = m["for_each"]
            var = str(fe["var"])
            if var in ROOTS:
                self.fail(doc.value_pos(fe, "var"), f"for_each: var '{var}' hides the context root of that name")
            names = (var,)
            src = self.expr(fe, "in", label="for_each.in")
            if src is not None:
                for_each = ForEach(var, src)
        when = self.expr(m, "when", names) if "when" in m else None
        info_when = self.expr(m, "info_when", names, "info_when") if "info_when" in m else None
        message = self.template(m, "message", names)
        if emitted_by is not None and message is not None:
            self.reads_only_finding(message)
        help_ = self.template(m, "help", names)

        at_specs: list[PlaceSpec | None] = []
        places = PLACES
        at_value = m.get("at")
        if isinstance(at_value, CommentedSeq):
            for i in range(len(at_value)):
                item = at_value[i]
                if isinstance(item, CommentedMap):
                    call = self.value_call(item, "place", places, "place", "at.place", names)
                    cond = self.expr(item, "when", names, "at.when") if "when" in item else None
                    ok = call is not None and ("when" not in item or cond is not None)
                    at_specs.append(PlaceSpec(call, cond) if ok and call is not None else None)
                else:
                    call = self.item_call(at_value, i, places, "place", "at", names)
                    at_specs.append(PlaceSpec(call) if call is not None else None)
        elif at_value is not None:
            call = self.value_call(m, "at", places, "place", "at", names)
            at_specs.append(PlaceSpec(call) if call is not None else None)

        labels = []
        for lab in m.get("labels", []):
            call = self.value_call(lab, "at", places, "place", "labels.at", names)
            text = self.template(lab, "text", names, "labels.text")
            cond = self.expr(lab, "when", names, "labels.when") if "when" in lab else None
            if call is not None and text is not None and ("when" not in lab or cond is not None):
                labels.append(LabelSpec(call, text, cond))

        fix = None
        if "fix" in m:
            f = m["fix"]
            fmsg = self.template(f, "message", names, "fix.message")
            edit_seq = f.get("edits", [])
            calls = [self.item_call(edit_seq, i, EDITS, "edit", "fix.edits", names) for i in range(len(edit_seq))]
            edits = tuple(c for c in calls if c is not None)
            if fmsg is not None and len(edits) == len(calls):
                fix = FixSpec(fmsg, Applicability(str(f["applicability"])), edits)

        d = m["docs"]
        if "fix" in m and "fix_safety" not in d:
            self.fail(doc.key_pos(m, "docs"), "docs: fix_safety is required when the rule has a fix")
        docs = Docs(
            what=str(d["what"]),
            why=str(d["why"]),
            summary=_opt(d, "summary"),
            example=_opt(d, "example"),
            use_instead=_opt(d, "use_instead"),
            fix_safety=_opt(d, "fix_safety"),
            sources=tuple(str(s) for s in d.get("sources", [])),
            references=tuple(str(s) for s in d.get("references", [])),
        )
        examples = self.examples(fix is not None or "fix" in m)

        if not self.ok or megatron is None or message is None:
            return None
        name = str(m["name"])
        category = str(m["category"])
        return Rule(
            code=str(m["code"]),
            name=name,
            severity=Severity(str(m["severity"])),
            # Every rule links its page, megalint's own findings (suppressions, shell) too.
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
            at=tuple(c for c in at_specs if c is not None),
            labels=tuple(labels),
            help=help_,
            fix=fix,
            examples=tuple(examples),
            origin=f"{doc.path}:{doc.node_pos(m)[0]}:{doc.node_pos(m)[1]}",
            emitted_by=emitted_by,
            scope=str(m.get("scope", LAUNCH)),
            forks=(ALL_FORKS,) if m.get("forks") == ALL_FORKS else tuple(str(f) for f in m.get("forks", ())),
            info_when=info_when,
        )

    def emitted_rule_keys(self) -> None:
        """A rule megalint emits itself is not decided on a context: the keys for that are errors."""
        m, doc = self.m, self.doc
        for key in ("megatron", "requires", "for_each", "when", "info_when", "at", "labels", "help", "scope", "forks"):
            if key in m:
                self.fail(doc.key_pos(m, key), f"{key}: a rule megalint emits itself has no {key}")
        if "fix" in m and "edits" in m["fix"]:
            self.fail(doc.key_pos(m["fix"], "edits"), "fix.edits: megalint makes the edits of a rule it emits")

    def reads_only_finding(self, message: Template) -> None:
        for expr in message.exprs:
            for ref in expr.refs:
                if ref.root != FINDING and ref.root not in expr.scan.bound:
                    self.fail(
                        self.doc.value_pos(self.m, "message"),
                        f"message: a rule megalint emits reads only {FINDING}, the values it is reported with; "
                        f"not '{ref.root}'",
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
                problem = outside(script, expect[-1])
                if problem:
                    self.fail(doc.node_pos(e), f"examples: expect {expect[-1]} {problem}")
            carets, problems = caret_expectations(script, str(m["code"]))
            for p in problems:
                self.fail(doc.value_pos(ex, kind, p.offset), f"examples: {p.message}")
            if carets and expect:
                self.fail(
                    doc.key_pos(ex, "expect"), "examples: give the positions as expect or as caret lines, not both"
                )
            expect += carets
            if kind == "bad":
                any_bad = True
                if not expect and not problems:
                    self.fail(pos, "examples: a bad example needs expect: the positions the rule reports")
            else:
                if carets:
                    self.fail(doc.value_pos(ex, kind), "examples: a good example cannot have caret lines")
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
                    max_file_size=_int(ex.get("max_file_size")),
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
