"""Small shared helpers: sentinels and peer-text sanitising."""

from __future__ import annotations

from typing import Any, Final

__all__ = ["NEED_DATA", "Sentinel", "sanitize_peer_text"]


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
