"""`megalint model`: what megalint understood of a script, as text or JSON."""

from __future__ import annotations

from typing import TypedDict

from megalint.launch.model import Launch, Quantity, QuantityJson
from megalint.shell.facts import ScriptFacts, ShellFindingKind
from megalint.shell.values import Word


class WordJson(TypedDict):
    text: str | None
    unknown: str | None  # why the text is not known
    at: str | None
    chain: list[str]  # the assignments its text came through
    via: list[str]  # the expansions it came through
    assumed: str | None


class ArgumentJson(TypedDict):
    flag: WordJson | None
    value: WordJson | None


class LaunchJson(TypedDict):
    launcher: str
    at: str
    condition: list[str]
    entry: WordJson | None
    nproc_per_node: QuantityJson
    nnodes: QuantityJson
    world_size: QuantityJson
    arguments: list[ArgumentJson]
    environment: dict[str, WordJson | None]
    notes: list[str]


class HeaderJson(TypedDict):
    scheduler: str
    key: str
    value: str
    at: str


class ShellFindingJson(TypedDict):
    kind: ShellFindingKind
    at: str
    message: str


class ModelJson(TypedDict):
    file: str
    headers: list[HeaderJson]
    paths: int
    launches: list[LaunchJson]
    shell_findings: list[ShellFindingJson]
    sourced: list[str]
    notes: list[str]
    assumptions: list[dict[str, str]]  # {text, at}: what the model took as true to read the script


def pair_flags(argv: tuple[Word, ...]) -> list[tuple[Word, Word | None]]:
    """Flags and the words that follow them, without knowing Megatron's catalogue."""
    out: list[tuple[Word, Word | None]] = []
    i = 0
    while i < len(argv):
        w = argv[i]
        t = w.text
        if t is not None and t.startswith("--"):
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            nt = nxt.text if nxt is not None else None
            if "=" in t:
                out.append((w, None))
                i += 1
            elif nxt is not None and nxt.splat is None and (nt is None or not nt.startswith("--")):
                out.append((w, nxt))
                i += 2
            else:
                out.append((w, None))
                i += 1
        else:
            out.append((w, None))
            i += 1
    return out


def word_json(w: Word | None) -> WordJson | None:
    if w is None:
        return None
    return {
        "text": w.text,
        "unknown": None if w.unknown is None else w.unknown.reason,
        "at": None if w.span is None else str(w.span),
        "chain": [str(s) for s in w.origins],
        "via": [str(s) for s in w.via],
        "assumed": w.assumed,
    }


def launch_json(launch: Launch) -> LaunchJson:
    return {
        "launcher": launch.launcher,
        "at": str(launch.span),
        "condition": list(launch.condition),
        "entry": word_json(launch.entry),
        "nproc_per_node": launch.nproc_per_node.to_json(),
        "nnodes": launch.nnodes.to_json(),
        "world_size": launch.world_size.to_json(),
        "arguments": [{"flag": word_json(f), "value": word_json(v)} for f, v in pair_flags(launch.argv)],
        "environment": {k: word_json(v) for k, v in sorted(launch.env.items())},
        "notes": launch.notes,
    }


def model_json(facts: ScriptFacts, launches: list[Launch]) -> ModelJson:
    return {
        "file": facts.path,
        "headers": [
            {"scheduler": h.scheduler, "key": h.key, "value": h.value, "at": str(h.span)} for h in facts.headers
        ],
        "paths": len(facts.paths),
        "launches": [launch_json(la) for la in launches],
        "shell_findings": [{"kind": f.kind, "at": str(f.span), "message": f.message} for f in facts.findings],
        "sourced": facts.sourced,
        "notes": facts.notes,
        "assumptions": [{"text": a.text, "at": str(a.span)} for a in facts.assumptions],
    }


def _qty(q: Quantity) -> str:
    if q.value is not None:
        where = f" at {q.span}" if q.span else ""
        return f"{q.value} ({q.how}{where})"
    return f"unknown — {q.unknown.reason if q.unknown else q.how}"


def _word_line(w: Word | None) -> str:
    if w is None:
        return ""
    if w.text is None:
        reason = w.unknown.reason if w.unknown else "unknown"
        return f"unknown ({reason})"
    chain = "".join(f" ← {s}" for s in w.origins)
    note = f" [assumed: {w.assumed}]" if w.assumed else ""
    return f"{w.text!s}  @ {w.span}{chain}{note}"


def model_text(facts: ScriptFacts, launches: list[Launch]) -> str:
    lines = [f"{facts.path}: {len(launches)} Megatron launch(es), {len(facts.paths)} path(s) through the script"]
    for h in facts.headers:
        lines.append(f"  header  #{'SBATCH' if h.scheduler == 'slurm' else 'PBS'} {h.key}={h.value}  @ {h.span}")
    for i, la in enumerate(launches, 1):
        lines.append("")
        cond = f"  when {' and '.join(la.condition)}" if la.condition else ""
        lines.append(f"launch {i}: {la.launcher} {la.entry.partial_text if la.entry else '?'}  @ {la.span}{cond}")
        lines.append(f"  nproc per node: {_qty(la.nproc_per_node)}")
        lines.append(f"  nodes:          {_qty(la.nnodes)}")
        lines.append(f"  world size:     {_qty(la.world_size)}")
        lines.append("  arguments:")
        for f, v in pair_flags(la.argv):
            if f.splat is not None:
                lines.append(f"    … any number of words: {f.splat.reason}")
                continue
            head = f.partial_text
            if v is None:
                lines.append(f"    {head}  @ {f.span}" + ("" if f.text is not None else f"  (unknown: {f.unknown})"))
            else:
                lines.append(f"    {head} = {_word_line(v)}")
        if la.env:
            lines.append("  environment:")
            for k, v in sorted(la.env.items()):
                lines.append(f"    {k} = {_word_line(v)}")
        for n in la.notes:
            lines.append(f"  note: {n}")
    if facts.findings:
        lines.append("")
        lines.append("shell findings:")
        for finding in facts.findings:
            lines.append(f"  {finding.span}: {finding.kind}: {finding.message}")
    for n in facts.notes:
        lines.append(f"note: {n}")
    for a in facts.assumptions:
        lines.append(f"assumed: {a.text}  @ {a.span}")
    return "\n".join(lines)
