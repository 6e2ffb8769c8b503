#!/usr/bin/env python3
"""Summarise recorded oracle verdicts: counts per version, agreement with the research
notes' Appendix A, and the scenarios whose verdict changes between versions."""

from __future__ import annotations

import collections
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.normpath(os.path.join(HERE, "..", "..")))

from tests.oracle import oracle_data as od  # noqa: E402


def main() -> int:
    present = [v for v, f in od.VERSION_FILES.items() if os.path.exists(os.path.join(od.DATA, f))]
    rows = {v: {r["id"]: r for r in od.load_rows(v)} for v in present}

    print("## Counts")
    for v in present:
        c = collections.Counter(r["outcome"] for r in rows[v].values())
        gen = sum(1 for i in rows[v] if i.startswith("G"))
        app = sum(1 for i in rows[v] if i.startswith("A"))
        locs = len({r["check_location"] for r in rows[v].values() if r["check_location"]})
        print(
            f"{v:7} {len(rows[v]):4} rows (appendix {app}, generated {gen}) {dict(c)} distinct check locations {locs}"
        )

    print("\n## Appendix A agreement")
    appendix = od.load_scenarios("appendix_a.json")["scenarios"]
    for v in ("HEAD", "0.15.0", "0.12.0"):
        if v not in rows:
            continue
        compared = bad = 0
        for s in appendix:
            exp = s["doc"].get(v)
            if exp is None:
                continue
            compared += 1
            problems = od.compare(exp, rows[v][s["id"]])
            if problems:
                bad += 1
                print(f"  {v} {s['id']} {s['title']}: {problems}")
        print(f"{v}: {compared - bad}/{compared} agree")

    print("\n## Verdict changes between versions (error vs not), generated scenarios")
    order = [
        v
        for v in ("0.8.0", "0.12.0", "0.15.0", "0.19.0", "HEAD")
        if v in rows and any(i.startswith("G") for i in rows[v])
    ]
    for a, b in zip(order, order[1:], strict=False):
        diffs = collections.Counter()
        for sid, ra in rows[a].items():
            rb = rows[b].get(sid)
            if rb is None or not sid.startswith("G"):
                continue
            if (ra["outcome"] == "ok") != (rb["outcome"] == "ok"):
                diffs[
                    (
                        ra["outcome"],
                        ra["stage"],
                        (ra["message"] or "")[:70],
                        rb["outcome"],
                        rb["stage"],
                        (rb["message"] or "")[:70],
                    )
                ] += 1
        if not diffs:
            continue
        print(f"\n### {a} -> {b}")
        for (oa, sa, ma, ob, sb, mb), n in diffs.most_common():
            print(f"  {n:3}x {oa}@{sa} {ma!r}  ->  {ob}@{sb} {mb!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
