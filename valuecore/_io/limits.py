"""Resource limits, checked before the expensive work.

A run file or a JSON document larger than these is refused with a message that
names the limit and the environment variable that raises it (listed in
``docs/run-format.md``). Text from files that goes into a message is cut to
:func:`max_cell_chars` characters, with an ellipsis.
"""

from __future__ import annotations

import os

__all__ = [
    "LIMITS",
    "LimitError",
    "clip_text",
    "limit",
    "load_json_limited",
    "json_depth",
    "read_limited",
]


class LimitError(ValueError):
    """An input is larger than a configured limit; the message says which and how to raise it."""


# name -> (environment variable, default, unit in messages)
LIMITS = {
    "file_mb": ("VALUECORE_MAX_FILE_MB", 1024, "MB"),
    "columns": ("VALUECORE_MAX_COLUMNS", 5000, "columns"),
    "classes": ("VALUECORE_MAX_CLASSES", 1000, "classes"),
    "cell_chars": ("VALUECORE_MAX_CELL_CHARS", 200, "characters"),
    "json_mb": ("VALUECORE_MAX_JSON_MB", 10, "MB"),
    "json_depth": ("VALUECORE_MAX_JSON_DEPTH", 32, "levels"),
}


def limit(name: str) -> int:
    """The limit ``name`` of :data:`LIMITS`: its environment variable when set to a positive
    whole number, else the default."""
    variable, default, _ = LIMITS[name]
    text = os.environ.get(variable, "").strip()
    try:
        value = int(text)
    except ValueError:
        return default
    return value if value > 0 else default


def refusal(name: str, what: str, found) -> str:
    """``"<what>: <found>, above the limit of N <unit>; ... environment variable VAR"``."""
    variable, _, unit = LIMITS[name]
    return (
        f"{what}: {found}, above the limit of {limit(name):,} {unit}; "
        f"the server's operator can raise it with the environment variable {variable}"
    )


def clip_text(text, max_chars: int | None = None) -> str:
    """``str(text)`` cut to ``max_chars`` characters (default the ``cell_chars`` limit), with an ellipsis.

    >>> clip_text("abcdef", 4)
    'abc…'
    """
    text = str(text)
    max_chars = limit("cell_chars") if max_chars is None else max_chars
    if len(text) <= max_chars:
        return text
    return text[: max(max_chars - 1, 0)] + "…"


def json_depth(text: str) -> int:
    """Deepest nesting of arrays and objects in JSON ``text`` (brackets inside strings ignored).

    Linear in the text, without recursion, so it is safe to run before ``json.loads``.

    >>> json_depth('{"a": [1, {"b": "]]]"}]}')
    3
    """
    import re

    import numpy as np

    bare = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)
    codes = np.frombuffer(bare.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    steps = np.zeros(codes.shape, dtype=np.int32)
    steps[(codes == ord("[")) | (codes == ord("{"))] = 1
    steps[(codes == ord("]")) | (codes == ord("}"))] = -1
    return int(np.cumsum(steps).max(initial=0))


def _finite_number(text: str) -> float | int:
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {clip_text(text, 40)} is too large to hold")
    return value


def _whole_number(text: str) -> int | float:
    if len(text.lstrip("-")) > 18:  # beyond int64: read as a float, refused when infinite
        return _finite_number(text)
    return int(text)


def _no_constant(text: str):
    raise ValueError(f"{text} is not a JSON number (write a finite number, or null where allowed)")


class _KeyGivenTwice(ValueError):
    """An object of the document gives one key more than once (``json`` would keep the last, silently)."""


def _one_value_per_key(pairs: list) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set = set()
        twice = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise _KeyGivenTwice(f"gives the key {clip_text(twice, 60)!r} more than once in one object; a key may "
                             "appear once, or two readers could take different values")
    return out


def read_limited(path, what: str = "the file") -> bytes:
    """The bytes of the regular file ``path``, read no further than the ``json_mb`` limit allows.

    :class:`LimitError` for a longer file; ValueError in words for anything but a regular file (a FIFO,
    ``/dev/zero``: refused without waiting or reading without end); FileNotFoundError when it is missing.
    """
    from .paths import read_regular_file, shown

    max_bytes = limit("json_mb") * 1_000_000
    data = read_regular_file(path, max_bytes, what)
    if len(data) > max_bytes:
        raise LimitError(refusal("json_mb", f"{shown(path)} is too large", f"more than {limit('json_mb'):,} MB"))
    return data


def load_json_limited(text: str | bytes, source: str = "JSON"):
    """``json.loads`` after checking size and nesting depth; numbers must be finite; no object may give a
    key twice (``"threshold": 0.99, "threshold": 0.0`` is refused, naming the key, not read as 0.0).

    Raises :class:`LimitError` for too large or too deep input, ValueError (with the
    line and column) for invalid JSON, a number out of range or a key given twice, never
    RecursionError or OverflowError.
    """
    import json  # here, not at the top: every COMMAND --help imports this module (for the limits) and needs no json

    size = len(text)
    if size > limit("json_mb") * 1_000_000:
        raise LimitError(refusal("json_mb", f"{source} is too large", f"{size / 1e6:,.1f} MB"))
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ValueError(f"{source} is not UTF-8 text") from None
    depth = json_depth(text)
    if depth > limit("json_depth"):
        raise LimitError(refusal("json_depth", f"{source} is nested too deeply", f"{depth} levels"))
    try:
        return json.loads(text, parse_float=_finite_number, parse_int=_whole_number, parse_constant=_no_constant,
                          object_pairs_hook=_one_value_per_key)
    except _KeyGivenTwice as exc:
        raise ValueError(f"{source} {exc}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{source} is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise LimitError(refusal("json_depth", f"{source} is nested too deeply", "more")) from None
