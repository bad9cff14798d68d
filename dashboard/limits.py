"""Values typed in the dashboard, kept inside the range the core computes exactly.

``valuecore`` refuses value matrices with entries above 1e100 or below 1e-100 in
magnitude (see ``valuecore.policy_json.VALUE_LIMIT``): beyond them sums over a run
could overflow or underflow. The sidebar reads a larger amount as the limit and a
tinier one as 0, and says so, instead of failing on every page.
"""

from __future__ import annotations

import math
import os

from valuecore.policy_json import VALUE_LIMIT

__all__ = ["VALUE_LIMIT", "clamp_value", "CLAMP_NOTE", "MEMORY_ENV", "TTL_ENV", "cache_ttl_seconds",
           "memory_budget_bytes"]

# The server's memory budget for loaded and sorted runs, shared by all sessions (dashboard.memory).
MEMORY_ENV, DEFAULT_MEMORY_MB = "VALUE_DASHBOARD_MEMORY_MB", 2048
TTL_ENV, DEFAULT_TTL_S = "VALUE_DASHBOARD_CACHE_TTL_S", 600

CLAMP_NOTE = (
    f"Values are limited to ±{VALUE_LIMIT:g} (and amounts below {1 / VALUE_LIMIT:g} read as 0). "
    "Thresholds do not change when every value is multiplied by one number: use a larger unit."
)


def clamp_value(value: float) -> tuple[float, bool]:
    """``(value inside the range, whether it was changed)``.

    >>> clamp_value(1e308), clamp_value(-1e-300), clamp_value(-4.0)
    ((1e+100, True), (0.0, True), (-4.0, False))
    """
    value = float(value)
    if not math.isfinite(value):
        return (math.copysign(VALUE_LIMIT, value) if math.isinf(value) else 0.0), True
    if abs(value) > VALUE_LIMIT:
        return math.copysign(VALUE_LIMIT, value), True
    if 0 < abs(value) < 1 / VALUE_LIMIT:
        return 0.0, True
    return value, False


def _positive_number(variable: str, default: float) -> float:
    try:
        value = float(os.environ.get(variable, "").strip())
    except ValueError:
        return default
    return value if math.isfinite(value) and value > 0 else default


def memory_budget_bytes() -> int:
    """Bytes the cached runs of all sessions may hold: ``$VALUE_DASHBOARD_MEMORY_MB`` MiB (default 2048)."""
    return int(_positive_number(MEMORY_ENV, DEFAULT_MEMORY_MB) * 2**20)


def cache_ttl_seconds() -> float:
    """Seconds a cached run stays after its last use: ``$VALUE_DASHBOARD_CACHE_TTL_S`` (default 600)."""
    return _positive_number(TTL_ENV, DEFAULT_TTL_S)
