"""The Trio shell's driver of the core machine (``mcp_proto.connection.Connection``).

A server object does three jobs only (issue 9, item 5):

1. it runs what the machine asks for: the transport subclasses perform the frames
   (``_open_transport``, ``_write``/``_flush``, ``_start_exchange``,
   ``_abort_exchange``, ``_detach_transport``) and feed back what happened (bytes,
   exchange heads/data/ends/failures); a caller's own HTTP request is performed by the
   caller's task (``_run_own``), everything else that waits by tasks of its own;
2. one timer task sleeps until ``conn.next_deadline()`` and calls ``handle_timeout``;
3. it dispatches the machine's events: a result wakes its parked caller, progress and
   notifications go to the client, server requests to the client's handlers.

Every protocol rule (handshake, retries and backoff, session expiry, resumption,
keep-alive, close order) is the machine's. Single-threaded: no locks around it.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

import trio

from mcp_io_common.notices import write_notice
from mcp_io_common.server_base import ServerBase
from mcp_proto import deprecations
from mcp_proto._util import NEED_DATA
from mcp_proto.client.base import CANCELLED_REASON
from mcp_proto.client.routing import CONNECTION_ENDED, ProgressDue, RequestDue, SettleDue
from mcp_proto.client.scoped import AwaitingMethods
from mcp_proto.config import ServerConfig
from mcp_proto.connection import Connection, ConnectionState
from mcp_proto.connection import events as cev
from mcp_proto.connection import frames as fr
from mcp_proto.effects import ProgressCallback
from mcp_proto.errors import MCPError
from mcp_proto.handlers import Reply
from mcp_proto.server_view import ServerView
from mcp_proto.session import ServerInfo
from mcp_proto.types import Tool

if TYPE_CHECKING:
    # Subscriptions (2026-07-28) load with the first ``listen``, not with the shell.
    from mcp_proto.modern.notify_queue import ListenFilter

    from ._listen import Listener, Subscription

from ._waiter import _Waiter

__all__ = ["BaseServer"]

#: The events that end a call, and those of its progress channel (built once: every
#: call's result goes through ``_dispatch``).
_CALL_ENDED: Final = (cev.CallSucceeded, cev.CallFailed)
_PROGRESS_CHANNEL: Final = (cev.CallProgress, cev.CallLog)

#: Beyond ``read_timeout``, how long ``cleanup`` waits for the machine's ``Closed``
#: (more than the close grace and a process's three shutdown steps).
_CLOSE_SLACK = 10.0


class BaseServer(
    ServerBase["Subscription", contextlib.nullcontext[None]], ServerView, AwaitingMethods
):
    """One MCP server (Trio shell). Its background tasks run in the client's nursery."""

    _conn: Connection  # (ServerView allows None; ServerBase always has one)

    def __init__(
        self, config: ServerConfig, *, nursery: Callable[[], trio.Nursery], **kwargs: Any
    ) -> None:
        super().__init__(config, **kwargs)  # the machine: ServerBase
        self._nursery = nursery
        self._lock = contextlib.nullcontext()  # single-threaded: nothing to guard
        self._waiters: dict[int, _Waiter] = {}  # call id -> its parked caller
        #: Trio's clock: ``trio.current_time`` until a transport opens, then the run's
        #: clock itself (the same time without two layers of calls per input).
        self._clock: Callable[[], float] = trio.current_time
        self._progress: dict[int, Callable[..., Any]] = {}
        # Calls for which a progress callback was queued to the client's dispatcher:
        # their callers wait for those callbacks before returning (issue 9, item 6).
        self._progressed: set[int] = set()
        self._connecting: list[_Waiter] = []  # waiting for Connected / ConnectFailed
        self._closing: list[_Waiter] = []  # waiting for Closed
        # Counts transports closed: a server request is tagged with it, so an answer
        # prepared for an earlier process/session is dropped, never sent on the next.
        self._epoch = 0
        self._open_lock = trio.Lock()
        self._closers = 0  # transports being closed (CloseTransport in progress)
        self._closed = trio.Event()  # set (and replaced) when that falls to 0
        self._open_wanted = False  # an OpenTransport for the pumping caller to perform
        # The one timer task: sleeps until the machine's next deadline.
        self._timer_deadline = math.inf
        self._timer_scope: trio.CancelScope | None = None
        self._timer_running = False

    # ------------------------------------------------------------ transport hooks

    async def _open_transport(self) -> None:
        """Perform ``OpenTransport`` (raise an ``MCPError`` if it cannot be done)."""
        raise NotImplementedError

    def _transport_pid(self) -> int | None:
        """The server process of the open transport (stdio), the era cache key."""
        return None

    def _write(self, messages: list[bytes]) -> bool:
        """Perform ``Write`` without waiting; True if bytes are left for ``_flush``."""
        raise NotImplementedError

    async def _flush(self) -> None:
        """Wait until what ``_write`` left has been written (the writer's backpressure)."""

    def _start_exchange(self, frame: fr.StartExchange, own: bool = False) -> None:
        """Perform ``StartExchange`` in a task; ``own``: the pumping caller may perform
        it itself (kept for ``_take_own``; only the last one of a pump is kept)."""
        raise NotImplementedError

    def _take_own(self) -> Any:
        """The exchange kept for the pumping caller (HTTP), or None."""
        return None

    def _spawn_own(self, own: Any) -> None:
        """Perform a kept exchange in a task after all."""

    async def _run_own(self, own: Any, waiter: _Waiter, call_id: int) -> None:
        """Perform a kept exchange in the caller's task, until ``waiter`` is done (a
        cancelled caller cancels ``call_id`` before the exchange is reported cut)."""

    async def _answer(self, waiter: _Waiter) -> None:
        """Wait until ``waiter`` (not done yet) is done: park until its result event;
        stdio reads the pipe for it instead."""
        await waiter.park()

    def _abort_exchange(self, xid: int) -> None:
        raise NotImplementedError

    def _detach_transport(self, graceful: bool) -> Callable[[], Awaitable[None]]:
        """Perform ``CloseTransport``: let go of the current transport at once (a new
        ``OpenTransport`` may follow before it is gone) and return what closes it
        (bounded); the driver then tells the machine."""
        raise NotImplementedError

    # ------------------------------------------------------------ performing frames

    def _perform(self, background: bool) -> bool:
        """Perform every frame the machine queued, in order, without waiting; True if
        bytes are left to flush. Opening a transport must wait: a caller's task does it
        itself (``_pump``: ``background=False`` sets ``_open_wanted``), a background
        task starts a task for it."""
        conn = self._conn
        flush = False
        while True:
            frames = conn.frames_to_send()
            if not frames:
                return flush
            for frame in frames:
                if isinstance(frame, fr.Write):
                    flush = self._write(frame.messages) or flush
                elif isinstance(frame, fr.StartExchange):
                    self._start_exchange(frame, own=not background and not frame.streaming)
                elif isinstance(frame, fr.AbortExchange):
                    self._abort_exchange(frame.xid)
                elif isinstance(frame, fr.OpenTransport):
                    if background:
                        self._spawn(self._open_then_pump)
                    else:
                        self._open_wanted = True
                elif isinstance(frame, fr.CloseTransport):
                    self._epoch += 1
                    closer = self._detach_transport(frame.graceful)
                    self._closers += 1
                    if not self._spawn(self._close_then_pump, closer):
                        self._closers -= 1  # the client is gone: nothing opens again
                elif isinstance(frame, fr.OAuthInteraction):
                    self._spawn(self._oauth_interaction, frame)
                else:  # pragma: no cover - a frame this driver does not know
                    raise TypeError(f"unknown frame {frame!r}")

    async def _oauth_interaction(self, frame: fr.OAuthInteraction) -> None:
        """Ask the host's OAuth handler (it may wait for a browser: in a thread, or
        awaited when it is async) and hand its answer to the machine (issue 21)."""
        try:
            reply: Any
            if inspect.iscoroutinefunction(frame.handler):
                reply = await frame.handler(frame.effect)  # BrowserOAuth's: on the loop
            else:
                reply = await trio.to_thread.run_sync(frame.handler, frame.effect)
        except Exception as exc:  # the handler's failure is the flow's error
            reply = exc
        self._conn.oauth_reply(reply, trio.current_time())
        self._pump_nowait()

    def _spawn(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> bool:
        """Start a task in the client's nursery; False when there is none any more (the
        client is closing: its transports are being closed anyway)."""
        try:
            nursery = self._nursery()
        except RuntimeError:
            self._logger.debug("server %s: no nursery for %s (closing)", self.name, fn)
            return False
        nursery.start_soon(fn, *args)
        return True

    async def _pump(self, own: bool = False) -> Any:
        """After an input from a caller's task: perform the frames (waiting where the
        transport needs it: opening, a full pipe), then dispatch the events. With
        ``own``, the last request exchange is returned for the caller to perform
        itself (``_run_own``) instead of starting a task for it."""
        flush = self._perform(background=False)
        if flush or self._open_wanted:
            await self._open_and_flush(flush)
        self._after_input()
        mine = self._take_own()
        if mine is not None and not own:
            self._spawn_own(mine)
            return None
        return mine

    async def _open_and_flush(self, flush: bool) -> None:
        """The part of a pump that waits: open the transport the machine asked for (a
        caller's task does it itself), then flush what the writes left."""
        while self._open_wanted:
            self._open_wanted = False
            try:
                await self._open()
            except trio.Cancelled:
                # Cancelled before anything was opened (waiting for the previous
                # transport to go, or before the spawn): the machine still waits for
                # its OpenTransport, so it is performed in the background.
                self._spawn(self._open_then_pump)
                raise
            flush = self._perform(background=False) or flush
        if flush:
            await self._flush()

    def _pump_nowait(self) -> None:
        """After an input from a background task (reader, exchange, timer): the same,
        but what must wait is handed to tasks of its own."""
        if self._perform(background=True):
            self._spawn(self._flush)
        self._after_input()

    def _after_input(self) -> None:
        self._dispatch()
        deadline = self._conn.next_deadline()
        if deadline is not None and deadline < self._timer_deadline:
            self._arm_timer(deadline)

    async def _open(self) -> None:
        async with self._open_lock:  # one at a time: each knows what it opened
            # The transport closed before is gone first (a process exits before the
            # next one starts; each close is bounded).
            while self._closers:
                await self._closed.wait()
            epoch = self._epoch
            self._clock = trio.lowlevel.current_clock().current_time
            try:
                await self._open_transport()
            except MCPError as exc:
                self._conn.transport_failed(exc, trio.current_time())
                return
            if epoch != self._epoch:
                # Closed while it was opening (close() during connect): what was just
                # opened belongs to nobody; the machine already moved on.
                with trio.CancelScope(shield=True):
                    await self._detach_transport(False)()
                return
            self._conn.transport_opened(trio.current_time(), pid=self._transport_pid())

    async def _open_then_pump(self) -> None:
        await self._open()
        await self._pump()

    async def _close_then_pump(self, closer: Callable[[], Awaitable[None]]) -> None:
        with trio.CancelScope(shield=True):
            try:
                await closer()
            finally:
                self._closers -= 1
                if not self._closers:
                    self._closed.set()
                    self._closed = trio.Event()
                self._conn.transport_closed(trio.current_time())
                self._pump_nowait()

    # ------------------------------------------------------------ lifecycle

    async def connect(self) -> ServerInfo:
        return await self.ensure_connected()

    def connected_info(self) -> ServerInfo | None:
        """The server's info when connected now (no checkpoint, nothing started)."""
        conn = self._conn
        info = conn.server
        return info if info is not None and conn.is_connected else None

    async def ensure_connected(self) -> ServerInfo:
        conn = self._conn
        info = conn.server
        if info is not None and conn.is_connected:  # every request passes here: no pass
            return info
        conn.connect(trio.current_time())  # (raises only while closing: nothing started)
        waiter = _Waiter()
        self._connecting.append(waiter)
        try:
            await self._pump()
            await waiter.park()
        except BaseException:
            if waiter in self._connecting:
                self._connecting.remove(waiter)
            raise
        if waiter.error is not None:
            raise waiter.error
        return waiter.result  # type: ignore[no-any-return]

    async def cleanup(self) -> None:
        """Close (bounded: the machine's close grace, the transport's shutdown) and fail
        anything pending; server requests still unanswered are answered first."""
        conn = self._conn
        with trio.CancelScope(shield=True):
            if conn.state not in (ConnectionState.IDLE, ConnectionState.CLOSED):
                waiter = _Waiter()
                self._closing.append(waiter)
                # SUB-22: a host's cleanup keeps the subscriptions for the next
                # connection (client.close() ends them first).
                conn.close(trio.current_time(), keep_subscriptions=True)
                # Every step is bounded (the close grace, the DELETE's timeout, the
                # exchanges' read timeout, the process's signals); this bound only
                # keeps a machine that never says Closed from hanging the host.
                with trio.move_on_after(self.read_timeout + _CLOSE_SLACK) as bound:
                    await self._pump()
                    await waiter.park()
                if bound.cancelled_caught:
                    if waiter in self._closing:
                        self._closing.remove(waiter)
                    self._logger.error("server %s: closing did not complete", self.name)
        if self._timer_scope is not None:
            # Nothing is pending any more: let the timer task see that and end.
            self._timer_scope.deadline = -math.inf

    # ------------------------------------------------------------ subscriptions

    async def listen(
        self,
        notifications: ListenFilter | Mapping[str, object],
        callback: Listener | None = None,
        *,
        ack_timeout: float | Literal[False] | None = None,
    ) -> Subscription:
        # (docstring: mcp_io_common/server_base.py)
        flt = self._listen_filter(notifications)
        await self.ensure_connected()  # the era decides whether there is listen at all
        sub = self._open_listen(flt, callback, ack_timeout, trio.current_time())
        await self._pump()
        return sub

    async def _close_listen(self, sub_id: int) -> None:
        self._conn.close_listen(sub_id, now=trio.current_time())
        await self._pump()

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        tool: Tool | Mapping[str, object] | None = None,
        cancel_on_timeout: bool = True,
    ) -> Any:
        """Start a call in the machine and wait for its result or typed error (the
        machine retries, replaces an expired session and times out; a cancelled caller
        cancels the call there, which tells the server). ``tool``: the called tool's
        definition (``Mcp-Param-*`` headers, HDR-1). ``cancel_on_timeout=False``: no
        ``notifications/cancelled`` after a timeout (TASK-19)."""
        # A call in an already cancelled scope sends nothing; no scheduler pass unless
        # cancelled (parking for the answer is this call's checkpoint).
        await trio.lowlevel.checkpoint_if_cancelled()
        waiter = _Waiter()
        call_id = self._start_call(
            waiter, method, params, timeout, progress, tool, cancel_on_timeout
        )
        try:
            # ``_pump(own=True)`` inlined: a call that needs no opening and no flush
            # (the usual case) costs no coroutine of its own.
            flush = self._perform(False)  # (not in the background)
            if flush or self._open_wanted:
                await self._open_and_flush(flush)
            self._after_input()
            own = self._take_own()
            if own is None:
                if waiter.done:
                    await trio.lowlevel.checkpoint()  # (answered already: still one)
                else:
                    await self._answer(waiter)  # stdio: the caller reads it itself
            else:
                # HTTP: this task performs its own request (no task, no extra pass);
                # reading its answer was this call's checkpoint.
                await self._run_own(own, waiter, call_id)
                if not waiter.done:
                    await waiter.park()
        except trio.Cancelled:
            self._abandon(call_id)
            raise
        if waiter.settle is not None:
            # Progress callbacks were queued for this call: it returns only once they
            # have run (issue 9, item 6). No cost for a call without them.
            await waiter.settle()
        if waiter.error is not None:
            raise waiter.error
        return waiter.result

    def _abandon(self, call_id: int) -> None:
        """The caller's scope was cancelled: the machine cancels the call (and tells
        the server, per its rules); what it has to send goes out in the background."""
        self._waiters.pop(call_id, None)
        self._progress.pop(call_id, None)
        self._progressed.discard(call_id)
        self._conn.cancel_call(call_id, CANCELLED_REASON, now=trio.current_time())
        self._pump_nowait()

    async def notify(
        self, method: str, params: dict[str, Any] | None = None, *, only_if_connected: bool = False
    ) -> None:
        if only_if_connected and not self.is_connected:
            return
        await self.ensure_connected()
        await trio.lowlevel.checkpoint()  # a notification in a cancelled scope sends nothing
        self._conn.notify(method, params, now=trio.current_time())
        await self._pump()

    async def reply(self, epoch: int, request_id: int | str, reply: Reply) -> None:
        """Answer a server request on the transport that asked it (``epoch``: what its
        :class:`~mcp_proto.client.routing.RequestDue` carried); an answer for an
        earlier one is dropped."""
        if epoch != self._epoch:
            return
        if reply.code is None:
            self._conn.answer(request_id, reply.result)
        else:
            self._conn.refuse(request_id, reply.code, reply.message or "")
        try:
            await self._pump()
        except MCPError as exc:
            self._logger.debug("could not answer %s: %s", self.name, exc)

    # ------------------------------------------------------------ the timer

    def _arm_timer(self, deadline: float) -> None:
        """Make sure the timer task wakes by ``deadline`` (earlier than its current
        one). Sequential calls with one timeout never get here after the first: each
        new deadline is later than the one the timer already sleeps towards."""
        self._timer_deadline = deadline
        if self._timer_scope is not None:
            self._timer_scope.deadline = deadline
        elif not self._timer_running:
            self._timer_running = self._spawn(self._timer_loop)

    async def _timer_loop(self) -> None:
        """Sleep until the machine's next deadline, hand it the time, repeat; end when
        it has none (the next input with a deadline restarts the task)."""
        conn = self._conn
        try:
            while True:
                with trio.CancelScope(deadline=self._timer_deadline) as scope:
                    self._timer_scope = scope
                    await trio.sleep_forever()
                self._timer_scope = None
                self._timer_deadline = math.inf
                now = trio.current_time()
                deadline = conn.next_deadline()
                if deadline is not None and deadline <= now:
                    try:
                        conn.handle_timeout(now)
                        self._pump_nowait()
                    except Exception:  # never take the client's nursery down
                        self._logger.exception("server %s: the timer failed", self.name)
                deadline = conn.next_deadline()
                if deadline is None:
                    return
                self._timer_deadline = min(self._timer_deadline, deadline)
        finally:
            self._timer_scope = None
            self._timer_running = False
            self._timer_deadline = math.inf

    # ------------------------------------------------------------ events

    def _dispatch(self) -> None:
        conn = self._conn
        while True:
            event = conn.next_event()
            if event is NEED_DATA:
                return
            if isinstance(event, _CALL_ENDED):
                self._finish_call(event)
            elif isinstance(event, _PROGRESS_CHANNEL):
                callback = self._progress.get(event.call_id)
                if callback is not None:
                    self._progressed.add(event.call_id)
                    self._on_event(self, ProgressDue(callback, event))
            elif isinstance(event, cev.ServerRequest):
                self._on_event(self, RequestDue(self._epoch, event))
            elif isinstance(event, cev.Connected):
                info = event.info
                self._logger.debug(
                    "connected to %s (protocol %s)", self.name, info.protocol_version
                )
                self._wake(self._connecting, info, None)
            elif isinstance(event, cev.ConnectFailed):
                self._wake(self._connecting, None, event.error)
            elif isinstance(event, cev.Disconnected):
                self._logger.debug("server %s: disconnected: %s", self.name, event.error)
                self._on_event(self, CONNECTION_ENDED)
            elif isinstance(event, cev.Closed):
                self._wake(self._closing, None, None)
                self._on_event(self, CONNECTION_ENDED)
            elif isinstance(event, cev.Diagnostic):
                if event.deprecation:  # spent only once written (DEP-12)
                    deprecations.announce(event.deprecation, self._write_notice)
                else:
                    level = logging.getLevelName(event.level.upper())
                    self._logger.log(level, "%s", event.message)
            else:  # notifications, log messages, discarded input: the client's
                self._on_event(self, event)

    def _write_notice(self, text: str) -> bool:
        """A deprecation notice the connection handed over (DEP-5), through the host's
        logger: ``False`` keeps it due (DEP-12..14)."""
        return write_notice(self._logger, text)

    def _finish_call(self, event: cev.CallSucceeded | cev.CallFailed) -> None:
        call_id = event.call_id
        waiter = self._waiters.pop(call_id, None)
        progressed = False
        # (No call has a progress callback, as a rule: then no lookup at all.)
        if self._progress and self._progress.pop(call_id, None) is not None:
            progressed = call_id in self._progressed
        if progressed:
            self._progressed.discard(call_id)
        if waiter is None:
            return
        if progressed:
            # Its progress callbacks are queued ahead of this point (the machine emits
            # a call's progress before its result): the client queues a marker behind
            # them and sets ``waiter.settle`` to wait for it.
            self._on_event(self, SettleDue(waiter))
        if isinstance(event, cev.CallSucceeded):
            waiter.result = event.result
        else:
            waiter.error = event.error
        waiter.finish()

    @staticmethod
    def _wake(waiters: list[_Waiter], result: Any, error: MCPError | None) -> None:
        woken = list(waiters)
        waiters.clear()
        for waiter in woken:
            waiter.result, waiter.error = result, error
            waiter.finish()
