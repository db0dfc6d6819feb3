"""Small shared helpers: sentinels and peer-text sanitising."""

from __future__ import annotations

import math
from typing import Any, Final

__all__ = [
    "MAX_SECONDS",
    "NEED_DATA",
    "Sentinel",
    "check_seconds",
    "export_order",
    "sanitize_peer_text",
    "shown",
]


class Sentinel(type):
    """A class whose type is itself, so ``type(x) is NEED_DATA`` dispatch works (as in h11)."""

    def __new__(
        cls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwds: Any
    ) -> Sentinel:
        assert bases == (Sentinel,)
        v = super().__new__(cls, name, bases, namespace, **kwds)
        v.__class__ = v  # type: ignore[assignment]
        return v

    def __repr__(self) -> str:
        return self.__name__


class NEED_DATA(Sentinel, metaclass=Sentinel):
    """``next_event()`` has nothing to hand out until more input arrives."""


def export_order(name: str) -> tuple[int, str]:
    """The order of a package's ``__all__`` (ruff's RUF022, "isort-style"): CONSTANTS,
    then Classes, then the rest, each alphabetical. For an ``__all__`` built from
    :mod:`mcp_proto.exports` plus a package's own names."""
    if name.isupper() and len(name) > 1:
        return 0, name
    if name[:1].isupper():
        return 1, name
    return 2, name


# C0 controls, DEL and C1 controls, plus the Unicode line/paragraph separators and the
# bidirectional overrides: all of them can make a log viewer show a forged line.
_CONTROL: Final = {
    i: f"\\x{i:02x}" if i < 0x100 else f"\\u{i:04x}"
    for i in (
        *range(0x20),
        *range(0x7F, 0xA0),
        0x2028,
        0x2029,
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
    )
}


def sanitize_peer_text(text: str, *, cap: int) -> str:
    """Make peer-controlled text safe to put in a log line.

    Control characters (newlines included) are escaped as ``\\xNN`` so a server cannot
    forge log lines, lone surrogates are spelled out (a log handler could not encode
    them), and the result is capped at ``cap`` characters plus a note of the original
    length (seeds: "Treating the Server as Untrusted", log messages row).
    """
    original = len(text)
    # Escaping only grows text, so cutting the input at ``cap`` first bounds the work.
    escaped = text[:cap].translate(_CONTROL).encode("utf-8", "backslashreplace").decode("utf-8")
    if original > cap or len(escaped) > cap:
        return escaped[:cap] + f"... (truncated from {original} chars)"
    return escaped


#: Upper bound of every duration (the config options ``read_timeout``, ``retry_backoff``,
#: ``ping``, ``discover_timeout`` and a request's ``timeout=``), about 31 years: larger
#: values overflow the shells' waits (threading's TIMEOUT_MAX, time_t).
MAX_SECONDS: Final = 10**9


def shown(value: object) -> str:
    """``repr`` of a bad value, cut short: a 400-digit number must not flood the message
    (and past 4300 digits ``repr`` of an int raises ``ValueError`` itself)."""
    if isinstance(value, int) and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"


def check_seconds(value: object, what: str, *, allow_zero: bool = False) -> float:
    """A duration in seconds as a float, or ``ValueError`` naming ``what``."""
    if type(value) is float and (0.0 < value <= MAX_SECONDS or (allow_zero and value == 0.0)):
        return value  # the common case, on every request: no further checks needed
    # bool is an int subclass; ``read_timeout=True`` is a mistake, not one second.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{what} must be a number, got {shown(value)}")
    # A huge int has no float (OverflowError), and anything past MAX_SECONDS overflows
    # the shells' timed waits: compare before converting.
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number, got {value!r}")
    if value > MAX_SECONDS:
        raise ValueError(f"{what} must be at most {MAX_SECONDS} seconds, got {shown(value)}")
    if value < 0 or (value == 0 and not allow_zero):
        bound = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{what} must be {bound}, got {shown(value)}")
    return float(value)
