"""The per-server protocol machine (issue 9): :class:`Connection`, its public surface.

See the package docstring (``mcp_proto/connection/__init__.py``) for the contract; the
state and the internal steps are :mod:`._core`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from .. import jsonrpc
from .._util import NEED_DATA, check_seconds
from ..errors import CapabilityError, LocalProtocolError, MCPError, ValidationError
from ..session import State as SessionState
from ._calls import CLOSE_ANSWER_WAIT
from ._core import _LIVE, _NO_LISTEN, ConnectionState, MachineCore
from .events import CallCancelledError, Closed, Event
from .frames import ExchangeFailure, Frame

if TYPE_CHECKING:
    from ..modern.notify_queue import ListenFilter
    from ._listen import AckTimeout

__all__ = ["Connection", "ConnectionState"]


class Connection(MachineCore):
    """One MCP server, as a sans-IO state machine (see the package docstring)."""

    # ================================================================ user operations

    def start_call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        now: float,
        timeout: float | None = None,
        progress: bool = False,
        tool: Any = None,
        flush: bool = True,
    ) -> int:
        """Start a call; returns its call id. See the package docstring.

        ``tool``: for ``tools/call`` over HTTP in a 2026-07-28 session, the called
        tool's definition (a :class:`~mcp_proto.types.Tool` or its ``tools/list``
        dict): its ``x-mcp-header`` annotations become ``Mcp-Param-*`` headers (HDR-1).
        Ignored otherwise."""
        if self.state is ConnectionState.CLOSING:
            raise LocalProtocolError(f"server {self.name!r} is closing")
        if not isinstance(method, str) or not method:
            raise ValueError("method must be a non-empty string")
        if timeout is None:
            timeout = self.config.read_timeout  # validated by ServerConfig
        else:
            timeout = check_seconds(timeout, "timeout", allow_zero=True)
        if params is not None and not isinstance(params, dict):
            raise ValueError(f"params must be a dict or None, got {type(params).__name__}")
        meta = (params or {}).get("_meta")
        if meta is not None and not isinstance(meta, dict):
            raise ValueError("params._meta must be an object")
        if len(self._calls.calls) >= self.limits.max_pending_requests:
            raise LocalProtocolError("too many requests in flight")
        call = self._calls.new(method, params, timeout, progress)
        call.tool = tool
        if self.state is ConnectionState.READY:
            # The session refuses (CapabilityError, LocalProtocolError, ValueError)
            # before it changes anything.
            try:
                self._send_call(call, now)
            except TypeError as exc:
                self._calls.finish(call)
                raise ValueError(f"params cannot be encoded as JSON: {exc}") from None
            except BaseException:
                self._calls.finish(call)
                raise
            if flush:
                self._flush(now)
        else:
            session = self._session
            if session is not None and session.state is SessionState.READY:
                try:
                    session.require_capability(method)  # known from the last handshake
                except CapabilityError:
                    self._calls.finish(call)
                    raise
            try:
                # Not sendable yet: prove now that it can be encoded, so a caller's
                # mistake is raised here and not as a failure later.
                jsonrpc.encode_request(0, method, params)
            except (TypeError, ValueError) as exc:
                self._calls.finish(call)
                raise ValueError(f"params cannot be encoded as JSON: {exc}") from None
            self._calls.queue(call)
            self._after(now)
        return call.call_id

    def notify(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        now: float,
        only_if_connected: bool = False,
    ) -> None:
        """Send a notification (connecting first unless ``only_if_connected``, which
        drops it when not connected)."""
        if self.state is ConnectionState.CLOSING:
            raise LocalProtocolError(f"server {self.name!r} is closing")
        if self.state is ConnectionState.READY:
            assert self._session is not None
            self._session.send_notification(method, params)
            self._flush(now)
        elif not only_if_connected:
            self._notes.append((method, params))
            self._after(now)

    def cancel_call(
        self, call_id: int, reason: str, *, now: float, error: MCPError | None = None
    ) -> None:
        """The caller gave up on ``call_id``: ``CallFailed`` (with ``error``, default
        :class:`CallCancelledError`) and a ``notifications/cancelled`` for the attempt
        in flight (never for ``initialize``). Unknown or ended ids are ignored."""
        call = self._calls.calls.get(call_id)
        if call is None:
            return
        rid = call.rid
        if rid is not None and self._session is not None:
            self._session.cancel_request(rid, reason)
            self._transport.attempt_ended(rid, False)
        self._end(call, error or CallCancelledError(f"{call.method} was cancelled: {reason}"))
        self._after(now)

    def start_listen(
        self,
        notifications: ListenFilter | Mapping[str, Any],
        *,
        now: float,
        ack_timeout: AckTimeout = None,
    ) -> int:
        """Open a subscription (``subscriptions/listen``, 2026-07-28); returns its sub id.

        ``notifications``: a :class:`ListenFilter` or a mapping of its fields (API or
        wire names), copied and frozen now (SUB-13). ``ack_timeout``: ``None`` is
        ``config.read_timeout``, ``False`` waits for ever; it bounds the wait for the
        acknowledgment of every listen request of the subscription (SUB-5). Connects
        implicitly. Raises ``ValidationError`` (bad filter or timeout),
        ``CapabilityError`` (connected to a handshake-era server) or
        ``LocalProtocolError`` (closing). Exactly one ``ListenEnded`` follows."""
        if self.state is ConnectionState.CLOSING:
            raise LocalProtocolError(f"server {self.name!r} is closing")
        try:
            sub_id = self._listen_manager().start(notifications, ack_timeout, now)
        except ValueError as exc:
            if isinstance(exc, MCPError):
                raise
            raise ValidationError(str(exc)) from None
        self._after(now)
        return sub_id

    def close_listen(self, sub_id: int, *, now: float) -> None:
        """End a subscription: stdio sends ``notifications/cancelled`` for its listen
        ids on the live process (SUB-29); HTTP closes its stream (SUB-16).
        ``ListenEnded(sub_id, None)`` follows. Unknown or ended ids are ignored."""
        if self._listen_manager().close(sub_id, now):
            self._after(now)

    @property
    def subscription_restart_min_interval(self) -> float:
        """stdio: a process that dies less than this many seconds after receiving the
        subscriptions is a crash loop; they end instead of being re-sent (SUB-21)."""
        return self._listen_manager().policy.min_interval

    @subscription_restart_min_interval.setter
    def subscription_restart_min_interval(self, seconds: float) -> None:
        self._listen_manager().policy.min_interval = check_seconds(
            seconds, "subscription_restart_min_interval", allow_zero=True
        )

    def listen_state(self, sub_id: int) -> str:
        """``"waiting"`` (for a connection, a restart or a re-open: not active, SUB-14),
        ``"opening"`` (sent, not acknowledged), ``"active"`` or ``"ended"``."""
        from ._listen import SubState

        state = self._listen_manager().state_of(sub_id)
        return "waiting" if state is SubState.BACKOFF else state.value

    def answer(self, request_id: jsonrpc.RequestId, result: Any, *, now: float = 0.0) -> None:
        """Answer a server request. Dropped after close (nobody to answer), for a
        request of an earlier session, and when already answered or refused."""
        session = self._session
        if session is None or session.state is SessionState.CLOSED:
            return
        if request_id not in self._asked:
            return
        self._asked.discard(request_id)
        session.send_response(request_id, result)
        self._answered(now)

    def refuse(
        self,
        request_id: jsonrpc.RequestId,
        code: int,
        message: str,
        data: Any = None,
        *,
        now: float = 0.0,
    ) -> None:
        """Answer a server request with a JSON-RPC error."""
        session = self._session
        if session is None or session.state is SessionState.CLOSED:
            return
        if request_id not in self._asked:
            return
        self._asked.discard(request_id)
        session.send_error_response(request_id, code, message, data)
        self._answered(now)

    def close(self, now: float, *, keep_subscriptions: bool = False) -> None:
        """Begin closing; ``Closed`` is emitted when done. Every open call fails with
        a ``ConnectionError``. A later call opens a new connection.

        Subscriptions end with the same error, unless ``keep_subscriptions``: then each
        is cancelled on the wire and waits (``ListenInterrupted``) for the next
        ``connect`` (a host's cleanup-then-reconnect), where it is sent again, never
        judged by the restart bound (SUB-22)."""
        state = self.state
        if state is ConnectionState.CLOSING:
            return
        self._listen.keeping = keep_subscriptions
        if state in (ConnectionState.IDLE, ConnectionState.CLOSED):
            self.state = ConnectionState.CLOSED
            self._fail_all(self._closed_error(), now)
            self._events.append(Closed())
            return
        self.state = ConnectionState.CLOSING
        session = self._session
        if (
            state in _LIVE
            and session is not None
            and session.state is not SessionState.CLOSED
            and session.unanswered_server_requests
        ):
            # Handlers still answering server requests get CLOSE_ANSWER_WAIT (issue 8
            # item 5); what is left then is refused.
            self._close_deadline = now + CLOSE_ANSWER_WAIT
            self._after(now)
            return
        self._finish_close(now)
        self._after(now)

    @property
    def log_level(self) -> str | None:
        """The log level asked of a 2026-07-28 server, carried as
        ``_meta["io.modelcontextprotocol/logLevel"]`` on every later request (LIFE-15,
        LOG-2: this revision has no ``logging/setLevel``). ``None``: not asked. A
        ``logging/setLevel`` call in a modern session sets it and succeeds at once."""
        return self._era.log_level

    @log_level.setter
    def log_level(self, level: str | None) -> None:
        self._era.set_log_level(level)

    def set_header(self, name: str, value: str | None) -> None:
        """Replace (``None``: remove) one configured HTTP header, matched without case,
        for every request built from now on (a rotated ``Authorization``: CACHE-6).
        Requests already handed to the driver keep the value they were built with.

        Raises:
            ValueError: the configuration refuses it (a stdio server has no headers; a
                value with CR/LF).
        """
        headers = {k: v for k, v in self.config.headers.items() if k.lower() != name.lower()}
        if value is not None:
            headers[name] = value
        self.config = attrs.evolve(self.config, headers=headers)
        self._transport.headers_changed(self.config.headers)

    # ================================================================ driver inputs

    def transport_opened(self, now: float, *, pid: int | None = None) -> None:
        """The driver opened the transport. ``pid``: the stdio server's process id,
        the key of the era cache for stdio (LIFE-18: the era is cached "for the
        lifetime of the server process"); without it stdio eras are not cached."""
        self._era.pid = pid
        if self.state is ConnectionState.OPENING:
            self._transport.opened(now)
        self._after(now)

    def transport_failed(self, error: MCPError, now: float) -> None:
        if self.state is ConnectionState.OPENING:
            self._connect_failed(error, now, close=False)
        self._after(now)

    def transport_closed(self, now: float) -> None:
        if self.state is ConnectionState.CLOSING and self._close_deadline is None:
            self.state = ConnectionState.CLOSED
            self._events.append(Closed())
        self._after(now)

    def receive_data(self, data: bytes, now: float) -> None:
        self._transport.receive_data(data, now)
        self._after(now)

    def receive_eof(self, now: float, detail: str = "") -> None:
        self._transport.receive_eof(now, detail)
        self._after(now)

    def get_buffer(self, size: int) -> memoryview:
        return self._transport.get_buffer(size)

    def buffer_updated(self, nbytes: int, now: float) -> None:
        self._transport.buffer_updated(nbytes, now)
        self._after(now)

    def exchange_head(
        self, xid: int, status: int, headers: list[tuple[str, str]], now: float
    ) -> None:
        self._transport.exchange_head(xid, status, headers, now)
        self._after(now)

    def exchange_data(self, xid: int, data: bytes, now: float) -> None:
        self._transport.exchange_data(xid, data, now)
        self._after(now)

    def exchange_end(self, xid: int, now: float) -> None:
        self._transport.exchange_end(xid, now)
        self._after(now)

    def exchange_failed(self, xid: int, failure: ExchangeFailure, now: float) -> None:
        self._transport.exchange_failed(xid, failure, now)
        self._after(now)

    def wants_exchange(self, xid: int) -> bool:
        return self._transport.wants_exchange(xid)

    # ================================================================ outputs

    def next_deadline(self) -> float | None:
        # After every input (the hot path): no lists, and only the sources that can
        # have a deadline are asked (the session's request timeouts always can).
        session = self._session
        best = None
        if session is not None and session._deadlines:  # (none pending: no call)
            best = session.next_deadline()
        d = self._close_deadline
        if d is not None and (best is None or d < best):
            best = d
        if self._calls.backoff:
            d = self._calls.next_deadline()
            if d is not None and (best is None or d < best):
                best = d
        if self._transport.timed:
            d = self._transport.next_deadline()
            if d is not None and (best is None or d < best):
                best = d
        if self._listen is not _NO_LISTEN:
            d = self._listen.next_deadline()
            if d is not None and (best is None or d < best):
                best = d
        return best

    def take_events(self) -> list[Event]:
        """Every event :meth:`next_event` would return, oldest first, at once (a
        driver that queues them for dispatch makes one call per input, not one per
        event)."""
        events = self._events
        if not events:
            return []
        out = list(events)
        events.clear()
        return out

    def handle_timeout(self, now: float) -> None:
        session = self._session
        if session is not None and session.state is not SessionState.CLOSED:
            session.handle_timeout(now)
            self._drain(now)
        self._calls.due(now)
        self._listen.handle_timeout(now)
        self._transport.handle_timeout(now)
        if self._close_deadline is not None and now >= self._close_deadline:
            self._finish_close(now)
        self._after(now)

    def flush(self, now: float) -> None:
        """Emit the requests ``start_call(..., flush=False)`` held back (stdio: one
        ``Write`` for all of them)."""
        self._flush(now)

    def frames_to_send(self) -> list[Frame]:
        out, self._frames = self._frames, []
        return out

    def next_event(self) -> Event | type[NEED_DATA]:
        if self._events:
            return self._events.popleft()
        return NEED_DATA
