"""What a server object tells about its connection; shared by both shells' servers."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from mcp_proto.config import ServerConfig
from mcp_proto.session import ServerInfo

if TYPE_CHECKING:
    from mcp_proto.modern.cache import CacheInfo, CacheKind

__all__ = ["ConnectionView", "ServerView"]


class ConnectionView(Protocol):
    """What :class:`ServerView` reads from the machine a server object drives
    (``mcp_proto.connection.Connection`` has both)."""

    @property
    def server(self) -> ServerInfo | None: ...

    @property
    def is_connected(self) -> bool: ...


class ServerView:
    """Read-only facts about a server, from its connection (LIFE-4, LIFE-9, LIFE-21).
    A subclass sets ``config`` and ``_conn`` (the ``Connection`` it drives; ``None``
    before its first connection)."""

    config: ServerConfig
    _conn: ConnectionView | None = None
    #: Set by the client that owns this server: ``(kind, uri) -> CacheInfo | None`` from
    #: its core's result cache (CACHE-10). Unset: nothing is cached.
    _cache_info: Callable[[CacheKind, str | None], CacheInfo | None] | None = None

    def cache_info(self, kind: CacheKind, uri: str | None = None) -> CacheInfo | None:
        """What the 2026-07-28 result cache holds for ``kind`` (``"tools"``,
        ``"prompts"``, ``"resources"``, ``"resource_templates"``, ``"discover"``, or
        ``"read"`` with ``uri``): ``CacheInfo(ttl_ms, cache_scope, received_at,
        fresh)``, or ``None`` when nothing is cached (CACHE-10)."""
        source = self._cache_info
        if source is None:
            from mcp_proto.modern.cache import ResultCache

            ResultCache().cache_info(kind, uri, now=0.0)  # the same argument checks
            return None
        return source(kind, uri)

    @property
    def info(self) -> ServerInfo | None:
        conn = self._conn
        return conn.server if conn is not None else None

    @property
    def server_info(self) -> Any:
        info = self.info
        return info.server_info if info is not None else None

    @property
    def capabilities(self) -> dict[str, Any]:
        info = self.info
        return info.capabilities if info is not None else {}

    @property
    def instructions(self) -> str | None:
        info = self.info
        return info.instructions if info is not None else None

    @property
    def protocol_version(self) -> str | None:
        info = self.info
        return info.protocol_version if info is not None else None

    @property
    def protocol_era(self) -> str | None:
        """``"modern"`` (2026-07-28: no handshake, ``server/discover``) or
        ``"legacy"`` (the handshake era), from the current connection; ``None`` before
        the era is known (LIFE-4). The connection's own era when it has decided one
        (before the server's info is in: ``protocol="modern"`` fixes it at once)."""
        era = getattr(self._conn, "era", None)
        if era is not None:
            return str(era)
        info = self.info
        return info.protocol_era if info is not None else None

    @property
    def is_modern(self) -> bool:
        """Whether the current connection speaks the 2026-07-28 revision."""
        return self.protocol_era == "modern"

    def has_capability(self, *path: str) -> bool:
        info = self.info
        return info is not None and info.has_capability(*path)

    @property
    def server_answered(self) -> bool:
        """Whether the server answered ``initialize`` on the current (or last, failed)
        connection: proof that an MCP server is at this address, so ``connect`` tries
        no other transport after a failure (issue 9; :class:`~mcp_proto.effects.Attempt`)."""
        return self.info is not None

    def _transport_alive(self) -> bool:
        return True

    @property
    def is_connected(self) -> bool:
        conn = self._conn
        return conn is not None and conn.is_connected and self._transport_alive()

    @property
    def read_timeout(self) -> float:
        return self.config.read_timeout
