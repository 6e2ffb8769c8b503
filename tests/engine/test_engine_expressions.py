"""CEL expressions, templates and version ranges, without rule files."""

from __future__ import annotations

import pytest

from megalint.engine.expressions import (
    Env,
    EvalFailure,
    ExprError,
    NeedInputs,
    Needs,
    compile_expr,
    scan,
)
from megalint.engine.templates import format_value, parse_template
from megalint.engine.versions import VersionError, VersionRange, parse_version


def env(**ctx):
    return Env(ctx)


def test_scan_finds_paths_functions_and_bound_names():
    s = scan(
        'problems.filter(p, p.kind == "unknown-flag").exists(q, has(q.flag)) '
        "&& has(args.fp8_format) && math.greatest(args.a, 2) > gpu.compute_capability "
        '&& "args.not_a_path".startsWith("x")'
    )
    assert [(r.path, r.guarded) for r in s.refs if r.root not in s.bound] == [
        ("problems", False),
        ("args.fp8_format", True),
        ("args.a", False),
        ("gpu.compute_capability", False),
    ]
    assert [f for f, _ in s.functions] == ["filter", "exists", "has", "has", "math.greatest", "startsWith"]
    assert s.bound == {"p", "q"}


def test_evaluation_and_missing_inputs():
    e = compile_expr("args.num_attention_heads % args.tensor_model_parallel_size != 0")
    assert e.run(env(args={"num_attention_heads": 12, "tensor_model_parallel_size": 8})) is True
    with pytest.raises(NeedInputs) as info:
        e.run(env(args={"num_attention_heads": 12}))
    assert info.value.paths == ("args.tensor_model_parallel_size",)


def test_missing_root_names_the_root():
    e = compile_expr("gpu.compute_capability < 8.9 && launch.world_size > 8")
    with pytest.raises(NeedInputs) as info:
        e.run(env(launch={"world_size": 16}))
    assert info.value.paths == ("gpu.compute_capability",)
    with pytest.raises(NeedInputs) as info:
        compile_expr("size(problems) > 0").run(env())
    assert info.value.paths == ("problems",)


def test_guarded_and_short_circuit_paths_are_not_missing():
    assert compile_expr("has(args.fp8_format) && args.fp8_format != null").run(env(args={})) is False
    # CEL's && and || absorb an error on one side when the other side decides.
    assert compile_expr("args.missing > 1 || true").run(env(args={})) is True
    assert compile_expr("false && args.missing > 1").run(env(args={})) is False


def test_null_is_a_known_value():
    assert compile_expr("args.fp8_format == null").run(env(args={"fp8_format": None})) is True


def test_type_errors_are_failures_not_missing():
    with pytest.raises(EvalFailure) as info:
        compile_expr("args.a + 1.5 > 2").run(env(args={"a": 1}))
    assert str(info.value).startswith("TypeError: No such overload")
    with pytest.raises(EvalFailure):
        compile_expr("args.a % args.b == 0").run(env(args={"a": 1, "b": 0}))


def test_int_and_double_compare():
    assert compile_expr("gpu.compute_capability >= 9").run(env(gpu={"compute_capability": 9.0})) is True


def test_stdlib_functions():
    assert compile_expr("max([args.a, 3]) == 5 && math.least(1, 2) == 1").run(env(args={"a": 5})) is True


@pytest.mark.parametrize(
    "source, message, offset",
    [
        ("args.x >=", "invalid CEL: Syntax error: mismatched input '<EOF>'", 9),
        ("argz.x", "unknown name 'argz'", 0),
        ("1 + launch.gpus", "unknown field 'launch.gpus'", 4),
        ("lower(args.x)", "unknown function 'lower'", 0),
        ("   ", "empty expression", 0),
    ],
)
def test_compile_errors(source, message, offset):
    with pytest.raises(ExprError) as info:
        compile_expr(source)
    assert info.value.message.startswith(message)
    assert info.value.offset == offset


def test_bound_names_are_allowed():
    e = compile_expr("item.kind == 'x'", names=["item"])
    ev = env()
    ev.bind("item", {"kind": "x"})
    assert e.run(ev) is True


def test_needs_select_only_what_rules_read():
    needs = Needs()
    needs.add(compile_expr("args.a > 1 && size(env_set) > 0 && gpu.fp8"))
    needs.add(compile_expr("problems.exists(p, p.kind == 'x')"))
    needs.add_path("derived.data_parallel_size")
    ctx = {
        "args": {"a": 2, "b": 3},
        "env_set": ["X"],
        "gpu": {"fp8": True, "name": "H100"},
        "derived": {"data_parallel_size": 4, "other": 1},
        "problems": [],
        "megatron": "0.15",
    }
    sel = needs.select(ctx)
    assert sel["args"] == {"a": 2}
    assert sel["gpu"] == {"fp8": True}
    assert sel["derived"] == {"data_parallel_size": 4}
    assert sel["env_set"] == ["X"] and sel["problems"] == [] and sel["megatron"] == "0.15"
    assert sel["env"] == {} and sel["launch"] == {}  # mapping roots read as empty when absent


def test_whole_root_when_read_as_a_whole():
    needs = Needs()
    needs.add(compile_expr("size(args) > 1"))
    assert needs.select({"args": {"a": 1, "b": 2}})["args"] == {"a": 1, "b": 2}


# -- templates ---------------------------------------------------------------------------------


def test_template_rendering():
    t = parse_template(
        "{args.h} heads over {'tensor_model_parallel_size'|flag} {args.tp}: "
        "{args.h % args.tp} left; {gpu.memory_bytes|gib}; {args.l|join(' ')}; "
        "{args.f|round(2)}; {{literal}}; {args.s|quote}; {gpu.name|upper}"
    )
    out = t.render(
        env(
            args={"h": 12, "tp": 8, "l": [1, 2], "f": 2.345, "s": "a b"},
            gpu={"memory_bytes": 85 * 2**30, "name": "h100"},
        )
    )
    assert out == ("12 heads over --tensor-model-parallel-size 8: 4 left; 85.0 GiB; 1 2; 2.35; {literal}; 'a b'; H100")


def test_template_unknown_value():
    t = parse_template("GPU {gpu.name}")
    assert t.render(env()) == "GPU unknown"
    with pytest.raises(NeedInputs):
        t.render(env(), strict=True)


def test_template_with_cel_strings_and_maps():
    t = parse_template("{args.x > 1 ? 'a|b' : '}'} {{x}} { {'k': 1}['k'] }")
    assert t.render(env(args={"x": 2})) == "a|b {x} 1"
    assert parse_template("{args.a || args.b}").render(env(args={"a": False, "b": True})) == "true"


@pytest.mark.parametrize(
    "value, text",
    [
        (True, "true"),
        (None, "null"),
        (8.0, "8.0"),
        (8.9, "8.9"),
        (3, "3"),
        (["a", 1], "a, 1"),
        ({"b": 1, "a": 2}, '{"a": 2, "b": 1}'),
    ],
)
def test_format_value(value, text):
    assert format_value(value) == text


@pytest.mark.parametrize(
    "source, message, offset",
    [
        ("a {args.x", "unclosed '{' in template (write '{{' for a literal brace)", 2),
        ("a } b", "single '}' in template (write '}}' for a literal brace)", 2),
        ("x {args.x|foo}", "unknown filter 'foo' (known: flag, gib, round, join, quote, lower, upper)", 10),
        ("{args.x|join(;)}", "filter 'join' takes a quoted string, not ';'", 8),
        ("{ 'abc }", "unterminated string in placeholder", 2),
    ],
)
def test_template_errors(source, message, offset):
    with pytest.raises(ExprError) as info:
        parse_template(source)
    assert (info.value.message, info.value.offset) == (message, offset)


# -- versions ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, version, inside",
    [
        (">=0.13", "0.13", True),
        (">=0.13", "0.12.1", False),
        (">=0.13", "HEAD", True),
        ("<0.16", "0.15.9", True),
        ("<0.16", "0.16", False),
        ("<0.16", "main", False),
        (">=0.12,<0.16", "core_v0.15.0", True),
        (">=0.12,<0.16", "core_r0.16.0", False),
        ("==0.15", "0.15.0", True),
        ("!=0.15", "v0.15.0", False),
        ("*", "0.8", True),
        ("<HEAD", "0.19", True),
        ("<HEAD", "HEAD", False),
        (">0.15", "0.15.1", True),
        ("<=0.15", "0.15.0rc1", True),
    ],
)
def test_version_ranges(text, version, inside):
    assert VersionRange.parse(text).contains(version) is inside


def test_version_errors():
    with pytest.raises(VersionError, match="'~0.13' is not a version comparison"):
        VersionRange.parse("~0.13")
    with pytest.raises(VersionError, match="'latest' is not a Megatron version"):
        parse_version("latest")
    assert parse_version("0.15") == parse_version("0.15.0") < parse_version("HEAD")


# -- version tests -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source, holds_at",
    [
        ("version_at_least('0.16')", {"0.16", "0.17", "0.19", "HEAD"}),
        ("version_before('0.13')", {"0.8", "0.12", "nightly"}),
        ("version_is('0.12')", {"0.12"}),
        ("version_is('HEAD')", {"HEAD"}),
        ("!version_is('0.15') && version_at_least('0.12')", {"0.12", "0.13", "0.16", "0.17", "0.19", "HEAD"}),
        ("version_at_least('HEAD')", {"HEAD"}),
    ],
)
def test_version_tests(source, holds_at):
    expr = compile_expr(source)
    versions = ["0.8", "0.12", "0.13", "0.15", "0.16", "0.17", "0.19", "HEAD", "nightly"]
    assert {v for v in versions if expr.run(Env({"megatron": v}))} == holds_at
    assert [r.path for r in expr.refs] == ["megatron"] * source.count("version_")


def test_version_tests_read_the_job_version():
    with pytest.raises(NeedInputs) as info:
        compile_expr("version_is('HEAD')").run(Env({}))
    assert info.value.paths == ("megatron",)
    assert compile_expr("true || version_is('HEAD')").run(Env({})) is True
    t = parse_template("Megatron-LM {version_before('0.16') ? 'before 0.16' : megatron}")
    assert t.render(Env({"megatron": "0.15"})) == "Megatron-LM before 0.16"
    assert t.render(Env({"megatron": "0.17"})) == "Megatron-LM 0.17"


@pytest.mark.parametrize(
    "source, message, offset",
    [
        ("version_at_least(0.16)", "version_at_least takes one version in quotes, like version_at_least('0.16')", 0),
        ("x || version_is()", "version_is takes one version in quotes, like version_is('0.16')", 5),
        (
            "version_before('latest')",
            "version_before: 'latest' is not a Megatron version (like 0.15, 0.15.1, core_v0.15.0 or HEAD)",
            15,
        ),
        ("version_is('0.12') && version_is('0.13') &&", "invalid CEL: Syntax error: mismatched input '<EOF>'", 43),
    ],
)
def test_version_test_errors(source, message, offset):
    with pytest.raises(ExprError) as info:
        compile_expr(source)
    assert info.value.message.startswith(message) and info.value.offset == offset


def test_the_scanners_namespaces_are_those_of_the_functions():
    # Scanning needs no CEL import, so the namespaces are written out; they must stay in step.
    from megalint.engine.expressions import _NAMESPACES, functions

    assert frozenset(name.split(".")[0] for name in functions() if "." in name) == _NAMESPACES


def test_an_unpickled_expression_compiles_when_it_first_runs():
    import pickle

    e = compile_expr("math.greatest(args.a, 2) > 3 && version_at_least('0.12')")
    again = pickle.loads(pickle.dumps(e))
    assert again == e and again._program is None
    ctx = {"args": {"a": 5}, "megatron": "0.15"}
    assert again.run(env(**ctx)) is True and again._program is not None
    assert e.run(env(**ctx)) is True
