"""Shape and consistency of the recorded Megatron oracle verdicts.

The data in tests/data/oracle was produced by tools/oracle/run_oracle.py running Megatron-LM's
own argument checks; these tests need neither Megatron nor torch.
"""

from __future__ import annotations

import os
import re

import pytest

from tests.oracle import oracle_data as od

PRESENT = [v for v, f in od.VERSION_FILES.items() if os.path.exists(os.path.join(od.DATA, f))]
APPENDIX = od.load_scenarios("appendix_a.json")["scenarios"]
LOCATION = re.compile(r"^megatron/[\w/.-]+\.py:\d+$")
ROW_KEYS = {
    "version",
    "id",
    "argv",
    "env",
    "world_size",
    "gpu_capability",
    "outcome",
    "stage",
    "exception",
    "message",
    "check_location",
    "warnings",
    "changed",
}


@pytest.fixture(scope="module", params=PRESENT)
def version_rows(request):
    return request.param, od.load_rows(request.param)


def test_required_versions_recorded():
    for version in ("HEAD", "0.15.0", "0.12.0"):
        assert version in PRESENT


def _check_failure(f, where):
    assert f["stage"] in od.STAGES, where
    assert isinstance(f["exception"], str) and f["exception"], where
    assert isinstance(f["message"], str), where
    assert f["check_location"] is None or LOCATION.match(f["check_location"]), where


def test_row_shape(version_rows):
    version, rows = version_rows
    assert rows
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids))
    for r in rows:
        where = f"{version}/{r['id']}"
        assert ROW_KEYS <= set(r), where
        assert r["version"] == version, where
        assert isinstance(r["argv"], list) and all(isinstance(a, str) for a in r["argv"]), where
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in r["env"].items()), where
        assert isinstance(r["world_size"], int) and r["world_size"] >= 1, where
        assert isinstance(r["gpu_capability"], list) and len(r["gpu_capability"]) == 2, where
        assert r["outcome"] in od.OUTCOMES, where
        assert all(isinstance(w, str) for w in r["warnings"]), where
        for dest, pair in r["changed"].items():
            assert isinstance(dest, str) and isinstance(pair, list) and len(pair) == 2, where
        if r["outcome"] == "ok":
            assert r["stage"] == "complete" and r["exception"] is None, where
            assert "later_failures" not in r, where
        else:
            _check_failure(r, where)
            # Megatron's own checks live under megatron/; argparse errors surface in parse_args.
            assert r["check_location"], where
        for f in r.get("later_failures", []):
            _check_failure(f, where)


def test_rows_match_their_scenarios(version_rows):
    version, rows = version_rows
    by_id = {r["id"]: r for r in rows}
    for scn in APPENDIX:
        row = by_id.get(scn["id"])
        assert row is not None, f"{version}: {scn['id']} not recorded"
        assert row["argv"] == scn["argv"] and row["env"] == scn["env"]
        assert row["world_size"] == scn["world_size"]
        assert row["gpu_capability"] == scn["gpu_capability"]


def _flag(argv, name, default):
    value = default
    for i, a in enumerate(argv[:-1]):
        if a == name:
            value = argv[i + 1]
    return int(value)


def test_data_parallel_size_is_world_over_model_size(version_rows):
    # validate_args derives DP = WORLD_SIZE // (TP*PP*CP); every passing row must show it.
    version, rows = version_rows
    checked = 0
    for r in rows:
        if r["outcome"] != "ok" or "data_parallel_size" not in r["changed"]:
            continue
        a = r["argv"]
        model = (
            _flag(a, "--tensor-model-parallel-size", 1)
            * _flag(a, "--pipeline-model-parallel-size", 1)
            * _flag(a, "--context-parallel-size", 1)
        )
        assert r["changed"]["data_parallel_size"][1] * model == r["world_size"], f"{version}/{r['id']}"
        checked += 1
    assert checked


APPENDIX_CASES = [(v, s["id"]) for s in APPENDIX for v in ("HEAD", "0.15.0", "0.12.0") if s["doc"].get(v) is not None]


@pytest.mark.parametrize("version,sid", APPENDIX_CASES)
def test_appendix_a_outcome_matches_notes(version, sid):
    rows = {r["id"]: r for r in od.load_rows(version)}
    expect = next(s for s in APPENDIX if s["id"] == sid)["doc"][version]
    assert od.compare(expect, rows[sid]) == []


def test_appendix_a_count():
    assert len(APPENDIX) >= 70
    assert len(APPENDIX_CASES) >= 200


def test_data_size_is_small():
    total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(od.DATA) for f in fs)
    assert total < 2 * 1024 * 1024


def _load_tool(name):
    import importlib.util

    path = os.path.join(od.ROOT, "tools", "oracle", f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"oracle_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generator_is_deterministic_and_matches_stored_scenarios():
    gen = _load_tool("generate")
    stored = od.load_scenarios("generated.json")
    assert stored["seed"] == gen.SEED
    fresh = gen.generate()
    assert fresh == stored["scenarios"]
    assert len(fresh) >= 300
    assert len({json_key(s) for s in fresh}) == len(fresh)


def json_key(s):
    import json

    return json.dumps([s["argv"], s["env"], s["world_size"], s["gpu_capability"]])


def test_appendix_scenarios_match_their_encoder():
    assert _load_tool("appendix_a").build() == APPENDIX


GENERATED = od.load_scenarios("generated.json")["scenarios"]


@pytest.mark.parametrize("version", ["HEAD", "0.19.0", "0.15.0"])
def test_generated_scenarios_recorded(version):
    by_id = {r["id"]: r for r in od.load_rows(version)}
    for scn in GENERATED:
        row = by_id[scn["id"]]
        assert (row["argv"], row["env"], row["world_size"], row["gpu_capability"]) == (
            scn["argv"],
            scn["env"],
            scn["world_size"],
            scn["gpu_capability"],
        )


def test_generated_scenarios_reach_many_checks():
    # The generator is meant to sit on check boundaries: both verdicts must be common and
    # many distinct Megatron checks must fire.
    rows = [r for r in od.load_rows("HEAD") if r["id"].startswith("G")]
    ok = sum(r["outcome"] == "ok" for r in rows)
    assert 0.2 * len(rows) < ok < 0.8 * len(rows)
    assert len({r["check_location"] for r in rows if r["outcome"] == "error"}) >= 25
    assert {r["stage"] for r in rows} >= {"validate_args", "transformer_config", "parallel_state", "complete"}
