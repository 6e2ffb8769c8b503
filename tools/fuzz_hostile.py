"""Fuzz the shell model, rule files and configuration files with hostile mutations.

    python tools/fuzz_hostile.py --minutes 10 [--seed 1] [--target shell|rules|config|all]
    python tools/fuzz_hostile.py --cases 40 --seed 1      # a fixed number of cases per campaign

Three campaigns, each driven by hypothesis and run in this process under a memory limit:

- shell: the fixtures under fixtures/ cut, spliced and salted with constructs that stress the
  model (brace groups, short-circuit arithmetic, deep `source` chains, long values), linted
  through the whole pipeline;
- rules: a valid site rule mutated (its condition, aliases, nesting, sizes, broken YAML) and
  loaded, then run on a launch;
- config: megalint.toml mutated (a BOM, deep nesting, wrong types, broken TOML) and read.

A case fails when it raises anything but megalint's own errors (`MegalintError`) or takes longer
than --case-seconds. Each failure is printed with its input; the closing line gives the cases
run per campaign and the failures found.
"""

from __future__ import annotations

import argparse
import random
import resource
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from megalint.config import load_config  # noqa: E402
from megalint.engine import load_rule_texts  # noqa: E402
from megalint.errors import MegalintError  # noqa: E402
from megalint.pipeline import Settings, lint_text  # noqa: E402

MEMORY_LIMIT = 3 << 30

LAUNCH = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 4 --tensor-model-parallel-size $TP\n"
SALT = [
    "for TP in {1..3}; do\n" + LAUNCH + "done\n",
    "TP={2,4}\n",
    "M=0\nTP=$(( M > 0 ? 8 / M : 1 ))\n",
    "TP=$(( M != 0 && 8 / M > 2 ))\n",
    "TP=$(( 1 ? 2 : 3/0 ))\n",
    "echo {a,b}{1..9..2}{x,y,z}\n",
    "X={" + ",".join("abcdefghij") + "}\n",
    "run {1..99999999}\n",
    "run {$A,b} {a,{b,c}} {01..10} {z..a} {1..a}\n",
    "source ./missing.sh\n",
    "((i = 1 || 1/0))\n",
    "TP=$(( (" * 30 + "1" + ")) " * 30 + "))\n",
    'A="${B:-${C:-${D:-2}}}"\n',
]
RULE = """code: SITE900
name: fuzz-rule
severity: error
category: site
requires: [args.num_layers]
when: args.num_layers > 1
message: "{args.num_layers} layers"
at: [flag(num_layers), launch]
docs:
  what: W.
  why: Y.
  sources: ["megatron/training/arguments.py:1@core_v0.15.0"]
examples:
  - bad: |
      torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2
    expect: [{line: 1, column: 45}]
"""
WHENS = [
    "args.num_layers / 0 > 1",
    "args.num_layers % 0 == 1",
    "[1,2,3].all(a, [1,2,3].all(b, [1,2,3].all(c, a + b + c > 0)))",
    "lists.range(1000000000).size() > 0",
    "args.num_layers + 'x' == 'y'",
    "int('x') > 0",
    "(" * 60 + "true" + ")" * 60,
    "args.num_layers > 9223372036854775807",
    "size(args) > 0",
]
CONFIG = 'megatron-version = "0.15"\ngpu = "h100"\nselect = ["ML1"]\nassume = { NNODES = 4 }\n'
TOML_SALT = [
    "\ufeff",
    "a = " + "[" * 3000 + "]" * 3000 + "\n",
    "b = " + "{x=" * 100 + "1" + "}" * 100 + "\n",
    'rule-dirs = ["/dev/zero"]\n',
    "jobs = 99999999999999999999999\n",
    'exclude = ["[[[["]\n',
    "[severity]\nML101 = 1\n",
    'per-file-ignores = { "**" = ["ML"] }\n',
    "\x00",
]


class Hang(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise Hang


def _fixtures() -> list[str]:
    return [p.read_text(errors="replace") for p in sorted((ROOT / "fixtures").rglob("*.sh"))][:400]


def _mutate(rnd: random.Random, text: str, salt: list[str]) -> str:
    lines = text.splitlines(keepends=True)
    for _ in range(rnd.randint(1, 4)):
        op = rnd.randrange(6)
        i = rnd.randrange(len(lines) + 1)
        if op == 0:
            lines.insert(i, rnd.choice(salt))
        elif op == 1 and lines:
            del lines[min(i, len(lines) - 1)]
        elif op == 2 and lines:
            j = min(i, len(lines) - 1)
            k = rnd.randrange(len(lines[j]) + 1)
            lines[j] = lines[j][:k] + rnd.choice(salt).rstrip("\n") + lines[j][k:]
        elif op == 3 and lines:
            lines.insert(i, lines[rnd.randrange(len(lines))] * rnd.randint(1, 50))
        elif op == 4 and lines:
            j = min(i, len(lines) - 1)
            k = rnd.randrange(len(lines[j]) + 1)
            lines[j] = lines[j][:k] + chr(rnd.choice([0, 9, 10, 13, 34, 39, 36, 92, 123, 125, 0xFEFF])) + lines[j][k:]
        elif lines:
            lines = lines[rnd.randrange(len(lines)) :] + lines[: rnd.randrange(len(lines) + 1)]
    return "".join(lines)


class Campaign:
    def __init__(self, name: str, case_seconds: int) -> None:
        self.name = name
        self.case_seconds = case_seconds
        self.cases = 0
        self.failures: list[tuple[str, str]] = []

    def run(self, what: str, call: Callable[[], object]) -> None:
        self.cases += 1
        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(self.case_seconds)
        try:
            call()
        except MegalintError:
            pass
        except Hang:
            self.failures.append((f"took more than {self.case_seconds} s", what))
        except Exception as exc:  # noqa: BLE001 - a crash is what the campaign looks for
            self.failures.append((f"{type(exc).__name__}: {exc}"[:300], what))
        finally:
            signal.alarm(0)


def shell_case(text: str, rules: Any) -> None:
    lint_text("fuzz.sh", text, Settings(rules=rules, with_memory=True))


def rule_case(text: str, rules_script: str) -> None:
    rules = load_rule_texts([("site/fuzz-rule.yaml", text)], check_arguments=False)
    lint_text("fuzz.sh", rules_script, Settings(rules=rules, with_memory=False))


def config_case(folder: Path, data: bytes) -> None:
    path = folder / "megalint.toml"
    path.write_bytes(data)
    load_config(str(path))


def _rule_mutation(rnd: random.Random) -> str:
    text = RULE
    op = rnd.randrange(6)
    if op == 0:
        text = text.replace("args.num_layers > 1", rnd.choice(WHENS))
    elif op == 1:
        n = rnd.randint(2, 9)
        bomb = ['    - &a0 ["x","x","x","x","x","x","x","x","x","x"]']
        bomb += [f"    - &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, n)]
        text = text.replace(
            '  sources: ["megatron/training/arguments.py:1@core_v0.15.0"]\n', "  sources:\n" + "\n".join(bomb) + "\n"
        )
    elif op == 2:
        depth = rnd.choice([10, 100, 1000, 5000])
        text = text.replace("[launch]", "[" * depth + "launch" + "]" * depth)
    elif op == 3:
        cut = rnd.randrange(len(text))
        text = (
            text[:cut]
            + rnd.choice(["\t", ":", "- ", "&a ", "*a", "!!python/object:os.system", "{", "'", "\x00"])
            + text[cut:]
        )
    elif op == 4:
        text = text.replace("SITE900", rnd.choice(["SITE900" * 1000, "", "ML101", "site900"]))
    else:
        text = text.replace(
            '"{args.num_layers} layers"',
            rnd.choice(['"{args.nope}"', '"{"', '"{args.num_layers|flag}"', '"' + "{args.num_layers}" * 5000 + '"']),
        )
    return text


def _batch(
    target: str,
    camp: Campaign,
    batch_seed: int,
    done: Callable[[], bool],
    fixtures: list[str],
    packaged: Any,
    folder: Path,
) -> None:
    """A hundred cases drawn by hypothesis from one seed."""

    @seed(batch_seed)
    @settings(max_examples=100, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.integers(0, 2**63))
    def one(case: int) -> None:
        if done():
            return
        rnd = random.Random(case)
        if target == "shell":
            text = _mutate(rnd, rnd.choice(fixtures), SALT)
            camp.run(text, lambda: shell_case(text, packaged))
        elif target == "rules":
            text = _rule_mutation(rnd)
            camp.run(text, lambda: rule_case(text, LAUNCH.replace("$TP", "2")))
        else:
            data = _mutate(rnd, CONFIG, TOML_SALT).encode("utf-8", "surrogatepass")
            camp.run(repr(data[:300]), lambda: config_case(folder, data))

    one()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--target", choices=["shell", "rules", "config", "all"], default="all")
    ap.add_argument("--case-seconds", type=int, default=30)
    ap.add_argument("--cases", type=int, default=None, help="run this many cases per campaign, however long")
    args = ap.parse_args()
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    targets = ["shell", "rules", "config"] if args.target == "all" else [args.target]
    share = args.minutes * 60 / len(targets)
    campaigns: list[Campaign] = []
    from megalint.engine import load_rules

    packaged = load_rules([])
    fixtures = _fixtures()
    for target in targets:
        camp = Campaign(target, args.case_seconds)
        campaigns.append(camp)
        deadline = time.monotonic() + share

        def done(camp: Campaign = camp, deadline: float = deadline) -> bool:
            return camp.cases >= args.cases if args.cases is not None else time.monotonic() > deadline

        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            batch = 0
            while not done():
                _batch(target, camp, args.seed * 100_003 + batch, done, fixtures, packaged, folder)
                batch += 1
        print(f"{target}: {camp.cases} cases, {len(camp.failures)} failures", flush=True)
        for why, what in camp.failures[:20]:
            print(f"  {why}\n    input: {what[:400]!r}", flush=True)
    total = sum(c.cases for c in campaigns)
    failures = sum(len(c.failures) for c in campaigns)
    print(f"ran {total} cases: {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
