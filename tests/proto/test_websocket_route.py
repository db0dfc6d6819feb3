"""Where both shells' WebSocket connections go (``mcp_io_common.websocket.Route``): the
address dialled (the proxy's when there is one), the tunnel's target and deadline, and
what the connection errors say. The real connections are tests/shells/test_websocket.py's
and tests/shells/test_websocket_proxy.py's."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_io_common.websocket import WebSocketTarget
from mcp_proto.config import websocket_config
from mcp_proto.errors import ConnectionError


class _Shell:
    def __init__(self, config: Any, **kwargs: Any) -> None:
        self.config = config
        self.name = kwargs["name"]


class _Server(WebSocketTarget, _Shell):
    pass


def _route(url: str, proxy: str | None = None) -> Any:
    return _Server(websocket_config(url), name="srv", proxy=proxy)._route()


def test_without_a_proxy_the_server_is_dialled() -> None:
    route = _route("wss://srv.example/mcp")
    assert (route.tls, route.host, route.port) == (True, "srv.example", 443)
    assert route.hop == ("srv.example", 443)
    assert route.proxy is None
    error = route.cannot_connect("refused")
    assert isinstance(error, ConnectionError)
    assert str(error) == "server 'srv': cannot connect to wss://srv.example/mcp: refused"


def test_with_a_proxy_the_proxy_is_dialled_and_the_tunnel_goes_to_the_server() -> None:
    route = _route("ws://srv.example:8080/mcp", proxy="https://u:pw@proxy.example:8443")
    assert route.hop == ("proxy.example", 8443)
    assert (route.tls, route.host, route.port) == (False, "srv.example", 8080)
    tunnel = route.tunnel(10.0, 5.0)
    assert tunnel.deadline == 15.0  # the connect's deadline, not a new one
    assert tunnel.request().startswith(b"CONNECT srv.example:8080 HTTP/1.1\r\n")
    # Errors name the proxy, never its credentials.
    assert str(route.cannot_connect("refused")) == (
        "server 'srv': cannot connect to the proxy https://proxy.example:8443: refused"
    )
    failed = route.proxy_write_failed(BrokenPipeError("gone"))
    assert (
        str(failed) == "server 'srv': writing to the proxy https://proxy.example:8443 failed: gone"
    )
    assert "pw" not in str(failed)


def test_a_bad_proxy_url_is_a_connection_error() -> None:
    with pytest.raises(ConnectionError, match="server 'srv': "):
        _route("ws://srv.example/mcp", proxy="socks5://proxy.example:1080")
