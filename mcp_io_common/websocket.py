"""What both shells' WebSocket transports (issue 25) do alike, without waiting.

Every rule (the upgrade, framing, masking, Ping/Pong, Close codes, limits, what an end
means) is the machine's (``mcp_proto.connection``, on ``mcp_proto.websocket``). A
shell's transport performs its frames: ``OpenTransport`` connects, ``Write`` sends
bytes as they are (already framed by the machine), ``CloseTransport`` closes; a reader
feeds what arrives to ``receive_data`` and the end to ``receive_eof``. With ``proxy=``
the connection first goes to the proxy (TLS to it for an ``https://`` one) and through
an HTTP ``CONNECT`` tunnel whose request and answer are ``mcp_proto.proxy_tunnel``'s;
the shell only moves the bytes and bounds the waits by the connect deadline
(``read_timeout``). Here: the server object's settings and the sizes of its reads.
"""

from __future__ import annotations

import ssl
from typing import Any, Final

from mcp_proto.config import ServerConfig
from mcp_proto.errors import ConnectionError
from mcp_proto.proxy_tunnel import ProxyEndpoint, parse_proxy_url

__all__ = ["READ_CHUNK", "TUNNEL_CHUNK", "WebSocketTarget"]

#: The most bytes one read of the connection takes.
READ_CHUNK: Final = 65536
#: The proxy's answer head is read in small pieces (it is small; what follows it is
#: the server's and never comes before the client speaks).
TUNNEL_CHUNK: Final = 4096


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

    def _where(self, proxy: ProxyEndpoint | None) -> str:
        """What an error says the connection went to."""
        return f"the proxy {proxy.display}" if proxy is not None else self.url
