"""Data the session hands out or consults: what the handshake established
(:class:`ServerInfo`), which requests need which server capability, and the
conversion of a ``notifications/message`` into a :class:`LogMessage`. Split from
``session.py`` to keep that module to the state machine."""

from __future__ import annotations

import json
from typing import Any, Final

import attrs

from ._util import sanitize_peer_text
from .events import LogMessage
from .types import Implementation
from .versions import LEGACY_VERSIONS

__all__ = ["REQUIRED_CAPABILITY", "ServerInfo", "as_float", "log_message"]

#: Requests that need a negotiated server capability (CAP-1). Sending one to a server
#: that did not declare it is refused locally with ``CapabilityError``, nothing is sent.
REQUIRED_CAPABILITY: Final[dict[str, tuple[str, ...]]] = {
    "logging/setLevel": ("logging",),
    "resources/subscribe": ("resources", "subscribe"),
    "resources/unsubscribe": ("resources", "subscribe"),
    "completion/complete": ("completions",),
    "tools/list": ("tools",),
    "tools/call": ("tools",),
    "prompts/list": ("prompts",),
    "prompts/get": ("prompts",),
    "resources/list": ("resources",),
    "resources/templates/list": ("resources",),
    "resources/read": ("resources",),
    "tasks/list": ("tasks", "list"),
    "tasks/cancel": ("tasks", "cancel"),
}

# notifications/message level -> Python logging level name (LOG-3).
_LOG_LEVELS: Final[dict[str, str]] = {
    "debug": "DEBUG",
    "info": "INFO",
    "notice": "INFO",
    "warning": "WARNING",
    "error": "ERROR",
    "critical": "ERROR",
    "alert": "ERROR",
    "emergency": "ERROR",
}


def as_float(value: Any) -> float | None:
    """A JSON number as a float; None for anything else (bools, and integers too big
    for a float: JSON allows 400-digit integers, ``float()`` raises on them)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:
        return None


@attrs.frozen
class ServerInfo:
    """What the handshake established about a server."""

    protocol_version: str
    capabilities: dict[str, Any]
    server_info: Implementation | None
    instructions: str | None
    #: 2026-07-28 only (LIFE-20, CACHE-13): the ``server/discover`` result's ``ttlMs``
    #: (absent, negative or malformed: 0, stale at once) and when it was received on
    #: the connection's clock. ``None`` in the handshake era: nothing to re-fetch.
    ttl_ms: int = 0
    received_at: float | None = None

    def discover_stale(self, now: float) -> bool:
        """Whether this 2026-07-28 server's ``server/discover`` result has outlived its
        ``ttlMs`` at ``now`` (``now < received_at + ttlMs`` is fresh: caching.mdx §
        Time-to-Live). Always False in the handshake era."""
        if self.received_at is None:
            return False
        return not now < self.received_at + self.ttl_ms / 1000.0

    @property
    def protocol_era(self) -> str:
        return "legacy" if self.protocol_version in LEGACY_VERSIONS else "modern"

    def has_capability(self, *path: str) -> bool:
        """True when ``capabilities[path[0]][path[1]]...`` is present and not false/null."""
        node: Any = self.capabilities
        for key in path:
            if not isinstance(node, dict) or key not in node:
                return False
            node = node[key]
        return node is not None and node is not False


def log_message(params: dict[str, Any], *, cap: int) -> LogMessage:
    """A ``notifications/message`` as a log record: level mapped (LOG-3), text made
    safe and capped at ``cap``."""
    raw_level = params.get("level")
    level = _LOG_LEVELS.get(raw_level) if isinstance(raw_level, str) else None
    data = params.get("data")
    if isinstance(data, str):
        text = data
    else:
        try:
            text = json.dumps(data, ensure_ascii=False)
        except (TypeError, ValueError):  # pragma: no cover - data came from JSON
            text = repr(data)
    if level is None:
        # Unknown level: log at INFO, with the peer's tag made harmless (LOG-3).
        text = f"[{sanitize_peer_text(str(raw_level), cap=32)}] {text}"
        level = "INFO"
    logger = params.get("logger")
    return LogMessage(
        level=level,
        logger=sanitize_peer_text(logger, cap=128) if isinstance(logger, str) else None,
        text=sanitize_peer_text(text, cap=cap),
    )
