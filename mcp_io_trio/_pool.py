"""A small pool of HTTP/1.1 connections for the Trio shell (no proxy).

The twin of ``mcp_io_sync._pool`` (see there for why); which connection a request
gets, when an idle one is reused and what closing closes are the rules of
:class:`mcp_io_common.pool.PoolState`, applied by ``mcp_io_common.pool.PoolFront``,
shared with it. Here is their I/O and waiting. ``http://`` connections are
:class:`~mcp_io_trio._plain.PlainConnection` (h11 driven directly), ``https://`` ones
``httpcore.AsyncHTTPConnection`` (:class:`_TlsConnection`) on httpcore's Trio backend.
Closing a connection is shielded from cancellation, as in httpcore's pool.

Fewer scheduler passes per request than httpcore's own pool and stream: every trio
checkpoint that does not block is still a trip through the scheduler (an ``epoll_wait``,
the run queue, the task's coroutine chain), and httpcore takes six per request: its
per-connection ``trio.Lock`` three times (request, state, response closed) and one per
``send``/``recv`` of trio's socket. Here:

* plain TCP connections get :class:`_FastStream` (a raw non-blocking socket, the
  syscall tried first, ``trio.lowlevel.wait_readable``/``wait_writable`` only when it
  would block): a write is no scheduler pass unless the socket is full (it still
  raises ``Cancelled`` first if the task is cancelled, as trio's sockets do), every read
  is exactly one (the wait, or a yield when data was already there), so a
  request/response costs one pass instead of six; ``https`` keeps httpcore's stream
  (trio's ``SSLStream``) and so its certificate verification unchanged;
* httpcore's per-connection locks are replaced by no-op ones (:class:`_Exclusive`): they
  guard against two requests on one connection at a time, which this pool never does
  (a connection is either idle in the list or held by exactly one request).
"""

from __future__ import annotations

import math
import socket
import ssl
from collections.abc import Coroutine, Iterable
from typing import Any, TypeAlias

import httpcore
import trio

try:  # httpcore's private lock type: if it moves, the locks are simply left in place
    from httpcore._synchronization import AsyncLock
except ImportError:  # pragma: no cover - a future httpcore

    class AsyncLock:  # type: ignore[no-redef]
        async def __aenter__(self) -> object:
            return self

        async def __aexit__(self, *exc: object) -> None:
            return None


from mcp_io_common.pool import PoolFront, PoolRequest, PoolStream
from mcp_io_common.socket_stream import SocketStreamBase

from ._plain import PlainConnection, PlainResponse

_Connection: TypeAlias = "_TlsConnection | PlainConnection"
_Response = httpcore.Response | PlainResponse

__all__ = ["AsyncConnectionPool", "FastBackend"]

_wait_readable = trio.lowlevel.wait_readable
_wait_writable = trio.lowlevel.wait_writable
_checkpoint_if_cancelled = trio.lowlevel.checkpoint_if_cancelled
_cancel_shielded_checkpoint = trio.lowlevel.cancel_shielded_checkpoint


class FastBackend(httpcore.TrioBackend):
    """httpcore's Trio backend for connecting (``trio.open_tcp_stream``: happy eyeballs,
    ``TCP_NODELAY``, httpcore's connect errors and timeouts), then a leaner stream over
    the connected socket; see :class:`_FastStream`."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        stream = await super().connect_tcp(host, port, timeout, local_address, socket_options)
        tsock = stream.get_extra_info("socket")
        if not isinstance(tsock, trio.socket.SocketType):  # never expected: keep httpcore's
            return stream
        # The trio socket hands its descriptor over; nothing else refers to it.
        return _FastStream(socket.socket(fileno=tsock.detach()))


class _FastStream(SocketStreamBase, httpcore.AsyncNetworkStream):
    """A plain TCP stream on a raw non-blocking socket, with trio's socket semantics
    (and httpcore's exceptions) but fewer scheduler passes.

    * ``write``: ``Cancelled`` if the task is already cancelled (nothing is sent), then
      ``send`` until done; only a full socket waits (``wait_writable``: a checkpoint).
      No scheduler pass otherwise: the request's read that follows is one.
    * ``read``: exactly one checkpoint per call, as a trio socket: ``recv`` is tried
      first; data there → a yield that cannot be cancelled (the data is not lost);
      ``BlockingIOError`` → ``wait_readable`` (cancellable), then ``recv`` again.

    Timeouts wrap only the waits (``httpcore.ReadTimeout`` / ``WriteTimeout``). A socket
    closed by another task (``aclose`` calls ``notify_closing``) wakes its waiter with
    ``ReadError`` / ``WriteError``, as httpcore's trio stream does."""

    def __init__(self, sock: socket.socket) -> None:
        self._setup(sock)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        await _checkpoint_if_cancelled()
        if (data := self._recv(max_bytes)) is not None:
            await _cancel_shielded_checkpoint()
            return data
        sock = self._sock
        deadline = math.inf if timeout is None else trio.current_time() + timeout
        while True:
            try:
                if deadline == math.inf:
                    await _wait_readable(sock)
                else:
                    with trio.move_on_at(deadline) as scope:
                        await _wait_readable(sock)
                    if scope.cancelled_caught:
                        raise httpcore.ReadTimeout("timed out")
            except trio.ClosedResourceError as exc:
                raise httpcore.ReadError(str(exc) or "the connection was closed") from exc
            if (data := self._recv(max_bytes)) is not None:
                return data

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        await _checkpoint_if_cancelled()
        sock = self._sock
        try:
            sent = sock.send(buffer)
        except BlockingIOError:
            sent = 0
        except OSError as exc:
            raise httpcore.WriteError(str(exc)) from exc
        if sent == len(buffer):
            return
        view = memoryview(buffer)[sent:]
        deadline = math.inf if timeout is None else trio.current_time() + timeout
        while view:
            try:
                if deadline == math.inf:
                    await _wait_writable(sock)
                else:
                    with trio.move_on_at(deadline) as scope:
                        await _wait_writable(sock)
                    if scope.cancelled_caught:
                        raise httpcore.WriteTimeout("timed out")
                view = view[sock.send(view) :]
            except BlockingIOError:
                continue
            except (OSError, trio.ClosedResourceError) as exc:
                raise httpcore.WriteError(str(exc) or "the connection was closed") from exc

    async def aclose(self) -> None:
        sock = self._sock
        if sock.fileno() != -1:
            # Wake any task waiting on this socket (ClosedResourceError) before the
            # descriptor is released: trio requires it for raw descriptors.
            trio.lowlevel.notify_closing(sock)
            sock.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        # Not on the pool's path (https connections are made by httpcore's backend);
        # for completeness, hand the socket back to httpcore's own trio stream.
        from httpcore._backends.trio import TrioStream

        plain = TrioStream(trio.SocketStream(trio.socket.from_stdlib_socket(self._sock)))
        return await plain.start_tls(ssl_context, server_hostname, timeout)


class _Exclusive(AsyncLock):
    """A no-op in place of httpcore's per-connection locks: this pool gives a connection
    to one request at a time, and an uncontended ``trio.Lock`` still costs a scheduler
    pass per acquire."""

    async def __aenter__(self) -> _Exclusive:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None


_EXCLUSIVE = _Exclusive()


class _Body:
    """A request body for httpcore, as its ``ByteStream`` but an iterator object rather
    than an async generator: trio registers every async generator it sees, and one left
    unfinished (a request cancelled while its body is being written) is reported with a
    ``ResourceWarning`` when collected."""

    __slots__ = ("_data", "_sent")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._sent = False

    def __aiter__(self) -> _Body:
        self._sent = False
        return self

    async def __anext__(self) -> bytes:
        if self._sent:
            raise StopAsyncIteration
        self._sent = True
        return self._data


def _exclusive(obj: object, name: str) -> None:
    """Replace ``obj.<name>`` (an httpcore lock) with the no-op, if it is one."""
    if isinstance(getattr(obj, name, None), AsyncLock):
        setattr(obj, name, _EXCLUSIVE)


class _TlsConnection(httpcore.AsyncHTTPConnection):
    """httpcore's connection for ``https`` (its TLS and HTTP/1.1), its locks the no-op
    (:class:`_Exclusive`) and its request body a :class:`_Body`, taking a request as
    the plain connection does."""

    def __init__(
        self,
        origin: httpcore.Origin,
        ssl_context: ssl.SSLContext | None,
        network_backend: httpcore.AsyncNetworkBackend,
    ) -> None:
        super().__init__(origin, ssl_context, network_backend=network_backend)
        _exclusive(self, "_request_lock")

    async def send(self, req: PoolRequest) -> httpcore.Response:
        content = req.content
        request = req.httpcore_request(None if content is None else _Body(content))
        response = await self.handle_async_request(request)
        http11 = self._connection  # made by the connection's first request
        if getattr(http11, "_state_lock", _EXCLUSIVE) is not _EXCLUSIVE:
            _exclusive(http11, "_state_lock")
        return response


class _Stream(PoolStream["AsyncConnectionPool", "_Connection", "_Response"]):
    """``async with pool.stream(...) as response``."""

    # Set by __aenter__ with the connection; read by __aexit__ only when one was got.
    __slots__ = ("_bare",)

    async def __aenter__(self) -> _Response:
        pool, req = self._pool, self._request
        conn = await pool._acquire(req.target.origin, req.timeouts.get("pool"))
        try:
            response = await conn.send(req)
        except BaseException:
            await pool._release(conn)  # the connection closed itself already
            raise
        # Closing the response of a plain connection on _FastStream has no checkpoint:
        # it cannot be cancelled half-way, so needs no shielded scope.
        self._bare = type(getattr(conn, "stream", None)) is _FastStream
        self._conn, self._response = conn, response
        return response

    async def __aexit__(self, *exc: object) -> None:
        taken = self._taken()
        if taken is None:
            return
        conn, response = taken
        try:
            if self._bare:
                await response.aclose()
            else:
                with trio.CancelScope(shield=True):
                    await response.aclose()
        finally:
            await self._pool._release(conn)


class AsyncConnectionPool(
    PoolFront[
        "_Connection", "_Stream", Coroutine[Any, Any, _Response], httpcore.AsyncNetworkBackend
    ]
):
    """Keep-alive HTTP/1.1 connections to one or a few origins, for one Trio run: the
    rules are :class:`~mcp_io_common.pool.PoolState`'s; a ``trio.Semaphore`` holds the
    slots (so a freed slot goes to the longest waiter). ``stream()``, ``request()`` and
    the choice of a connection: see ``PoolFront``."""

    _stream_class = _Stream
    _plain_class = PlainConnection
    _tls_class = _TlsConnection
    _httpcore_backend = httpcore.TrioBackend

    def _lean_backend(self) -> httpcore.AsyncNetworkBackend:
        return FastBackend()

    def _make_slots(self, limit: int) -> None:
        self._slots = trio.Semaphore(limit)

    # ------------------------------------------------------------ requests

    async def _read_all(self, stream: _Stream) -> _Response:
        async with stream as response:
            await response.aread()
        return response

    async def _acquire(self, origin: httpcore.Origin, timeout: float | None) -> _Connection:
        try:
            # No scheduler pass when a slot is free: the request's own I/O checkpoints.
            self._slots.acquire_nowait()
        except trio.WouldBlock:
            with trio.move_on_after(math.inf if timeout is None else timeout) as scope:
                await self._slots.acquire()
            if scope.cancelled_caught:
                raise httpcore.PoolTimeout(
                    "no connection became free within the pool timeout"
                ) from None
        state = self._state
        state.take_slot()
        try:
            now = trio.current_time()
            conn, closing = self._checkout(origin, now, state.pop_idle(now))
            for old in closing:
                await self._close(old)
        except BaseException:
            state.give_slot()
            self._slots.release()
            raise
        return conn

    async def _release(self, conn: _Connection) -> None:
        """The response is closed: keep the connection if it is reusable."""
        keep = self._state.check_in(conn, trio.current_time())
        self._slots.release()
        if not keep:
            await self._close(conn)

    @staticmethod
    async def _close(conn: _Connection) -> None:
        with trio.CancelScope(shield=True):
            try:
                await conn.aclose()
            except Exception:  # a socket already broken may fail to close
                pass

    # ------------------------------------------------------------ lifetime

    async def aclose(self) -> None:
        """Close every connection (``PoolState.close``)."""
        for conn in self._state.close():
            await self._close(conn)

    async def __aenter__(self) -> AsyncConnectionPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
