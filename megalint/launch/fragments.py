"""Fragments: Megatron arguments a file sets without launching them (a per-model config holding
`GPT_ARGS=(--num-layers 24 …)` or `MODEL_ARGS="--num-layers 24 …"` for a launcher to source).

A fragment is checked on its own when the file has no launch: what needs no launch (the flags,
their values, repeats) is decided; what needs one (the world size, the GPU, flags it does not
give) is not. To keep a file that merely mentions a flag from being read as one, a fragment is a
variable of the file whose value holds at least two words that are flags of the catalogue.
"""

from __future__ import annotations

from collections.abc import Callable

from megalint import lazy_re
from megalint.launch.model import Launch, Quantity
from megalint.shell.facts import ScriptFacts
from megalint.shell.values import Unknown, Word
from megalint.source import Span

FRAGMENT = "fragment"  # Launch.launcher of a fragment
NO_LAUNCH = "the file sets arguments without launching them (a fragment): there is no launch"
MIN_FLAGS = 2
_EXPANSION = lazy_re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
# Whoever launches a fragment is not known; its flags are read as Megatron-LM's own entry point
# reads them, so that a misspelt or removed flag is reported.
READ_AS = "pretrain_gpt.py"


def find_fragments(facts: ScriptFacts, is_flag: Callable[[str], bool]) -> list[Launch]:
    """The fragments written in the file itself (a file it sources is checked on its own), once
    each, in the order they are written."""
    found: dict[tuple[str, Span], Launch] = {}
    for path in facts.paths:
        for name, var in path.variables.items():
            words = var.array if var.array is not None else var.fields
            if not words or not _is_fragment(words, is_flag):
                continue
            span = _span(words)
            if span is None or span.path != facts.path or (name, span) in found:
                continue
            found[(name, span)] = _fragment(name, words, span, path.condition)
    return _outermost(sorted(found.values(), key=lambda la: la.span), facts)


def _outermost(fragments: list[Launch], facts: ScriptFacts) -> list[Launch]:
    """Each flag checked once, where it is written: without a fragment that expands another
    (`ALL_ARGS="$MODEL_ARGS $TRAIN_ARGS"`; its words would point at `$MODEL_ARGS`), nor a second
    one of the same words (`ARGS=("${GPT_ARGS[@]}")`)."""
    names = {f.variable for f in fragments if f.variable is not None}
    kept: list[Launch] = []
    seen: set[frozenset[str]] = set()
    for f in fragments:
        sites = frozenset(str(w.span) for w in f.argv if w.span is not None)
        if sites in seen or (_expanded(f, facts) & (names - {f.variable})):
            continue
        seen.add(sites)
        kept.append(f)
    return kept


def _expanded(fragment: Launch, facts: ScriptFacts) -> set[str]:
    """The variables whose expansion (`$X`, `${X…}`) one of the fragment's words is shown at or
    went through."""
    out: set[str] = set()
    for w in fragment.argv:
        for seg in w.segments:
            for sp in (seg.site, *seg.via):
                src = facts.sources.get(sp.path) if sp is not None else None
                if src is not None and sp is not None:
                    m = _EXPANSION.match(src.text[sp.start : sp.end])
                    if m:
                        out.add(m.group(1))
    return out


def _is_fragment(words: tuple[Word, ...], is_flag: Callable[[str], bool]) -> bool:
    flags = {t.split("=", 1)[0] for w in words if (t := w.text) is not None and t.startswith("--")}
    return sum(1 for f in flags if is_flag(f)) >= MIN_FLAGS


def _span(words: tuple[Word, ...]) -> Span | None:
    spans = [w.span for w in words if w.span is not None]
    if not spans:
        return None
    first, last = spans[0], spans[-1]
    if first.path != last.path or last.end < first.start:
        return first
    return Span(first.path, first.start_line, first.start_col, last.end_line, last.end_col, first.start, last.end)


def _fragment(name: str, words: tuple[Word, ...], span: Span, condition: tuple[str, ...]) -> Launch:
    none = Quantity(None, FRAGMENT, (), Unknown(NO_LAUNCH, span))
    return Launch(
        launcher=FRAGMENT,
        command=words,
        entry=None,
        argv=words,
        env={},
        nproc_per_node=none,
        nnodes=none,
        world_size=none,
        span=span,
        condition=condition,
        variable=name,
    )
