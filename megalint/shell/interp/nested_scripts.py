"""Text a script runs as a script of its own: a `source`d file, an `eval` string, the string of
`bash -c`, and the here-document of `sbatch <<EOF` (or `bash`, `srun` …).

A sourced file and an `eval` string run in the script's own shell: what they set stays set.
`bash -c` and a here-document script start a new shell: only exported variables reach them, and
only their commands count afterwards (algebra.effects_only).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NamedTuple, cast

from megalint import lazy_re
from megalint.errors import InputError
from megalint.probes import is_file
from megalint.shell.facts import ASSUME_RELATIVE, UnreadReason
from megalint.shell.headers import implied_environment, read_headers
from megalint.shell.interp import algebra, commands, expansion, fast_paths
from megalint.shell.interp.pieces import Piece, SegmentPiece
from megalint.shell.interp.reparse import (
    MappedSource,
    in_place,
    joined_span,
    kept_part_word,
    mapped,
    parse_assembled,
    part_word,
    placeholder_of,
    placement_of,
    reparse,
    with_placeholders,
)
from megalint.shell.interp.state import (
    MAX_NEST,
    MAX_SOURCE_BYTES,
    MAX_SOURCE_DEPTH,
    MAX_STEPS,
    NOT_REMEMBERED,
    UNKNOWN_PREFIX,
    UNSOURCED,
    Frame,
    Node,
    State,
    Var,
)
from megalint.shell.interp.syntax import assigned_names, effective_start, plain_name
from megalint.shell.parse import ParsedScript, parse_file
from megalint.shell.values import Segment, Unknown, Word, sites_span
from megalint.source import Span

if TYPE_CHECKING:
    from megalint.shell.interp.core import Evaluator


class _TooLarge(InputError):
    """A sourced file larger than MAX_SOURCE_BYTES; never leaves this module, where it becomes the
    reason the file is not read."""


# ---------------------------------------------------------------------- source / .


def source(ev: Evaluator, args: list[Word], span: Span, st: State, frame: Frame) -> list[State]:
    """`source FILE [ARGS…]` / `. FILE`: the file runs here, as if written in place."""
    if not args:
        return [st]
    target = args[0].text
    if target is None:
        ev.unread(
            span,
            args[0].partial_text,
            UnreadReason.UNKNOWN_PATH,
            f"{span}: `source` of a file whose path is not known statically "
            f"({args[0].unknown}); its variables are not read",
        )
        _mark_source_unknown(st, span, f"a file sourced at {span} whose path is not known")
        return [st]
    _assumptions_of_path(ev, args[0], os.path.isabs(target))
    base_dir = os.path.dirname(os.path.abspath(frame.ps.source.path))
    path = target if os.path.isabs(target) else os.path.normpath(os.path.join(base_dir, target))
    if not is_file(path) and not os.path.isabs(target):
        alt = os.path.normpath(os.path.join(ev.script_dir, target))
        if is_file(alt):
            path = alt
    if not is_file(path):
        ev.unread(
            span,
            target,
            UnreadReason.NOT_FOUND,
            f"{span}: sourced file {target} not found; its variables are not read",
        )
        _mark_source_unknown(st, span, f"{target}, sourced at {span}, was not found")
        return [st]
    real = os.path.realpath(path)
    if ev.root_dir and not ev.follow_outside_root and not real.startswith(ev.root_dir + os.sep) and real != ev.root_dir:
        ev.unread(span, target, UnreadReason.OUTSIDE_ROOT, f"{span}: {target} is outside the linted tree; not followed")
        _mark_source_unknown(st, span, f"{target} (sourced at {span}) is outside the linted tree")
        return [st]
    if real in ev.source_stack:
        ev.unread(
            span, target, UnreadReason.CYCLE, f"{span}: {target} is already being sourced (a cycle); not followed again"
        )
        return [st]
    if len(ev.source_stack) > MAX_SOURCE_DEPTH:
        _too_deep(ev, st, span, target, real)
        return [st]
    sub = _parsed_file(ev, real)
    if isinstance(sub, tuple):
        ev.unread(span, target, sub[0], f"{span}: cannot read sourced file {target}: {sub[1]}", real)
        _mark_source_unknown(st, span, f"{target}, sourced at {span}, could not be read")
        return [st]
    if sub.source.path not in ev.sources:
        ev.sources[sub.source.path] = sub.source
        ev.sourced.append(sub.source.path)
        assigned_names(sub.root, sub, ev.sourced_names)
    ev.source_stack.append(real)
    try:
        saved = st.positional
        if len(args) > 1:
            st.positional = tuple(w.segments for w in args[1:]) if all(w.splat is None for w in args[1:]) else None
        results = ev.block(sub.root.children, [st], Frame(sub, frame.wrappers, frame.depth + 1))
        for r in results:
            if r.returning:
                r.returning = False
                r.stopped = False
            if len(args) > 1:
                r.positional = saved
    finally:
        ev.source_stack.pop()
    return results


def _too_deep(ev: Evaluator, st: State, span: Span, target: str, real: str) -> None:
    """A file sourced past MAX_SOURCE_DEPTH is not read: what it would set is unknown from here
    on, never the value an outer file gave (which bash overwrites)."""
    reason = f"{target}, sourced at {span}, is nested more than {MAX_SOURCE_DEPTH} sourced files deep"
    ev.unread(span, target, UnreadReason.TOO_DEEP, f"{span}: {reason}; not followed", real)
    sub = _parsed_file(ev, real)
    names: set[str] = set()
    if not isinstance(sub, tuple):
        assigned_names(sub.root, sub, names)
    for name in sorted(names):
        old = st.vars.get(name)
        st.vars[name] = Var(unknown=Unknown(reason, span), exported=old is not None and old.exported, site=span)
    _mark_source_unknown(st, span, reason)


def _assumptions_of_path(ev: Evaluator, word: Word, absolute: bool) -> None:
    """What following this path takes as true: the folder `pwd` or `$(dirname "$0")` stands for,
    a default of the environment's, and for a relative path the folder it is read from."""
    for seg in word.segments:
        if seg.assumed and seg.site is not None:
            ev.assume_that(seg.assumed, seg.site)
    if not absolute and word.span is not None:
        ev.assume_that(ASSUME_RELATIVE, word.span)


def _parsed_file(ev: Evaluator, real: str) -> ParsedScript | tuple[UnreadReason, str]:
    """A sourced file, parsed once per run; or why it cannot be read."""
    sub = ev.parsed_files.get(real)
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
        ev.parsed_files[real] = sub
        if not isinstance(sub, tuple):
            ev.check_reads(sub.source.text)
    return sub


def _mark_source_unknown(st: State, span: Span, reason: str) -> None:
    # Variables the sourced file might set are unknown from here on, but only those the
    # script reads and never sets itself are affected: track it as a flag on the state.
    st.vars.setdefault(UNSOURCED, Var(unknown=Unknown(reason, span), site=span))


# ---------------------------------------------------------------------- eval


# The blank `eval` puts between its arguments: one object, so that where it was written (nowhere)
# is looked up once for every string read (reparse.MappedSource keeps placements by segment).
_BLANK = Segment(" ", None)


def eval_string(ev: Evaluator, args: list[Word], span: Span, st: State, frame: Frame) -> list[State]:
    """`eval ARGS…`: the arguments, joined by blanks, run here as shell text."""
    if not args:
        return [st]
    if any(a.splat is not None for a in args) or all(a.text is None for a in args):
        commands.record(ev, args, {}, span, st, frame)
        return [st]
    if len(args) == 1:
        word = args[0]
    else:
        if fast_paths.ENABLED:
            done = _eval_words(ev, args, st, frame)
            if done is not None:
                return done
        segs = []
        for i, a in enumerate(args):
            if i:
                segs.append(_BLANK)
            segs.extend(a.segments)
        word = Word(tuple(segs))
    if fast_paths.ENABLED and word.splat is None:
        done = _simple_eval(ev, word, st, frame)
        if done is not None:
            return done
    sub = reparse(ev, word, frame)
    if sub is None:
        return [st]
    return ev.block(sub.root.children, [st], Frame(sub, frame.wrappers, frame.depth + 1))


# A command string that is one simple command of plain words and unknown parts (`torchrun
# --nproc_per_node 8 pretrain_gpt.py --num-layers 32 --load ${__megalint_unknown_3}`): each
# blank-separated run is one word of it, as the parser reads it. Anything else is parsed.
_NOT_SIMPLE = lazy_re.compile(r"[^A-Za-z0-9_.,:/+@%= \t-]")  # outside plain words and the blanks between them
_RUN = lazy_re.compile(r"[^ \t]+")
_NUMBER = lazy_re.compile(r"-?(?:0x)?[0-9]+")
_PLACEHOLDER = lazy_re.compile(r"\$\{" + UNKNOWN_PREFIX + r"[0-9]+\}")
_ASSIGNMENT = lazy_re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_RESERVED = frozenset("if then else elif fi case esac for select while until do done in function time coproc".split())


def _simple_eval(ev: Evaluator, word: Word, st: State, frame: Frame) -> list[State] | None:
    """`eval` of a string that is one simple command of plain words and unknown parts, run as
    the parsed string would run (commands.command on one path), without parsing it: the string
    differs on each path of a script in a few words, and each of its words is then what it was
    on an earlier path, where the same parts placed it (reparse.MappedSource). A word that was
    not is expanded in the parsed string. None when the string is anything else: it is parsed
    and run."""
    if st.stopped or ev.exhausted or ev.nest >= MAX_NEST or ev.steps >= MAX_STEPS:
        return None
    ev.check_reads(word.partial_text)
    original, word = word, with_placeholders(ev, word)
    text = word.text
    anchor = word.span
    if not text or anchor is None or _NOT_SIMPLE.search(_PLACEHOLDER.sub("", text)) or in_place(ev, word) is not None:
        return None
    runs = [(m.start(), m.end(), m.group()) for m in _RUN.finditer(text)]
    first = runs[0][2]
    if _not_a_launch(first, st):
        return None
    source = mapped(ev, word, anchor)
    made: list[tuple[Word, ...] | None] = []
    for a, b, run in runs:
        if "$" not in run:
            # As fast_paths.plain_word places a plain word written in one place.
            placed = source.placed_word(a, b, run) if len(run) <= fast_paths.PLAIN_MAX else None
            if placed is not None:
                made.append((placed,))
                continue
        kind = _kind(run)
        parts = source.signature_at(a, b)
        held = ev.remembered(ev.placed_memo, ("w", kind, parts), st) if parts is not None else NOT_REMEMBERED
        made.append(None if held is NOT_REMEMBERED else cast(tuple[Word, ...], held))
    if None in made and not _expand_missing(ev, original, source, runs, made, st, frame):
        return None
    words = [w for ws in made if ws is not None for w in ws]
    if not words or words[0].text != first or shell_c(words) is not None:
        return None
    # As Evaluator.stmt counts a statement on one path, and commands.command records a launch.
    ev.steps += 1
    commands.record(ev, words, {}, source.span(runs[0][0], runs[-1][1]), st, frame)
    return [st]


def _not_a_launch(first: str, st: State) -> bool:
    """Whether a command string's first word makes it other than a command `_simple_eval` reads."""
    return (
        "$" in first
        or first[0] == "-"
        or _NUMBER.fullmatch(first) is not None
        or _ASSIGNMENT.match(first) is not None
        or first in _RESERVED
        or first in commands.BUILTINS
        or first in commands.NOT_LAUNCH
        or first in commands.INERT
        or first in st.funcs
    )


class _ArgWord(NamedTuple):
    """A word of a command string as `_eval_words` reads it: its text (unknown parts as
    placeholders), its parts with some text, the first and last places its parts were written,
    whether it is one part with nothing to expand (MappedSource.placed_word), its kind as an
    argument and its parts as MappedSource.signature_at gives them."""

    text: str
    filled: tuple[Segment, ...]
    sites: tuple[Span, Span] | None
    one_part: bool
    kind: str
    parts: tuple[tuple[Segment, int, int], ...]


def _arg_word(ev: Evaluator, segs: tuple[Segment, ...]) -> _ArgWord | None:
    """A word of a command string of several words, read as `_simple_eval` reads its run: None
    when it holds a blank (it is not one word of the string) or a character that is not plain."""
    segs = tuple([seg if seg.text is not None else placeholder_of(ev, seg) for seg in segs])
    text = "".join([seg.text for seg in segs])  # type: ignore[misc]
    if not text or " " in text or "\t" in text or _NOT_SIMPLE.search(_PLACEHOLDER.sub("", text)):
        return None
    filled = tuple([seg for seg in segs if seg.text])
    sites = [seg.site for seg in segs if seg.site is not None]
    return _ArgWord(
        text,
        filled,
        (sites[0], sites[-1]) if sites else None,
        "$" not in text and len(filled) == 1 and len(text) <= fast_paths.PLAIN_MAX,
        _kind(text),
        tuple([(seg, 0, len(seg.text)) for seg in filled]),  # type: ignore[arg-type]
    )


def _eval_words(ev: Evaluator, args: list[Word], st: State, frame: Frame) -> list[State] | None:
    """`_simple_eval` of the string several words make, when each word is one word of the string
    (no blank in any: `eval ${run_cmd}`, a value split into words): what reading the string gives,
    taken word by word without assembling and placing the whole string. The strings of a
    script's paths share most of their words' parts (a launch of ~200 parts, placed again on
    each of up to 16 paths): each word is what it was on an earlier path, or one part placed
    where it was written, or an unknown part alone (`_expand_alone`). None for any other string
    and when a word is none of these: the string is then read whole (`_simple_eval`), which
    keeps each word read for the next path."""
    if st.stopped or ev.exhausted or ev.nest >= MAX_NEST or ev.steps >= MAX_STEPS:
        return None
    if ev.skip.names:
        ev.check_reads(" ".join([a.partial_text for a in args]))  # the string's, as _simple_eval checks it
    # Each word as the string holds it (`_ArgWord`), kept for the run by its parts: the words of
    # the paths' strings are new objects, their parts mostly the same ones.
    kept = ev.arg_words
    held: list[_ArgWord] = []
    for arg in args:
        segs = arg.segments
        key = tuple(map(id, segs))  # the entry holds the parts: their ids stay theirs
        entry = kept.get(key)
        if entry is None:
            entry = kept[key] = (segs, _arg_word(ev, segs))
        read = cast("_ArgWord | None", entry[1])
        if read is None:
            return None
        held.append(read)
    sites = [r.sites for r in held if r.sites is not None]
    first = held[0].text
    if not sites or _not_a_launch(first, st):
        return None
    anchor = sites_span(sites[0][0], sites[-1][1])  # the whole string's span (Word.span)
    count = len(ev.sources)
    placed_words = ev.placed_words
    made: list[tuple[Word, ...] | Segment] = []
    alone: list[tuple[int, ParsedScript, Node]] = []
    for read in held:
        text, filled = read.text, read.filled
        if read.one_part:
            # One part: placed where it was written (MappedSource.placed_word), most kept already.
            seg = filled[0]
            word = kept_part_word(seg, 0, len(text), placed_words, count)
            if word is None:
                word = part_word(seg, placement_of(ev, seg), 0, len(text), text, anchor, ev.sources, placed_words)
            made.append((word,))
            continue
        # Expanded on an earlier path (MappedSource.signature_at of the word in the string).
        words = ev.remembered(ev.placed_memo, ("w", read.kind, (anchor, count, read.parts)), st)
        if words is not NOT_REMEMBERED:
            made.append(cast("tuple[Word, ...]", words))
        elif len(filled) == 1 and _PLACEHOLDER.fullmatch(text):
            made.append(filled[0])  # an unknown part alone, expanded below
        else:
            return None
    # The unknown parts alone, each read in a string of its own, as _expand_alone reads them
    # (every one found readable before any is expanded, in the string's order).
    for i, m in enumerate(made):
        if isinstance(m, Segment):
            found = _alone_node(ev, m, anchor)
            if found is None:
                return None
            alone.append((i, *found))
    for i, sub, node in alone:
        made[i] = tuple(expansion.expand_word(ev, node, st, Frame(sub, frame.wrappers, frame.depth + 1)))
    words_made = [w for ws in cast("list[tuple[Word, ...]]", made) for w in ws]
    if not words_made or words_made[0].text != first or shell_c(words_made) is not None:
        return None
    head, tail = held[0].filled[0], held[-1].filled[-1]
    site_a, exact_a, _ = placement_of(ev, head)
    site_b, exact_b, _ = placement_of(ev, tail)
    span = joined_span((site_a, exact_a, 0), (site_b, exact_b, len(tail.text or "")), anchor, ev.sources)
    # As Evaluator.stmt counts a statement on one path, and commands.command records a launch.
    ev.steps += 1
    commands.record(ev, words_made, {}, span, st, frame)
    return [st]


def _expand_missing(
    ev: Evaluator,
    word: Word,
    source: MappedSource,
    runs: list[tuple[int, int, str]],
    made: list[tuple[Word, ...] | None],
    st: State,
    frame: Frame,
) -> bool:
    """The words of `runs` not expanded on an earlier path (None in `made`), expanded in the
    parsed string as `eval` would (and so remembered for the next path). False when the parser
    does not read the string as one command of those words."""
    missing = [i for i, m in enumerate(made) if m is None]
    alone = _expand_alone(ev, source, [runs[i] for i in missing], st, frame)
    if alone is not None:
        for i, words in zip(missing, alone, strict=True):
            made[i] = words
        return True
    sub = reparse(ev, word, frame, source)
    if sub is None:
        return False
    statements = [c for c in sub.root.children if c.is_named]
    if len(statements) != 1 or statements[0].type != "command":
        return False
    node = statements[0]
    name = node.child_by_field_name("name")
    nodes = [name, *node.children_by_field_name("argument")]
    if len(nodes) != len(runs) or len(node.named_children) != len(runs):
        return False
    at = sub.source.char_offset
    for n, (a, b, _run) in zip(nodes, runs, strict=True):
        if n is None or at(n.start_byte) != a or at(n.end_byte) != b:
            return False
    inner = Frame(sub, frame.wrappers, frame.depth + 1)
    for i, n in enumerate(nodes):
        if made[i] is None:
            assert n is not None
            made[i] = tuple(expansion.expand_word(ev, n, st, inner))
    return True


def _expand_alone(
    ev: Evaluator, source: MappedSource, missing: list[tuple[int, int, str]], st: State, frame: Frame
) -> list[tuple[Word, ...]] | None:
    """The words of the missing runs when each is an unknown part alone (`${__megalint_unknown_3}`),
    each expanded in a string of that one part: what it expands to rests on the part alone (its
    signature is the same in either string), and a part met again on another path (an unknown
    value many paths share, in a different place of each one's string) is read from that small
    string's parse instead of a parse of the whole string. None when another word is missing (a
    parse of the whole string reads them all at once; the small strings of words that differ on
    each path would each be parsed) or a small string is not read as that one word."""
    alone = []
    for a, b, run in missing:
        signature = source.signature_at(a, b) if _PLACEHOLDER.fullmatch(run) else None
        if signature is None:
            return None
        parts = cast(tuple[tuple[Segment, int, int], ...], signature[2])
        if len(parts) != 1 or parts[0][0].text != run or parts[0][1] != 0 or parts[0][2] != len(run):
            return None
        alone.append(parts[0][0])
    made = []
    for seg in alone:
        found = _alone_node(ev, seg, source.anchor)
        if found is None:
            return None
        sub, node = found
        made.append(tuple(expansion.expand_word(ev, node, st, Frame(sub, frame.wrappers, frame.depth + 1))))
    return made


def _alone_node(ev: Evaluator, seg: Segment, anchor: Span) -> tuple[ParsedScript, Node] | None:
    """The string of one unknown part (`_parsed_alone`) and its one word, an expansion of the
    whole string; None when it is not read so."""
    sub = _parsed_alone(ev, seg, anchor)
    if sub is None:
        return None
    statements = [c for c in sub.root.children if c.is_named]
    name = statements[0].child_by_field_name("name") if len(statements) == 1 else None
    node = name.named_children[0] if name is not None and name.named_child_count == 1 else None
    if node is None or node.type != "expansion" or node.start_byte != 0 or node.end_byte != len(seg.text or ""):
        return None
    return sub, node


def _parsed_alone(ev: Evaluator, seg: Segment, anchor: Span) -> ParsedScript | None:
    """An unknown part of a command string parsed as a string of its own, placed as in the string
    (`anchor`, the sources), as `reparse` parses one assembled from several places: kept for the
    run. None when the file holds its text where it was written (reparse reads that in place)."""
    key = (id(seg), anchor, len(ev.sources))
    held = ev.parsed_alone.get(key)
    if held is None or held[0] is not seg:
        word = Word((seg,))
        if in_place(ev, word) is not None:
            return None
        held = ev.parsed_alone[key] = (seg, parse_assembled(ev, word, anchor))
    return held[1]


def _kind(run: str) -> str:
    """The parser's name for a word of a simple command string (`_RUN`), as an argument."""
    if "$" in run:
        return "expansion" if _PLACEHOLDER.fullmatch(run) else "concatenation"
    return "number" if _NUMBER.fullmatch(run) else "word"


# ---------------------------------------------------------------------- bash -c


def shell_c(words: list[Word]) -> tuple[int, Word] | None:
    """Find `bash -c STRING` (possibly after a wrapper such as srun): returns (index, word)."""
    for i, w in enumerate(words):
        segs = w.segments
        # Most words are flags: only one whose text ends in "sh" can name a shell.
        last = segs[-1].text if segs else None
        if not segs or (last is not None and last != "" and not last.endswith("sh")):
            continue
        t = w.text
        if t is None:
            continue
        base = t.rsplit("/", 1)[-1]
        if base in ("bash", "sh", "zsh", "dash"):
            j = i + 1
            while j < len(words) and (words[j].text or "").startswith("-"):
                opt = words[j].text or ""
                if "c" in opt[1:] and not opt.startswith("--"):
                    if j + 1 < len(words):
                        return i, words[j + 1]
                    return None
                j += 1
            return None
    return None


def run_shell_c(
    ev: Evaluator,
    words: list[Word],
    idx: int,
    script_word: Word,
    assigns: dict[str, Word],
    node: Node,
    st: State,
    frame: Frame,
) -> list[State]:
    """`[wrapper …] bash -c STRING [NAME ARGS…]`: STRING runs in a new shell, under the wrapper."""
    wrapper = tuple(words[:idx])
    if script_word.splat is not None:
        # The command string is not known: keep the outer command as it is.
        commands.record(ev, words, assigns, frame.ps.span(node), st, frame)
        return [st]
    sub = reparse(ev, script_word, frame)
    if sub is None:
        commands.record(ev, words, assigns, frame.ps.span(node), st, frame)
        return [st]
    child = st.fork()
    # `bash -c` starts a new shell: only exported variables (and the prefix assignments) reach it.
    child.vars = {k: v for k, v in child.vars.items() if v.exported}
    for k, w in assigns.items():
        child.vars[k] = Var(scalar=w.segments, exported=True)
    rest = words[idx + 3 :] if idx + 2 < len(words) else []
    child.positional = tuple(w.segments for w in rest[1:]) if all(w.splat is None for w in rest[1:]) else None
    new_wrappers = frame.wrappers + ((wrapper,) if wrapper else ())
    return algebra.effects_only(st, ev.block(sub.root.children, [child], Frame(sub, new_wrappers, frame.depth + 1)))


# ---------------------------------------------------------------------- here-document scripts


def heredoc_script(ev: Evaluator, command: Node, heredoc: Node, st: State, frame: Frame) -> list[State]:
    """`sbatch <<EOF … EOF` (or bash/srun): the here-document is a script of its own, with
    its own `#SBATCH` headers; an unquoted delimiter expands it when it is written."""
    ps = frame.ps
    words = []
    for i, c in enumerate(command.children):
        if command.field_name_for_child(i) in ("name", "argument") and c.type not in (
            "file_redirect",
            "heredoc_redirect",
        ):
            words.extend(expansion.expand_word(ev, c, st, frame))
    body = next((c for c in heredoc.children if c.type == "heredoc_body"), None)
    start = next((c for c in heredoc.children if c.type == "heredoc_start"), None)
    if body is None:
        return [st]
    quoted = start is not None and any(q in ps.text(start) for q in ("'", '"', "\\"))
    if quoted:
        a = ps.source.char_offset(body.start_byte)
        text = ps.text(body)
        segs: tuple[Segment, ...] = (expansion.literal_segment(text, ps, a, a + len(text)),)
    else:
        pieces: list[Piece] = []
        pos = body.start_byte
        data = ps.parse_text
        for c in body.children:
            if c.type == "heredoc_content" or not c.is_named:
                continue
            cstart = effective_start(c, data)
            if cstart > pos:
                pieces.extend(expansion.dq_literal(ev, pos, cstart, ps, None, heredoc=True))
            pieces.extend(expansion.pieces(ev, c, st, frame, True, None))
            pos = c.end_byte
        if body.end_byte > pos:
            pieces.extend(expansion.dq_literal(ev, pos, body.end_byte, ps, None, heredoc=True))
        segs = tuple(p.segment for p in pieces if isinstance(p, SegmentPiece))
    word = Word(segs)
    sub = reparse(ev, word, frame)
    if sub is None:
        return [st]
    sbatch = plain_name(command.child_by_field_name("name")) == "sbatch"
    headers = tuple(read_headers(sub.source)) if sbatch else ()
    child = st.fork()
    if not sbatch:
        child.vars = {k: v for k, v in child.vars.items() if v.exported}
    for name, (value, span) in implied_environment(list(headers)).items():
        child.vars[name] = Var(scalar=(Segment(value, span),), exported=True, site=span)
    child.positional = ()
    wrappers = frame.wrappers + ((tuple(words),) if words else ())
    saved = ev.headers_stack
    ev.headers_stack = headers or saved
    try:
        results = ev.block(sub.root.children, [child], Frame(sub, wrappers, frame.depth + 1))
    finally:
        ev.headers_stack = saved
    return algebra.effects_only(st, results)
