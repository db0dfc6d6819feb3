"""The per-server protocol machine (issue 9): :class:`Connection`, one owner class.

See the package docstring (``mcp_proto/connection/__init__.py``) for the contract. The
connection's state and every step that changes it are here, in one class (as h11's
``Connection`` and aioquic's ``QuicConnection`` are one class each): the lifecycle
(open, era decision, handshake, ready, connect failed, lost, session expired), sending,
closing and the routing of the session's events to calls. Its helpers own their own
state only: the request pipeline's decisions (:mod:`._calls`), the era decision and
modern request building (:mod:`._era`), each transport strategy (:mod:`._stdio`,
:mod:`._http`, :mod:`._legacy_sse`) and the subscriptions (:mod:`._listen`). They hold
a port (:class:`_Port`: the few facts they may read and steps they may ask for, typed by
``TransportPort``, ``EraPort`` and ``ListenPort``), never the connection; the era steps
return decisions that :meth:`Connection._apply_era` applies.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import attrs

from .. import jsonrpc
from .._unusable import with_note
from .._util import NEED_DATA, check_seconds, shown
from ..config import ServerConfig
from ..errors import (
    CapabilityError,
    ConnectionError,
    IncompatibleServerError,
    LocalProtocolError,
    MCPError,
    ValidationError,
)
from ..events import (
    MessageDiscarded,
    NotificationReceived,
    ProgressReceived,
    RequestFailed,
    ResponseReceived,
    ServerRequest,
)
from ..limits import Limits
from ..modern.discover import DISCOVER, EraCache
from ..modern.meta import Extensions, HostMeta, check_extensions
from ..session import ServerInfo, Session
from ..session import State as SessionState
from ..types import Implementation
from ..versions import Era
from ._calls import CLOSE_ANSWER_WAIT, Call, CallState, Pipeline, Verdict
from ._era import (
    ConnectFails,
    EraDecision,
    EraSteps,
    ModernReady,
    ProbeSent,
    StartHandshake,
    Supersede,
)
from ._reconnect import RECONNECT_ATTEMPTS, BackgroundReconnect, worth_reconnecting
from ._transport import Outgoing, Transport, TransportPort
from .events import (
    CallCancelledError,
    CallFailed,
    CallLog,
    CallProgress,
    CallSucceeded,
    Closed,
    Connected,
    ConnectFailed,
    Diagnostic,
    Disconnected,
    Event,
    _call_succeeded,
)
from .frames import CloseTransport, ExchangeFailure, Frame

if TYPE_CHECKING:
    from ..modern.notify_queue import ListenFilter
    from ._listen import AckTimeout, ListenManager

__all__ = ["Connection", "ConnectionState"]


class ConnectionState(enum.Enum):
    IDLE = "idle"  # no transport (never opened, or lost: the next call reconnects)
    OPENING = "opening"  # OpenTransport asked for (legacy SSE: waiting for the endpoint)
    HANDSHAKING = "handshaking"  # initialize in flight (or the GET-ready wait)
    READY = "ready"  # requests flow
    CLOSING = "closing"  # close() began
    CLOSED = "closed"  # close() completed (a later call opens a new connection)


_LIVE = (ConnectionState.HANDSHAKING, ConnectionState.READY)


class _NoListen:
    """The listen manager of a connection without subscriptions: nothing to own,
    deliver, re-send or time out (the real one replaces it at the first
    ``start_listen``, :meth:`Connection._listen_manager`)."""

    __slots__ = ()
    wants_connection = False

    def end_all(self, error: MCPError, now: float, *, cancel: bool) -> None:
        pass

    def connect_failed(self, error: MCPError, now: float) -> None:
        pass

    def hand_over(self, now: float) -> None:
        pass

    def owns(self, rid: jsonrpc.RequestId) -> bool:
        return False

    def on_response(self, rid: jsonrpc.RequestId, result: Any, now: float) -> bool:
        return False

    def on_failed(self, rid: jsonrpc.RequestId, error: MCPError, now: float) -> bool:
        return False

    def on_notification(self, event: NotificationReceived, now: float) -> bool:
        return False

    def deliver_on(self, rid: jsonrpc.RequestId, data: bytes, now: float) -> None:
        pass

    def next_deadline(self) -> float | None:
        return None

    def handle_timeout(self, now: float) -> None:
        pass

    def resume(self) -> None:
        pass

    @property
    def keeping(self) -> bool:
        return False

    @keeping.setter
    def keeping(self, value: bool) -> None:
        pass  # no subscriptions to keep (SUB-22)


_NO_LISTEN: Final = _NoListen()

#: How a delivered text is seen to hold a log message before it is parsed (CallLog).
_LOG_TEXT: Final = '"notifications/message"'
_LOG_BYTES: Final = b'"notifications/message"'


def _make_transport(kind: str, port: TransportPort) -> Transport:
    """The strategy of ``config.type`` (its module loaded only when used)."""
    if kind == "stdio":
        from ._stdio import StdioTransport

        return StdioTransport(port)
    if kind == "sse":
        from ._legacy_sse import LegacySseTransport

        return LegacySseTransport(port)
    if kind == "websocket":
        from ._websocket import WebSocketTransport

        return WebSocketTransport(port)
    from ._http import HttpTransport

    return HttpTransport(port, streamable=kind == "streamable_http")


class _Port:
    """The connection as its helpers see it: the few facts they may read and the steps
    they may ask for (:class:`~._transport.TransportPort`), and nothing else. The
    helpers hold this, never the :class:`Connection`. The outputs on every call's path
    (``emit``, ``deliver``) are the connection's bound methods themselves: the port
    costs the hot path no extra call."""

    __slots__ = (
        "_conn",
        "attempt_failed",
        "connect_failed",
        "deliver",
        "diagnostic",
        "drain",
        "emit",
        "expire",
        "lost",
        "new_session",
        "ready",
        "send_internal",
        "send_request",
        "session_expired",
        "usable",
    )

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self.emit = conn._emit
        self.deliver = conn._deliver
        self.diagnostic = conn._diagnostic
        self.drain = conn._drain
        self.send_internal = conn._send_internal
        self.usable = conn._on_usable
        self.ready = conn._on_ready
        self.lost = conn._on_lost
        self.session_expired = conn._session_expired
        self.connect_failed = conn._connect_failed
        self.attempt_failed = conn._fail_attempt
        self.expire = conn._expire
        self.new_session = conn._new_session
        self.send_request = conn._send_own

    @property
    def config(self) -> ServerConfig:
        return self._conn.config

    @property
    def name(self) -> str:
        return self._conn.name

    @property
    def max_line_size(self) -> int:
        return self._conn.max_line_size

    @property
    def era(self) -> Era | None:
        return self._conn.era

    @property
    def server(self) -> ServerInfo | None:
        return self._conn.server

    @property
    def is_connected(self) -> bool:
        return self._conn.state is ConnectionState.READY

    @property
    def client_info(self) -> Implementation:
        return self._conn.client_info

    @property
    def session(self) -> Session | None:
        return self._conn._session

    @property
    def session_live(self) -> bool:
        session = self._conn._session
        return session is not None and session.state is not SessionState.CLOSED

    @property
    def handshake_rid(self) -> jsonrpc.RequestId | None:
        return self._conn._init_rid

    def build_modern(
        self, method: str, params: dict[str, Any] | None
    ) -> tuple[str, dict[str, Any], tuple[tuple[str, str], ...] | None]:
        return self._conn._era.build(method, params)

    def cancel_request(self, rid: jsonrpc.RequestId, reason: str, *, notify: bool = True) -> bool:
        session = self._conn._session
        return session is not None and session.cancel_request(rid, reason, notify=notify)

    def send_notification(self, method: str, params: dict[str, Any] | None) -> None:
        session = self._conn._session
        if session is not None:
            session.send_notification(method, params)

    def attempt_ended(self, rid: jsonrpc.RequestId, ok: bool, now: float | None = None) -> None:
        self._conn._transport.attempt_ended(rid, ok, now)

    def event(self, event: Event) -> None:
        self._conn._events.append(event)

    def deadline_of(self, rid: jsonrpc.RequestId) -> float | None:
        session = self._conn._session
        return session.deadline_of(rid) if session is not None else None

    def is_pending(self, rid: jsonrpc.RequestId) -> bool:
        session = self._conn._session
        return session is not None and session.is_pending(rid)

    def is_handshake(self, rid: jsonrpc.RequestId | None) -> bool:
        return rid is not None and rid == self._conn._init_rid

    def listens_on(self, rid: jsonrpc.RequestId) -> bool:
        return self._conn._listen.owns(rid)

    def deliver_listen(self, rid: jsonrpc.RequestId, data: bytes, now: float) -> None:
        self._conn._listen.deliver_on(rid, data, now)


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
        request_meta: HostMeta = None,
        extensions: Extensions = (),
        era_cache: EraCache | None = None,
    ) -> None:
        self.config = config
        self.name = name
        self.client_info = client_info
        self.limits = limits or Limits()
        self._capabilities = capabilities
        self.state = ConnectionState.IDLE
        if request_meta is not None and not (
            isinstance(request_meta, Mapping) or callable(request_meta)
        ):
            raise ValueError(
                f"request_meta must be a mapping, a callable or None, got {shown(request_meta)}"
            )
        check_extensions(extensions)  # a bad identifier is the caller's error, now
        #: The era spoken: "legacy" (handshake), "modern" (2026-07-28) or None while
        #: undecided (protocol="auto" before the first probe answered).
        self.era: Era | None = None
        if config.protocol == "legacy" or config.type == "sse":
            self.era = "legacy"
        elif config.protocol == "modern":
            self.era = "modern"
        self._port = _Port(self)  # all the helpers below see of the connection
        self._era = EraSteps(
            self._port, request_meta=request_meta, extensions=extensions, era_cache=era_cache
        )
        #: A modern request was answered as a legacy server would (LIFE-18): handled
        #: once the input is routed (``_after``).
        self._stale: MCPError | None = None
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
        # Server requests of the current session not answered yet: an answer to
        # anything else (a request of an expired session, a second answer) is dropped.
        self._asked: set[jsonrpc.RequestId] = set()
        # Log messages delivered for a request (CallLog), by id of the session's event
        # (the event is kept: its identity is checked when it is drained).
        self._log_origins: dict[int, tuple[NotificationReceived, jsonrpc.RequestId]] = {}
        self._transport = _make_transport(config.type, self._port)
        # subscriptions/listen (SUB rows): a stand-in until the first subscription, so
        # a program that never listens neither loads nor consults the listen rules.
        self._listen: ListenManager | _NoListen = _NO_LISTEN
        self._random = random
        #: HTTP+SSE: re-established in the background after a loss (SSE-5).
        self._reconnect = BackgroundReconnect()

    def _listen_manager(self) -> ListenManager:
        """The subscriptions' manager, created (and its module loaded) on first use."""
        listen = self._listen
        if isinstance(listen, _NoListen):
            from ._listen import ListenManager

            listen = self._listen = ListenManager(self._port, self._random)
        return listen

    # ================================================================ introspection

    @property
    def server(self) -> ServerInfo | None:
        """What the last handshake established (``None`` before one completed)."""
        return self._session.server if self._session is not None else None

    @property
    def modern_http(self) -> bool:
        """A 2026-07-28 session over HTTP: no session id, no GET stream, no
        resumption; closing a response stream is the cancellation (SHTTP-6, SHTTP-7)."""
        return self.era == "modern" and self._era.http

    @property
    def is_connected(self) -> bool:
        return self.state is ConnectionState.READY

    @property
    def first_unusable(self) -> str | None:
        """The first line the server wrote that is not JSON-RPC (quoted safely)."""
        return self._session.first_unusable if self._session is not None else None

    @property
    def max_line_size(self) -> int:
        """The bound on one message (a stdio line, an SSE event, a plain JSON body)."""
        return self.config.max_line_size or self.limits.max_line_size

    @property
    def pending_count(self) -> int:
        """Calls started and not ended yet."""
        return self._calls.open_count

    @property
    def unanswered_server_requests(self) -> int:
        session = self._session
        return session.unanswered_server_requests if session is not None else 0

    def connect(self, now: float) -> None:
        """Begin opening the transport and the handshake (idempotent while connecting
        or connected). Completion: ``Connected`` or ``ConnectFailed``."""
        if self.state in (ConnectionState.IDLE, ConnectionState.CLOSED):
            self.state = ConnectionState.OPENING
            self._reconnect.at = None  # (an attempt of a background run, if one is under way)
            self._listen.resume()  # SUB-22: subscriptions a close kept go out once ready
            self._transport.open(now)
        elif self.state is ConnectionState.CLOSING:
            raise LocalProtocolError(f"server {self.name!r} is closing")

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
        cancel_on_timeout: bool = True,
    ) -> int:
        """Start a call; returns its call id. See the package docstring.

        ``tool``: for ``tools/call`` over HTTP in a 2026-07-28 session, the called
        tool's definition (a :class:`~mcp_proto.types.Tool` or its ``tools/list``
        dict): its ``x-mcp-header`` annotations become ``Mcp-Param-*`` headers (HDR-1).
        Ignored otherwise. ``cancel_on_timeout=False``: a timeout of this call sends
        no ``notifications/cancelled`` (TASK-19: a task-augmented request)."""
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
        if not cancel_on_timeout:
            call.quiet_timeout = True
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
        self._reconnect.reset()  # the host closes: nothing reconnects behind its back
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

    def oauth_reply(self, reply: object, now: float) -> None:
        """The answer to an ``OAuthInteraction`` frame: the host handler's result
        (the redirect URL, an ``AuthorizationResponse``, a JWT) or the exception it
        raised (issue 21)."""
        oauth_reply = getattr(self._transport, "oauth_reply", None)
        if oauth_reply is not None:
            oauth_reply(reply, now)
        self._after(now)

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
        d = self._reconnect.at
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
        if self._reconnect.due(now) and self.state is ConnectionState.IDLE:
            self._diagnostic(
                "info",
                f"server {self.name!r}: reconnecting (attempt {self._reconnect.attempt} "
                f"of {RECONNECT_ATTEMPTS})",
            )
            self.connect(now)
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

    # ================================================================ lifecycle

    def _on_usable(self, now: float) -> None:
        """The transport can carry messages: decide the era (probe or handshake)."""
        self._apply_era(self._era.begin(now), now)

    def _apply_era(self, decision: EraDecision, now: float) -> None:
        """Take the step an era decision calls for (:mod:`._era`)."""
        if isinstance(decision, Supersede):
            # A late probe answer decides while initialize is unanswered (LIFE-7):
            # initialize is abandoned (its answer, if any, is discarded as one to an
            # unknown id).
            session, init = self._session, self._init_rid
            if session is not None and init is not None:
                session.cancel_request(init, "superseded by server/discover", notify=False)
            self._init_rid = None
            decision = decision.then
        if decision is None:
            return
        if isinstance(decision, ProbeSent):
            if decision.flush:
                self._flush(now)
        elif isinstance(decision, StartHandshake):
            session = None
            if decision.reuse:
                # The probe's session continues: its ids go on after the probe's.
                session = self._session
                assert session is not None
                session.state = SessionState.IDLE
                session.server = None
            self._start_handshake(now, session)
            if decision.late_probe is not None:
                assert self._session is not None
                self._session.await_late_answer(decision.late_probe, DISCOVER)
        elif isinstance(decision, ModernReady):
            # LIFE-17: 2026-07-28 has no initialize; the session enters the operation
            # phase with what discover said (its ids, pending table and deadlines are
            # used as in the handshake era).
            session = self._session
            assert session is not None
            session.server = decision.info
            session.state = SessionState.READY
            self.era = "modern"
            self._on_ready(now)
        else:
            assert isinstance(decision, ConnectFails)
            self._connect_failed(decision.error, now)

    def _new_session(self) -> Session:
        caps = self._transport.capabilities(dict(self._capabilities()))
        session = Session(client_info=self.client_info, capabilities=caps, limits=self.limits)
        self._session = session
        self._asked = set()
        self._log_origins.clear()
        self.state = ConnectionState.HANDSHAKING
        return session

    def _start_handshake(self, now: float, session: Session | None = None) -> None:
        """``initialize`` on ``session`` (the probe's, after a fallback) or a new one."""
        if session is None:
            session = self._new_session()
        self.era = "legacy"
        self._init_rid = session.start_handshake(now=now, timeout=self.config.read_timeout)
        (data,) = session.data_to_send()
        self._outbox.append(Outgoing(data, self._init_rid, "initialize"))

    def _handshake_answered(self, session: Session, result: Any, now: float) -> None:
        self._era.handshake_settled(session)
        self._take_output()  # what the session queued before: untagged, in order
        try:
            info = session.complete_handshake(result)
        except IncompatibleServerError as exc:
            # Lifecycle § Version Negotiation: the client SHOULD disconnect.
            self._connect_failed(exc, now)
            return
        # complete_handshake queued exactly notifications/initialized: tagged, so that a
        # transport can tell when the server took it (HTTP waits for that; _http.py).
        for data in session.data_to_send():
            self._outbox.append(Outgoing(data, None, "notifications/initialized"))
        self._transport.negotiated(info)
        self._flush(now)  # notifications/initialized goes out first (Lifecycle)
        if self._transport.handshake_done(info, now):
            self._on_ready(now)

    def _on_ready(self, now: float) -> None:
        session = self._session
        if self.state is not ConnectionState.HANDSHAKING or session is None:
            return
        assert session.server is not None
        self.state = ConnectionState.READY
        if self._reconnect.running:
            self._diagnostic("info", f"server {self.name!r}: reconnected")
            self._reconnect.reset()
        self._events.append(Connected(session.server))

    def _teardown(self, error: MCPError, now: float, *, close: bool) -> None:
        """Drop the transport and the session; calls in flight are judged."""
        self._drain(now)  # events already received come first
        self._init_rid = None
        self._era.abandon()  # no era decision from a dead transport
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
        self._listen.connect_failed(error, now)
        for call in self._calls.take_queued():
            self._judge(call, error, now)
        if self._reconnect.running:
            self._reconnect_later(error, now)

    def _reconnect_later(self, error: MCPError, now: float) -> None:
        """SSE-5: schedule the next background attempt after a loss or a failed one,
        unless the failure is a refusal or the attempts are spent (then the host's next
        request connects, as without keep-alive)."""
        reconnect = self._reconnect
        if not worth_reconnecting(error):
            reconnect.reset()
            self._diagnostic(
                "info", f"server {self.name!r}: not reconnecting in the background ({error})"
            )
            return
        at = reconnect.next_attempt(now, self.config.retry_backoff, self._random())
        if at is None:
            self._diagnostic(
                "warning",
                f"server {self.name!r}: not reconnected after {RECONNECT_ATTEMPTS} "
                "attempts; the next request connects again",
            )
            return
        self._diagnostic(
            "info",
            f"server {self.name!r}: connection lost ({error}); reconnecting in "
            f"{at - now:.2f}s (attempt {reconnect.attempt} of {RECONNECT_ATTEMPTS})",
        )

    def _on_lost(self, error: MCPError, now: float) -> None:
        """The transport went away on its own (transports call this)."""
        if self.state is ConnectionState.CLOSING:
            if self._close_deadline is not None:  # lost during the answer grace
                self._finish_close(now, lost=error)
            return
        # What arrived before the loss comes first, and may change the state it is
        # judged in: the answer to initialize read with the end of the output makes
        # the connection ready, and then it is lost as a ready one (found by
        # fuzz/fuzz_connection.py: judged as HANDSHAKING, the loss closed the session
        # under a READY connection).
        self._drain(now)
        session = self._session
        if (
            self.state is ConnectionState.HANDSHAKING
            and self._init_rid is not None
            and session is not None
            and session.state is not SessionState.CLOSED
        ):
            # initialize fails with the loss (the session adds what the server wrote
            # that was not JSON-RPC: issue 8 item 8); that fails the connect.
            session.connection_lost(error)
            self._drain(now)
            return
        if self.state in (ConnectionState.OPENING, ConnectionState.HANDSHAKING):
            # During the probe too, what the server wrote says why (issue 24 C).
            quoted = session.first_unusable if session is not None else None
            self._connect_failed(with_note(error, quoted), now)
            return
        if self.state is not ConnectionState.READY:
            return
        self._events.append(Disconnected(error))
        self._teardown(error, now, close=True)
        if self.config.type == "sse":
            # SSE-5: the event stream is the server's only way to the client; a host
            # that only waits for it would otherwise never see it again.
            self._reconnect.reset()
            self._reconnect_later(error, now)

    def _session_expired(self, error: MCPError, now: float) -> None:
        """HTTP 404 to our session id: a new session (2025-11-25 § Session
        Management). Calls in flight are judged with the expiry (re-sent once if
        they may be); the transport stays open."""
        if self.state is ConnectionState.CLOSING:
            if self._close_deadline is not None:
                self._finish_close(now)
            return
        if self.state is not ConnectionState.READY:
            # During the handshake: the server refused it (and a new handshake could
            # meet the same refusal forever).
            self._drain(now)
            refused = ConnectionError(f"server {self.name!r} refused the handshake: {error}")
            refused.__cause__ = error
            self._connect_failed(refused, now)
            return
        self._drain(now)
        self._diagnostic("info", f"server {self.name!r}: the session expired; starting a new one")
        self._init_rid = None
        self._internal.clear()
        self._transport.reset()
        self._outbox = []
        session = self._session
        if session is not None and session.state is not SessionState.CLOSED:
            session.connection_lost(error)
        self._drain(now)
        self._start_handshake(now)

    # ================================================================ internals

    def _answered(self, now: float) -> None:
        if (
            self.state is ConnectionState.CLOSING
            and self._close_deadline is not None
            and self.unanswered_server_requests == 0
        ):
            self._finish_close(now)
        # Only the answer goes out: nothing else may start on a time the driver did
        # not have to give (``now`` is optional here).
        self._flush(now)

    def _closed_error(self) -> ConnectionError:
        return ConnectionError(f"server {self.name!r}: the client closed the connection")

    def _finish_close(self, now: float, lost: MCPError | None = None) -> None:
        """Refuse what is unanswered, say goodbye (DELETE), fail every open call and
        close the transport. ``lost``: the transport died during the answer grace, so
        there is nobody left to answer or to say goodbye to."""
        self._close_deadline = None
        self._drain(now)  # what already arrived comes first
        self._era.abandon()  # they fail with the rest: no decision
        session = self._session
        live = session is not None and session.state is not SessionState.CLOSED
        self._listen.end_all(self._closed_error(), now, cancel=lost is None and live)
        if lost is None and session is not None and session.state is not SessionState.CLOSED:
            session.refuse_server_requests()
            self._take_output()
            if self._outbox:
                self._transport.transmit(self._outbox, now)
                self._outbox = []
            self._transport.closing(now)
        self._outbox = []
        error = self._closed_error()
        self._init_rid = None
        self._transport.reset()
        # Every open call ends now, with this error (none is retried: we are closing).
        self._fail_all(error, now)
        if session is not None and session.state is not SessionState.CLOSED:
            session.connection_lost(error)
        self._drain(now)
        self._emit(CloseTransport(graceful=lost is None))

    def _fail_all(self, error: MCPError, now: float = 0.0) -> None:
        self._listen.end_all(error, now, cancel=False)
        self._notes.clear()
        self._internal.clear()
        for call in list(self._calls.calls.values()):
            self._end(call, error)

    def _expire(self, now: float) -> None:
        """Expire what is due now (a transport saw a request outlive its deadline)."""
        session = self._session
        if session is not None and session.state is not SessionState.CLOSED:
            session.handle_timeout(now)
            self._drain(now)

    def _emit(self, frame: Frame) -> None:
        self._frames.append(frame)

    def _diagnostic(self, level: str, message: str, deprecation: str = "") -> None:
        self._events.append(Diagnostic(level, message, deprecation))

    def _deliver(self, message: bytes | str, origin: jsonrpc.RequestId | None = None) -> None:
        """A JSON text from the server (transports call this). ``origin``: the request
        whose response stream carried it (Streamable HTTP)."""
        session = self._session
        if session is None or session.state is SessionState.CLOSED:
            return
        if _LOG_TEXT not in message if isinstance(message, str) else _LOG_BYTES not in message:
            session.receive_message(message)
            return
        # A log message: whose call is it (CallLog)? The request whose stream carried
        # it; on one shared channel, the only request in flight, if there is one.
        if origin is None and self._transport.single_channel and session.pending_count == 1:
            origin = next(iter(session._pending))
        queue = session._events
        before = len(queue)
        session.receive_message(message)
        if origin is None:
            return
        for i in range(before, len(queue)):
            event = queue[i]
            if type(event) is NotificationReceived and event.method == "notifications/message":
                self._log_origins[id(event)] = (event, origin)

    def _after(self, now: float) -> None:
        """After every input: route the session's events, send what may go, flush."""
        self._drain(now)
        stale = self._stale
        if stale is not None:
            self._stale = None
            if self.state is ConnectionState.READY:
                self._era.forget_era(str(stale))
                self._events.append(Disconnected(stale))
                self._teardown(stale, now, close=True)
        listen_wants = self._listen.wants_connection
        if listen_wants and self.state is ConnectionState.READY:
            self._listen.hand_over(now)
            self._drain(now)
            listen_wants = self._listen.wants_connection
        if (self._calls.queued and self._calls.has_queued) or self._notes or listen_wants:
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
        except (LocalProtocolError, CapabilityError, ValidationError) as exc:
            # ValidationError (a ValueError too): a modern request's metadata or
            # headers (HeaderAnnotationError among them) keep their type.
            self._end(call, exc)
        except (ValueError, TypeError) as exc:
            self._end(call, LocalProtocolError(f"{call.method} cannot be sent: {exc}"))
        except Exception as exc:
            # The host's request_meta callable raised (LIFE-12): that call fails, the
            # machine goes on.
            failed = LocalProtocolError(
                f"{call.method} cannot be sent: request_meta raised {exc!r}"
            )
            failed.__cause__ = exc
            self._end(call, failed)

    def _send_call(self, call: Call, now: float) -> None:
        session = self._session
        assert session is not None
        method, params = call.method, self._calls.request_params(call)
        headers = None
        if self.era == "modern" and method == "logging/setLevel":
            self._set_level_modern(call, params)
            return
        modern_http = False
        if self.era == "modern":
            method, params, headers = self._era.build(method, params, call.tool)
            modern_http = self._era.http
        rid = session.send_request(
            method,
            params,
            now=now,
            timeout=call.timeout,
            want_progress=call.progress,
            # SHTTP-7: over modern HTTP closing the stream is the cancellation.
            # TASK-19: a task-augmented request is never followed by a cancel.
            cancel_on_timeout=not (modern_http or call.quiet_timeout),
        )
        # The request is the last message the session queued (one per send_request);
        # anything before it (notifications, answers) goes out first, untagged.
        outbox = self._outbox
        queued = session.data_to_send()
        data = queued.pop()
        for untagged in queued:
            outbox.append(Outgoing(untagged))
        outbox.append(Outgoing(data, rid, method, headers))
        self._calls.sent(call, rid)

    def _set_level_modern(self, call: Call, params: dict[str, Any] | None) -> None:
        """LIFE-15 / LOG-2: 2026-07-28 has no ``logging/setLevel``; the level rides as
        ``_meta`` on every later request, so the call succeeds at once, sending nothing.
        A bad level raises ``ValueError`` (the caller's, as for any request)."""
        level = (params or {}).get("level")
        self._era.set_log_level(level)
        self._events.append(CallSucceeded(call.call_id, call.method, {}))
        self._calls.finish(call)

    def _send_internal(
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
        if session.pending_count >= self.limits.max_pending_requests:
            # No room for one more request: the ones in flight probe the connection
            # already (each with its own timeout), so this ping counts as answered and
            # the next is scheduled. Never an error out of handle_timeout.
            done(True, now)
            return
        params: dict[str, Any] | None = None
        headers = None
        if self.era == "modern":
            method, params, headers = self._era.build(method, None)
        rid = self._send_own(
            method,
            params,
            headers,
            now=now,
            timeout=timeout,
            cancel_on_timeout=not self.modern_http,
        )
        self._internal[rid] = done

    def _send_own(
        self,
        method: str,
        params: dict[str, Any] | None,
        headers: tuple[tuple[str, str], ...] | None,
        *,
        now: float,
        timeout: float | None,
        cancel_on_timeout: bool = True,
    ) -> jsonrpc.RequestId:
        """Send a request of the machine's own (the era probe, a listen request, a
        keep-alive ping) on the current session, after what the session queued
        before; its id."""
        session = self._session
        assert session is not None
        self._take_output()
        rid = session.send_request(
            method, params, now=now, timeout=timeout, cancel_on_timeout=cancel_on_timeout
        )
        (data,) = session.data_to_send()
        self._outbox.append(Outgoing(data, rid, method, headers))
        return rid

    def _take_output(self) -> None:
        """Move untagged session output (notifications, responses) to the outbox."""
        session = self._session
        if session is not None:
            for data in session.data_to_send():
                self._outbox.append(Outgoing(data))

    def _flush(self, now: float) -> None:
        session = self._session
        if session is not None and session._outbox:  # (the hot path: no call to ask)
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
        # The session's own queue, popped here as ``next_event`` would (after every
        # input: no call per event). One at a time: a handler may drain again.
        queue = session._events
        while queue:
            event = queue.popleft()
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
            elif isinstance(event, NotificationReceived) and self._listen.on_notification(
                event, now
            ):
                pass  # on a listen stream: routed to its subscription (SUB-31)
            elif isinstance(event, ServerRequest) and self.era == "modern":
                # LIFE-17: a 2026-07-28 server asks inside results (MRTR), never with a
                # request of its own: not handed to handlers, never answered (nor
                # counted as unanswered: close does not wait for it).
                session._inbound.pop(event.request_id, None)
                self._events.append(
                    MessageDiscarded(
                        f"server request {shown(event.method)} in a 2026-07-28 session"
                    )
                )
            else:
                if isinstance(event, ServerRequest):
                    self._asked.add(event.request_id)
                elif self._log_origins and type(event) is NotificationReceived:
                    self._call_log(event)
                self._events.append(event)
        if self._log_origins:
            self._log_origins.clear()  # each names an event drained above (or routed)

    def _call_log(self, event: NotificationReceived) -> None:
        """A log message delivered for a request (``_deliver``): a ``CallLog`` for its
        call, when that call takes progress (the streams of ``call_tool_streaming``)."""
        entry = self._log_origins.pop(id(event), None)
        if entry is None or entry[0] is not event:
            return
        call = self._calls.by_rid(entry[1])
        if call is not None and call.progress:
            self._events.append(CallLog(call.call_id, event.params))

    def _on_response(self, session: Session, event: ResponseReceived, now: float) -> None:
        rid = event.request_id
        if rid == self._init_rid and session is self._session:
            self._init_rid = None
            self._handshake_answered(session, event.result, now)
            return
        listen = self._listen
        if listen is not _NO_LISTEN and listen.on_response(rid, event.result, now):
            return
        era = self._era
        if (era.probe is not None or era.late is not None) and era.owns(rid):
            self._apply_era(era.answered(rid, event.result, now), now)
            return
        internal = self._internal.pop(rid, None)
        if internal is not None:
            internal(True, now)
            return
        transport = self._transport
        if transport.timed:
            transport.attempt_ended(rid, True, now)
        call = self._calls.answered(rid)
        if call is not None:
            result = event.result
            if self.era == "modern":
                if call.method == "ping":
                    # LIFE-14: the ping went out as server/discover; its caller asked
                    # for a ping, whose result is empty in every era.
                    result = {}
                elif call.method == DISCOVER:
                    # LIFE-20: a re-fetched discover replaces what is known of the server
                    info = self._era.rediscovered(result, now)
                    current = self._session
                    if info is not None and current is not None:
                        current.server = info
            self._events.append(_call_succeeded(call.call_id, call.method, result))

    def _on_attempt_failed(self, rid: jsonrpc.RequestId, error: MCPError, now: float) -> None:
        """An attempt ended without a result (error response, timeout, transport)."""
        if rid == self._init_rid and self._init_rid is not None:
            self._init_rid = None
            decision = self._era.handshake_refused(error, now)
            if decision is None:
                self._connect_failed(self._era.handshake_error(error), now)
            else:
                self._apply_era(decision, now)
            return
        if self._listen.on_failed(rid, error, now):
            return
        if self._era.owns(rid):
            self._transport.attempt_ended(rid, False)
            self._apply_era(self._era.failed(rid, error, now), now)
            return
        internal = self._internal.pop(rid, None)
        if internal is not None:
            internal(False, now)
            return
        self._transport.attempt_ended(rid, False)
        call = self._calls.detach(rid)
        if call is not None:
            self._judge(call, error, now)

    def _fail_attempt(self, rid: jsonrpc.RequestId, error: MCPError, now: float) -> None:
        """A transport learnt that the attempt ``rid`` failed (HTTP status, broken
        exchange, too large a body)."""
        self._drain(now)  # what arrived before the failure comes first
        session = self._session
        if session is None or not session.is_pending(rid):
            return
        session.cancel_request(rid, "failed", notify=False)
        self._on_attempt_failed(rid, error, now)

    def _judge(self, call: Call, error: MCPError, now: float) -> None:
        if self.era == "modern" and self._era.answers_like_legacy(call.method, error):
            # LIFE-18: the era assumed no longer holds; handled once the input is
            # routed (_after), not in the middle of it.
            self._stale = error
        verdict, detail = self._calls.judge(call, error, now, modern_http=self.modern_http)
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
