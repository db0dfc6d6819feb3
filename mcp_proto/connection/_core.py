"""The machinery under :class:`~mcp_proto.connection.Connection`: its state, sending,
closing and the routing of the session's events to calls; the lifecycle steps (open,
handshake, ready, lost, expired) are its base's, :mod:`._lifecycle`.

The public surface is ``_machine.py``'s; the request pipeline's decisions are
:mod:`._calls`'; what each transport does is its strategy's (:mod:`._stdio`,
:mod:`._http`, :mod:`._legacy_sse`), which call back into the methods here.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from .. import jsonrpc
from .._util import shown
from ..config import ServerConfig
from ..errors import (
    CapabilityError,
    ConnectionError,
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
from ._calls import Call, CallState, Pipeline, Verdict
from ._era import EraSteps
from ._lifecycle import ConnectionState, LifecycleSteps
from ._transport import Outgoing, Transport
from .events import (
    CallFailed,
    CallProgress,
    CallSucceeded,
    Diagnostic,
    Disconnected,
    Event,
)
from .frames import CloseTransport, Frame

if TYPE_CHECKING:
    from ._listen import ListenManager

__all__ = ["ConnectionState", "MachineCore"]


_LIVE = (ConnectionState.HANDSHAKING, ConnectionState.READY)


class _NoListen:
    """The listen manager of a connection without subscriptions: nothing to own,
    deliver, re-send or time out (the real one replaces it at the first
    ``start_listen``, :meth:`MachineCore._listen_manager`)."""

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


def _make_transport(conn: MachineCore) -> Transport:
    kind = conn.config.type
    if kind == "stdio":
        from ._stdio import StdioTransport

        return StdioTransport(conn)
    if kind == "sse":
        from ._legacy_sse import LegacySseTransport

        return LegacySseTransport(conn)
    from ._http import HttpTransport

    return HttpTransport(conn, streamable=kind == "streamable_http")


class MachineCore(LifecycleSteps):
    """State and internal steps of a connection (see ``Connection``)."""

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
        self.era: str | None = None
        if config.protocol == "legacy" or config.type == "sse":
            self.era = "legacy"
        elif config.protocol == "modern":
            self.era = "modern"
        self._era = EraSteps(
            self, request_meta=request_meta, extensions=extensions, era_cache=era_cache
        )
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
        self._transport = _make_transport(self)
        # subscriptions/listen (SUB rows): a stand-in until the first subscription, so
        # a program that never listens neither loads nor consults the listen rules.
        self._listen: ListenManager | _NoListen = _NO_LISTEN
        self._random = random

    def _listen_manager(self) -> ListenManager:
        """The subscriptions' manager, created (and its module loaded) on first use."""
        listen = self._listen
        if isinstance(listen, _NoListen):
            from ._listen import ListenManager

            listen = self._listen = ListenManager(self, self._random)
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
            self._listen.resume()  # SUB-22: subscriptions a close kept go out once ready
            self._transport.open(now)
        elif self.state is ConnectionState.CLOSING:
            raise LocalProtocolError(f"server {self.name!r} is closing")

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
        self._era.probe = self._era.late = None  # they fail with the rest: no decision
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
        stale = self._era.stale
        if stale is not None:
            self._era.stale = None
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
            cancel_on_timeout=not modern_http,
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
        self._take_output()
        rid = session.send_request(
            method, params, now=now, timeout=timeout, cancel_on_timeout=not self.modern_http
        )
        (data,) = session.data_to_send()
        self._outbox.append(Outgoing(data, rid, method, headers))
        self._internal[rid] = done

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
                self._events.append(event)

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
            era.answered(rid, event.result, now)
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
                    self._era.rediscovered(result, now)  # LIFE-20: a re-fetched discover
            self._events.append(CallSucceeded(call.call_id, call.method, result))

    def _on_attempt_failed(self, rid: jsonrpc.RequestId, error: MCPError, now: float) -> None:
        """An attempt ended without a result (error response, timeout, transport)."""
        if rid == self._init_rid and self._init_rid is not None:
            self._init_rid = None
            if not self._era.handshake_refused(error, now):
                self._connect_failed(self._era.handshake_error(error), now)
            return
        if self._listen.on_failed(rid, error, now):
            return
        if self._era.owns(rid):
            self._era.failed(rid, error, now)
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
            self._era.stale = error
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
