"""A small pool of httpcore HTTP/1.1 connections for the blocking shell (no proxy).

``httpcore.ConnectionPool`` rescans every connection and every queued request whenever
a request starts or ends (``_assign_requests_to_connections``: an ``is_idle`` and a
socket ``poll`` per idle connection, under one lock), which dominates the client's CPU
once dozens of requests are in flight. Our transports talk to one origin, so the pool
they need is simpler: a LIFO list of idle keep-alive connections and a bound on how many
connections exist. ``https://`` connections are ``httpcore.HTTPConnection`` (public
API; :class:`_TlsConnection` only adds ``send``): they connect and do TLS lazily, on
their first request, exactly as inside httpcore's pool. ``http://`` ones are
:class:`~mcp_io_sync._plain.PlainConnection`: connected the same way (this module's
``FastBackend``), with h11 driven directly by ``mcp_io_common.http11`` (httpcore's
HTTP/1.1 layer costs a fifth of a request).
Proxies keep ``httpcore.ConnectionPool`` (see ``HttpTarget._new_pool`` in
``mcp_io_common/http_target.py``).

Which connection a request gets, when an idle one is reused and what closing closes are
:class:`mcp_io_common.pool.PoolState`'s rules, applied by ``PoolFront`` (both shared
with the Trio shell's pool); here is only their I/O: a ``threading.Condition`` for the
slots, the lean stream's waits and writes, and closing.
"""

from __future__ import annotations

import select
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable
from typing import TypeAlias

import httpcore

from mcp_io_common.pool import PoolFront, PoolRequest, PoolStream
from mcp_io_common.socket_stream import SocketStreamBase

from ._plain import PlainConnection, PlainResponse

_Connection: TypeAlias = "_TlsConnection | PlainConnection"
_Response = httpcore.Response | PlainResponse

__all__ = ["ConnectionPool", "FastBackend"]


class FastBackend(httpcore.SyncBackend):
    """httpcore's own sync backend for connecting (and TLS), with a leaner stream for
    plain TCP connections; see :class:`_FastStream`."""

    def __init__(self, busy: Callable[[], bool] = bool) -> None:
        self._busy = busy

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        stream = super().connect_tcp(host, port, timeout, local_address, socket_options)
        sock = stream.get_extra_info("socket")
        if type(sock) is not socket.socket:  # never expected: keep httpcore's stream
            return stream
        return _FastStream(stream, sock, self._busy)


class _FastStream(SocketStreamBase, httpcore.NetworkStream):
    """A plain TCP stream with fewer system calls per request than httpcore's.

    httpcore's sync stream calls ``settimeout`` before every read and write (an
    ``ioctl``), and with a timeout every ``recv``/``send`` is preceded by a ``poll``;
    each of these releases and re-takes the GIL, which with many threads means a thread
    switch each. Here the socket stays non-blocking: a read or write is tried first and
    ``poll`` waits only when the socket is not ready. Writes may also be held back until
    the next read (HTTP/1.1 request/response: httpcore writes the request head and then
    the body, then reads), so a request goes out in one ``send`` — but only while other
    requests are in flight on the pool (``busy``): alone, sending the head at once lets
    the server parse it while the body follows, which answers sooner.

    Errors and timeouts are httpcore's (``ReadTimeout``, ``ReadError``, ``WriteTimeout``,
    ``WriteError``), as its own stream raises them. ``start_tls`` hands the socket back
    to httpcore's stream (TLS connections use httpcore's stream unchanged)."""

    def __init__(
        self, inner: httpcore.NetworkStream, sock: socket.socket, busy: Callable[[], bool]
    ) -> None:
        self._setup(sock)
        self._inner = inner
        self._busy = busy
        self._out: list[bytes] = []
        self._out_timeout: float | None = None
        self._fd = sock.fileno()
        self._poll = select.poll()
        self._poll.register(self._fd, select.POLLIN)

    def _wait(self, events: int, deadline: float | None) -> bool:
        """Wait until the socket is ready for ``events``; False on timeout."""
        self._poll.modify(self._fd, events)  # a closed socket polls as POLLNVAL: ready
        while True:
            if deadline is None:
                ms = None
            else:
                ms = max(0, int((deadline - time.monotonic()) * 1000 + 0.999))
            if self._poll.poll(ms):
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if buffer:
            self._out.append(buffer)
            self._out_timeout = timeout
            if not self._busy():
                self._flush()

    def _flush(self) -> None:
        out = self._out
        data = out[0] if len(out) == 1 else b"".join(out)
        out.clear()
        timeout = self._out_timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        sock = self._sock
        view = memoryview(data)
        try:
            while view:
                try:
                    view = view[sock.send(view) :]
                except BlockingIOError:
                    if not self._wait(select.POLLOUT, deadline):
                        raise httpcore.WriteTimeout("timed out") from None
        except OSError:
            # As httpcore does with a failed request write: go on to read; the server may
            # have answered (e.g. an error response) before it closed, and if not, the
            # read fails at once.
            pass

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._out:
            # A request just went out: its answer cannot be there yet, so wait first.
            self._flush()
        elif (data := self._recv(max_bytes)) is not None:
            return data
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if not self._wait(select.POLLIN, deadline):
                raise httpcore.ReadTimeout("timed out")
            if (data := self._recv(max_bytes)) is not None:
                return data

    def close(self) -> None:
        self._out.clear()
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        # httpcore's stream sets its own timeout (and so the blocking mode) first.
        return self._inner.start_tls(ssl_context, server_hostname, timeout)


class _TlsConnection(httpcore.HTTPConnection):
    """httpcore's connection for ``https`` (its TLS and HTTP/1.1, unchanged), taking a
    request as the plain connection does."""

    def send(self, req: PoolRequest) -> httpcore.Response:
        return self.handle_request(req.httpcore_request(req.content))


class _Stream(PoolStream["ConnectionPool", "_Connection", "_Response"]):
    """``with pool.stream(...) as response``."""

    __slots__ = ()

    def __enter__(self) -> _Response:
        pool, req = self._pool, self._request
        conn = pool._acquire(req.target.origin, req.timeouts.get("pool"))
        try:
            response = conn.send(req)
        except BaseException:
            pool._release(conn)  # the connection closed itself already
            raise
        self._conn, self._response = conn, response
        return response

    def __exit__(self, *exc: object) -> None:
        taken = self._taken()
        if taken is None:
            return
        conn, response = taken
        try:
            response.close()
        finally:
            self._pool._release(conn)


class ConnectionPool(PoolFront["_Connection", "_Stream", "_Response", httpcore.NetworkBackend]):
    """Keep-alive HTTP/1.1 connections to one or a few origins, thread-safe: the rules
    are :class:`~mcp_io_common.pool.PoolState`'s, called under one lock; waiting for a
    slot, connecting and closing happen outside it. ``stream()``, ``request()`` and
    the choice of a connection: see ``PoolFront``."""

    _stream_class = _Stream
    _plain_class = PlainConnection
    _tls_class = _TlsConnection
    _httpcore_backend = httpcore.SyncBackend

    def _lean_backend(self) -> httpcore.NetworkBackend:
        return FastBackend(self._busy)

    def _make_slots(self, limit: int) -> None:
        # PoolState.has_slot is the condition; a released slot notifies one waiter.
        self._cond = threading.Condition(self._lock)

    def _busy(self) -> bool:
        """More than one request in flight (read without the lock: a hint)."""
        return self._state.in_use > 1

    # ------------------------------------------------------------ requests

    def _read_all(self, stream: _Stream) -> _Response:
        with stream as response:
            response.read()
        return response

    def _acquire(self, origin: httpcore.Origin, timeout: float | None) -> _Connection:
        cond, state = self._cond, self._state
        with cond:
            if not state.has_slot() and not cond.wait_for(state.has_slot, timeout):
                raise httpcore.PoolTimeout("no connection became free within the pool timeout")
            state.take_slot()
            now = time.monotonic()  # after any wait for the slot
            popped = state.pop_idle(now)
        try:
            conn, closing = self._checkout(origin, now, popped)
            if closing:
                self._close_all(closing)
        except BaseException:
            with cond:
                state.give_slot()
                cond.notify()
            raise
        return conn

    def _release(self, conn: _Connection) -> None:
        """The response is closed: keep the connection if it is reusable."""
        with self._cond:
            keep = self._state.check_in(conn, time.monotonic())
            self._cond.notify()
        if not keep:
            self._close_quietly(conn)

    @classmethod
    def _close_all(cls, conns: list[_Connection]) -> None:
        for conn in conns:
            cls._close_quietly(conn)

    @staticmethod
    def _close_quietly(conn: _Connection) -> None:
        try:
            conn.close()
        except Exception:  # a socket already broken may fail to close
            pass

    # ------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Close every connection (``PoolState.close``)."""
        with self._cond:
            conns = self._state.close()
        self._close_all(conns)

    def __enter__(self) -> ConnectionPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
