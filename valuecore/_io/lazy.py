"""A module imported on first use, for a module whose lighter callers never need it."""

from __future__ import annotations

import importlib

__all__ = ["LazyModule"]


class LazyModule:
    """Stands for the module ``name``, imported on the first attribute asked of it (``pd.read_csv``,
    ``isinstance(x, pd.Series)``: every use reads through to the module itself, monkeypatches included).

    ``valuecore/_io/runfiles/`` reads pandas through one, so that the aggregation, which needs only that
    module's checks and messages, starts without importing pandas (about 0.3 s and 0.05 GiB of a process)."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attribute: str):
        return getattr(importlib.import_module(self._name), attribute)

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported on first use>"
