"""megalint reads the GPU table from gpus.json, generated from gpus.yaml (the file people edit):
the two must say the same."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import gen_gpus_json  # noqa: E402


def test_gpus_json_is_generated_from_gpus_yaml():
    assert gen_gpus_json.TARGET.read_text(encoding="utf-8") == gen_gpus_json.generated(), (
        "megalint/data/gpus.json is stale: run python tools/gen_gpus_json.py"
    )


def test_the_check_mode_names_a_stale_file(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "gpus.json"
    stale.write_text(json.dumps({"gpus": []}))
    monkeypatch.setattr(gen_gpus_json, "TARGET", stale)
    assert gen_gpus_json.main(["--check"]) == 1
    assert "stale" in capsys.readouterr().out
    assert gen_gpus_json.main([]) == 0
    assert gen_gpus_json.main(["--check"]) == 0
