"""`megalint --version`: imports nothing but the version table, so that it answers at once."""

from __future__ import annotations

from megalint import __version__


def version_text() -> str:
    from megalint.megatron.known_versions import KNOWN_VERSIONS

    return f"megalint {__version__} (Megatron-LM versions: {', '.join(KNOWN_VERSIONS)})"
