"""Write megalint/data/shipped_names.json: every option string and dest some shipped Megatron-LM
catalogue defines (megalint/data/catalogue*/), the catalogues' one summary megalint reads at lint
time.

    python tools/gen_shipped_names.py           # write the JSON
    python tools/gen_shipped_names.py --check   # write nothing; exit 1 when the JSON is stale

Telling a fork's own flags from Megatron-LM's needs every option any release defined; reading the
27 catalogues (3.7 MB) for it took 28 ms of every run on a script in a Megatron-LM checkout.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from generated_file import write_or_check

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
    return write_or_check(TARGET, generated, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
