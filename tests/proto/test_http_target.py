"""What both shells' HTTP server objects take from ``mcp_io_common.http_target``: the
pool they run exchanges on (the shell's own class, or the host's factory: CUST-1),
made when the transport opens and kept while it is open, and an exchange handed to
``pool.stream`` with its method, URL, headers, body and timeouts. The real pools are
tests/shells/test_http_pool_factory.py's and test_http_custom.py's."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_io_common.http_target import HttpTarget
from mcp_proto.config import streamable_http_config
from mcp_proto.connection import StartExchange

URL = "https://srv.example/mcp"


class _ShellPool:
    made: list[_ShellPool] = []

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.streamed: list[tuple[Any, ...]] = []
        _ShellPool.made.append(self)

    def stream(self, *args: Any, **kwargs: Any) -> str:
        self.streamed.append((args, kwargs))
        return "context manager"

    def close(self) -> None: ...


class _Shell:
    def __init__(self, config: Any, **kwargs: Any) -> None:
        self.config = config
        self.name = kwargs["name"]
        self.read_timeout = 7.0


class _Server(HttpTarget, _Shell):
    _browser_module = "mcp_io_sync._oauth"
    _pool_class = _ShellPool
    _asynchronous = False


@pytest.fixture(autouse=True)
def _fresh() -> None:
    _ShellPool.made = []


def test_the_shells_own_pool_is_made_when_the_transport_opens_and_kept() -> None:
    server = _Server(streamable_http_config(URL), name="srv")
    assert server._pool is None
    server._open_pool()
    (pool,) = _ShellPool.made
    assert server._pool is pool
    assert pool.options["max_connections"] > 0
    assert pool.options["ssl_context"] is server._ssl_context
    server._open_pool()  # open again (a restart) while the pool is still there
    assert _ShellPool.made == [pool]


def test_the_hosts_factory_makes_the_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    server = _Server(streamable_http_config(URL), name="srv")
    mine = _ShellPool.__new__(_ShellPool)
    mine.streamed = []

    def factory(settings: Any) -> _ShellPool:
        assert settings is server._http
        return mine

    server._http.pool_factory = factory
    server._open_pool()
    assert server._pool is mine
    assert _ShellPool.made == []


def test_an_exchange_is_handed_to_the_pool_as_the_machine_asked() -> None:
    server = _Server(streamable_http_config(URL), name="srv")
    pool = _ShellPool()
    frame = StartExchange(3, "POST", URL, (("a", "b"),), b"{}", 2.5, False)
    assert server._stream(pool, frame, [(b"a", b"b")]) == "context manager"
    ((args, kwargs),) = pool.streamed
    assert args == (b"POST", URL)
    assert kwargs["headers"] == [(b"a", b"b")]
    assert kwargs["content"] == b"{}"
    timeouts = kwargs["extensions"]["timeout"]
    # The server's read_timeout bounds connecting and writing; the frame's each read.
    assert timeouts == {"connect": 7.0, "write": 7.0, "pool": 7.0, "read": 2.5}


def test_a_network_backend_of_the_other_kind_is_refused_when_built() -> None:
    class AsyncBackend:
        async def connect_tcp(self, *args: Any, **kwargs: Any) -> None: ...

    from mcp_proto.http_settings import HttpSettings

    settings = HttpSettings("srv", URL)
    settings.network_backend = AsyncBackend()
    with pytest.raises(ValueError, match="network_backend"):
        _Server(streamable_http_config(URL), name="srv", http_settings=settings)
