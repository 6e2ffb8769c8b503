"""Bind a Megatron-LM argv to a flag catalogue the way argparse would.

Megatron builds `argparse.ArgumentParser(allow_abbrev=False)` (arguments.py:117@HEAD) and calls
`parse_args`, so:

* an option string is recognised only when written in full (`--hidden` is not `--hidden-size`,
  `--hidden_size` is unknown); `--flag=value` gives the value in the same word;
* a word starting with `-` is an option unless it looks like a negative number or contains a
  space; an option that takes one value never takes the next word when that word is an option
  (`--lr --bf16` is "expected one argument");
* the last occurrence of a flag wins; `store_true`/`store_false`/`store_const` take no value and
  refuse `--flag=value`; `BooleanOptionalAction` sets False for its `--no-...` spellings;
* a value is converted with the action's `type` (Python's own `int`/`float`; `bool("False")` is
  True) and then checked against `choices`; `nargs` `?`, `*`, `+` and N take that many words;
* anything left over ("unrecognized arguments") stops the job before it starts.

What the evaluator could not know stays unknown here: an unknown value word gives an unknown
value with its reason; a splat word (`"$@"`, any number of unknown words) is recorded in
`passthrough` and binding goes on, since what it holds cannot be told. Binding reports problems
as data; rules decide which become findings.

`argv` is the list of words after the entry point (`pretrain_gpt.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from megalint.megatron.argparse_tokens import NEG_NEW, NEG_OLD, Token, classify, expected, nargs_range
from megalint.megatron.argv_words import join_spans
from megalint.megatron.bound import BoundArg, BoundArgs, Occurrence, Passthrough, Problem, ProblemKind
from megalint.megatron.catalogue import Catalogue, FlagSpec
from megalint.megatron.convert import FALSY, InvalidValue, convert, evaluate_default
from megalint.megatron.sizes import placeholder, size_problem
from megalint.shell.values import Unknown, Word
from megalint.source import Span

__all__ = ["bind"]


class _Binder:
    def __init__(self, argv: Sequence[Word], cat: Catalogue):
        self.cat = cat
        self.argv = tuple(argv)
        self.problems: list[Problem] = []
        self.passthrough: list[Passthrough] = []
        self.occ: dict[str, list[Occurrence]] = {}
        toks: list[Token] = []
        dashdash = False
        for i, w in enumerate(self.argv):
            tok = classify(w, i, cat, dashdash)
            if tok.kind == "-":
                dashdash = True
            toks.append(tok)
        self.toks = toks

    def problem(self, kind: ProblemKind, message: str, span: Span | None, **kw: Any) -> None:
        self.problems.append(Problem(kind, message, span, **kw))

    def _following(self, i: int) -> list[Token]:
        """The argument-like tokens after position i (values an unknown flag may have)."""
        out = []
        j = i + 1
        while j < len(self.toks) and self.toks[j].kind in ("A", "X"):
            out.append(self.toks[j])
            j += 1
        return out

    def run(self) -> None:
        i = 0
        toks = self.toks
        while i < len(toks):
            tok = toks[i]
            k = tok.kind
            if k == "S":
                self.passthrough.append(
                    Passthrough(tok.word, i, str(tok.word.splat) or "any number of unknown words", (), True)
                )
                i += 1
            elif k == "-":
                rest = [t.word for t in toks[i + 1 :]]
                if rest:
                    spans = [w.span for w in rest if w.span is not None]
                    self.problem(
                        ProblemKind.POSITIONAL,
                        "unrecognized arguments: "
                        + " ".join(w.partial_text for w in rest)
                        + " (after `--` every word is positional; Megatron takes none)",
                        join_spans(spans[0], spans[-1]) if spans else None,
                        words=(tok.word, *rest),
                    )
                i = len(toks)
            elif k == "A":
                j = i
                while j < len(toks) and toks[j].kind == "A":
                    j += 1
                words = [t.word for t in toks[i:j]]
                spans = [w.span for w in words if w.span is not None]
                self.problem(
                    ProblemKind.POSITIONAL,
                    "unrecognized arguments: " + " ".join(w.partial_text for w in words),
                    join_spans(spans[0], spans[-1]) if spans else None,
                    words=tuple(words),
                    value=" ".join(w.partial_text for w in words),
                )
                i = j
            elif k in ("X", "U"):
                follow = self._following(i)
                reason = tok.word.unknown.reason if tok.word.unknown else "unknown word"
                where = (
                    "a flag whose name is not known"
                    if k == "U"
                    else "a word that is not known, where a flag is expected"
                )
                self.passthrough.append(Passthrough(tok.word, i, f"{where}: {reason}", tuple(t.word for t in follow)))
                i += 1 + len(follow)
            elif k == "H":
                self.problem(
                    ProblemKind.HELP,
                    f"{tok.option} makes argparse print the help and exit with status 0: the job trains nothing",
                    tok.flag_span,
                    words=(tok.word,),
                    option=tok.option,
                )
                i += 1
            elif tok.spec is None:
                i = self._unknown_flag(i)
            else:
                i = self._known_flag(i)

    def _unknown_flag(self, i: int) -> int:
        tok = self.toks[i]
        follow = self._following(i)
        words = (tok.word, *(t.word for t in follow))
        opt = tok.option or ""
        shown = " ".join(w.partial_text for w in words)
        suggestions = tuple(self.cat.suggest(opt))
        history = self.cat.history(opt)
        if history.known and history.relation(self.cat.version) != "present":
            msg = f"unrecognized arguments: {shown} ({history.describe(self.cat.version)})"
            self.problem(
                ProblemKind.OTHER_VERSION,
                msg,
                tok.flag_span,
                words=words,
                option=opt,
                suggestions=suggestions,
                history=history,
            )
        else:
            msg = f"unrecognized arguments: {shown}"
            if suggestions:
                msg += f" (did you mean {' or '.join(suggestions)}?)"
            self.problem(ProblemKind.UNKNOWN_FLAG, msg, tok.flag_span, words=words, option=opt, suggestions=suggestions)
        return i + 1 + len(follow)

    def _known_flag(self, i: int) -> int:
        tok = self.toks[i]
        spec = tok.spec
        assert spec is not None and tok.option is not None
        opt = tok.option
        if spec.deprecated:
            self.problem(
                ProblemKind.DEPRECATED,
                f"{opt} is deprecated: {spec.deprecated}",
                tok.flag_span,
                words=(tok.word,),
                option=opt,
                dest=spec.dest,
            )
        if not spec.takes_value:
            value = self._const(spec, opt)
            if tok.explicit is not None:
                shown = tok.explicit_text if tok.explicit_text is not None else tok.explicit.partial_text
                self.problem(
                    ProblemKind.UNEXPECTED_VALUE,
                    f"argument {opt}: ignored explicit argument {shown!r}",
                    tok.explicit.span or tok.flag_span,
                    words=(tok.word,),
                    option=opt,
                    dest=spec.dest,
                    value=shown,
                )
            self._record(Occurrence(opt, spec, tok.word, tok.flag_span, (), value, i, tok.explicit is not None))
            return i + 1

        lo, hi = nargs_range(spec)
        if tok.explicit is not None:
            values = [self._value_tok(tok)]
            nxt = i + 1
            if lo > 1:
                self.problem(
                    ProblemKind.MISSING_VALUE,
                    f"argument {opt}: {expected(spec)}",
                    tok.flag_span,
                    words=(tok.word,),
                    option=opt,
                    dest=spec.dest,
                )
                self._record(
                    Occurrence(
                        opt,
                        spec,
                        tok.word,
                        tok.flag_span,
                        (tok.explicit,),
                        Unknown(f"{opt} lacks values", tok.flag_span),
                        i,
                        True,
                    )
                )
                return nxt
        else:
            values = []
            j = i + 1
            while j < len(self.toks) and (hi is None or len(values) < hi):
                t = self.toks[j]
                if t.kind in ("A", "X", "S"):
                    values.append(t)
                    j += 1
                    if t.kind == "S" and hi is not None:
                        break
                else:
                    break
            nxt = j
        splat = next((t for t in values if t.kind == "S"), None)
        if splat is not None:
            self.passthrough.append(Passthrough(splat.word, splat.index, str(splat.word.splat), (), True))
        if len(values) < lo and splat is None:
            self.problem(
                ProblemKind.MISSING_VALUE,
                f"argument {opt}: {expected(spec)}",
                tok.flag_span,
                words=(tok.word,),
                option=opt,
                dest=spec.dest,
            )
            self._record(
                Occurrence(
                    opt,
                    spec,
                    tok.word,
                    tok.flag_span,
                    tuple(t.word for t in values),
                    Unknown(f"{opt} was given without its value", tok.flag_span),
                    i,
                )
            )
            return nxt

        converted: list[Any] = []
        unknown: Unknown | None = None
        for t in values:
            v = self._value(spec, opt, t)
            if isinstance(v, Unknown) and unknown is None:
                unknown = v
            converted.append(v)
        if spec.nargs in (None, "?") and spec.action in ("store", "append"):
            if not values:
                value = spec.const
            else:
                value = converted[0]
        else:
            value = unknown if unknown is not None else tuple(converted)
        if splat is not None and not isinstance(value, Unknown):
            value = Unknown(f"the value of {opt} depends on {splat.word.partial_text}", splat.word.span)
        elif spec.nargs not in (None, "?") and unknown is not None:
            value = unknown
        self._record(
            Occurrence(
                opt,
                spec,
                tok.word,
                tok.flag_span,
                tuple(t.word for t in values),
                value,
                i,
                tok.explicit is not None,
            )
        )
        return nxt

    def _value_tok(self, tok: Token) -> Token:
        # The "=value" part as a token of its own, so it converts like a separate word.
        assert tok.explicit is not None
        return Token("A", tok.explicit, tok.index, tok.explicit_text, from_equals=True)

    def _value(self, spec: FlagSpec, opt: str, t: Token) -> Any:
        if t.kind == "S":
            return Unknown(f"the value of {opt} comes from {t.word.partial_text}", t.word.span)
        text = t.text if t.text is not None else t.word.text
        if text is None:
            u = t.word.unknown
            reason = u.reason if u else "unknown value"
            return Unknown(reason, (u.span if u and u.span else None) or t.word.span)
        if not t.from_equals and NEG_NEW.match(text) and not NEG_OLD.match(text) and " " not in text:
            self.problem(
                ProblemKind.NEGATIVE_NUMBER,
                f"argument {opt}: argparse before Python 3.14 reads {text!r} as an "
                f"option and fails with 'expected one argument'; write {opt}={text}",
                t.word.span,
                words=(t.word,),
                option=opt,
                dest=spec.dest,
                value=text,
            )
        try:
            value = convert(spec, opt, text)
        except InvalidValue as exc:
            self.problem(exc.kind, exc.message, t.word.span, words=(t.word,), option=opt, dest=spec.dest, value=text)
            return Unknown(exc.message, t.word.span)
        held = placeholder(spec.dest, value)
        if held is not None:
            return Unknown(held, t.word.span)
        invalid = size_problem(spec.dest, opt, value)
        if invalid is not None:
            # Megatron stops on it before training; nothing is derived from it.
            self.problem(
                ProblemKind.INVALID_SIZE, invalid, t.word.span, words=(t.word,), option=opt, dest=spec.dest, value=text
            )
            return Unknown(invalid, t.word.span)
        for choice, note in spec.deprecated_choices:
            if value == choice:
                self.problem(
                    ProblemKind.DEPRECATED,
                    f"{opt} {text} is deprecated: {note}",
                    t.word.span,
                    words=(t.word,),
                    option=opt,
                    dest=spec.dest,
                    value=text,
                )
        if spec.type == "bool" and text.strip().lower() in FALSY:
            self.problem(
                ProblemKind.BOOL_STRING,
                f"argument {opt}: {text!r} is True: the flag's type is bool, and "
                f"bool() of any non-empty string is True",
                t.word.span,
                words=(t.word,),
                option=opt,
                dest=spec.dest,
                value=text,
            )
        return value

    @staticmethod
    def _const(spec: FlagSpec, opt: str) -> Any:
        if spec.action == "store_true":
            return True
        if spec.action == "store_false":
            return False
        if spec.action == "boolean_optional":
            # argparse.BooleanOptionalAction.__call__: not option_string.startswith('--no-')
            return not opt.startswith("--no-")
        return spec.const

    def _record(self, occ: Occurrence) -> None:
        self.occ.setdefault(occ.spec.dest, []).append(occ)

    def finish(self) -> BoundArgs:
        # The dests not given (nearly all of a catalogue's hundreds) share one BoundArg each per
        # catalogue: nothing changes a BoundArg once bound, and a file of a thousand launches
        # would otherwise hold a hundred megabytes of identical ones.
        args = dict(default_args(self.cat))
        index = default_index(self.cat)
        # The dests given, in the catalogue's order (that of the problems found on the way).
        own: list[str] = []
        for at in sorted(index[dest] for dest in self.occ if dest in index):
            dest, first, default = _defaults(self.cat)[at]
            own.append(dest)
            occs = self.occ[dest]
            arg = BoundArg(dest, first, default, default)
            arg.given = True
            arg.occurrences = occs
            arg.spec = occs[-1].spec
            arg.value = self._final(first, default, occs)
            accumulating = all(o.spec.action in ("append", "append_const", "count") for o in occs)
            if len(occs) > 1 and not accumulating:
                last = occs[-1]
                earlier = tuple(o.flag_span for o in occs[:-1] if o.flag_span is not None)
                shown = ", ".join(
                    o.flag.partial_text if not o.values else f"{o.option} {' '.join(w.partial_text for w in o.values)}"
                    for o in occs
                )
                self.problem(
                    ProblemKind.REPEATED_FLAG,
                    f"{dest} is set {len(occs)} times ({shown}); the last one wins",
                    last.flag_span,
                    words=tuple(o.flag for o in occs),
                    option=last.option,
                    dest=dest,
                    related=earlier,
                )
            args[dest] = arg
        self.problems.sort(key=lambda p: _order(p, self.argv))
        return BoundArgs(self.cat.version, self.cat, args, self.problems, self.passthrough, self.argv, own=tuple(own))

    @staticmethod
    def _final(first: FlagSpec, default: Any, occs: list[Occurrence]) -> Any:
        last = occs[-1]
        if last.spec.action not in ("append", "append_const", "count"):
            return last.value
        # Accumulating actions start from a copy of the default (argparse _copy_items).
        acc: Any = default
        for o in occs:
            if o.spec.action == "count":
                acc = (0 if acc is None else acc) + 1 if not isinstance(acc, Unknown) else acc
                continue
            if isinstance(acc, Unknown) or isinstance(o.value, Unknown):
                acc = acc if isinstance(acc, Unknown) else o.value
                continue
            base = list(acc) if isinstance(acc, (list, tuple)) else []
            base.append(o.value if o.spec.action == "append" else o.spec.const)
            acc = tuple(base)
        return acc


def _defaults(cat: Catalogue) -> list[tuple[str, FlagSpec, Any]]:
    """(dest, action giving the default, default) for a catalogue, computed once."""
    cached = cat.__dict__.get("_bind_defaults")
    if cached is None:
        cached = []
        for dest in cat.dests():
            first = cat.default_spec(dest)
            assert first is not None
            cached.append((dest, first, evaluate_default(first)))
        cat.__dict__["_bind_defaults"] = cached
    return cached


def default_index(cat: Catalogue) -> dict[str, int]:
    """dest -> its place in `_defaults(cat)`, made once."""
    cached = cat.__dict__.get("_bind_default_index")
    if cached is None:
        cached = cat.__dict__["_bind_default_index"] = {d[0]: i for i, d in enumerate(_defaults(cat))}
    return cached


def default_args(cat: Catalogue) -> dict[str, BoundArg]:
    """dest -> the BoundArg of a dest not given, in the catalogue's order, made once."""
    cached = cat.__dict__.get("_bind_default_args")
    if cached is None:
        cached = {dest: BoundArg(dest, first, default, default) for dest, first, default in _defaults(cat)}
        cat.__dict__["_bind_default_args"] = cached
    return cached


def _order(p: Problem, argv: tuple[Word, ...]) -> tuple[int, str, int, int, int]:
    sp = p.span
    return (0, sp.path, sp.start, sp.start_line, sp.start_col) if sp is not None else (1, "", 0, 0, 0)


def bind(argv: Sequence[Word], catalogue: Catalogue) -> BoundArgs:
    """Bind `argv` (the words after the entry point) to `catalogue` with argparse semantics."""
    b = _Binder(argv, catalogue)
    b.run()
    return b.finish()
