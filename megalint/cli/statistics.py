"""`megalint --statistics`: how many findings of each rule, as Ruff's `--statistics` prints them:
`count code [*] name` per rule, the most frequent first, or a JSON list with `--output-format json`."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

from megalint.diagnostics import Diagnostic
from megalint.output.common import fixable, summary_line

JSON_FORMATS = ("json", "json-lines")


def statistics(diagnostics: Sequence[Diagnostic], unsafe: bool = False) -> list[dict[str, object]]:
    """One entry per rule that found something: code, name, count, and how many --fix fixes."""
    counts: Counter[str] = Counter(d.code for d in diagnostics)
    fixes: Counter[str] = Counter(d.code for d in diagnostics if fixable(d, unsafe))
    names = {d.code: d.name for d in diagnostics}
    order = sorted(counts, key=lambda code: (-counts[code], code))
    return [
        {
            "code": code,
            "name": names[code],
            "count": counts[code],
            "fixable": fixes[code] > 0,
            "fixable_count": fixes[code],
        }
        for code in order
    ]


def render_statistics(diagnostics: Sequence[Diagnostic], output_format: str, unsafe: bool = False) -> str:
    """The statistics in `output_format`: JSON for json and json-lines, else Ruff's table and the
    closing summary."""
    rows = statistics(diagnostics, unsafe)
    if output_format in JSON_FORMATS:
        return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"
    if not rows:
        return summary_line(diagnostics, unsafe) + "\n"
    count_width = max(len(str(r["count"])) for r in rows)
    code_width = max(len(str(r["code"])) for r in rows)
    lines = [
        f"{r['count']:>{count_width}}\t{r['code']:<{code_width}}\t{'[*]' if r['fixable'] else '[ ]'} {r['name']}"
        for r in rows
    ]
    return "\n".join(lines) + "\n" + summary_line(diagnostics, unsafe) + "\n"
