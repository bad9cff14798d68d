"""The values of the tiers between acting and a blank hand-off, as a Policy records them.

:class:`AssistedValues` (a person confirms the model's answer: ``two_tier``) and
:class:`ShortlistValues` (a person picks from a list of classes: ``shortlist``),
with the check of a shortlist rule. They sit below both the :class:`Policy`
that validates its fields with them and the modules that tune and evaluate
those tiers (``twotier``, ``shortlist``), which re-export them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .values import _check_magnitude, float_or_infinite, shown_value

__all__ = ["AssistedValues", "SHORTLIST_RULES", "ShortlistValues", "check_shortlist_spec"]

SHORTLIST_RULES = ("top_k", "cumulative")


@dataclass(frozen=True)
class AssistedValues:
    """What an item is worth when a person confirms the model's answer.

    Attributes
    ----------
    v_confirmed_correct : float
        Value of a correct answer confirmed by a person (before the cost).
    v_confirmed_wrong : float
        Value of a wrong answer put to a person (before the cost): whatever
        the person's catch rate makes of it.
    cost : float
        Cost of the person's time per assisted item.

    Examples
    --------
    >>> AssistedValues(0.9, -0.5, 0.1).to_dict()
    {'v_confirmed_correct': 0.9, 'v_confirmed_wrong': -0.5, 'cost': 0.1}
    """

    v_confirmed_correct: float
    v_confirmed_wrong: float
    cost: float = 0.0

    def __post_init__(self):
        for name in ("v_confirmed_correct", "v_confirmed_wrong", "cost"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) or not (
                math.isfinite(float_or_infinite(value))  # a 400-digit int: refused, not an OverflowError
            ):
                raise ValueError(f"{name} of the assisted tier must be a finite number, got {shown_value(value)}")
            object.__setattr__(self, name, float(value))

    def to_dict(self) -> dict:
        return {"v_confirmed_correct": self.v_confirmed_correct, "v_confirmed_wrong": self.v_confirmed_wrong,
                "cost": self.cost}

    @classmethod
    def from_dict(cls, data) -> "AssistedValues":
        if isinstance(data, AssistedValues):
            return data
        try:
            return cls(data["v_confirmed_correct"], data["v_confirmed_wrong"], data.get("cost", 0.0))
        except (KeyError, TypeError) as exc:
            raise ValueError(
                "the assisted tier needs v_confirmed_correct, v_confirmed_wrong and cost"
            ) from exc


def _finite(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) or not (
        math.isfinite(float_or_infinite(value))
    ):
        raise ValueError(f"{name} must be a finite number, got {shown_value(value)}")
    return float(value)


@dataclass(frozen=True)
class ShortlistValues:
    """Value of a hand-off with a shortlist of ``k`` classes, per ``k``.

    Attributes
    ----------
    by_size : tuple of (k, value_if_in, value_if_out)
        Sorted by ``k``; ``value_if_in`` when the list holds the true class,
        ``value_if_out`` when it does not (before any cost: charge it in both).

    Examples
    --------
    >>> ShortlistValues.parse("3:0.6:-0.1,1:0.8:-0.2").by_size
    ((1, 0.8, -0.2), (3, 0.6, -0.1))
    >>> ShortlistValues.from_dict({"2": [0.5, 0.0]}).to_dict()
    {'2': [0.5, 0.0]}
    """

    by_size: tuple

    def __post_init__(self):
        rows = []
        seen = set()
        for row in self.by_size:
            if len(row) != 3:
                raise ValueError("each shortlist value needs a size k, a value if the true class is in it, "
                                 "and a value if not")
            k, v_in, v_out = row
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
                raise ValueError(f"a shortlist size must be a whole number of at least 1, got {k!r}")
            if int(k) in seen:
                raise ValueError(f"the shortlist size {int(k)} is given twice")
            seen.add(int(k))
            rows.append((int(k), _finite(v_in, f"the value of a {k}-shortlist holding the true class"),
                         _finite(v_out, f"the value of a {k}-shortlist missing the true class")))
        if not rows:
            raise ValueError("a shortlist policy needs the value of at least one list size")
        rows.sort()
        object.__setattr__(self, "by_size", tuple(rows))
        _check_magnitude(np.array([v for _, a, b in rows for v in (a, b)]), "the values of the shortlists")

    @property
    def sizes(self) -> tuple:
        return tuple(k for k, _, _ in self.by_size)

    def to_dict(self) -> dict:
        return {str(k): [v_in, v_out] for k, v_in, v_out in self.by_size}

    @classmethod
    def from_dict(cls, data) -> "ShortlistValues":
        if isinstance(data, ShortlistValues):
            return data
        if not isinstance(data, dict) and not hasattr(data, "items"):
            raise ValueError("the shortlist values must map a size k to [value if in, value if not]")
        rows = []
        for k, pair in data.items():
            try:
                size = int(k)
                if str(size) != str(k).strip() and not isinstance(k, (int, np.integer)):
                    raise ValueError
                v_in, v_out = pair
            except (TypeError, ValueError) as exc:
                raise ValueError(f"shortlist value {k!r}: expected a whole size mapped to "
                                 "[value if in, value if not]") from exc
            rows.append((size, v_in, v_out))
        return cls(tuple(rows))

    @classmethod
    def parse(cls, text: str) -> "ShortlistValues":
        """From ``"K:IN:OUT,K:IN:OUT"`` (the command line's form)."""
        rows = []
        for part in str(text).split(","):
            pieces = part.strip().split(":")
            try:
                if len(pieces) != 3:
                    raise ValueError
                k = int(pieces[0])
                rows.append((k, float(pieces[1]), float(pieces[2])))
            except ValueError as exc:
                raise ValueError(f"shortlist value {part.strip()!r}: expected K:IN:OUT, e.g. 3:0.6:-0.1") from exc
        return cls(tuple(rows))


def check_shortlist_spec(spec) -> dict:
    """The normalised ``shortlist`` mapping of a Policy; ValueError in words otherwise."""
    if not hasattr(spec, "get"):
        raise ValueError("a shortlist policy needs its shortlist rule (an object)")
    rule = spec.get("rule", "top_k")
    if rule not in SHORTLIST_RULES:
        raise ValueError(f"unknown shortlist rule {rule!r}; expected one of {list(SHORTLIST_RULES)}")
    values = ShortlistValues.from_dict(spec.get("values"))
    list_threshold = spec.get("list_threshold")
    if list_threshold is not None:
        list_threshold = _finite(list_threshold, "list_threshold")
        if not 0 <= list_threshold <= 1:
            raise ValueError(f"list_threshold must be a confidence in [0, 1] (or null), got {list_threshold}")
    k = level = None
    if rule == "top_k":
        k = spec.get("k")
        if k is not None:
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or int(k) not in values.sizes:
                raise ValueError(f"the shortlist size k={k!r} must be one of the sizes given a value "
                                 f"{list(values.sizes)}")
            k = int(k)
        if spec.get("level") is not None:
            raise ValueError("a top_k shortlist takes a size k, not a level")
    else:
        level = spec.get("level")
        if level is not None:
            level = _finite(level, "the shortlist level")
            if not 0 < level <= 1:
                raise ValueError(f"the shortlist level must be above 0 and at most 1, got {level}")
        if spec.get("k") is not None:
            raise ValueError("a cumulative shortlist takes a level, not a size k")
    if list_threshold is not None and k is None and level is None:
        raise ValueError("a shortlist policy that lists items needs its size k (top_k) or level (cumulative)")
    return {"rule": rule, "k": k, "level": level, "list_threshold": list_threshold, "values": values.to_dict()}
