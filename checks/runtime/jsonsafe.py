"""JSON without NaN or infinity, as the committed evidence files write them: ``"inf"``, ``"-inf"``, ``"nan"``."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["json_safe"]


def json_safe(x: Any) -> Any:
    """``x`` with every non-finite float replaced by its name, through dicts, lists and tuples (tuples become lists)."""
    if isinstance(x, float) and not math.isfinite(x):
        return "inf" if x > 0 else ("-inf" if x < 0 else "nan")
    if isinstance(x, dict):
        return {k: json_safe(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [json_safe(v) for v in x]
    return x
