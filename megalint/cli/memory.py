"""`megalint memory SCRIPT`: the per-stage memory breakdown of every Megatron launch.

Text: per launch a table of the terms of each pipeline stage (first, middle, last), the
memory outside PyTorch's allocator, the GPU's usable memory and the headroom, and a bar per
stage whose characters show which terms fill the GPU. `--json`: the same numbers in bytes.
Exit status: 0 when the breakdown was shown (whatever it says), 2 for bad input (unreadable
script, unknown GPU name, malformed option).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

from megalint.checking.files import read_script, read_stream
from megalint.cli.analysis import add_assume, parse_assume
from megalint.discovery import shown_name
from megalint.errors import ExitCode, InputError, UsageError
from megalint.memory.report import TERM_LABELS
from megalint.reports.memory import memory_report
from megalint.source import decode

if TYPE_CHECKING:
    from rich.console import Console

# term -> (bar character without colour, colour); one character per term so that the bar
# still reads when it is not coloured
BAR_STYLE = {
    "params": ("P", "blue"),
    "grads": ("G", "cyan"),
    "optimizer_state": ("O", "magenta"),
    "workspace": ("w", "bright_black"),
    "attention_buffers": ("S", "yellow"),
    "cuda_graph_buffers": ("C", "bright_cyan"),
    "deferred_embedding_wgrad": ("D", "bright_red"),
    "activations": ("A", "green"),
    "embedding_and_final_norm_activations": ("E", "bright_green"),
    "logits_and_loss": ("L", "red"),
    "backward_transient": ("B", "bright_yellow"),
    "optimizer_step_transient": ("T", "bright_magenta"),
    "overhead": ("X", "white"),
}
BAR_WIDTH = 60


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="megalint memory",
        description="Predicted per-GPU memory of each Megatron launch in a script, per pipeline stage.",
        epilog="Exit status: 0 shown, 2 bad input.",
    )
    p.add_argument("script", help="a launch script; `-` reads standard input")
    p.add_argument("--gpu", help="GPU model (h100, a100-80gb, h200 …) when the script does not name one")
    p.add_argument("--json", action="store_true", help="print the breakdown as JSON, in bytes")
    p.add_argument("--megatron-version", help="Megatron version of the job (default: the newest known)")
    add_assume(p)
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    return p


def main(argv: list[str]) -> int:
    """Run `megalint memory`; returns the exit status (0 shown, 2 bad input)."""
    ns = _parser().parse_args(argv)
    assume = parse_assume(ns.assume, allow_empty_name=True)
    text = _read(ns.script)
    report = memory_report(ns.script, text, gpu=ns.gpu, megatron_version=ns.megatron_version, assume=assume)
    if ns.json:
        sys.stdout.write(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    else:
        render_text(report, sys.stdout, ns.color)
    return ExitCode.CLEAN


def _read(path: str) -> str:
    shown = shown_name(path)
    try:
        data = read_stream(sys.stdin.buffer, shown) if path == "-" else read_script(path, shown)
        return decode(shown, data)
    except InputError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"{shown}: cannot read: {exc.strerror or exc}") from None


# ------------------------------------------------------------------------------ text


def _gib(n: float | None) -> str:
    return "?" if n is None else f"{n / 2**30:.1f}"


def render_text(report: dict[str, Any], out: TextIO, color: str = "auto") -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from megalint.output.common import color_enabled

    isatty = hasattr(out, "isatty") and out.isatty()
    colour = color_enabled(color, isatty)
    con = Console(
        file=out,
        force_terminal=colour,
        no_color=not colour,
        color_system="standard" if colour else None,
        width=max(100, Console(file=out).width if isatty else 100),
        highlight=False,
        soft_wrap=True,
    )
    gpu = report["gpu"]
    usable_default = gpu.get("usable_bytes")
    if gpu.get("name"):
        line = f"GPU: {gpu['name']}"
        if usable_default is not None:
            line += (
                (", at most " if gpu.get("usable_is_largest_variant") else ", ")
                + f"{_gib(usable_default)} GiB usable"
                + (
                    " (the largest model of the family; name the exact model for a sharper answer)"
                    if gpu.get("usable_is_largest_variant")
                    else ""
                )
            )
        if gpu.get("from"):
            line += f" — {gpu['from']}"
        con.print(line)
        if gpu.get("note"):
            con.print(f"  note: {gpu['note']}")
        if gpu.get("unknown"):
            con.print(f"  {gpu['unknown']}")
    else:
        con.print(f"GPU: not known: {gpu.get('unknown')}. The estimate is shown without headroom.")
    if not report["launches"]:
        con.print("No Megatron launch found in the script.")
        return
    for entry in report["launches"]:
        con.print()
        head = f"{entry['path']}:{entry['line']}: {entry['launcher']} {entry.get('entry') or ''}".rstrip()
        if entry.get("world_size"):
            head += f", world size {entry['world_size']}"
        if entry["condition"]:
            head += f" (when {' and '.join(entry['condition'])})"
        con.print(Text(head, style="bold"))
        est = entry["estimate"]
        if est is None:
            con.print(f"  no estimate: {entry['unknown']}")
            con.print("  (a value from the environment can be given with --assume NAME=VALUE)")
            continue
        lay = est["layout"]
        con.print(
            "  layout: "
            + " ".join(f"{k.upper()} {lay[k]}" for k in ("tp", "pp", "vpp", "cp", "ep", "dp") if k in lay)
            + f", {lay.get('microbatches')} micro-batches per step"
        )
        if est["lower_bound"]:
            for what, why in est["not_counted"].items():
                con.print(f"  lower bound: {what.replace('_', ' ')} not counted ({why})")
        for a in est["assumptions"]:
            con.print(f"  assumed: {a}")
        usable = est.get("usable_bytes")
        table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
        table.add_column("GiB")
        for s in est["stages"]:
            table.add_column(f"{s['stage']} ({s['num_layers']} layers)", justify="right")
        names = [k for k in TERM_LABELS if any(k in s["terms"] for s in est["stages"])]
        for k in names:
            cells = []
            for s in est["stages"]:
                v = s["terms"].get(k)
                in_peak = k in s["peak_terms"]
                cells.append("" if v is None else (_gib(v) if in_peak else f"({_gib(v)})"))
            if any(cells):
                table.add_row(TERM_LABELS[k], *cells)
        table.add_row(
            Text("peak allocated", style="bold"), *[Text(_gib(s["peak_bytes"]), style="bold") for s in est["stages"]]
        )
        for k, v in est["overhead"]["terms"].items():
            table.add_row(f"+ {TERM_LABELS.get(k, k)}", *[_gib(v)] * len(est["stages"]))
        table.add_row(
            Text("device total", style="bold"), *[Text(_gib(s["device_bytes"]), style="bold") for s in est["stages"]]
        )
        if usable is not None:
            table.add_row("usable", *[_gib(usable)] * len(est["stages"]))
            headroom = []
            for s in est["stages"]:
                h = usable - s["device_bytes"]
                headroom.append(
                    Text(_gib(h), style="green" if h >= 0.1 * usable else "yellow" if h >= 0 else "red bold")
                )
            table.add_row("headroom", *headroom)
        con.print(table)
        con.print(
            "  peak at: "
            + ", ".join(f"{s['stage']} {s['peak_event'].replace('_', ' ')}" for s in est["stages"])
            + "; (…) = held at another moment of the step, not at the peak"
        )
        _bars(con, est, usable, colour)
        if usable is not None:
            verdict = "fits" if est["fits"] else "does NOT fit"
            con.print(
                f"  {verdict}: worst stage {est['worst_stage']} needs {'at least ' if est['lower_bound'] else ''}"
                f"{_gib(est['device_bytes'])} GiB of {_gib(usable)} GiB"
            )
            for sug in est.get("suggestions", []):
                con.print(
                    f"    {'fits' if sug['fits'] else 'not enough'}: {' '.join(sug['flags'])} → "
                    f"{_gib(sug['device_bytes'])} GiB ({sug['note']})"
                )


def _bars(con: Console, est: dict[str, Any], usable: int | None, colour: bool) -> None:
    from rich.text import Text

    scale = max([s["device_bytes"] for s in est["stages"]] + ([usable] if usable else []))
    if scale <= 0:
        return
    used_terms: list[str] = []
    for s in est["stages"]:
        parts = [(k, v) for k, v in s["peak_terms"].items() if v > 0]
        parts.append(("overhead", est["overhead"]["bytes"]))
        bar = Text()
        filled = 0
        acc = 0.0
        for k, v in parts:
            acc += v
            end = int(round(acc / scale * BAR_WIDTH))
            n = end - filled
            if n <= 0:
                continue
            ch, style = BAR_STYLE.get(k, ("?", "white"))
            bar.append(("█" if colour else ch) * n, style=style if colour else None)
            filled = end
            if k not in used_terms:
                used_terms.append(k)
        limit = int(round(usable / scale * BAR_WIDTH)) if usable else None
        if limit is not None and limit < BAR_WIDTH:
            # mark the usable limit inside an over-full bar
            plain = bar.plain
            if limit < len(plain):
                bar = bar[:limit] + Text("|", style="bold red" if colour else "") + bar[limit + 1 :]
            else:
                bar.append(" " * (limit - len(plain)) + "|")
        elif limit is not None:
            bar.append(" " * (BAR_WIDTH - len(bar.plain)) + "|")
        con.print(Text(f"  {s['stage']:>6} ") + bar + Text(f" {_gib(s['device_bytes'])} GiB"))
    legend = Text("         ")
    for k in used_terms:
        ch, style = BAR_STYLE.get(k, ("?", "white"))
        legend.append("█" if colour else ch, style=style if colour else None)
        legend.append(f" {TERM_LABELS.get(k, 'outside the allocator' if k == 'overhead' else k)}  ")
    if usable:
        legend.append("| usable memory")
    con.print(legend)
