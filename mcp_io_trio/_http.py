"""The Trio shell's HTTP transports: the machine's exchanges over httpcore (trio backend).

Streamable HTTP, plain HTTP and the deprecated HTTP+SSE differ only in the machine
(``config.type`` picks its strategy: what to send, what each answer means, the GET
stream, resumption, keep-alive). Here each ``StartExchange`` is performed and its head,
body chunks (still compressed) and end or failure are fed back; ``AbortExchange``
cancels it. Who performs it:

* the request a caller just started (the last POST its own call produced) is performed
  by the caller's task itself, as the round trip's one scheduler pass: it reads until
  its call has its answer, and hands what is left of the body (a POST's SSE stream goes
  on after the answer: issue 9, item 6) to a task that reads it to its end;
* everything else (GET streams, retries, notifications, resumptions, DELETE) is a task
  in the client's nursery.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Union

import httpcore
import trio

from mcp_io_common.http_target import HttpTarget
from mcp_io_common.httpcore_glue import (
    HTTPCORE_ERRORS,
    enc,
    exchange_failure,
    str_headers,
)
from mcp_proto.config import ServerConfig
from mcp_proto.connection import ExchangeFailure
from mcp_proto.connection import frames as fr
from mcp_proto.http_settings import RequestHeadersError

from ._base import BaseServer
from ._chunks import Next, read_chunks
from ._pool import AsyncConnectionPool
from ._waiter import _Waiter

__all__ = ["HttpServer", "SseServer", "StreamableHttpServer"]

_Pool = Union[AsyncConnectionPool, httpcore.AsyncConnectionPool]


class _Running:
    """One exchange: what to send, the pool it uses (closing waits for the exchanges
    on the pool it closes), the scope of whoever reads it (``AbortExchange`` cancels
    it) and its end."""

    __slots__ = ("aborted", "ended", "frame", "pool", "scope")

    def __init__(self, frame: fr.StartExchange, pool: _Pool) -> None:
        self.frame = frame
        self.pool = pool
        self.scope = trio.CancelScope()
        self.aborted = False
        self.ended = False


class _HttpServer(HttpTarget, BaseServer):
    """Runs the machine's HTTP exchanges on one connection pool per server."""

    _browser_module = "mcp_io_trio._oauth"
    _pool_class = AsyncConnectionPool
    _asynchronous = True

    _pool: _Pool | None

    def __init__(self, config: ServerConfig, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        self._exchanges: dict[int, _Running] = {}
        self._own: _Running | None = None  # see _start_exchange
        # Set when an exchange ends, while closing waits for some to end.
        self._some_ended: trio.Event | None = None
        # Headers as httpcore takes them, by the machine's tuple (a handful of distinct
        # ones per connection: per session and protocol version).
        self._heads: dict[tuple[tuple[str, str], ...], list[tuple[bytes, bytes]]] = {}

    async def _open_transport(self) -> None:
        self._open_pool()

    def _write(self, messages: list[bytes]) -> bool:  # pragma: no cover - stdio only
        raise TypeError("the machine asked an HTTP transport to write bytes")

    def _detach_transport(self, graceful: bool) -> Callable[[], Awaitable[None]]:
        pool, self._pool = self._pool, None
        if pool is None:
            return trio.lowlevel.checkpoint
        mine = [running for running in self._exchanges.values() if running.pool is pool]
        if not graceful:
            for running in mine:
                self._abort_exchange(running.frame.xid)

        async def close() -> None:
            """Close the pool once the exchanges already started on it (the DELETE)
            ended; a stream the machine did not abort is cut (bounded: read_timeout)."""
            with trio.move_on_after(self.read_timeout):
                while not all(running.ended for running in mine):
                    self._some_ended = self._some_ended or trio.Event()
                    await self._some_ended.wait()
            for running in mine:
                self._abort_exchange(running.frame.xid)
            await pool.aclose()

        return close

    # ------------------------------------------------------------ exchanges

    def _start_exchange(self, frame: fr.StartExchange, own: bool = False) -> None:
        pool = self._pool
        if pool is None:  # the machine opens the transport first: never expected
            self._conn.exchange_failed(
                frame.xid, ExchangeFailure("network", "no connection pool"), self._clock()
            )
            return
        running = self._exchanges[frame.xid] = _Running(frame, pool)
        if own:
            # Kept for the caller whose pump this is (BaseServer._pump); only its last.
            earlier, self._own = self._own, running
            if earlier is not None:
                self._spawn_own(earlier)
        else:
            self._spawn(self._exchange, running)

    def _take_own(self) -> Any:
        own, self._own = self._own, None
        return own

    def _spawn_own(self, own: Any) -> None:
        self._spawn(self._exchange, own)

    async def _run_own(self, own: Any, waiter: _Waiter, call_id: int) -> None:
        await self._perform_exchange(own, waiter, call_id)

    def _abort_exchange(self, xid: int) -> None:
        running = self._exchanges.get(xid)
        if running is not None:
            running.aborted = True
            running.scope.cancel()

    def _encoded(self, headers: tuple[tuple[str, str], ...]) -> list[tuple[bytes, bytes]]:
        heads = self._heads.get(headers)
        if heads is None:
            if len(self._heads) >= 16:
                self._heads.clear()
            heads = self._heads[headers] = enc(list(headers))
        return heads  # not mutated by either pool (both copy it)

    def _ended(self, running: _Running) -> None:
        self._exchanges.pop(running.frame.xid, None)
        running.ended = True
        if self._some_ended is not None:
            self._some_ended.set()
            self._some_ended = None

    async def _exchange(self, running: _Running) -> None:
        await self._perform_exchange(running)

    async def _perform_exchange(
        self, running: _Running, waiter: _Waiter | None = None, call_id: int | None = None
    ) -> None:
        """Perform one request and feed what happens to the machine (head, chunks, end
        or failure), until the machine needs nothing more of it or aborts it. With a
        ``waiter`` (a caller performing its own call's request), only until that call
        has its answer: the rest of the body is then read by a task of its own."""
        conn = self._conn
        frame = running.frame
        xid = frame.xid
        rest: Any = None  # (the body's iterator, its response context): handed over
        try:
            with running.scope:
                # ``async with`` by hand: the response may outlive this call.
                owner = self._stream(
                    running.pool,
                    frame,
                    self._encoded(frame.headers)
                    if self._http.request_headers is None
                    else enc(self._http.headers_for(frame.url, frame.headers)),
                )
                response = await owner.__aenter__()
                try:
                    conn.exchange_head(
                        xid, response.status, str_headers(response.headers), self._clock()
                    )
                    self._pump_nowait()
                    if not conn.wants_exchange(xid):
                        return
                    chunks = response.aiter_stream()

                    def on_chunk(chunk: bytes) -> Next:
                        conn.exchange_data(xid, chunk, self._clock())
                        self._pump_nowait()
                        if not conn.wants_exchange(xid):
                            return Next.STOP
                        return Next.PAUSE if waiter is not None and waiter.done else Next.GO

                    what = await read_chunks(chunks, on_chunk)
                    if what is Next.PAUSE:
                        rest = (chunks, owner)
                    elif what is Next.GO:
                        conn.exchange_end(xid, self._clock())
                        self._pump_nowait()
                finally:
                    if rest is None:
                        await owner.__aexit__(None, None, None)  # (uncancellable: _pool._Stream)
        except (*HTTPCORE_ERRORS, RequestHeadersError) as exc:
            if not running.aborted:
                conn.exchange_failed(xid, exchange_failure(exc), self._clock())
                self._pump_nowait()
        except trio.Cancelled:
            # The caller performing its own request was cancelled: the exchange is cut.
            # Its call is cancelled in the machine first (which then wants nothing more
            # of the exchange); if the machine still wants it, it learns it broke.
            if call_id is not None:
                self._abandon(call_id)
            if waiter is not None and not running.aborted and conn.wants_exchange(xid):
                failure = ExchangeFailure("network", "the caller was cancelled")
                conn.exchange_failed(xid, failure, self._clock())
                self._pump_nowait()
            raise
        finally:
            if rest is not None:
                running.scope = trio.CancelScope()
                if running.aborted:
                    running.scope.cancel()
                if not self._spawn(self._read_rest, running, *rest):
                    running.scope.cancel()  # no task to read it: the rest is dropped
                    with trio.CancelScope(shield=True):
                        await self._read_rest(running, *rest)
                    rest = None
            if rest is None:
                self._ended(running)

    async def _read_rest(self, running: _Running, chunks: AsyncIterator[bytes], owner: Any) -> None:
        """Read on a body whose caller has its answer (a POST's SSE stream may carry
        notifications after the result: issue 9, item 6), to its end."""
        conn = self._conn
        xid = running.frame.xid

        def on_chunk(chunk: bytes) -> Next:
            conn.exchange_data(xid, chunk, self._clock())
            self._pump_nowait()
            return Next.GO if conn.wants_exchange(xid) else Next.STOP

        try:
            with running.scope:
                if await read_chunks(chunks, on_chunk) is Next.GO:
                    conn.exchange_end(xid, self._clock())
                    self._pump_nowait()
        except HTTPCORE_ERRORS as exc:
            if not running.aborted:
                conn.exchange_failed(xid, exchange_failure(exc), self._clock())
                self._pump_nowait()
        finally:
            with trio.CancelScope(shield=True):
                await owner.__aexit__(None, None, None)
            self._ended(running)


class StreamableHttpServer(_HttpServer):
    """Streamable HTTP (2025-11-25 § Transports)."""

    type = "streamable_http"


class HttpServer(_HttpServer):
    """Plain HTTP: JSON over POST, no channel for server requests (HTTP-4)."""

    type = "http"


class SseServer(_HttpServer):
    """The deprecated HTTP+SSE transport (2024-11-05)."""

    type = "sse"
