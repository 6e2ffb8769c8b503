"""A condition decided false by an operand of its `&&` chain, without compiling it, says what CEL
says: each form on every kind of value, in any place of the chain, and every packaged rule's
expressions."""

from __future__ import annotations

import itertools

import pytest

from megalint.engine.expressions import Env, EvalFailure, NeedInputs, compile_expr, scan
from megalint.engine.loader import packaged_rules
from megalint.engine.short_circuit import decides_false

# Values a context holds for one argument: null, booleans, integers, a float, strings, a list, a map.
VALUES = [None, True, False, 0, 1, 2, 7, -3, 2.0, "", "full", "selective", [1, 2], {"a": 1}]
MISSING = object()  # the context has no such key


def cel_verdict(source: str, ctx: dict) -> object:
    """CEL's own result of the expression on `ctx`, compiled and run without the guard."""
    expr = compile_expr(source)
    env = Env(ctx)
    try:
        return expr.program.execute(env.cel)
    except Exception as e:  # noqa: BLE001 - an error is a verdict too: the guard must not hide it
        return type(e)


@pytest.mark.parametrize(
    ("source", "form"),
    [
        ("args.fp8 != null && args.bf16", "not-null"),
        ("args.bf16 && args.fp8 != null", "is"),
        ("!args.bf16 && args.fp16", "not"),
        ("args.recompute_granularity == 'full' && args.num_layers > 1", "equals"),
        ('args.recompute_granularity == "selective"', "equals"),
        ("args.num_layers > 2 && args.bf16", "above"),
        ("args.num_layers >= 2", "at-least"),
        ("args.num_layers < 2 && args.bf16", "below"),
        ("args.num_layers <= 2", "at-most"),
        ("args.fp8 == null && args.bf16", "null"),
        ("has(args.fp8) && args.bf16", "has"),
        ("(args.fp8 != null) && args.bf16", "none-of"),
        ("(args.fp8 != null || args.fp16) && args.bf16", "none-of"),
        ("(args.recompute_granularity == 'full' || args.fp16 > 2 || has(args.tp))", "none-of"),
        ("args.recompute_granularity != 'full' && args.num_layers > 1", "differs"),
        ("args.num_layers == 2 && args.bf16", "equals-number"),
        ("args.num_layers != 2", "differs-number"),
        ("args.bf16 == true", "equals-bool"),
        ("args.bf16 == false && args.fp16", "equals-bool"),
        # An operand after the first: CEL's `&&` is false when any operand is, whatever the others.
        ("args.fp16 + 1 > 2 && args.recompute_granularity == 'full'", "equals"),
        ("args.fp16.size() > 0 && args.num_layers > 2 && args.fp16", "above"),
    ],
)
def test_each_form_is_false_exactly_where_cel_says_false(source, form):
    guards = scan(source).guards
    assert guards and guards[0][0] == form
    guard = guards[0]
    decided = 0
    for value, other in itertools.product([*VALUES, MISSING], [None, True, False, 1, MISSING]):
        args = {"fp8": value, "bf16": value, "fp16": other, "recompute_granularity": value, "num_layers": value}
        ctx = {"args": {k: v for k, v in args.items() if v is not MISSING}}
        if decides_false(guard, ctx):
            decided += 1
            assert cel_verdict(source, ctx) is False, (source, ctx)
    assert decided > 0


def test_guarded_run_compiles_nothing_and_answers_false():
    e = compile_expr("args.fp8 != null && args.undefined_elsewhere > 1")
    e._program = None  # as read from the rule cache: compiled when it first runs
    assert e.run(Env({"args": {"fp8": None}})) is False
    assert e._program is None
    assert e.run(Env({"args": {"fp8": "hybrid", "undefined_elsewhere": 2}})) is True
    assert e._program is not None


def test_missing_value_is_left_to_cel():
    e = compile_expr("args.fp8 != null && args.bf16")
    e._program = None
    with pytest.raises(NeedInputs):
        e.run(Env({"args": {"bf16": True}}))


@pytest.mark.parametrize(
    "source",
    [
        "args.fp8 != null || args.bf16",  # `||` binds looser: the first operand is not the whole's
        "args.fp8 != null ? true : false",
        "(args.fp8 != null || args.bf16 && args.fp16) && args.bf16",
        "(args.fp8 != null ? 1 : 2) > 1",
        "(args.fp8 != null || args.a.size() > 0) && args.bf16",
        "args.fp8.size() > 0 && args.bf16",
        "args.num_layers > 1.5 && args.bf16",
        "args.num_layers > 0u && args.bf16",
        "args.recompute_granularity == 'a\\'b' && args.bf16",
        "has(args.a.b) && args.bf16",
        "args.a.b != null && args.bf16",
        "null && args.bf16",
        "1 > 0 && args.bf16",
    ],
)
def test_other_forms_have_no_guard(source):
    # Only the chain's last operand, `args.bf16`, where one is written, is a guard.
    assert [g for g in scan(source).guards if g != ("is", "args", "bf16", None)] == []


def test_every_operand_of_the_chain_is_read():
    guards = scan("args.a.size() > 0 && args.fp8 != null && (x.y + 1 > 0 || args.b) && args.c == 'd'").guards
    assert guards == (("not-null", "args", "fp8", None), ("equals", "args", "c", "d"))
    assert scan("args.fp8 != null && args.c == 'd' || args.e").guards == ()


def test_a_later_operand_decides_over_an_earlier_missing_input():
    # CEL's `&&` is false when any operand is, even where an earlier one names a missing input.
    source = "args.absent > 1 && args.fp8 != null"
    e = compile_expr(source)
    ctx = {"args": {"fp8": None}}
    assert cel_verdict(source, ctx) is False
    e._program = None
    assert e.run(Env(ctx)) is False and e._program is None


def test_nested_comprehensions_keep_their_budget():
    # A condition past the evaluation budget fails, as it did before the guard was read.
    e = compile_expr("args.n != null && args.l.all(x, args.l.all(y, args.l.all(z, true)))")
    with pytest.raises(EvalFailure):
        e.run(Env({"args": {"n": None, "l": list(range(300))}}))


def test_every_packaged_expression_agrees_with_cel():
    """Each expression of each packaged rule with a guard, on contexts where each value its guard
    reads takes every kind of value, or is absent (the other values it reads: unset, or each
    kind too): false wherever the guard says so, as CEL finds it."""
    checked = 0
    roots = ("args", "given", "derived", "env", "launch", "gpu", "memory", "unknown")
    for rule in packaged_rules().rules:
        for expr, bound, guard in [(e, b, g) for e, b in rule.exprs() for g in e.scan.guards]:
            if expr.scan.nesting > 1:
                continue
            guarded = [(g[1], g[2]) for g in (guard[3] if guard[0] == "none-of" else (guard,))]
            program = expr.program
            others = [r.path.split(".", 1) for r in expr.scan.refs if "." in r.path]
            kinds = [*VALUES, MISSING]
            for values, filler in itertools.product(
                itertools.product(kinds, repeat=min(len(guarded), 2)), [None, 1, "x"]
            ):
                ctx: dict = {r: {} for r in roots}
                for name in bound:
                    ctx[name] = {}
                for r, k in others:
                    if r in ctx and "." not in k:
                        ctx[r][k] = filler
                for i, (root, key) in enumerate(guarded):
                    value = values[min(i, len(values) - 1)]
                    ctx.setdefault(root, {}).pop(key, None)
                    if value is not MISSING:
                        ctx[root][key] = value
                env = Env(ctx)
                for name in bound:
                    env.bind(name, ctx[name])
                if not decides_false(guard, env.scope):
                    continue
                try:
                    verdict = program.execute(env.cel)
                except Exception as e:  # noqa: BLE001
                    verdict = type(e)
                assert verdict is False, (rule.code, expr.source, ctx)
                checked += 1
    assert checked > 1000
