"""From one launch to what rules read: the plain-dict Context and the Locator into the script.

Everything a rule may ask is computed here once per launch and path: the bound Megatron
arguments with defaults, the derived values, the environment, the launch quantities, the GPU,
the memory estimate, the binding problems and the shell findings. A value that is unknown is
left out and its reason recorded under `unknown`, so that a rule needing it is undecided.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from megalint.diagnostics import Edit
from megalint.hardware.profiles import Detection, GpuProfile
from megalint.launch.model import Launch, Quantity
from megalint.megatron.bind import BoundArgs, Problem, ProblemKind
from megalint.megatron.derived import Derived
from megalint.megatron.plain import plain
from megalint.megatron.releases import RENAMED, release_history
from megalint.shell.facts import ScriptFacts, ShellFinding
from megalint.shell.values import Unknown, Word
from megalint.source import SourceFile, Span


def _put(ctx: dict, root: str, key: str, value: Any, unknown: dict) -> None:
    v = plain(value)
    if isinstance(v, Unknown):
        unknown[f"{root}.{key}"] = v.reason
    else:
        ctx[root][key] = v


def _quantity(q: Quantity, key: str, ctx: dict, unknown: dict) -> None:
    if q.value is not None:
        ctx["launch"][key] = q.value
    else:
        unknown[f"launch.{key}"] = q.unknown.reason if q.unknown else f"{q.how} is not known"


def gpu_context(profile: GpuProfile | None, reason: str | None) -> tuple[dict, dict]:
    gpu: dict[str, Any] = {}
    unknown: dict[str, str] = {}
    if profile is None:
        unknown["gpu"] = reason or "no GPU model is known: give --gpu NAME or `gpu` in the configuration"
        return gpu, unknown
    gpu["name"] = profile.name
    for key, value in (
        ("compute_capability", profile.compute_capability_value),
        ("memory_bytes", profile.memory_bytes),
        ("bf16", profile.bf16),
        ("fp8", profile.fp8),
        ("fp4", profile.nvfp4),
        ("arch", profile.architecture),
    ):
        if value is None:
            unknown[f"gpu.{key}"] = f"{profile.name}: {key.replace('_', ' ')} is not known for this model"
        else:
            gpu[key] = value
    return gpu, unknown


def build_context(
    launch: Launch,
    bound: BoundArgs,
    derived: dict[str, Derived],
    version: str,
    gpu: GpuProfile | None,
    gpu_reason: str | None,
    findings: list[ShellFinding],
    memory: dict | None,
    memory_unknown: str | None,
    env_opaque: str | None = None,
) -> dict:
    unknown: dict[str, str] = {}
    ctx: dict[str, Any] = {
        "args": {},
        "given": {},
        "derived": {},
        "env": {},
        "env_set": [],
        "launch": {},
        "megatron": version,
        "problems": [],
        "shell": [],
        "unknown": unknown,
    }
    for dest, arg in bound.args.items():
        _put(ctx, "args", dest, arg.value, unknown)
        if arg.given:
            ctx["given"][dest] = True
    for name, d in derived.items():
        _put(ctx, "derived", name, d.value, unknown)
    for name, word in launch.env.items():
        ctx["env_set"].append(name)
        if word.text is not None:
            ctx["env"][name] = word.text
        else:
            unknown[f"env.{name}"] = word.unknown.reason if word.unknown else "unknown"
    ctx["env_set"].sort()
    if env_opaque is not None:
        # The names set are only those megalint read; whether one is absent is unknown.
        del ctx["env_set"]
        unknown["env_set"] = env_opaque
    ctx["launch"]["launcher"] = launch.launcher
    if launch.entry is not None and launch.entry.text is not None:
        ctx["launch"]["entry"] = launch.entry.text
    _quantity(launch.nproc_per_node, "nproc_per_node", ctx, unknown)
    _quantity(launch.nnodes, "nnodes", ctx, unknown)
    _quantity(launch.world_size, "world_size", ctx, unknown)
    if launch.nnodes.value is not None:
        ctx["launch"]["multi_node"] = launch.nnodes.value > 1
    else:
        unknown["launch.multi_node"] = unknown.get("launch.nnodes", "the node count is not known")
    g, gu = gpu_context(gpu, gpu_reason)
    ctx["gpu"] = g
    unknown.update(gu)
    if memory is not None:
        ctx["memory"] = memory
    else:
        unknown["memory"] = memory_unknown or "the memory estimate needs values that are not known"
    for i, p in enumerate(bound.problems):
        ctx["problems"].append(_problem(i, p, bound, version))
    for i, f in enumerate(findings):
        ctx["shell"].append(
            {"index": i, "kind": f.kind, "message": f.message, **{k: plain(v) for k, v in f.data.items()}}
        )
    if bound.passthrough:
        unknown["args"] = "; ".join(sorted({p.reason for p in bound.passthrough}))
    return ctx


def _encloses(outer: Span, inner: Span) -> bool:
    return (
        outer.path == inner.path
        and outer.start <= inner.start
        and inner.end <= outer.end
        and (outer.start, outer.end) != (inner.start, inner.end)
    )


def _problem(i: int, p: Problem, bound: BoundArgs, version: str) -> dict[str, Any]:
    """One binding problem as rules read it. Keys that only some problems have are left out
    when they do not apply, so that a rule (or a fix) reading them is undecided there:
    `best` (the suggestion to apply: the hyphenated spelling of the flag, or the only one), `choices` (of an invalid choice),
    `earlier` (line:column of the occurrences a repeated flag overrides), `added_in` /
    `removed_in` / `last_in` (the release that added or removed a flag of another version)."""
    out: dict[str, Any] = {
        "index": i,
        "kind": p.kind.value,
        "message": p.message,
        "flag": p.option,
        "dest": p.dest,
        "suggestions": list(p.suggestions),
        "value": p.value,
        "fatal": p.fatal,
        "history": p.history.describe(version) if p.history is not None else None,
    }
    if p.suggestions and p.option is not None:
        # The hyphenated spelling of an underscore or capitalised flag is the one meant; other
        # close spellings are guesses, offered as a fix only when there is a single one.
        norm = "--" + p.option.split("=", 1)[0].lstrip("-").replace("_", "-").lower()
        if p.suggestions[0] == norm or len(p.suggestions) == 1:
            out["best"] = p.suggestions[0]
    if p.kind is ProblemKind.INVALID_CHOICE and p.option is not None and bound.catalogue is not None:
        spec = bound.catalogue.lookup(p.option)
        if spec is not None and spec.choices is not None:
            out["choices"] = [str(plain(c)) for c in spec.choices]
    if p.related:
        out["earlier"] = [f"{s.start_line}:{s.start_col}" for s in p.related]
    if p.kind is ProblemKind.OTHER_VERSION and p.option is not None:
        out.update(release_history(p.option, version))
    if p.option is not None and p.kind in (ProblemKind.OTHER_VERSION, ProblemKind.UNKNOWN_FLAG):
        renamed = RENAMED.get(p.option)
        if renamed is not None:
            out["renamed_to"], out["renamed_how"] = renamed[0], renamed[1]
            if renamed[2] is not None:
                out["renamed_in"] = renamed[2]
        elif bound.catalogue is not None:
            # A newer spelling used on an older Megatron that still has the old one.
            for old, (new, _how, _when) in RENAMED.items():
                if new == p.option and bound.catalogue.lookup(old) is not None:
                    out["older_name"] = old
                    break
    return out


def _exact(word: Word, sources: dict[str, SourceFile]) -> bool:
    """Whether the word is written literally where its span says (so it can be edited there)."""
    sp = word.span
    if sp is None or word.text is None or sp.path not in sources:
        return False
    return sources[sp.path].text[sp.start : sp.end] == word.text


@dataclass
class ScriptLocator:
    """The engine's Locator for one launch: every place and edit, from the launch model."""

    launch_: Launch
    bound: BoundArgs
    facts: ScriptFacts
    detection: Detection | None
    findings: list[ShellFinding]

    # -- places
    def launch(self) -> Span:
        return self.launch_.span

    def entry(self) -> Span | None:
        return self.launch_.entry.span if self.launch_.entry is not None else None

    def flag(self, dest: str) -> Span | None:
        arg = self.bound.get(dest)
        return arg.flag_span if arg is not None else None

    def value(self, dest: str) -> Span | None:
        arg = self.bound.get(dest)
        if arg is None or arg.last is None:
            return None
        return arg.value_span or arg.flag_span

    def origins(self, dest: str) -> list[Span]:
        arg = self.bound.get(dest)
        if arg is None or arg.last is None:
            return []
        out: list[Span] = []
        for w in arg.value_words:
            for s in w.origins:
                if s not in out:
                    out.append(s)
        # `TP=${TP:-4}` gives the expansion and its default literal inside it: one place.
        return [s for s in out if not any(o is not s and _encloses(o, s) for o in out)]

    def launcher(self, key: str) -> Span | None:
        q = {
            "nproc_per_node": self.launch_.nproc_per_node,
            "nnodes": self.launch_.nnodes,
            "world_size": self.launch_.world_size,
        }.get(key)
        if q is not None:
            return q.span
        for w in self.launch_.launcher_words:
            if w.text is not None and (w.text == key or w.text.startswith(key + "=")):
                return w.span
        return None

    def env(self, name: str) -> Span | None:
        w = self.launch_.env.get(name)
        return w.span if w is not None else None

    def gpu(self) -> Span | None:
        return self.detection.span if self.detection is not None else None

    def last_export(self) -> Span | None:
        anchor = self.launch_.span
        src = self.facts.sources.get(anchor.path)
        if src is None:
            return None
        best = None
        for m in re.finditer(r"(?m)^[ \t]*export[ \t]+[^\n]*$", src.text):
            if m.start() >= anchor.start:
                break
            if src.text[m.start() : m.end()].rstrip().endswith("\\"):
                continue
            best = src.span(m.start(), m.end())
        return best

    def item(self, obj: dict[str, Any]) -> Span | None:
        idx = obj.get("index")
        if not isinstance(idx, int):
            return None
        if "fatal" in obj:  # a binding problem
            if 0 <= idx < len(self.bound.problems):
                return self.bound.problems[idx].span
            return None
        if 0 <= idx < len(self.findings):
            return self.findings[idx].span
        return None

    # -- edits
    def _occurrence_span(self, occ) -> Span | None:
        words = [occ.flag] + list(occ.values)
        sources = self.facts.sources
        if not all(_exact(w, sources) for w in words if w is not occ.flag) or occ.flag.span is None:
            return None
        if not _exact(occ.flag, sources):
            return None
        first, last = words[0].span, (words[-1].span or words[0].span)
        if first.path != last.path or last.end < first.start:
            return None
        src = sources[first.path]
        end = last.end
        # A quoted value word's span is its content; the quotes around it belong to the edit,
        # or removing the flag would leave a lone closing quote behind.
        if len(words) > 1 and 0 < last.start and end < len(src.text):
            q = src.text[last.start - 1]
            if q in "\"'" and src.text[end] == q:
                end += 1
        between = src.text[first.start : end]
        if "\n" in between and not re.search(r"\\\n", between):
            return None
        return src.span(first.start, end)

    def replace_flag(self, dest: str, text: str) -> list[Edit] | None:
        arg = self.bound.get(dest)
        if arg is None or not arg.occurrences:
            return None
        edits = []
        for occ in arg.occurrences[:-1]:
            e = self._removal(occ)
            if e is None:
                return None
            edits.append(e)
        span = self._occurrence_span(arg.occurrences[-1])
        if span is None:
            return None
        edits.append(Edit(span, text))
        return edits

    def _removal(self, occ) -> Edit | None:
        span = self._occurrence_span(occ)
        if span is None:
            return None
        src = self.facts.sources[span.path]
        start = span.start
        while start > 0 and src.text[start - 1] in " \t":
            start -= 1
        return Edit(src.span(start, span.end), "")

    def remove_flag(self, dest: str) -> list[Edit] | None:
        arg = self.bound.get(dest)
        if arg is None or not arg.occurrences:
            return None
        edits = []
        for occ in arg.occurrences:
            e = self._removal(occ)
            if e is None:
                return None
            edits.append(e)
        return edits

    def replace_value(self, dest: str, text: str) -> list[Edit] | None:
        arg = self.bound.get(dest)
        if arg is None or arg.last is None or len(arg.value_words) != 1:
            return None
        word = arg.value_words[0]
        if _exact(word, self.facts.sources):
            return [Edit(word.span, text)]
        origins = word.origins
        if origins:
            lit = origins[-1]
            src = self.facts.sources.get(lit.path)
            if src is not None and src.text[lit.start : lit.end] == word.text:
                return [Edit(lit, text)]
        return None

    def add_flag(self, text: str) -> list[Edit] | None:
        words = [w for w in self.launch_.argv if w.splat is None]
        target = words[-1] if words else self.launch_.entry
        if target is None or target.span is None or not _exact(target, self.facts.sources):
            return None
        sp = target.span
        src = self.facts.sources[sp.path]
        return [Edit(src.span(sp.end, sp.end), " " + text)]

    def insert_export(self, name: str, value: str) -> list[Edit] | None:
        anchor = self.last_export()
        src = self.facts.sources.get(self.launch_.span.path)
        if src is None:
            return None
        if anchor is not None:
            indent = re.match(r"[ \t]*", src.line_text(anchor.start_line)).group(0)
            return [Edit(src.span(anchor.end, anchor.end), f"\n{indent}export {name}={value}")]
        # Before the first line of the launch command.
        line_start = self.launch_.span.start - (self.launch_.span.start_col - 1)
        if src.text[line_start : self.launch_.span.start].strip():
            return None
        return [Edit(src.span(line_start, line_start), f"export {name}={value}\n")]

    def replace_item(self, obj: dict[str, Any], text: str) -> list[Edit] | None:
        span = self.item(obj)
        if span is None:
            return None
        src = self.facts.sources.get(span.path)
        if src is None:
            return None
        return [Edit(span, text)]
