"""The blocking shell's driver of one server's protocol machine.

``mcp_proto.connection.Connection`` decides everything about the protocol (handshake,
request pipeline, retries, session expiry, SSE, resumption, keep-alive, close). A
server object here does three jobs only (issue 9, item 5):

1. runs the machine's exchanges: the transport subclass performs its frames (spawn a
   process and write to it; run HTTP requests on a connection pool) and feeds back
   what happened (bytes, heads, bodies, ends, failures);
2. honours ``next_deadline()``: a caller waiting for an answer wakes at the machine's
   next deadline and calls ``handle_timeout``; deadlines nobody waits for (a GET stream
   reconnect, a keep-alive ping) are the job of one lazily started timer thread per
   server (:class:`_Timer`);
3. dispatches the machine's events: results wake their callers, progress and
   notifications go to the client, server requests to its worker pool.

Thread safety: any thread may call :meth:`BaseServer.request`. One lock guards the
machine (its calls are fast and never block); frames are performed in the order the
machine emitted them by one thread at a time (whoever finds them first), and events
are dispatched in order under a second lock, so a call's progress callbacks are always
queued before its result is handed over.
"""

from __future__ import annotations

import logging
import math
import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from mcp_proto._util import NEED_DATA
from mcp_proto.config import ServerConfig
from mcp_proto.connection import (
    CallFailed,
    CallProgress,
    CallSucceeded,
    Closed,
    Connected,
    ConnectFailed,
    Connection,
    Diagnostic,
    Disconnected,
    Frame,
    ServerRequest,
    StartExchange,
)
from mcp_proto.effects import Call
from mcp_proto.errors import ConnectionError, MCPError
from mcp_proto.limits import Limits
from mcp_proto.server_view import ServerView
from mcp_proto.session import ServerInfo
from mcp_proto.types import Implementation

__all__ = ["BaseServer"]


class _Waiter:
    __slots__ = ("done", "error", "event", "result", "settle")

    def __init__(self) -> None:
        # Made only by a caller that actually blocks (most calls are answered to the
        # thread reading for them: an Event per call would cost ~3 us for nothing).
        # Whoever answers sets ``done`` before looking for the event, and the waiter
        # makes the event before looking at ``done``, so no wake-up is lost.
        self.event: threading.Event | None = None
        self.done = False  # answered (the event may also be set to hand over a role)
        self.result: Any = None
        self.error: MCPError | None = None
        # Set (by the client, before ``done``) only for a call whose progress callbacks
        # were queued: waits until they have run (see BaseServer._dispatch).
        self.settle: Callable[[], None] | None = None

    def get_event(self) -> threading.Event:
        """This waiter's event, made on first use (only by the waiting thread)."""
        if self.event is None:
            self.event = threading.Event()
        return self.event


class _Timer:
    """The one thread that honours every deadline of the machine (callers waiting for
    an answer also wake at ``next_deadline()``; whoever comes first handles it).

    Per server, not per client: a server's machine has its own lock and deadlines,
    and a timer sharing that lock (its condition is built on it) needs no heap across
    servers and no hand-off between locks. Started on the first deadline; it sleeps
    until ``next_deadline()`` and calls ``handle_timeout``. It is woken only when a
    deadline earlier than the one it sleeps to appears (``BaseServer._kick_timer``):
    request timeouts of calls made one after the other, each later than the last, do
    not wake it."""

    def __init__(self, server: BaseServer) -> None:
        self.server = server
        self.cond = threading.Condition(server._lock)
        self.wake_at = math.inf  # guarded by the server's lock
        self.stopped = False
        self.thread = threading.Thread(
            target=self._run, name=f"mcp-timer-{server.name}", daemon=True
        )

    def _run(self) -> None:
        server = self.server
        conn = server._conn
        while True:
            with self.cond:
                while True:
                    if self.stopped:
                        return
                    deadline = conn.next_deadline()
                    now = time.monotonic()
                    if deadline is not None and now >= deadline:
                        break
                    self.wake_at = math.inf if deadline is None else deadline
                    self.cond.wait(None if deadline is None else deadline - now)
                self.wake_at = math.inf
            server._expire()


class BaseServer(ServerView):
    """One MCP server (blocking shell). Thread-safe: any thread may call
    :meth:`request`; the transport's reader (or the thread running an HTTP exchange)
    feeds the machine and wakes callers."""

    type = "base"
    _conn: Connection

    def __init__(
        self,
        config: ServerConfig,
        *,
        name: str,
        client_info: Implementation,
        capabilities: Callable[[], dict[str, Any]],
        limits: Limits,
        logger: logging.Logger,
        on_event: Callable[[BaseServer, Any], None],
    ) -> None:
        self.config = config
        self.name = name
        self._limits = limits
        self._logger = logger
        self._on_event = on_event
        # The shell owns randomness: the machine draws its retry jitter from here.
        self._random = random.Random()
        self._conn = Connection(
            config,
            name=name,
            client_info=client_info,
            capabilities=capabilities,
            limits=limits,
            random=self._random.random,
        )
        # Guards the machine and the tables below; never held while blocking.
        self._lock = threading.RLock()
        # Held while events are taken from the machine and dispatched, so that they
        # reach the client in the machine's order (a progress callback is queued
        # before its call's result wakes the caller: issue 9, item 6). Reentrant: a
        # dispatch may answer a server request at once ("Client busy").
        self._dispatch_lock = threading.RLock()
        self._waiters: dict[int, _Waiter] = {}
        self._progress: dict[int, Callable[..., Any]] = {}
        # Calls for which a progress callback was queued to the client's dispatcher:
        # their callers wait for those callbacks before returning (see _dispatch).
        self._progressed: set[int] = set()
        self._connect_waiters: list[_Waiter] = []
        self._close_waiters: list[_Waiter] = []
        # Frames taken from the machine, not performed yet, and whether a thread is
        # performing them (one at a time, in order).
        self._frames: list[Frame] = []
        self._performing = False
        # Bumped for each transport opened: an answer to a server request goes back
        # only to the connection that asked it.
        self._generation = 0
        self._timer: _Timer | None = None

    # ------------------------------------------------------------ transport hooks

    def _perform(self, frame: Frame) -> None:
        """Perform one frame (OpenTransport, Write, StartExchange, AbortExchange,
        CloseTransport) and feed its outcome to the machine."""
        raise NotImplementedError

    def _perform_many(self, frames: list[Frame]) -> list[Frame]:
        """Transport hook: the frames to perform for ``frames`` (merged, say)."""
        return frames

    def _run_exchange(self, frame: StartExchange, waiter: _Waiter | None) -> StartExchange | None:
        """HTTP: run ``frame`` on this thread for ``waiter``'s caller; returns the next
        exchange this thread may run too."""
        raise NotImplementedError

    def _read_available(self) -> None:
        """Transport hook: take in what the server already sent, without waiting."""

    def _stop_transport(self) -> None:
        """Transport hook: after close, stop what is left (threads, pools)."""

    # ------------------------------------------------------------ the machine

    def _now(self) -> float:
        return time.monotonic()

    def _pump(self, inline: bool = False) -> StartExchange | None:
        """Dispatch the machine's events and perform its frames, in order.

        With ``inline`` (a caller that just started a call over HTTP), the first
        request exchange is not run here but returned, for the caller to run on its
        own thread: no hand-off between threads on the hot path."""
        with self._dispatch_lock:
            with self._lock:
                events = self._take_events()
            if events:
                self._dispatch(events)
        with self._lock:
            self._frames += self._conn.frames_to_send()
            if self._performing or not self._frames:
                perform = False
            else:
                self._performing = perform = True
        if perform:
            return self._perform_all(inline)
        self._kick_timer()
        return None

    def _take_events(self) -> list[Any]:
        conn = self._conn
        out: list[Any] = []
        while True:
            event = conn.next_event()
            if event is NEED_DATA:
                return out
            out.append(event)

    def _perform_all(self, inline: bool) -> StartExchange | None:
        """Perform frames until none is left (this thread has the performing role)."""
        own: StartExchange | None = None
        try:
            while True:
                with self._lock:
                    frames = self._frames
                    frames += self._conn.frames_to_send()
                    self._frames = []
                    if not frames:
                        self._performing = False
                        break
                for frame in self._perform_many(frames):
                    if (
                        inline
                        and own is None
                        and type(frame) is StartExchange
                        and not frame.streaming
                    ):
                        own = frame
                    else:
                        self._perform(frame)
                with self._dispatch_lock:
                    with self._lock:
                        events = self._take_events()
                    if events:
                        self._dispatch(events)
        except BaseException:
            with self._lock:
                self._performing = False
            raise
        self._kick_timer()
        return own

    def _expire(self) -> None:
        """A deadline passed: the machine decides what expired."""
        with self._lock:
            self._conn.handle_timeout(time.monotonic())
        self._pump()

    def _kick_timer(self) -> None:
        """After input: make sure the timer thread will honour the machine's next
        deadline (one set by input from another thread, say a resume delay after a
        broken stream, may concern a caller asleep until a later one). It wakes only
        if the deadline is earlier than the one it sleeps to: a sequential caller's
        request timeouts, each later than the last, do not wake it."""
        with self._lock:
            deadline = self._conn.next_deadline()
            if deadline is None:
                return
            timer = self._timer
            if timer is None:
                timer = self._timer = _Timer(self)
                timer.wake_at = deadline
                timer.thread.start()
            elif deadline < timer.wake_at:
                timer.wake_at = deadline
                timer.cond.notify()

    def _stop_timer(self) -> None:
        with self._lock:
            timer, self._timer = self._timer, None
            if timer is not None:
                timer.stopped = True
                timer.cond.notify()
        if timer is not None and timer.thread is not threading.current_thread():
            timer.thread.join(timeout=1)

    # ------------------------------------------------------------ lifecycle

    def connect(self) -> ServerInfo:
        """Connect now (spawn / handshake) instead of on first use."""
        return self.ensure_connected()

    def ensure_connected(self) -> ServerInfo:
        """Open the transport and perform the handshake unless already connected."""
        conn = self._conn
        if conn.is_connected:
            info = conn.server
            assert info is not None
            return info
        waiter = _Waiter()
        with self._lock:
            if conn.is_connected:
                info = conn.server
                assert info is not None
                return info
            conn.connect(time.monotonic())
            self._connect_waiters.append(waiter)
        self._pump()
        result: ServerInfo = self._wait(waiter)
        return result

    def cleanup(self) -> None:
        """Close the transport (bounded) and fail anything pending. Idempotent; the
        next request reconnects. Server requests still unanswered are answered (or
        refused) first (the machine gives their handlers ``CLOSE_ANSWER_WAIT``)."""
        self._read_available()
        waiter = _Waiter()
        with self._lock:
            self._close_waiters.append(waiter)
            self._conn.close(time.monotonic())
        try:
            self._pump()
            self._wait(waiter)
        except MCPError:
            pass
        self._stop_timer()
        self._stop_transport()

    # ------------------------------------------------------------ requests

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[..., Any] | None = None,
    ) -> Any:
        """Send a request and block for its result (or its typed error).

        Retries, backoff and session-expiry re-sends are the machine's (one request
        pipeline, ``mcp_proto.connection``); this waits for the call's one outcome.
        """
        waiter = _Waiter()
        with self._lock:
            cid = self._conn.start_call(
                method, params, now=time.monotonic(), timeout=timeout, progress=progress is not None
            )
            self._waiters[cid] = waiter
            if progress is not None:
                self._progress[cid] = progress
        self._logger.debug("-> %s %s (call %s)", self.name, method, cid)
        try:
            own = self._pump(inline=True)
            while own is not None:
                own = self._run_exchange(own, waiter)
            return self._wait(waiter)
        finally:
            # Progress callbacks were queued for this call: it returns (or raises) only
            # once they have run (issue 9, item 6). Inline, not a helper: no extra
            # frame on the hot path, where ``settle`` is None.
            if waiter.settle is not None:
                waiter.settle()

    def request_many(self, calls: Sequence[Call]) -> list[tuple[Any, MCPError | None]]:
        """Several requests at once: each outcome is (result, None) or (None, error).

        Every call is started on the machine before any answer is awaited: over stdio
        the round goes out in one write and the first wait reads every answer; over
        HTTP each is a POST, run on the exchange threads (this thread runs one)."""
        if len(calls) < 2:
            return [self._outcome_of(call) for call in calls]
        outcomes: list[tuple[Any, MCPError | None]] = [(None, None)] * len(calls)
        started: list[tuple[int, int, _Waiter]] = []
        with self._lock:
            now = time.monotonic()
            for i, call in enumerate(calls):
                try:
                    cid = self._conn.start_call(
                        call.method,
                        call.params,
                        now=now,
                        timeout=call.timeout,
                        progress=call.progress is not None,
                    )
                except MCPError as exc:
                    outcomes[i] = (None, exc)
                    continue
                waiter = self._waiters[cid] = _Waiter()
                if call.progress is not None:
                    self._progress[cid] = call.progress
                started.append((i, cid, waiter))
        for i, cid, _ in started:
            self._logger.debug("-> %s %s (call %s)", self.name, calls[i].method, cid)
        own = self._pump(inline=True)
        while own is not None:
            own = self._run_exchange(own, None)
        for i, _, waiter in started:
            try:
                outcomes[i] = (self._wait(waiter), None)
            except MCPError as exc:
                outcomes[i] = (None, exc)
            finally:
                if waiter.settle is not None:  # see request()
                    waiter.settle()
        return outcomes

    def _outcome_of(self, call: Call) -> tuple[Any, MCPError | None]:
        try:
            result = self.request(
                call.method, call.params, timeout=call.timeout, progress=call.progress
            )
        except MCPError as exc:
            return None, exc
        return result, None

    def notify(
        self, method: str, params: dict[str, Any] | None = None, *, only_if_connected: bool = False
    ) -> None:
        with self._lock:
            self._conn.notify(
                method, params, now=time.monotonic(), only_if_connected=only_if_connected
            )
        self._pump()

    def reply(
        self,
        generation: Any,
        request_id: Any,
        result: Any = None,
        *,
        code: int | None = None,
        message: str = "",
    ) -> None:
        """Answer a server request on the connection that asked it (``generation``
        is what the ``("request", generation, event)`` event carried)."""
        with self._lock:
            if generation != self._generation:
                return  # that connection is gone: nobody to answer
            if code is None:
                self._conn.answer(request_id, result, now=time.monotonic())
            else:
                self._conn.refuse(request_id, code, message, now=time.monotonic())
        self._pump()

    def _wait(self, waiter: _Waiter) -> Any:
        """Block until ``waiter`` is answered, waking at the machine's deadlines."""
        event = waiter.get_event()
        while not waiter.done:
            with self._lock:
                deadline = self._conn.next_deadline()
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if waiter.done or event.wait(remaining):
                break
            self._expire()
        if waiter.error is not None:
            raise waiter.error
        return waiter.result

    # ------------------------------------------------------------ events

    def _dispatch(self, events: list[Any]) -> None:
        """Hand the machine's events over (caller holds ``_dispatch_lock``)."""
        for event in events:
            kind = type(event)
            if kind is CallSucceeded or kind is CallFailed:
                cid = event.call_id
                with self._lock:
                    waiter = self._waiters.pop(cid, None)
                    progressed = self._progress.pop(cid, None) is not None and (
                        cid in self._progressed
                    )
                    if progressed:
                        self._progressed.discard(cid)
                if waiter is None:
                    continue
                if progressed:
                    # Its progress callbacks are queued ahead of this point: the client
                    # queues a marker behind them and sets ``waiter.settle`` (before
                    # ``done``, so the woken caller sees it) to wait for that marker.
                    self._on_event(self, ("settle", waiter))
                if kind is CallSucceeded:
                    waiter.result = event.result
                else:
                    waiter.error = event.error
                self._wake(waiter)
            elif kind is CallProgress:
                with self._lock:
                    callback = self._progress.get(event.call_id)
                    if callback is not None:
                        self._progressed.add(event.call_id)
                if callback is not None:
                    self._on_event(self, ("progress", callback, event))
            elif kind is ServerRequest:
                self._on_event(self, ("request", self._generation, event))
            elif kind is Diagnostic:
                level = getattr(logging, event.level.upper(), logging.INFO)
                self._logger.log(level, "%s", event.message)
            elif kind is Connected:
                info = event.info
                self._logger.debug(
                    "connected to %s (protocol %s)", self.name, info.protocol_version
                )
                self._finish(self._connect_waiters, info, None)
            elif kind is ConnectFailed:
                self._logger.debug("server %s: connecting failed: %s", self.name, event.error)
                self._finish(self._connect_waiters, None, event.error)
                self._on_event(self, ("closed",))
            elif kind is Disconnected:
                self._logger.debug("server %s: disconnected: %s", self.name, event.error)
                self._on_event(self, ("closed",))
            elif kind is Closed:
                error = ConnectionError(f"server {self.name!r}: the client closed the connection")
                self._finish(self._connect_waiters, None, error)
                self._finish(self._close_waiters, None, None)
                self._on_event(self, ("closed",))
            else:  # NotificationReceived, LogMessage, MessageDiscarded
                self._on_event(self, event)

    def _finish(self, waiters: list[_Waiter], result: Any, error: MCPError | None) -> None:
        with self._lock:
            done, waiters[:] = list(waiters), []
        for waiter in done:
            waiter.result = result
            waiter.error = error
            self._wake(waiter)

    @staticmethod
    def _wake(waiter: _Waiter) -> None:
        waiter.done = True
        wake = waiter.event
        if wake is not None:
            wake.set()
