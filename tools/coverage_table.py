"""The coverage of Megatron-LM's argument constraints by megalint rules.

The constraint rows (A1 ... R12) come from the research notes on Megatron-LM's argument
constraints; `extract` reads their tables into docs/constraint-rows.json, which is committed
so that the table can be rebuilt without the notes. A rule says which rows it covers with
`docs.references` entries `constraints:<ID>` (`constraints:A5`). The default command writes
docs/constraints-coverage.md: every row with the rules covering it (code, name, Megatron
version range, severity), or the reason no rule can decide it.

    python tools/coverage_table.py                        # rewrite docs/constraints-coverage.md
    python tools/coverage_table.py --check                # exit 1 when the file is out of date
    python tools/coverage_table.py extract NOTES.md       # refresh docs/constraint-rows.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROWS = ROOT / "docs" / "constraint-rows.json"
OUT = ROOT / "docs" / "constraints-coverage.md"

GROUPS = {
    "A": "World size and parallel sizes",
    "B": "Layers, pipeline, VPP, layouts",
    "C": "Heads, hidden size, GQA, FFN",
    "D": "Batch sizes and schedule",
    "E": "Sequence parallel, TP comm overlap, CUDA_DEVICE_MAX_CONNECTIONS",
    "F": "DP overlap, distributed optimizer, FSDP",
    "G": "Precision",
    "H": "Recompute and offload",
    "I": "Context parallel",
    "J": "MoE",
    "K": "MLA, MTP, hybrid patterns",
    "L": "Position embeddings, RoPE, sequence length",
    "M": "Tokenizer and vocab",
    "N": "Data, checkpointing, misc training",
    "O": "CUDA graphs",
    "P": "Deprecated, removed and alias flags",
    "Q": "Environment variables",
    "R": "argparse-level pitfalls",
}
# Groups whose rules were written first (rules/flags and the A–F constraints); the rows of the other
# groups without a rule are explained with those rules (docs/constraints-uncoverable-g-q.md).
OWN_GROUPS = set("ABCDEFPR")

# Rules written before the `constraints:` references, and the rows they decide.
EXTRA_COVERAGE = {"ML101": ("A1", "A3", "A4")}

# Rows of the own groups that no rule decides, and why. "no finding": Megatron applies a default
# or an alias and nothing is wrong to report; "not static": the outcome needs something a launch
# script does not hold; "not reachable": the check exists but the command line cannot trigger it;
# "not written": decidable, no rule yet.
UNCOVERED = {
    "A11": (
        "no finding",
        "the expert tensor-parallel size defaults to TP; megalint derives it "
        "(derived.expert_tensor_parallel_size) and the expert-grid rules use it",
    ),
    "B13": (
        "not reachable",
        "the virtual pipeline size has no flag of its own; with a layout, any virtual-stage flag is refused first (B2)",
    ),
    "C6": ("no finding", "the FFN size default (4h, or 8h/3 rounded for SwiGLU) is derived (derived.ffn_hidden_size)"),
    "D2": ("no finding", "the global batch defaults to micro batch × DP (derived.global_batch_size)"),
    "E2": (
        "not reachable",
        "only a programmatic config reaches it: validate_args turns sequence parallelism off at TP = 1 first (E1)",
    ),
    "E4": ("elsewhere", "ML745 `cuda-device-max-connections` (with Q1) decides it, in the rules of groups G-Q"),
    "E4b": ("elsewhere", "ML745 `cuda-device-max-connections` decides it (the 0.8 catalogue branch)"),
    "E7": ("elsewhere", "ML692 (error up to 0.15) and ML693 (warning from 0.16) decide it, in the MoE rules"),
    "P2": ("elsewhere", "ML665 `checkpoint-activations-exits` decides it, in the recompute rules"),
    "P7": ("elsewhere", "ML706 `use-flash-attn-no-op` decides it, in the attention rules"),
    "P3": ("no finding", "`--recompute-activations` is a valid alias of selective recomputation"),
    "R5": (
        "no finding",
        "`--x`/`--no-x` of BooleanOptionalAction flags are both valid; binding stores False for the `--no-` spelling",
    ),
    "R7": ("no finding", "binding maps every option to its dest; rules read dests"),
    "R9": ("no finding", "tri-state flags (default None) are bound as written"),
    "R11": (
        "not static",
        "the modelopt flags of pretrain_gpt.py exist only when nvidia-modelopt is "
        "importable on the cluster; `--extra-args` of other entry points are "
        "unknown to the catalogue",
    ),
    "R12": (
        "not static",
        "`--yaml-cfg` replaces the command line with a YAML file megalint does not "
        "read; rules that report a missing flag stay silent when it is given",
    ),
}
# Parts of covered rows that no rule decides.
PARTIAL = {
    "F15": "only the mxfp8 buffer reuse is checked: `--num-buckets`/`--bucket-size` are not flags of any shipped catalogue, and the NCCL user-buffer part depends on the torch version",
    "D10": "only sequence packing (micro batch 1) is checked; the other `--perform-rl-step` rules are not written",
    "E8": "the Transformer Engine build (MPI/userbuffers) cannot be seen from the script",
    "F16": "nothing to check: there is no GPU-generation condition on the overlap flags",
}


def _short(text: str, n: int) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= n else text[: n - 3].rstrip() + "..."


def extract(notes: Path) -> list[dict]:
    """The constraint rows of the notes' tables: id, group, kind, since and a short summary."""
    rows: list[dict] = []
    header: list[str] = []
    for line in notes.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            header = []
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if cells and cells[0] == "ID":
            header = [c.lower() for c in cells]
            continue
        if not header or not cells or not re.fullmatch(r"[A-R]\d+[a-z]?", cells[0]):
            continue
        rec = dict(zip(header, cells, strict=False))
        cond = next((v for k, v in rec.items() if k.startswith("condition")), "")
        summary = cond or rec.get("flag") or rec.get("pitfall") or rec.get("variable", "")
        if rec.get("variable"):
            summary = f"{rec['variable']}: {rec.get('rule', '')}"
        summary = re.sub(r"\s+", " ", summary.replace("\\|", "|"))
        rows.append(
            {
                "id": cells[0],
                "group": cells[0][0],
                "kind": _short(rec.get("kind", rec.get("status at head", "")), 60),
                "since": rec.get("since", rec.get("since/until", "")),
                "summary": _short(summary, 140),
            }
        )
    return rows


def rule_coverage(rule_dirs: list[Path] | None = None) -> dict[str, list[dict]]:
    """row id -> the rules that name it, from every rule file under the shipped rule folder."""
    from megalint.engine import load_rules

    rules = load_rules([str(d) for d in rule_dirs or []])
    cover: dict[str, list[dict]] = {}
    for rule in rules:
        ids = [r.split(":", 1)[1] for r in (rule.docs.references or ()) if r.startswith("constraints:")]
        ids += list(EXTRA_COVERAGE.get(rule.code, ()))
        for i in dict.fromkeys(ids):
            cover.setdefault(i, []).append(
                {
                    "code": rule.code,
                    "name": rule.name,
                    "severity": str(rule.severity.value),
                    "megatron": str(rule.megatron) if rule.megatron else "*",
                }
            )
    return cover


def render(rows: list[dict], cover: dict[str, list[dict]]) -> str:
    out = [
        "# Megatron-LM constraints covered by megalint rules",
        "",
        "Generated by `python tools/coverage_table.py` from the rule files (`docs.references`",
        "entries `constraints:<ID>`) and the constraint rows of the research notes",
        "(docs/constraint-rows.json). Do not edit by hand: a test checks that it is up to date.",
        "",
        "Kinds: E error, W warning, F silent auto-correction, N no-op. The version range is the",
        "rule's `megatron` range (`*`: every version).",
        "",
    ]
    ids = {r["id"] for r in rows}
    totals = {"covered": 0, "partial": 0, "uncovered": 0}
    own = {"covered": 0, "uncovered": 0}
    reasons: dict[str, int] = {}
    body: list[str] = []
    for group, title in GROUPS.items():
        group_rows = [r for r in rows if r["group"] == group]
        if not group_rows:
            continue
        body += [
            f"## {group}. {title}",
            "",
            "| ID | kind | since | constraint | rules | version range |",
            "|---|---|---|---|---|---|",
        ]
        for r in group_rows:
            rules = cover.get(r["id"], [])
            summary = r["summary"].replace("|", "\\|")
            if rules:
                totals["covered"] += 1
                if r["id"] in PARTIAL:
                    totals["partial"] += 1
                if group in OWN_GROUPS:
                    own["covered"] += 1
                names = "<br>".join(f"{x['code']} `{x['name']}` ({x['severity']})" for x in rules)
                ranges = "<br>".join(f"`{x['megatron']}`" for x in rules)
                if r["id"] in PARTIAL:
                    names += f"<br>*not decided: {PARTIAL[r['id']]}*"
            else:
                totals["uncovered"] += 1
                if group in OWN_GROUPS:
                    own["uncovered"] += 1
                    why, text = UNCOVERED.get(r["id"], ("not written", "no rule yet"))
                    reasons[why] = reasons.get(why, 0) + 1
                    names = f"— *{why}: {text}*"
                else:
                    names = "— *see docs/constraints-uncoverable-g-q.md*"
                ranges = ""
            body.append(f"| {r['id']} | {r['kind']} | {r['since']} | {summary} | {names} | {ranges} |")
        body.append("")
    # `constraints:§0.2` names a section of the notes rather than a row.
    unknown_refs = sorted(r for r in set(cover) - ids if not r.startswith("§"))
    out += [
        "## Summary",
        "",
        f"- rows: {len(rows)}; with a rule: {totals['covered']} (of which {totals['partial']} partly); "
        f"without: {totals['uncovered']}",
        f"- groups A-F, P and R: {own['covered']} with a rule, {own['uncovered']} without ("
        + ", ".join(f"{n} {k}" for k, n in sorted(reasons.items()))
        + ")",
    ]
    if unknown_refs:
        out.append(f"- references to rows the notes do not have: {', '.join(unknown_refs)}")
    out.append("")
    return "\n".join(out + body)


def build() -> str:
    rows = json.loads(ROWS.read_text(encoding="utf-8"))
    return render(rows, rule_coverage())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", nargs="?", default="write", choices=["write", "extract"])
    ap.add_argument("notes", nargs="?", help="the research notes (for extract)")
    ap.add_argument("--check", action="store_true", help="fail when the committed table is out of date")
    args = ap.parse_args(argv)
    if args.command == "extract":
        if not args.notes:
            ap.error("extract needs the path of the notes")
        rows = extract(Path(args.notes))
        ROWS.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{len(rows)} rows -> {ROWS.relative_to(ROOT)}")
        return 0
    text = build()
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT.relative_to(ROOT)} is out of date: run python tools/coverage_table.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
