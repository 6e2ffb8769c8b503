"""Write megalint/data/shipped_names.json: every option string and dest some shipped Megatron-LM
catalogue defines (megalint/data/catalogue*/), the catalogues' one summary megalint reads at lint
time.

    python tools/gen_shipped_names.py           # write the JSON
    python tools/gen_shipped_names.py --check   # write nothing; exit 1 when the JSON is stale

Telling a fork's own flags from Megatron-LM's needs every option any release defined; reading the
27 catalogues (3.7 MB) for it took 28 ms of every run on a script in a Megatron-LM checkout.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "megalint" / "data"
TARGET = DATA / "shipped_names.json"
FOLDERS = ("catalogue", "catalogue-extracted")
NOTE = "generated from catalogue/ and catalogue-extracted/ by tools/gen_shipped_names.py: run it after changing them"


def generated() -> str:
    options: set[str] = set()
    dests: set[str] = set()
    for folder in FOLDERS:
        for path in sorted((DATA / folder).glob("*.json")):
            for flag in json.loads(path.read_text(encoding="utf-8"))["flags"]:
                options.update(flag["option_strings"])
                dests.add(flag["dest"])
    data = {"note": NOTE, "options": sorted(options), "dests": sorted(dests)}
    return json.dumps(data, indent=0, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if the JSON is stale")
    args = ap.parse_args(argv)
    text = generated()
    current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else None
    if args.check:
        if current != text:
            print(f"stale: {TARGET} (run python tools/gen_shipped_names.py)")
            return 1
        return 0
    if current != text:
        TARGET.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
