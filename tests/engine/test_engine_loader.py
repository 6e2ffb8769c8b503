"""Loading rule files: the exact `file:line:col: message` of every kind of mistake."""

from __future__ import annotations

import textwrap
from pathlib import Path

import jsonschema
import pytest

from megalint import __version__
from megalint.engine import RuleFileError, load_rule_texts, load_rules, loader, rule_schema, yamlpos
from megalint.engine.loader import packaged_rules_dir
from megalint.engine.rule import rule_url

DATA = Path(__file__).parent / "data"
BAD = DATA / "bad"


@pytest.fixture(autouse=True, params=["libyaml", "ruamel"])
def yaml_loader(request, monkeypatch, tmp_path_factory):
    """Every loader test runs with both YAML readers: errors must not depend on which one."""
    loader._packaged_files.cache_clear()  # the packaged rules are read anew with each reader,
    monkeypatch.setenv("MEGALINT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))  # not from the cache
    if request.param == "ruamel":
        monkeypatch.setattr(yamlpos, "_CLOADER", None)
    elif not yamlpos.fast_available():
        pytest.skip("PyYAML without libyaml")
    yield request.param
    loader._packaged_files.cache_clear()


def errors_of(*paths) -> list[str]:
    with pytest.raises(RuleFileError) as info:
        load_rules([Path(p) for p in paths], packaged=False)
    return str(info.value).splitlines()


def text_errors(text: str, path: str = "r.yaml") -> list[str]:
    with pytest.raises(RuleFileError) as info:
        # The rules read made-up arguments (args.x); test_unknown_megatron_arguments checks names.
        load_rule_texts([(path, textwrap.dedent(text))], check_arguments=False)
    return [str(e) for e in info.value.errors]


BASE = """\
code: ML900
name: base-rule
severity: warning
category: test
when: "true"
message: m
at: launch
docs: {what: w, why: y}
examples: [{bad: "x\\n", expect: [{line: 1, column: 1}]}]
"""


def with_lines(**replace: str) -> str:
    lines = []
    for line in BASE.splitlines():
        key = line.split(":", 1)[0]
        lines.append(replace.pop(key) if key in replace else line)
    lines.extend(replace.values())
    return "\n".join(lines) + "\n"


def test_schema_is_valid_json_schema():
    schema = rule_schema()
    jsonschema.validators.validator_for(schema).check_schema(schema)


def test_base_rule_loads():
    rules = load_rule_texts([("r.yaml", BASE)])
    (rule,) = rules
    assert rule.code == "ML900" and rule.name == "base-rule"
    assert rule.origin == "r.yaml:1:1"
    assert rule.url == f"https://github.com/megalint/megalint/blob/v{__version__}/docs/rules/base-rule.md"
    assert rules.get("ML900") is rule and rules.get("base-rule") is rule


def test_demo_rules_load():
    rules = load_rules([DATA / "demo"], packaged=False)
    assert [r.code for r in rules] == ["DM101", "DM102"]
    heads = rules.get("tp-divides-heads")
    assert heads.requires == ("args.num_attention_heads", "args.tensor_model_parallel_size")
    assert [str(c) for c in heads.at] == ["value(tensor_model_parallel_size)", "flag(tensor_model_parallel_size)"]
    assert heads.docs.sources == ("megatron/core/transformer/transformer_config.py:1020@core_v0.15.0",)
    assert heads.examples[0].expect[0].line == 5
    assert heads.examples[1].kind == "good"
    assert rules.get("DM102").for_each.var == "problem"


def test_packaged_rules_load():
    folder = packaged_rules_dir()
    assert folder.joinpath("__init__.py").is_file()
    rules = load_rules()
    import yaml

    expected = 0
    for f in _yaml_files(folder):
        doc = yaml.safe_load(f.read_text("utf-8"))
        expected += len(doc["rules"]) if isinstance(doc, dict) and "rules" in doc else 1
    assert len(rules) == expected


def _yaml_files(folder):
    for child in folder.iterdir():
        if child.is_dir():
            yield from _yaml_files(child)
        elif child.name.endswith((".yaml", ".yml")) and child.name != "codes.yaml":  # the code registry
            yield child


def test_yaml_syntax_error():
    assert errors_of(BAD / "yaml-syntax.yaml") == [
        f"{BAD / 'yaml-syntax.yaml'}:6:8: invalid YAML: expected ',' or ']', but got ':'"
        " (while parsing a flow sequence started at 5:7)",
    ]


def test_duplicate_key():
    assert errors_of(BAD / "duplicate-key.yaml") == [f"{BAD / 'duplicate-key.yaml'}:4:1: duplicate key 'code'"]


def test_schema_errors_point_at_keys_and_values():
    p = BAD / "schema.yaml"
    assert errors_of(p) == [
        f"{p}:2:11: a rule code is capital letters then digits, like ML101, not 'ml900'",
        f"{p}:4:15: 'severity' must be one of error, warning, info, not 'fatal'",
        f"{p}:7:5: unknown key 'mesage'; did you mean 'message'?",
        f"{p}:13:36: 'column' must be at least 1, not 0",
        f"{p}:14:5: missing required key 'when'",
        f"{p}:21:15: 'examples' must not be empty",
    ]


def test_semantic_errors():
    p = BAD / "semantics.yaml"
    roots = "args, given, derived, env, env_set, launch, gpu, megatron, memory, problems, shell, unknown"
    gpu = "arch, bf16, compute_capability, fp4, fp8, memory_bytes, name"
    assert errors_of(p) == [
        f"{p}:6:29: when: invalid CEL: Syntax error: mismatched input '<EOF>' expecting {{'[', '{{', '(', "
        "'.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}",
        f"{p}:15:15: megatron: '~0.13' is not a version comparison (like >=0.13, <0.16 or ==0.15)",
        f"{p}:16:16: requires: unknown context root 'arg' (known: {roots})",
        f"{p}:16:32: requires: unknown field 'gpu.cc' (known: {gpu})",
        f"{p}:17:12: when: unknown name 'argz' (a rule reads {roots})",
        f"{p}:18:20: message: unknown field 'gpu.compute_capabilty' (known: {gpu})",
        f"{p}:19:9: at: unknown place 'flagg' (known: launch, entry, gpu, item, last_export, flag(DEST), "
        "value(DEST), origin(DEST), launcher(KEY), env(ENV), expansion(NTH))",
        f"{p}:21:13: labels.at: item works on the current element of for_each, and this rule has none",
        f"{p}:27:23: fix.edits: remove_flag expects a Megatron dest such as tensor_model_parallel_size, "
        "not '--fp16'; write fp16",
        f"{p}:28:38: fix.edits: unclosed '{{' in template (write '{{{{' for a literal brace)",
        f"{p}:29:5: docs: fix_safety is required when the rule has a fix",
        f"{p}:32:9: examples: a good example cannot have expect",
        f"{p}:35:18: examples: expect 3:1 is outside the example script (1 line)",
        f"{p}:35:40: examples: expect 1:20 is outside line 1 (8 characters)",
    ]


def test_duplicate_code_and_name_across_files():
    d = BAD / "dup"
    assert errors_of(d) == [
        f"{d / 'b.yaml'}:1:7: duplicate rule code ML900 (also defined at {d / 'a.yaml'}:1:7)",
        f"{d / 'c.yaml'}:2:7: duplicate rule name first (also defined at {d / 'a.yaml'}:2:7)",
    ]


def test_errors_of_several_files_are_reported_together():
    lines = errors_of(BAD / "duplicate-key.yaml", BAD / "yaml-syntax.yaml")
    assert len(lines) == 2
    assert lines[0].startswith(f"{BAD / 'duplicate-key.yaml'}:4:1:")


def test_missing_path_and_not_utf8(tmp_path):
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"code: ML1\nname: caf\xe9\n")
    assert errors_of(tmp_path / "nope.yaml", latin) == [
        f"{latin}:1:1: not UTF-8 text (invalid continuation byte at byte 19)",
        f"{tmp_path / 'nope.yaml'}:1:1: no such rule file or folder",
    ]


@pytest.mark.parametrize(
    "text, error",
    [
        ("", "r.yaml:1:1: empty rule file"),
        ("# only a comment\n", "r.yaml:1:1: empty rule file"),
        ("- code: ML1\n", "r.yaml:1:1: a rule file holds a mapping (one rule, or rules: [...]), not a list"),
        ("rules: {}\n", "r.yaml:1:8: 'rules' must be a list, not a mapping"),
        ("rules: []\n", "r.yaml:1:8: 'rules' must not be empty"),
        ("rules:\n  - 3\n", "r.yaml:2:5: this item must be a mapping, not a number"),
    ],
)
def test_file_shape(text, error):
    assert text_errors(text) == [error]


@pytest.mark.parametrize(
    "change, error",
    [
        ({"at": "at: 3"}, "r.yaml:7:5: `at` is a place such as flag(num_layers), or a list of places tried in order"),
        ({"at": "at: flag(num_layers"}, "r.yaml:7:20: at: missing ')' (inside a [flow, list] quote the whole form)"),
        ({"at": "at: flag(num_layers, x)"}, "r.yaml:7:5: at: flag takes 1 argument, got 2"),
        ({"at": "at: launch(x)"}, "r.yaml:7:5: at: launch takes no arguments, got 1"),
        ({"at": "at: flag(num_layers) x"}, "r.yaml:7:22: at: unexpected text after place: 'x'"),
        ({"at": "at: env(1X)"}, "r.yaml:7:9: at: env expects an environment variable name, not '1X'"),
        (
            {"at": "at: [launch, flag(Num)]"},
            "r.yaml:7:19: at: flag expects a Megatron dest such as tensor_model_parallel_size, not 'Num'",
        ),
        (
            {"name": "name: Base_Rule"},
            "r.yaml:2:7: a rule name is lower-case words joined by '-', like tp-divides-heads, not 'Base_Rule'",
        ),
        (
            {"severity": "severity: [error]"},
            "r.yaml:3:11: 'severity' must be one of error, warning, info, not ['error']",
        ),
        ({"when": "when: 3"}, "r.yaml:5:7: 'when' must be a string or true or false, not a number"),
        ({"when": 'when: ""'}, "r.yaml:5:8: when: empty expression"),
        ({"when": 'when: "args.x > foo(1)"'}, "r.yaml:5:17: when: unknown function 'foo'"),
        ({"when": 'when: "args.x.frobnicate()"'}, "r.yaml:5:15: when: unknown function 'frobnicate'"),
        (
            {"when": 'when: "launch.gpus > 1"'},
            "r.yaml:5:8: when: unknown field 'launch.gpus' (known: entry, "
            "launcher, multi_node, nnodes, nproc_per_node, world_size)",
        ),
        (
            {"message": "message: 'a } b'"},
            "r.yaml:6:13: message: single '}' in template (write '}}' for a literal brace)",
        ),
        (
            {"message": "message: '{args.x|money}'"},
            "r.yaml:6:19: message: unknown filter 'money' (known: flag, gib, round, join, quote, lower, upper)",
        ),
        (
            {"message": "message: '{args.x|round(x)}'"},
            "r.yaml:6:19: message: filter 'round' takes a whole number, not 'x'",
        ),
        ({"message": "message: '{args.x|flag(1)}'"}, "r.yaml:6:19: message: filter 'flag' takes no argument"),
        ({"message": "message: '{ }'"}, "r.yaml:6:11: message: empty placeholder '{}'"),
        (
            {"megatron": "megatron: '>=zero'"},
            "r.yaml:10:11: megatron: 'zero' is not a Megatron version (like 0.15, 0.15.1, core_v0.15.0 or HEAD)",
        ),
        (
            {"requires": "requires: [Args.x]"},
            "r.yaml:10:12: a required input is a dotted context path, like args.num_layers, not 'Args.x'",
        ),
        ({"requires": "requires: [args.x, args.x]"}, "r.yaml:10:11: 'requires' lists an item twice"),
        ({"status": "status: beta"}, "r.yaml:10:9: 'status' must be one of stable, preview, deprecated, not 'beta'"),
        ({"docs": "docs: {what: w}"}, "r.yaml:8:7: missing required key 'why'"),
        (
            {"docs": "docs: {what: w, why: y, sources: [arguments.py@0.15]}"},
            "r.yaml:8:35: a source is file:line@version, like megatron/training/arguments.py:412@core_v0.15.0, "
            "not 'arguments.py@0.15'",
        ),
        ({"examples": 'examples: [{good: "x\\n"}]'}, "r.yaml:9:1: examples: a rule needs at least one bad example"),
        (
            {"examples": 'examples: [{bad: "x\\n"}]'},
            "r.yaml:9:12: examples: a bad example needs expect: the positions the rule reports",
        ),
        (
            {"examples": 'examples: [{bad: "x\\n", good: "y\\n"}]'},
            "r.yaml:9:12: examples: an example has either bad or good, not both",
        ),
        (
            {"examples": "examples: [{expect: []}]"},
            "r.yaml:9:12: examples: an example needs bad (a script the rule reports) or good (one it accepts)",
        ),
        (
            {"examples": 'examples: [{bad: "x\\n", expect: [{line: 1, column: 1}], fixed: "y\\n"}]'},
            "r.yaml:9:57: examples: fixed needs the rule to have a fix",
        ),
        (
            {"examples": 'examples: [{bad: "ab\\n", expect: [{line: 1, column: 2, end_line: 1, end_column: 1}]}]'},
            "r.yaml:9:35: examples: expect 1:2-1:1 ends before it starts",
        ),
        (
            {"examples": "examples: [{bad: \"x\\n\", megatron: 'latest', expect: [{line: 1, column: 1}]}]"},
            "r.yaml:9:35: examples: 'latest' is not a Megatron version (like 0.15, 0.15.1, core_v0.15.0 or HEAD)",
        ),
        (
            {"for_each": "for_each: {var: args, in: problems}"},
            "r.yaml:10:17: for_each: var 'args' hides the context root of that name",
        ),
        (
            {"for_each": "for_each: {var: p, in: 'problems.filter(x, x.kind =)'}"},
            "r.yaml:10:51: for_each.in: invalid CEL: Syntax error: token recognition error at: '=)'",
        ),
    ],
)
def test_rule_errors(change, error):
    assert text_errors(with_lines(**change)) == [error]


@pytest.mark.parametrize(
    "when, error",
    [
        ("when: >-\n  args.num_layers > 2 &&\n  argz.x\n", "r.yaml:7:3: when: unknown name 'argz'"),
        ("when: |\n    args.num_layers > 2\n    && argz.x\n", "r.yaml:7:8: when: unknown name 'argz'"),
        ("when: 'args.num_layers > argz.x'\n", "r.yaml:5:26: when: unknown name 'argz'"),
    ],
)
def test_positions_inside_block_and_quoted_scalars(when, error):
    text = with_lines(when=when.rstrip("\n"))
    (got,) = text_errors(text)
    assert got.startswith(error + " (a rule reads")


def test_rules_file_with_several_rules_and_flow_forms():
    text = BASE.replace("code: ML900", "code: ML901").replace("name: base-rule", "name: other")
    rules = load_rule_texts([("a.yaml", BASE), ("b.yml", text)])
    assert [r.code for r in rules] == ["ML900", "ML901"]
    assert rules.subset(["other"]).rules == [rules.get("ML901")]
    assert "ML900" in rules and "ML999" not in rules


def test_rule_to_json():
    rule = load_rules([DATA / "demo"], packaged=False).get("DM101")
    j = rule.to_json()
    assert j["code"] == "DM101" and j["severity"] == "error" and j["megatron"] == ">=0.8"
    assert j["fix"] == {"message": "set {'tensor_model_parallel_size'|flag} to 1", "applicability": "unsafe"}
    assert j["url"] == rule_url("tp-divides-heads")
    assert j["origin"].endswith("heads.yaml:2:1")


def _same_tree(a, b, path="") -> None:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(a, CommentedMap):
        assert type(b) is CommentedMap and list(a) == list(b), path
        assert (a.lc.line, a.lc.col) == (b.lc.line, b.lc.col), path
        for k in a:
            assert a.lc.key(k) == b.lc.key(k), (path, k)
            if a[k] is not None:
                assert a.lc.value(k) == b.lc.value(k), (path, k)
            _same_tree(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, CommentedSeq):
        assert type(b) is CommentedSeq and len(a) == len(b), path
        assert (a.lc.line, a.lc.col) == (b.lc.line, b.lc.col), path
        for i in range(len(a)):
            assert a.lc.item(i) == b.lc.item(i), (path, i)
            _same_tree(a[i], b[i], f"{path}[{i}]")
    else:
        assert a == b or repr(a) == repr(b), (path, a, b)
        if isinstance(a, str):
            assert type(a) is type(b), (path, type(a), type(b))


SAMPLES = [
    "a: 1\nb: [x, 'y', \"z\"]\nc: {d: 1.5, e: null, f: true}\n",
    "# 注释 comment\nk: 'é' \nv: |\n  line one\n  line two\nw: >-\n  folded\n  text\n",
    "flags: [yes, no, on]\n",  # YAML 1.1 booleans in libyaml; ruamel reads 1.2 strings
    "a: &x [1]\nb: *x\n",
    "when: 2024-01-01\n",
    "x: !tag y\n",
]


@pytest.mark.parametrize(
    "text",
    SAMPLES
    + [p.read_text() for p in sorted(DATA.rglob("*.yaml")) if p.name not in ("yaml-syntax.yaml", "duplicate-key.yaml")],
)
def test_both_yaml_readers_agree(text, yaml_loader):
    if yaml_loader == "ruamel":
        return
    _same_tree(yamlpos.load(text), yamlpos.load_ruamel(text))


def test_merge_keys_go_to_ruamel():
    assert dict(yamlpos.load("<<: {a: 1}\nb: 2\n")) == {"a": 1, "b": 2}


def test_the_format_reference_example_loads_and_its_examples_hold():
    from megalint.engine import Target, check_example
    from megalint.engine.evaluate import evaluate

    from .textlocator import TextLocator, apply_fix

    doc = (Path(__file__).parents[2] / "megalint" / "engine" / "RULES.md").read_text()
    block = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    (rule,) = load_rule_texts([("RULES.md", block)])
    bad, good = rule.examples
    for example, heads in ((bad, 12), (good, 16)):
        ctx = {
            "args": {"num_attention_heads": heads, "tensor_model_parallel_size": 8},
            "megatron": example.megatron or "HEAD",
        }
        ev = evaluate([rule], [Target(ctx, TextLocator(example.script))])
        assert check_example(example, rule, ev.diagnostics) == []
    (d,) = evaluate(
        [rule],
        [
            Target(
                {"args": {"num_attention_heads": 12, "tensor_model_parallel_size": 8}, "megatron": "0.15"},
                TextLocator(bad.script),
            )
        ],
    ).diagnostics
    assert apply_fix(bad.script, d.fix) == bad.fixed


def test_when_may_be_a_yaml_boolean():
    (rule,) = load_rule_texts([("r.yaml", with_lines(when="when: true"))])
    assert rule.when.source == "true"


def test_packaged_rules_are_named_after_their_rule_and_category(tmp_path, monkeypatch):
    (tmp_path / "flags").mkdir()
    (tmp_path / "flags" / "base-rule.yaml").write_text(BASE)  # category: test
    (tmp_path / "test").mkdir()
    other = BASE.replace("code: ML900", "code: ML901").replace("name: base-rule", "name: other-rule")
    (tmp_path / "test" / "not-its-name.yaml").write_text(other)
    third = BASE.replace("code: ML900", "code: ML902").replace("name: base-rule", "name: third-rule")
    (tmp_path / "test" / "two.yaml").write_text("rules:\n  - " + textwrap.indent(third, "    ").lstrip())
    monkeypatch.setattr(loader, "packaged_rules_dir", lambda: tmp_path)
    with pytest.raises(RuleFileError) as info:
        load_rules()
    assert str(info.value).splitlines() == [
        "rules/flags/base-rule.yaml:4:11: category: a packaged rule lives in rules/test/base-rule.yaml, "
        "not rules/flags/base-rule.yaml",
        "rules/test/not-its-name.yaml:2:7: name: a packaged rule lives in rules/test/other-rule.yaml, "
        "not rules/test/not-its-name.yaml",
        "rules/test/two.yaml:1:1: a packaged rule file holds one rule, not a list of rules",
    ]
    # A user's folder may hold several rules in one file, named as its author likes.
    for f in ("flags/base-rule.yaml", "test/not-its-name.yaml"):
        (tmp_path / f).unlink()
    assert [r.code for r in load_rules([tmp_path], packaged=False)] == ["ML902"]


def test_unknown_megatron_arguments(tmp_path):
    text = with_lines(
        requires="requires: [args.num_layers, given.num_layer]",
        when="when: args.num_layers > 0 && has(args.tensor_model_paralel_size)",
        message="message: 'layers {args.num_layers} {given.hiden_size}'",
        at="at: [value(num_layers), flag(numlayers)]",
    )
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "rules.yaml").write_text(text)
    p = tmp_path / "site" / "rules.yaml"
    assert errors_of(tmp_path / "site") == [
        f"{p}:5:39: when: unknown Megatron argument 'tensor_model_paralel_size': no shipped catalogue defines "
        "it; did you mean 'tensor_model_parallel_size'?",
        f"{p}:6:43: message: unknown Megatron argument 'hiden_size': no shipped catalogue defines it; "
        "did you mean 'hidden_size'?",
        f"{p}:7:30: at: unknown Megatron argument 'numlayers': no shipped catalogue defines it; "
        "did you mean 'num_layers'?",
        f"{p}:10:35: requires: unknown Megatron argument 'num_layer': no shipped catalogue defines it; "
        "did you mean 'num_layers'?",
    ]
    # Made-up arguments load where the caller says the rules may name any.
    assert len(load_rules([tmp_path / "site"], packaged=False, check_arguments=False)) == 1


def test_caret_lines_give_the_expected_positions():
    script = (
        "A=1\\n"
        "torchrun pretrain_gpt.py --num-layers 2\\n"
        "#                        ^^^^^^^^^^^^ ML900\\n"
        "#                                     ^ ML900\\n"
    )
    (rule,) = load_rule_texts([("r.yaml", with_lines(examples=f'examples: [{{bad: "{script}"}}]'))])
    assert [str(e) for e in rule.examples[0].expect] == ["2:26-2:38", "2:39-2:40"]


@pytest.mark.parametrize(
    "examples, error",
    [
        (
            "  - bad: |\n      #  ^^ ML900",
            "r.yaml:11:7: examples: a caret line marks the line above it, and this one has none",
        ),
        (
            "  - bad: |\n      abc\n      #^^ ML901",
            "r.yaml:12:7: examples: the caret line names ML901, not this rule's ML900",
        ),
        (
            "  - bad: |\n      abc \\\n      #^^ ML900\n        --x",
            "r.yaml:12:7: examples: a caret line cannot follow a line that ends in a backslash: bash ends it there",
        ),
        (
            "  - bad: |\n      abc\n      #  ^^^ ML900",
            "r.yaml:12:7: examples: the carets at 1:4-1:7 is outside line 1 (3 characters)",
        ),
        (
            "  - bad: |\n      abc\n      #^ ML900\n    expect: [{line: 1, column: 2}]",
            "r.yaml:13:5: examples: give the positions as expect or as caret lines, not both",
        ),
        (
            '  - {bad: "x\\n", expect: [{line: 1, column: 1}]}\n  - good: |\n      abc\n      #^ ML900',
            "r.yaml:11:11: examples: a good example cannot have caret lines",
        ),
    ],
)
def test_caret_line_errors(examples, error):
    assert text_errors(with_lines(examples="examples:\n" + examples)) == [error]


def test_scope_and_forks():
    text = with_lines(category="category: test\nscope: script\nforks: [megatron-deepspeed]")
    (rule,) = load_rule_texts([("r.yaml", text)])
    assert (rule.scope, rule.forks) == ("script", ("megatron-deepspeed",))
    assert rule.holds_on(None) and rule.holds_on("megatron-deepspeed") and not rule.holds_on("other-fork")
    (plain,) = load_rule_texts([("r.yaml", BASE)])
    assert (plain.scope, plain.forks) == ("launch", ()) and not plain.holds_on("megatron-deepspeed")
    assert text_errors(with_lines(category="category: test\nscope: file")) == [
        "r.yaml:5:8: 'scope' must be one of launch, script, not 'file'"
    ]
    assert text_errors(with_lines(category="category: test\nforks: any")) == [
        "r.yaml:5:8: `forks` is all, or a list of Megatron forks such as [megatron-deepspeed]"
    ]


def test_packaged_scope_and_forks_say_what_the_pipeline_routes_by():
    """Today the pipeline decides the shell category once per script, and on Megatron forks six
    named rules plus the flag checks (read against the fork's own parser); the rules say the same
    with `scope` and `forks`."""
    from megalint.engine.rule import SCRIPT
    from megalint.megatron.forks import MEGATRON_DEEPSPEED

    rules = load_rules()
    assert {r.code for r in rules.select(scope=SCRIPT)} == {r.code for r in rules if r.category == "shell"}
    assert {r.name for r in rules.select(fork=MEGATRON_DEEPSPEED)} == {
        "world-size-divisibility",
        "fp8-requires-hopper",
        "overlap-param-gather-on-volta",
        "missing-nccl-ib-timeout",
        "predicted-oom",
        "low-memory-headroom",
        "unknown-flag",
        "invalid-choice",
        "stray-argument",
        "missing-flag-value",
        "repeated-flag",
        "switch-given-a-value",
        "bool-flag-string",
        "invalid-flag-value",
        "invalid-size",
        "negative-value-read-as-flag",
        "help-flag",
        "deprecated-flag",
    }
