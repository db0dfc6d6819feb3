"""A small pool of httpcore HTTP/1.1 connections for the blocking shell (no proxy).

``httpcore.ConnectionPool`` rescans every connection and every queued request whenever
a request starts or ends (``_assign_requests_to_connections``: an ``is_idle`` and a
socket ``poll`` per idle connection, under one lock), which dominates the client's CPU
once dozens of requests are in flight. Our transports talk to one origin, so the pool
they need is simpler: a LIFO list of idle keep-alive connections and a bound on how many
connections exist. ``https://`` connections are ``httpcore.HTTPConnection`` (public
API): they connect and do TLS lazily, on their first request, exactly as inside
httpcore's pool. ``http://`` ones are :class:`~mcp_io_sync._plain.PlainConnection`:
connected the same way (this module's ``FastBackend``), with h11 driven directly by
``mcp_io_common.http11`` (httpcore's HTTP/1.1 layer costs a fifth of a request).
Proxies keep ``httpcore.ConnectionPool`` (see ``_http._HttpServer._new_pool``).

Rules:

* a request takes a *slot* (at most ``max_connections`` at a time; it waits for one up
  to the ``pool`` timeout, then ``httpcore.PoolTimeout``), then the most recently
  released idle connection to its origin, or a new one;
* an idle connection is reused only if it is still available and the server has not
  closed it meanwhile (``has_expired``: one ``poll`` of its socket);
* a connection goes back to the idle list only if its response was read to the end
  (httpcore's HTTP/1.1 state machine is back at idle); anything else (an error, an
  abandoned body, a closed pool) closes it;
* ``close()`` closes every connection, idle or in use (as httpcore's pool does).

Since a new connection is only made when no idle one is left, the pool never holds more
than ``max_connections`` open connections.
"""

from __future__ import annotations

import select
import socket
import ssl
import threading
import time
import types
from collections.abc import Callable
from typing import Any

import httpcore

from mcp_io_common.httpcore_glue import RequestTarget as _Target

from ._plain import PlainConnection, PlainResponse

_Connection = httpcore.HTTPConnection | PlainConnection
_Response = httpcore.Response | PlainResponse

__all__ = ["ConnectionPool", "FastBackend"]


class FastBackend(httpcore.NetworkBackend):
    """httpcore's own sync backend for connecting (and TLS), with a leaner stream for
    plain TCP connections; see :class:`_FastStream`."""

    def __init__(self, busy: Callable[[], bool] = bool) -> None:
        self._inner = httpcore.SyncBackend()
        self._busy = busy

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(
            host, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )
        sock = stream.get_extra_info("socket")
        if type(sock) is not socket.socket:  # never expected: keep httpcore's stream
            return stream
        return _FastStream(stream, sock, self._busy)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.NetworkStream:  # pragma: no cover - not used by the transports
        return self._inner.connect_unix_socket(path, timeout, socket_options)

    def sleep(self, seconds: float) -> None:  # pragma: no cover - only for connect retries
        time.sleep(seconds)


class _FastStream(httpcore.NetworkStream):
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
        self._inner = inner
        self._busy = busy
        self._sock = sock
        self._out: list[bytes] = []
        self._out_timeout: float | None = None
        self._fd = sock.fileno()
        self._poll = select.poll()
        self._poll.register(self._fd, select.POLLIN)
        sock.setblocking(False)

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
        sock = self._sock
        if self._out:
            # A request just went out: its answer cannot be there yet, so wait first.
            self._flush()
        else:
            try:
                return sock.recv(max_bytes)
            except BlockingIOError:
                pass
            except OSError as exc:
                raise httpcore.ReadError(str(exc)) from exc
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if not self._wait(select.POLLIN, deadline):
                raise httpcore.ReadTimeout("timed out")
            try:
                return sock.recv(max_bytes)
            except BlockingIOError:
                continue
            except OSError as exc:
                raise httpcore.ReadError(str(exc)) from exc

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

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class ConnectionPool:
    """Keep-alive HTTP/1.1 connections to one or a few origins, thread-safe.

    ``stream()`` and ``request()`` take the same arguments as httpcore's pool
    (``headers`` as a list of byte pairs, without ``Host``/``Content-Length``: they are
    added here, as httpcore does)."""

    def __init__(
        self,
        *,
        ssl_context: ssl.SSLContext | None = None,
        max_connections: int = 32,
        network_backend: httpcore.NetworkBackend | None = None,
    ) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self._ssl_context = ssl_context
        self._max = max_connections
        # Plain TCP gets the lean stream; TLS stays entirely httpcore's.
        self._backend = network_backend or FastBackend(self._busy)
        self._tls_backend = network_backend or httpcore.SyncBackend()
        self._cond = threading.Condition(threading.Lock())
        self._idle: list[_Connection] = []  # LIFO: the warmest last
        self._all: set[_Connection] = set()  # every open connection
        self._in_use = 0
        self._closed = False
        self._targets: dict[str, _Target] = {}

    # ------------------------------------------------------------ introspection

    @property
    def connections(self) -> int:
        """How many connections are open (idle or in use)."""
        return len(self._all)

    @property
    def idle(self) -> int:
        return len(self._idle)

    def _busy(self) -> bool:
        """More than one request in flight (read without the lock: a hint)."""
        return self._in_use > 1

    # ------------------------------------------------------------ requests

    def stream(
        self,
        method: bytes,
        url: str,
        *,
        headers: list[tuple[bytes, bytes]],
        content: bytes | None = None,
        extensions: dict[str, Any] | None = None,
    ) -> _Stream:
        """A context manager yielding the response; leaving it closes the response
        and gives the connection back (kept only if the body was read to its end)."""
        return _Stream(self, method, url, headers, content, extensions or {})

    def request(
        self,
        method: bytes,
        url: str,
        *,
        headers: list[tuple[bytes, bytes]],
        content: bytes | None = None,
        extensions: dict[str, Any] | None = None,
    ) -> _Response:
        """Send a request and read its whole body."""
        with self.stream(
            method, url, headers=headers, content=content, extensions=extensions
        ) as response:
            response.read()
        return response

    def _target(self, url: str) -> _Target:
        target = self._targets.get(url)
        if target is None:
            target = _Target(url)
            if len(self._targets) < 16:  # a handful of URLs per server; never grows
                self._targets[url] = target
        return target

    def _acquire(self, origin: httpcore.Origin, timeout: float | None) -> _Connection:
        cond = self._cond
        with cond:
            if self._in_use >= self._max and not cond.wait_for(
                lambda: self._in_use < self._max, timeout
            ):
                raise httpcore.PoolTimeout("no connection became free within the pool timeout")
            self._in_use += 1
            conn = self._idle.pop() if self._idle else None
        try:
            while conn is not None:
                # A server may close an idle keep-alive connection at any time: a
                # readable idle socket means it did (has_expired polls it).
                if (
                    conn.can_handle_request(origin)
                    and conn.is_available()
                    and not conn.has_expired()
                ):
                    return conn
                self._discard(conn)
                with cond:
                    conn = self._idle.pop() if self._idle else None
            if origin.scheme == b"http":
                # Plain HTTP: h11 driven directly (see _plain); TLS stays httpcore's.
                conn = PlainConnection(origin, self._backend)
            else:
                conn = httpcore.HTTPConnection(
                    origin=origin, ssl_context=self._ssl_context, network_backend=self._tls_backend
                )
            with cond:
                self._all.add(conn)
            return conn
        except BaseException:
            with cond:
                self._in_use -= 1
                cond.notify()
            raise

    def _release(self, conn: _Connection) -> None:
        """The response is closed: keep the connection if it is reusable."""
        keep = conn.is_available()
        with self._cond:
            self._in_use -= 1
            if keep and not self._closed:
                self._idle.append(conn)
            else:
                keep = False
                self._all.discard(conn)
            self._cond.notify()
        if not keep:
            self._close_quietly(conn)

    def _discard(self, conn: _Connection) -> None:
        with self._cond:
            self._all.discard(conn)
        self._close_quietly(conn)

    @staticmethod
    def _close_quietly(conn: _Connection) -> None:
        try:
            conn.close()
        except Exception:  # a socket already broken may fail to close
            pass

    # ------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Close every connection. Requests still running fail on their closed
        connection; their connections are closed when they end."""
        with self._cond:
            self._closed = True
            conns = list(self._all)
            self._all.clear()
            self._idle.clear()
        for conn in conns:
            self._close_quietly(conn)

    def __enter__(self) -> ConnectionPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Stream:
    """``with pool.stream(...) as response``: a class, not a generator, since it runs
    once per request."""

    __slots__ = ("_conn", "_content", "_ext", "_head", "_method", "_pool", "_response", "_target")

    def __init__(
        self,
        pool: ConnectionPool,
        method: bytes,
        url: str,
        headers: list[tuple[bytes, bytes]],
        content: bytes | None,
        extensions: dict[str, Any],
    ) -> None:
        target = self._target = pool._target(url)
        self._pool = pool
        self._method = method
        self._head = target.head(headers, content)
        self._content = content
        self._ext = extensions
        self._conn: _Connection | None = None
        self._response: _Response | None = None

    def __enter__(self) -> _Response:
        pool, ext = self._pool, self._ext
        timeouts = ext.get("timeout", {})
        conn = pool._acquire(self._target.origin, timeouts.get("pool"))
        response: _Response
        try:
            if isinstance(conn, PlainConnection):
                response = conn.send(
                    self._method, self._target.url.target, self._head, self._content, timeouts
                )
            else:
                request = httpcore.Request(
                    self._method,
                    self._target.url,
                    headers=self._head,
                    content=self._content,
                    extensions=ext,
                )
                response = conn.handle_request(request)
        except BaseException:
            pool._release(conn)  # the connection closed itself already
            raise
        self._conn, self._response = conn, response
        return response

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: types.TracebackType | None,
    ) -> None:
        conn, response = self._conn, self._response
        self._conn = self._response = None
        if conn is None or response is None:
            return
        try:
            response.close()
        finally:
            self._pool._release(conn)
