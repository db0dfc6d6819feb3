"""The blocking shell's driver of one server's protocol machine.

``mcp_proto.connection.Connection`` decides everything about the protocol (handshake,
request pipeline, retries, session expiry, SSE, resumption, keep-alive, close). A
server object here does three jobs only (issue 9, item 5):

1. runs the machine's exchanges: the transport subclass performs its frames (spawn a
   process and write to it; run HTTP requests on a connection pool) and feeds back
   what happened (bytes, heads, bodies, ends, failures);
2. honours ``next_deadline()``: a caller waiting for an answer wakes at the machine's
   next deadline and calls ``handle_timeout``; a deadline set by input on another
   thread (a resume delay, a GET stream reconnect, a keep-alive ping) is honoured by
   one lazily started timer thread per server (:class:`._timer.Timer`);
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
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from mcp_io_common.server_base import ServerBase
from mcp_proto.client.scoped import BlockingMethods
from mcp_proto.config import ServerConfig
from mcp_proto.connection import (
    Connection,
    Frame,
    StartExchange,
)
from mcp_proto.effects import Call, ProgressCallback
from mcp_proto.errors import ConnectionError, MCPError
from mcp_proto.handlers import Reply
from mcp_proto.server_view import ServerView
from mcp_proto.session import ServerInfo
from mcp_proto.types import Tool

if TYPE_CHECKING:
    # Subscriptions (2026-07-28) load with the first ``listen``, not with the shell.
    from mcp_proto.modern.notify_queue import ListenFilter

    from ._listen import Listener, Subscription
from ._dispatch import EventDispatch
from ._timer import Timer
from ._waiter import _Waiter

__all__ = ["BaseServer", "CallToken"]


#: The ``notifications/cancelled`` reason of a call its caller gave up on.
CALL_CANCELLED = "Request cancelled by the client"


class CallToken:
    """A handle on a blocking call, for another thread to cancel it (the blocking
    shell has no cancellation scopes). One token may serve the calls of one operation
    in turn: it names the latest started."""

    __slots__ = ("cancelled", "cid", "server")

    def __init__(self) -> None:
        self.cancelled = False
        self.cid: int | None = None
        self.server: BaseServer | None = None

    def cancel(self) -> None:
        """Cancel the call in flight, and any the operation would start after it."""
        self.cancelled = True
        server, cid = self.server, self.cid
        if server is not None and cid is not None:
            server._cancel_call(cid)


class BaseServer(
    ServerBase["Subscription", threading.RLock], EventDispatch, ServerView, BlockingMethods
):
    """One MCP server (blocking shell). Thread-safe: any thread may call
    :meth:`request`; the transport's reader (or the thread running an HTTP exchange)
    feeds the machine and wakes callers."""

    _conn: Connection  # (ServerView allows None; ServerBase always has one)

    def __init__(self, config: ServerConfig, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)  # the machine: ServerBase
        self._clock = time.monotonic
        # Guards the machine and the tables below; never held while blocking.
        self._lock = threading.RLock()
        # Held while queued events are dispatched, so that they reach the client in
        # the machine's order (a progress callback is queued before its call's result
        # wakes the caller: issue 9, item 6); a thread that fed input holds it from
        # before it feeds, so its events are dispatched when its pump returns.
        # Reentrant: a dispatch may answer a server request at once ("Client busy").
        self._dispatch_lock = threading.RLock()
        self._init_dispatch()
        # Frames taken from the machine, not performed yet, and whether a thread is
        # performing them (one at a time, in order).
        self._frames: list[Frame] = []
        self._performing = False
        # Bumped for each transport opened: an answer to a server request goes back
        # only to the connection that asked it.
        self._generation = 0
        # Set by close() (the client's, final): no request may start the server again.
        self._closed = False
        self._timer: Timer | None = None

    # ------------------------------------------------------------ transport hooks

    def _perform(self, frame: Frame) -> None:
        """Perform one frame (OpenTransport, Write, StartExchange, AbortExchange,
        CloseTransport) and feed its outcome to the machine."""
        raise NotImplementedError

    def _perform_frames(self, frames: list[Frame], inline: bool) -> StartExchange | None:
        """Perform ``frames`` in order (``_perform`` each). With ``inline``, the first
        request exchange (not a stream) is not performed but returned, for the caller
        to run on its own thread. A transport may merge frames (stdio: one writev)."""
        own: StartExchange | None = None
        for frame in frames:
            if inline and own is None and type(frame) is StartExchange and not frame.streaming:
                own = frame
            else:
                self._perform(frame)
        return own

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

    def _pump(
        self,
        inline: bool = False,
        feed: Callable[..., Any] | None = None,
        *args: Any,
        starting: bool = False,
    ) -> StartExchange | None:
        """Feed the machine (``feed(*args)``, under its lock), dispatch its events and
        perform its frames, in order.

        With ``inline`` (a caller that just started a call over HTTP), the first
        request exchange is not run here but returned, for the caller to run on its
        own thread: no hand-off between threads on the hot path. One pass of the hot
        path takes each lock once and calls no helper of its own (it runs twice per
        call, so taking the events and claiming the frames are written out).

        ``starting``: the caller just started calls and is about to wait for them (and
        for the machine's deadlines) itself. Starting a call produces no event of its
        own as a rule, so it does not queue behind a dispatch running on another
        thread, and the timer thread needs no look."""
        conn = self._conn
        queue = self._events
        dispatch_lock = self._dispatch_lock
        if not starting:
            # Held from before the feed: this pump's events are dispatched when it
            # returns (see _dispatch_lock).
            dispatch_lock.acquire()
        try:
            with self._lock:
                if feed is not None:
                    feed(*args)
                events = conn.take_events()
                if events:
                    queue.extend(events)
                frames = self._frames
                frames += conn.frames_to_send()
                if frames and not self._performing:
                    self._performing = True
                    self._frames = []
                else:
                    frames = []
                    if not starting:
                        self._check_timer()
            if queue:
                with dispatch_lock:
                    self._drain_events()
        finally:
            if not starting:
                dispatch_lock.release()
        if frames:
            return self._perform_all(frames, inline, not starting)
        return None

    def _perform_all(
        self, frames: list[Frame], inline: bool, timer: bool = True
    ) -> StartExchange | None:
        """Perform ``frames``, then any that come meanwhile, until none is left (this
        thread has the performing role)."""
        own: StartExchange | None = None
        conn = self._conn
        queue = self._events
        try:
            while frames:
                got = self._perform_frames(frames, inline and own is None)
                if got is not None:
                    own = got
                # Events first taken under the machine's lock, then dispatched in
                # order (as in _pump when starting): this thread feeds nothing here.
                with self._lock:
                    events = conn.take_events()
                    if events:
                        queue.extend(events)
                    frames = self._frames
                    frames += conn.frames_to_send()
                    self._frames = []
                    if not frames:
                        self._performing = False
                        if timer:
                            self._check_timer()
                if queue:
                    with self._dispatch_lock:
                        self._drain_events()
        except BaseException:
            with self._lock:
                self._performing = False
            raise
        return own

    def _expire(self) -> None:
        """A deadline passed: the machine decides what expired."""
        self._pump(False, self._handle_timeout)

    def _handle_timeout(self) -> None:
        self._conn.handle_timeout(time.monotonic())

    def _check_timer(self) -> None:
        """After input (caller holds ``_lock``): make sure the timer thread will honour
        the machine's next deadline (one set by input on another thread, say a resume
        delay after a broken stream, may concern a caller asleep until a later one).
        It is woken only if the deadline is earlier than the one it sleeps to: the
        request timeouts of calls made one after the other, each later than the last,
        do not wake it."""
        deadline = self._conn.next_deadline()
        if deadline is None:
            return
        timer = self._timer
        if timer is None:
            timer = self._timer = Timer(self._lock, self._conn, self._expire, self.name)
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
        if self._closed:
            raise self._closed_error()
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

    def close(self) -> None:
        """:meth:`cleanup`, final: a later request raises ``ConnectionError`` instead of
        starting the server again (nobody would close that one)."""
        self._closed = True
        self.cleanup()

    def _closed_error(self) -> ConnectionError:
        return ConnectionError(
            f"server {self.name!r}: the client is closed; connect again for a new one "
            "(cleanup() stops the servers and keeps the client usable)"
        )

    def cleanup(self) -> None:
        """Close the transport (bounded) and fail anything pending. Idempotent; the
        next request reconnects. Server requests still unanswered are answered (or
        refused) first (the machine gives their handlers ``CLOSE_ANSWER_WAIT``)."""
        self._read_available()
        waiter = _Waiter()
        with self._lock:
            self._close_waiters.append(waiter)
            # SUB-22: a host's cleanup keeps the subscriptions for the next connection
            # (client.close() ends them first).
            self._conn.close(time.monotonic(), keep_subscriptions=True)
        try:
            self._pump()
            self._wait(waiter)
        except MCPError:
            pass
        self._stop_timer()
        self._stop_transport()

    # ------------------------------------------------------------ subscriptions

    def listen(
        self,
        notifications: ListenFilter | Mapping[str, object],
        callback: Listener | None = None,
        *,
        ack_timeout: float | Literal[False] | None = None,
    ) -> Subscription:
        # (docstring: mcp_io_common/server_base.py)
        flt = self._listen_filter(notifications)
        self.ensure_connected()  # the era decides whether there is listen at all
        box: list[Subscription] = []
        now = time.monotonic()
        self._pump(False, lambda: box.append(self._open_listen(flt, callback, ack_timeout, now)))
        return box[0]

    def _close_listen(self, sub_id: int) -> None:
        self._pump(False, lambda: self._conn.close_listen(sub_id, now=time.monotonic()))

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        tool: Tool | Mapping[str, object] | None = None,
        cancel_on_timeout: bool = True,
        token: CallToken | None = None,
    ) -> Any:
        """Send a request and block for its result (or its typed error).

        Retries, backoff and session-expiry re-sends are the machine's (one request
        pipeline, ``mcp_proto.connection``); this waits for the call's one outcome.
        ``tool``: the called tool's definition (``Mcp-Param-*`` headers, HDR-1).
        ``cancel_on_timeout=False``: no ``notifications/cancelled`` after a timeout
        (TASK-19). ``token``: lets another thread cancel the call
        (:meth:`CallToken.cancel`; ``call_tool_streaming`` left early).
        """
        if self._closed:
            raise self._closed_error()
        waiter = _Waiter()
        try:
            own = self._pump(
                True,
                self._start_call,
                waiter,
                method,
                params,
                timeout,
                progress,
                tool,
                cancel_on_timeout,
                token,
                starting=True,
            )
            while own is not None:
                own = self._run_exchange(own, waiter)
            return self._wait(waiter)
        finally:
            # Progress callbacks were queued for this call: it returns (or raises) only
            # once they have run (issue 9, item 6). Inline, not a helper: no extra
            # frame on the hot path, where ``settle`` is None.
            if waiter.settle is not None:
                waiter.settle()

    def _bind_token(self, token: CallToken, cid: int) -> None:
        # (under _lock, as the call starts) The id first, then the flag
        # (CallToken.cancel does the reverse): a cancel racing this start is seen by
        # one side or the other.
        token.server, token.cid = self, cid
        if token.cancelled:
            self._conn.cancel_call(cid, CALL_CANCELLED, now=time.monotonic())

    def _cancel_call(self, cid: int) -> None:
        """Cancel call ``cid`` from another thread: the machine ends it (its waiter
        gets ``CallCancelledError``) and tells the server (``notifications/cancelled``)."""
        self._pump(False, lambda: self._conn.cancel_call(cid, CALL_CANCELLED, now=time.monotonic()))
        self._wake_readers()

    def _wake_readers(self) -> None:
        """Transport hook: a caller blocked reading for its own answer looks at its
        waiter again (its call may have just been ended by another thread)."""

    def request_many(self, calls: Sequence[Call]) -> list[tuple[Any, MCPError | None]]:
        """Several requests at once: each outcome is (result, None) or (None, error).

        Every call is started on the machine before any answer is awaited: over stdio
        the round goes out in one write and the first wait reads every answer; over
        HTTP each is a POST, run on the exchange threads (this thread runs one)."""
        if self._closed:
            return [(None, self._closed_error()) for _ in calls]
        if len(calls) < 2:
            return [self._outcome_of(call) for call in calls]
        outcomes: list[tuple[Any, MCPError | None]] = [(None, None)] * len(calls)
        started: list[tuple[int, _Waiter]] = []
        own = self._pump(True, self._start_many, calls, outcomes, started, starting=True)
        while own is not None:
            own = self._run_exchange(own, None)
        for i, waiter in started:
            try:
                outcomes[i] = (self._wait(waiter), None)
            except MCPError as exc:
                outcomes[i] = (None, exc)
            finally:
                if waiter.settle is not None:  # see request()
                    waiter.settle()
        return outcomes

    def _start_many(
        self,
        calls: Sequence[Call],
        outcomes: list[tuple[Any, MCPError | None]],
        started: list[tuple[int, _Waiter]],
    ) -> None:
        """Start every call of a round (under ``_lock``); one that cannot start gets
        its error as its outcome."""
        now = time.monotonic()
        conn = self._conn
        logger = self._logger
        debug = logger.isEnabledFor(logging.DEBUG)
        try:
            for i, call in enumerate(calls):
                try:
                    # flush=False: the round goes out as one frame, flushed below.
                    cid = conn.start_call(
                        call.method,
                        call.params,
                        now=now,
                        timeout=call.timeout,
                        progress=call.progress is not None,
                        tool=getattr(call, "tool", None),
                        flush=False,
                        cancel_on_timeout=getattr(call, "cancel_on_timeout", True),
                    )
                except MCPError as exc:
                    outcomes[i] = (None, exc)
                    continue
                waiter = self._waiters[cid] = _Waiter()
                if call.progress is not None:
                    self._progress[cid] = call.progress
                started.append((i, waiter))
                if debug:
                    logger.debug("-> %s %s (call %s)", self.name, call.method, cid)
        finally:
            conn.flush(now)

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
        if self._closed:
            if only_if_connected:
                return
            raise self._closed_error()
        self._pump(False, self._notify, method, params, only_if_connected)

    def _notify(self, method: str, params: dict[str, Any] | None, only: bool) -> None:
        # (under _lock)
        self._conn.notify(method, params, now=time.monotonic(), only_if_connected=only)

    def reply(self, generation: int, request_id: int | str, reply: Reply) -> None:
        """Answer a server request on the connection that asked it (``generation``
        is what its :class:`~mcp_proto.client.routing.RequestDue` carried). The
        answer's frames are claimed by this thread in the same lock pass, so it writes
        them itself (never the thread reading the server's output)."""
        self._pump(False, self._answer, generation, request_id, reply)

    def _answer(self, generation: int, request_id: int | str, reply: Reply) -> None:
        # (under _lock)
        if generation != self._generation:
            return  # that connection is gone: nobody to answer
        if reply.code is None:
            self._conn.answer(request_id, reply.result, now=time.monotonic())
        else:
            self._conn.refuse(request_id, reply.code, reply.message or "", now=time.monotonic())

    def _wait(self, waiter: _Waiter) -> Any:
        """Block until ``waiter`` is answered, waking at the machine's deadlines."""
        event = waiter.get_event()
        while not waiter.done:
            with self._lock:
                deadline = self._conn.next_deadline()
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if waiter.done:
                break
            if event.wait(remaining):
                continue  # answered, or a wake-up left from a role hand-over: look again
            self._expire()
        if waiter.error is not None:
            raise waiter.error
        return waiter.result
