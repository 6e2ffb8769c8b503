"""What names the packaged rules: the stamp of an installed wheel (no rule file read once the
rule cache holds them), their contents in a source checkout; and the result cache keyed by that
name, never reading the packaged rules a second time."""

from __future__ import annotations

import builtins
import io
import shutil
from pathlib import Path
from typing import Any

import pytest

from megalint import stamp as build
from megalint.cli import main
from megalint.engine import loader, rule_cache

ROOT = Path(__file__).resolve().parents[2]
SITE_RULE = ROOT / "fixtures" / "site-policy" / "rules" / "nccl-socket-ifname.yaml"
MULTI_NODE = ROOT / "fixtures" / "site-policy" / "multi_node.slurm"


def _forget() -> None:
    """Forget what this process knows of megalint's install and its packaged rules."""
    build.wheel_stamp.cache_clear()
    build.package_stamp.cache_clear()
    loader._packaged_sources.cache_clear()
    loader._rules_key.cache_clear()
    loader._packaged_files.cache_clear()
    loader.packaged_rules.cache_clear()


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """An empty cache folder, and nothing known of the packaged rules."""
    monkeypatch.setenv("MEGALINT_CACHE_DIR", str(tmp_path / "cache"))
    _forget()
    yield tmp_path
    _forget()


def _fake_wheel(site: Path, record: str) -> Path:
    """A megalint installed in `site` (site-packages) whose RECORD holds `record`."""
    dist = site / "megalint-0.1.0.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "RECORD").write_text(record, encoding="utf-8")
    (site / "megalint").mkdir(exist_ok=True)
    return site / "megalint"


def test_an_installed_wheel_is_named_by_its_record(fresh, monkeypatch):
    package = _fake_wheel(fresh / "site-packages", "megalint/__init__.py,sha256=a,10\n")
    monkeypatch.setattr(build, "_PACKAGE", package)
    stamp = build.wheel_stamp()
    assert stamp is not None and stamp[0] == "megalint-0.1.0.dist-info"
    key = loader.packaged_rules_key()
    assert key == rule_cache.installed_key(stamp)
    _fake_wheel(fresh / "site-packages", "megalint/__init__.py,sha256=b,11\n")  # installed again
    _forget()
    assert build.wheel_stamp() != stamp
    assert loader.packaged_rules_key() != key


def test_a_source_checkout_has_no_stamp_and_names_the_rules_by_their_contents(fresh, monkeypatch):
    package = fresh / "checkout" / "megalint"
    package.mkdir(parents=True)
    monkeypatch.setattr(build, "_PACKAGE", package)
    assert build.wheel_stamp() is None
    assert loader.packaged_rules_key() == rule_cache.cache_key(loader.packaged_rule_sources())


def test_a_source_checkout_sees_an_edited_rule_file(fresh, monkeypatch):
    rules = fresh / "rules"
    shutil.copytree(loader.packaged_rules_dir(), rules)  # type: ignore[arg-type]
    monkeypatch.setattr(loader, "packaged_rules_dir", lambda: rules)
    assert build.wheel_stamp() is None
    key = loader.packaged_rules_key()
    before = {r.code: repr(r.to_json()) for r in loader.packaged_rules()}
    edited = next(p for p in sorted(rules.rglob("*.yaml")) if '\nmessage: "' in p.read_text(encoding="utf-8"))
    text = edited.read_text(encoding="utf-8")
    edited.write_text(text.replace('\nmessage: "', '\nmessage: "EDITED ', 1), encoding="utf-8")
    _forget()
    assert loader.packaged_rules_key() != key
    after = {r.code: repr(r.to_json()) for r in loader.packaged_rules()}
    changed = [code for code in after if after[code] != before[code]]
    assert len(changed) == 1 and "EDITED " in after[changed[0]]


def test_an_installed_wheel_with_a_warm_cache_reads_no_rule_file(fresh, monkeypatch):
    monkeypatch.setattr(rule_cache, "wheel_stamp", lambda: ("megalint-0.1.0.dist-info", "1", "2"))
    want = [r.to_json() for r in loader.packaged_rules()]  # a cold cache: reads them and keeps them
    _forget()
    read: list[str] = []
    monkeypatch.setattr(loader, "packaged_rule_sources", lambda *a: read.append("read") or [])
    monkeypatch.setattr(loader, "_files_on_disk", lambda *a: read.append("read") or [])
    assert [r.to_json() for r in loader.packaged_rules()] == want
    assert read == []


def _check(monkeypatch, capsys, cwd: Path, *argv: str) -> str:
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("MEGALINT_NO_CACHE", raising=False)
    monkeypatch.setenv("COLUMNS", "100")
    for var in ("NO_COLOR", "FORCE_COLOR", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(var, raising=False)
    capsys.readouterr()
    main(["--isolated", "--output-format", "concise", *argv])
    return str(capsys.readouterr().out)


def test_a_run_reads_the_packaged_rules_once_and_sees_a_changed_user_rule(fresh, monkeypatch, capsys):
    work = fresh / "work"
    (work / "site").mkdir(parents=True)
    shutil.copy(MULTI_NODE, work / "job.slurm")
    shutil.copy(SITE_RULE, work / "site" / "rule.yaml")
    packaged = str(loader.packaged_rules_dir())
    reads: list[str] = []
    real_open = io.open

    def counting_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file).startswith(packaged) and str(file).endswith(".yaml"):
            reads.append(str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(io, "open", counting_open)
    monkeypatch.setattr(builtins, "open", counting_open)
    first = _check(monkeypatch, capsys, work, "--rule-dir", "site", "job.slurm")
    assert "SITE001" in first and "ib0" in first
    # The rule loading and the result cache's key share one read of each packaged rule file.
    assert reads and sorted(reads) == sorted(set(reads))
    assert (work / ".megalint_cache").is_dir()
    assert _check(monkeypatch, capsys, work, "--rule-dir", "site", "job.slurm") == first  # from the result cache
    rule = work / "site" / "rule.yaml"
    rule.write_text(rule.read_text(encoding="utf-8").replace("over ib0", "over ib7"), encoding="utf-8")
    second = _check(monkeypatch, capsys, work, "--rule-dir", "site", "job.slurm")
    assert second == first.replace("over ib0", "over ib7") and second != first
