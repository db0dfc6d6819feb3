"""What every Trio-shell server shares: a session, waiters, dispatch, retries.

The Trio twin of ``mcp_io_sync._base``: transport subclasses supply ``_open()``,
``_transmit(session, deadline)``, ``_close()`` and ``_after_handshake()``; the rest —
handshake, waiting with the core's deadlines, routing events, retrying per the core's
retry table — is here. Single-threaded: no locks around the session.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import trio

from mcp_proto import events as ev
from mcp_proto._util import NEED_DATA
from mcp_proto.config import ServerConfig
from mcp_proto.errors import ConnectionError, MCPError, SessionExpiredError
from mcp_proto.http import backoff_delay, is_retryable
from mcp_proto.limits import Limits
from mcp_proto.server_view import ServerView
from mcp_proto.session import ServerInfo, Session, State
from mcp_proto.types import Implementation

__all__ = ["BaseServer", "SessionExpired"]

#: At close, how long handlers already answering server requests may still take before
#: what is left is refused (issue 8, item 5). Only spent while one is unanswered.
CLOSE_ANSWER_WAIT = 0.5


#: Raised by an HTTP transport when the server answered 404 to our session id: the
#: core's typed error (issue 9 item 4), under the name the transports catch it by.
SessionExpired = SessionExpiredError


class _Waiter:
    """One request's answer slot. The waiting task parks itself directly
    (``wait_task_rescheduled``): no ``trio.Event``/``ParkingLot`` per request."""

    __slots__ = ("done", "error", "result", "settle", "task")

    def __init__(self) -> None:
        self.done = False
        self.result: Any = None
        self.error: MCPError | None = None
        self.task: trio.lowlevel.Task | None = None  # set while the caller is parked
        # Set (by the client, before ``finish``) only for a call whose progress
        # callbacks were queued: waits until they have run (see BaseServer._dispatch).
        self.settle: Callable[[], Awaitable[None]] | None = None

    def finish(self) -> None:
        self.done = True
        task = self.task
        if task is not None:
            self.task = None
            trio.lowlevel.reschedule(task)

    def abort(self, _raise_cancel: Any) -> trio.lowlevel.Abort:
        # The parked caller is being cancelled: forget it (finish() must not wake it).
        self.task = None
        return trio.lowlevel.Abort.SUCCEEDED


class BaseServer(ServerView):
    """One MCP server (Trio shell). Its background tasks run in the client's nursery."""

    type = "base"

    #: Whether ``_transmit`` is always a checkpoint. The stdio transport writes without
    #: a scheduler pass when the pipe has room; requests and notifications then get
    #: their checkpoint here (parking for the answer is one).
    _transmit_checkpoints = True

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
        nursery: Callable[[], trio.Nursery],
    ) -> None:
        self.config = config
        self.name = name
        self._client_info = client_info
        self._capabilities = capabilities
        self._limits = limits
        self._logger = logger
        self._on_event = on_event
        self._nursery = nursery
        self._connect_lock = trio.Lock()
        self._session: Session | None = None
        self._waiters: dict[Any, _Waiter] = {}
        self._progress: dict[Any, Callable[..., Any]] = {}
        # Requests for which a progress callback was queued to the client's dispatcher:
        # their callers wait for those callbacks before returning (see _dispatch).
        self._progressed: set[Any] = set()
        self._random = random.Random()  # jitter for retry backoff (the shell owns randomness)
        # Request timeouts: one timer task per server sleeps until the earliest deadline
        # it was given (instead of a cancel scope around every wait).
        self._timer_deadline = math.inf
        self._timer_scope: trio.CancelScope | None = None
        self._timer_running = False

    # ------------------------------------------------------------ transport hooks

    async def _open(self) -> None:
        raise NotImplementedError

    async def _transmit(self, session: Session, deadline: float | None = None) -> None:
        raise NotImplementedError

    async def _close(self) -> None:
        raise NotImplementedError

    async def _after_handshake(self, session: Session, info: ServerInfo) -> None:
        """Called once the handshake completed (HTTP: start the GET stream)."""

    # ------------------------------------------------------------ lifecycle

    async def connect(self) -> ServerInfo:
        return await self.ensure_connected()

    async def ensure_connected(self) -> ServerInfo:
        # Fast path, no lock: every request passes here, and taking the connect lock
        # (a checkpoint under Trio) each time is measurable.
        session = self._session
        if session is not None and session.server is not None and self.is_connected:
            return session.server
        async with self._connect_lock:
            if self.is_connected:
                assert self._session is not None and self._session.server is not None
                return self._session.server
            await self._teardown(ConnectionError("reconnecting"))
            await self._open()
            session = Session(
                client_info=self._client_info,
                capabilities=self._capabilities(),
                limits=self._limits,
            )
            self._session = session
            try:
                rid = session.start_handshake(now=trio.current_time(), timeout=self.read_timeout)
                waiter = self._waiters[rid] = _Waiter()
                await self._transmit(session, session.deadline_of(rid))
                result = await self._wait(session, rid, waiter)
                info = session.complete_handshake(result)
                await self._after_handshake(session, info)
                await self._transmit(session)
            except SessionExpired:
                await self._teardown(ConnectionError("the handshake failed"))
                raise ConnectionError(f"server {self.name!r} refused the handshake") from None
            except BaseException:
                with trio.CancelScope(shield=True):
                    await self._teardown(ConnectionError("the handshake failed"))
                raise
            self._logger.debug("connected to %s (protocol %s)", self.name, info.protocol_version)
            return info

    async def cleanup(self) -> None:
        """Close the transport (bounded) and fail anything pending; server requests
        still unanswered are answered (or refused) first."""
        async with self._connect_lock:
            with trio.CancelScope(shield=True):
                await self._settle_server_requests()
            await self._teardown(ConnectionError("the client closed the connection"))
        if self._timer_scope is not None:
            # Nothing is pending any more: let the timer task see that and end.
            self._timer_scope.deadline = -math.inf

    async def _settle_server_requests(self) -> None:
        """Before closing: let the handlers already answering server requests finish
        (at most ``CLOSE_ANSWER_WAIT``), refuse what is left with a JSON-RPC error, and
        send it all. A server left waiting on a request would outlive our stdin (a
        Node server stays alive on one until it times out: issue 8, item 5)."""
        session = self._session
        if session is None or not self.is_connected:
            return
        # One pass lets the reader task take in what the server already sent (it
        # reads as soon as the pipe is readable) and hand its requests to handlers.
        await trio.lowlevel.checkpoint()
        with trio.move_on_after(CLOSE_ANSWER_WAIT):
            pause = 0.001
            while session.unanswered_server_requests:
                await trio.sleep(pause)
                pause = min(pause * 2, 0.02)
        refused = session.refuse_server_requests()
        if not refused:
            return  # the handlers sent their answers themselves
        self._logger.debug("server %s: refused %d request(s) at close", self.name, refused)
        try:
            # Bounded: an HTTP server that stopped answering must not hold up close.
            with trio.move_on_after(max(CLOSE_ANSWER_WAIT, 1.0)):
                await self._transmit(session)
        except (MCPError, SessionExpired) as exc:
            self._logger.debug("server %s: could not answer at close: %s", self.name, exc)

    async def _teardown(self, error: MCPError) -> None:
        session = self._session
        with trio.CancelScope(shield=True):
            await self._close()
        if session is not None:
            self._lost(session, error)

    # ------------------------------------------------------------ requests

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[..., Any] | None = None,
    ) -> Any:
        """Send a request and wait for its result (or its typed error), retrying what
        the core's retry table allows and replacing an expired HTTP session."""
        attempt = 0
        expired_once = False
        while True:
            try:
                return await self._request_once(method, params, timeout=timeout, progress=progress)
            except SessionExpired as expired:
                self._logger.info("server %s: the session expired; starting a new one", self.name)
                async with self._connect_lock:
                    await self._teardown(expired)
                if expired_once or not is_retryable(method, expired):
                    raise SessionExpiredError(
                        f"server {self.name!r}: the session expired during {method}; "
                        "a new session was started but the request was not re-sent"
                    ) from None
                expired_once = True
            except MCPError as exc:
                attempt += 1
                if attempt > self.config.retries or not is_retryable(method, exc):
                    raise
                delay = backoff_delay(
                    attempt, self.config.retry_backoff, jitter=self._random.random() * 0.25
                )
                self._logger.info(
                    "server %s: %s failed (%s); retry %d in %.2fs",
                    *(self.name, method, exc, attempt, delay),
                )
                await trio.sleep(delay)

    async def _request_once(
        self,
        method: str,
        params: dict[str, Any] | None,
        *,
        timeout: float | None,
        progress: Callable[..., Any] | None,
    ) -> Any:
        session = self._session
        if session is None or session.server is None or not self.is_connected:
            await self.ensure_connected()
            session = self._session
            if session is None or session.state is not State.READY:
                raise ConnectionError(f"server {self.name!r} is not connected")
        if not self._transmit_checkpoints:
            # A call in an already cancelled scope sends nothing (as when the write
            # itself was the checkpoint). No scheduler pass unless cancelled.
            await trio.lowlevel.checkpoint_if_cancelled()
        rid = session.send_request(
            method,
            params,
            now=trio.current_time(),
            timeout=self.read_timeout if timeout is None else timeout,
            want_progress=progress is not None,
        )
        waiter = self._waiters[rid] = _Waiter()
        if progress is not None:
            self._progress[rid] = progress
        self._logger.debug("-> %s %s (id %s)", self.name, method, rid)
        try:
            await self._transmit(session, session.deadline_of(rid))
        except BaseException:
            self._waiters.pop(rid, None)
            self._progress.pop(rid, None)
            session.cancel_request(rid, "send failed", notify=False)
            raise
        return await self._wait(session, rid, waiter)

    async def notify(
        self, method: str, params: dict[str, Any] | None = None, *, only_if_connected: bool = False
    ) -> None:
        if only_if_connected and not self.is_connected:
            return
        await self.ensure_connected()
        if not self._transmit_checkpoints:
            await trio.lowlevel.checkpoint()
        session = self._session
        if session is None:
            raise ConnectionError(f"server {self.name!r} is not connected")
        session.send_notification(method, params)
        await self._transmit(session)

    async def reply(
        self,
        session: Session,
        request_id: Any,
        result: Any = None,
        *,
        code: int | None = None,
        message: str = "",
    ) -> None:
        """Answer a server request on the session that asked it."""
        if code is None:
            session.send_response(request_id, result)
        else:
            session.send_error_response(request_id, code, message)
        if session is not self._session:
            session.data_to_send()
            return
        try:
            await self._transmit(session)
        except (MCPError, SessionExpired) as exc:
            self._logger.debug("could not answer %s: %s", self.name, exc)

    async def _wait(self, session: Session, rid: Any, waiter: _Waiter) -> Any:
        try:
            if not waiter.done:
                deadline = session.deadline_of(rid)
                if deadline is not None and deadline < self._timer_deadline:
                    self._arm_timer(deadline)
                # Parking is this call's checkpoint; _Waiter.finish() reschedules us.
                waiter.task = trio.lowlevel.current_task()
                await trio.lowlevel.wait_task_rescheduled(waiter.abort)
            elif not self._transmit_checkpoints:
                # The answer is already here, but the call must still be a checkpoint
                # (and honour a cancellation).
                await trio.lowlevel.checkpoint()
        except trio.Cancelled:
            # The caller's own scope was cancelled: abandon the request politely.
            waiter.task = None
            self._waiters.pop(rid, None)
            self._progress.pop(rid, None)
            self._progressed.discard(rid)
            if session.cancel_request(rid, "Request cancelled by the client") and (
                session is self._session
            ):
                with trio.CancelScope(shield=True), trio.move_on_after(1):
                    try:
                        await self._transmit(session)
                    except (MCPError, SessionExpired):
                        pass
            raise
        if waiter.settle is not None:
            # Progress callbacks were queued for this call: it returns only once they
            # have run (issue 9, item 6). No cost for a call without them.
            await waiter.settle()
        if waiter.error is not None:
            raise waiter.error
        return waiter.result

    # ------------------------------------------------------------ timeouts

    def _arm_timer(self, deadline: float) -> None:
        """Make sure the timer task wakes by ``deadline`` (earlier than its current
        one). Sequential calls with one timeout never get here after the first: each
        new deadline is later than the one the timer already sleeps towards."""
        self._timer_deadline = deadline
        if self._timer_scope is not None:
            self._timer_scope.deadline = deadline
        elif not self._timer_running:
            self._timer_running = True
            self._nursery().start_soon(self._timer_loop)

    async def _timer_loop(self) -> None:
        """Sleep until the earliest armed deadline, expire what is due, repeat; end
        when no request has a deadline (the next one with a deadline restarts it)."""
        try:
            while True:
                with trio.CancelScope(deadline=self._timer_deadline) as scope:
                    self._timer_scope = scope
                    await trio.sleep_forever()
                self._timer_scope = None
                self._timer_deadline = math.inf
                session = self._session
                if session is not None:
                    try:
                        await self._expire_due(session)
                    except Exception:  # never take the client's nursery down
                        self._logger.exception("server %s: expiring requests failed", self.name)
                    # (a request may have armed an earlier deadline meanwhile)
                    after = session.next_deadline()
                    if after is not None and after < self._timer_deadline:
                        self._timer_deadline = after
                if self._timer_deadline == math.inf:
                    return
        finally:
            self._timer_scope = None
            self._timer_running = False
            self._timer_deadline = math.inf

    async def _expire_due(self, session: Session) -> None:
        """The timer's ``_expire``: the ``notifications/cancelled`` go out before the
        callers see their timeouts (as when each caller expired its own request)."""
        session.handle_timeout(trio.current_time())
        events = self._drain(session)
        try:
            if events and session is self._session:
                try:
                    await self._transmit(session)
                except (MCPError, SessionExpired):
                    pass  # best effort (PROG-5): the timeout is what the caller sees
        finally:
            self._dispatch(session, events)

    async def _expire(self, session: Session) -> None:
        """The core decides what expired; it also queues notifications/cancelled."""
        session.handle_timeout(trio.current_time())
        self._dispatch(session, self._drain(session))
        if session is self._session:
            try:
                await self._transmit(session)
            except (MCPError, SessionExpired):
                pass  # best effort (PROG-5): the timeout is what the caller sees

    # ------------------------------------------------------------ inbound

    def _deliver(self, session: Session, messages: Sequence[bytes | str]) -> None:
        if not messages:
            return
        for message in messages:
            session.receive_message(message)
        self._dispatch(session, self._drain(session))

    def _lost(self, session: Session, error: MCPError) -> None:
        if session.state is State.CLOSED:
            return
        session.connection_lost(error)
        self._dispatch(session, self._drain(session))
        self._on_event(self, ("closed",))

    def _drain(self, session: Session) -> list[Any]:
        out: list[Any] = []
        while True:
            event = session.next_event()
            if event is NEED_DATA:
                return out
            out.append(event)

    def _dispatch(self, session: Session, events: list[Any]) -> None:
        for event in events:
            if isinstance(event, (ev.ResponseReceived, ev.RequestFailed)):
                rid = event.request_id
                waiter = self._waiters.pop(rid, None)
                progressed = self._progress.pop(rid, None) is not None and rid in self._progressed
                if progressed:
                    self._progressed.discard(rid)
                if waiter is None:
                    continue
                if progressed:
                    # Its progress callbacks are queued ahead of this point: the client
                    # queues a marker behind them and sets ``waiter.settle`` to wait
                    # for it.
                    self._on_event(self, ("settle", waiter))
                if isinstance(event, ev.ResponseReceived):
                    waiter.result = event.result
                else:
                    waiter.error = event.error
                waiter.finish()
            elif isinstance(event, ev.ProgressReceived):
                callback = self._progress.get(event.request_id)
                if callback is not None:
                    self._progressed.add(event.request_id)
                    self._on_event(self, ("progress", callback, event))
            elif isinstance(event, ev.ServerRequest):
                self._on_event(self, ("request", session, event))
            else:
                self._on_event(self, event)
