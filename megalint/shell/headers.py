"""Scheduler headers (`#SBATCH`, `#PBS`) and the environment they imply.

sbatch reads `#SBATCH` lines only before the first command of the script; later ones are
plain comments, so they are ignored here too. The values are literals, which is what makes
the node count of a SLURM script knowable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from megalint import lazy_re
from megalint.source import SourceFile, Span

_SBATCH = lazy_re.compile(r"^#SBATCH\s+(.*)$")
_PBS = lazy_re.compile(r"^#PBS\s+(.*)$")
_SHORT = {
    "-N": "--nodes",
    "-n": "--ntasks",
    "-C": "--constraint",
    "-p": "--partition",
    "-G": "--gpus",
    "-t": "--time",
    "-J": "--job-name",
    "-A": "--account",
}


@dataclass(frozen=True)
class SchedulerHeader:
    """One `#SBATCH`/`#PBS` option written as a literal comment line."""

    scheduler: str  # "slurm" or "pbs"
    key: str  # "--nodes", "--gres", "-l select" ...
    value: str
    span: Span  # the value's span


def read_headers(source: SourceFile) -> list[SchedulerHeader]:
    headers: list[SchedulerHeader] = []
    text = source.text
    if "#SBATCH" not in text and "#PBS" not in text:
        return headers
    offset = 0
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break
        m = _SBATCH.match(line) or _PBS.match(line)
        if m:
            scheduler = "slurm" if line.startswith("#SBATCH") else "pbs"
            body_start = offset + m.start(1)
            headers.extend(_options(scheduler, m.group(1), body_start, source))
        offset += len(line) + 1
    return headers


def _options(scheduler: str, body: str, body_start: int, source: SourceFile) -> list[SchedulerHeader]:
    # Stop at an inline comment: `--ntasks-per-node=1  # crucial - only 1 task per node`
    cut = re.search(r"\s#", body)
    if cut:
        body = body[: cut.start()]
    out = []
    tokens = [(m.group(0), m.start()) for m in re.finditer(r"\S+", body)]
    i = 0
    while i < len(tokens):
        tok, pos = tokens[i]
        key, value, vpos = tok, "", None
        if tok.startswith("--") and "=" in tok:
            key, value = tok.split("=", 1)
            vpos = pos + len(key) + 1
        elif tok.startswith("-") and i + 1 < len(tokens) and not tokens[i + 1][0].startswith("-"):
            value, vpos = tokens[i + 1]
            i += 1
        if scheduler == "slurm":
            key = _SHORT.get(key, key)
        if scheduler == "pbs" and key == "-l" and value:
            for part in value.split(","):
                k, _, v = part.partition("=")
                at = body.find(part, vpos or 0)
                out.append(SchedulerHeader("pbs", f"-l {k}", v, _span(source, body_start + at + len(k) + 1, len(v))))
            i += 1
            continue
        value = value.strip("'\"")
        span = _span(
            source, body_start + (vpos if vpos is not None else pos), len(value) if vpos is not None else len(tok)
        )
        out.append(SchedulerHeader(scheduler, key, value, span))
        i += 1
    return out


def _span(source: SourceFile, start: int, length: int) -> Span:
    return source.span(start, start + length)


def header_value(headers: list[SchedulerHeader], *keys: str) -> SchedulerHeader | None:
    found = None
    for h in headers:
        if h.key in keys:
            found = h  # the last one wins, as in sbatch
    return found


def gpus_per_node(headers: list[SchedulerHeader]) -> tuple[int, SchedulerHeader] | None:
    h = header_value(headers, "--gpus-per-node")
    if h is not None:
        m = re.fullmatch(r"(?:[A-Za-z0-9_\-]+:)?(\d+)", h.value)
        if m:
            return int(m.group(1)), h
    h = header_value(headers, "--gres")
    if h is not None:
        for part in h.value.split(","):
            m = re.fullmatch(r"gpu(?::[A-Za-z0-9_\-]+)?:(\d+)", part)
            if m:
                return int(m.group(1)), h
    return None


def node_count(headers: list[SchedulerHeader]) -> tuple[int, SchedulerHeader] | None:
    h = header_value(headers, "--nodes")
    if h is not None:
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", h.value)
        if m and (m.group(2) is None or m.group(2) == m.group(1)):
            return int(m.group(1)), h
        return None
    h = header_value(headers, "-l select")
    if h is not None:
        m = re.match(r"(\d+)", h.value)
        if m:
            return int(m.group(1)), h
    h = header_value(headers, "-l nodes")
    if h is not None:
        m = re.match(r"(\d+)", h.value)
        if m:
            return int(m.group(1)), h
    return None


def implied_environment(headers: list[SchedulerHeader]) -> dict[str, tuple[str, Span]]:
    """The SLURM variables a literal header fixes, for `$SLURM_NNODES` and friends."""
    env: dict[str, tuple[str, Span]] = {}
    slurm = any(h.scheduler == "slurm" for h in headers)
    if not slurm:
        return env
    nodes = node_count(headers)
    if nodes is not None:
        n, h = nodes
        env["SLURM_NNODES"] = (str(n), h.span)
        env["SLURM_JOB_NUM_NODES"] = (str(n), h.span)
    tpn = header_value(headers, "--ntasks-per-node")
    if tpn is not None and tpn.value.isdigit():
        env["SLURM_NTASKS_PER_NODE"] = (tpn.value, tpn.span)
        if nodes is not None:
            env["SLURM_NTASKS"] = (str(int(tpn.value) * nodes[0]), tpn.span)
    nt = header_value(headers, "--ntasks")
    if nt is not None and nt.value.isdigit():
        env["SLURM_NTASKS"] = (nt.value, nt.span)
    gpn = gpus_per_node(headers)
    if gpn is not None:
        n, h = gpn
        env["SLURM_GPUS_PER_NODE"] = (str(n), h.span)
        env["SLURM_GPUS_ON_NODE"] = (str(n), h.span)
    return env
