"""A rule decided on one launch is not decided again on the next when it reads nothing that
differs: what it added is replayed, with the next launch's condition. Everything evaluated is
the same as deciding every rule on every launch (`evaluate.SHARE = False`)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from megalint.engine import Target
from megalint.engine import evaluate as evaluate_module
from megalint.engine.evaluate import evaluate
from megalint.engine.expressions import changes, same

from .test_engine_evaluate import SCRIPT, make_rules
from .textlocator import TextLocator

RULES = make_rules(
    {"when": "args.a % 2 == 1", "message": "a={args.a}"},  # fires on odd a
    {"when": "args.b > 3", "requires": ["args.b"]},  # undecided while b is unknown
    {"when": "args.a + 1.5 > 2"},  # fails on an int a (no int + double in CEL)
    {"when": "p.kind == 'x'", "for_each": {"var": "p", "in": "problems"}, "message": "{p.flag}"},
    {"when": "size(env) > 1"},  # reads a whole map
    {"when": "args.c == true"},  # true, not 1
    {"when": "derived.d > 0", "megatron": ">=0.15"},  # undecided on an unknown version
    {"when": "has(args.e) && args.e == 'x'"},
    {"when": "!('args.b' in unknown) && args.a == 2"},  # reads one key of `unknown`
)


def _ctx(rng: random.Random) -> dict[str, Any]:
    args: dict[str, Any] = {"a": rng.choice([1, 2, 2, 2]), "c": rng.choice([True, 1, True])}
    unknown: dict[str, str] = {}
    if rng.random() < 0.6:
        args["b"] = rng.choice([1, 5])
    else:
        unknown["args.b"] = rng.choice(["set in a branch", "read from $1"])
    if rng.random() < 0.3:
        args["e"] = "x"
    env = dict(rng.choice([[("X", "1")], [("X", "1"), ("Y", "2")], [("Y", "2"), ("X", "1")]]))
    problems = rng.choice([[], [{"kind": "x", "flag": "--f"}], [{"kind": "y", "flag": "--f"}]])
    ctx = {"args": args, "env": env, "problems": problems, "unknown": unknown}
    if rng.random() < 0.8:
        ctx["megatron"] = rng.choice(["0.15", "0.15", "0.12"])
    if rng.random() < 0.7:
        ctx["derived"] = {"d": rng.choice([0, 1])}
    return ctx


def _shown(ev: evaluate_module.Evaluation) -> list[Any]:
    return [
        [(d.code, d.message, d.span, d.condition) for d in ev.diagnostics],
        [(u.to_json(), u.condition) for u in ev.undecided],
        [(f.rule.code, f.message, f.condition) for f in ev.failures],
        sorted((k, sorted(v)) for k, v in ev.outcomes.items()),
    ]


@pytest.mark.parametrize("seed", range(40))
def test_replayed_verdicts_are_those_decided_again(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    loc = TextLocator(SCRIPT)
    targets = []
    ctx = _ctx(rng)
    for i in range(rng.randint(2, 9)):
        # Neighbouring launches share most of their values, as a script's paths do.
        if rng.random() < 0.5:
            ctx = _ctx(rng)
        targets.append(Target(ctx, loc, rng.choice([None, f"P={i}"])))
    shared = _shown(evaluate(RULES, targets))
    monkeypatch.setattr(evaluate_module, "SHARE", False)
    assert shared == _shown(evaluate(RULES, targets))


@pytest.fixture
def decided(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The codes of the rules decided (not replayed), in order."""
    codes: list[str] = []
    run = evaluate_module._Run.run

    def counted(self: evaluate_module._Run) -> None:
        codes.append(self.rule.code)
        run(self)

    monkeypatch.setattr(evaluate_module._Run, "run", counted)
    return codes


def test_a_rule_is_decided_again_only_when_what_it_reads_differs(decided: list[str]) -> None:
    rules = make_rules({"when": "args.a > 1"}, {"when": "args.b > 1"}, {"when": "args.c > 1"})
    loc = TextLocator(SCRIPT)
    targets = [
        Target({"args": {"a": 0, "b": b, "c": 5}, "unknown": {"x": str(i)}}, loc, f"L={i}")
        for i, b in enumerate((0, 0, 2, 2))
    ]
    ev = evaluate(rules, targets)
    # a passes everywhere: decided once. b passes on the second launch as on the first, then
    # differs; c fires, and its finding is made on every launch (it rests on the launch's places).
    assert decided == ["ML900", "ML901", "ML902", "ML902", "ML901", "ML902", "ML901", "ML902"]
    assert ev.outcomes == {"ML900": {"passed"}, "ML901": {"passed", "fired"}, "ML902": {"fired"}}
    (b_fired,) = [d for d in ev.diagnostics if d.code == "ML901"]
    assert b_fired.condition == "(L=2) or (L=3)"


def test_an_undecided_rule_replayed_names_the_reason_of_its_own_launch() -> None:
    rules = make_rules({"when": "args.b > 1"})
    loc = TextLocator(SCRIPT)
    ev = evaluate(
        rules,
        [Target({"args": {}, "unknown": {"args.b": f"set on line {n}"}}, loc, f"L={n}") for n in (3, 7)],
    )
    assert [(u.to_json()["missing"], u.condition) for u in ev.undecided] == [
        ([{"path": "args.b", "reason": "set on line 3"}], "L=3"),
        ([{"path": "args.b", "reason": "set on line 7"}], "L=7"),
    ]


def test_values_are_the_same_only_when_cel_sees_one_value() -> None:
    assert same({"a": [1, "x"]}, {"a": [1, "x"]})
    assert not same(1, True) and not same(1, 1.0) and not same(True, 1)
    assert not same({"a": 1, "b": 2}, {"b": 2, "a": 1})  # a map read whole is iterated in order
    assert not same([1], (1,)) and not same(object(), object())
    assert changes({"args": {"a": 1, "b": 2}, "megatron": "0.15"}, {"args": {"a": 1, "b": 3}, "megatron": "0.15"}) == {
        "args",
        "args.b",
    }
    assert changes({"env": {"X": "1", "Y": "2"}}, {"env": {"Y": "2", "X": "1"}}) == {"env"}
    assert changes({"args": {"a": 1}}, {"args": {}}) == {"args", "args.a"}
    assert changes({"problems": []}, {}) == {"problems"}


def test_a_map_asked_for_one_key_is_read_for_that_key_alone(decided: list[str]) -> None:
    rules = make_rules({"when": "!('args.b' in unknown) && 'X' in env"}, {"when": "size(unknown) > 2"})
    assert rules.reads[0] == {"unknown.args.b", "env.X", "megatron"}
    assert rules.reads[1] == {"unknown", "megatron"}
    loc = TextLocator(SCRIPT)
    # Another key of `unknown` differs: the rule asking for args.b alone is decided once.
    targets = [Target({"unknown": {"args.b": "r", "args.c": c}, "env": {"X": "1"}}, loc) for c in ("p", "q")]
    ev = evaluate(rules, targets)
    assert decided == ["ML900", "ML901", "ML901"]
    assert ev.outcomes == {"ML900": {"passed"}, "ML901": {"passed"}}


def test_the_rules_reading_a_part_are_those_whose_reads_name_it() -> None:
    # What evaluate decides again after a change is looked up by the part that changed.
    from megalint.engine.rule import RuleSet

    rules = RuleSet(list(RULES))
    readers = rules.readers
    for token in {t for reads in rules.reads for t in reads} | {"args.zz", "problems"}:
        expected = tuple(i for i, r in enumerate(rules.rules) if r.when is not None and token in r.reads)
        assert readers.get(token, ()) == expected
    assert readers["args.a"] == (0, 2, 8)
