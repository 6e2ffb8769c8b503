"""Compare an extracted catalogue with the flag table built from Megatron-LM's real argparse parsers.

The table (megatron-flags-by-version.tsv, one row per option string) was produced by building the parser of
core_v0.8.0, core_v0.12.0, core_v0.15.0, core_v0.19.0 and main@d98e8a64 with torch installed and dumping every
action. Its type/default/choices are those of the newest version that defines the flag, so those columns (and
dest/action/nargs) are compared only for that version; presence is compared for every version.

    python tests/extract/compare_tsv.py PATH COLUMN [--tsv FILE] [--all] [-v]
    COLUMN is one of 0.8 0.12 0.15 0.19 HEAD; PATH is a Megatron-LM checkout, a megatron-core wheel or a
    catalogue .json file.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

TSV = Path(__file__).parent.parent / "data" / "megatron-flags-by-version.tsv"
COLUMNS = ("0.8", "0.12", "0.15", "0.19", "HEAD")
COMPARED = ("dest", "action", "type", "default", "choices", "nargs")
_ENUM_REPR = re.compile(r"^<\w+\.(\w+): .*>$")


@dataclass
class Row:
    flag: str
    dest: str
    action: str
    type: str
    default: str
    choices: str
    nargs: str
    present_in: tuple[str, ...]

    @property
    def newest(self) -> str:
        return max(self.present_in, key=COLUMNS.index)


def load_tsv(path: Path = TSV) -> dict[str, Row]:
    rows: dict[str, Row] = {}
    with open(path, encoding="utf-8", newline="") as fp:
        lines = [line for line in fp if not line.startswith("#")]
    for rec in csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE):
        rows[rec["flag"]] = Row(
            rec["flag"],
            rec["dest"],
            rec["action"],
            rec["type"],
            rec["default"],
            rec["choices"],
            rec["nargs"],
            tuple(rec["present_in"].split()),
        )
    return rows


def _text(value: object) -> str:
    """A catalogue JSON value in the table's notation: None and [] empty, lists comma-joined, str() otherwise."""
    if value is None:
        return ""
    if isinstance(value, list):
        return ",".join(_text(v) for v in value)
    return str(value)


def _signal_numbers(names: object) -> object:
    # The table prints signal.Signals members by number; the catalogue names members.
    def one(n: object) -> object:
        return int(signal.Signals[n]) if isinstance(n, str) and n in signal.Signals.__members__ else n

    return [one(n) for n in names] if isinstance(names, list) else one(names)


def rendered(entry: dict) -> dict[str, str]:
    """One catalogue entry's compared columns in the table's notation."""
    action = {"boolean_optional": "bool_optional"}.get(entry["action"], entry["action"])
    type_ = {"enum_type_handler": "enum(name)"}.get(entry["type"] or "", entry["type"] or "")
    default, choices = entry["default"], entry["choices"]
    if type_ == "enum(name)" and isinstance(choices, list) and choices and str(choices[0]).startswith("SIG"):
        default, choices = _signal_numbers(default), _signal_numbers(choices)
    return {
        "dest": entry["dest"],
        "action": action,
        "type": type_,
        "default": "<computed>" if isinstance(default, dict) and "__expr__" in default else _text(default),
        "choices": _text(choices),
        "nargs": _text(entry["nargs"]),
    }


def expected(row: Row) -> dict[str, str]:
    default = row.default
    m = _ENUM_REPR.match(default)
    if m:
        default = m.group(1)
    return {
        "dest": row.dest,
        "action": row.action,
        "type": row.type,
        "default": default,
        "choices": row.choices,
        "nargs": row.nargs,
    }


@dataclass
class Report:
    column: str
    extracted_actions: int = 0
    extracted_options: int = 0
    table_options: int = 0
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    compared: int = 0
    mismatches: dict[str, list[tuple[str, str, str]]] = field(default_factory=lambda: {c: [] for c in COMPARED})
    computed_defaults: list[tuple[str, str]] = field(default_factory=list)
    older: dict[str, list[tuple[str, str, str]]] = field(default_factory=lambda: {c: [] for c in COMPARED})

    def summary(self) -> str:
        counts = " ".join(f"{c}={len(v)}" for c, v in self.mismatches.items())
        older = " ".join(f"{c}={len(v)}" for c, v in self.older.items() if v)
        return (
            f"{self.column}: extracted {self.extracted_actions} actions / {self.extracted_options} option strings; "
            f"table {self.table_options}; missing {len(self.missing)}; extra {len(self.extra)}; "
            f"columns compared on {self.compared} newest-version flags; mismatches {counts}; "
            f"computed defaults {len(self.computed_defaults)}" + (f"; on older flags: {older}" if older else "")
        )


def compare(
    catalogue_json: dict, column: str, rows: dict[str, Row] | None = None, everywhere: tuple[str, ...] = ()
) -> Report:
    """Compare with the table's `column`. Columns named in `everywhere` are compared on every flag the version
    has, not only where it is the newest version (dest, action and nargs rarely change between versions)."""
    rows = load_tsv() if rows is None else rows
    report = Report(column)
    entries = catalogue_json["flags"]
    report.extracted_actions = len(entries)
    by_option = {opt: e for e in entries for opt in e["option_strings"]}
    report.extracted_options = len(by_option)
    wanted = {flag: row for flag, row in rows.items() if column in row.present_in}
    report.table_options = len(wanted)
    report.missing = sorted(set(wanted) - set(by_option))
    report.extra = sorted(set(by_option) - set(wanted))
    for flag, row in sorted(wanted.items()):
        entry = by_option.get(flag)
        if entry is None:
            continue
        got, want = rendered(entry), expected(row)
        if row.newest != column:
            for col in everywhere:
                if got[col] != want[col]:
                    report.older[col].append((flag, got[col], want[col]))
            continue
        report.compared += 1
        for col in COMPARED:
            if col == "default" and got[col] == "<computed>":
                report.computed_defaults.append((flag, entry["default"]["__expr__"]))
                continue
            if got[col] != want[col]:
                report.mismatches[col].append((flag, got[col], want[col]))
    return report


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from megalint.megatron.extract import ExtractError, extract_catalogue

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("path")
    p.add_argument("column", choices=COLUMNS)
    p.add_argument("--tsv", type=Path, default=TSV)
    p.add_argument("-v", "--verbose", action="store_true")
    p.add_argument(
        "--all",
        action="store_true",
        help="also compare every column on flags whose newest version is later (shows version drift)",
    )
    args = p.parse_args(argv)
    start = time.perf_counter()
    if args.path.endswith(".json"):
        data = json.loads(Path(args.path).read_text(encoding="utf-8"))
        cat = None
    else:
        try:
            cat = extract_catalogue(args.path)
        except ExtractError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        data = cat.to_json()
    elapsed = time.perf_counter() - start
    report = compare(data, args.column, load_tsv(args.tsv), everywhere=COMPARED if args.all else ())
    print(report.summary())
    if cat is not None:
        print(f"extraction took {elapsed:.2f} s; parsed {len(cat.parsed_files)} files")
    conditional = {o: f.condition for f in (cat.flags if cat else []) if f.condition for o in f.option_strings}
    for flag in report.extra:
        print(f"  extra   {flag}" + (f"   (only if {conditional[flag]})" if flag in conditional else ""))
    for flag in report.missing:
        print(f"  missing {flag}")
    for col, items in report.mismatches.items():
        for flag, got, want in items:
            print(f"  {col:8s} {flag}: extracted {got!r} table {want!r}")
    for col, items in report.older.items():
        for flag, got, want in items:
            print(f"  older {col:8s} {flag}: extracted {got!r} table (newer) {want!r}")
    if args.verbose:
        for flag, src in report.computed_defaults:
            print(f"  computed default {flag}: {src}")
        for w in cat.warnings if cat else []:
            print(f"  warning: {w}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
