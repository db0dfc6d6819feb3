"""Which connection pool one HTTP server's transport uses, for both shells (CUST-1,
CONN-15; mcp_proto/http_settings.py holds the settings and their rules).

By default each shell uses its own hand-written pool (``mcp_io_sync._pool``,
``mcp_io_trio._pool``: the fast path). httpcore's pool takes its place only when the
host asked for what that pool offers:

* a ``proxy`` (httpcore's proxy support: ``CONNECT`` tunnels, forwarding, SOCKS);
* a ``network_backend`` (httpcore's ``NetworkBackend`` in the blocking shell,
  ``AsyncNetworkBackend`` in the Trio shell): httpcore's pool opens every connection
  through it;
* a ``pool_factory``: called with the settings each time the transport opens; what it
  returns (an ``httpcore.ConnectionPool`` / ``AsyncConnectionPool``, or any object with
  httpcore's ``stream()`` and ``close()`` / ``aclose()``) is the pool, closed by the
  client when the transport closes.

A factory that raises or returns something else is not a crash of the transport: each
request then fails as a network failure would, with :class:`PoolFactoryError` naming
what went wrong (the shells map httpcore's errors to the machine's failures).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, NoReturn

import httpcore

from mcp_proto.http_settings import HttpSettings

from .httpcore_glue import MAX_CONNECTIONS, httpcore_proxy
from .pool import KEEPALIVE_EXPIRY

__all__ = ["PoolFactoryError", "check_pool_settings", "custom_pool"]


class PoolFactoryError(httpcore.NetworkError):
    """``configure_http``'s ``pool_factory`` raised or returned no pool: every request
    to that server fails with this as its detail."""


def _kind(asynchronous: bool) -> str:
    return "the Trio shell" if asynchronous else "the blocking shell"


def check_pool_settings(settings: HttpSettings, *, asynchronous: bool) -> None:
    """``ValueError`` when the ``network_backend`` is the other shell's kind (a
    coroutine ``connect_tcp`` in the blocking shell, or a plain one in the Trio shell):
    raised when the client is built, not on its first request."""
    backend = settings.network_backend
    if backend is None:
        return
    import inspect

    if inspect.iscoroutinefunction(backend.connect_tcp) != asynchronous:
        wanted = "httpcore.AsyncNetworkBackend" if asynchronous else "httpcore.NetworkBackend"
        raise ValueError(
            f"configure_http: {_kind(asynchronous)} needs a {wanted} as network_backend, "
            f"got {type(backend).__name__}"
        )


class _FailedPool:
    """The pool of a server whose factory failed: each request raises the failure."""

    def __init__(self, detail: str) -> None:
        self.detail = detail

    def _fail(self) -> NoReturn:
        raise PoolFactoryError(self.detail)

    @contextmanager
    def _stream(self) -> Iterator[Any]:
        self._fail()
        yield  # pragma: no cover - never reached

    @asynccontextmanager
    async def _astream(self) -> AsyncIterator[Any]:
        self._fail()
        yield  # pragma: no cover - never reached

    def close(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


class _FailedSyncPool(_FailedPool):
    def stream(self, *args: Any, **kwargs: Any) -> Any:
        return self._stream()


class _FailedAsyncPool(_FailedPool):
    def stream(self, *args: Any, **kwargs: Any) -> Any:
        return self._astream()


def custom_pool(settings: HttpSettings, *, asynchronous: bool) -> Any | None:
    """The pool the host's settings ask for, or ``None`` for the shell's own (see the
    module). The caller closes it (``close()``, or ``aclose()`` in the Trio shell)."""
    factory = settings.pool_factory
    if factory is not None:
        failed = _FailedAsyncPool if asynchronous else _FailedSyncPool
        try:
            pool = factory(settings)
        except Exception as exc:
            return failed(f"configure_http's pool_factory raised {type(exc).__name__}: {exc}")
        closer = "aclose" if asynchronous else "close"
        if not callable(getattr(pool, "stream", None)) or not callable(getattr(pool, closer, None)):
            return failed(
                f"configure_http's pool_factory returned {type(pool).__name__}, not a pool "
                f"with stream() and {closer}() (an httpcore."
                f"{'AsyncConnectionPool' if asynchronous else 'ConnectionPool'} in "
                f"{_kind(asynchronous)})"
            )
        return pool
    if not settings.proxy and settings.network_backend is None:
        return None
    cls: Any = httpcore.AsyncConnectionPool if asynchronous else httpcore.ConnectionPool
    # TLS verification stays on unless the caller hands in its own context.
    return cls(
        ssl_context=settings.ssl_context,
        proxy=httpcore_proxy(settings.proxy) if settings.proxy else None,
        network_backend=settings.network_backend,
        max_connections=MAX_CONNECTIONS,
        keepalive_expiry=KEEPALIVE_EXPIRY,
        retries=0,
    )
