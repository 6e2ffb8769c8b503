"""The whole pipeline for one script: parse → evaluate → launches → bind → context → rules.

`lint_text` is a pure function of the script text and the settings; the CLI, the tests and
the rule examples all go through it, so an example that passes as a test behaves the same
way on the command line.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache

from megalint.context import ScriptLocator, build_context, plain
from megalint.diagnostics import Diagnostic, Severity
from megalint.engine import Evaluation, RuleSet, Target, evaluate
from megalint.hardware.profiles import Detection, GpuHint, GpuProfile, detect_gpu, find_gpu
from megalint.launch.extract import extract_launches
from megalint.launch.model import Launch
from megalint.megatron.bind import BoundArgs, bind
from megalint.megatron.catalogue import Catalogue
from megalint.megatron.derived import derive
from megalint.megatron.versions import resolve
from megalint.shell.analyze import analyze_parsed
from megalint.shell.facts import ScriptFacts
from megalint.shell.parse import parse_text
from megalint.source import SourceFile, Span

SHELL_CATEGORY = "shell"


@dataclass
class Settings:
    rules: RuleSet
    megatron_version: str | None = None
    gpu: str | None = None
    assume: dict[str, str] = field(default_factory=dict)
    root_dir: str | None = None
    follow_source_outside_root: bool = False
    with_memory: bool = True


@dataclass
class LaunchResult:
    launch: Launch
    bound: BoundArgs
    context: dict
    detection: Detection | None
    gpu: GpuProfile | None


@dataclass
class FileResult:
    path: str
    facts: ScriptFacts
    launches: list[LaunchResult]
    evaluation: Evaluation
    version: str
    version_note: str | None = None
    gpu_note: str | None = None

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self.evaluation.diagnostics

    @property
    def sources(self) -> dict[str, SourceFile]:
        return self.facts.sources


@lru_cache(maxsize=8)
def _catalogue(version: str) -> Catalogue:
    return Catalogue.load(version)


_GPU_COUNT_KEYS = ("--gpus", "--gpus-per-node", "--gpus-per-task", "--gpus-per-socket")


def _all_headers(facts: ScriptFacts) -> list:
    """The script's own headers and those of the `sbatch <<EOF` scripts it submits."""
    out, seen = [], set()
    for h in list(facts.headers) + [h for p in facts.paths for rec in p.commands for h in rec.headers]:
        key = (h.key, h.value, h.span)
        if key not in seen:
            seen.add(key)
            out.append(h)
    return out


def _gpu_type_hint(value: str, span: Span) -> GpuHint | None:
    """`--gpus-per-node=h100:8` is `[type:]count`, unlike `--gres=gpu[:type]:count`: the type
    is the first field. It is as strong a hint as a constraint, and scanned as one."""
    m = re.fullmatch(r"([^:,]+):(\d+)", value)
    if m is None:
        return None
    sub = span
    if span.start_line == span.end_line and span.end - span.start == len(value):
        sub = Span(span.path, span.start_line, span.start_col, span.end_line,
                   span.start_col + len(m.group(1)), span.start, span.start + len(m.group(1)))
    return GpuHint("sbatch-constraint", m.group(1), sub)


def gpu_hints(facts: ScriptFacts) -> list[GpuHint]:
    hints: list[GpuHint] = []
    kinds = {"--constraint": "sbatch-constraint", "--gres": "sbatch-gres", "--partition": "sbatch-partition"}
    for h in _all_headers(facts):
        if h.scheduler == "slurm" and h.key in kinds:
            hints.append(GpuHint(kinds[h.key], h.value, h.span))
        elif h.scheduler == "slurm" and h.key in _GPU_COUNT_KEYS:
            hint = _gpu_type_hint(h.value, h.span)
            if hint is not None:
                hints.append(hint)
        elif h.scheduler == "pbs":
            hints.append(GpuHint("pbs", h.value, h.span))
    src = facts.sources.get(facts.path)
    if src is not None:
        name = os.path.basename(facts.path)
        hints.append(GpuHint("path", name, None))
    for text, span in facts.comments:
        if text.startswith("#!") or text.startswith("#SBATCH") or text.startswith("#PBS"):
            continue
        hints.append(GpuHint("comment", text, span))
    return hints


def choose_gpu(facts: ScriptFacts, configured: str | None) -> tuple[GpuProfile | None, Detection | None, str | None]:
    """The GPU: named by the user, else detected from the script's hints, else unknown."""
    if configured:
        profile = find_gpu(configured)
        if profile is None:
            raise ValueError(f"unknown GPU `{configured}`")
        return profile, None, None
    det = detect_gpu(gpu_hints(facts))
    if det is None:
        return None, None, ("no GPU model is named in the script (#SBATCH --constraint/--gres, its name, "
                            "a comment), or its hints disagree; give one with --gpu NAME or `gpu` in the configuration")
    if det.ignored:
        # A weaker hint (a comment, the file name) names another GPU than the scheduler line: the
        # script contradicts itself, and hardware rules must not pick a side.
        others = ", ".join(sorted({pid for _, pid in det.ignored}))
        return None, None, (f"the script names {det.profile.id} ({det.reason.removeprefix('taken from ')}) "
                            f"but also {others}; give the GPU with --gpu NAME or `gpu` in the configuration")
    return det.profile, det, None


_ENV_LOADERS = {("module", "load"), ("module", "add"), ("module", "restore"), ("module", "swap"),
                ("ml", None), ("spack", "load"), ("conda", "activate")}


def environment_opaque(facts: ScriptFacts) -> str | None:
    """Why the environment a launch gets cannot be listed in full, or None when it can.

    A sourced file that was not read, or an environment module, may export anything: a rule
    that asks whether a variable is *absent* cannot be decided then."""
    for note in facts.notes:
        # The evaluator reports a `source` it could not follow only as a note.
        if "(a cycle)" not in note and ("its variables are not read" in note or "not followed" in note
                                        or "cannot read sourced file" in note):
            return note
    for path in facts.paths:
        for rec in path.commands:
            t = [w.text for w in rec.words[:2]]
            if t and ((t[0], t[1] if len(t) > 1 else None) in _ENV_LOADERS or (t[0], None) in _ENV_LOADERS):
                return (f"`{' '.join(x for x in t if x)}` at {rec.span.path}:{rec.span.start_line} may export "
                        "variables that are not known")
    return None


def _memory(bound: BoundArgs, world: int | None):
    from megalint.memory import DEFAULTS, InvalidConfig, estimate

    if world is None:
        return None, "the world size is not known"
    args = {}
    for dest in DEFAULTS:
        arg = bound.get(dest)
        if arg is None:
            continue
        if not arg.known:
            return None, f"--{dest.replace('_', '-')}: {arg.unknown.reason}"
        args[dest] = plain(arg.value)
    for dest in ("num_layers", "hidden_size", "num_attention_heads", "seq_length", "micro_batch_size",
                 "global_batch_size", "padded_vocab_size", "vocab_size", "make_vocab_size_divisible_by",
                 "max_position_embeddings", "tokenizer_type", "moe_router_topk", "num_experts"):
        arg = bound.get(dest)
        if arg is not None:
            if not arg.known:
                return None, f"--{dest.replace('_', '-')}: {arg.unknown.reason}"
            args[dest] = plain(arg.value)
    try:
        est = estimate(args, world)
    except InvalidConfig as exc:
        return None, f"the layout is invalid: {exc}"
    except (ValueError, TypeError, ZeroDivisionError, KeyError) as exc:
        return None, f"the estimate could not be made: {exc}"
    if not est.complete:
        return None, "the estimate needs " + ", ".join(est.missing)
    data = est.to_json()
    data["args"] = args
    return data, None


def lint_text(path: str, text: str, settings: Settings) -> FileResult:
    ps = parse_text(path, text)
    facts = analyze_parsed(ps, root_dir=settings.root_dir, assume=settings.assume,
                           follow_outside_root=settings.follow_source_outside_root)
    return lint_facts(facts, settings)


def lint_facts(facts: ScriptFacts, settings: Settings) -> FileResult:
    res = resolve(settings.megatron_version)
    version = res.version
    catalogue = _catalogue(version)
    profile, detection, gpu_reason = choose_gpu(facts, settings.gpu)
    launches = extract_launches(facts)
    env_opaque = environment_opaque(facts)
    shell_rules = RuleSet([r for r in settings.rules if r.category == SHELL_CATEGORY])
    launch_rules = RuleSet([r for r in settings.rules if r.category != SHELL_CATEGORY])
    targets: list[Target] = []
    results: list[LaunchResult] = []
    for launch in launches:
        bound = bind(launch.argv, catalogue)
        world = launch.world_size.value
        derived = derive(bound, world if world is not None else launch.world_size.unknown, version)
        memory, memory_unknown = _memory(bound, world) if settings.with_memory else (None, "not computed")
        ctx = build_context(launch, bound, derived, version, profile, gpu_reason, facts.findings,
                            memory, memory_unknown, env_opaque=env_opaque)
        locator = ScriptLocator(launch, bound, facts, detection, facts.findings)
        cond = " and ".join(launch.condition) if launch.condition else None
        targets.append(Target(ctx, locator, cond))
        results.append(LaunchResult(launch, bound, ctx, detection, profile))
    evaluation = evaluate(launch_rules, targets)
    if facts.findings and len(shell_rules):
        shell_eval = evaluate(shell_rules, [_script_target(facts, version)])
        evaluation.diagnostics = sorted(evaluation.diagnostics + shell_eval.diagnostics, key=lambda d: d.sort_key())
        evaluation.undecided += shell_eval.undecided
        evaluation.failures += shell_eval.failures
        for k, v in shell_eval.outcomes.items():
            evaluation.outcomes.setdefault(k, set()).update(v)
    return FileResult(facts.path, facts, results, evaluation, version, res.note, gpu_reason)


class _ScriptOnlyLocator(ScriptLocator):
    """For shell-level findings, which belong to the script and not to one launch."""

    def launch(self) -> Span:
        src = self.facts.sources[self.facts.path]
        return src.span(0, min(len(src.text), max(1, len(src.line_text(1)))))


def _script_target(facts: ScriptFacts, version: str) -> Target:
    ctx = {"shell": [], "megatron": version, "unknown": {}}
    for i, f in enumerate(facts.findings):
        ctx["shell"].append({"index": i, "kind": f.kind, "message": f.message,
                             **{k: plain(v) for k, v in f.data.items()}})
    dummy = Launch("none", (), None, (), {}, None, None, None, facts.findings[0].span)  # type: ignore[arg-type]
    from megalint.megatron.bind import BoundArgs as _BA

    empty = _BA(version, None, {}, [], [])  # type: ignore[arg-type]
    return Target(ctx, _ScriptOnlyLocator(dummy, empty, facts, None, facts.findings), None)


def severity_of(code: str, name: str, default: Severity, overrides: dict[str, str]) -> Severity:
    for key in (code, name):
        if key in overrides:
            return Severity(overrides[key])
    best = None
    for key, value in overrides.items():
        if code.startswith(key) and (best is None or len(key) > len(best[0])):
            best = (key, value)
    return Severity(best[1]) if best else default
