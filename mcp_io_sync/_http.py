"""The blocking shell's HTTP transports over httpcore: Streamable HTTP, plain HTTP and
the deprecated HTTP+SSE.

Every rule (headers, what a status means, sessions, SSE, resumption, the GET stream,
keep-alive, which error) is the machine's (``mcp_proto.connection``). This module runs
the exchanges it asks for on a connection pool and feeds back heads, body bytes, ends
and failures:

* a caller that just started a call runs its POST on its own thread (no hand-off on
  the hot path); once its answer arrived, whatever the server still sends on that
  response (notifications after the result) is read by an exchange thread, so the
  caller returns at once (issue 9, item 6);
* other exchanges (those started by a background thread, the rest of a
  ``request_many`` round) run on a pool of exchange threads; long-lived event streams
  (``streaming``: the GET stream, the legacy event stream) each on a thread of their
  own;
* ``AbortExchange`` shuts the exchange's socket down, so a thread blocked reading it
  wakes at once.
"""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpcore

from mcp_io_common.http_target import HttpTarget
from mcp_io_common.httpcore_glue import (
    HTTPCORE_ERRORS,
    MAX_CONNECTIONS,
    enc,
    exchange_failure,
    str_headers,
)
from mcp_proto.config import ServerConfig
from mcp_proto.connection import (
    AbortExchange,
    CloseTransport,
    ExchangeFailure,
    Frame,
    OAuthInteraction,
    OpenTransport,
    StartExchange,
)
from mcp_proto.http_settings import RequestHeadersError

from ._base import BaseServer
from ._plain import PlainResponse
from ._pool import ConnectionPool
from ._waiter import _Waiter

__all__ = ["HttpServer", "SseServer", "StreamableHttpServer"]

#: What running an exchange may raise: httpcore's errors, ``ConnectionNotAvailable``
#: (the pool was closed under the request, at close) and OS errors on the socket.
_ERRORS = (*HTTPCORE_ERRORS, httpcore.ConnectionNotAvailable, OSError, RequestHeadersError)

#: How long closing waits for the exchanges already started (the DELETE, answers
#: refused at close) before it closes the pool under them.
_CLOSE_WAIT = 5.0


class _Live:
    """An exchange being run: the socket of its response (shut down to abort it)."""

    __slots__ = ("aborted", "sock", "thread", "wanted")

    def __init__(self) -> None:
        self.aborted = False
        self.wanted = True  # the machine still wants its body (wants_exchange)
        self.sock: socket.socket | None = None
        self.thread: int | None = None  # the thread running it, once one does

    def shutdown(self) -> None:
        sock = self.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _HttpServer(HttpTarget, BaseServer):
    """Shared by the three HTTP transports: the pool and the exchanges."""

    _browser_module = "mcp_io_sync._oauth"
    _pool_class = ConnectionPool
    _asynchronous = False

    _pool: ConnectionPool | httpcore.ConnectionPool | None

    def __init__(self, config: ServerConfig, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        # Exchanges started and not finished (guarded by _lock), by xid; aborts that
        # came before their exchange started.
        self._live: dict[int, _Live] = {}
        self._aborted: set[int] = set()
        self._idle = threading.Condition(self._lock)  # notified when an exchange ends
        self._workers: ThreadPoolExecutor | None = None
        self._streams: list[threading.Thread] = []

    # ------------------------------------------------------------ frames

    def _perform(self, frame: Frame) -> None:
        kind = type(frame)
        if kind is StartExchange:
            assert isinstance(frame, StartExchange)
            self._start(frame)
        elif kind is AbortExchange:
            assert isinstance(frame, AbortExchange)
            self._abort(frame.xid)
        elif kind is OpenTransport:
            self._open_pool()
            with self._lock:
                self._generation += 1
                self._conn.transport_opened(time.monotonic())
        elif kind is CloseTransport:
            assert isinstance(frame, CloseTransport)
            self._close(frame.graceful)
        elif kind is OAuthInteraction:
            assert isinstance(frame, OAuthInteraction)
            self._submit(self._oauth_interaction, frame)

    def _oauth_interaction(self, frame: OAuthInteraction) -> None:
        """Ask the host's OAuth handler (it may wait for a browser) on a worker thread
        and hand its answer to the machine (issue 21)."""
        try:
            reply: Any = frame.handler(frame.effect)
        except Exception as exc:  # the handler's failure is the flow's error
            reply = exc
        self._pump(False, self._oauth_reply, reply)

    def _oauth_reply(self, reply: Any) -> None:
        # (under _lock)
        self._conn.oauth_reply(reply, time.monotonic())

    def _start(self, frame: StartExchange) -> None:
        """Run ``frame`` elsewhere than on this thread: its own thread for a long-lived
        event stream, else an exchange thread."""
        with self._lock:
            # Registered now, so that closing waits for it.
            self._live[frame.xid] = _Live()
        if frame.streaming:
            thread = threading.Thread(
                target=self._run_in_worker,
                args=(frame,),
                name=f"mcp-stream-{self.name}",
                daemon=True,
            )
            thread.start()  # before close can see it (a thread is joined once started)
            self._streams = [t for t in self._streams if t.is_alive()]
            self._streams.append(thread)
            return
        self._submit(self._run_in_worker, frame)

    def _submit(self, fn: Any, *args: Any) -> None:
        workers = self._workers
        if workers is None:
            # Threads are started as needed, up to one per pooled connection; shut
            # down by cleanup().
            workers = self._workers = ThreadPoolExecutor(
                MAX_CONNECTIONS, thread_name_prefix=f"mcp-{self.name}"
            )
        workers.submit(fn, *args)

    def _run_in_worker(self, frame: StartExchange) -> None:
        own: StartExchange | None = frame
        while own is not None:
            own = self._run_exchange(own, None)

    def _abort(self, xid: int) -> None:
        with self._lock:
            live = self._live.get(xid)
            if live is None:
                self._aborted.add(xid)  # not started yet (or already finished)
                return
            live.aborted = True
        live.shutdown()

    def _close(self, graceful: bool) -> None:
        """Close the pool once the exchanges already started (a DELETE included) have
        finished (bounded); a failed transport's pool is closed at once."""
        me = threading.get_ident()
        if graceful:
            deadline = time.monotonic() + _CLOSE_WAIT
            with self._idle:
                while any(live.thread != me for live in self._live.values()):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._idle.wait(left)
        with self._lock:
            pool, self._pool = self._pool, None
            lives = [live for live in self._live.values() if live.thread != me]
            self._aborted.clear()
        for live in lives:
            live.aborted = True
            live.shutdown()
        if pool is not None:
            pool.close()
        with self._lock:
            self._conn.transport_closed(time.monotonic())

    def _stop_transport(self) -> None:
        for thread in list(self._streams):
            if thread is not threading.current_thread():
                thread.join(timeout=_CLOSE_WAIT)
        self._streams = []
        workers, self._workers = self._workers, None
        if workers is not None:
            workers.shutdown(wait=False)

    # ------------------------------------------------------------ running an exchange

    def _run_exchange(self, frame: StartExchange, waiter: _Waiter | None) -> StartExchange | None:
        """Run ``frame`` on this thread and feed the machine. With ``waiter`` (the
        caller whose call this POST carries), the rest of the response is left to an
        exchange thread once the caller's answer arrived. Returns the next exchange
        this thread may run (a caller: only while still unanswered)."""
        xid = frame.xid
        with self._lock:
            live = self._live.get(xid)
            if live is None:
                live = self._live[xid] = _Live()
            live.thread = threading.get_ident()
            aborted = xid in self._aborted
            self._aborted.discard(xid)
        pool = self._pool
        if aborted or pool is None:
            self._ended(xid)
            if pool is None and not aborted:
                self._feed_failure(xid, ExchangeFailure("network", "the transport is closed"))
            return self._next_own(waiter)
        try:
            cm = self._stream(pool, frame, enc(self._http.headers_for(frame.url, frame.headers)))
            response = cm.__enter__()
        except _ERRORS as exc:
            self._ended(xid)
            self._feed_failure(xid, exchange_failure(exc))
            return self._next_own(waiter)
        handed_off = False
        try:
            stream = response.extensions.get("network_stream")
            sock = stream.get_extra_info("socket") if stream is not None else None
            if isinstance(sock, socket.socket):
                live.sock = sock
                if live.aborted:
                    live.shutdown()
            self._pump(False, self._head, live, xid, response)
            if live.wanted:
                chunks = response.iter_stream()
                handed_off = self._read_body(xid, chunks, live, waiter, cm, response)
        except _ERRORS as exc:
            self._feed_failure(xid, exchange_failure(exc))
        finally:
            if not handed_off:
                self._finish_response(xid, cm)
        return self._next_own(waiter)

    def _read_body(
        self,
        xid: int,
        chunks: Iterator[bytes],
        live: _Live,
        waiter: _Waiter | None,
        cm: Any,
        response: Any = None,
    ) -> bool:
        """Feed the body; True if its rest was handed to an exchange thread."""
        for chunk in chunks:
            self._pump(False, self._data, live, xid, chunk)
            if not live.wanted or live.aborted:
                return False
            if waiter is not None and waiter.done and not _more_here(response, live.sock):
                # The caller has its answer and the server is not done with the stream
                # (notifications after the result may follow): read on elsewhere.
                self._submit(self._read_rest, xid, chunks, live, cm)
                return True
        self._pump(False, self._end, xid)
        return False

    # Feeding the machine (called under _lock by _pump).

    def _head(self, live: _Live, xid: int, response: httpcore.Response) -> None:
        conn = self._conn
        conn.exchange_head(xid, response.status, str_headers(response.headers), time.monotonic())
        live.wanted = conn.wants_exchange(xid)

    def _data(self, live: _Live, xid: int, chunk: bytes) -> None:
        conn = self._conn
        conn.exchange_data(xid, chunk, time.monotonic())
        live.wanted = conn.wants_exchange(xid)

    def _end(self, xid: int) -> None:
        self._conn.exchange_end(xid, time.monotonic())

    def _read_rest(self, xid: int, chunks: Iterator[bytes], live: _Live, cm: Any) -> None:
        live.thread = threading.get_ident()
        try:
            self._read_body(xid, chunks, live, None, cm)
        except _ERRORS as exc:
            self._feed_failure(xid, exchange_failure(exc))
        finally:
            self._finish_response(xid, cm)

    def _finish_response(self, xid: int, cm: Any) -> None:
        """Close the response (its connection is reused if the body was read to its
        end) and forget the exchange."""
        try:
            cm.__exit__(None, None, None)
        except _ERRORS:
            pass
        self._ended(xid)

    def _ended(self, xid: int) -> None:
        with self._lock:
            self._live.pop(xid, None)
            self._idle.notify_all()

    def _feed_failure(self, xid: int, failure: ExchangeFailure) -> None:
        self._pump(False, self._failed, xid, failure)

    def _failed(self, xid: int, failure: ExchangeFailure) -> None:
        # (under _lock)
        self._conn.exchange_failed(xid, failure, time.monotonic())

    def _next_own(self, waiter: _Waiter | None) -> StartExchange | None:
        # What this thread found to run next (a caller: only while it still waits).
        if waiter is not None and waiter.done:
            # Answered: nothing here is this caller's to run, and the pumps that fed
            # this exchange performed what it caused (a frame another thread found
            # meanwhile is performed by that thread, or by ours before it let go).
            return None
        return self._pump(inline=True)


def _more_here(response: Any, sock: socket.socket | None) -> bool:
    """True if reading on will not wait for the server: the end of the body is already
    here (a server often sends it in the same write as the last event, and h11 holds
    it unparsed), or nothing is held back and the socket has more.

    Bytes h11 holds that are not the end (the line break closing the last chunk, or
    part of another event) could leave the next read waiting for a server that keeps
    the stream open: the rest is then read on another thread."""
    if isinstance(response, PlainResponse):
        held = response.held()
    else:
        # httpcore's HTTP/1.1 response stream -> its connection -> the h11 state machine.
        conn = getattr(getattr(response, "stream", None), "_connection", None)
        buffered = getattr(getattr(conn, "_h11_state", None), "_receive_buffer", None)
        try:
            held = bytes(buffered) if buffered is not None else b""
        except TypeError:
            return False
    if held:
        return held.endswith(b"0\r\n\r\n")  # the chunked body's last chunk
    if sock is None:
        return False
    try:
        ready, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True  # let the read report it
    return bool(ready)


class StreamableHttpServer(_HttpServer):
    """Streamable HTTP (2025-11-25 § Transports): a POST per message, JSON or SSE
    replies, an optional GET stream for server requests and notifications, sessions."""

    type = "streamable_http"


class HttpServer(_HttpServer):
    """Plain HTTP: request/response JSON over POST, no streaming, no channel for
    server requests (the machine declares no capability needing one: HTTP-4)."""

    type = "http"


class SseServer(_HttpServer):
    """The deprecated HTTP+SSE transport (2024-11-05): a GET event stream announces a
    POST endpoint; responses arrive on the stream (the machine follows it)."""

    type = "sse"
