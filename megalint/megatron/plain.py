"""Values as CEL and JSON take them: what the rule context and the memory estimator read.

Bound and derived Megatron values are typed Python values (enums, tuples, infinities); the
rule context and the estimator's input hold them as plain JSON values, with Unknown kept.
"""

from __future__ import annotations

import enum
import math
from typing import Any

from megalint.shell.values import Unknown


def plain(value: Any) -> Any:
    """A value as CEL and JSON take it, or Unknown."""
    if isinstance(value, Unknown):
        return value
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, float) and (math.isinf(value) or math.isnan(value)):
        return str(value)
    if isinstance(value, (list, tuple)):
        items = [plain(v) for v in value]
        for v in items:
            if isinstance(v, Unknown):
                return v
        return items
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
