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


_CONTROL: Final = {i: f"\\x{i:02x}" for i in (*range(0x20), 0x7F)}


def sanitize_peer_text(text: str, *, cap: int) -> str:
    """Make peer-controlled text safe to put in a log line.

    Control characters (newlines included) are escaped as ``\\xNN`` so a server cannot
    forge log lines, and the text is capped at ``cap`` characters with a note of the
    original length (seeds: "Treating the Server as Untrusted", log messages row).
    """
    original = len(text)
    if original > cap:
        text = text[:cap]
    text = text.translate(_CONTROL)
    if original > cap:
        text += f"... (truncated from {original} chars)"
    return text
