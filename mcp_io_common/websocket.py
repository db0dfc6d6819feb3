"""What both shells' WebSocket transports (issue 25) do alike, without waiting.

Every rule (the upgrade, framing, masking, Ping/Pong, Close codes, limits, what an end
means) is the machine's (``mcp_proto.connection``, on ``mcp_proto.websocket``). A
shell's transport performs its frames: ``OpenTransport`` connects, ``Write`` sends
bytes as they are (already framed by the machine), ``CloseTransport`` closes; a reader
feeds what arrives to ``receive_data`` and the end to ``receive_eof``. With ``proxy=``
the connection first goes to the proxy (TLS to it for an ``https://`` one) and through
an HTTP ``CONNECT`` tunnel whose request and answer are ``mcp_proto.proxy_tunnel``'s;
the shell only moves the bytes and bounds the waits by the connect deadline
(``read_timeout``). Here: the server object's settings, where its connection goes
(:class:`Route`: the address it dials, the tunnel, what its errors say) and the sizes
of its reads.
"""

from __future__ import annotations

import ssl
from typing import Any, Final

import attrs

from mcp_proto.config import ServerConfig
from mcp_proto.errors import ConnectionError
from mcp_proto.proxy_tunnel import ProxyEndpoint, ProxyTunnel, parse_proxy_url
from mcp_proto.websocket import parse_ws_url

__all__ = ["READ_CHUNK", "TUNNEL_CHUNK", "Route", "WebSocketTarget"]

#: The most bytes one read of the connection takes.
READ_CHUNK: Final = 65536
#: The proxy's answer head is read in small pieces (it is small; what follows it is
#: the server's and never comes before the client speaks).
TUNNEL_CHUNK: Final = 4096


@attrs.frozen
class Route:
    """Where a server's connection goes: ``host``:``port`` (TLS to it if ``tls``),
    through ``proxy`` when there is one."""

    server: str  # the server's name, for errors
    url: str
    tls: bool
    host: str
    port: int
    proxy: ProxyEndpoint | None

    @property
    def hop(self) -> tuple[str, int]:
        """The address the TCP connection is made to: the proxy's, else the server's."""
        proxy = self.proxy
        return (proxy.host, proxy.port) if proxy is not None else (self.host, self.port)

    @property
    def where(self) -> str:
        """What an error says the connection went to."""
        return f"the proxy {self.proxy.display}" if self.proxy is not None else self.url

    def tunnel(self, start: float, timeout: float) -> ProxyTunnel:
        """The ``CONNECT`` through the proxy (its rules are mcp_proto/proxy_tunnel.py's),
        bounded by the connect's deadline: ``timeout`` from ``start``."""
        assert self.proxy is not None
        return ProxyTunnel(
            self.proxy, self.host, self.port, now=start, timeout=timeout, server=self.server
        )

    def cannot_connect(self, detail: object) -> ConnectionError:
        return ConnectionError(f"server {self.server!r}: cannot connect to {self.where}: {detail}")

    def proxy_write_failed(self, exc: BaseException) -> ConnectionError:
        assert self.proxy is not None
        return ConnectionError(
            f"server {self.server!r}: writing to the proxy {self.proxy.display} failed: {exc}"
        )


class WebSocketTarget:
    """Mixed in before a shell's server class by its WebSocket transport: the URL, the
    TLS context and the proxy of the server object."""

    type = "websocket"
    name: str
    url: str

    def __init__(
        self,
        config: ServerConfig,
        *,
        ssl_context: ssl.SSLContext | None = None,
        proxy: str | None = None,
        **kwargs: Any,
    ) -> None:
        # The next class in the MRO is the shell's BaseServer (object to mypy here).
        super().__init__(config, **kwargs)  # type: ignore[call-arg]
        assert config.url is not None
        self.url = config.url
        self._ssl_context = ssl_context
        self._proxy = proxy
        # The open connection (the shell's own kind), None while there is none.
        self._link: Any = None

    def _tls_context(self) -> ssl.SSLContext:
        """The host's context, else the default one (TLS verification stays on)."""
        return self._ssl_context or ssl.create_default_context()

    def _proxy_endpoint(self) -> ProxyEndpoint | None:
        """The proxy to tunnel through, or None (``ConnectionError`` for a bad URL)."""
        if not self._proxy:
            return None
        try:
            return parse_proxy_url(self._proxy)
        except ValueError as exc:  # (its message never quotes credentials)
            raise ConnectionError(f"server {self.name!r}: {exc}") from None

    def _route(self) -> Route:
        """Where this server's connection goes (``ConnectionError`` for a bad proxy
        URL; ``ValueError`` for a bad server URL, which the configuration refused)."""
        tls, host, port, _, _ = parse_ws_url(self.url)
        return Route(self.name, self.url, tls, host, port, self._proxy_endpoint())
