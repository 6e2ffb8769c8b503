"""megalint: a static linter for Megatron-LM launch scripts."""

__version__ = "0.1.0"
REPOSITORY_URL = "https://github.com/megalint/megalint"  # rule docs and reports link here
