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

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from megalint.megatron.catalogue import Catalogue, DefaultExpr, FlagHistory, FlagSpec
from megalint.shell.values import Segment, Unknown, Word
from megalint.source import Span

__all__ = [
    "BoundArg",
    "BoundArgs",
    "Occurrence",
    "Passthrough",
    "Problem",
    "ProblemKind",
    "bind",
    "cut_word",
]


class ProblemKind(str, Enum):
    UNKNOWN_FLAG = "unknown-flag"  # not an option of this version (suggestions attached)
    OTHER_VERSION = "flag-in-other-version"  # unknown here, defined in another version
    INVALID_TYPE = "invalid-type"  # int("abc")
    INVALID_CHOICE = "invalid-choice"
    MISSING_VALUE = "missing-value"  # "expected one argument"
    UNEXPECTED_VALUE = "unexpected-value"  # --bf16=true: "ignored explicit argument"
    REPEATED_FLAG = "repeated-flag"  # the same dest given twice; the last one wins
    POSITIONAL = "positional"  # a word that belongs to no flag
    BOOL_STRING = "bool-string"  # type=bool: "False" is True
    NEGATIVE_NUMBER = "negative-number"  # -1e-5, -10.: an option to Python < 3.14's argparse
    DEPRECATED = "deprecated-flag"
    HELP = "help"  # -h/--help: prints help, exits 0, trains nothing


# argparse exits with status 2 on these (HELP exits 0); the others let the job start.
FATAL = frozenset(
    {
        ProblemKind.UNKNOWN_FLAG,
        ProblemKind.OTHER_VERSION,
        ProblemKind.INVALID_TYPE,
        ProblemKind.INVALID_CHOICE,
        ProblemKind.MISSING_VALUE,
        ProblemKind.UNEXPECTED_VALUE,
        ProblemKind.POSITIONAL,
        ProblemKind.HELP,
    }
)


@dataclass(frozen=True)
class Problem:
    kind: ProblemKind
    message: str  # argparse's wording where it has one
    span: Span | None  # the exact text at fault
    words: tuple[Word, ...] = ()
    option: str | None = None  # the option string as written
    dest: str | None = None
    suggestions: tuple[str, ...] = ()
    history: FlagHistory | None = None  # for OTHER_VERSION
    value: str | None = None  # the offending value text
    related: tuple[Span, ...] = ()  # e.g. the earlier occurrences of a repeated flag

    @property
    def fatal(self) -> bool:
        return self.kind in FATAL


@dataclass(frozen=True)
class Occurrence:
    """One appearance of a known flag in argv."""

    option: str  # the option string as written, e.g. "--persistent-save-interval"
    spec: FlagSpec
    flag: Word  # the word holding the option (for "--x=v" the whole word)
    flag_span: Span | None  # just the option string
    values: tuple[Word, ...]  # value words; for "--x=v" a word cut out of the flag word
    value: Any  # what this occurrence stores: typed, or Unknown
    index: int  # position of the flag word in argv
    explicit: bool = False  # value written as "--x=v"

    @property
    def value_span(self) -> Span | None:
        spans = [w.span for w in self.values if w.span is not None]
        if not spans:
            return None
        return _join(spans[0], spans[-1])

    @property
    def span(self) -> Span | None:
        """The flag and its values, as one span when they are adjacent in one file."""
        vs = self.value_span
        if self.flag_span is None or vs is None:
            return self.flag_span or vs
        return _join(self.flag.span or self.flag_span, vs)


@dataclass(slots=True)
class BoundArg:
    """The value Megatron would see for one dest."""

    dest: str
    spec: FlagSpec  # the action of the last occurrence, else the one giving the default
    value: Any  # typed value, the default when not given, or Unknown
    default: Any  # the default (typed), or Unknown
    given: bool = False
    occurrences: list[Occurrence] | tuple = ()

    @property
    def unknown(self) -> Unknown | None:
        return self.value if isinstance(self.value, Unknown) else None

    @property
    def known(self) -> bool:
        return not isinstance(self.value, Unknown)

    @property
    def last(self) -> Occurrence | None:
        return self.occurrences[-1] if self.occurrences else None

    @property
    def flag(self) -> Word | None:
        return self.last.flag if self.last else None

    @property
    def option(self) -> str | None:
        return self.last.option if self.last else None

    @property
    def flag_span(self) -> Span | None:
        return self.last.flag_span if self.last else None

    @property
    def value_words(self) -> tuple[Word, ...]:
        return self.last.values if self.last else ()

    @property
    def value_span(self) -> Span | None:
        return self.last.value_span if self.last else None

    @property
    def span(self) -> Span | None:
        """Where to point for this argument: its value when written, else the flag."""
        if not self.last:
            return None
        return self.last.value_span or self.last.flag_span


@dataclass(frozen=True)
class Passthrough:
    """Words binding could not read: a splat (any number of unknown words), or an unknown
    word where a flag was expected, with the words after it that may be its values."""

    word: Word
    index: int
    reason: str
    following: tuple[Word, ...] = ()
    splat: bool = False


@dataclass
class BoundArgs:
    version: str
    catalogue: Catalogue
    args: dict[str, BoundArg]
    problems: list[Problem]
    passthrough: list[Passthrough]
    argv: tuple[Word, ...] = ()

    def __getitem__(self, dest: str) -> BoundArg:
        return self.args[dest]

    def __contains__(self, dest: object) -> bool:
        return dest in self.args

    def get(self, dest: str) -> BoundArg | None:
        return self.args.get(dest)

    def value(self, dest: str, missing: Any = None) -> Any:
        """The value of a dest (Unknown when unknown); `missing` when this version lacks it."""
        arg = self.args.get(dest)
        return missing if arg is None else arg.value

    def given(self, dest: str) -> bool:
        arg = self.args.get(dest)
        return bool(arg and arg.given)

    def given_args(self) -> list[BoundArg]:
        return [a for a in self.args.values() if a.given]

    def problems_of(self, *kinds: ProblemKind) -> list[Problem]:
        return [p for p in self.problems if p.kind in kinds]

    @property
    def complete(self) -> bool:
        """Whether every word was read: no splat and no unreadable flag word."""
        return not self.passthrough


# --------------------------------------------------------------------------------------
# words


def _join(a: Span, b: Span) -> Span:
    if a.path == b.path and a.start <= b.end:
        return Span(a.path, a.start_line, a.start_col, b.end_line, b.end_col, a.start, b.end)
    return a


def _slice_site(seg: Segment, lo: int, hi: int) -> Span | None:
    """The site of characters lo:hi of a known segment, exact when the segment's site holds
    exactly its text on one line (a literal), else the whole site."""
    site = seg.site
    if site is None or seg.text is None:
        return site
    if (
        site.start_line == site.end_line
        and site.end - site.start == len(seg.text)
        and site.end_col - site.start_col == len(seg.text)
    ):
        return Span(
            site.path,
            site.start_line,
            site.start_col + lo,
            site.end_line,
            site.start_col + hi,
            site.start + lo,
            site.start + hi,
        )
    return site


def cut_word(word: Word, lo: int, hi: int | None = None) -> Word:
    """Characters lo:hi of a word as a Word of its own, keeping provenance. Offsets count in
    the word's known leading text; hi=None keeps everything after lo, unknown parts included."""
    out: list[Segment] = []
    pos = 0
    past_unknown = False
    for seg in word.segments:
        if seg.text is None or past_unknown:
            # Offsets stop meaning anything after an unknown part; only an open end keeps it.
            past_unknown = True
            if hi is None:
                out.append(seg)
            continue
        start, end = pos, pos + len(seg.text)
        pos = end
        a = max(lo, start)
        b = end if hi is None else min(hi, end)
        if a >= b:
            continue
        part = seg.text[a - start : b - start]
        out.append(Segment(part, _slice_site(seg, a - start, b - start), seg.origin, None, seg.via))
    return Word(tuple(out))


def _known_prefix(word: Word) -> str:
    parts = []
    for seg in word.segments:
        if seg.text is None:
            break
        parts.append(seg.text)
    return "".join(parts)


# --------------------------------------------------------------------------------------
# classification, after argparse's _parse_optional (Lib/argparse.py, 3.11)

_NEG_OLD = re.compile(r"^-\d+$|^-\d*\.\d+$")  # Python <= 3.13
_NEG_NEW = re.compile(r"-\.?\d")  # Python 3.14 (gh-123945, gh-124321): used with .match
_HELP = ("-h", "--help")


@dataclass
class _Tok:
    kind: str  # "O" option, "A" argument, "S" splat, "X" unknown word, "U" unreadable option,
    #            "-" the "--" separator, "H" help
    word: Word
    index: int
    text: str | None = None
    option: str | None = None
    spec: FlagSpec | None = None
    explicit: Word | None = None  # value after "="
    explicit_text: str | None = None
    flag_span: Span | None = None
    from_equals: bool = False  # the value part of "--x=v"


def _classify(word: Word, index: int, cat: Catalogue, after_dashdash: bool) -> _Tok:
    if word.splat is not None:
        return _Tok("S", word, index)
    text = word.text
    if after_dashdash:
        return _Tok("A", word, index, text)
    if text is None:
        prefix = _known_prefix(word)
        if len(prefix) >= 2 and prefix[0] == "-" and (prefix[1] == "-" or prefix[1].isalpha()):
            if "=" in prefix:
                opt = prefix.split("=", 1)[0]
                spec = cat.lookup(opt)
                if spec is not None:
                    return _Tok(
                        "O",
                        word,
                        index,
                        None,
                        opt,
                        spec,
                        cut_word(word, len(opt) + 1),
                        None,
                        cut_word(word, 0, len(opt)).span,
                    )
            return _Tok("U", word, index)
        return _Tok("X", word, index)
    if text == "--":
        return _Tok("-", word, index, text)
    if not text or text[0] != "-":
        return _Tok("A", word, index, text)
    spec = cat.lookup(text)
    if spec is not None:
        return _Tok("O", word, index, text, text, spec, flag_span=word.span)
    if text in _HELP:
        return _Tok("H", word, index, text, text, flag_span=word.span)
    if len(text) == 1:
        return _Tok("A", word, index, text)
    if "=" in text:
        opt, explicit = text.split("=", 1)
        spec = cat.lookup(opt)
        if spec is not None or opt in _HELP:
            return _Tok(
                "O" if spec else "H",
                word,
                index,
                text,
                opt,
                spec,
                cut_word(word, len(opt) + 1),
                explicit,
                cut_word(word, 0, len(opt)).span,
            )
    if _NEG_NEW.match(text) or _NEG_OLD.match(text):
        return _Tok("A", word, index, text)
    if " " in text:
        return _Tok("A", word, index, text)
    opt = text.split("=", 1)[0]
    return _Tok("O", word, index, text, opt, None, flag_span=cut_word(word, 0, len(opt)).span)


# --------------------------------------------------------------------------------------
# values


class _Invalid(Exception):
    def __init__(self, kind: ProblemKind, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


_PATTERN_OK = re.compile(r"[^,\d\[\]\(\)\+\*]")


def _eval_pattern(text: str) -> list:
    """Megatron's layer-pattern strings ("([1]*3+[0])*2"), evaluated without eval().

    Megatron checks the characters (arguments.py:250@HEAD) then calls eval(); the same
    arithmetic on lists and ints is done here on the syntax tree.
    """
    if _PATTERN_OK.search(text):
        raise ValueError(f"Invalid pattern: {text}")

    def ev(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.List):
            return [ev(e) for e in node.elts]
        if isinstance(node, ast.Tuple):
            return tuple(ev(e) for e in node.elts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
            left, right = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Mult):
                for x in (left, right):
                    if isinstance(x, int) and abs(x) > 100_000:
                        raise ValueError("pattern too large")
            try:
                return left + right if isinstance(node.op, ast.Add) else left * right
            except TypeError as exc:
                raise ValueError(str(exc)) from None
        raise ValueError(f"Invalid pattern: {text}")

    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise ValueError(f"Invalid pattern: {text}") from None
    return ev(tree)


def _freq_type(text: str) -> Any:
    # moe_freq_type / la_freq_type / no_rope_freq_type, arguments.py:304-375@HEAD
    if "[" in text:
        return _eval_pattern(text)
    return int(text)


def _tuple_type(text: str) -> Any:
    # tuple_type, arguments.py:377@HEAD
    return tuple(int(i) for i in text.strip("()").split(","))


_CONVERTERS = {
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "moe_freq_type": _freq_type,
    "la_freq_type": _freq_type,
    "no_rope_freq_type": _freq_type,
    "tuple_type": _tuple_type,
}


def _convert(spec: FlagSpec, option: str, text: str) -> Any:
    """argparse's _get_values for one string: type conversion, then the choices check."""
    t = spec.type
    if t == "enum":
        # Megatron looks the member up by name (argument_utils.py:115@HEAD): a name not in the
        # enum raises KeyError, which argparse does not catch.
        if spec.choices is not None and text not in spec.choices:
            raise _Invalid(
                ProblemKind.INVALID_CHOICE,
                f"argument {option}: invalid choice: {text!r} (choose from {', '.join(map(repr, spec.choices))})",
            )
        return text
    conv = _CONVERTERS.get(t or "str")
    if conv is None:  # a converter megalint does not reproduce: keep the text
        value: Any = text
    else:
        try:
            value = conv(text)
        except (TypeError, ValueError, ArithmeticError):
            raise _Invalid(
                ProblemKind.INVALID_TYPE, f"argument {option}: invalid {t or 'str'} value: {text!r}"
            ) from None
    if spec.choices is not None and value not in spec.choices:
        raise _Invalid(
            ProblemKind.INVALID_CHOICE,
            f"argument {option}: invalid choice: {value!r} (choose from {', '.join(map(repr, spec.choices))})",
        )
    return value


_FALSY = {"false", "0", "no", "off", "n", "f", "none"}


def evaluate_default(spec: FlagSpec) -> Any:
    """A default as Megatron would have it, or Unknown with the reason."""
    default = spec.default
    if isinstance(default, DefaultExpr):
        src = default.source.strip()
        if re.fullmatch(r"[\d\s*+\-()]+", src):
            try:
                return _arith(ast.parse(src, mode="eval").body)
            except (ValueError, SyntaxError):
                pass
        m = re.fullmatch(r"[A-Za-z_][\w.]*\.([A-Za-z_]\w*)", src)
        if m and spec.type == "enum" and spec.choices and m.group(1) in spec.choices:
            return m.group(1)
        env = re.search(r"os\.getenv\(\s*['\"](\w+)['\"]", src)
        if env:
            return Unknown(
                f"the default of {spec.name} is read from the environment variable "
                f"{env.group(1)} of each process at run time"
            )
        return Unknown(f"the default of {spec.name} is computed by Megatron ({src})")
    if isinstance(default, str) and spec.type not in (None, "str", "enum"):
        # argparse converts a string default with the action's type.
        try:
            return _convert(spec, spec.name, default)
        except _Invalid:
            return default
    return default


def _arith(node: ast.AST) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_arith(node.operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Pow)):
        a, b = _arith(node.left), _arith(node.right)
        if isinstance(node.op, ast.Pow):
            if b > 256:
                raise ValueError("too large")
            return a**b
        return a + b if isinstance(node.op, ast.Add) else a - b if isinstance(node.op, ast.Sub) else a * b
    raise ValueError("not arithmetic")


# --------------------------------------------------------------------------------------
# binding


def _nargs_range(spec: FlagSpec) -> tuple[int, int | None]:
    n = spec.nargs
    if n is None:
        return (1, 1)
    if n == "?":
        return (0, 1)
    if n == "*":
        return (0, None)
    if n == "+":
        return (1, None)
    return (int(n), int(n))


def _expected(spec: FlagSpec) -> str:
    n = spec.nargs
    if n is None:
        return "expected one argument"
    if n == "+":
        return "expected at least one argument"
    if n == "?":
        return "expected at most one argument"
    if isinstance(n, int):
        return f"expected {n} argument{'s' if n != 1 else ''}"
    return "expected arguments"


class _Binder:
    def __init__(self, argv: Sequence[Word], cat: Catalogue):
        self.cat = cat
        self.argv = tuple(argv)
        self.problems: list[Problem] = []
        self.passthrough: list[Passthrough] = []
        self.occ: dict[str, list[Occurrence]] = {}
        toks: list[_Tok] = []
        dashdash = False
        for i, w in enumerate(self.argv):
            tok = _classify(w, i, cat, dashdash)
            if tok.kind == "-":
                dashdash = True
            toks.append(tok)
        self.toks = toks

    def problem(self, kind: ProblemKind, message: str, span: Span | None, **kw: Any) -> None:
        self.problems.append(Problem(kind, message, span, **kw))

    def _following(self, i: int) -> list[_Tok]:
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
                        _join(spans[0], spans[-1]) if spans else None,
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
                    _join(spans[0], spans[-1]) if spans else None,
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

        lo, hi = _nargs_range(spec)
        if tok.explicit is not None:
            values = [self._value_tok(tok)]
            nxt = i + 1
            if lo > 1:
                self.problem(
                    ProblemKind.MISSING_VALUE,
                    f"argument {opt}: {_expected(spec)}",
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
                f"argument {opt}: {_expected(spec)}",
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
                value: Any = spec.const
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
                tuple(t.word if t is not tok else tok.explicit for t in values),
                value,
                i,
                tok.explicit is not None,
            )
        )
        return nxt

    def _value_tok(self, tok: _Tok) -> _Tok:
        # The "=value" part as a token of its own, so it converts like a separate word.
        assert tok.explicit is not None
        return _Tok("A", tok.explicit, tok.index, tok.explicit_text, from_equals=True)

    def _value(self, spec: FlagSpec, opt: str, t: _Tok) -> Any:
        if t.kind == "S":
            return Unknown(f"the value of {opt} comes from {t.word.partial_text}", t.word.span)
        text = t.text if t.text is not None else t.word.text
        if text is None:
            u = t.word.unknown
            reason = u.reason if u else "unknown value"
            return Unknown(reason, (u.span if u and u.span else None) or t.word.span)
        if not t.from_equals and _NEG_NEW.match(text) and not _NEG_OLD.match(text) and " " not in text:
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
            value = _convert(spec, opt, text)
        except _Invalid as exc:
            self.problem(exc.kind, exc.message, t.word.span, words=(t.word,), option=opt, dest=spec.dest, value=text)
            return Unknown(exc.message, t.word.span)
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
        if spec.type == "bool" and text.strip().lower() in _FALSY:
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
        args: dict[str, BoundArg] = {}
        for dest, first, default in _defaults(self.cat):
            arg = BoundArg(dest, first, default, default)
            occs = self.occ.get(dest, [])
            if occs:
                arg.given = True
                arg.occurrences = occs
                arg.spec = occs[-1].spec
                arg.value = self._final(first, default, occs)
                accumulating = all(o.spec.action in ("append", "append_const", "count") for o in occs)
                if len(occs) > 1 and not accumulating:
                    last = occs[-1]
                    earlier = tuple(o.flag_span for o in occs[:-1] if o.flag_span is not None)
                    shown = ", ".join(
                        o.flag.partial_text
                        if not o.values
                        else f"{o.option} {' '.join(w.partial_text for w in o.values)}"
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
        return BoundArgs(self.cat.version, self.cat, args, self.problems, self.passthrough, self.argv)

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


def _order(p: Problem, argv: tuple[Word, ...]) -> tuple:
    sp = p.span
    return (0, sp.path, sp.start, sp.start_line, sp.start_col) if sp is not None else (1, "", 0, 0, 0)


def bind(argv: Sequence[Word], catalogue: Catalogue) -> BoundArgs:
    """Bind `argv` (the words after the entry point) to `catalogue` with argparse semantics."""
    b = _Binder(argv, catalogue)
    b.run()
    return b.finish()


def as_plain_dict(bound: BoundArgs) -> dict[str, Any]:
    """dest -> value with Unknown kept, for rule contexts and `megalint model`."""
    return {dest: arg.value for dest, arg in bound.args.items()}


def literal_argv(text: str, path: str = "<argv>") -> list[Word]:
    """Words from a whitespace-separated string, each with its exact span; for tests and the
    `megalint bind` debugging command. No quoting rules: a shell parser does that."""
    from megalint.shell.values import literal_word

    words = []
    for m in re.finditer(r"\S+", text):
        span = Span(path, 1, m.start() + 1, 1, m.end() + 1, m.start(), m.end())
        words.append(literal_word(m.group(0), span))
    return words
