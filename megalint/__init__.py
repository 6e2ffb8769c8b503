"""megalint: a static linter for Megatron-LM launch scripts."""

__version__ = "0.1.0"
