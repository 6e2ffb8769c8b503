"""Per-GPU peak memory estimate of Megatron-LM training from launch arguments."""

from .arg_values import InvalidConfig
from .breakdown import MemoryEstimate, StageEstimate
from .calibration import DEFAULT_CALIBRATION, Calibration
from .defaults import DEFAULTS
from .estimator import estimate
from .shape import pad_vocab, parse_layer_pattern
from .suggest import Suggestion, suggest

__all__ = [
    "DEFAULTS",
    "DEFAULT_CALIBRATION",
    "Calibration",
    "InvalidConfig",
    "MemoryEstimate",
    "StageEstimate",
    "Suggestion",
    "estimate",
    "pad_vocab",
    "parse_layer_pattern",
    "suggest",
]
