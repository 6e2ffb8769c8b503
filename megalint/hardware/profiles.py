"""GPU profiles (megalint/data/gpus.yaml) and telling which GPU a launch script runs on.

`find_gpu(name)` looks a name up the way people and tools write it: torch/nvidia-smi names
("NVIDIA H100 80GB HBM3"), scheduler tokens ("a100", "v100-32g", "nvidia_a100-sxm4-80gb"),
short names ("gh200", "b200"). A name that leaves the model open ("a100": 40 or 80 GB) gives a
family profile that holds only what its variants share; its memory is then unknown.

`weigh_hints(hints)` decides from the hints a script carries, each weighed by where it is
written. Weights, heaviest first:

1. what the job asks the scheduler for: `#SBATCH --constraint`, `--gres` type, `--gpus-per-node`
   type, `#PBS`, and the same options on an `srun`/`salloc`/`sbatch` command line: the job gets
   the GPU it requests, whatever the rest of the script says;
2. the Slurm partition (site-specific names, but chosen for the hardware);
3. what the author says the script is for: the file's name and the comments of its header (the
   comment block before the first command), and a variable's value ("value");
4. a comment further down, which often mentions another cluster in passing ("we used to run on
   A100") or was copied from elsewhere.

The heaviest weight that names a GPU decides, and lighter ones never override it (what they named
instead is kept in `Detection.ignored`). Within that weight, hints that name different GPUs make
the answer unknown (`Weighing.conflict`), as does one hint naming two ("a100|h100"). A hint naming
a family and another naming one of its variants agree, and the more specific one is taken.
Ascend NPUs (Atlas, 910B) are not GPUs and are never detected. `detect_gpu(hints)` is the
decision alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

from megalint import lazy_re, packaged
from megalint.errors import DataFormatError
from megalint.source import Span

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "Detection",
    "GpuHint",
    "GpuProfile",
    "HINT_KINDS",
    "PASSING",
    "Weighing",
    "detect_gpu",
    "find_gpu",
    "is_model_of",
    "load_profiles",
    "mentions",
    "weigh_hints",
]

_SOURCE_RANK = {"inferred": 0, "seen": 1, "measured": 2}


@dataclass(frozen=True)
class GpuProfile:
    """One GPU (or family) of the GPU table: what it supports and how much memory it has."""

    id: str
    name: str
    kind: str = "gpu"  # "gpu" or "family"
    vendor: str | None = None
    architecture: str | None = None
    compute_capability: tuple[int, int] | None = None
    gfx: str | None = None
    memory_bytes: int | None = None  # torch total_memory: what the allocator can use
    memory_source: str | None = None
    smi_memory_bytes: int | None = None
    nominal_memory_gb: float | None = None
    bf16: bool | None = None
    fp8: bool | None = None
    fp8_condition: str | None = None  # e.g. Ada needs CUDA >= 12.1; AMD uses FNUZ formats
    fp8_block_scaling: bool | None = None
    mxfp8: bool | None = None
    nvfp4: bool | None = None
    flash_attention: tuple[int, ...] | None = None
    nvlink_gb_s: float | None = None
    aliases: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()  # for a family: the ids of its GPU models
    memory_range: tuple[int, int] | None = None  # family: (min, max) of its variants' memory

    @property
    def is_family(self) -> bool:
        return self.kind == "family"

    @property
    def compute_capability_value(self) -> float | None:
        """8.9, 9.0, 10.3 ... for comparisons in rules."""
        if self.compute_capability is None:
            return None
        major, minor = self.compute_capability
        return float(f"{major}.{minor}")

    @property
    def compute_capability_text(self) -> str | None:
        if self.compute_capability is None:
            return None
        return f"{self.compute_capability[0]}.{self.compute_capability[1]}"

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "compute_capability":
                value = self.compute_capability_text
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value
        return out


class GpuHint(NamedTuple):
    kind: str  # one of HINT_KINDS
    text: str
    span: Span | None = None


HINT_KINDS = (
    "sbatch-constraint",
    "sbatch-gres",
    "pbs",
    "command-constraint",
    "command-gres",
    "sbatch-partition",
    "value",
    "path",
    "header-comment",
    "comment",
)
_SCHEDULER, _PARTITION, _AUTHOR, PASSING = 0, 1, 2, 3
_TIER = {
    "sbatch-constraint": _SCHEDULER,
    "sbatch-gres": _SCHEDULER,
    "pbs": _SCHEDULER,
    "command-constraint": _SCHEDULER,
    "command-gres": _SCHEDULER,
    "sbatch-partition": _PARTITION,
    "value": _AUTHOR,
    "path": _AUTHOR,
    "header-comment": _AUTHOR,
    "comment": PASSING,
}
# Why a hint of each weight outweighs the lighter ones, as `megalint explain` says it.
_WHY = {
    _SCHEDULER: "a scheduler request outweighs the file name and comments: the job gets the GPU it asks for",
    _PARTITION: "the Slurm partition outweighs the file name and comments: it is chosen for its hardware",
    _AUTHOR: (
        "the file name and the header comment say what the script is for, and outweigh a comment "
        "further down (often about another cluster); no scheduler line names a GPU"
    ),
    PASSING: "only a comment in the script's body names a GPU",
}


@dataclass(frozen=True)
class Detection:
    """The GPU a script's hints name, the hint that decided it and those set aside."""

    profile: GpuProfile
    span: Span | None  # the GPU's name inside the deciding hint (the whole hint if not exact)
    reason: str  # "taken from `#SBATCH --constraint=a100`"
    hint: GpuHint
    agreeing: tuple[GpuHint, ...] = ()  # other hints of the same tier naming the same GPU
    ignored: tuple[tuple[GpuHint, str], ...] = ()  # weaker hints naming another GPU (its id)
    weight: int = _SCHEDULER  # the deciding hint's weight: 0 is the heaviest, PASSING the lightest

    @property
    def why(self) -> str:
        """Why this hint won over the others."""
        return _WHY[self.weight]


@dataclass(frozen=True)
class Weighing:
    """The hints weighed: the GPU they decide, or the hints of the heaviest weight that disagree."""

    detection: Detection | None
    conflict: tuple[tuple[GpuHint, str], ...] = ()  # (hint, the GPU it names) when they disagree


# ------------------------------------------------------------------------------------------
# loading


class ProfileError(DataFormatError, ValueError):
    """A GPU profile file that does not follow its format."""


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _cc(value: object, where: str) -> tuple[int, int] | None:
    if value is None:
        return None
    m = re.fullmatch(r"(\d+)\.(\d+)", str(value))
    if not m:
        raise ProfileError(f"{where}: compute_capability must be 'major.minor', got {value!r}")
    return int(m.group(1)), int(m.group(2))


def _gpu_from_yaml(item: dict[str, Any], where: str) -> GpuProfile:
    known = {f.name for f in fields(GpuProfile)} | {"kind"}
    extra = set(item) - known
    if extra:
        raise ProfileError(f"{where}: unknown keys {sorted(extra)}")
    if not item.get("id") or not item.get("name"):
        raise ProfileError(f"{where}: 'id' and 'name' are required")
    fp8 = item.get("fp8")
    condition = None
    if fp8 == "ada":
        fp8, condition = True, "on Ada (sm_89) Transformer Engine needs CUDA >= 12.1 and cuBLASLt >= 12.1.3"
    elif fp8 == "fnuz":
        fp8, condition = True, "ROCm FNUZ formats (float8_e4m3fnuz / float8_e5m2fnuz)"
    fa = item.get("flash_attention")
    return GpuProfile(
        id=str(item["id"]),
        name=str(item["name"]),
        kind=item.get("kind", "gpu"),
        vendor=item.get("vendor"),
        architecture=item.get("architecture"),
        compute_capability=_cc(item.get("compute_capability"), where),
        gfx=item.get("gfx"),
        memory_bytes=item.get("memory_bytes"),
        memory_source=item.get("memory_source"),
        smi_memory_bytes=item.get("smi_memory_bytes"),
        nominal_memory_gb=item.get("nominal_memory_gb"),
        bf16=item.get("bf16"),
        fp8=fp8,
        fp8_condition=condition,
        fp8_block_scaling=item.get("fp8_block_scaling"),
        mxfp8=item.get("mxfp8"),
        nvfp4=item.get("nvfp4"),
        flash_attention=None if fa is None else tuple(fa),
        nvlink_gb_s=item.get("nvlink_gb_s"),
        aliases=tuple(str(a) for a in item.get("aliases") or ()),
        variants=tuple(item.get("variants") or ()),
    )


_SHARED = (
    "vendor",
    "architecture",
    "compute_capability",
    "gfx",
    "memory_bytes",
    "smi_memory_bytes",
    "nominal_memory_gb",
    "bf16",
    "fp8",
    "fp8_condition",
    "fp8_block_scaling",
    "mxfp8",
    "nvfp4",
    "flash_attention",
    "nvlink_gb_s",
)


def _complete_family(fam: GpuProfile, by_id: dict[str, GpuProfile]) -> GpuProfile:
    members = [by_id[v] for v in fam.variants]
    values: dict[str, Any] = {}  # Any: replace() checks each value against its own field
    for name in _SHARED:
        vals = {getattr(m, name) for m in members}
        values[name] = vals.pop() if len(vals) == 1 else None
    if values["memory_bytes"] is not None:
        values["memory_source"] = min((m.memory_source for m in members), key=lambda s: _SOURCE_RANK.get(s or "", -1))
    mems = [m.memory_bytes for m in members]
    known = [m for m in mems if m is not None]
    rng = (min(known), max(known)) if len(known) == len(mems) else None
    return replace(fam, memory_range=rng, **values)


@dataclass
class _Profiles:
    """The GPU table, indexed by every alias of each GPU."""

    by_id: dict[str, GpuProfile]
    index: dict[str, str] = field(default_factory=dict)  # normalised alias -> id
    # What `_scan` found in a text: the same comments and hints recur across a repository's
    # scripts (a banner of #'s in a third of them). Up to _SCANNED_KEPT texts.
    scanned: dict[str, tuple[_Mention, ...]] = field(default_factory=dict, repr=False, compare=False)

    def leaves(self, profile: GpuProfile) -> frozenset[str]:
        return frozenset(profile.variants) if profile.is_family else frozenset({profile.id})


def _build(items: Sequence[dict[str, Any]], origin: str) -> _Profiles:
    by_id: dict[str, GpuProfile] = {}
    for i, item in enumerate(items):
        p = _gpu_from_yaml(item, f"{origin}: gpus[{i}]")
        if p.id in by_id:
            raise ProfileError(f"{origin}: duplicate id {p.id}")
        by_id[p.id] = p
    for p in list(by_id.values()):
        if p.is_family:
            missing = [v for v in p.variants if v not in by_id or by_id[v].is_family]
            if missing or not p.variants:
                raise ProfileError(f"{origin}: family {p.id} has bad variants {missing}")
            by_id[p.id] = _complete_family(p, by_id)
    profiles = _Profiles(by_id)
    for p in by_id.values():
        for alias in (p.id, p.name, *p.aliases):
            key = _norm(alias)
            other = profiles.index.get(key)
            if other is not None and other != p.id:
                raise ProfileError(f"{origin}: {alias!r} names both {other} and {p.id}")
            profiles.index[key] = p.id
    return profiles


def _read_yaml(text: str) -> Any:
    from ruamel.yaml import YAML

    return YAML(typ="safe").load(text)


@cache
def _shipped() -> _Profiles:
    # gpus.json is generated from gpus.yaml (tools/gen_gpus_json.py; a test keeps them in step):
    # the standard library reads it without importing a YAML reader.
    text = packaged.files("megalint.data").joinpath("gpus.json").read_text(encoding="utf-8")
    return _build(json.loads(text)["gpus"], "megalint/data/gpus.yaml")


def load_profiles(path: str | Path | None = None) -> list[GpuProfile]:
    """The shipped profiles, or those of a user's file in the same format."""
    if path is None:
        return list(_shipped().by_id.values())
    from pathlib import Path  # a user's file, read as it always was

    text = Path(path).read_text(encoding="utf-8")
    data = _read_yaml(text)
    if not isinstance(data, dict) or not isinstance(data.get("gpus"), list):
        raise ProfileError(f"{path}: expected a mapping with a 'gpus' list")
    return list(_build(data["gpus"], str(path)).by_id.values())


def get_profile(profile_id: str) -> GpuProfile | None:
    return _shipped().by_id.get(profile_id)


def is_model_of(specific: GpuProfile, general: GpuProfile) -> bool:
    """Whether `specific` is `general` or one of its models (h100-sxm5-80gb of the H100 family)."""
    db = _shipped()
    return db.leaves(specific) <= db.leaves(general)


# ------------------------------------------------------------------------------------------
# names

_PREFIXES = ("nvidia-", "tesla-", "amd-instinct-", "amd-", "gpu-")
_COUNT = lazy_re.compile(r"^\d+x(?=[a-z])")  # "16xh20", "8xa100"
_MEM = lazy_re.compile(r"^(?:hbm)?(\d{2,3})g(?:b)?$|^gpu(\d{2,3})$")
_FORM = lazy_re.compile(r"^(sxm\d?|pcie|nvl)$")


@dataclass(frozen=True)
class _Mention:
    """A GPU named in a hint's text, with where."""

    profile: GpuProfile
    start: int  # character offsets in the hint text
    end: int


def _parts(text: str) -> list[tuple[str, int, int]]:
    out = []
    for m in re.finditer(r"[A-Za-z0-9]+", text):
        part, start = m.group(0).lower(), m.start()
        c = _COUNT.match(part)
        if c:
            part, start = part[c.end() :], start + c.end()
        out.append((part, start, m.end()))
    return out


def _qualifiers(parts: list[tuple[str, int, int]]) -> tuple[set[int], set[str]]:
    mem: set[int] = set()
    form: set[str] = set()
    for part, _, _ in parts:
        m = _MEM.match(part)
        if m:
            mem.add(int(m.group(1) or m.group(2)))
        f = _FORM.match(part)
        if f:
            form.add(re.sub(r"\d", "", f.group(1)))
    return mem, form


def _refine(profile: GpuProfile, mem: set[int], form: set[str], db: _Profiles) -> GpuProfile:
    """Narrow a family with memory sizes and form factors written next to it."""
    if not profile.is_family or not (mem or form):
        return profile
    leaves = [db.by_id[v] for v in profile.variants]
    if mem:
        kept = [
            p for p in leaves if p.nominal_memory_gb is not None and any(abs(p.nominal_memory_gb - m) <= 2 for m in mem)
        ]
        leaves = kept or leaves
    if form:
        kept = [p for p in leaves if any(f in _norm(" ".join((p.id, p.name, *p.aliases))) for f in form)]
        leaves = kept or leaves
    ids = frozenset(p.id for p in leaves)
    if len(ids) == 1:
        return db.by_id[next(iter(ids))]
    for cand in db.by_id.values():
        if cand.is_family and frozenset(cand.variants) == ids:
            return cand
    return profile


def _scan(text: str, db: _Profiles) -> list[_Mention]:
    found = db.scanned.get(text)
    if found is None:
        found = tuple(_scan_anew(text, db))
        if len(db.scanned) < _SCANNED_KEPT:
            db.scanned[text] = found
    return list(found)


_SCANNED_KEPT = 4096


def _scan_anew(text: str, db: _Profiles) -> list[_Mention]:
    parts = _parts(text)
    out: list[_Mention] = []
    i = 0
    while i < len(parts):
        found = None
        for j in range(min(len(parts), i + 6), i, -1):
            key = "-".join(p for p, _, _ in parts[i:j])
            if key in db.index:
                found = (db.by_id[db.index[key]], j)
                break
        if found is None:
            i += 1
            continue
        profile, j = found
        out.append(_Mention(profile, parts[i][1], parts[j - 1][2]))
        i = j
    if out:
        mem, form = _qualifiers(parts)
        out = [replace(m, profile=_refine(m.profile, mem, form, db)) for m in out]
    return out


def mentions(text: str) -> list[GpuProfile]:
    """The GPUs a free text names, in order (after narrowing families by memory/form)."""
    return [m.profile for m in _scan(text, _shipped())]


def find_gpu(name: str) -> GpuProfile | None:
    """The profile a GPU name means, or None when it names no known GPU or several."""
    db = _shipped()
    key = _norm(name)
    if not key:
        return None
    for cand in (key, *(key[len(p) :] for p in _PREFIXES if key.startswith(p))):
        if cand in db.index:
            return db.by_id[db.index[cand]]
    found = _scan(name, db)
    ids = {m.profile.id for m in found}
    if len(ids) == 1:
        return found[0].profile
    return None


# ------------------------------------------------------------------------------------------
# detection


def _hint_texts(hint: GpuHint) -> list[tuple[str, int]]:
    """The parts of a hint that can name a GPU, with their offsets in the hint text."""
    text = hint.text
    if hint.kind in ("sbatch-gres", "command-gres"):
        # gpu:a100:4, gpu:nvidia_a100-sxm4-80gb:8, gres/gpu:h100=8, several comma-separated
        out = []
        for m in re.finditer(r"[^,]+", text):
            fields_ = m.group(0).split(":")
            offset = m.start()
            for k, f in enumerate(fields_):
                if k > 0 and not re.fullmatch(r"\d+", f.strip()):
                    out.append((f, offset))
                offset += len(f) + 1
        return out
    return [(text, 0)]


def _sub_span(span: Span | None, text: str, start: int, end: int) -> Span | None:
    if span is None:
        return None
    if (
        span.start_line == span.end_line
        and span.end - span.start == len(text)
        and span.end_col - span.start_col == len(text)
    ):
        return Span(
            span.path,
            span.start_line,
            span.start_col + start,
            span.end_line,
            span.start_col + end,
            span.start + start,
            span.start + end,
        )
    return span


def _describe(hint: GpuHint) -> str:
    k, t = hint.kind, hint.text
    return {
        "sbatch-constraint": f"taken from `#SBATCH --constraint={t}`",
        "sbatch-gres": f"taken from `#SBATCH --gres={t}`",
        "command-constraint": f"taken from `--constraint={t}` on the Slurm command",
        "command-gres": f"taken from `--gres={t}` on the Slurm command",
        "sbatch-partition": f"taken from `#SBATCH --partition={t}`",
        "pbs": f"taken from `#PBS {t}`",
        "value": f"taken from the value `{t}`",
        "path": f"taken from the file name `{t}`",
        "header-comment": f"taken from the header comment `{t.strip()}`",
        "comment": f"taken from the comment `{t.strip()}`",
    }.get(k, f"taken from `{t}`")


def detect_gpu(hints: Iterable[GpuHint | tuple[str, str] | tuple[str, str, Span | None]]) -> Detection | None:
    """The GPU the hints name, by the weights above; None when none or when they conflict."""
    return weigh_hints(hints).detection


def weigh_hints(hints: Iterable[GpuHint | tuple[str, str] | tuple[str, str, Span | None]]) -> Weighing:
    """The hints weighed: the heaviest weight that names a GPU decides, unless its hints disagree."""
    db = _shipped()
    found: list[tuple[int, GpuHint, GpuProfile, Span | None]] = []
    for raw in hints:
        hint = raw if isinstance(raw, GpuHint) else GpuHint(*raw)
        if hint.kind not in _TIER:
            raise ValueError(f"unknown GPU hint kind {hint.kind!r}")
        for text, offset in _hint_texts(hint):
            for m in _scan(text, db):
                span = _sub_span(hint.span, hint.text, offset + m.start, offset + m.end)
                found.append((_TIER[hint.kind], hint, m.profile, span))
    if not found:
        return Weighing(None)
    best_tier = min(t for t, _, _, _ in found)
    chosen = [(h, p, s) for t, h, p, s in found if t == best_tier]
    conflict = tuple(dict.fromkeys((h, p.id) for h, p, _ in chosen))
    # The most specific profile all mentions agree with.
    leaf_sets = [db.leaves(p) for _, p, _ in chosen]
    common = frozenset.intersection(*leaf_sets)
    if not common:
        return Weighing(None, conflict)
    specific = min(chosen, key=lambda c: len(db.leaves(c[1])))
    if db.leaves(specific[1]) != common:
        # e.g. "a100-40gb" and "a100-sxm4-40gb" nest, but "a100-pcie" and "a100-80gb" overlap
        # only partly: take the family of the intersection when there is one.
        target = next((p for p in db.by_id.values() if db.leaves(p) == common), None)
        if target is None:
            return Weighing(None, conflict)
        specific = (specific[0], target, specific[2])
    hint, profile, span = specific
    agreeing = tuple(dict.fromkeys(h for h, _, _ in chosen if h is not hint))
    ignored = tuple(dict.fromkeys((h, p.id) for t, h, p, _ in found if t > best_tier and not (db.leaves(p) & common)))
    return Weighing(Detection(profile, span, _describe(hint), hint, agreeing, ignored, best_tier))
