"""The catalogue a job is bound against, for the Megatron version the user gives."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING

from megalint import packaged
from megalint.megatron.versions import HEAD, KNOWN_VERSIONS, VersionError, parse_version, resolve, version_key

if TYPE_CHECKING:
    from importlib.abc import Traversable

    from megalint.megatron.catalogue import Catalogue


@lru_cache(maxsize=8)
def _catalogue(version: str) -> Catalogue:
    # Imported here: choosing the version (`version_for`) needs no catalogue, and a script
    # without a launch asks nothing else.
    from megalint.megatron.catalogue import Catalogue

    return Catalogue.load(version)


@lru_cache(maxsize=16)
def catalogue_for(text: str | None) -> tuple[Catalogue, str, str | None]:
    """(catalogue, version the rules see, note) for the user's version text.

    The curated catalogues (HEAD, 0.19, 0.15, 0.12, 0.8) carry flag history and corrections;
    for any other release the catalogue extracted from that release's own source is exact, so
    a 0.17 job is bound against 0.17's flags and decided by rules as 0.17, not as 0.15.
    """
    extracted, version, note = _choice(text)
    if extracted is None:
        return _catalogue(version), version, note
    from megalint.megatron.catalogue import Catalogue

    with packaged.as_file(extracted) as path:
        return with_deprecations(Catalogue.from_file(path, shipped=True), version), version, note


def with_deprecations(extracted: Catalogue, version: str) -> Catalogue:
    """An extracted catalogue with the deprecation notes it cannot hold (a release's parser does
    not say that a flag is ignored): a flag, or a value, that the curated catalogues on both sides
    of the release call deprecated is deprecated in it too, with the older note. Where only one
    side says so, the release is left alone: when it changed is not known."""
    key = version_key(version)
    numbered = sorted(KNOWN_VERSIONS, key=version_key)
    below = [v for v in numbered if version_key(v) <= key]
    above = [v for v in numbered if version_key(v) > key]
    if not below or not above:
        return extracted
    older, newer = _catalogue(below[-1]), _catalogue(above[0])
    flags = []
    changed = False
    for spec in extracted.flags:
        notes = [(older.lookup(o), newer.lookup(o)) for o in spec.option_strings]
        deprecated = spec.deprecated
        if deprecated is None:
            deprecated = next((a.deprecated for a, b in notes if a and b and a.deprecated and b.deprecated), None)
        values = dict(spec.deprecated_choices)
        for a, b in notes:
            if a is None or b is None:
                continue
            later = dict(b.deprecated_choices)
            for value, why in a.deprecated_choices:
                if value in later and value not in values and spec.choices and value in spec.choices:
                    values[value] = why
        if deprecated != spec.deprecated or len(values) != len(spec.deprecated_choices):
            spec = replace(spec, deprecated=deprecated, deprecated_choices=tuple(values.items()))
            changed = True
        flags.append(spec)
    if not changed:
        return extracted
    return type(extracted)(
        extracted.version, tuple(flags), extracted.generated_from, extracted.origin, extracted.megatron_ref
    )


def version_for(text: str | None) -> tuple[str, str | None]:
    """(version the rules see, note) for the user's version text, as `catalogue_for` gives them,
    without loading a catalogue (a script without a launch needs none)."""
    _extracted, version, note = _choice(text)
    return version, note


@lru_cache(maxsize=16)
def _choice(text: str | None) -> tuple[Traversable | None, str, str | None]:
    """The extracted catalogue to load (None: the curated one of the version), the version and the note."""
    res = resolve(text)
    if res.note is None or text is None:
        return None, res.version, res.note
    try:
        major, minor, patch = parse_version(text)
    except (VersionError, ValueError):
        return None, res.version, res.note
    best: tuple[int, Traversable] | None = None
    for (ma, mi, pa), entry in _extracted().items():
        if (ma, mi) == (major, minor) and pa <= patch and (best is None or pa > best[0]):
            best = (pa, entry)
    if best is None:
        return None, res.version, res.note
    return best[1], f"{major}.{minor}", None


def release_catalogue(version: str) -> Catalogue:
    """The shipped catalogue of one release: the one extracted from its source for a full release
    number ("0.12.1"), else the curated one ("0.15", "HEAD")."""
    if re.fullmatch(r"\d+\.\d+\.\d+", version):
        entry = packaged.files("megalint.data").joinpath("catalogue-extracted").joinpath(f"{version}.json")
        if entry.is_file():
            from megalint.megatron.catalogue import Catalogue

            with packaged.as_file(entry) as path:
                return Catalogue.from_file(path, shipped=True)
    return _catalogue(version)


@lru_cache(maxsize=1)
def _extracted() -> dict[tuple[int, int, int], Traversable]:
    """The catalogues extracted from each release's source, by release number."""
    folder = packaged.files("megalint.data").joinpath("catalogue-extracted")
    found = {}
    for entry in folder.iterdir():
        if m := re.fullmatch(r"(\d+)\.(\d+)\.(\d+)\.json", entry.name):
            found[int(m[1]), int(m[2]), int(m[3])] = entry
    return found


def releases_known() -> list[str]:
    """Every release megalint has a catalogue of, oldest first: the curated ones and those
    extracted from each release's source ("0.4.0" … "0.19.0")."""
    found = {"{}.{}.{}".format(*key) for key in _extracted()}
    found |= {"{}.{}.{}".format(*version_key(v)) for v in KNOWN_VERSIONS if v != HEAD}
    return sorted(found, key=version_key)


def unknown_version(text: str) -> str | None:
    """Why megalint cannot check a job on Megatron-LM `text` (a version older than every release
    it knows, where no catalogue is near), or None when it can, maybe with a note."""
    try:
        key = parse_version(text)
    except (VersionError, ValueError):
        return None  # not a version at all: the caller says so
    oldest = releases_known()[0]
    if key >= version_key(oldest):
        return None
    return (
        f"megalint knows no Megatron-LM `{text.strip()}`: the oldest release it knows is {oldest} "
        f"(known: {', '.join(KNOWN_VERSIONS)}, and the releases {oldest} to {releases_known()[-1]})"
    )
