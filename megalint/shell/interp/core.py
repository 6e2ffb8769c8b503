"""The interpreter's core: a run over one script, the dispatch from a statement's node type to
its handler, the memo of expansions, and what a run reports (findings, notes, unread sources).

`interpret` is the entry point. A run may find, part-way, that a statement it passed over
(relevance.py) was needed after all; it then starts again, on a fresh `Evaluator`, with more read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar, cast

from megalint.shell.facts import (
    Assumption,
    CommandRecord,
    PathFacts,
    ScriptFacts,
    ShellFinding,
    ShellFindingKind,
    SplitElement,
    UnreadReason,
    UnreadSource,
    VariableFact,
)
from megalint.shell.headers import SchedulerHeader
from megalint.shell.interp import algebra, assignments, commands, control, grouped, splitting, variables
from megalint.shell.interp.reparse import Placement
from megalint.shell.interp.state import (
    MAX_NEST,
    MAX_STEPS,
    MEMO_ENTRIES,
    NOT_REMEMBERED,
    Frame,
    Node,
    Positional,
    State,
    Var,
    array_values,
)
from megalint.shell.interp.syntax import assigned_names
from megalint.shell.parse import MemoEntry, ParsedScript
from megalint.shell.relevance import NOTHING, names_read, skippable
from megalint.shell.values import Segment, Unknown, Word
from megalint.source import SourceFile, Span

T = TypeVar("T")
Handler = Callable[["Evaluator", Node, State, Frame], list[State]]
# The name under which an expansion's reads record the positional parameters ($1, "$@").
POSITIONAL = "\0positional"


class NeedsReads(Exception):
    """Text met while running reads a variable that a statement passed over assigns: the run
    must start again with those names read (None: any name); it never leaves this module."""

    def __init__(self, names: frozenset[str] | None) -> None:
        super().__init__("restart")
        self.names = names


class Evaluator:
    """One run of the interpreter over one script: what it has learned so far, shared by every
    path, and the caches that make a path that repeats another cheap."""

    def __init__(
        self,
        root_dir: str | None = None,
        assume: Mapping[str, str] | None = None,
        follow_outside_root: bool = False,
        header_env: Mapping[str, tuple[str, Span]] | None = None,
        skip_unread: bool = True,
        also_read: frozenset[str] | None = frozenset(),
    ) -> None:
        self.skip_unread = skip_unread  # pass over statements no launch depends on (relevance.py)
        self.also_read = also_read  # names text met at run time reads (None: any), see NeedsReads
        self.skip = NOTHING
        self.root_dir = os.path.abspath(root_dir) if root_dir else None
        self.assume = dict(assume or {})
        self.follow_outside_root = follow_outside_root
        self.header_env = dict(header_env or {})
        # What the run reports.
        self.sources: dict[str, SourceFile] = {}
        self.findings: list[ShellFinding] = []
        self.sourced: list[str] = []
        self.notes: list[str] = []
        self.unread_sources: list[UnreadSource] = []
        self.assumptions: list[Assumption] = []
        self.split_elements: dict[SplitElement, None] = {}  # ordered, each once over all paths
        self.merged = False  # paths were joined (values they disagreed on became unknown)
        self.exhausted = False  # the step budget is spent: later statements are skipped
        # Where the run is.
        self.steps = 0
        self.nest = 0  # statements nested (if in function in eval …)
        # Set while a statement runs on several paths: work that paths holding the same values
        # would repeat goes through `memo` then, even where one path has a faster way.
        self.many_paths = False
        # Paths an assignment made alike are collapsed before the next statement that is not
        # an assignment, not after each assignment: a run of assignments (most of a launch
        # script) compares the paths once. Nothing between records a command, so nothing can
        # tell the two apart.
        self.collapse_pending = False
        self.expansion_depth = 0  # expansions nested (`${A:-${B:-…}}`)
        self.script_path = ""
        self.script_dir = ""
        self.source_stack: list[str] = []  # real paths of the files being sourced, outermost first
        self.headers_stack: tuple[SchedulerHeader, ...] = ()  # `#SBATCH` lines of an `sbatch <<EOF` script read
        self.first_assignments: dict[str, variables.FirstAssignments] = {}  # per script path
        # The names each function body declares local, by (script, body's bytes): read once
        # however often the function is called. The script is kept so that its id stays its own.
        self.locals_of: dict[tuple[int, int, int], tuple[ParsedScript, frozenset[str]]] = {}
        # The variables an `if` chain reads, by (script, construct's bytes), or None when it may
        # read or do more: grouped.run replays it on paths alike in those.
        self.chain_reads: dict[tuple[int, int, int], tuple[ParsedScript, tuple[str, ...] | None]] = {}
        # What the arms of an `if` chain or a `case` may assign, by (script, construct's bytes).
        self.assigned_in: dict[tuple[int, int, int], tuple[ParsedScript, tuple[str, ...]]] = {}
        # A plain `NAME=text` by (script, its bytes): (script, (name, its value not exported,
        # exported)) or (script, None) when not plain (assignments._plain_assignment)
        self.plain_of: dict[tuple[int, int, int], tuple[ParsedScript, tuple[str, list[Var | None]] | None]] = {}
        self.sourced_names: set[str] = set()  # variables a sourced file assigns
        self.unknown_tokens: dict[str, Unknown] = {}  # placeholder name -> the Unknown it stands for
        self._finding_keys: set[tuple[object, ...]] = set()
        self._noted: set[str] = set()
        # Memoised expansions: a word's value depends only on the variables it reads. While one
        # is computed, `reads` collects what it read (name -> the Var object seen); a later path
        # holding the very same objects gets the same result. `impure` marks an expansion that
        # assigned (`${X:=1}`, `$((i++))`): never reused.
        self.reads: dict[str, object] | None = None
        self.impure = False
        # Caches of this run, each keyed so that a stale entry cannot be mistaken for a live one.
        self.parsed_files: dict[str, ParsedScript | tuple[UnreadReason, str]] = {}  # real path -> parsed, or why not
        self.input_vars: dict[tuple[str, Span, bool], Var] = {}  # `export X` of an input: one Var for every path
        self.exported_of: dict[int, tuple[Var, Var]] = {}  # id(Var) -> (Var, the same Var exported)
        self.word_of: dict[int, tuple[Var, Word]] = {}  # id(Var) -> (Var, its value as one Word)
        self.reparsed: dict[tuple[str, str], list[tuple[tuple[Segment, ...], ParsedScript]]] = {}
        # (id(Segment), the string's anchor, the number of sources then) -> (it, an unknown part of
        # a command string parsed alone, placed as in that string): nested_scripts._expand_alone
        self.parsed_alone: dict[tuple[int, Span, int], tuple[Segment, ParsedScript]] = {}
        self.unknown_names: dict[Unknown, str] = {}  # Unknown -> its placeholder name in a command string
        self.placeholder_of: dict[int, tuple[Segment, Segment]] = {}  # id(unknown Segment) -> (it, its placeholder)
        self.parts_of: dict[int, tuple[Segment, list[Segment | None]]] = {}  # id(Segment) -> its fields
        # (id(Segment), an expansion's span, whether shown there) -> (it, it shown there or passed
        # through it): splitting.shown_at
        self.restated: dict[tuple[int, Span, bool], tuple[Segment, Segment]] = {}
        # (id(Segment), an expansion's span) -> (it, the number of sources then, how a part of it
        # is made, the parts made by their bounds): fast_paths.scalar_word
        self.cut_of: dict[
            tuple[int, Span], tuple[Segment, int, Callable[[int, int], Segment], dict[tuple[int, int], Segment]]
        ] = {}
        # id(Segment) -> (it, the number of sources then, where it was written): reparse.MappedSource
        self.placed: dict[int, tuple[Segment, int, Placement]] = {}
        # (id(Segment), start, end in it) -> (it, the number of sources then, the word read there)
        self.placed_words: dict[tuple[int, int, int], tuple[Segment, int, Word]] = {}
        # The ids of a word's parts -> (the parts, the word as a command string of several words
        # holds it, or None when it cannot be one of them): nested_scripts._eval_words
        self.arg_words: dict[tuple[int, ...], tuple[tuple[Segment, ...], object]] = {}
        # id(a part of "…": a literal run's or an expansion's pieces) -> (it, its segments read
        # without word splitting): expansion._dq_scalar
        self.scalar_parts: dict[int, tuple[object, list[Segment]]] = {}
        # What a word of a command string expanded to, by the parts it is made of
        # (MappedSource.signature) rather than by its place in one path's string: expansion.expand_word
        self.placed_memo: dict[tuple[object, ...], list[MemoEntry]] = {}
        # id(CommandRecord) -> (it, its mark): paths are compared by their commands' marks
        # after every statement, and the commands are the same objects from one to the next.
        self.command_marks: dict[int, tuple[CommandRecord, int]] = {}
        self.arith_parsed: dict[tuple[str, str], ParsedScript] = {}  # (path, `$((…))` text) -> its `$` parts
        # Equal scalar values as one object: paths that assign alike (`X=8` on every path) then
        # share the Var, so later expansions reading it are memoised across paths and the paths
        # compare equal by identity (algebra.py) instead of by value.
        self.interned: dict[Var, Var] = {}

    # ------------------------------------------------------------------ a run
    def run(self, ps: ParsedScript) -> list[State]:
        """Every path through the script; raises NeedsReads when the run must start again."""
        self.script_path = ps.source.path
        self.script_dir = os.path.dirname(os.path.abspath(ps.source.path))
        self.sources[ps.source.path] = ps.source
        self.source_stack.append(os.path.abspath(ps.source.path))
        st = State({}, None)
        for name, (text, span) in self.header_env.items():
            st.vars[name] = Var(scalar=(Segment(text, span),), exported=True, site=span)
        for name, value in self.assume.items():
            st.vars[name] = Var(scalar=(Segment(str(value), None, assumed=None),), exported=True)
        nodes = ps.top_level()
        if self.skip_unread:
            self.skip = skippable(ps, self.also_read)
            if self.skip.statements:
                nodes = [n for n in nodes if (n.start_byte, n.end_byte) not in self.skip.statements]
        states = self.block(nodes, [st], Frame(ps))
        if self.collapse_pending:
            self.collapse_pending = False
            states = [s for s in states if s.stopped] + algebra.collapse(
                [s for s in states if not s.stopped], marks=self.command_marks
            )
        return states

    def check_reads(self, text: str) -> None:
        """Text met while running (a sourced file, an `eval` string) that reads a variable a
        skipped statement assigns means the skipping was wrong: start again (see interpret)."""
        names = self.skip.names
        if not names:
            return
        read = names_read(text)
        if read is None:
            raise NeedsReads(None)
        hit = names & read
        if hit:
            raise NeedsReads(hit)

    # ------------------------------------------------------------------ statements
    def block(self, nodes: Iterable[Node], states: list[State], frame: Frame) -> list[State]:
        for node in nodes:
            if not node.is_named or node.type == "comment":
                continue
            states = self.stmt(node, states, frame)
        return states

    def stmt(self, node: Node, states: list[State], frame: Frame) -> list[State]:
        if len(states) == 1 and self.nest < MAX_NEST and self.steps < MAX_STEPS:
            # One path (most statements): the same as below without the bookkeeping for many.
            st = states[0]
            if st.stopped or self.exhausted:
                return states
            handler = STATEMENTS.get(node.type)
            if handler is not None:
                self.steps += 1
                self.nest += 1
                try:
                    out = handler(self, node, st, frame)
                finally:
                    self.nest -= 1
                return out if len(out) == 1 else algebra.limit(self, out, node, frame)
        out = []
        live = [s for s in states if not s.stopped]
        if not live or self.exhausted:
            return states
        done = [s for s in states if s.stopped]
        self.steps += len(live)
        if self.steps > MAX_STEPS:
            self.exhausted = True
            self.note_once(
                "budget",
                f"{frame.ps.span(node)}: evaluation stopped after {MAX_STEPS} steps; later commands are not read",
            )
            return states
        if self.nest >= MAX_NEST:
            return done + self.too_deep(node, live, frame)
        handler = STATEMENTS.get(node.type)
        assignment = node.type == "variable_assignment"
        if self.collapse_pending and not assignment:
            self.collapse_pending = False
            live = algebra.collapse(live, marks=self.command_marks)
        recorded = [len(s.commands) for s in live] if assignment else None
        self.nest += 1
        many, self.many_paths = self.many_paths, self.many_paths or len(live) > 1
        try:
            if handler is None:
                if node.type == "ERROR":
                    return states
                # Unknown statement kinds leave the state alone but their nested commands still run.
                for child in node.named_children:
                    if child.type in ("command", "pipeline", "list", "redirected_statement"):
                        live = self.stmt(child, live, frame)
                return done + live
            grouped_out = grouped.run(self, handler, node, live, frame) if node.type == "if_statement" else None
            if grouped_out is not None:
                out = grouped_out
            else:
                for st in live:
                    out.extend(handler(self, node, st, frame))
        finally:
            self.nest -= 1
            self.many_paths = many
        if recorded is not None and _unchanged_paths(live, out, recorded):
            self.collapse_pending = True
            return done + out
        return done + algebra.limit(self, out, node, frame)

    def too_deep(self, node: Node, live: list[State], frame: Frame) -> list[State]:
        """A statement nested past MAX_NEST: what it assigns becomes unknown, its commands are not read."""
        span = frame.ps.span(node)
        self.note_once(
            "nest",
            f"{span}: statements nested more than {MAX_NEST} levels deep (counting "
            "function calls, eval and sourced files) are not read",
        )
        assigned: set[str] = set()
        assigned_names(node, frame.ps, assigned)
        reason = Unknown(f"set in a statement nested too deep to read (line {span.start_line})", span)
        for st in live:
            for name in assigned:
                old = st.vars.get(name)
                st.vars[name] = Var(unknown=reason, exported=bool(old and old.exported), site=span)
        return live

    def shared(self, var: Var) -> Var:
        """The one object standing for a scalar value equal to `var`, while a statement runs on
        several paths (arrays are not shared). On one path a value is shared by the paths it
        later parts into as it is: looking each one up (two thirds of the assignments of the
        public scripts, 1 in 500 found) costs more than it saves."""
        if var.array is not None or not self.many_paths:
            return var
        return self.interned.setdefault(var, var)

    # ------------------------------------------------------------------ memoisation
    def get(self, st: State, name: str) -> Var | None:
        """A variable of the path, recorded as read by the expansion being computed."""
        v = st.vars.get(name)
        if self.reads is not None:
            self.reads[name] = v
        return v

    def positional(self, st: State) -> Positional:
        """The path's positional parameters, recorded as read."""
        if self.reads is not None:
            self.reads[POSITIONAL] = st.positional
        return st.positional

    def remembered(
        self, cache: dict[tuple[object, ...], list[MemoEntry]], key: tuple[object, ...], st: State
    ) -> object:
        """What `memo` remembers for `key` on this path (the objects it read are the path's), or
        NOT_REMEMBERED. Taking it counts as reading what it read."""
        entries = cache.get(key)
        if entries:
            epoch = len(self.sourced_names)
            vars_ = st.vars
            pos = st.positional
            for deps, ep, remembered in entries:
                if ep != epoch:
                    continue
                for name, v in deps:
                    if (pos if name is POSITIONAL else vars_.get(name)) is not v:
                        break
                else:
                    if self.reads is not None:
                        self.reads.update(deps)
                    return remembered
        return NOT_REMEMBERED

    def memo(
        self,
        ps: ParsedScript,
        key: tuple[object, ...],
        st: State,
        compute: Callable[[], T],
        cache: dict[tuple[object, ...], list[MemoEntry]] | None = None,
    ) -> T:
        """compute(), or what it gave on a path that held the same objects for what it read.
        Remembered by the script (`ps.memo_cache`), or in `cache` when the key says all of it."""
        if cache is None:
            cache = ps.memo_cache
        held = self.remembered(cache, key, st)
        if held is not NOT_REMEMBERED:
            # What compute() gave before: the same key is always computed by the same code.
            return cast(T, held)
        entries = cache.get(key)
        epoch = len(self.sourced_names)
        saved_reads, saved_impure = self.reads, self.impure
        reads: dict[str, object] = {}
        self.reads, self.impure = reads, False
        try:
            result = compute()
            impure = self.impure
        finally:
            self.reads, self.impure = saved_reads, saved_impure
        if saved_reads is not None:
            saved_reads.update(reads)
        if impure:
            self.impure = True
            return result
        if entries is None:
            entries = cache[key] = []
        elif len(entries) >= MEMO_ENTRIES:
            del entries[0]
        entries.append((tuple(reads.items()), epoch, result))
        return result

    # ------------------------------------------------------------------ what a run reports
    def note_once(self, key: str, text: str) -> None:
        if key not in self._noted:
            self._noted.add(key)
            self.notes.append(text)

    def finding(self, kind: ShellFindingKind, span: Span, message: str, **data: object) -> None:
        key = (kind, span.path, span.start, span.end)
        if key not in self._finding_keys:
            self._finding_keys.add(key)
            self.findings.append(ShellFinding(kind, span, message, data))

    def assume_that(self, text: str, span: Span) -> None:
        """Record an assumption the run made at `span` (once)."""
        a = Assumption(text, span)
        if a not in self.assumptions:
            self.assumptions.append(a)

    def unread(self, span: Span, path: str, reason: UnreadReason, note: str, file: str | None = None) -> None:
        """A `source` not followed: as data, and as the note that tells the user; `file`, the
        file found there and not read (UnreadSource.file)."""
        self.notes.append(note)
        self.unread_sources.append(UnreadSource(span, path, reason, note, file))


def _unchanged_paths(before: list[State], after: list[State], recorded: list[int]) -> bool:
    """Whether a statement left the same paths, none stopped and none with a command recorded."""
    if len(after) != len(before):
        return False
    for b, a, n in zip(before, after, recorded, strict=True):
        if a is not b or a.stopped or len(a.commands) != n:
            return False
    return True


def interpret(
    ps: ParsedScript,
    root_dir: str | None = None,
    assume: Mapping[str, str] | None = None,
    follow_outside_root: bool = False,
    header_env: Mapping[str, tuple[str, Span]] | None = None,
    skip_unread: bool = True,
) -> tuple[Evaluator, list[State]]:
    """Every path through a script, and the run that found them (for what it reports)."""
    also_read: frozenset[str] | None = frozenset()
    while True:
        ev = Evaluator(root_dir, assume, follow_outside_root, header_env, skip_unread, also_read)
        try:
            return ev, ev.run(ps)
        except NeedsReads as exc:
            # Text met at run time reads what a skipped statement assigns: start again with
            # those names read. Each round reads more, so this ends.
            also_read = None if exc.names is None or also_read is None else also_read | exc.names


def facts_from_states(
    ev: Evaluator,
    ps: ParsedScript,
    states: list[State],
    headers: list[SchedulerHeader],
    findings: list[ShellFinding],
    comments: list[tuple[str, Span]],
) -> ScriptFacts:
    """What a run learned about a script, path by path, as the later stages read it."""
    paths = []
    # Paths share most of their values: each value's fact (its words split) is made once.
    made: dict[tuple[str, int], VariableFact] = {}
    for s in states:
        facts = {}
        for name, var in s.vars.items():
            if name.startswith("__megalint"):
                continue
            fact = made.get((name, id(var)))
            if fact is None:
                arr = None
                if var.array is not None:
                    arr = tuple(Word(tuple(v)) for v in array_values(var.array))
                fact = made[name, id(var)] = VariableFact(
                    name,
                    None if var.unknown else variables.var_word(ev, var),
                    var.unknown,
                    var.exported,
                    arr,
                    _option_fields(ev, var),
                )
            facts[name] = fact
        paths.append(PathFacts(s.cond, s.commands, facts))
    return ScriptFacts(
        ps.source.path,
        dict(ev.sources),
        paths,
        headers,
        findings,
        comments,
        ev.sourced,
        ev.notes,
        ev.unread_sources,
        list(ev.assumptions),
        list(ev.split_elements),
    )


def _option_fields(ev: Evaluator, var: Var) -> Callable[[], tuple[Word, ...]] | None:
    """How to make the words of a string of options (`"--num-layers 24 --hidden-size 1024"`), as
    `$X` splits it; None for any other value. Split when first asked for (VariableFact.fields)."""
    if var.unknown is not None or not var.scalar or var.site is None:
        return None
    if sum(1 for seg in var.scalar if seg.text is not None and "--" in seg.text) == 0:
        return None
    scalar, site = var.scalar, var.site
    return lambda: tuple(splitting.fields_of(ev, scalar, site))


STATEMENTS: dict[str, Handler] = {
    "program": control.program,
    "compound_statement": control.compound_statement,
    "subshell": control.subshell,
    "do_group": control.do_group,
    "redirected_statement": control.redirected_statement,
    "negated_command": control.negated_command,
    "pipeline": control.pipeline,
    "list": control.and_or_list,
    "if_statement": control.if_statement,
    "case_statement": control.case_statement,
    "for_statement": control.for_statement,
    "c_style_for_statement": control.c_style_for_statement,
    "while_statement": control.while_statement,
    "function_definition": control.function_definition,
    "test_command": control.test_command,
    "variable_assignment": assignments.variable_assignment,
    "variable_assignments": assignments.variable_assignments,
    "declaration_command": commands.declaration_command,
    "unset_command": commands.unset_command,
    "command": commands.command,
}
