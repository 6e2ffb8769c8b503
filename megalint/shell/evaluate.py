"""The abstract interpreter: what a script would set and run, without running anything.

The state is a set of concrete-ish states, one per combination of undecided branches (an
`if` on an environment variable forks it). Values are `Segment` runs that remember where each
character came from; what cannot be known is an `Unknown` with a reason. Nothing is executed:
command substitutions are Unknown except a few pure idioms (`$(dirname "$0")`, `$(echo …)`).
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import replace

from megalint.shell import arith, equality
from megalint.shell.facts import (
    CommandRecord,
    PathFacts,
    ScriptFacts,
    ShellFinding,
    ShellFindingKind,
    UnreadReason,
    UnreadSource,
    VariableFact,
)
from megalint.shell.interp import algebra
from megalint.shell.interp.patterns import glob_match, replace_pattern, strip_pattern
from megalint.shell.interp.pieces import (
    FIELD_BREAK,
    QUOTED_EMPTY,
    Expansion,
    FieldBreak,
    SegmentPiece,
    Splat,
)
from megalint.shell.interp.state import (
    MAX_ARRAY,
    MAX_CALL_DEPTH,
    MAX_CONDITION_DEPTH,
    MAX_EXPANSION_DEPTH,
    MAX_FIELDS,
    MAX_LOOP_UNROLL,
    MAX_NEST,
    MAX_SOURCE_BYTES,
    MAX_SOURCE_DEPTH,
    MAX_STEPS,
    MAX_VALUE_CHARS,
    MAX_VALUE_SEGMENTS,
    MEMO_ENTRIES,
    UNKNOWN_PREFIX,
    UNSOURCED,
    Frame,
    Node,
    Scalar,
    State,
    Var,
    array_values,
    assign_scalar,
    next_index,
    origins_of,
    oversized,
    resite,
    scalar_text,
    too_long,
)
from megalint.shell.interp.syntax import (
    NOT_PLAIN,
    assigned_names,
    effective_start,
    in_double_bracket,
    is_test,
    is_whole_expansion,
    local_names,
    plain_name,
)
from megalint.shell.parse import InputError, ParsedScript, parse_file, parse_padded, parse_text
from megalint.shell.relevance import NOTHING, names_read, skippable
from megalint.shell.values import Segment, Unknown, Word
from megalint.source import SourceFile, Span

_IFS = re.compile(r"[ \t\n]+")
# `$` in arithmetic: a plain reference (groups 1, 2), or anything else (no group).
_ARITH_REF = re.compile(r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\}|)")
# `$X`, `$1`, `${X}`: a reference whose value var_scalar gives
_VALUE_REF = re.compile(rb"\$(?:([A-Za-z_][A-Za-z0-9_]*|[0-9])|\{([A-Za-z_][A-Za-z0-9_]*)\})\Z")
_BLANK = re.compile(rb"[^\n]")
_NOT_LAUNCH = frozenset(
    "echo printf mkdir cd rm cp mv ls cat sleep wait set trap ulimit touch chmod ln pushd popd "
    "true false : hostname date tee sed awk grep head tail sort uniq wc tr cut basename dirname "
    "pwd realpath readlink shift return exit test [ [[ unset read getopts".split()
)
# Commands whose arguments change nothing the evaluator tracks: their words need not be
# expanded unless an expansion itself assigns (`${X:=1}`, `$((i++))`) or may hold a finding.
_INERT = frozenset(
    "echo printf mkdir rm cp mv ls cat sleep touch chmod ln tee sed awk grep head tail sort uniq wc tr "
    "cut hostname date true false : wait nvidia-smi pip mkdir find xargs".split()
)
_ASSIGNING = re.compile(r"\$\(\(|\(\(|\$\[|\$\{[^}]*=|\\|`|\$\(")
_MACHINE_TEST = re.compile(r"(?<![\w-])-(?:[a-hkprstuwxvGLNOS]|nt|ot|ef)(?![\w-])")
_DECLS = frozenset({"export", "declare", "typeset", "local", "readonly"})
_LITERAL_WORDS = frozenset({"word", "number", "raw_string"})
# The evaluator's fast paths give what the general code gives, for the common simple cases;
# tests/shell/test_fast_paths.py turns them off and compares.
FAST_PATHS = True
_PLAIN_MAX = 4_096  # longer plain words take the general path (it checks the size limits)
_HEREDOC_SHELLS = frozenset({"sbatch", "bash", "sh", "srun", "salloc"})


_POS = "\0positional"


class _TooLarge(InputError):
    """A sourced file larger than MAX_SOURCE_BYTES."""


class NeedsReads(Exception):
    def __init__(self, names: frozenset | None):
        super().__init__("restart")
        self.names = names


class Evaluator:
    def __init__(
        self,
        root_dir: str | None = None,
        assume: dict[str, str] | None = None,
        follow_outside_root: bool = False,
        header_env: dict | None = None,
        skip_unread: bool = True,
    ):
        self._init_args = dict(
            root_dir=root_dir,
            assume=assume,
            follow_outside_root=follow_outside_root,
            header_env=header_env,
            skip_unread=skip_unread,
        )
        self.skip_unread = skip_unread  # pass over statements no launch depends on (relevance.py)
        self.skip = NOTHING
        self.root_dir = os.path.abspath(root_dir) if root_dir else None
        self.assume = dict(assume or {})
        self.follow_outside_root = follow_outside_root
        self.header_env = header_env or {}
        self.sources: dict = {}
        self.findings: list[ShellFinding] = []
        self.sourced: list[str] = []
        self.notes: list[str] = []
        self.unread_sources: list[UnreadSource] = []
        self.steps = 0
        self.script_path = ""
        self.script_dir = ""
        self._source_stack: list[str] = []
        self.assign_offsets: dict[str, dict[str, int]] = {}
        self.sourced_names: set[str] = set()
        self.unknown_tokens: dict[str, Unknown] = {}
        self.headers_stack: tuple = ()  # `#SBATCH` lines of an `sbatch <<EOF` script being read
        self._finding_keys: set = set()
        self.merged = False  # paths were joined (values they disagreed on became unknown)
        self.exhausted = False  # the step budget is spent: later statements are skipped
        self._nest = 0
        self._pdepth = 0
        self._noted: set = set()
        self._parsed_files: dict = {}  # real path -> ParsedScript (or InputError/OSError text)
        # Memoised expansions: a word's value depends only on the variables it reads. While one
        # is computed, `_rec` collects what it read (name -> the Var object seen); a later path
        # holding the very same objects gets the same result. `_impure` marks an expansion that
        # assigned (`${X:=1}`, `$((i++))`): never reused.
        self._rec: dict | None = None
        self._impure = False
        self._exported_of: dict = {}  # id(Var) -> (Var, the same Var exported)
        self._word_of: dict = {}  # id(Var) -> (Var, its value as one Word)
        self._reparsed: dict = {}  # (path, segments) -> ParsedScript of a command string
        self._unknown_names: dict = {}  # Unknown -> its placeholder variable name in a command string
        self._parts_of: dict = {}  # id(Segment) -> (Segment, its fields after splitting)
        self._arith_parsed: dict = {}  # (path, `$((…))` text) -> its `$` parts, parsed

    # ------------------------------------------------------------------ entry points
    def run(self, ps: ParsedScript) -> list[State]:
        also_read: frozenset | None = frozenset()
        while True:
            try:
                return self._run(ps, also_read)
            except NeedsReads as exc:
                # Text met at run time reads what a skipped statement assigns: start again
                # with those names read. Each round reads more, so this ends.
                also_read = None if exc.names is None or also_read is None else also_read | exc.names
                self.__init__(**self._init_args)

    def _run(self, ps: ParsedScript, also_read) -> list[State]:
        self.script_path = ps.source.path
        self.script_dir = os.path.dirname(os.path.abspath(ps.source.path))
        self.sources[ps.source.path] = ps.source
        self._source_stack.append(os.path.abspath(ps.source.path))
        st = State({}, None)
        for name, (text, span) in self.header_env.items():
            st.vars[name] = Var(scalar=(Segment(text, span),), exported=True, site=span)
        for name, text in self.assume.items():
            st.vars[name] = Var(scalar=(Segment(str(text), None, assumed=None),), exported=True)
        nodes = ps.top_level()
        if self.skip_unread:
            self.skip = skippable(ps, also_read)
            if self.skip.statements:
                nodes = [n for n in nodes if (n.start_byte, n.end_byte) not in self.skip.statements]
        return self.block(nodes, [st], Frame(ps))

    def check_reads(self, text: str) -> None:
        """Text met while running (a sourced file, an `eval` string) that reads a variable a
        skipped statement assigns means the skipping was wrong: start again (see run)."""
        names = self.skip.names
        if not names:
            return
        read = names_read(text)
        if read is None:
            raise NeedsReads(None)
        hit = names & read
        if hit:
            raise NeedsReads(hit)

    # ------------------------------------------------------------------ memoisation
    def _get(self, st: State, name: str):
        v = st.vars.get(name)
        if self._rec is not None:
            self._rec[name] = v
        return v

    def _pos(self, st: State):
        if self._rec is not None:
            self._rec[_POS] = st.positional
        return st.positional

    def _memo(self, ps, key, st: State, compute):
        entries = ps.cache.get(key)
        epoch = len(self.sourced_names)
        if entries:
            vars_ = st.vars
            pos = st.positional
            for deps, ep, result in entries:
                if ep != epoch:
                    continue
                for name, v in deps:
                    if (pos if name is _POS else vars_.get(name)) is not v:
                        break
                else:
                    if self._rec is not None:
                        self._rec.update(deps)
                    return result
        saved_rec, saved_impure = self._rec, self._impure
        rec: dict = {}
        self._rec, self._impure = rec, False
        try:
            result = compute()
            impure = self._impure
        finally:
            self._rec, self._impure = saved_rec, saved_impure
        if saved_rec is not None:
            saved_rec.update(rec)
        if impure:
            self._impure = True
            return result
        if entries is None:
            entries = ps.cache[key] = []
        elif len(entries) >= MEMO_ENTRIES:
            del entries[0]
        entries.append((tuple(rec.items()), epoch, result))
        return result

    def _input_var(self, name: str, span: Span, empty: bool = False) -> Var:
        """`export X` / `local X` of a variable: one object for every path, so paths stay alike."""
        key = ("input", name, span, empty)
        var = self._exported_of.get(key)
        if var is None:
            var = self._exported_of[key] = (
                Var(scalar=(), site=span) if empty else Var(unknown=self.env_unknown(name, span), site=span)
            )
        return var

    def _exported(self, var: Var) -> Var:
        got = self._exported_of.get(id(var))
        if got is None or got[0] is not var:
            got = self._exported_of[id(var)] = (var, Var(var.scalar, var.array, var.unknown, True, var.site))
        return got[1]

    def note_once(self, key: str, text: str) -> None:
        if key not in self._noted:
            self._noted.add(key)
            self.notes.append(text)

    def finding(self, kind: ShellFindingKind, span: Span, message: str, **data) -> None:
        key = (kind, span.path, span.start, span.end)
        if key not in self._finding_keys:
            self._finding_keys.add(key)
            self.findings.append(ShellFinding(kind, span, message, data))

    # ------------------------------------------------------------------ statements
    def block(self, nodes, states: list[State], ctx: Frame) -> list[State]:
        for node in nodes:
            if not node.is_named or node.type == "comment":
                continue
            states = self.stmt(node, states, ctx)
        return states

    def stmt(self, node: Node, states: list[State], ctx: Frame) -> list[State]:
        if len(states) == 1 and self._nest < MAX_NEST and self.steps < MAX_STEPS:
            # One path (most statements): the same as below without the bookkeeping for many.
            st = states[0]
            if st.stopped or self.exhausted:
                return states
            handler = getattr(self, "s_" + node.type, None)
            if handler is not None:
                self.steps += 1
                self._nest += 1
                try:
                    out = handler(node, st, ctx)
                finally:
                    self._nest -= 1
                return out if len(out) == 1 else algebra.limit(self, out, node, ctx)
        out: list[State] = []
        live = [s for s in states if not s.stopped]
        if not live or self.exhausted:
            return states
        done = [s for s in states if s.stopped]
        self.steps += len(live)
        if self.steps > MAX_STEPS:
            self.exhausted = True
            self.note_once(
                "budget",
                f"{ctx.ps.span(node)}: evaluation stopped after {MAX_STEPS} steps; later commands are not read",
            )
            return states
        if self._nest >= MAX_NEST:
            return done + self.too_deep(node, live, ctx)
        handler = getattr(self, "s_" + node.type, None)
        self._nest += 1
        try:
            if handler is None:
                if node.type == "ERROR":
                    return states
                # Unknown statement kinds leave the state alone but their nested commands still run.
                for child in node.named_children:
                    if child.type in ("command", "pipeline", "list", "redirected_statement"):
                        live = self.stmt(child, live, ctx)
                return done + live
            for st in live:
                out.extend(handler(node, st, ctx))
        finally:
            self._nest -= 1
        return done + algebra.limit(self, out, node, ctx)

    def too_deep(self, node, live, ctx):
        """A statement nested past MAX_NEST: what it assigns becomes unknown, its commands are not read."""
        span = ctx.ps.span(node)
        self.note_once(
            "nest",
            f"{span}: statements nested more than {MAX_NEST} levels deep (counting "
            "function calls, eval and sourced files) are not read",
        )
        assigned: set = set()
        assigned_names(node, ctx.ps, assigned)
        reason = Unknown(f"set in a statement nested too deep to read (line {span.start_line})", span)
        for st in live:
            for name in assigned:
                old = st.vars.get(name)
                st.vars[name] = Var(unknown=reason, exported=bool(old and old.exported), site=span)
        return live

    # -- compound statements
    def s_program(self, node, st, ctx):
        return self.block(node.children, [st], ctx)

    def s_compound_statement(self, node, st, ctx):
        first = node.child(0)
        if first is not None and first.type == "((":
            return self.arith_statement(node, st, ctx, ctx.ps.text(node)[2:-2])
        return self.block(node.children, [st], ctx)

    def s_subshell(self, node, st, ctx):
        # Variables set in a subshell do not reach the parent; commands run there still count.
        return algebra.effects_only(st, self.block(node.children, [st.fork()], ctx))

    def s_do_group(self, node, st, ctx):
        return self.block(node.children, [st], ctx)

    def s_redirected_statement(self, node, st, ctx):
        body = node.child_by_field_name("body")
        if body is None:
            return [st]
        heredoc = next((c for c in node.children if c.type == "heredoc_redirect"), None)
        if heredoc is not None and body.type == "command":
            name = plain_name(body.child_by_field_name("name"))
            if name in _HEREDOC_SHELLS:
                return self.heredoc_script(body, heredoc, st, ctx)
        return self.stmt(body, [st], ctx)

    def heredoc_script(self, command, heredoc, st, ctx):
        """`sbatch <<EOF … EOF` (or bash/srun): the here-document is a script of its own, with
        its own `#SBATCH` headers; an unquoted delimiter expands it when it is written."""
        ps = ctx.ps
        words = []
        for i, c in enumerate(command.children):
            if command.field_name_for_child(i) in ("name", "argument") and c.type not in (
                "file_redirect",
                "heredoc_redirect",
            ):
                words.extend(self.expand_word(c, st, ctx))
        body = next((c for c in heredoc.children if c.type == "heredoc_body"), None)
        start = next((c for c in heredoc.children if c.type == "heredoc_start"), None)
        if body is None:
            return [st]
        quoted = start is not None and any(q in ps.text(start) for q in ("'", '"', "\\"))
        if quoted:
            a = ps.source.char_offset(body.start_byte)
            text = ps.text(body)
            segs = (self.lit(text, ps, a, a + len(text)),)
        else:
            pieces = []
            pos = body.start_byte
            data = ps.parse_text
            for c in body.children:
                if c.type == "heredoc_content" or not c.is_named:
                    continue
                cstart = effective_start(c, data)
                if cstart > pos:
                    pieces.extend(self.dq_literal(data, pos, cstart, ps, None, heredoc=True))
                pieces.extend(self.pieces(c, st, ctx, True, None))
                pos = c.end_byte
            if body.end_byte > pos:
                pieces.extend(self.dq_literal(data, pos, body.end_byte, ps, None, heredoc=True))
            segs = tuple(p.segment for p in pieces if isinstance(p, SegmentPiece))
        word = Word(segs)
        sub = self.reparse(word, ctx)
        if sub is None:
            return [st]
        from megalint.shell.headers import implied_environment, read_headers

        headers = tuple(read_headers(sub.source)) if plain_name(command.child_by_field_name("name")) == "sbatch" else ()
        child = st.fork()
        if plain_name(command.child_by_field_name("name")) != "sbatch":
            child.vars = {k: v for k, v in child.vars.items() if v.exported}
        for name, (text, span) in implied_environment(list(headers)).items():
            child.vars[name] = Var(scalar=(Segment(text, span),), exported=True, site=span)
        child.positional = ()
        wrappers = ctx.wrappers + ((tuple(words),) if words else ())
        saved = self.headers_stack
        self.headers_stack = headers or saved
        try:
            results = self.block(sub.root.children, [child], Frame(sub, wrappers, ctx.depth + 1))
        finally:
            self.headers_stack = saved
        return algebra.effects_only(st, results)

    def s_negated_command(self, node, st, ctx):
        return self.block(node.named_children, [st], ctx)

    def s_pipeline(self, node, st, ctx):
        # Each part runs in a subshell; the last one's variables are lost too (no lastpipe).
        states = [st]
        for child in node.named_children:
            nxt = []
            for s in states:
                nxt.extend(algebra.effects_only(s, self.stmt(child, [s.fork()], ctx)))
            states = nxt or states
        return states

    def s_list(self, node, st, ctx):
        # `a && b`, `a || b`: tests are decided when they can be; other commands are taken to
        # succeed, the way the script's author expects its launch path to run.
        children = node.children
        left = node.named_children[0] if node.named_children else None
        op = None
        for c in children:
            if not c.is_named:
                op = c.type
                break
        if left is None or op is None or len(node.named_children) < 2:
            return self.block(node.named_children, [st], ctx)
        right = node.named_children[-1]
        verdict, key = self.decide(left, st, ctx)
        states = self.stmt(left, [st], ctx)
        out = []
        for s in states:
            if s.stopped:
                out.append(s)
                continue
            if verdict is None and is_test(left):
                desc = ctx.ps.text(left)
                taken = s.fork(f"`{desc}` {'true' if op == '&&' else 'false'}")
                skipped = s.fork(f"`{desc}` {'false' if op == '&&' else 'true'}")
                self.remember(taken, key, op == "&&")
                self.remember(skipped, key, op != "&&")
                out.extend(self.stmt(right, [taken], ctx))
                out.append(skipped)
                continue
            success = True if verdict is None else verdict
            run_right = success if op == "&&" else not success
            out.extend(self.stmt(right, [s], ctx) if run_right else [s])
        return out

    def decide(self, node, st, ctx):
        """(verdict, key): the verdict of a condition, or the way this path already took the same
        test on the same values; key is what to remember when it forks (None: not repeatable)."""
        saved_rec, saved_impure = self._rec, self._impure
        rec: dict = {}
        self._rec, self._impure = rec, False
        try:
            verdict = self.condition_value(node, st, ctx)
            impure = self._impure
        finally:
            self._rec, self._impure = saved_rec, saved_impure
        if verdict is not None or impure:
            return verdict, None
        text = ctx.ps.text(node)
        # Only tests of strings and numbers repeat: files and the environment change as it runs.
        if not is_test(node) or _MACHINE_TEST.search(text):
            return None, None
        key = (text, tuple((name, id(v)) for name, v in rec.items()))
        got = st.taken.get(key)
        if got is not None:
            return got[0], None
        cmp = equality.comparison(text)  # `= 70B` earlier decides `!= 70B` here
        got = equality.recall(st.taken, cmp, key[1]) if cmp is not None else None
        if got is not None:
            return got, None
        return None, (key, tuple(rec.values()), cmp)

    def remember(self, st, key, verdict: bool) -> None:
        if key is not None:
            st.taken[key[0]] = (verdict, key[1])
            if key[2] is not None:
                equality.learn(st.taken, key[2], key[0][1], verdict, key[1])

    def s_if_statement(self, node, st, ctx):
        # if COND; then BODY [elif COND; then BODY]* [else BODY] fi
        arms = []  # (condition nodes, body nodes)
        cond_nodes, body, mode = [], [], "cond"
        else_body = None
        for child in node.children:
            t = child.type
            if t == "if":
                continue
            if t == "then":
                mode = "body"
                continue
            if t == "fi":
                break
            if t == "elif_clause":
                arms.append((cond_nodes, body))
                cond_nodes, body, mode = [], [], "cond"
                for c in child.children:
                    if c.type == "then":
                        mode = "body"
                    elif c.type == "elif":
                        continue
                    elif mode == "cond":
                        cond_nodes.append(c)
                    else:
                        body.append(c)
                continue
            if t == "else_clause":
                else_body = [c for c in child.children if c.type != "else"]
                continue
            (cond_nodes if mode == "cond" else body).append(child)
        arms.append((cond_nodes, body))
        return self.branches(arms, else_body, st, ctx)

    def branches(self, arms, else_body, st, ctx):
        out: list[State] = []
        pending = [st]
        for cond_nodes, body in arms:
            named = [c for c in cond_nodes if c.is_named and c.type != "comment"]
            next_pending = []
            for s in pending:
                states = self.block(named[:-1], [s], ctx) if len(named) > 1 else [s]
                for s2 in states:
                    if s2.stopped:
                        out.append(s2)
                        continue
                    last = named[-1] if named else None
                    verdict, key = self.decide(last, s2, ctx) if last is not None else (None, None)
                    after = self.stmt(last, [s2], ctx) if last is not None else [s2]
                    desc = ctx.ps.text(last).strip() if last is not None else "?"
                    for s3 in after:
                        if s3.stopped:
                            out.append(s3)
                        elif verdict is True:
                            out.extend(self.block(body, [s3], ctx))
                        elif verdict is False:
                            next_pending.append(s3)
                        else:
                            yes, no = s3.fork(f"`{desc}` true"), s3.fork(f"`{desc}` false")
                            self.remember(yes, key, True)
                            self.remember(no, key, False)
                            out.extend(self.block(body, [yes], ctx))
                            next_pending.append(no)
            pending = next_pending
        if not else_body and any("` false" in c for s in pending for c in s.cond[len(st.cond) :]):
            # Fell through every arm of an undecided chain: what the arms would have set is
            # unknown here, not empty (that path is an argument the script did not expect).
            names: set[str] = set()
            for _cond, body in arms:
                for node in body:
                    assigned_names(node, ctx.ps, names)
            where = ctx.ps.span(arms[0][1][0]) if arms and arms[0][1] else None
            for s in pending:
                algebra.unset_to_unknown(s, names, "an `if` chain", where)
        for s in pending:
            out.extend(self.block(else_body, [s], ctx) if else_body else [s])
        return out

    def s_case_statement(self, node, st, ctx):
        value_node = node.child_by_field_name("value")
        subject = self.expand_scalar(value_node, st, ctx) if value_node is not None else ()
        subject_text = scalar_text(subject)
        items = [c for c in node.named_children if c.type == "case_item"]
        out: list[State] = []
        matched_all = False
        desc_subject = ctx.ps.text(value_node) if value_node is not None else "?"
        for item in items:
            patterns, body, fallthrough = self.case_item_parts(item, st, ctx)
            if subject_text is not None and all(p is not None for p in patterns):
                if any(glob_match(p, subject_text) for p in patterns):
                    out.extend(self.block(body, [st], ctx))
                    return out
                continue
            # An undecided subject: every arm is a possible path, unless a pattern is known not to match.
            desc = f"case {desc_subject} matches {ctx.ps.text(item).split(')')[0].strip()}"
            out.extend(self.block(body, [st.fork(desc)], ctx))
            if any(p == "*" for p in patterns):
                matched_all = True
                break
        if subject_text is not None:
            return [st]  # no arm matched
        if not matched_all:
            rest = st.fork(f"case {desc_subject} matches no arm")
            names: set[str] = set()
            for item in items:
                assigned_names(item, ctx.ps, names)
            algebra.unset_to_unknown(rest, names, "the arms of a `case`", ctx.ps.span(node))
            out.append(rest)
        return out

    def case_item_parts(self, item, st, ctx):
        patterns = []
        body = []
        seen_paren = False
        fallthrough = False
        for c in item.children:
            if not seen_paren:
                if c.type == ")":
                    seen_paren = True
                elif c.is_named:
                    patterns.append(scalar_text(self.expand_scalar(c, st, ctx, pattern=True)))
                continue
            if c.type in (";;", ";&", ";;&"):
                fallthrough = c.type != ";;"
                continue
            body.append(c)
        return patterns, body, fallthrough

    def s_for_statement(self, node, st, ctx):
        var_node = node.child_by_field_name("variable")
        body = node.child_by_field_name("body")
        values = [c for c in node.children_by_field_name("value")]
        name = ctx.ps.text(var_node) if var_node is not None else "_"
        if not values and node.child(0) is not None and node.child(0).type == "for":
            # `for x; do` iterates over the positional parameters
            items = None if st.positional is None else [Word(tuple(p)) for p in st.positional]
        else:
            items = []
            for v in values:
                for w in self.expand_word(v, st, ctx):
                    if w.splat is not None or w.text is None:
                        items = None
                        break
                    items.append(w)
                if items is None:
                    break
        if items is not None and len(items) <= MAX_LOOP_UNROLL:
            states = [st]
            finished: list[State] = []
            for w in items:
                for s in states:
                    if not s.stopped:
                        assign_scalar(s, name, w.segments, ctx.ps.span(var_node) if var_node else None)
                states = self.stmt(body, states, ctx) if body is not None else states
                states, broke = self.loop_exits(states)
                finished.extend(broke)
            return finished + states
        return self.havoc_loop(
            node, body, st, ctx, {name: f"set by the `for {name}` loop over values not known statically"}
        )

    def loop_exits(self, states):
        """Split off the states that left the loop with `break`."""
        going, broke = [], []
        for s in states:
            if s.breaking:
                s.breaking = False
                s.stopped = False
                broke.append(s)
            else:
                going.append(s)
        return going, broke

    def s_c_style_for_statement(self, node, st, ctx):
        body = node.child_by_field_name("body")
        text = ctx.ps.text(node)
        m = re.match(r"for\s*\(\((.*?);(.*?);(.*?)\)\)", text, re.S)
        if m:
            init, cond, update = m.groups()
            s = st.fork()
            try:
                self.arith_eval(init, s, ctx, None)
                states = [s]
                for _ in range(MAX_LOOP_UNROLL + 1):
                    if len(states) != 1 or states[0].stopped:
                        break
                    if cond.strip() and not self.arith_eval(cond, states[0], ctx, None):
                        return states
                    states = self.stmt(body, states, ctx) if body is not None else states
                    if len(states) == 1 and not states[0].stopped:
                        self.arith_eval(update, states[0], ctx, None)
            except (arith.ArithUnknown, arith.ArithError):
                pass
        return self.havoc_loop(node, body, st, ctx, {})

    def s_while_statement(self, node, st, ctx):
        body = node.child_by_field_name("body")
        cond = [c for c in node.children if c.is_named and c != body and c.type != "comment"]
        until = node.child(0) is not None and node.child(0).type == "until"
        states = [st.fork()]
        finished: list[State] = []
        for _ in range(MAX_LOOP_UNROLL):
            if len(states) != 1 or states[0].stopped:
                break
            s = states[0]
            verdict = self.condition_value(cond[-1], s, ctx) if cond else None
            if verdict is None:
                break
            if until:
                verdict = not verdict
            if not verdict:
                return finished + states
            states = self.stmt(body, states, ctx) if body is not None else states
            states, broke = self.loop_exits(states)
            finished.extend(broke)
            if not states:
                return finished
        return self.havoc_loop(node, body, st, ctx, {})

    def havoc_loop(self, node, body, st, ctx, extra: dict[str, str]):
        """A loop whose trip count is unknown: every variable it assigns becomes unknown."""
        span = ctx.ps.span(node)
        assigned = set(extra)
        assigned_names(node, ctx.ps, assigned)
        s = st.fork()
        for name in assigned:
            reason = (
                extra.get(name)
                or f"`{name}` is changed in a loop (line {span.start_line}) that runs an unknown number of times"
            )
            old = s.vars.get(name)
            s.vars[name] = Var(unknown=Unknown(reason, span), exported=bool(old and old.exported), site=span)
        shifts = "shift" in ctx.ps.text(node)
        if shifts:
            s.positional = None
        was = s.in_loop
        s.in_loop = True
        results = self.stmt(body, [s], ctx) if body is not None else [s]
        out = []
        for r in results:
            r.in_loop = was
            r.stopped = False  # `exit` inside a loop may not run
            for name in assigned:
                old = r.vars.get(name)
                reason = (
                    extra.get(name)
                    or f"`{name}` is changed in a loop (line {span.start_line}) that runs an unknown number of times"
                )
                r.vars[name] = Var(unknown=Unknown(reason, span), exported=bool(old and old.exported), site=span)
            if shifts:
                r.positional = None
            out.append(r)
        if len(out) > 1:
            # Branches inside a loop of unknown trip count are not paths of the script: the
            # variables they set are unknown already; keep every command they run.
            live = [r for r in out if not r.stopped] or out
            merged = algebra.merge(live, span)
            merged.cond = st.cond
            return [merged]
        return out or [s]

    def s_function_definition(self, node, st, ctx):
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name_node is not None and body is not None:
            st.funcs[ctx.ps.text(name_node)] = (body, ctx.ps)
        return [st]

    def s_variable_assignment(self, node, st, ctx):
        self.assign(node, st, ctx)
        return [st]

    def s_variable_assignments(self, node, st, ctx):
        for c in node.named_children:
            if c.type == "variable_assignment":
                self.assign(c, st, ctx)
        return [st]

    def s_declaration_command(self, node, st, ctx):
        kind = node.child(0).type if node.child(0) is not None else "declare"
        export = kind == "export"
        is_array = False
        unexport = False
        for c in node.named_children:
            if c.type == "word":
                flag = ctx.ps.text(c)
                if flag.startswith("-"):
                    export = export or "x" in flag
                    is_array = is_array or "a" in flag or "A" in flag
                    unexport = "n" in flag and kind == "export"
                    continue
                name = flag
                var = st.vars.get(name)
                if var is None:
                    var = st.vars[name] = self._input_var(name, ctx.ps.span(c))
                if kind == "local":
                    # A bare `local x` makes x empty inside the function.
                    st.vars[name] = self._input_var(name, ctx.ps.span(c), empty=True)
                    var = st.vars[name]
                if export:
                    st.vars[name] = self._exported(var) if not unexport else replace(var, exported=False)
            elif c.type == "variable_name":
                name = ctx.ps.text(c)
                var = st.vars.get(name)
                if var is None:
                    var = st.vars[name] = self._input_var(name, ctx.ps.span(c))
                if export:
                    st.vars[name] = self._exported(var)
            elif c.type == "variable_assignment":
                name = self.assign(c, st, ctx)
                if name and export and name in st.vars:
                    st.vars[name] = self._exported(st.vars[name])
        return [st]

    def s_unset_command(self, node, st, ctx):
        for c in node.named_children:
            name = ctx.ps.text(c)
            if not name.startswith("-"):
                st.vars[name] = Var(scalar=None, unknown=None, site=ctx.ps.span(c))
                st.vars.pop(name, None)
        return [st]

    def s_test_command(self, node, st, ctx):
        return [st]

    def s_command(self, node, st, ctx):
        return self.command(node, st, ctx)

    # ------------------------------------------------------------------ commands
    def command(self, node, st, ctx):
        assigns_nodes = []
        name_node = node.child_by_field_name("name")
        if name_node is not None:
            name_start = name_node.start_byte
            for c in node.children:  # `VAR=x cmd`: the assignments before the name
                if c.start_byte >= name_start:
                    break
                if c.type == "variable_assignment":
                    assigns_nodes.append(c)
        arg_nodes = node.children_by_field_name("argument")
        if name_node is None:
            for a in assigns_nodes:
                self.assign(a, st, ctx)
            return [st]
        name_text = plain_name(name_node)
        if name_text in _INERT and not assigns_nodes and name_text not in st.funcs:
            args_text = ctx.ps.parse_text[name_node.end_byte : node.end_byte]
            if not _ASSIGNING.search(args_text.decode("utf-8", "replace")):
                return [st]
        words: list[Word] = []
        words.extend(self.expand_word(name_node, st, ctx))
        for a in arg_nodes:
            if a.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                continue
            words.extend(self.expand_word(a, st, ctx))
        assigns = {}
        for a in assigns_nodes:
            n = a.child_by_field_name("name")
            v = a.child_by_field_name("value")
            if n is None:
                continue
            segs = self.expand_scalar(v, st, ctx) if v is not None else ()
            assigns[ctx.ps.text(n)] = Word(resite(segs, ctx.ps.span(v)) if v is not None else ())
        span = ctx.ps.span(node)
        if not words:
            return [st]
        first = words[0].text
        if first is None and name_text is not None and not name_text.startswith("$"):
            first = name_text
        self.check_flag_as_command(node, name_node, first, ctx)
        return self.run_command(first, words, assigns, node, span, st, ctx)

    def run_command(self, first, words, assigns, node, span, st, ctx):
        args = words[1:]
        if first in ("source", "."):
            return self.do_source(args, node, st, ctx)
        if first == "eval":
            return self.do_eval(args, node, st, ctx)
        if first in ("exit",):
            st.stopped = True
            return [st]
        if first == "return":
            st.stopped = True
            st.returning = True
            return [st]
        if first == "break":
            st.stopped = True
            st.breaking = True
            return [st]
        if first == "shift":
            n = 1
            if args and args[0].text is not None and args[0].text.isdigit():
                n = int(args[0].text)
            if st.positional is not None:
                st.positional = st.positional[n:]
            return [st]
        if first == "set":
            if args and args[0].text == "--":
                st.positional = tuple(w.segments for w in args[1:]) if all(w.splat is None for w in args[1:]) else None
            return [st]
        if first == "let":
            for a in args:
                if a.text is not None:
                    try:
                        self.arith_eval(a.text, st, ctx, ctx.ps.span(node))
                    except (arith.ArithUnknown, arith.ArithError):
                        pass
            return [st]
        if first in ("read", "readarray", "mapfile", "getopts"):
            for a in args:
                t = a.text
                if t and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", t):
                    st.vars[t] = Var(unknown=Unknown(f"`{t}` is read at run time by `{first}`", span), site=span)
            return [st]
        if first in ("export", "declare", "local", "readonly", "typeset"):
            return [st]
        if first in st.funcs:
            return self.call_function(first, args, node, st, ctx)
        inner = self.shell_c(words)
        if inner is not None:
            idx, script_word = inner
            return self.do_shell_c(words, idx, script_word, assigns, node, st, ctx)
        if first is None or first not in _NOT_LAUNCH or first in ("[", "test"):
            if first not in ("[", "test"):
                self.record(words, assigns, span, st, ctx)
        return [st]

    def record(self, words, assigns, span, st, ctx):
        env = {}
        for name, var in st.vars.items():
            if var.exported:
                env[name] = self.var_word(var, name)
        st.commands.append(
            CommandRecord(tuple(words), assigns, env, span, st.cond, ctx.wrappers, st.in_loop, self.headers_stack)
        )

    def var_word(self, var: Var, name: str) -> Word:
        got = self._word_of.get(id(var))
        if got is None or got[0] is not var:
            got = self._word_of[id(var)] = (var, self._var_word(var))
        return got[1]

    def _var_word(self, var: Var) -> Word:
        if var.unknown is not None:
            return Word((Segment(None, var.site, (), var.unknown),))
        if var.scalar is not None:
            return Word(tuple(var.scalar))
        if var.array is not None:
            first = array_values(var.array)
            return Word(tuple(first[0]) if first else ())
        return Word(())

    def call_function(self, name, args, node, st, ctx):
        if ctx.depth >= MAX_CALL_DEPTH:
            return [st]
        body, ps = st.funcs[name]
        saved_pos = st.positional
        saved_vars = {k: v for k, v in st.vars.items()}
        st.positional = tuple(w.segments for w in args) if all(w.splat is None for w in args) else None
        declared_local = set()
        local_names(body, ps, declared_local)
        results = self.stmt(body, [st], Frame(ps, ctx.wrappers, ctx.depth + 1))
        out = []
        for r in results:
            r.positional = saved_pos
            if r.returning:
                r.returning = False
                r.stopped = False
            for nm in declared_local:
                if nm in saved_vars:
                    r.vars[nm] = saved_vars[nm]
                else:
                    r.vars.pop(nm, None)
            out.append(r)
        return out

    def shell_c(self, words):
        """Find `bash -c STRING` (possibly after a wrapper such as srun): returns (index, word)."""
        for i, w in enumerate(words):
            segs = w.segments
            # Most words are flags: only one whose text ends in "sh" can name a shell.
            if not segs or (segs[-1].text is not None and segs[-1].text != "" and not segs[-1].text.endswith("sh")):
                continue
            t = w.text
            if t is None:
                continue
            base = t.rsplit("/", 1)[-1]
            if base in ("bash", "sh", "zsh", "dash"):
                j = i + 1
                while j < len(words) and (words[j].text or "").startswith("-"):
                    opt = words[j].text
                    if "c" in opt[1:] and not opt.startswith("--"):
                        if j + 1 < len(words):
                            return i, words[j + 1]
                        return None
                    j += 1
                return None
        return None

    def do_shell_c(self, words, idx, script_word, assigns, node, st, ctx):
        wrapper = tuple(words[:idx])
        if script_word.splat is not None:
            # The command string is not known: keep the outer command as it is.
            self.record(words, assigns, ctx.ps.span(node), st, ctx)
            return [st]
        sub = self.reparse(script_word, ctx)
        if sub is None:
            self.record(words, assigns, ctx.ps.span(node), st, ctx)
            return [st]
        child = st.fork()
        # `bash -c` starts a new shell: only exported variables (and the prefix assignments) reach it.
        child.vars = {k: v for k, v in child.vars.items() if v.exported}
        for k, w in assigns.items():
            child.vars[k] = Var(scalar=w.segments, exported=True)
        rest = words[idx + 3 :] if idx + 2 < len(words) else []
        child.positional = tuple(w.segments for w in rest[1:]) if all(w.splat is None for w in rest[1:]) else None
        new_wrappers = ctx.wrappers + ((wrapper,) if wrapper else ())
        return algebra.effects_only(st, self.block(sub.root.children, [child], Frame(sub, new_wrappers, ctx.depth + 1)))

    def reparse(self, word: Word, ctx) -> ParsedScript | None:
        """Parse a command string as shell; positions map back when it is one literal run.
        The same string on another path (or in a loop) gets the same tree, and so shares the
        expansions remembered on it."""
        if word.splat is not None:
            return None
        key = (ctx.ps.source.path, word.partial_text)
        seen = self._reparsed.setdefault(key, [])
        for segs, ps in seen:
            if segs == word.segments:
                return ps
        self.check_reads(word.partial_text)
        ps = self._reparse(word, ctx)
        seen.append((word.segments, ps))
        return ps

    def _reparse(self, word: Word, ctx) -> ParsedScript | None:
        if word.text is None:
            # Unknown parts become variables that hold their Unknown, so the command string
            # can still be read: `--rdzv_endpoint $MASTER_ADDR:6000` stays one unknown word.
            segs = []
            for seg in word.segments:
                if seg.text is None:
                    unknown = seg.unknown or Unknown("unknown value", seg.site)
                    name = self._unknown_names.get(unknown)
                    if name is None:
                        name = self._unknown_names[unknown] = f"{UNKNOWN_PREFIX}{len(self.unknown_tokens)}"
                        self.unknown_tokens[name] = unknown
                    segs.append(Segment("${" + name + "}", seg.site))
                else:
                    segs.append(seg)
            word = Word(tuple(segs))
        text = word.text
        segs = word.segments
        origin_span = None
        if len(segs) == 1 and segs[0].site is not None and len(text) == segs[0].site.end - segs[0].site.start:
            origin_span = segs[0].site
        if origin_span is not None:
            src = self.sources.get(origin_span.path)
            if src is not None and src.text[origin_span.start : origin_span.end] == text:
                # Same characters in place: parse a copy of the file where everything else is blank,
                # so every node keeps its real line and column (and byte offset).
                prefix = (
                    src.data[: len(src.text[: origin_span.start].encode("utf-8"))]
                    if not src._ascii
                    else src.data[: origin_span.start]
                )
                padded = _BLANK.sub(b" ", prefix) + text.encode("utf-8")
                return parse_padded(src, padded)
        # Built from several pieces: each character maps back to where it was written.
        anchor = word.span
        if anchor is not None:
            ps = parse_text(anchor.path, text)
            ps.source = _MappedSource(text, segs, anchor, self.sources)
            return ps
        return parse_text(ctx.ps.source.path, text)

    def do_eval(self, args, node, st, ctx):
        if not args:
            return [st]
        if any(a.splat is not None for a in args) or all(a.text is None for a in args):
            self.record(args, {}, ctx.ps.span(node), st, ctx)
            return [st]
        if len(args) == 1:
            word = args[0]
        else:
            segs = []
            for i, a in enumerate(args):
                if i:
                    segs.append(Segment(" ", None))
                segs.extend(a.segments)
            word = Word(tuple(segs))
        sub = self.reparse(word, ctx)
        if sub is None:
            return [st]
        return self.block(sub.root.children, [st], Frame(sub, ctx.wrappers, ctx.depth + 1))

    def do_source(self, args, node, st, ctx):
        span = ctx.ps.span(node)
        if not args:
            return [st]
        target = args[0].text
        if target is None:
            self.unread(
                span,
                args[0].partial_text,
                UnreadReason.UNKNOWN_PATH,
                f"{span}: `source` of a file whose path is not known statically "
                f"({args[0].unknown}); its variables are not read",
            )
            self.mark_source_unknown(st, span, f"a file sourced at {span} whose path is not known")
            return [st]
        base_dir = os.path.dirname(os.path.abspath(ctx.ps.source.path))
        path = target if os.path.isabs(target) else os.path.normpath(os.path.join(base_dir, target))
        if not os.path.isfile(path) and not os.path.isabs(target):
            alt = os.path.normpath(os.path.join(self.script_dir, target))
            if os.path.isfile(alt):
                path = alt
        if not os.path.isfile(path):
            self.unread(
                span,
                target,
                UnreadReason.NOT_FOUND,
                f"{span}: sourced file {target} not found; its variables are not read",
            )
            self.mark_source_unknown(st, span, f"{target}, sourced at {span}, was not found")
            return [st]
        real = os.path.realpath(path)
        if (
            self.root_dir
            and not self.follow_outside_root
            and not real.startswith(self.root_dir + os.sep)
            and real != self.root_dir
        ):
            self.unread(
                span, target, UnreadReason.OUTSIDE_ROOT, f"{span}: {target} is outside the linted tree; not followed"
            )
            self.mark_source_unknown(st, span, f"{target} (sourced at {span}) is outside the linted tree")
            return [st]
        if real in self._source_stack or len(self._source_stack) > MAX_SOURCE_DEPTH:
            self.unread(
                span,
                target,
                UnreadReason.CYCLE if real in self._source_stack else UnreadReason.TOO_DEEP,
                f"{span}: {target} is already being sourced (a cycle); not followed again",
            )
            return [st]
        sub = self._parsed_files.get(real)
        if sub is None:
            try:
                if os.path.getsize(real) > MAX_SOURCE_BYTES:
                    raise _TooLarge(f"{real}: larger than {MAX_SOURCE_BYTES} bytes, not a launch script")
                with open(real, "rb") as fh:
                    data = fh.read(MAX_SOURCE_BYTES + 1)
                shown = os.path.relpath(real)
                sub = parse_file(real if shown.startswith("..") else shown, data)
            except _TooLarge as exc:
                sub = (UnreadReason.TOO_LARGE, str(exc))
            except (OSError, InputError, ValueError) as exc:
                sub = (UnreadReason.UNREADABLE, str(exc))
            self._parsed_files[real] = sub
            if not isinstance(sub, tuple):
                self.check_reads(sub.source.text)
        if isinstance(sub, tuple):
            self.unread(span, target, sub[0], f"{span}: cannot read sourced file {target}: {sub[1]}")
            self.mark_source_unknown(st, span, f"{target}, sourced at {span}, could not be read")
            return [st]
        if sub.source.path not in self.sources:
            self.sources[sub.source.path] = sub.source
            self.sourced.append(sub.source.path)
            assigned_names(sub.root, sub, self.sourced_names)
        self._source_stack.append(real)
        try:
            saved = st.positional
            if len(args) > 1:
                st.positional = tuple(w.segments for w in args[1:]) if all(w.splat is None for w in args[1:]) else None
            results = self.block(sub.root.children, [st], Frame(sub, ctx.wrappers, ctx.depth + 1))
            for r in results:
                if r.returning:
                    r.returning = False
                    r.stopped = False
                if len(args) > 1:
                    r.positional = saved
        finally:
            self._source_stack.pop()
        return results

    def unread(self, span: Span, path: str, reason: UnreadReason, note: str) -> None:
        self.notes.append(note)
        self.unread_sources.append(UnreadSource(span, path, reason, note))

    def mark_source_unknown(self, st, span, reason):
        # Variables the sourced file might set are unknown from here on, but only those the
        # script reads and never sets itself are affected: track it as a flag on the state.
        st.vars.setdefault(UNSOURCED, Var(unknown=Unknown(reason, span), site=span))

    def check_flag_as_command(self, node, name_node, first, ctx):
        if first is None or not first.startswith("--") or len(first) < 3:
            return
        if ctx.ps.root.has_error:
            return
        prev = node.prev_named_sibling
        span = ctx.ps.span(name_node)
        data = ctx.ps.parse_text
        line_start = data.rfind(b"\n", 0, name_node.start_byte)
        if line_start > 0:
            prev_start = data.rfind(b"\n", 0, line_start) + 1
            if data[prev_start:line_start].rstrip().endswith(b"\\"):
                return
        if prev is None:
            return
        self.finding(
            ShellFindingKind.FLAG_RUN_AS_COMMAND,
            span,
            f"`{first}` runs as a command: the line before it does not end in `\\`, so the "
            "command above stopped there and every flag from here on is lost",
            flag=first,
        )

    # ------------------------------------------------------------------ assignments
    def assign(self, node, st, ctx) -> str | None:
        plain = self._plain_assignment(node, st, ctx)
        if plain is not None:
            return plain
        if FAST_PATHS:
            plain = self._fast_assignment(node, st, ctx)
            if plain is not None:
                return plain
        name, var = self._memo(
            ctx.ps, ("a", node.start_byte, node.end_byte), st, lambda: self._assign_result(node, st, ctx)
        )
        if name is not None and var is not None:
            st.vars[name] = var
        return name

    def _plain_assignment(self, node, st, ctx) -> str | None:
        """`NAME=text` with nothing to expand: the value is the text where it is written.
        Returns the name, or None when the general path must take it."""
        if node.child_count != 3 or isinstance(ctx.ps.source, _MappedSource):
            return None
        name_node, eq, value_node = node.children
        if eq.type != "=" or name_node.type != "variable_name" or value_node.type not in ("word", "number"):
            return None
        raw = value_node.text
        if NOT_PLAIN.search(raw):
            return None
        name = name_node.text.decode()
        old = self._get(st, name)
        if old is not None and old.array is not None:
            return None
        st.vars[name] = Var(
            scalar=(Segment(raw.decode(), ctx.ps.span(value_node)),),
            exported=bool(old and old.exported),
            site=ctx.ps.span(node),
        )
        return name

    def _fast_assignment(self, node, st, ctx) -> str | None:
        """`NAME=value` where the value has a fast path (`${X:-1}`, `$((…))`, a plain "…"
        string): what the general path gives (_assign, expand_scalar, resite), without its
        pieces. None for anything else."""
        if node.child_count != 3 or ctx.ps.source.__class__ is not SourceFile:
            return None
        name_node, eq, value_node = node.children
        if eq.type != "=" or name_node.type != "variable_name":
            return None
        kind = value_node.type
        if kind == "expansion" or kind == "simple_expansion":
            valuer = self._ref_value
        elif kind == "arithmetic_expansion":
            valuer = self._arith_value
        elif kind == "string":
            valuer = self._string_value
        else:
            return None
        name = name_node.text.decode()
        old = self._get(st, name)
        if old is not None and old.array is not None:
            return None
        value = valuer(value_node, st, ctx)
        if value is None:
            return None
        st.vars[name] = Var(scalar=value, exported=bool(old and old.exported), site=ctx.ps.span(node))
        return name

    def _default_segments(self, node, span, st, ctx) -> tuple | None:
        """The value of `${X:-word}`, `${X-word}` or `${X:-}` (a plain word), each segment
        shown at `span` (where the expansion is written) as _expand_scalar shows it. None for
        another shape, or when X is unknown or an array: the general path takes those."""
        parts = node.children
        if len(parts) == 5:
            operand = parts[3]
            if operand.type not in ("word", "number"):
                return None
            op_raw = operand.text
            if len(op_raw) > _PLAIN_MAX or NOT_PLAIN.search(op_raw):
                return None
        elif len(parts) == 4:
            operand = None
        else:
            return None
        target, op = parts[1], parts[2].type
        if target.type != "variable_name" or op not in (":-", "-"):
            return None
        ps = ctx.ps
        inner = target.text.decode()
        if inner.startswith(UNKNOWN_PREFIX):
            return None
        var = self._get(st, inner)
        assumed = None
        if var is None:
            # Not set here: empty if the script sets it elsewhere, else an input with a default.
            if not self.is_internal(inner, ctx, span):
                self._get(st, UNSOURCED)
                assumed = f"the default in `{ps.text(node).strip()}` (the environment may set {inner})"
            use_default = True
        elif var.unknown is not None or var.array is not None:
            return None
        else:
            segs = var.scalar or ()
            use_default = op == ":-" and scalar_text(segs) == ""
        if use_default:
            if operand is None:
                return ()
            a = ps.source.char_offset(operand.start_byte)
            return (Segment(op_raw.decode(), span, (ps.source.span(a, a + len(op_raw)),), None, (), assumed),)
        if oversized(segs):
            return None
        return tuple(
            Segment(
                seg.text,
                span,
                ((seg.site,) if seg.site is not None and seg.site != span else ()) + seg.origin,
                seg.unknown,
                seg.via,
                seg.assumed,
            )
            for seg in segs
        )

    def _arith_value(self, node, st, ctx) -> tuple:
        """`$((WORLD_SIZE / TP))`: the one segment arith_expansion gives, placed as resite
        places it."""
        piece = self.arith_expansion(node, st, ctx, True, None)[0]
        assert isinstance(piece, SegmentPiece)
        seg = piece.segment
        span = ctx.ps.span(node)
        origin = ((seg.site,) if seg.site is not None and seg.site != span else ()) + seg.origin
        return (Segment(seg.text, span, origin, seg.unknown, seg.via, seg.assumed),)

    def _string_value(self, value_node, st, ctx) -> tuple | None:
        """`"…"` as a whole value: its segments, placed as resite places a lone expansion."""
        out = self._string_segments(value_node, st, ctx)
        if out is not None and is_whole_expansion(value_node):
            return resite(out, ctx.ps.span(value_node))
        return out

    def _string_segments(self, value_node, st, ctx) -> tuple | None:
        """`"--tp $TP \\<newline> --pp ${PP}"`: literal text, line continuations, plain `$X`,
        `${X}` and `${X:-word}`, valued as dq_string and _expand_scalar value them. None for
        anything else (other escapes, a `\\` before blanks, other expansions)."""
        ps = ctx.ps
        data = ps.parse_text
        source = ps.source
        parts: list = []  # (literal start, end) in bytes, or an expansion node and its start
        pos = value_node.start_byte + 1
        for c in value_node.children:
            if not c.is_named:
                continue
            t = c.type
            if t == "string_content":
                continue
            if t != "simple_expansion" and t != "expansion":
                return None
            cstart = effective_start(c, data)
            if cstart > pos:
                parts.append((pos, cstart))
            parts.append((c, cstart))
            pos = c.end_byte
        end = value_node.end_byte - 1
        if end > pos:
            parts.append((pos, end))
        out: list = []
        for a, b in parts:
            if a.__class__ is int:
                raw = data[a:b].decode("utf-8", "replace")
                start = source.char_offset(a)
                if "\\" not in raw:
                    out.append(Segment(raw, source.span(start, start + len(raw))))
                    continue
                # Only line continuations: `\\<newline>` joins the lines and is dropped.
                runs = raw.split("\\\n")
                if any("\\" in run for run in runs):
                    return None
                at = start
                for run in runs:
                    if run:
                        out.append(Segment(run, source.span(at, at + len(run))))
                    at += len(run) + 2
                continue
            got = self._ref_segments(a, b, st, ctx)
            if got is None:
                return None
            out.extend(got)
        if oversized(out):
            return None
        return tuple(out)

    def _ref_value(self, node, st, ctx) -> tuple | None:
        """`$X`, `${X}`, `$1` or `${X:-word}` as the whole value."""
        out = self._ref_segments(node, node.start_byte, st, ctx)
        return None if out is None or oversized(out) else tuple(out)

    def _ref_segments(self, node, start, st, ctx) -> list | None:
        """The expansion `node` (written from byte `start`: inside "…" its node may begin with
        the blank before it) when it is `$X`, `${X}`, `$1` or `${X:-word}`: its segments as
        _expand_scalar shows them, at the expansion. None for any other expansion."""
        span = ctx.ps.source.span_bytes(start, node.end_byte)
        m = _VALUE_REF.match(ctx.ps.parse_text, start, node.end_byte)
        if m is None:
            if node.type != "expansion" or start != node.start_byte:
                return None
            got = self._default_segments(node, span, st, ctx)
            return None if got is None else list(got)
        segs, unknown, _ = self.var_scalar((m.group(1) or m.group(2)).decode(), st, ctx, span)
        if unknown is not None:
            return [Segment(None, span, (), unknown)]
        return [
            seg
            if seg.site == span
            else Segment(
                seg.text,
                span,
                ((seg.site,) if seg.site is not None else ()) + seg.origin,
                seg.unknown,
                seg.via,
                seg.assumed,
            )
            for seg in segs
        ]

    def _assign_result(self, node, st, ctx):
        name = self._assign(node, st, ctx)
        return name, (st.vars.get(name) if name is not None else None)

    def _assign(self, node, st, ctx) -> str | None:
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        if name_node is None:
            return None
        append = any(c.type == "+=" for c in node.children)
        index = None
        if name_node.type == "subscript":
            idx_node = name_node.child_by_field_name("index")
            base = name_node.child_by_field_name("name")
            name = ctx.ps.text(base) if base is not None else ctx.ps.text(name_node)
            index = scalar_text(self.expand_scalar(idx_node, st, ctx)) if idx_node is not None else None
        else:
            name = ctx.ps.text(name_node)
        span = ctx.ps.span(node)
        old = self._get(st, name)
        exported = bool(old and old.exported)
        if value_node is not None and value_node.type == "array":
            elements = []
            for c in value_node.named_children:
                if c.type == "comment":
                    continue
                for w in self.expand_word(c, st, ctx):
                    elements.append(w)
            if any(w.splat is not None for w in elements):
                why = next(w.splat for w in elements if w.splat is not None)
                reason = why.reason if "too long" in why.reason else f"`{name}` holds the script's arguments"
                st.vars[name] = Var(unknown=Unknown(reason, span), exported=exported, site=span)
                return name
            base_arr = {}
            if append and old is not None and old.array is not None:
                base_arr = dict(old.array)
            elif append and old is not None and old.scalar is not None:
                base_arr = {"0": old.scalar}
            elif append and old is not None and old.unknown is not None:
                st.vars[name] = Var(unknown=old.unknown, exported=exported, site=span)
                return name
            if len(base_arr) + len(elements) > MAX_ARRAY:
                st.vars[name] = Var(
                    unknown=Unknown(f"`{name}` has more than {MAX_ARRAY} elements (too long to follow)", span),
                    exported=exported,
                    site=span,
                )
                return name
            start = next_index(base_arr)
            for i, w in enumerate(elements):
                base_arr[str(start + i)] = w.segments
            st.vars[name] = Var(array=base_arr, exported=exported, site=span)
            return name
        segs = self.expand_scalar(value_node, st, ctx) if value_node is not None else ()
        if value_node is not None:
            segs = resite(segs, ctx.ps.span(value_node)) if is_whole_expansion(value_node) else segs
        if index is not None or (old is not None and old.array is not None and not append):
            arr = dict(old.array) if old is not None and old.array is not None else {}
            key = index if index is not None else "0"
            if key is None:
                st.vars[name] = Var(
                    unknown=Unknown(f"`{name}` is indexed by a value not known statically", span),
                    exported=exported,
                    site=span,
                )
                return name
            if append and key in arr:
                arr[key] = tuple(arr[key]) + tuple(segs)
                if oversized(arr[key]):
                    arr[key] = (Segment(None, span, (), too_long(span)),)
            else:
                arr[key] = segs
            if len(arr) > MAX_ARRAY:
                st.vars[name] = Var(
                    unknown=Unknown(f"`{name}` has more than {MAX_ARRAY} elements (too long to follow)", span),
                    exported=exported,
                    site=span,
                )
                return name
            st.vars[name] = Var(array=arr, exported=exported, site=span)
            return name
        if append:
            if old is None:
                old_segs = ()
            elif old.unknown is not None:
                st.vars[name] = Var(unknown=old.unknown, exported=exported, site=span)
                return name
            elif old.array is not None:
                old_segs = array_values(old.array)[0] if old.array else ()
            else:
                old_segs = old.scalar or ()
            segs = tuple(old_segs) + tuple(segs)
            if oversized(segs):
                st.vars[name] = Var(unknown=too_long(span), exported=exported, site=span)
                return name
        st.vars[name] = Var(scalar=tuple(segs), exported=exported, site=span)
        return name

    def arith_statement(self, node, st, ctx, text):
        try:
            self.arith_eval(text, st, ctx, ctx.ps.span(node))
        except (arith.ArithUnknown, arith.ArithError):
            pass
        return [st]

    # ------------------------------------------------------------------ conditions
    def condition_value(self, node, st, ctx, depth=0) -> bool | None:
        """True/False when the exit status of a condition is known statically, else None."""
        if node is None or depth > MAX_CONDITION_DEPTH:
            return None
        t = node.type
        if t == "test_command":
            inner = [c for c in node.named_children]
            if len(inner) != 1:
                return None if inner else False
            return self.test_expr(inner[0], st, ctx)
        if t == "negated_command":
            inner = node.named_children
            v = self.condition_value(inner[0], st, ctx, depth + 1) if inner else None
            return None if v is None else not v
        if t == "command":
            name = node.child_by_field_name("name")
            nm = plain_name(name) if name is not None else None
            if nm in ("true", ":"):
                return True
            if nm == "false":
                return False
            if nm in ("[", "test"):
                words = []
                for i, c in enumerate(node.children):
                    if node.field_name_for_child(i) == "argument":
                        words.extend(self.expand_word(c, st, ctx))
                if nm == "[" and words and words[-1].text == "]":
                    words = words[:-1]
                return _test_words([w.text for w in words])
            return None
        if t == "compound_statement" and node.child(0) is not None and node.child(0).type == "((":
            try:
                return bool(self.arith_eval(ctx.ps.text(node)[2:-2], st.fork(), ctx, None))
            except (arith.ArithUnknown, arith.ArithError):
                return None
        if t == "list":
            named = node.named_children
            ops = [c.type for c in node.children if not c.is_named]
            if len(named) == 2 and ops:
                a = self.condition_value(named[0], st, ctx, depth + 1)
                b = self.condition_value(named[1], st, ctx, depth + 1)
                if ops[0] == "&&":
                    if a is False or b is False:
                        return False
                    return True if a and b else None
                if ops[0] == "||":
                    if a is True or b is True:
                        return True
                    return False if a is False and b is False else None
        if t == "redirected_statement":
            body = node.child_by_field_name("body")
            return self.condition_value(body, st, ctx, depth + 1)
        return None

    def test_expr(self, node, st, ctx, depth=0) -> bool | None:
        if depth > MAX_CONDITION_DEPTH:
            return None
        t = node.type
        if t == "parenthesized_expression":
            inner = node.named_children
            return self.test_expr(inner[0], st, ctx, depth + 1) if inner else None
        if t == "unary_expression":
            op_node = node.child(0)
            operand = node.named_children[-1] if node.named_children else None
            op = ctx.ps.text(op_node) if op_node is not None else ""
            if op == "!":
                v = self.test_expr(operand, st, ctx, depth + 1) if operand is not None else None
                return None if v is None else not v
            val = scalar_text(self.expand_scalar(operand, st, ctx)) if operand is not None else ""
            if op == "-z":
                return None if val is None else val == ""
            if op == "-n":
                return None if val is None else val != ""
            return None  # file tests and others depend on the machine
        if t == "binary_expression":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            op_node = node.child_by_field_name("operator")
            op = ctx.ps.text(op_node) if op_node is not None else None
            if op is None:
                for c in node.children:
                    if not c.is_named or c.type == "test_operator":
                        op = ctx.ps.text(c)
                        break
            if op in ("&&", "-a"):
                a = self.test_expr(left, st, ctx, depth + 1)
                b = self.test_expr(right, st, ctx, depth + 1)
                if a is False or b is False:
                    return False
                return True if a and b else None
            if op in ("||", "-o"):
                a = self.test_expr(left, st, ctx, depth + 1)
                b = self.test_expr(right, st, ctx, depth + 1)
                if a is True or b is True:
                    return True
                return False if a is False and b is False else None
            lv = scalar_text(self.expand_scalar(left, st, ctx)) if left is not None else None
            pattern = op in ("==", "=", "!=") and node.parent is not None and in_double_bracket(node)
            rv = scalar_text(self.expand_scalar(right, st, ctx, pattern=pattern)) if right is not None else None
            return _compare(op, lv, rv, pattern)
        if t in ("word", "string", "simple_expansion", "expansion", "concatenation", "raw_string", "number"):
            v = scalar_text(self.expand_scalar(node, st, ctx))
            return None if v is None else v != ""
        return None

    # ------------------------------------------------------------------ expansion
    def expand_scalar(self, node, st, ctx, pattern=False) -> Scalar:
        """Expand without word splitting (assignment values, case subjects, test operands)."""
        if node is None:
            return ()
        return self._memo(
            ctx.ps,
            ("s", node.start_byte, node.end_byte, node.type, pattern),
            st,
            lambda: self._expand_scalar(node, st, ctx, pattern),
        )

    def _expand_scalar(self, node, st, ctx, pattern=False) -> Scalar:
        pieces = self.pieces(node, st, ctx, quoted=True, eid=None)
        out = []
        for p in pieces:
            if isinstance(p, FieldBreak):
                out.append(Segment(" ", None))
            elif isinstance(p, Splat):
                out.append(Segment(None, p.unknown.span, (), p.unknown))
            elif isinstance(p, SegmentPiece):
                seg, eid = p.segment, p.expansion
                if eid is not None and not eid.array and seg.site != eid.span:
                    # Without splitting every expansion is one value: show it where it is written.
                    origin = ((seg.site,) if seg.site is not None else ()) + seg.origin
                    seg = Segment(seg.text, eid.span, origin, seg.unknown, seg.via, seg.assumed)
                out.append(seg)
        if oversized(out):
            span = ctx.ps.span(node)
            return (Segment(None, span, (), too_long(span)),)
        return tuple(out)

    def expand_word(self, node, st, ctx) -> list[Word]:
        """Expand one shell word into the fields it becomes (word splitting applied)."""
        t = node.type
        if t == "command_name" and node.child_count == 1:
            # `torchrun …`: the name is its one word, same span
            child = node.children[0]
            if child.type == "word":
                node, t = child, "word"
        if t in _LITERAL_WORDS:
            ps = ctx.ps
            key = (node.start_byte, node.end_byte, "w")
            cached = ps.cache.get(key)
            if cached is None:
                cached = FAST_PATHS and t != "raw_string" and self._plain_word(node, ps)
                if not cached:
                    cached = self.split(self.pieces(node, st, ctx, quoted=False, eid=None), node, ctx)
                ps.cache[key] = cached
            return list(cached)
        if FAST_PATHS:
            if t == "simple_expansion" or t == "expansion":
                got = self._scalar_word(node, st, ctx)
                if got is not None:
                    return got
            elif t == "string" and ctx.ps.source.__class__ is SourceFile:
                # "…" is one word; its expansions are shown where they are written (_split).
                segs = self._string_segments(node, st, ctx)
                if segs is not None:
                    return [Word(segs)]
        return list(
            self._memo(
                ctx.ps,
                ("w", node.start_byte, node.end_byte, node.type),
                st,
                lambda: tuple(self.split(self.pieces(node, st, ctx, quoted=False, eid=None), node, ctx)),
            )
        )

    def _plain_word(self, node, ps) -> list[Word] | None:
        """A word with nothing to expand, escape or split (`--num-layers`, `pretrain_gpt.py`):
        itself, where it is written. What the general path gives, without building pieces."""
        raw = node.text
        if len(raw) > _PLAIN_MAX or NOT_PLAIN.search(raw):
            return None
        source = ps.source
        a = source.char_offset(node.start_byte)
        if source.__class__ is SourceFile:
            return [Word((Segment(raw.decode(), source.span(a, a + len(raw))),))]
        if source.__class__ is _MappedSource:
            # In a command string: one segment when the word comes from one place (lits).
            placed = source.placed(a, a + len(raw))
            if placed is not None:
                return [Word((Segment(raw.decode(), placed[0], placed[1]),))]
        return None

    def _scalar_word(self, node, st, ctx) -> list[Word] | None:
        """`$ARGS`, `$1` or `${TP}` unquoted: split into words as `_split` splits the value
        var_scalar gives, without the general pieces. None for anything else."""
        m = _VALUE_REF.match(node.text)
        if m is None:
            return None
        span = ctx.ps.source.span_bytes(node.start_byte, node.end_byte)
        segs, unknown, _ = self.var_scalar((m.group(1) or m.group(2)).decode(), st, ctx, span)
        if unknown is not None:
            return [Word((Segment(None, span, (), unknown),))]
        if len(segs) > MAX_VALUE_SEGMENTS:
            return None
        total = 0
        for seg in segs:
            if seg.text is None:
                return None
            total += len(seg.text)
        if total > MAX_VALUE_CHARS:
            return None
        # Cut at blanks as _seg_parts and sub_segment do; each piece is (segment, start, end).
        fields: list = []
        cur: list = []
        finditer = _IFS.finditer
        for seg in segs:
            text = seg.text
            pos = 0
            for m in finditer(text):
                a = m.start()
                if a > pos:
                    cur.append((seg, pos, a))
                if cur:
                    fields.append(cur)
                    cur = []
                pos = m.end()
            if pos < len(text):
                cur.append((seg, pos, len(text)))
        if cur:
            fields.append(cur)
        if len(fields) > MAX_FIELDS:
            return None
        if len(fields) == 1:
            # One word: shown where the expansion is written, tracing back to the value.
            out = []
            for seg, a, b in fields[0]:
                site = self._sub_site(seg, a, b)
                origin = ((site,) if site is not None and site != span else ()) + seg.origin
                out.append(Segment(seg.text[a:b], span, origin, seg.unknown, seg.via, seg.assumed))
            return [Word(tuple(out))]
        # Several: each stays where its text is written, through this expansion.
        words = []
        placed: dict = {}  # id(segment) -> (span maker of its file when its text is there as it is, its start, its via)
        for f in fields:
            out = []
            for seg, a, b in f:
                got = placed.get(id(seg))
                if got is None:
                    src = self._in_place(seg)
                    got = placed[id(seg)] = (
                        src.span if src is not None else None,
                        seg.site.start if src is not None else 0,
                        seg.via if span in seg.via else seg.via + (span,),
                    )
                at, base, via = got
                text = seg.text
                if at is None or (a == 0 and b == len(text)):
                    site = seg.site
                else:
                    site = at(base + a, base + b)
                out.append(Segment(text[a:b], site, seg.origin, seg.unknown, via, seg.assumed))
            words.append(Word(tuple(out)))
        return words

    def split(self, pieces, node=None, ctx=None) -> list[Word]:
        words = self._split(pieces)
        if len(words) > MAX_FIELDS or any(oversized(w.segments) for w in words):
            span = ctx.ps.span(node) if node is not None else None
            if len(words) > MAX_FIELDS:
                return [
                    Word((), Unknown(f"more than {MAX_FIELDS} words from one expansion (too long to follow)", span))
                ]
            return [Word((Segment(None, span, (), too_long(span)),)) if oversized(w.segments) else w for w in words]
        return words

    def _split(self, pieces) -> list[Word]:
        for p in pieces:
            if not isinstance(p, SegmentPiece) or p.split or p.expansion is not None:
                break
        else:
            # Literal text only (a plain word, a quoted string): one field, as written.
            return [Word(tuple(p.segment for p in pieces))] if pieces else []
        fields: list[list] = []
        cur: list = []
        have = False
        splats: dict[int, Unknown] = {}
        for p in pieces:
            if isinstance(p, SegmentPiece):
                seg, eid = p.segment, p.expansion
                if not p.split or seg.text is None:
                    cur.append((seg, eid))
                    have = True
                    continue
                for sub in self._seg_parts(seg):
                    if sub is None:
                        if have:
                            fields.append(cur)
                        cur, have = [], False
                    else:
                        cur.append((sub, eid))
                        have = True
            elif isinstance(p, FieldBreak):
                if have:
                    fields.append(cur)
                cur, have = [], False
            elif isinstance(p, Splat):
                if have:
                    fields.append(cur)
                cur, have = [], False
                splats[len(fields)] = p.unknown
                fields.append([])
            else:  # quoted-empty
                have = True
        if have:
            fields.append(cur)
        # An expansion that produced exactly one field is shown where it is written (`$TP`);
        # one that produced several keeps each field where its text was written.
        # (eids are compared by identity: one expansion shares one eid tuple, and hashing
        # the span inside it costs more than the rest of the split.)
        count: dict = {}
        for f in fields:
            seen = None
            for _, e in f:
                if e is not None:
                    k = id(e)
                    if seen is None:
                        seen = {k}
                    elif k in seen:
                        continue
                    else:
                        seen.add(k)
                    count[k] = count.get(k, 0) + 1
        words = []
        for fi, f in enumerate(fields):
            if fi in splats:
                words.append(Word((), splats[fi]))
                continue
            segs = []
            for seg, eid in f:
                if eid is not None:
                    eid_span, is_array = eid.span, eid.array
                    if count.get(id(eid)) == 1 and not is_array:
                        origin = ((seg.site,) if seg.site is not None and seg.site != eid_span else ()) + seg.origin
                        seg = Segment(seg.text, eid_span, origin, seg.unknown, seg.via, seg.assumed)
                    elif eid_span not in seg.via:
                        seg = Segment(seg.text, seg.site, seg.origin, seg.unknown, seg.via + (eid_span,), seg.assumed)
                segs.append(seg)
            words.append(Word(tuple(segs)))
        return words

    def _seg_parts(self, seg: Segment) -> list:
        """A splittable segment cut at blanks: sub-segments, None where a field ends. The same
        segment (a value shared by several paths, or read again) is cut once."""
        got = self._parts_of.get(id(seg))
        if got is not None and got[0] is seg:
            return got[1]
        text = seg.text
        parts: list = []
        pos = 0
        for m in _IFS.finditer(text):
            if m.start() > pos:
                parts.append(self.sub_segment(seg, pos, m.start()))
            parts.append(None)
            pos = m.end()
        if pos < len(text):
            parts.append(self.sub_segment(seg, pos, len(text)))
        self._parts_of[id(seg)] = (seg, parts)
        return parts

    def sub_segment(self, seg: Segment, a: int, b: int) -> Segment:
        if a == 0 and b == len(seg.text):
            return seg
        return Segment(seg.text[a:b], self._sub_site(seg, a, b), seg.origin, seg.unknown, seg.via, seg.assumed)

    def _sub_site(self, seg: Segment, a: int, b: int) -> Span | None:
        """Where text[a:b] of a segment is written: exact when the segment's text is there as
        it is, else the segment's own site."""
        site = seg.site
        if a == 0 and b == len(seg.text):
            return site
        src = self._in_place(seg)
        return site if src is None else src.span(site.start + a, site.start + b)

    def _in_place(self, seg: Segment):
        """The source file whose text at the segment's site is the segment's text, or None."""
        site = seg.site
        if site is not None and site.end - site.start == len(seg.text) and site.path in self.sources:
            src = self.sources[site.path]
            if src.text[site.start : site.end] == seg.text:
                return src
        return None

    def pieces(self, node, st, ctx, quoted: bool, eid) -> list:
        """Pieces: SegmentPiece(Segment, splittable, eid) | FIELD_BREAK | Splat(Unknown) | QUOTED_EMPTY."""
        if self._pdepth >= MAX_EXPANSION_DEPTH:
            span = ctx.ps.span(node)
            return [
                SegmentPiece(
                    Segment.unknown_at(
                        f"expansions nested more than {MAX_EXPANSION_DEPTH} levels deep are not read", span
                    ),
                    False,
                    eid,
                )
            ]
        self._pdepth += 1
        try:
            return self._pieces(node, st, ctx, quoted, eid)
        finally:
            self._pdepth -= 1

    def _pieces(self, node, st, ctx, quoted: bool, eid) -> list:
        t = node.type
        ps = ctx.ps
        if t in ("word", "number", "extglob_pattern", "regex", "variable_name", "test_operator"):
            if quoted and t == "word":
                return self.literal(node, ctx, eid, escapes="dq-word")
            return self.literal(node, ctx, eid, escapes=None if quoted else "unquoted")
        if t == "raw_string":
            text = ps.text(node)
            inner_start = node.start_byte + 1
            span = ps.source.span_bytes(inner_start, node.end_byte - 1)
            if text == "''":
                return [QUOTED_EMPTY]
            segs = [SegmentPiece(Segment(text[1:-1], span, (), self.placeholder(node, ctx)), False, eid)]
            if segs[0].segment.unknown is not None:
                segs = [SegmentPiece(Segment(None, span, (), segs[0].segment.unknown), False, eid)]
            return segs
        if t == "ansi_c_string":
            raw = ps.text(node)[2:-1]
            return [SegmentPiece(Segment(_ansi_c(raw), ps.span(node)), False, eid)]
        if t in ("string", "translated_string"):
            return self.dq_string(node, st, ctx, eid)
        if t == "concatenation":
            out = []
            for c in node.children:
                out.extend(self.pieces(c, st, ctx, quoted, eid))
            return out
        if t == "simple_expansion":
            return self.simple_expansion(node, st, ctx, quoted, eid)
        if t == "expansion":
            return self.brace_expansion(node, st, ctx, quoted, eid)
        if t == "arithmetic_expansion":
            return self.arith_expansion(node, st, ctx, quoted, eid)
        if t == "command_substitution":
            return self.command_substitution(node, st, ctx, quoted, eid)
        if t == "process_substitution":
            return [SegmentPiece(Segment.unknown_at("a process substitution `<( )`", ps.span(node)), False, eid)]
        if t == "brace_expression":
            return self.literal(node, ctx, eid, escapes=None)
        if t == "string_content":
            return self.literal(node, ctx, eid, escapes="dq")
        if t == "array":
            return self.literal(node, ctx, eid, escapes=None)
        if node.child_count and t not in ("ERROR",):
            out = []
            for c in node.children:
                out.extend(self.pieces(c, st, ctx, quoted, eid))
            return out
        return self.literal(node, ctx, eid, escapes=None)

    def placeholder(self, node, ctx) -> Unknown | None:
        span = ctx.ps.span(node)
        for ph in ctx.ps.placeholders:
            if ph.start == span.start and ph.end == span.end:
                text = ctx.ps.source.text[ph.start : ph.end]
                return Unknown(f"unfilled template placeholder {text}", ph)
        return None

    def literal(self, node, ctx, eid, escapes) -> list:
        """Literal text of a node, with escape processing; sites stay exact where the text is."""
        ps = ctx.ps
        key = (node.start_byte, node.end_byte, escapes, eid)
        cached = ps.cache.get(key)
        if cached is None:
            cached = ps.cache[key] = self._literal(node, ctx, eid, escapes)
        return cached

    def _literal(self, node, ctx, eid, escapes) -> list:
        ps = ctx.ps
        raw = ps.text(node)
        if escapes is None or "\\" not in raw:
            a = ps.source.char_offset(node.start_byte)
            return self.lits(raw, ps, a, a + len(raw), eid)
        return self.escaped_runs(raw, ps.source.char_offset(node.start_byte), ps, eid, escapes)

    def lit(self, text: str, ps, a: int, b: int) -> Segment:
        origin = ps.source.origin(a, b) if isinstance(ps.source, _MappedSource) else ()
        return Segment(text, ps.source.span(a, b), origin)

    def lits(self, text: str, ps, a: int, b: int, eid) -> list:
        """Literal text as pieces; in a re-parsed string, one piece per place it came from."""
        if not isinstance(ps.source, _MappedSource) or len(text) != b - a:
            return [SegmentPiece(self.lit(text, ps, a, b), False, eid)]
        out = []
        for x, y in ps.source.cuts(a, b):
            out.append(SegmentPiece(self.lit(text[x - a : y - a], ps, x, y), False, eid))
        return out

    def escaped_runs(self, raw: str, start_char: int, ps, eid, escapes) -> list:
        out = []
        run_start = 0
        buf = []
        i = 0
        n = len(raw)

        def emit_run(end):
            if end > run_start:
                out.extend(self.lits(raw[run_start:end], ps, start_char + run_start, start_char + end, eid))

        while i < n:
            ch = raw[i]
            if ch == "\\" and i + 1 < n:
                nxt = raw[i + 1]
                if escapes in ("dq", "dq-word", "heredoc"):
                    if nxt not in ("$`\\\n" if escapes == "heredoc" else '$`"\\\n'):
                        i += 2
                        continue
                emit_run(i)
                if nxt != "\n":
                    out.append(
                        SegmentPiece(Segment(nxt, ps.source.span(start_char + i, start_char + i + 2)), False, eid)
                    )
                i += 2
                run_start = i
                continue
            i += 1
        emit_run(n)
        del buf
        return out

    def dq_string(self, node, st, ctx, eid) -> list:
        ps = ctx.ps
        out: list = []
        pos = node.start_byte + (2 if node.type == "translated_string" else 1)
        end = node.end_byte - 1
        data = ps.parse_text
        for c in node.children:
            if c.type in ('"', '$"') or c.type == "string_content":
                continue
            if not c.is_named:
                continue
            cstart = effective_start(c, data)
            if cstart > pos:
                out.extend(self.dq_literal(data, pos, cstart, ps, eid))
            out.extend(self.pieces(c, st, ctx, True, eid))
            pos = c.end_byte
        if end > pos:
            out.extend(self.dq_literal(data, pos, end, ps, eid))
        if not out:
            return [QUOTED_EMPTY]
        return out

    def dq_literal(self, data, a, b, ps, eid, heredoc=False) -> list:
        raw = data[a:b].decode("utf-8", "replace")
        start_char = ps.source.char_offset(a)
        if "\\" not in raw:
            return self.lits(raw, ps, start_char, start_char + len(raw), eid)
        if not heredoc:
            self.check_stray_backslash(raw, start_char, ps)
        return self.escaped_runs(raw, start_char, ps, eid, "heredoc" if heredoc else "dq")

    def check_stray_backslash(self, raw, start_char, ps):
        # Inside "…", `\` then blanks then a newline is not a continuation: a lone `\` word
        # reaches the program (argparse: "unrecognized arguments: \").
        for m in re.finditer(r"\\([ \t]+)(?=\n)", raw):
            s = start_char + m.start()
            self.finding(
                ShellFindingKind.STRAY_BACKSLASH_IN_STRING,
                ps.source.span(s, s + len(m.group(0))),
                "`\\` followed by blanks inside a double-quoted string is not a line continuation: "
                "a lone `\\` word reaches the program",
            )

    # -- variable expansions
    def env_unknown(self, name: str, span: Span | None) -> Unknown:
        if name.startswith("SLURM_"):
            return Unknown(f"${name} is set by SLURM at run time (no literal #SBATCH header gives it)", span)
        if name.startswith("PBS_"):
            return Unknown(f"${name} is set by PBS at run time", span)
        return Unknown(f"${name} is not set in the script; it comes from the environment", span)

    def var_scalar(self, name: str, st: State, ctx, span: Span) -> tuple[Scalar | None, Unknown | None, bool]:
        """(segments, unknown, is_set). is_set is False for a variable the script never set."""
        if name.isdigit():
            i = int(name)
            if i == 0:
                return (Segment(self.script_path, span),), None, True
            positional = self._pos(st)
            if positional is None:
                return None, Unknown(f"${name} is an argument given to the script", span), False
            if i - 1 < len(positional):
                return positional[i - 1], None, True
            return (), None, False
        if name.startswith(UNKNOWN_PREFIX) and name in self.unknown_tokens:
            return None, self.unknown_tokens[name], True
        var = self._get(st, name)
        if var is None and self.is_internal(name, ctx, span):
            return (), None, False
        if var is None:
            unsourced = self._get(st, UNSOURCED)
            if unsourced is not None:
                return None, Unknown(f"${name} may be set by {unsourced.unknown.reason}", span), False
            return None, self.env_unknown(name, span), False
        if var.unknown is not None:
            return None, var.unknown, True
        if var.array is not None:
            vals = array_values(var.array, only_zero=True)
            return (vals[0] if vals else ()), None, True
        return (var.scalar or ()), None, True

    def is_internal(self, name: str, ctx, span: Span | None) -> bool:
        """A variable the script sets itself (earlier in the file, on another path, or in a file
        it sourced) is empty when unset here, as bash says; only the others are inputs."""
        if name in self.sourced_names:
            return True
        path = ctx.ps.source.path
        table = self.assign_offsets.get(path)
        if table is None:
            table = self.assign_offsets[path] = _FirstAssignments(ctx.ps)
        first = table.get(name)
        return first is not None and span is not None and span.path == path and first < span.start

    def nspan(self, node, ctx) -> Span:
        return ctx.ps.source.span_bytes(effective_start(node, ctx.ps.parse_text), node.end_byte)

    def simple_expansion(self, node, st, ctx, quoted, eid):
        ps = ctx.ps
        span = self.nspan(node, ctx)
        name = ps.text(node).lstrip()[1:]
        my_eid = eid or Expansion(span, False)
        if name in ("@", "*"):
            return self.positional_all(name, st, span, quoted, eid)
        if name == "#":
            if self._pos(st) is None:
                return [
                    SegmentPiece(Segment.unknown_at("the number of arguments given to the script", span), False, my_eid)
                ]
            return [SegmentPiece(Segment(str(len(st.positional)), span), False, my_eid)]
        if name in ("?", "$", "!", "-"):
            return [SegmentPiece(Segment.unknown_at(f"${name} is only known at run time", span), False, my_eid)]
        segs, unknown, _ = self.var_scalar(name, st, ctx, span)
        if unknown is not None:
            return [SegmentPiece(Segment(None, span, (), unknown), False, my_eid)]
        return [SegmentPiece(s, not quoted, my_eid) for s in segs]

    def positional_all(self, name, st, span, quoted, eid):
        my_eid = eid or Expansion(span, True)
        if self._pos(st) is None:
            return [Splat(Unknown('the arguments given to the script ("$@")', span))]
        out = []
        for i, p in enumerate(st.positional):
            if i:
                out.append(
                    FIELD_BREAK
                    if (quoted and name == "@") or not quoted
                    else SegmentPiece(Segment(" ", span), False, my_eid)
                )
            if not p and quoted:
                out.append(QUOTED_EMPTY)
            out.extend(SegmentPiece(s, not quoted, my_eid) for s in p)
        return out

    def brace_expansion(self, node, st, ctx, quoted, eid):
        ps = ctx.ps
        span = self.nspan(node, ctx)
        children = list(node.children)
        inner = [c for c in children if c.type not in ("${", "}")]
        if not inner:
            return [SegmentPiece(Segment.unknown_at("an empty ${}", span), False, eid)]
        length = False
        indirect = False
        if inner[0].type == "#" and len(inner) > 1:
            length = True
            inner = inner[1:]
        elif inner[0].type == "!" and len(inner) > 1:
            indirect = True
            inner = inner[1:]
        target = inner[0]
        rest = inner[1:]
        is_array_all = False
        index = None
        if target.type == "subscript":
            base = target.child_by_field_name("name")
            idx = target.child_by_field_name("index")
            name = ps.text(base) if base is not None else ps.text(target)
            idx_text = ps.text(idx) if idx is not None else "0"
            if idx_text in ("@", "*"):
                is_array_all = idx_text
            else:
                index = scalar_text(self.expand_scalar(idx, st, ctx))
                ivar = self._get(st, name) if index is not None else None
                if ivar is not None and ivar.array is not None and not index.lstrip("-").isdigit():
                    pass
                elif index is not None:
                    try:
                        index = str(self.arith_eval(index, st.fork(), ctx, None)) if not index.isdigit() else index
                    except (arith.ArithUnknown, arith.ArithError):
                        pass
        elif target.type in ("variable_name", "special_variable_name", "word", "number"):
            name = ps.text(target)
        else:
            return [SegmentPiece(Segment.unknown_at(f"`{ps.text(node)}` is not understood", span), False, eid)]
        my_eid = eid or Expansion(span, bool(is_array_all and quoted))
        if indirect:
            segs, unknown, _ = self.var_scalar(name, st, ctx, span)
            ref = scalar_text(segs) if unknown is None else None
            if ref is None or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", ref):
                return [SegmentPiece(Segment.unknown_at(f"indirect expansion `{ps.text(node)}`", span), False, my_eid)]
            name = ref
        # The value, as a list of elements (arrays) or one scalar.
        if name in ("@", "*"):
            if length:
                if self._pos(st) is None:
                    return [
                        SegmentPiece(
                            Segment.unknown_at("the number of arguments given to the script", span), False, my_eid
                        )
                    ]
                return [SegmentPiece(Segment(str(len(st.positional)), span), False, my_eid)]
            if not rest:
                return self.positional_all(name, st, span, quoted, eid)
            return [
                SegmentPiece(Segment.unknown_at(f"`{ps.text(node)}` on the script's arguments", span), False, my_eid)
            ]
        var = self._get(st, name)
        if is_array_all:
            if var is not None and var.array is not None:
                elements = array_values(var.array)
            elif var is not None and var.unknown is not None:
                if length:
                    return [SegmentPiece(Segment(None, span, (), var.unknown), False, my_eid)]
                # An unknown array is any number of words, not one.
                return [Splat(Unknown(var.unknown.reason, span))]
            elif var is not None and var.scalar is not None:
                elements = [var.scalar]
            elif var is None:
                return [SegmentPiece(Segment(None, span, (), self.env_unknown(name, span)), False, my_eid)]
            else:
                elements = []
            if length:
                return [SegmentPiece(Segment(str(len(elements)), span), False, my_eid)]
            if rest:
                return [
                    SegmentPiece(
                        Segment.unknown_at(f"`{ps.text(node)}`: operators on whole arrays are not evaluated", span),
                        False,
                        my_eid,
                    )
                ]
            out = []
            for i, el in enumerate(elements):
                if i:
                    if quoted and is_array_all == "@":
                        out.append(FIELD_BREAK)
                    else:
                        out.append(SegmentPiece(Segment(" ", None), not quoted, my_eid))
                if not el and quoted:
                    out.append(QUOTED_EMPTY)
                out.extend(SegmentPiece(s, not quoted, my_eid) for s in el)
            return out
        if index is not None or target.type == "subscript":
            if var is not None and var.array is not None:
                segs = var.array.get(index) if index is not None else None
                unknown = None if segs is not None or index is None else None
                is_set = segs is not None
                if index is None:
                    unknown = Unknown(f"`{ps.text(node)}`: the index is not known", span)
                segs = segs or ()
            elif var is not None and var.unknown is not None:
                segs, unknown, is_set = None, var.unknown, True
            elif var is not None and index == "0":
                segs, unknown, is_set = var.scalar or (), None, True
            elif var is None:
                segs, unknown, is_set = None, self.env_unknown(name, span), False
            else:
                segs, unknown, is_set = (), None, False
        else:
            segs, unknown, is_set = self.var_scalar(name, st, ctx, span)
        if length:
            if unknown is not None:
                return [SegmentPiece(Segment(None, span, (), unknown), False, my_eid)]
            t = scalar_text(segs)
            if t is None:
                return [SegmentPiece(Segment.unknown_at(f"the length of `{name}`", span), False, my_eid)]
            return [SegmentPiece(Segment(str(len(t)), span, origins_of(segs)), False, my_eid)]
        if not rest:
            if unknown is not None:
                return [SegmentPiece(Segment(None, span, (), unknown), False, my_eid)]
            return [SegmentPiece(s, not quoted, my_eid) for s in segs]
        op = rest[0]
        op_text = ps.text(op) if not op.is_named else None
        operands = rest[1:]
        if op_text is None:
            return [SegmentPiece(Segment.unknown_at(f"`{ps.text(node)}` is not understood", span), False, my_eid)]
        return self.operator(op_text, operands, node, name, segs, unknown, is_set, st, ctx, quoted, my_eid, span)

    def operator(self, op, operands, node, name, segs, unknown, is_set, st, ctx, quoted, eid, span):
        ps = ctx.ps
        colon = op.startswith(":") and op != ":"
        base = op[1:] if colon else op
        if base in ("-", "=", "+", "?"):
            # The script never set it (an input from the environment or an argument): bash would
            # use the default when it is unset in the environment, which is the script's intent.
            empty = (unknown is None and scalar_text(segs) == "") if colon else False
            use_default = (not is_set) or empty
            if unknown is not None and is_set:
                return [SegmentPiece(Segment(None, span, (), unknown), False, eid)]
            operand_pieces = []
            for c in operands:
                operand_pieces.extend(self.pieces(c, st, ctx, quoted, eid))
            if base == "+":
                if unknown is not None and not is_set:
                    return []  # unset in the script: `${X:+…}` is empty, as the default convention says
                return operand_pieces if not use_default else []
            if not use_default:
                return [SegmentPiece(s, not quoted, eid) for s in segs]
            if base == "?":
                return [
                    SegmentPiece(
                        Segment(None, span, (), unknown or Unknown(f"${name} is required by the script", span)),
                        False,
                        eid,
                    )
                ]
            assumed = None
            if not is_set and unknown is not None:
                assumed = f"the default in `{ps.text(node).strip()}` (the environment may set {name})"
            result = []
            for p in operand_pieces:
                if isinstance(p, SegmentPiece) and assumed:
                    s = p.segment
                    p = SegmentPiece(
                        Segment(s.text, s.site, s.origin, s.unknown, s.via, s.assumed or assumed), p.split, p.expansion
                    )
                result.append(p)
            if not result:
                result = [QUOTED_EMPTY] if quoted else []
            if base == "=" and name and not name.isdigit():
                val = tuple(p.segment for p in result if isinstance(p, SegmentPiece))
                old = st.vars.get(name)
                self._impure = True
                st.vars[name] = Var(scalar=val, exported=bool(old and old.exported), site=span)
            return result
        if unknown is not None:
            return [SegmentPiece(Segment(None, span, (), unknown), False, eid)]
        value = scalar_text(segs)
        origin = origins_of(segs)
        if value is None:
            bad = next((s.unknown for s in segs if s.text is None), None)
            return [SegmentPiece(Segment(None, span, origin, bad or Unknown("unknown value", span)), False, eid)]
        assumed = next((s.assumed for s in segs if s.assumed), None)

        def result(text):
            return [SegmentPiece(Segment(text, span, origin, None, (), assumed), not quoted, eid)]

        if op in ("#", "##", "%", "%%"):
            pat = self.operand_text(operands, st, ctx)
            if pat is None:
                return [SegmentPiece(Segment.unknown_at(f"the pattern of `{ps.text(node)}`", span), False, eid)]
            got = strip_pattern(value, pat, op)
            if got is None:
                return [
                    SegmentPiece(
                        Segment.unknown_at(f"`{ps.text(node)}` on a value too long to match a pattern against", span),
                        False,
                        eid,
                    )
                ]
            return result(got)
        if op in ("/", "//", "/#", "/%"):
            pat_nodes, rep_nodes, seen_sep = [], [], False
            for c in operands:
                if not c.is_named and ps.text(c) == "/" and not seen_sep:
                    seen_sep = True
                    continue
                (rep_nodes if seen_sep else pat_nodes).append(c)
            pat = self.operand_text(pat_nodes, st, ctx)
            rep = self.operand_text(rep_nodes, st, ctx) if rep_nodes else ""
            if pat is None or rep is None:
                return [SegmentPiece(Segment.unknown_at(f"the pattern of `{ps.text(node)}`", span), False, eid)]
            got = replace_pattern(value, pat, rep, op)
            if got is None or len(got) > MAX_VALUE_CHARS:
                return [
                    SegmentPiece(
                        Segment.unknown_at(f"`{ps.text(node)}` on a value too long to match a pattern against", span),
                        False,
                        eid,
                    )
                ]
            return result(got)
        if op in ("^^", "^", ",,", ","):
            if operands:
                return [
                    SegmentPiece(
                        Segment.unknown_at(f"case conversion with a pattern `{ps.text(node)}`", span), False, eid
                    )
                ]
            if op == "^^":
                return result(value.upper())
            if op == ",,":
                return result(value.lower())
            if op == "^":
                return result(value[:1].upper() + value[1:])
            return result(value[:1].lower() + value[1:])
        if op == ":":
            raw = ps.text(node)
            body = raw[2:-1]
            k = body.find(":")
            spec = body[k + 1 :]
            parts = _split_top(spec, ":")
            try:
                off = self.arith_eval(parts[0], st.fork(), ctx, None) if parts[0].strip() else 0
                ln = self.arith_eval(parts[1], st.fork(), ctx, None) if len(parts) > 1 else None
            except arith.ArithUnknown as exc:
                return [SegmentPiece(Segment.unknown_at(f"the offset of `{raw}`: {exc.reason}", span), False, eid)]
            except arith.ArithError:
                return [
                    SegmentPiece(Segment.unknown_at(f"`{raw}` is not a valid substring expansion", span), False, eid)
                ]
            if off < 0:
                off = max(0, len(value) + off)
            if ln is None:
                return result(value[off:])
            if ln < 0:
                return result(value[off : len(value) + ln])
            return result(value[off : off + ln])
        if op == "@":
            return [SegmentPiece(Segment.unknown_at(f"the transformation `{ps.text(node)}`", span), False, eid)]
        return [SegmentPiece(Segment.unknown_at(f"`{ps.text(node)}` is not understood", span), False, eid)]

    def operand_text(self, nodes, st, ctx) -> str | None:
        parts = []
        for c in nodes:
            for p in self.pieces(c, st, ctx, True, None):
                if isinstance(p, SegmentPiece):
                    if p.segment.text is None:
                        return None
                    parts.append(p.segment.text)
        return "".join(parts)

    def arith_expansion(self, node, st, ctx, quoted, eid):
        ps = ctx.ps
        span = self.nspan(node, ctx)
        raw = ps.text(node).lstrip()
        inner = raw[3:-2] if raw.startswith("$((") else raw[2:-1]
        origins: list[Span] = []
        assumed: list[str] = []
        try:
            value = self.arith_eval(inner, st, ctx, span, origins, assumed, node=node)
        except arith.ArithUnknown as exc:
            return [SegmentPiece(Segment(None, span, tuple(origins), Unknown(exc.reason, span)), False, eid)]
        except arith.ArithError as exc:
            self.finding(ShellFindingKind.ARITHMETIC_ERROR, span, f"bash would fail here: {exc}")
            return [SegmentPiece(Segment.unknown_at(f"bash fails on `{raw}`: {exc}", span), False, eid)]
        return [
            SegmentPiece(
                Segment(str(value), span, tuple(origins), None, (), assumed[0] if assumed else None),
                not quoted,
                eid or Expansion(span, False),
            )
        ]

    def arith_eval(self, text, st, ctx, span, origins=None, assumed=None, node=None) -> int:
        """Evaluate bash arithmetic; `$X`, `${X}` and `$(( ))` inside are expanded first."""
        if "$" in text or "`" in text:
            text = self.expand_arith_text(text, st, ctx, span, origins, assumed, node)

        nesting = [0]

        def lookup(name):
            seen = set()
            cur = name
            while True:
                segs, unknown, is_set = self.var_scalar(cur, st, ctx, span)
                if unknown is not None:
                    raise arith.ArithUnknown(unknown.reason)
                if origins is not None:
                    for s in segs:
                        if s.site is not None:
                            origins.append(s.site)
                        origins.extend(s.origin)
                        if assumed is not None and s.assumed:
                            assumed.append(s.assumed)
                val = scalar_text(segs)
                if val is None:
                    bad = next((s.unknown for s in segs if s.text is None), None)
                    raise arith.ArithUnknown(bad.reason if bad else f"${cur} is not known")
                val = val.strip()
                if not val:
                    return 0
                try:
                    return arith.parse_int(val)
                except ValueError as exc:
                    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", val) and val not in seen:
                        seen.add(val)
                        cur = val
                        continue
                    # A value that is itself an expression (`X='Y+1'`) is evaluated in turn;
                    # bash stops self-reference with "expression recursion level exceeded".
                    if nesting[0] >= 8:
                        raise arith.ArithUnknown(f"${cur} refers to itself through arithmetic") from exc
                    nesting[0] += 1
                    try:
                        return arith.evaluate(val, lookup)
                    finally:
                        nesting[0] -= 1

        def assign(name, value):
            self._impure = True
            old = st.vars.get(name)
            st.vars[name] = Var(scalar=(Segment(str(value), span),), exported=bool(old and old.exported), site=span)

        return arith.evaluate(text, lookup, assign)

    def expand_arith_text(self, text, st, ctx, span, origins, assumed, node):
        if FAST_PATHS:
            got = self._arith_refs(text, st, origins, assumed)
            if got is not None:
                return got
        # Parse the expression's `$` parts with tree-sitter's word rules: wrap it as a string.
        key = (ctx.ps.source.path, text)
        sub = self._arith_parsed.get(key)
        if sub is None:
            sub = self._arith_parsed[key] = parse_text(ctx.ps.source.path, '"' + text.replace('"', " ") + '"')
        string_node = sub.root.named_children[0] if sub.root.named_children else None
        while string_node is not None and string_node.type not in ("string",):
            string_node = string_node.named_children[0] if string_node.named_children else None
        if string_node is None:
            raise arith.ArithUnknown(f"`{text}` could not be read")
        pieces = self.pieces(string_node, st, Frame(sub, ctx.wrappers, ctx.depth), True, None)
        out: list = []
        _arith_texts([p.segment for p in pieces if isinstance(p, SegmentPiece)], origins, assumed, out)
        return "".join(out)

    def _arith_refs(self, text, st, origins, assumed) -> str | None:
        """`$GPUS*$NNODES`: each `$X`/`${X}` of a variable the script has set to text, replaced
        by it, as the general path (a parse of the expression as a string) gives. None when
        there is anything else to expand or escape, or a variable is unset, unknown or an array."""
        if "`" in text or "\\" in text or '"' in text or "$(" in text:
            return None
        out = []
        pos = 0
        for m in _ARITH_REF.finditer(text):
            name = m.group(1) or m.group(2)
            if name is None or name.startswith(UNKNOWN_PREFIX):
                return None  # `$` not followed by a plain name: the general path knows
            var = self._get(st, name)
            if var is None or var.unknown is not None or var.array is not None:
                return None
            out.append(text[pos : m.start()])
            _arith_texts(var.scalar or (), origins, assumed, out)
            pos = m.end()
        out.append(text[pos:])
        return "".join(out)

    def command_substitution(self, node, st, ctx, quoted, eid):
        ps = ctx.ps
        span = self.nspan(node, ctx)
        raw = ps.text(node).lstrip()
        inner = raw[2:-1] if raw.startswith("$(") else raw[1:-1]
        inner_s = inner.strip()
        my_eid = eid or Expansion(span, False)
        # Pure idioms whose value is known without running anything.
        if re.fullmatch(
            r"""(cd\s+)?"?\$\(\s*dirname\s+"?(\$0|\$\{0\}|\$\{BASH_SOURCE(\[0\])?\}|\$BASH_SOURCE)"?\s*\)"?(\s*(&&|;)\s*pwd(\s+-P)?)?""",
            inner_s,
        ) or re.fullmatch(
            r"""dirname\s+"?(\$0|\$\{0\}|\$\{BASH_SOURCE(\[0\])?\}|\$BASH_SOURCE|\$\(\s*(realpath|readlink\s+-f)\s+"?(\$0|\$\{BASH_SOURCE(\[0\])?\})"?\s*\))"?""",
            inner_s,
        ):
            d = os.path.dirname(os.path.abspath(ps.source.path)) if ps.source.path else self.script_dir
            return [SegmentPiece(Segment(d, span), not quoted, my_eid)]
        if re.fullmatch(r"pwd(\s+-P)?", inner_s):
            return [SegmentPiece(Segment.unknown_at("the working directory at run time (`pwd`)", span), False, my_eid)]
        m = re.fullmatch(r"(echo|printf\s+['\"]?%s['\"]?)\s+(.*)", inner_s, re.S)
        if m and not re.search(r"[|;&<>`]|\$\(", m.group(2)):
            sub = self.reparse_inner(node, ctx)
            if sub is not None:
                cmd = sub
                words = []
                for i, c in enumerate(cmd.children):
                    if cmd.field_name_for_child(i) == "argument":
                        words.extend(self.expand_word(c, st, ctx))
                if inner_s.startswith("printf"):
                    words = words[1:]
                if all(w.text is not None for w in words) and not any(
                    (w.text or "").startswith("-") for w in words[:1]
                ):
                    text = " ".join(w.text for w in words)
                    origin = tuple(sp for w in words for sp in ((w.span,) if w.span else ()) + w.origins)
                    return [SegmentPiece(Segment(text, span, origin), not quoted, my_eid)]
        m = re.fullmatch(r"expr\s+(.*)", inner_s)
        if m:
            return [SegmentPiece(Segment.unknown_at(f"the output of `{inner_s}`", span), False, my_eid)]
        what = inner_s.split()[0] if inner_s.split() else ""
        why = f"the output of `{inner_s[:60]}`, only known at run time"
        if what == "nvidia-smi":
            why = f"queried from the GPU at run time (`{inner_s[:60]}`)"
        elif "scontrol" in inner_s:
            why = f"asked of SLURM at run time (`{inner_s[:60]}`)"
        return [SegmentPiece(Segment.unknown_at(why, span), False, my_eid)]

    def reparse_inner(self, node, ctx):
        for c in node.named_children:
            if c.type == "command":
                return c
        return None


class _MappedSource:
    """The text of a command string assembled from several places (`eval "$LAUNCHER $CMD"`):
    offsets are those of the assembled text, spans point back to where each part was written."""

    def __init__(self, text: str, segs, anchor: Span, sources: dict):
        from megalint.source import SourceFile

        self._own = SourceFile(anchor.path, text)
        self.path = anchor.path
        self.text = text
        self.data = self._own.data
        self.anchor = anchor
        self._pieces = []  # (start, end, site, exact)
        pos = 0
        for seg in segs:
            n = len(seg.text or "")
            # A value expanded inside the string was re-sited to its `$X`; where its characters
            # were written is the first link of its origin.
            site, exact, rest = (seg.origin[0] if seg.origin else seg.site), False, seg.origin[1:]
            for k, cand in enumerate((seg.site,) + tuple(seg.origin[:1])):
                if (
                    cand is not None
                    and cand.end - cand.start == n
                    and cand.path in sources
                    and sources[cand.path].text[cand.start : cand.end] == seg.text
                ):
                    site, exact, rest = cand, True, seg.origin[k:] if k else seg.origin
                    break
            self._pieces.append((pos, pos + n, site, exact, tuple(rest)))
            pos += n
        self._sources = sources
        self._starts = [p[0] for p in self._pieces]

    def char_offset(self, byte_offset: int) -> int:
        return self._own.char_offset(byte_offset)

    def position(self, char_offset: int):
        return self._own.position(char_offset)

    def line_text(self, line: int) -> str:
        return self._own.line_text(line)

    def _index(self, offset: int, end: bool) -> int | None:
        i = bisect.bisect_right(self._starts, offset - 1 if end else offset) - 1
        while 0 <= i < len(self._pieces):
            start, stop = self._pieces[i][0], self._pieces[i][1]
            if start <= offset < stop or (end and start < offset <= stop):
                return i
            if start > offset:
                return None
            i += 1
        return None

    def _at(self, offset: int, end: bool):
        i = self._index(offset, end)
        if i is None:
            return None, None, False
        start, _stop, site, exact, _ = self._pieces[i]
        return start, site, exact

    def cuts(self, a: int, b: int) -> list:
        """[a, b) cut where the characters come from different places."""
        out = []
        i = self._index(a, False)
        while i is not None and i < len(self._pieces):
            start, stop = self._pieces[i][0], self._pieces[i][1]
            if start >= b:
                break
            x, y = max(a, start), min(b, stop)
            if x < y:
                out.append((x, y))
            i += 1
        return out or [(a, b)]

    def placed(self, a: int, b: int) -> tuple | None:
        """(span, origin) of [a, b) when its characters come from one place, else None."""
        i = self._index(a, False)
        if i is None or b > self._pieces[i][1]:
            return None
        return self.span(a, b), self._pieces[i][4]

    def origin(self, a: int, b: int) -> tuple:
        """Where the characters [a, b) came from before they were written where `span` says."""
        i = self._index(a, False)
        if i is None:
            return ()
        start, stop, _site, _exact, rest = self._pieces[i]
        return rest if b <= stop else ()

    def span(self, a: int, b: int) -> Span:
        s0, site_a, exact_a = self._at(a, False)
        s1, site_b, exact_b = self._at(b, True)
        if site_a is None or site_b is None:
            return site_a or site_b or self.anchor
        src_a = self._sources.get(site_a.path)
        start = site_a.start + (a - s0) if exact_a else site_a.start
        end = site_b.start + (b - s1) if exact_b else site_b.end
        if site_a.path == site_b.path and src_a is not None and start <= end:
            return src_a.span(start, end)
        return site_a

    def span_bytes(self, a: int, b: int) -> Span:
        return self.span(self.char_offset(a), self.char_offset(b))


# ---------------------------------------------------------------------- small pure helpers


def _arith_texts(segs, origins, assumed, out: list) -> None:
    """The texts of the segments an expansion gives inside `$(( ))`, with where they came from;
    an unknown one makes the expression unknown."""
    for seg in segs:
        if seg.text is None:
            raise arith.ArithUnknown(seg.unknown.reason if seg.unknown else "unknown value")
        if origins is not None:
            origins.extend(seg.origin)
        if assumed is not None and seg.assumed:
            assumed.append(seg.assumed)
        out.append(seg.text)


def _split_top(text: str, sep: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def _ansi_c(raw: str) -> str:
    try:
        return bytes(raw, "utf-8").decode("unicode_escape")
    except UnicodeDecodeError:
        return raw


_INT = re.compile(r"\s*[-+]?\d+\s*")


def _compare(op, lv, rv, pattern) -> bool | None:
    if lv is None or rv is None:
        return None
    if op in ("=", "=="):
        return glob_match(rv, lv) if pattern else lv == rv
    if op == "!=":
        return (not glob_match(rv, lv)) if pattern else lv != rv
    if op in ("-eq", "-ne", "-lt", "-le", "-gt", "-ge"):
        if not (_INT.fullmatch(lv) and _INT.fullmatch(rv)):
            return None
        a, b = int(lv), int(rv)
        return {"-eq": a == b, "-ne": a != b, "-lt": a < b, "-le": a <= b, "-gt": a > b, "-ge": a >= b}[op]
    if op == "<":
        return lv < rv
    if op == ">":
        return lv > rv
    if op == "=~":
        # A group under a quantifier can backtrack for ever on a long subject: not decided.
        if len(lv) > 4096 or len(rv) > 256 or re.search(r"\)[*+?{]", rv):
            return None
        try:
            return re.search(rv, lv) is not None
        except (re.error, RecursionError, OverflowError):
            return None
    return None


def _test_words(words: list) -> bool | None:
    """`[ … ]` / `test …` over expanded words (None for an unknown word)."""
    if not words:
        return False
    if words[0] == "!":
        v = _test_words(words[1:])
        return None if v is None else not v
    for i, w in enumerate(words):
        if w in ("-a", "-o") and 0 < i < len(words) - 1:
            a, b = _test_words(words[:i]), _test_words(words[i + 1 :])
            if w == "-a":
                if a is False or b is False:
                    return False
                return True if a and b else None
            if a is True or b is True:
                return True
            return False if a is False and b is False else None
    if len(words) == 1:
        return None if words[0] is None else words[0] != ""
    if len(words) == 2:
        op, v = words
        if op == "-z":
            return None if v is None else v == ""
        if op == "-n":
            return None if v is None else v != ""
        return None
    if len(words) == 3:
        return _compare(words[1], words[0], words[2], False)
    return None


class _FirstAssignments:
    """name -> the character offset from which the script has set it (its first assignment's
    end, or the start of the first loop over it). Worked out per name on first ask: a script
    asks about the few inputs it reads, not about every name it assigns."""

    def __init__(self, ps):
        self.ps = ps
        self._by_name: dict | None = None
        self._found: dict = {}

    def get(self, name: str) -> int | None:
        if name in self._found:
            return self._found[name]
        by_name = self._by_name
        if by_name is None:
            # names as written (bytes): a variable's name is ASCII, so its str encodes to them
            by_name = self._by_name = {}
            for start, raw in self.ps.assigned_names().items():
                by_name.setdefault(raw, []).append(start)
        first = None
        nodes = self.ps.assigned_nodes()
        for start in by_name.get(name.encode("utf-8", "replace"), ()):
            node, loop = nodes[start]
            # `X=${X:-1}` reads X before setting it: an assignment counts from its end (it
            # starts where its name does); a loop sets its variable from the loop's start.
            at = node.parent.start_byte if loop else node.parent.end_byte
            if first is None or at < first:
                first = at
        if first is not None:
            first = self.ps.source.char_offset(first)
        self._found[name] = first
        return first


def facts_from_states(ev: Evaluator, ps: ParsedScript, states: list[State], headers, findings, comments) -> ScriptFacts:
    paths = []
    for s in states:
        variables = {}
        for name, var in s.vars.items():
            if name.startswith("__megalint"):
                continue
            arr = None
            if var.array is not None:
                arr = tuple(Word(tuple(v)) for v in array_values(var.array))
            variables[name] = VariableFact(
                name, None if var.unknown else ev.var_word(var, name), var.unknown, var.exported, arr
            )
        paths.append(PathFacts(s.cond, s.commands, variables))
    return ScriptFacts(
        ps.source.path, dict(ev.sources), paths, headers, findings, comments, ev.sourced, ev.notes, ev.unread_sources
    )
