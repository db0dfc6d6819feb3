"""What every blocking-shell server shares: a session, waiters, dispatch, retries.

A transport subclass supplies four things: ``_open()`` (start a process / prepare an
HTTP pool), ``_send(session, frames)`` (move queued messages to the peer; an HTTP
transport also reads the replies there), ``_close()`` and ``_after_handshake()``.
Everything else — the handshake, waiting with the core's deadlines, routing events,
retrying per the core's retry table — is here, once.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from mcp_proto import events as ev
from mcp_proto._util import NEED_DATA
from mcp_proto.config import ServerConfig
from mcp_proto.effects import Call
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


#: Raised by an HTTP ``_send`` when the server answered 404 to our session id: the
#: core's typed error (issue 9 item 4), under the name the transports catch it by.
SessionExpired = SessionExpiredError


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


class BaseServer(ServerView):
    """One MCP server (blocking shell). Thread-safe: any thread may call
    :meth:`request`; the transport's reader (or the sending thread, for HTTP) feeds
    the session and wakes callers."""

    type = "base"

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
        self._client_info = client_info
        self._capabilities = capabilities
        self._limits = limits
        self._logger = logger
        self._on_event = on_event
        self._lock = threading.RLock()
        self._connect_lock = threading.Lock()
        self._session: Session | None = None
        self._waiters: dict[Any, _Waiter] = {}
        self._many_pool: Any = None  # request_many's threads (HTTP), made on first use
        self._progress: dict[Any, Callable[..., Any]] = {}
        # Requests for which a progress callback was queued to the client's dispatcher:
        # their callers wait for those callbacks before returning (see _dispatch).
        self._progressed: set[Any] = set()
        self._random = random.Random()  # jitter for retry backoff (the shell owns randomness)

    # ------------------------------------------------------------ transport hooks

    def _open(self) -> None:
        raise NotImplementedError

    def _send(self, session: Session, frames: list[bytes]) -> None:
        raise NotImplementedError

    def _close(self) -> None:
        raise NotImplementedError

    def _after_handshake(self, session: Session, info: ServerInfo) -> None:
        """Called once the handshake completed (HTTP: start the GET stream)."""

    # ------------------------------------------------------------ lifecycle

    def connect(self) -> ServerInfo:
        """Connect now (spawn / handshake) instead of on first use."""
        return self.ensure_connected()

    def ensure_connected(self) -> ServerInfo:
        """Open the transport and perform the handshake unless already connected."""
        # Fast path, no lock: every request passes here, and taking the connect lock
        # (a checkpoint under Trio) each time is measurable.
        session = self._session
        if session is not None and session.server is not None and self.is_connected:
            return session.server
        with self._connect_lock:
            if self.is_connected:
                assert self._session is not None and self._session.server is not None
                return self._session.server
            self._teardown(ConnectionError("reconnecting"))
            self._open()
            session = Session(
                client_info=self._client_info,
                capabilities=self._capabilities(),
                limits=self._limits,
            )
            with self._lock:
                self._session = session
            try:
                with self._lock:
                    rid = session.start_handshake(now=time.monotonic(), timeout=self.read_timeout)
                    waiter = self._waiters[rid] = _Waiter()
                self._transmit(session)
                result = self._wait(session, rid, waiter)
                with self._lock:
                    info = session.complete_handshake(result)
                self._after_handshake(session, info)
                self._transmit(session)
            except SessionExpired:
                self._teardown(ConnectionError("the handshake failed"))
                raise ConnectionError(f"server {self.name!r} refused the handshake") from None
            except BaseException:
                self._teardown(ConnectionError("the handshake failed"))
                raise
            self._logger.debug("connected to %s (protocol %s)", self.name, info.protocol_version)
            return info

    def cleanup(self) -> None:
        """Close the transport (bounded) and fail anything pending. Idempotent; the
        next request reconnects. Server requests still unanswered are answered (or
        refused) first."""
        with self._connect_lock:
            self._settle_server_requests()
            self._teardown(ConnectionError("the client closed the connection"))
        pool, self._many_pool = self._many_pool, None
        if pool is not None:
            pool.shutdown(wait=False)

    def _read_available(self) -> None:
        """Transport hook: take in what the server already sent, without waiting."""

    def _settle_server_requests(self) -> None:
        """Before closing: let the handlers already answering server requests finish
        (at most ``CLOSE_ANSWER_WAIT``), refuse what is left with a JSON-RPC error, and
        send it all. A server left waiting on a request would outlive our stdin (a
        Node server stays alive on one until it times out: issue 8, item 5)."""
        with self._lock:
            session = self._session
        if session is None or not self.is_connected:
            return
        self._read_available()
        deadline = time.monotonic() + CLOSE_ANSWER_WAIT
        pause = 0.001
        while True:
            with self._lock:
                if session.unanswered_server_requests == 0:
                    break
            if time.monotonic() >= deadline:
                break
            time.sleep(pause)
            pause = min(pause * 2, 0.02)
        with self._lock:
            refused = session.refuse_server_requests()
        if not refused:
            return  # the handlers sent their answers themselves
        self._logger.debug("server %s: refused %d request(s) at close", self.name, refused)
        try:
            self._transmit(session)
        except (MCPError, SessionExpired) as exc:
            self._logger.debug("server %s: could not answer at close: %s", self.name, exc)

    def _teardown(self, error: MCPError) -> None:
        with self._lock:
            session = self._session
        self._close()
        if session is not None:
            self._lost(session, error)

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

        Failures the core's retry table allows (transport errors, HTTP 5xx; never
        ``tools/call``, timeouts, too-large responses) are retried up to
        ``config.retries`` times with exponential backoff. An expired HTTP session is
        replaced by a fresh one; the request is re-sent only if it may be.
        """
        attempt = 0
        expired_once = False
        while True:
            try:
                return self._request_once(method, params, timeout=timeout, progress=progress)
            except SessionExpired as expired:
                # 2025-11-25 Session Management: start a new session on 404.
                self._logger.info("server %s: the session expired; starting a new one", self.name)
                with self._connect_lock:
                    self._teardown(expired)
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
                    self.name,
                    method,
                    exc,
                    attempt,
                    delay,
                )
                time.sleep(delay)

    # Transports whose requests can all be written before any answer is read (stdio);
    # the others get one request at a time from request_many.
    _pipelines = False

    # Threads request_many uses for a transport that cannot pipeline (HTTP): as many as
    # the connection pool holds (MAX_CONNECTIONS), so every POST can be in flight.
    _MANY_THREADS = 64

    def _outcome_of(self, call: Call) -> tuple[Any, MCPError | None]:
        try:
            result = self.request(
                call.method, call.params, timeout=call.timeout, progress=call.progress
            )
        except MCPError as exc:
            return None, exc
        return result, None

    def request_many(self, calls: Sequence[Call]) -> list[tuple[Any, MCPError | None]]:
        """Several requests at once: each outcome is (result, None) or (None, error).

        Over a pipelining transport (stdio) every request is queued, the lot is written
        in one go, then the answers are awaited in turn (the first wait reads for all of
        them). Otherwise (HTTP: one request per POST) each goes through ``request``, with
        its retries, on up to ``_MANY_THREADS`` threads at once."""
        if not self._pipelines or len(calls) < 2:
            if len(calls) < 2:
                return [self._outcome_of(call) for call in calls]
            pool = self._many_pool
            if pool is None:
                from concurrent.futures import ThreadPoolExecutor

                # Kept for the next round (threads are started as needed, up to the
                # bound); shut down by cleanup().
                pool = self._many_pool = ThreadPoolExecutor(
                    self._MANY_THREADS, thread_name_prefix=f"mcp-{self.name}"
                )
            return list(pool.map(self._outcome_of, calls))
        outcomes: list[tuple[Any, MCPError | None]] = []
        try:
            self.ensure_connected()
        except MCPError as exc:
            return [(None, exc)] * len(calls)
        started: list[tuple[Any, _Waiter]] = []
        with self._lock:
            session = self._session
            if session is None or session.state is not State.READY:
                error = ConnectionError(f"server {self.name!r} is not connected")
                return [(None, error)] * len(calls)
            now = time.monotonic()
            for call in calls:
                rid = session.send_request(
                    call.method,
                    call.params,
                    now=now,
                    timeout=self.read_timeout if call.timeout is None else call.timeout,
                    want_progress=call.progress is not None,
                )
                waiter = self._waiters[rid] = _Waiter()
                if call.progress is not None:
                    self._progress[rid] = call.progress
                started.append((rid, waiter))
        for call, (rid, _) in zip(calls, started, strict=True):
            self._logger.debug("-> %s %s (id %s)", self.name, call.method, rid)
        try:
            self._transmit(session, None)
        except BaseException as exc:
            with self._lock:
                for rid, _ in started:
                    self._waiters.pop(rid, None)
                    self._progress.pop(rid, None)
                    session.cancel_request(rid, "send failed", notify=False)
            if isinstance(exc, MCPError):
                return [(None, exc)] * len(calls)
            raise
        for rid, waiter in started:
            try:
                outcomes.append((self._wait(session, rid, waiter), None))
            except MCPError as exc:
                outcomes.append((None, exc))
            finally:
                if waiter.settle is not None:  # see _request_once
                    waiter.settle()
        return outcomes

    def _request_once(
        self,
        method: str,
        params: dict[str, Any] | None,
        *,
        timeout: float | None,
        progress: Callable[..., Any] | None,
    ) -> Any:
        self.ensure_connected()
        with self._lock:
            session = self._session
            if session is None or session.state is not State.READY:
                raise ConnectionError(f"server {self.name!r} is not connected")
            rid = session.send_request(
                method,
                params,
                now=time.monotonic(),
                timeout=self.read_timeout if timeout is None else timeout,
                want_progress=progress is not None,
            )
            waiter = self._waiters[rid] = _Waiter()
            if progress is not None:
                self._progress[rid] = progress
        self._logger.debug("-> %s %s (id %s)", self.name, method, rid)
        try:
            self._transmit(session, waiter)
        except BaseException:
            with self._lock:
                self._waiters.pop(rid, None)
                self._progress.pop(rid, None)
                session.cancel_request(rid, "send failed", notify=False)
            raise
        try:
            return self._wait(session, rid, waiter)
        finally:
            # Progress callbacks were queued for this call: it returns (or raises) only
            # once they have run (issue 9, item 6). Inline, not a helper: no extra
            # frame on the hot path, where ``settle`` is None.
            if waiter.settle is not None:
                waiter.settle()

    def notify(
        self, method: str, params: dict[str, Any] | None = None, *, only_if_connected: bool = False
    ) -> None:
        if only_if_connected and not self.is_connected:
            return
        self.ensure_connected()
        with self._lock:
            session = self._session
            if session is None:
                raise ConnectionError(f"server {self.name!r} is not connected")
            session.send_notification(method, params)
        self._transmit(session)

    def reply(
        self,
        session: Session,
        request_id: Any,
        result: Any = None,
        *,
        code: int | None = None,
        message: str = "",
    ) -> None:
        """Answer a server request on the session that asked it."""
        with self._lock:
            if code is None:
                session.send_response(request_id, result)
            else:
                session.send_error_response(request_id, code, message)
            current = session is self._session
        if not current:
            with self._lock:
                session.data_to_send()
            return
        try:
            self._transmit(session)
        except (MCPError, SessionExpired) as exc:
            self._logger.debug("could not answer %s: %s", self.name, exc)

    def _transmit(self, session: Session, waiter: _Waiter | None = None) -> None:
        """Hand whatever the session queued to the transport."""
        with self._lock:
            frames = session.data_to_send()
        if frames:
            self._send(session, frames)

    def _wait(self, session: Session, rid: Any, waiter: _Waiter) -> Any:
        event = waiter.get_event()
        while True:
            with self._lock:
                deadline = session.next_deadline()
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if waiter.done or event.wait(remaining):
                break
            self._expire(session)
        if waiter.error is not None:
            raise waiter.error
        return waiter.result

    def _expire(self, session: Session) -> None:
        """The core decides what expired; it also queues notifications/cancelled."""
        with self._lock:
            session.handle_timeout(time.monotonic())
            events = self._drain(session)
            current = session is self._session
        self._dispatch(session, events)
        if current:
            try:
                self._transmit(session)
            except (MCPError, SessionExpired):
                pass  # best effort (PROG-5): the timeout is what the caller sees

    # ------------------------------------------------------------ inbound

    def _deliver(self, session: Session, messages: Sequence[bytes | str]) -> None:
        if not messages:
            return
        with self._lock:
            for message in messages:
                session.receive_message(message)
            events = self._drain(session)
        self._dispatch(session, events)

    def _lost(self, session: Session, error: MCPError) -> None:
        with self._lock:
            if session.state is State.CLOSED:
                return
            session.connection_lost(error)
            events = self._drain(session)
        self._dispatch(session, events)
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
                with self._lock:
                    waiter = self._waiters.pop(rid, None)
                    progressed = self._progress.pop(rid, None) is not None and (
                        rid in self._progressed
                    )
                    if progressed:
                        self._progressed.discard(rid)
                if waiter is None:
                    continue
                if progressed:
                    # Its progress callbacks are queued ahead of this point: the client
                    # queues a marker behind them and sets ``waiter.settle`` (before
                    # ``done``, so the woken caller sees it) to wait for that marker.
                    self._on_event(self, ("settle", waiter))
                if isinstance(event, ev.ResponseReceived):
                    waiter.result = event.result
                else:
                    waiter.error = event.error
                waiter.done = True
                wake = waiter.event
                if wake is not None:
                    wake.set()
            elif isinstance(event, ev.ProgressReceived):
                with self._lock:
                    callback = self._progress.get(event.request_id)
                    if callback is not None:
                        self._progressed.add(event.request_id)
                if callback is not None:
                    self._on_event(self, ("progress", callback, event))
            elif isinstance(event, ev.ServerRequest):
                self._on_event(self, ("request", session, event))
            else:
                self._on_event(self, event)
