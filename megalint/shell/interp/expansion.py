"""Expansion of words: literal text with its escapes and quotes, `"…"` strings, concatenations,
and command substitution; the entry points that give a word's fields or a scalar value.

A word expands to pieces (pieces.py): `$X` and `${…}` are parameters.py, `$((…))` is
arithmetic.py; splitting.py cuts the pieces into fields. Literal pieces do not depend on the
state and are cached on the parsed script; other expansions are memoised on what they read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from megalint import lazy_re
from megalint.shell.facts import ASSUME_DIRNAME, ASSUME_PWD, ShellFindingKind
from megalint.shell.interp import arithmetic, braces, fast_paths, parameters, splitting
from megalint.shell.interp.pieces import (
    QUOTED_EMPTY,
    Expansion,
    FieldBreak,
    Piece,
    SegmentPiece,
    Splat,
)
from megalint.shell.interp.reparse import MappedSource
from megalint.shell.interp.state import MAX_EXPANSION_DEPTH, Frame, Node, Scalar, State, oversized, too_long
from megalint.shell.interp.syntax import effective_start, split_at_dollar
from megalint.shell.parse import ParsedScript
from megalint.shell.values import Segment, Unknown, Word
from megalint.source import SourceFile, Span

if TYPE_CHECKING:
    from megalint.shell.interp.core import Evaluator

_LITERAL_WORDS = frozenset({"word", "number", "raw_string"})
_STRAY_BACKSLASH = lazy_re.compile(r"\\([ \t]+)(?=\n)")
# `$(dirname "$0")`, `$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)`: the script's directory.
_SCRIPT_DIR = lazy_re.compile(
    r"""(cd\s+)?"?\$\(\s*dirname\s+"?(\$0|\$\{0\}|\$\{BASH_SOURCE(\[0\])?\}|\$BASH_SOURCE)"?\s*\)"?(\s*(&&|;)\s*pwd(\s+-P)?)?"""
)
_DIRNAME = lazy_re.compile(
    r"""dirname\s+"?(\$0|\$\{0\}|\$\{BASH_SOURCE(\[0\])?\}|\$BASH_SOURCE|\$\(\s*(realpath|readlink\s+-f)\s+"?(\$0|\$\{BASH_SOURCE(\[0\])?\})"?\s*\))"?"""
)


# ---------------------------------------------------------------------- entry points


def expand_word(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[Word]:
    """Expand one shell word into the fields it becomes (word splitting applied)."""
    t = node.type
    if t == "command_name" and node.child_count == 1:
        # `torchrun …`: the name is its one word, same span
        child = node.children[0]
        if child.type == "word":
            node, t = child, "word"
    if t in _LITERAL_WORDS:
        ps = frame.ps
        key = (node.start_byte, node.end_byte)
        cached = ps.word_cache.get(key)
        if cached is None:
            words = fast_paths.plain_word(node, ps) if fast_paths.ENABLED and t != "raw_string" else None
            if not words:
                words = _placed(ev, node, t, st, frame, _literal_word)
            cached = ps.word_cache[key] = words
        return list(cached)
    return _placed(ev, node, t, st, frame, _expand_word)


def _placed(
    ev: Evaluator, node: Node, t: str, st: State, frame: Frame, expand: Callable[..., list[Word]]
) -> list[Word]:
    """expand(…) of a word; in a command string read again on each path (each a script of its
    own), remembered by the parts the word is made of (MappedSource.signature): it expands alike
    whichever path's string holds it, the values it reads checked as for any expansion
    remembered. nested_scripts' simple `eval` takes what is remembered here."""
    source = frame.ps.source
    if source.__class__ is MappedSource:
        assert isinstance(source, MappedSource)
        parts = source.signature(node.start_byte, node.end_byte)
        if parts is not None:
            return list(
                ev.memo(frame.ps, ("w", t, parts), st, lambda: tuple(expand(ev, node, t, st, frame)), ev.placed_memo)
            )
    return expand(ev, node, t, st, frame)


def _literal_word(ev: Evaluator, node: Node, t: str, st: State, frame: Frame) -> list[Word]:
    return splitting.split(ev, pieces(ev, node, st, frame, quoted=False, eid=None), node, frame)


def _expand_word(ev: Evaluator, node: Node, t: str, st: State, frame: Frame) -> list[Word]:
    if t == "brace_expression" or t == "concatenation":
        braced = braces.expand(ev, node, st, frame)
        if braced is not None:
            return braced
    if fast_paths.ENABLED:
        if t == "simple_expansion" or t == "expansion":
            if ev.many_paths:
                # Paths holding the same value split it alike: once, and into the same words
                # (`$OPTIONS`, a launch's hundred flags, on each of sixteen paths).
                held = ev.memo(
                    frame.ps,
                    ("f", node.start_byte, node.end_byte),
                    st,
                    lambda: _fields(fast_paths.scalar_word(ev, node, st, frame)),
                )
                if held is not None:
                    return list(held)
            else:
                got = fast_paths.scalar_word(ev, node, st, frame)
                if got is not None:
                    return got
        elif t == "string" and frame.ps.source.__class__ is SourceFile:
            # "…" is one word; its expansions are shown where they are written (splitting.split).
            segs = fast_paths.string_segments(ev, node, st, frame)
            if segs is not None:
                return [Word(segs)]
    return list(
        ev.memo(
            frame.ps,
            ("w", node.start_byte, node.end_byte, node.type),
            st,
            lambda: tuple(splitting.split(ev, pieces(ev, node, st, frame, quoted=False, eid=None), node, frame)),
        )
    )


def _fields(words: list[Word] | None) -> tuple[Word, ...] | None:
    return tuple(words) if words is not None else None


def expand_scalar(ev: Evaluator, node: Node | None, st: State, frame: Frame, pattern: bool = False) -> Scalar:
    """Expand without word splitting (assignment values, case subjects, test operands)."""
    if node is None:
        return ()
    return ev.memo(
        frame.ps,
        ("s", node.start_byte, node.end_byte, node.type, pattern),
        st,
        lambda: _expand_scalar(ev, node, st, frame),
    )


def _expand_scalar(ev: Evaluator, node: Node, st: State, frame: Frame) -> Scalar:
    if node.type == "string" and fast_paths.ENABLED and ev.expansion_depth < MAX_EXPANSION_DEPTH:
        out = _dq_scalar(ev, node, st, frame)
    else:
        out = _scalar_of(ev, pieces(ev, node, st, frame, quoted=True, eid=None))
    if oversized(out):
        span = frame.ps.span(node)
        return (Segment(None, span, (), too_long(span)),)
    return tuple(out)


def _scalar_of(ev: Evaluator, parts: Iterable[Piece]) -> list[Segment]:
    """The segments of pieces read without word splitting."""
    out = []
    for p in parts:
        if p.__class__ is SegmentPiece:  # most pieces: tested first, and sites by identity first
            seg, eid = p.segment, p.expansion
            if eid is not None and not eid.array and (site := seg.site) is not eid.span and site != eid.span:
                # Without splitting every expansion is one value: show it where it is written.
                seg = splitting.shown_at(ev, seg, eid.span)
            out.append(seg)
        elif isinstance(p, FieldBreak):
            out.append(Segment(" ", None))
        elif isinstance(p, Splat):
            out.append(Segment(None, p.unknown.span, (), p.unknown))
    return out


def _dq_scalar(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[Segment]:
    """`_scalar_of` the pieces of "…" (as `pieces` gives them), each part's segments made once
    for the run: a string reading one value that differs (`"--num-layers $L --tp $TP …"`, a
    launch of two hundred parts) is made again on each path, of parts it held before."""
    kept = ev.scalar_parts
    out: list[Segment] = []
    ev.expansion_depth += 1
    try:
        for part, stable in _dq_parts(ev, node, st, frame, None):
            if not stable:
                out += _scalar_of(ev, part)
                continue
            held = kept.get(id(part))
            if held is None or held[0] is not part:
                held = kept[id(part)] = (part, _scalar_of(ev, part))
            out += held[1]
    finally:
        ev.expansion_depth -= 1
    return out


def expansion_span(node: Node, frame: Frame) -> Span:
    """Where an expansion is written (without a blank tree-sitter puts in front of it)."""
    return frame.ps.span_of(effective_start(node, frame.ps.parse_text), node.end_byte)


# ---------------------------------------------------------------------- pieces


def pieces(ev: Evaluator, node: Node, st: State, frame: Frame, quoted: bool, eid: Expansion | None) -> list[Piece]:
    """What a node expands to, before word splitting; `eid` is the expansion it is part of."""
    if ev.expansion_depth >= MAX_EXPANSION_DEPTH:
        span = frame.ps.span(node)
        return [
            SegmentPiece(
                Segment.unknown_at(f"expansions nested more than {MAX_EXPANSION_DEPTH} levels deep are not read", span),
                False,
                eid,
            )
        ]
    ev.expansion_depth += 1
    try:
        return _pieces(ev, node, st, frame, quoted, eid)
    finally:
        ev.expansion_depth -= 1


def _pieces(ev: Evaluator, node: Node, st: State, frame: Frame, quoted: bool, eid: Expansion | None) -> list[Piece]:
    t = node.type
    ps = frame.ps
    if t in ("word", "number", "extglob_pattern", "regex", "variable_name", "test_operator"):
        if quoted and t == "word":
            return _literal(node, ps, eid, escapes="dq-word")
        return _literal(node, ps, eid, escapes=None if quoted else "unquoted")
    if t == "raw_string":
        text = ps.text(node)
        span = ps.source.span_bytes(node.start_byte + 1, node.end_byte - 1)
        if text == "''":
            return [QUOTED_EMPTY]
        placeholder = _placeholder(node, ps)
        if placeholder is not None:
            return [SegmentPiece(Segment(None, span, (), placeholder), False, eid)]
        return [SegmentPiece(Segment(text[1:-1], span), False, eid)]
    if t == "ansi_c_string":
        raw = ps.text(node)[2:-1]
        return [SegmentPiece(Segment(_ansi_c(raw), ps.span(node)), False, eid)]
    if t in ("string", "translated_string"):
        return _dq_string(ev, node, st, frame, eid)
    if t == "concatenation":
        rest = split_at_dollar(node)
        if rest is not None:
            # The parser cut the word at a `$NAME`: its value is not read rather than read wrong.
            span = ps.source.span_bytes(node.start_byte, rest.end_byte)
            written = ps.source.text[span.start : span.end]
            why = f"`{written}` is cut in two by the shell parser at its `$` (a `$NAME/` after an earlier expansion)"
            return [SegmentPiece(Segment.unknown_at(why, span), False, eid)]
        out = []
        for c in node.children:
            out.extend(pieces(ev, c, st, frame, quoted, eid))
        return out
    if t == "simple_expansion":
        return parameters.simple_expansion(ev, node, st, frame, quoted, eid)
    if t == "expansion":
        return parameters.brace_expansion(ev, node, st, frame, quoted, eid)
    if t == "arithmetic_expansion":
        return arithmetic.arith_expansion(ev, node, st, frame, quoted, eid)
    if t == "command_substitution":
        return _command_substitution(ev, node, st, frame, quoted, eid)
    if t == "process_substitution":
        return [SegmentPiece(Segment.unknown_at("a process substitution `<( )`", ps.span(node)), False, eid)]
    if t == "brace_expression":
        return _literal(node, ps, eid, escapes=None)
    if t == "string_content":
        return _literal(node, ps, eid, escapes="dq")
    if t == "array":
        return _literal(node, ps, eid, escapes=None)
    if node.child_count and t not in ("ERROR",):
        out = []
        for c in node.children:
            out.extend(pieces(ev, c, st, frame, quoted, eid))
        return out
    return _literal(node, ps, eid, escapes=None)


def _placeholder(node: Node, ps: ParsedScript) -> Unknown | None:
    """An unfilled template placeholder (`<Specify path>`, read as a quoted word by parse.py)."""
    span = ps.span(node)
    for ph in ps.placeholders:
        if ph.start == span.start and ph.end == span.end:
            text = ps.source.text[ph.start : ph.end]
            return Unknown(f"unfilled template placeholder {text}", ph)
    return None


# ---------------------------------------------------------------------- literal text


def _literal(node: Node, ps: ParsedScript, eid: Expansion | None, escapes: str | None) -> list[Piece]:
    """Literal text of a node, with escape processing; sites stay exact where the text is."""
    return _literal_run(ps, node.start_byte, node.end_byte, escapes, eid)


def _literal_run(ps: ParsedScript, a: int, b: int, escapes: str | None, eid: Expansion | None) -> list[Piece]:
    """Literal text at bytes [a, b) of the script, with escape processing: kept with the script
    once read (it does not depend on the path, and every path reads it)."""
    key = (a, b, escapes, eid)
    cached = ps.literal_cache.get(key)
    if cached is None:
        raw = ps.parse_text[a:b].decode("utf-8", "replace")
        start = ps.source.char_offset(a)
        if escapes is None or "\\" not in raw:
            cached = _lits(raw, ps, start, start + len(raw), eid)
        else:
            cached = _escaped_runs(raw, start, ps, eid, escapes)
        ps.literal_cache[key] = cached
    return cached


def literal_segment(text: str, ps: ParsedScript, a: int, b: int) -> Segment:
    """Text at characters [a, b) of the script, where it is written."""
    origin = ps.source.origin(a, b) if isinstance(ps.source, MappedSource) else ()
    return Segment(text, ps.source.span(a, b), origin)


def _lits(text: str, ps: ParsedScript, a: int, b: int, eid: Expansion | None) -> list[Piece]:
    """Literal text as pieces; in a re-parsed string, one piece per place it came from."""
    if not isinstance(ps.source, MappedSource) or len(text) != b - a:
        return [SegmentPiece(literal_segment(text, ps, a, b), False, eid)]
    out: list[Piece] = []
    for x, y in ps.source.cuts(a, b):
        out.append(SegmentPiece(literal_segment(text[x - a : y - a], ps, x, y), False, eid))
    return out


def _escaped_runs(raw: str, start_char: int, ps: ParsedScript, eid: Expansion | None, escapes: str) -> list[Piece]:
    """Text with backslash escapes, as bash reads them unquoted, in "…" (`dq`, `dq-word`) or
    in an unquoted here-document: each escaped character is a piece of its own."""
    out: list[Piece] = []
    run_start = 0
    i = 0
    n = len(raw)
    while i < n:
        ch = raw[i]
        if ch == "\\" and i + 1 < n:
            nxt = raw[i + 1]
            if escapes in ("dq", "dq-word", "heredoc"):
                if nxt not in ("$`\\\n" if escapes == "heredoc" else '$`"\\\n'):
                    i += 2
                    continue
            if i > run_start:
                out.extend(_lits(raw[run_start:i], ps, start_char + run_start, start_char + i, eid))
            if nxt != "\n":
                out.append(SegmentPiece(Segment(nxt, ps.source.span(start_char + i, start_char + i + 2)), False, eid))
            i += 2
            run_start = i
            continue
        i += 1
    if n > run_start:
        out.extend(_lits(raw[run_start:n], ps, start_char + run_start, start_char + n, eid))
    return out


def _inside(ev: Evaluator, c: Node, st: State, frame: Frame, eid: Expansion | None) -> Callable[[], tuple[Piece, ...]]:
    return lambda: tuple(pieces(ev, c, st, frame, True, eid))


def _dq_string(ev: Evaluator, node: Node, st: State, frame: Frame, eid: Expansion | None) -> list[Piece]:
    """`"…"` and `$"…"`: literal runs between the expansions inside."""
    out: list[Piece] = []
    for part, _ in _dq_parts(ev, node, st, frame, eid):
        out.extend(part)
    if not out:
        return [QUOTED_EMPTY]
    return out


def _dq_parts(
    ev: Evaluator, node: Node, st: State, frame: Frame, eid: Expansion | None
) -> Iterator[tuple[Sequence[Piece], bool]]:
    """The pieces of "…" part by part (a literal run, an expansion), each with whether it is an
    object kept for the run (the script's literal runs, what an expansion gave on a path that
    held the same values): another path's string is mostly the same parts."""
    ps = frame.ps
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
            yield dq_literal(ev, pos, cstart, ps, eid), True
        if c.type == "expansion" or c.type == "simple_expansion":
            # A string that reads one value that differs (`"--num-layers $L --tp $TP …"`) is
            # made again on each path; each of its other expansions is what it was.
            yield ev.memo(ps, ("p", c.start_byte, c.end_byte, eid), st, _inside(ev, c, st, frame, eid)), True
        else:
            yield pieces(ev, c, st, frame, True, eid), False
        pos = c.end_byte
    if end > pos:
        yield dq_literal(ev, pos, end, ps, eid), True


def dq_literal(
    ev: Evaluator, a: int, b: int, ps: ParsedScript, eid: Expansion | None, heredoc: bool = False
) -> list[Piece]:
    """The literal text at bytes [a, b) inside "…" (or an unquoted here-document)."""
    if not heredoc and ps.parse_text.find(b"\\", a, b) >= 0:
        # A finding of the run reading it, looked for on every read (a run may start again
        # on the same script); the pieces are the script's.
        _check_stray_backslash(ev, ps.parse_text[a:b].decode("utf-8", "replace"), ps.source.char_offset(a), ps)
    return _literal_run(ps, a, b, "heredoc" if heredoc else "dq", eid)


def _check_stray_backslash(ev: Evaluator, raw: str, start_char: int, ps: ParsedScript) -> None:
    # Inside "…", `\` then blanks then a newline is not a continuation: a lone `\` word
    # reaches the program (argparse: "unrecognized arguments: \").
    for m in _STRAY_BACKSLASH.finditer(raw):
        s = start_char + m.start()
        ev.finding(
            ShellFindingKind.STRAY_BACKSLASH_IN_STRING,
            ps.source.span(s, s + len(m.group(0))),
            "`\\` followed by blanks inside a double-quoted string is not a line continuation: "
            "a lone `\\` word reaches the program",
        )


def _ansi_c(raw: str) -> str:
    try:
        return bytes(raw, "utf-8").decode("unicode_escape")
    except UnicodeDecodeError:
        return raw


# ---------------------------------------------------------------------- command substitution


def _command_substitution(
    ev: Evaluator, node: Node, st: State, frame: Frame, quoted: bool, eid: Expansion | None
) -> list[Piece]:
    """`$(…)` and backquotes: nothing runs, so the output is unknown, except for a few pure
    idioms (`$(dirname "$0")`, `$(echo …)`)."""
    ps = frame.ps
    span = expansion_span(node, frame)
    raw = ps.text(node).lstrip()
    inner = raw[2:-1] if raw.startswith("$(") else raw[1:-1]
    inner_s = inner.strip()
    my_eid = eid or Expansion(span, False)
    # Pure idioms whose value is known without running anything.
    if _SCRIPT_DIR.fullmatch(inner_s) or _DIRNAME.fullmatch(inner_s):
        d = os.path.dirname(os.path.abspath(ps.source.path)) if ps.source.path else ev.script_dir
        return [SegmentPiece(Segment(d, span, assumed=ASSUME_DIRNAME), not quoted, my_eid)]
    if re.fullmatch(r"pwd(\s+-P)?", inner_s):
        # The working directory is the job's; read as the script's folder, and said so.
        return [SegmentPiece(Segment(ev.script_dir, span, assumed=ASSUME_PWD), not quoted, my_eid)]
    m = re.fullmatch(r"(echo|printf\s+['\"]?%s['\"]?)\s+(.*)", inner_s, re.S)
    if m and not re.search(r"[|;&<>`]|\$\(", m.group(2)):
        cmd = next((c for c in node.named_children if c.type == "command"), None)
        if cmd is not None:
            words = []
            for i, c in enumerate(cmd.children):
                if cmd.field_name_for_child(i) == "argument":
                    words.extend(expand_word(ev, c, st, frame))
            if inner_s.startswith("printf"):
                words = words[1:]
            texts = [w.text for w in words]
            if all(t is not None for t in texts) and not any((t or "").startswith("-") for t in texts[:1]):
                text = " ".join(t for t in texts if t is not None)
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
