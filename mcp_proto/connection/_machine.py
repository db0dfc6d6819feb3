"""The per-server protocol machine (issue 9): :class:`Connection`.

See the package docstring (``mcp_proto/connection/__init__.py``) for the contract.
This module holds the lifecycle (open, handshake, ready, close), the routing of the
session's events to calls, and the user operations. The request pipeline's decisions
are :mod:`._calls`'; what each transport does is its strategy's (:mod:`._stdio`,
:mod:`._http`, :mod:`._legacy_sse`).
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable
from typing import Any

from .. import jsonrpc
from .._util import NEED_DATA, check_seconds
from ..config import ServerConfig
from ..errors import (
    CapabilityError,
    ConnectionError,
    IncompatibleServerError,
    LocalProtocolError,
    MCPError,
)
from ..events import (
    ProgressReceived,
    RequestFailed,
    ResponseReceived,
)
from ..limits import Limits
from ..session import ServerInfo, Session
from ..session import State as SessionState
from ..types import Implementation
from ._calls import CLOSE_ANSWER_WAIT, Call, CallState, Pipeline, Verdict
from ._transport import Outgoing, Transport
from .events import (
    CallCancelledError,
    CallFailed,
    CallProgress,
    CallSucceeded,
    Closed,
    Connected,
    ConnectFailed,
    Diagnostic,
    Disconnected,
    Event,
)
from .frames import CloseTransport, ExchangeFailure, Frame

__all__ = ["Connection", "ConnectionState"]


class ConnectionState(enum.Enum):
    IDLE = "idle"  # no transport (never opened, or lost: the next call reconnects)
    OPENING = "opening"  # OpenTransport asked for (legacy SSE: waiting for the endpoint)
    HANDSHAKING = "handshaking"  # initialize in flight (or the GET-ready wait)
    READY = "ready"  # requests flow
    CLOSING = "closing"  # close() began
    CLOSED = "closed"  # close() completed (a later call opens a new connection)


_LIVE = (ConnectionState.HANDSHAKING, ConnectionState.READY)


def _make_transport(conn: Connection) -> Transport:
    kind = conn.config.type
    if kind == "stdio":
        from ._stdio import StdioTransport

        return StdioTransport(conn)
    if kind == "sse":
        from ._legacy_sse import LegacySseTransport

        return LegacySseTransport(conn)
    from ._http import HttpTransport

    return HttpTransport(conn, streamable=kind == "streamable_http")


class Connection:
    """One MCP server, as a sans-IO state machine (see the package docstring)."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        name: str,
        client_info: Implementation,
        capabilities: Callable[[], dict[str, Any]],
        limits: Limits | None = None,
        random: Callable[[], float],
    ) -> None:
        self.config = config
        self.name = name
        self.client_info = client_info
        self.limits = limits or Limits()
        self._capabilities = capabilities
        self.state = ConnectionState.IDLE
        #: Always "legacy" for now: the handshake era (room for issue 10).
        self.era = "legacy"
        self._session: Session | None = None
        self._init_rid: jsonrpc.RequestId | None = None
        self._frames: list[Frame] = []
        self._events: deque[Event] = deque()
        self._calls = Pipeline(config, name, random)
        self._outbox: list[Outgoing] = []
        self._notes: list[tuple[str, dict[str, Any] | None]] = []  # sent once ready
        # Internal requests (keep-alive pings): rid -> what to do with the outcome.
        self._internal: dict[jsonrpc.RequestId, Callable[[bool, float], None]] = {}
        self._close_deadline: float | None = None
        self._transport = _make_transport(self)

    # ================================================================ introspection

    @property
    def server(self) -> ServerInfo | None:
        """What the last handshake established (``None`` before one completed)."""
        return self._session.server if self._session is not None else None

    @property
    def is_connected(self) -> bool:
        return self.state is ConnectionState.READY

    @property
    def first_unusable(self) -> str | None:
        """The first line the server wrote that is not JSON-RPC (quoted safely)."""
        return self._session.first_unusable if self._session is not None else None

    @property
    def pending_count(self) -> int:
        """Calls started and not ended yet."""
        return self._calls.open_count

    @property
    def unanswered_server_requests(self) -> int:
        session = self._session
        return session.unanswered_server_requests if session is not None else 0

    # ================================================================ user operations

    def connect(self, now: float) -> None:
        """Begin opening the transport and the handshake (idempotent while connecting
        or connected). Completion: ``Connected`` or ``ConnectFailed``."""
        if self.state in (ConnectionState.IDLE, ConnectionState.CLOSED):
            self.state = ConnectionState.OPENING
            self._transport.open(now)
        elif self.state is ConnectionState.CLOSING:
            raise LocalProtocolError(f"server {self.name!r} is closing")

    def start_call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        now: float,
        timeout: float | None = None,
        progress: bool = False,
    ) -> int:
        """Start a call; returns its call id. See the package docstring."""
        if self.state is ConnectionState.CLOSING:
            raise LocalProtocolError(f"server {self.name!r} is closing")
        if not isinstance(method, str) or not method:
            raise ValueError("method must be a non-empty string")
        if timeout is None:
            timeout = self.config.read_timeout
        timeout = check_seconds(timeout, "timeout", allow_zero=True)
        if params is not None and not isinstance(params, dict):
            raise ValueError(f"params must be a dict or None, got {type(params).__name__}")
        meta = (params or {}).get("_meta")
        if meta is not None and not isinstance(meta, dict):
            raise ValueError("params._meta must be an object")
        if self._calls.open_count >= self.limits.max_pending_requests:
            raise LocalProtocolError("too many requests in flight")
        session = self._session
        if session is not None and session.state is SessionState.READY:
            session.require_capability(method)
        call = self._calls.new(method, params, timeout, progress)
        if self.state is ConnectionState.READY:
            try:
                self._send_call(call, now)
            except TypeError as exc:
                self._calls.finish(call)
                raise ValueError(f"params cannot be encoded as JSON: {exc}") from None
            except BaseException:
                self._calls.finish(call)
                raise
            self._flush(now)
        else:
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

    def answer(self, request_id: jsonrpc.RequestId, result: Any, *, now: float = 0.0) -> None:
        """Answer a server request. Dropped after close (nobody to answer)."""
        session = self._session
        if session is None or session.state is SessionState.CLOSED:
            return
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
        session.send_error_response(request_id, code, message, data)
        self._answered(now)

    def _answered(self, now: float) -> None:
        if (
            self.state is ConnectionState.CLOSING
            and self._close_deadline is not None
            and self.unanswered_server_requests == 0
        ):
            self._finish_close(now)
        self._after(now)

    def close(self, now: float) -> None:
        """Begin closing; ``Closed`` is emitted when done. Every open call fails with
        a ``ConnectionError``. A later call opens a new connection."""
        state = self.state
        if state is ConnectionState.CLOSING:
            return
        if state in (ConnectionState.IDLE, ConnectionState.CLOSED):
            self.state = ConnectionState.CLOSED
            self._fail_all(self._closed_error())
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

    def _closed_error(self) -> ConnectionError:
        return ConnectionError(f"server {self.name!r}: the client closed the connection")

    def _finish_close(self, now: float) -> None:
        self._close_deadline = None
        session = self._session
        if session is not None and session.state is not SessionState.CLOSED:
            session.refuse_server_requests()
            self._take_output()
            if self._outbox:
                self._transport.transmit(self._outbox, now)
                self._outbox = []
            self._transport.closing(now)
        error = self._closed_error()
        self._init_rid = None
        self._transport.reset()
        if session is not None and session.state is not SessionState.CLOSED:
            session.connection_lost(error)
        self._drain(now)
        self._fail_all(error)
        self._emit(CloseTransport(graceful=True))

    def _fail_all(self, error: MCPError) -> None:
        self._notes.clear()
        self._internal.clear()
        for call in list(self._calls.calls.values()):
            self._end(call, error)

    # ================================================================ driver inputs

    def transport_opened(self, now: float) -> None:
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
        candidates = [
            self._session.next_deadline() if self._session is not None else None,
            self._calls.next_deadline(),
            self._transport.next_deadline(),
            self._close_deadline,
        ]
        present = [d for d in candidates if d is not None]
        return min(present) if present else None

    def handle_timeout(self, now: float) -> None:
        session = self._session
        if session is not None and session.state is not SessionState.CLOSED:
            session.handle_timeout(now)
            self._drain(now)
        self._calls.due(now)
        self._transport.handle_timeout(now)
        if self._close_deadline is not None and now >= self._close_deadline:
            self._finish_close(now)
        self._after(now)

    def frames_to_send(self) -> list[Frame]:
        out, self._frames = self._frames, []
        return out

    def next_event(self) -> Event | type[NEED_DATA]:
        if self._events:
            return self._events.popleft()
        return NEED_DATA

    # ================================================================ internals

    def _emit(self, frame: Frame) -> None:
        self._frames.append(frame)

    def _diagnostic(self, level: str, message: str) -> None:
        self._events.append(Diagnostic(level, message))

    def _deliver(self, message: bytes | str) -> None:
        """A JSON text from the server (transports call this)."""
        session = self._session
        if session is not None and session.state is not SessionState.CLOSED:
            session.receive_message(message)

    def _after(self, now: float) -> None:
        """After every input: route the session's events, send what may go, flush."""
        self._drain(now)
        if self._calls.queued or self._notes:
            if self.state is ConnectionState.READY:
                assert self._session is not None
                for method, params in self._notes:
                    self._session.send_notification(method, params)
                self._notes.clear()
                for call in self._calls.take_queued():
                    self._send_queued(call, now)
                self._drain(now)
            elif self.state in (ConnectionState.IDLE, ConnectionState.CLOSED):
                self.connect(now)
        self._flush(now)

    def _send_queued(self, call: Call, now: float) -> None:
        try:
            self._send_call(call, now)
        except (ValueError, TypeError) as exc:
            self._end(call, LocalProtocolError(f"{call.method} cannot be sent: {exc}"))
        except (LocalProtocolError, CapabilityError) as exc:
            self._end(call, exc)

    def _send_call(self, call: Call, now: float) -> None:
        session = self._session
        assert session is not None
        params = self._calls.request_params(call)
        self._take_output()
        rid = session.send_request(
            call.method, params, now=now, timeout=call.timeout, want_progress=call.progress
        )
        (data,) = session.data_to_send()
        self._outbox.append(Outgoing(data, rid, call.method))
        self._calls.sent(call, rid)

    def send_internal(
        self,
        method: str,
        *,
        now: float,
        timeout: float | None,
        done: Callable[[bool, float], None],
    ) -> None:
        """A request of the machine's own (keep-alive ping); ``done(ok, now)`` gets its
        outcome. Only while ready."""
        session = self._session
        assert session is not None
        self._take_output()
        rid = session.send_request(method, None, now=now, timeout=timeout)
        (data,) = session.data_to_send()
        self._outbox.append(Outgoing(data, rid, method))
        self._internal[rid] = done

    def _take_output(self) -> None:
        """Move untagged session output (notifications, responses) to the outbox."""
        session = self._session
        if session is not None:
            for data in session.data_to_send():
                self._outbox.append(Outgoing(data))

    def _flush(self, now: float) -> None:
        self._take_output()
        if not self._outbox:
            return
        out, self._outbox = self._outbox, []
        if self.state in _LIVE or self.state is ConnectionState.CLOSING:
            self._transport.transmit(out, now)
        # Otherwise the session that queued them is gone: nobody to send them to.

    def _drain(self, now: float) -> None:
        session = self._session
        if session is None:
            return
        while True:
            event = session.next_event()
            if event is NEED_DATA:
                return
            if isinstance(event, ResponseReceived):
                self._on_response(session, event, now)
            elif isinstance(event, RequestFailed):
                self._on_attempt_failed(event.request_id, event.error, now)
            elif isinstance(event, ProgressReceived):
                call = self._calls.by_rid(event.request_id)
                if call is not None and call.progress:
                    self._events.append(
                        CallProgress(call.call_id, event.progress, event.total, event.message)
                    )
            else:
                self._events.append(event)  # type: ignore[arg-type]

    def _on_response(self, session: Session, event: ResponseReceived, now: float) -> None:
        rid = event.request_id
        if rid == self._init_rid and session is self._session:
            self._init_rid = None
            self._handshake_answered(session, event.result, now)
            return
        internal = self._internal.pop(rid, None)
        if internal is not None:
            internal(True, now)
            return
        self._transport.attempt_ended(rid, True)
        call = self._calls.detach(rid)
        if call is not None:
            self._events.append(CallSucceeded(call.call_id, call.method, event.result))
            self._calls.finish(call)

    def _on_attempt_failed(self, rid: jsonrpc.RequestId, error: MCPError, now: float) -> None:
        """An attempt ended without a result (error response, timeout, transport)."""
        if rid == self._init_rid and self._init_rid is not None:
            self._init_rid = None
            self._connect_failed(error, now)
            return
        internal = self._internal.pop(rid, None)
        if internal is not None:
            internal(False, now)
            return
        self._transport.attempt_ended(rid, False)
        call = self._calls.detach(rid)
        if call is not None:
            self._judge(call, error, now)

    def fail_attempt(self, rid: jsonrpc.RequestId, error: MCPError, now: float) -> None:
        """A transport learnt that the attempt ``rid`` failed (HTTP status, broken
        exchange, too large a body)."""
        session = self._session
        if session is None or not session.is_pending(rid):
            return
        session.cancel_request(rid, "failed", notify=False)
        self._on_attempt_failed(rid, error, now)

    def _judge(self, call: Call, error: MCPError, now: float) -> None:
        verdict, detail = self._calls.judge(call, error, now)
        if verdict is Verdict.FAIL:
            assert isinstance(detail, MCPError)
            self._end(call, detail)
        elif verdict is Verdict.RESEND:
            self._calls.queue(call)
        else:
            self._diagnostic("info", str(detail))

    def _end(self, call: Call, error: MCPError) -> None:
        if call.state is CallState.DONE:
            return
        self._events.append(CallFailed(call.call_id, call.method, error))
        self._calls.finish(call)

    # ---------------------------------------------------------------- lifecycle steps

    def _on_usable(self, now: float) -> None:
        """The transport can carry messages: begin the handshake."""
        self._start_handshake(now)

    def _start_handshake(self, now: float) -> None:
        caps = self._transport.capabilities(dict(self._capabilities()))
        session = Session(client_info=self.client_info, capabilities=caps, limits=self.limits)
        self._session = session
        self.state = ConnectionState.HANDSHAKING
        self._init_rid = session.start_handshake(now=now, timeout=self.config.read_timeout)
        (data,) = session.data_to_send()
        self._outbox.append(Outgoing(data, self._init_rid, "initialize"))

    def _handshake_answered(self, session: Session, result: Any, now: float) -> None:
        try:
            info = session.complete_handshake(result)
        except IncompatibleServerError as exc:
            # Lifecycle § Version Negotiation: the client SHOULD disconnect.
            self._connect_failed(exc, now)
            return
        if self._transport.handshake_done(info, now):
            self._on_ready(now)

    def _on_ready(self, now: float) -> None:
        session = self._session
        if self.state is not ConnectionState.HANDSHAKING or session is None:
            return
        assert session.server is not None
        self.state = ConnectionState.READY
        self._events.append(Connected(session.server))

    def _teardown(self, error: MCPError, now: float, *, close: bool) -> None:
        """Drop the transport and the session; calls in flight are judged."""
        self._drain(now)  # events already received come first
        self._init_rid = None
        self._internal.clear()
        self._transport.reset()
        self._outbox = []
        if close:
            self._emit(CloseTransport(graceful=False))
        self.state = ConnectionState.IDLE
        session = self._session
        if session is not None and session.state is not SessionState.CLOSED:
            session.connection_lost(error)
        self._drain(now)
        self._calls.forget_attempts()

    def _connect_failed(self, error: MCPError, now: float, *, close: bool = True) -> None:
        self._events.append(ConnectFailed(error))
        self._teardown(error, now, close=close)
        for call in self._calls.take_queued():
            self._judge(call, error, now)

    def _on_lost(self, error: MCPError, now: float) -> None:
        """The transport went away on its own (transports call this)."""
        if self.state is ConnectionState.CLOSING:
            self._finish_close(now)
            return
        session = self._session
        if (
            self.state is ConnectionState.HANDSHAKING
            and self._init_rid is not None
            and session is not None
            and session.state is not SessionState.CLOSED
        ):
            # initialize fails with the loss (the session adds what the server wrote
            # that was not JSON-RPC: issue 8 item 8); that fails the connect.
            self._drain(now)
            session.connection_lost(error)
            self._drain(now)
            return
        if self.state in (ConnectionState.OPENING, ConnectionState.HANDSHAKING):
            self._drain(now)
            self._connect_failed(error, now)
            return
        if self.state is not ConnectionState.READY:
            return
        self._drain(now)
        self._events.append(Disconnected(error))
        self._teardown(error, now, close=True)

    def _session_expired(self, error: MCPError, now: float) -> None:
        """HTTP 404 to our session id: a new session (2025-11-25 § Session
        Management). Calls in flight are judged with the expiry (re-sent once if
        they may be); the transport stays open."""
        self._diagnostic("info", f"server {self.name!r}: the session expired; starting a new one")
        self._drain(now)
        self._init_rid = None
        self._internal.clear()
        self._transport.reset()
        self._outbox = []
        session = self._session
        if session is not None and session.state is not SessionState.CLOSED:
            session.connection_lost(error)
        self._drain(now)
        self._start_handshake(now)
