"""How Megatron-LM's flags changed across its releases: the release that added or removed a
flag, and the flags renamed or replaced.

The shipped catalogues sample five versions; the catalogues extracted from every release
(megalint/data/catalogue-extracted) tell the release a flag came or went.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from megalint import packaged
from megalint.megatron.versions import version_key

# Flags Megatron-LM renamed or replaced: old spelling -> (successor, "renamed" | "replaced",
# the first release without the old spelling, None when that predates core_v0.4.0). The
# releases come from the extracted catalogues (megalint/data/catalogue-extracted); the
# pre-0.4 renames from megatron/arguments.py history (NVIDIA/Megatron-LM#394).
RENAMED: dict[str, tuple[str, str, str | None]] = {
    "--local_rank": ("--local-rank", "renamed", "0.9"),
    "--use-custom-fsdp": ("--use-megatron-fsdp", "renamed", "0.14"),
    "--disable-ckpt-fully-parallel-save": ("--no-ckpt-fully-parallel-save", "renamed", "0.17"),
    "--hybrid-attention-ratio": ("--hybrid-layer-pattern", "replaced", "0.17"),
    "--hybrid-mlp-ratio": ("--hybrid-layer-pattern", "replaced", "0.17"),
    "--moe-extended-tp": ("--expert-tensor-parallel-size", "replaced", "0.17"),
    "--activations-checkpoint-method": ("--recompute-method", "renamed", None),
    "--activations-checkpoint-num-layers": ("--recompute-num-layers", "renamed", None),
    "--distribute-checkpointed-activations": ("--distribute-saved-activations", "renamed", None),
    "--checkpoint-num-layers": ("--recompute-num-layers", "renamed", None),
}


@cache
def _release_files() -> list[tuple[str, dict[str, Any]]]:
    """(release, catalogue data) of every extracted Megatron-LM release file ("0.12" for each
    0.12.x, "HEAD" for main); read once for the histories below."""
    found = []
    folder = packaged.files("megalint.data").joinpath("catalogue-extracted")
    for entry in folder.iterdir():
        name = entry.name
        if not name.endswith(".json"):
            continue
        stem = name[:-5]
        release = "HEAD" if stem.startswith("main") else ".".join(stem.split(".")[:2])
        found.append((release, json.loads(entry.read_text(encoding="utf-8"))))
    return found


@cache
def _release_catalogues() -> list[tuple[str, frozenset[str]]]:
    """(release, option strings) of every extracted Megatron-LM release, oldest first. The
    shipped catalogues sample five versions; these tell the release a flag came or went."""
    merged: dict[str, frozenset[str]] = {}
    for release, data in _release_files():  # patch releases of one minor: a flag in any of them counts
        opts = frozenset(o for f in data.get("flags", ()) for o in f.get("option_strings", ()))
        merged[release] = merged.get(release, frozenset()) | opts
    return sorted(merged.items(), key=lambda kv: version_key(kv[0]))


def release_history(option: str, version: str) -> dict[str, str]:
    """`added_in` (first release defining `option`, when it is newer than `version`) or
    `removed_in` (first release after `version`'s side without it) and `last_in`."""
    releases = _release_catalogues()
    present = [r for r, opts in releases if option in opts]
    if not present:
        return {}
    key = version_key(version)
    out: dict[str, str] = {}
    newer = [r for r in present if version_key(r) > key]
    older = [r for r in present if version_key(r) <= key]
    if newer and not older:
        out["added_in"] = newer[0]
    elif older:
        last = older[-1]
        out["last_in"] = last
        after = [r for r, _ in releases if version_key(r) > version_key(last)]
        if after:
            out["removed_in"] = after[0]
    return out


@cache
def _release_choices() -> list[tuple[str, dict[str, frozenset[str]]]]:
    """(release, option string -> its choices as text) of every extracted release, oldest first;
    patch releases of one minor merged, as in `_release_catalogues`."""
    merged: dict[str, dict[str, frozenset[str]]] = {}
    for release, data in _release_files():
        choices = merged.setdefault(release, {})
        for f in data.get("flags", ()):
            if f.get("choices") is None:
                continue
            texts = frozenset(str(c) for c in f["choices"])
            for o in f.get("option_strings", ()):
                choices[o] = choices.get(o, frozenset()) | texts
    return sorted(merged.items(), key=lambda kv: version_key(kv[0]))


def choice_history(option: str, value: str, version: str) -> dict[str, str]:
    """For a value `option` does not accept at `version`: `choice_added_in` (the first later
    release that accepts it, when no earlier one did), or `choice_last_in` and `choice_removed_in`
    (the last release up to `version` that accepted it, and the next one)."""
    releases = [(r, c[option]) for r, c in _release_choices() if option in c]
    accepting = [r for r, choices in releases if value in choices]
    if not accepting:
        return {}
    key = version_key(version)
    older = [r for r in accepting if version_key(r) <= key]
    if not older:
        return {"choice_added_in": accepting[0]}
    last = older[-1]
    after = [r for r, _ in releases if version_key(r) > version_key(last)]
    return {"choice_last_in": last, "choice_removed_in": after[0]} if after else {}
