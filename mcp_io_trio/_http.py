"""The Trio shell's HTTP transports: the machine's exchanges over httpcore (trio backend).

Streamable HTTP, plain HTTP and the deprecated HTTP+SSE differ only in the machine
(``config.type`` picks its strategy: what to send, what each answer means, the GET
stream, resumption, keep-alive). Here each ``StartExchange`` is one task in the client's
nursery that performs the request and feeds the head, the body chunks (still
compressed) and the end or failure back; ``AbortExchange`` cancels that task. So a
POST's SSE stream is read to its end after its caller got the answer, and the GET
streams run in the background, without anyone waiting for them.
"""

from __future__ import annotations

import ssl
from collections.abc import Awaitable, Callable
from typing import Any, Union

import httpcore
import trio

from mcp_io_common.httpcore_glue import HTTPCORE_ERRORS, MAX_CONNECTIONS, enc, str_headers
from mcp_proto.config import ServerConfig
from mcp_proto.connection import ExchangeFailure
from mcp_proto.connection import frames as fr
from mcp_proto.connection.frames import FailureKind

from ._base import BaseServer
from ._chunks import read_chunks
from ._pool import AsyncConnectionPool

__all__ = ["HttpServer", "SseServer", "StreamableHttpServer"]

_Pool = Union[AsyncConnectionPool, httpcore.AsyncConnectionPool]


def _failure(exc: Exception) -> ExchangeFailure:
    """What went wrong, in the machine's words (it decides what that means)."""
    kind: FailureKind
    if isinstance(exc, httpcore.ReadTimeout):
        kind = "read_timeout"
    elif isinstance(exc, httpcore.TimeoutException):
        kind = "timeout"
    elif isinstance(exc, (httpcore.ProtocolError, httpcore.UnsupportedProtocol)):
        kind = "protocol"
    else:
        kind = "network"
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return ExchangeFailure(kind, detail)


class _Running:
    """One exchange's task: its scope (``AbortExchange`` cancels it), the pool it
    uses (closing waits for the exchanges on the pool it closes) and its end."""

    __slots__ = ("done", "pool", "scope")

    def __init__(self, pool: _Pool) -> None:
        self.pool = pool
        self.scope = trio.CancelScope()
        self.done = trio.Event()


class _HttpServer(BaseServer):
    """Runs the machine's HTTP exchanges on one connection pool per server."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        ssl_context: ssl.SSLContext | None = None,
        proxy: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(config, **kwargs)
        if config.endpoint_url is None:
            raise ValueError(f"server {self.name!r}: an HTTP transport needs a URL")
        self.url: str = config.endpoint_url
        self._ssl_context = ssl_context
        self._proxy = proxy
        self._pool: _Pool | None = None
        self._exchanges: dict[int, _Running] = {}

    def _new_pool(self) -> _Pool:
        # TLS verification stays on unless the caller hands in its own context.
        if self._proxy:
            return httpcore.AsyncConnectionPool(
                ssl_context=self._ssl_context,
                proxy=httpcore.Proxy(self._proxy),
                max_connections=MAX_CONNECTIONS,
                retries=0,
            )
        return AsyncConnectionPool(ssl_context=self._ssl_context, max_connections=MAX_CONNECTIONS)

    async def _open_transport(self) -> None:
        if self._pool is None:
            self._pool = self._new_pool()

    def _write(self, messages: list[bytes]) -> bool:  # pragma: no cover - stdio only
        raise TypeError("the machine asked an HTTP transport to write bytes")

    def _detach_transport(self, graceful: bool) -> Callable[[], Awaitable[None]]:
        pool, self._pool = self._pool, None
        if pool is None:
            return trio.lowlevel.checkpoint
        mine = [running for running in self._exchanges.values() if running.pool is pool]
        if not graceful:
            for running in mine:
                running.scope.cancel()

        async def close() -> None:
            """Close the pool once the exchanges already started on it (the DELETE)
            ended; a stream the machine did not abort is cut (bounded: read_timeout)."""
            with trio.move_on_after(self.read_timeout):
                for running in mine:
                    await running.done.wait()
            for running in mine:
                running.scope.cancel()
            await pool.aclose()

        return close

    # ------------------------------------------------------------ exchanges

    def _start_exchange(self, frame: fr.StartExchange) -> None:
        pool = self._pool
        if pool is None:  # the machine opens the transport first: never expected
            self._conn.exchange_failed(
                frame.xid, ExchangeFailure("network", "no connection pool"), trio.current_time()
            )
            return
        running = self._exchanges[frame.xid] = _Running(pool)
        self._nursery().start_soon(self._exchange, frame, running)

    def _abort_exchange(self, xid: int) -> None:
        running = self._exchanges.get(xid)
        if running is not None:
            running.scope.cancel()

    def _timeouts(self, read: float | None) -> dict[str, Any]:
        rt = self.read_timeout
        return {"timeout": {"connect": rt, "write": rt, "pool": rt, "read": read}}

    async def _exchange(self, frame: fr.StartExchange, running: _Running) -> None:
        """Perform one request and feed what happens to the machine (head, chunks, end
        or failure), until the machine needs nothing more of it or aborts it."""
        conn = self._conn
        xid = frame.xid
        scope, pool = running.scope, running.pool
        try:
            with scope:
                async with pool.stream(
                    frame.method.encode("ascii"),
                    frame.url,
                    headers=enc(list(frame.headers)),
                    content=frame.body,
                    extensions=self._timeouts(frame.read_timeout),
                ) as response:
                    conn.exchange_head(
                        xid, response.status, str_headers(response.headers), trio.current_time()
                    )
                    self._pump_nowait()
                    if not conn.wants_exchange(xid):
                        return

                    def on_chunk(chunk: bytes) -> bool:
                        conn.exchange_data(xid, chunk, trio.current_time())
                        self._pump_nowait()
                        return conn.wants_exchange(xid)

                    if await read_chunks(response.aiter_stream(), on_chunk):
                        conn.exchange_end(xid, trio.current_time())
                        self._pump_nowait()
        except HTTPCORE_ERRORS as exc:
            if not scope.cancel_called:
                conn.exchange_failed(xid, _failure(exc), trio.current_time())
                self._pump_nowait()
        finally:
            self._exchanges.pop(xid, None)
            running.done.set()


class StreamableHttpServer(_HttpServer):
    """Streamable HTTP (2025-11-25 § Transports)."""

    type = "streamable_http"


class HttpServer(_HttpServer):
    """Plain HTTP: JSON over POST, no channel for server requests (HTTP-4)."""

    type = "http"


class SseServer(_HttpServer):
    """The deprecated HTTP+SSE transport (2024-11-05)."""

    type = "sse"
