"""The assumptions a finding rests on, and how a finding that rests on one is reported.

A context's `assumed` maps the paths whose values rest on an assumption to its texts
(rulecontext/assumptions.py): a default of an input (`${NNODES:-2}`), or that the modules a script
loads set no tuning variable (`env_set`). A finding rests on an assumption when its rule would not
fire without it: the condition is decided again with the assumed values unknown (for the module
assumption, with each tuning variable the rule names set to an unknown value); a result other
than true means the finding needs the assumption. Such a finding says so in its message and is
reported one severity lower than one whose inputs the script fixes.

For a default of the node count or of the processes per node, the condition is also decided for
other values of it (the target's `vary`): a failure at every value does not rest on the default,
and one that goes away for multiples of some number says so ("needs NNODES to be a multiple of 4").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from megalint import lazy_re
from megalint.diagnostics import Severity
from megalint.engine.context import has_path
from megalint.engine.expressions import Env, EvalFailure, Expr, NeedInputs, Needs
from megalint.shell.values import default_name, is_default_assumption

ASSUMED = "assumed"
ENV_SET = "env_set"
# The variables the module assumption covers: those Megatron, NCCL, CUDA and Transformer Engine read.
_TUNING = lazy_re.compile(r"(CUDA_|NCCL_|NVTE_|TORCH_|PYTORCH_|NVSHMEM_|UB_|MEGATRON_|CUBLAS|CUDNN_)[A-Z0-9_]*[A-Z0-9]")
_QUOTED_NAME = lazy_re.compile(r"""['"]([A-Z][A-Z0-9_]*)['"]""")
# The values tried for a quantity the launch takes from a default: nodes, processes per node.
VARIED = {"launch.nnodes": ("nnodes", range(1, 129)), "launch.nproc_per_node": ("nproc_per_node", range(1, 17))}

# key of a launch quantity, value -> the context with that value (None when it cannot be varied)
Vary = Callable[[str, int], Mapping[str, Any] | None]


@dataclass(frozen=True)
class Resting:
    """What a finding rests on: the assumptions' texts, and which values of a varied input work."""

    texts: tuple[str, ...]
    works: str | None = None  # the values of a varied input that work, in words
    fallback: str | None = None  # why the finding is not reported: it rests on a fallback, not a choice


def lower(severity: Severity) -> Severity:
    return Severity.INFO if severity is not Severity.ERROR else Severity.WARNING


def phrase(resting: Resting) -> str:
    """`with the default NNODES=2; the environment may set it`, and the module assumptions."""
    defaults = [t for t in resting.texts if is_default_assumption(t)]
    parts: list[str] = []
    if defaults:
        values = [t.removeprefix("the default ").split(";", 1)[0] for t in defaults]
        who = "the caller" if all("the caller" in t for t in defaults) else "the environment"
        if len(values) == 1:
            parts.append(f"with the default {values[0]}; {who} may set it")
        else:
            parts.append(f"with the defaults {', '.join(values[:-1])} and {values[-1]}; {who} may set them")
        if resting.works:
            parts[-1] += f": it works when {resting.works}"
    parts.extend(t for t in resting.texts if not is_default_assumption(t))
    return "; ".join(parts)


def _overlaps(path: str, ref: str) -> bool:
    return path == ref or path.startswith(ref + ".") or ref.startswith(path + ".")


def _without(ctx: Mapping[str, Any], paths: list[str], names: list[str]) -> dict[str, Any]:
    """`ctx` with the values at `paths` unknown; `env_set` gains the tuning variables `names`."""
    out = dict(ctx)
    for path in paths:
        parts = path.split(".")
        if parts == [ENV_SET]:
            listed = out.get(ENV_SET)
            if isinstance(listed, list):
                out[ENV_SET] = sorted(set(listed) | set(names))
            continue
        node: dict[str, Any] = out
        for i, part in enumerate(parts):
            if part not in node:
                break
            if i == len(parts) - 1:
                del node[part]
            else:
                child = node[part]
                if not isinstance(child, Mapping):
                    break
                node[part] = node = dict(child)
    return out


class Assumptions:
    """Decides, for a fired rule, the assumptions its finding rests on."""

    def __init__(
        self, ctx: Mapping[str, Any], needs: Needs | None, when: Expr, requires: tuple[str, ...], vary: Vary | None
    ):
        self.ctx, self.needs, self.when, self.requires, self.vary = ctx, needs, when, requires, vary

    def fires(self, ctx: Mapping[str, Any], bound: tuple[str, Any] | None) -> bool:
        if any(not has_path(ctx, p) for p in self.requires):
            return False
        env = Env(ctx, self.needs)
        if bound is not None:
            env.bind(*bound)
        try:
            return self.when.run(env) is True
        except (NeedInputs, EvalFailure):
            return False

    def resting(self, bound: tuple[str, Any] | None) -> Resting:
        assumed = self.ctx.get(ASSUMED)
        if not isinstance(assumed, Mapping) or not assumed:
            return Resting(())
        refs = [r.path for r in self.when.refs] + list(self.requires)
        by_text: dict[str, list[str]] = {}
        for path, texts in assumed.items():
            if any(_overlaps(path, r) for r in refs):
                for t in texts:
                    by_text.setdefault(t, []).append(path)
        if not by_text:
            return Resting(())
        names = sorted({m for m in _QUOTED_NAME.findall(self.when.source) if _TUNING.fullmatch(m)})
        texts = tuple(t for t, paths in by_text.items() if not self.fires(_without(self.ctx, paths, names), bound))
        if self.vary is None:
            return Resting(texts)
        words = None
        # The node count first: what a job changes when it is moved to a bigger allocation.
        nodes = assumed.get("launch.nnodes", ())
        for text in sorted((t for t in texts if is_default_assumption(t)), key=lambda t: t not in nodes):
            # A job that falls back to one node needs only to know that some count works: the
            # counts are tried up to the first that does, not all 128 (a context each).
            fallback = text in nodes and self.ctx.get("launch", {}).get("nnodes") == 1
            works = self._works(text, assumed, bound, first_only=fallback)
            if works is None:
                continue
            if not works:  # it fails whatever the environment sets: the default is not what it rests on
                texts = tuple(t for t in texts if t != text)
                continue
            name = default_name(text)
            if fallback:
                # One node is where a multi-node script falls back when it is run by hand; the
                # job's own node count comes from its environment, and some count works.
                return Resting(
                    texts,
                    fallback=f"the default {name}=1 is the fallback of a job whose environment sets the node count",
                )
            step = works[0]
            if words is None and step > 1 and len(works) > 1 and works == list(range(step, works[-1] + 1, step)):
                words = f"{name} is a multiple of {step}"
        return Resting(texts, words)

    def _works(
        self, text: str, assumed: Mapping[str, Any], bound: tuple[str, Any] | None, first_only: bool = False
    ) -> list[int] | None:
        """For a default that is a launch quantity, the values of it with which the rule does not
        fire (with `first_only`, the first of them); None when it is not one (or the launch's world
        size is not the product of two, whatever the value)."""
        assert self.vary is not None
        keys = [k for k in VARIED if text in assumed.get(k, ())]
        if len(keys) != 1:
            return None
        key, values = VARIED[keys[0]]
        works = []
        for value in values:
            ctx = self.vary(key, value)
            if ctx is None:
                return None
            if not self.fires(ctx, bound):
                works.append(value)
                if first_only:
                    break
        return works
