"""Run the `megalint` command in-process and capture what it prints."""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from megalint.cli import main

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures" / "cli"

CLEAN = "#!/bin/bash\ntorchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --tensor-model-parallel-size 2\n"
# ML301 (info): two nodes, NCCL_IB_TIMEOUT never set.
INFO = "torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --tensor-model-parallel-size 2\n"
# ML001 (warning): a suppression with nothing to suppress.
WARN = (
    "TP=2  # megalint: ignore[ML101]\n"
    "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --tensor-model-parallel-size $TP\n"
)
# ML101 (error): 8 processes, TP 3.
ERROR = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --tensor-model-parallel-size 3\n"


@dataclass
class Result:
    rc: int
    out: str
    err: str

    @property
    def codes(self) -> list[str]:
        """Codes of the findings in `concise` output, sorted."""
        found = []
        for line in self.out.splitlines():
            parts = line.split(": ", 1)
            if len(parts) == 2 and parts[0].count(":") >= 2:
                found.append(parts[1].split()[0])
        return sorted(found)


@pytest.fixture
def megalint(capsys, monkeypatch):
    """megalint(*argv, stdin=None, cwd=None) -> Result, from the real entry point."""
    for var in (
        "NO_COLOR",
        "FORCE_COLOR",
        "CLICOLOR_FORCE",
        "GITHUB_STEP_SUMMARY",
        "GITHUB_WORKSPACE",
        "CI_PROJECT_DIR",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("COLUMNS", "100")

    def run(*argv: str, stdin: str | bytes | None = None, cwd: Path | None = None) -> Result:
        if cwd is not None:
            monkeypatch.chdir(cwd)
        if stdin is not None:
            data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline=""))
        capsys.readouterr()
        rc = main(list(argv))
        cap = capsys.readouterr()
        return Result(rc, cap.out, cap.err)

    return run


@pytest.fixture
def scripts(tmp_path: Path):
    """write(name, text) -> Path in a fresh folder (no configuration above it is used: --isolated)."""

    def write(name: str, text: str | bytes) -> Path:
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_bytes(text.encode("utf-8"))
        return p

    return write


_RULES: dict = {}


@pytest.fixture(autouse=True)
def _shared_rule_loading(monkeypatch):
    """Load each rule set once for the whole session: the engine validates every rule file
    against its schema on load, which would dominate these tests' time."""
    import megalint.checking.setup as setup

    real = setup.load_rules

    def load(paths):
        key = tuple(str(p) for p in paths)
        if key not in _RULES:
            _RULES[key] = real(paths)
        return _RULES[key]

    monkeypatch.setattr(setup, "load_rules", load)
