"""The severities a finding has and the thresholds a run fails at, by name: what the configuration
checks and the command line offers. Apart from both, so that `megalint --help` names them without
loading the configuration."""

from __future__ import annotations

SEVERITIES = ("error", "warning", "info")
THRESHOLDS = SEVERITIES + ("none",)
