"""The target of script-level rules: the shell findings, with a Locator that needs no launch."""

from megalint.diagnostics import Edit
from megalint.engine import Locator
from megalint.rulecontext.script import ScriptLocator, script_context
from megalint.shell.analyze import analyze_text

SCRIPT = "#!/bin/bash\necho hello \\  \n  world\n"


def facts():
    f = analyze_text("job.sh", SCRIPT)
    assert f.findings, "the trailing blank after the backslash is a shell finding"
    return f


def test_context_holds_the_findings_and_nothing_of_a_launch():
    f = facts()
    ctx = script_context(f, "HEAD")
    assert set(ctx) == {"shell", "megatron", "unknown"}
    assert ctx["megatron"] == "HEAD" and ctx["unknown"] == {}
    assert [e["index"] for e in ctx["shell"]] == list(range(len(f.findings)))
    assert ctx["shell"][0]["kind"] == f.findings[0].kind


def test_locator_points_at_findings_and_the_first_line():
    f = facts()
    loc = ScriptLocator(f)
    assert isinstance(loc, Locator)
    first = loc.launch()
    assert (first.start_line, first.start, first.end) == (1, 0, len("#!/bin/bash"))
    assert loc.item({"index": 0}) == f.findings[0].span
    assert loc.item({"index": len(f.findings)}) is None
    assert loc.item({"index": 0, "fatal": True}) is None  # a binding problem: no script has one
    assert loc.replace_item({"index": 0}, "\\") == [Edit(f.findings[0].span, "\\")]


def test_locator_has_no_launch_places_or_edits():
    loc = ScriptLocator(facts())
    assert loc.entry() is None and loc.gpu() is None and loc.last_export() is None
    assert loc.flag("num_layers") is None and loc.value("num_layers") is None and loc.origins("num_layers") == []
    assert loc.launcher("nnodes") is None and loc.env("NCCL_IB_TIMEOUT") is None
    assert loc.replace_flag("num_layers", "--num-layers 2") is None and loc.remove_flag("num_layers") is None
    assert loc.replace_value("num_layers", "2") is None and loc.add_flag("--bf16") is None
    assert loc.insert_export("NCCL_IB_TIMEOUT", "22") is None
