"""The Megatron-LM versions whose flag catalogues megalint ships: apart from the version grammar
(versions.py), so that `megalint --version` names them without importing it."""

HEAD = "HEAD"

# Newest first. HEAD is NVIDIA/Megatron-LM main at d98e8a64.
KNOWN_VERSIONS: tuple[str, ...] = ("HEAD", "0.19", "0.15", "0.12", "0.8")
