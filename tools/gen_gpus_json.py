"""Write megalint/data/gpus.json from megalint/data/gpus.yaml, the GPU table's one source.

    python tools/gen_gpus_json.py           # write the JSON
    python tools/gen_gpus_json.py --check   # write nothing; exit 1 when the JSON is stale

The YAML is what people edit (comments cite each figure's source); megalint reads the JSON, which
the standard library parses in a fraction of the time a YAML reader takes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from generated_file import write_or_check
from ruamel.yaml import YAML

DATA = Path(__file__).resolve().parent.parent / "megalint" / "data"
SOURCE = DATA / "gpus.yaml"
TARGET = DATA / "gpus.json"
NOTE = "generated from gpus.yaml by tools/gen_gpus_json.py: edit gpus.yaml, then run it"


def generated() -> str:
    data = YAML(typ="safe").load(SOURCE.read_text(encoding="utf-8"))
    return json.dumps({"note": NOTE, "gpus": data["gpus"]}, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    return write_or_check(TARGET, generated, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
