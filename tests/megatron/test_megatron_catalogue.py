"""The shipped catalogues against the parser dump they were built from."""

from __future__ import annotations

import csv
import importlib.util
import json
import math
import signal
from pathlib import Path

import pytest

from megalint.megatron import catalogue
from megalint.megatron.catalogue import (
    Catalogue,
    CatalogueError,
    DefaultExpr,
    FlagHistory,
    known_versions,
    resolve_version,
)
from megalint.megatron.versions import KNOWN_VERSIONS

ROOT = Path(__file__).resolve().parents[2]
TSV = Path(__file__).parent.parent / "data" / "megatron-flags-by-version.tsv"


def _tool():
    spec = importlib.util.spec_from_file_location("catalogue_from_tsv", ROOT / "tools" / "catalogue_from_tsv.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


TOOL = _tool()


def _rows():
    with TSV.open(encoding="utf-8") as fh:
        lines = [line for line in fh if not line.startswith("# ")]
    return list(csv.DictReader(lines, delimiter="\t"))


ROWS = _rows()
ALL = ("0.8", "0.12", "0.15", "0.19", "HEAD")


def _overridden(version: str, flag: str) -> set[str]:
    fields = set(TOOL.OVERRIDES.get((version, flag), ({}, ""))[0])
    if flag in TOOL.EXPR_DEFAULTS:
        fields.add("default")
    if flag in TOOL.LIST_DEFAULTS and version in TOOL.LIST_DEFAULTS[flag][1]:
        fields.add("default")
    return fields


def _default_text(value) -> str:
    """The TSV's spelling of a default."""
    if value is None:
        return ""
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def test_every_tsv_row_is_reproduced():
    cats = {v: Catalogue.load(v) for v in ALL}
    checked = 0
    for row in ROWS:
        present = row["present_in"].split()
        for version in ALL:
            spec = cats[version].lookup(row["flag"])
            if version not in present:
                assert spec is None, (version, row["flag"])
                continue
            assert spec is not None, (version, row["flag"])
            assert spec.dest == row["dest"]
            assert spec.versions_of(row["flag"]) == tuple(present)
            if spec.deprecated is not None or spec.deprecated_choices:
                assert row["deprecated"] == "yes", row["flag"]
            over = _overridden(version, row["flag"])
            if "action" not in over:
                expect = {"bool_optional": "boolean_optional"}.get(row["action"], row["action"])
                assert spec.action == expect, (version, row["flag"])
            if "type" not in over:
                expect = {"": None, "enum(name)": "enum"}.get(row["type"], row["type"])
                assert spec.type == expect, (version, row["flag"])
            if "nargs" not in over:
                assert ("" if spec.nargs is None else str(spec.nargs)) == row["nargs"]
            if "choices" not in over:
                if row["flag"] == "--exit-signal":
                    got = ",".join(str(int(signal.Signals[c])) for c in spec.choices)
                else:
                    got = "" if spec.choices is None else ",".join(str(c) for c in spec.choices)
                assert got == row["choices"], (version, row["flag"])
            if "default" not in over:
                got = _default_text(spec.default)
                if row["type"] == "float" and row["default"]:
                    assert math.isclose(float(got), float(row["default"])), row["flag"]
                else:
                    assert got == row["default"], (version, row["flag"], got)
            checked += 1
    assert checked == sum(len(r["present_in"].split()) for r in ROWS)


def test_overrides_are_applied_with_their_citation():
    for (version, flag), (fields, cite) in TOOL.OVERRIDES.items():
        spec = Catalogue.load(version).lookup(flag)
        assert spec is not None, (version, flag)
        data = spec.to_json()
        for key, value in fields.items():
            if key == "action":
                value = TOOL.ACTIONS[value]
            assert data[key] == value, (version, flag, key)
        assert any(cite in n for n in spec.notes)
        assert cite.startswith("megatron/") and "@" in cite


@pytest.mark.parametrize(
    "version,actions,options",
    [
        # Totals of the real parsers (megatron-constraints.md section 3).
        ("HEAD", 838, 876),
        ("0.19", 807, 845),
        ("0.15", 565, 575),
        ("0.12", 455, 456),
        ("0.8", 326, 326),
    ],
)
def test_totals_match_the_real_parsers(version, actions, options):
    cat = Catalogue.load(version)
    assert len(cat) == actions
    assert len(cat.option_strings()) == options


def test_aliases_are_one_action():
    cat = Catalogue.load("0.15")
    a, b = cat.lookup("--save-interval"), cat.lookup("--persistent-save-interval")
    assert a is b and a.option_strings == ("--save-interval", "--persistent-save-interval")
    assert Catalogue.load("0.8").lookup("--save-interval").option_strings == ("--save-interval",)
    head = Catalogue.load("HEAD")
    pair = head.lookup("--rl-skip-bos-token")
    assert pair is head.lookup("--no-rl-skip-bos-token")
    assert pair.action == "boolean_optional" and pair.option_strings[0] == "--rl-skip-bos-token"
    assert head.lookup("--no-fp8-wgrad") is head.lookup("--disable-fp8-wgrad")
    # Same dest, different actions: two entries; the first registered gives the default.
    yarn = head.by_dest("yarn_correction_range_round_to_int")
    assert [s.action for s in yarn] == ["store_true", "store_false"]
    assert head.default_spec("yarn_correction_range_round_to_int").default is None


def test_version_specific_facts():
    assert Catalogue.load("0.15").lookup("--data-parallel-sharding-strategy").default == "no_shard"
    assert Catalogue.load("HEAD").lookup("--data-parallel-sharding-strategy").default == "optim_grads_params"
    assert Catalogue.load("0.8").lookup("--moe-token-dispatcher-type").choices == ("allgather", "alltoall")
    assert Catalogue.load("HEAD").lookup("--cp-comm-type").default == ("p2p",)
    assert Catalogue.load("0.12").lookup("--profile-ranks").default == (0,)
    assert Catalogue.load("HEAD").lookup("--profile-ranks").default == ()
    assert Catalogue.load("HEAD").lookup("--initial-loss-scale").default == DefaultExpr("2 ** 32")
    assert Catalogue.load("HEAD").lookup("--timing-log-level").choices == (0, 1, 2)
    assert "SIGTERM" in Catalogue.load("HEAD").lookup("--exit-signal").choices


def test_deprecations_carry_their_version():
    assert Catalogue.load("0.12").lookup("--hybrid-override-pattern").deprecated is None
    assert "hybrid-layer-pattern" in Catalogue.load("HEAD").lookup("--hybrid-override-pattern").deprecated
    assert Catalogue.load("0.15").lookup("--rampup-batch-size").deprecated is None
    assert "exit()" in Catalogue.load("0.8").lookup("--checkpoint-activations").deprecated
    opt = Catalogue.load("HEAD").lookup("--optimizer")
    assert opt.deprecated is None and dict(opt.deprecated_choices).keys() == {"dist_muon"}
    assert Catalogue.load("HEAD").lookup("--cuda-graph-modules").deprecated is None


def test_load_resolves_version_text():
    assert Catalogue.load("0.15.3").version == "0.15"
    assert Catalogue.load("core_v0.12.0").version == "0.12"
    assert Catalogue.load(None).version == "HEAD"
    assert Catalogue.load("latest").version == "HEAD"
    assert Catalogue.load("0.17.1").version == "0.15"
    assert known_versions() == ["HEAD", "0.19", "0.15", "0.12", "0.8"]
    assert resolve_version("0.19.2") == "0.19"


def test_lookup_is_exact():
    cat = Catalogue.load("HEAD")
    assert cat.lookup("--hidden-size").dest == "hidden_size"
    assert cat.lookup("--hidden") is None
    assert cat.lookup("--hidden_size") is None
    assert cat.lookup("--hidden-size=4") is None


def test_suggestions():
    cat = Catalogue.load("HEAD")
    assert cat.suggest("--hidden_size")[0] == "--hidden-size"
    assert cat.suggest("--tensor-model-paralel-size")[0] == "--tensor-model-parallel-size"
    assert cat.suggest("--seq-len") == ["--seq-length"]
    assert "--micro-batch-size" in cat.suggest("--micro-batch")
    assert cat.suggest("--zzzzzzzz") == []


def test_suggestions_are_worked_out_once_per_option(monkeypatch):
    """A corpus writes the same unknown flags thousands of times: difflib runs once for each."""
    import megalint.megatron.catalogue as catalogue

    cat = Catalogue.load("HEAD")
    calls: list[str] = []
    real = catalogue.suggest

    def counted(option_string, known, n=3, close=None):
        calls.append(option_string)
        return real(option_string, known, n, close)

    monkeypatch.setattr(catalogue, "suggest", counted)
    first = cat.suggest("--seq-len-x")
    first.append("changed by a caller")
    for _ in range(3):
        assert cat.suggest("--seq-len-x") == first[:-1]
    assert calls == ["--seq-len-x"]


def test_suggestions_from_the_kept_candidates_are_difflibs():
    import megalint.megatron.catalogue as catalogue

    cat = Catalogue.load("HEAD")
    for typo in [
        "--seq-len-x",
        "--tensor-model-paralel-size",
        "--hidden_size",
        "--lr-decay",
        "--nope",
        "--micro-bach-size",
    ]:
        for n in (1, 3):
            assert cat.suggest(typo, n) == catalogue.suggest(typo, cat.option_strings(), n), typo


def test_history():
    head = Catalogue.load("HEAD")
    h = head.history("--use-legacy-models")
    assert h == FlagHistory("--use-legacy-models", ("0.8", "0.12", "0.15"))
    assert h.relation("HEAD") == "removed" and "removed after Megatron-LM 0.15" in h.describe("HEAD")
    old = Catalogue.load("0.8").history("--rl-skip-bos-token")
    assert old.relation("0.8") == "added" and old.first == "0.19"
    assert head.history("--local_rank").defined_in == ("0.8",)
    assert head.history("--no-such-flag").relation("HEAD") == "unknown"
    assert head.history("--hidden-size").relation("HEAD") == "present"


def test_shipped_history_of_an_option_no_catalogue_has_loads_none(monkeypatch):
    scan = lambda o: [v for v in KNOWN_VERSIONS if Catalogue.load(v).lookup(o) is not None]  # noqa: E731
    unknown = ["--no-such-flag", "--hidden_size", "--Hidden-size", "-x", "--moe-grouped-gemm2"]
    for option in sorted(catalogue.shipped_options()) + unknown:
        assert catalogue.shipped_history(option).defined_in == tuple(catalogue._sorted_versions(scan(option)))
    monkeypatch.setattr(catalogue, "_load_packaged", None)  # an unknown option reads no catalogue
    assert catalogue.shipped_history("--no-such-flag").defined_in == ()


def test_from_file_round_trip(tmp_path):
    cat = Catalogue.load("0.12")
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(cat.to_dict()))
    again = Catalogue.from_file(path)
    assert again.version == "0.12" and len(again) == len(cat)
    assert again.lookup("--save-interval") == cat.lookup("--save-interval")
    assert again.lookup("--initial-loss-scale").default == DefaultExpr("2 ** 32")


def test_minimal_user_catalogue(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"version": "0.16", "flags": [{"option_strings": ["--foo"], "dest": "foo"}]}))
    cat = Catalogue.from_file(path)
    spec = cat.lookup("--foo")
    assert (spec.action, spec.type, spec.default, spec.nargs) == ("store", None, None, None)
    assert cat.history("--foo").defined_in == ("0.16",)


@pytest.mark.parametrize(
    "data,message",
    [
        ({"flags": []}, "version"),
        ({"version": "x"}, "flags"),
        ({"version": "x", "flags": [{"dest": "a"}]}, "option_strings"),
        ({"version": "x", "flags": [{"option_strings": ["--a"], "dest": "a", "action": "zap"}]}, "unknown action"),
        ({"version": "x", "flags": [{"option_strings": ["--a"], "dest": "a", "nargs": "%"}]}, "bad nargs"),
        (
            {
                "version": "x",
                "flags": [{"option_strings": ["--a"], "dest": "a"}, {"option_strings": ["--a"], "dest": "b"}],
            },
            "twice",
        ),
        ({"version": "x", "flags": [{"option_strings": ["--a"], "dest": "a", "default": {"x": 1}}]}, "__expr__"),
    ],
)
def test_bad_catalogues_are_reported(data, message):
    with pytest.raises(CatalogueError, match=message):
        Catalogue.from_dict(data)


def test_shipped_files_are_what_the_tool_builds(tmp_path):
    TOOL.main([str(TSV), "--out", str(tmp_path)])
    for version in ALL:
        built = (tmp_path / f"{version}.json").read_text()
        shipped = (ROOT / "megalint" / "data" / "catalogue" / f"{version}.json").read_text()
        assert json.loads(built)["flags"] == json.loads(shipped)["flags"], version


def test_shipped_names_are_every_dest_and_option_of_every_shipped_catalogue():
    # megalint reads them from shipped_names.json, which tools/gen_shipped_names.py writes.
    import json
    from importlib import resources

    from megalint.megatron.catalogue import SHIPPED_FOLDERS, shipped_dests, shipped_options

    root = resources.files("megalint.data")
    dests, options = set(), set()
    for folder in SHIPPED_FOLDERS:
        for entry in root.joinpath(folder).iterdir():
            if entry.name.endswith(".json"):
                for f in json.loads(entry.read_text("utf-8"))["flags"]:
                    dests.add(f["dest"])
                    options.update(f["option_strings"])
    assert shipped_dests() == dests and "tensor_model_parallel_size" in dests
    assert shipped_options() == options and "--tensor-model-parallel-size" in options, (
        "megalint/data/shipped_names.json is stale: run python tools/gen_shipped_names.py"
    )
