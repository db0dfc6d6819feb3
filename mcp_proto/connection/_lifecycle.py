"""The connection's lifecycle: its states (:class:`ConnectionState`) and the steps
between them: the transport is usable, the handshake starts and is answered, the
connection is ready, fails to connect, is lost, or its HTTP session expires.

:class:`LifecycleSteps` is a base of :class:`~._core.MachineCore`, which holds the
state these steps read and write (declared below for the type checker) and routes the
session's events; the era decision before the handshake is :mod:`._era`'s.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import jsonrpc
from .._unusable import with_note
from ..errors import ConnectionError, IncompatibleServerError, MCPError
from ..session import Session
from ..session import State as SessionState
from ._transport import Outgoing
from .events import Connected, ConnectFailed, Disconnected, Event
from .frames import CloseTransport

if TYPE_CHECKING:
    from ..config import ServerConfig
    from ..limits import Limits
    from ..types import Implementation
    from ._calls import Call, Pipeline
    from ._core import _NoListen
    from ._era import EraSteps
    from ._listen import ListenManager
    from ._transport import Transport
    from .frames import Frame

__all__ = ["ConnectionState", "LifecycleSteps"]


class ConnectionState(enum.Enum):
    IDLE = "idle"  # no transport (never opened, or lost: the next call reconnects)
    OPENING = "opening"  # OpenTransport asked for (legacy SSE: waiting for the endpoint)
    HANDSHAKING = "handshaking"  # initialize in flight (or the GET-ready wait)
    READY = "ready"  # requests flow
    CLOSING = "closing"  # close() began
    CLOSED = "closed"  # close() completed (a later call opens a new connection)


class LifecycleSteps:
    """The lifecycle steps of a connection's machine."""

    if TYPE_CHECKING:  # MachineCore's state and steps, as it defines them
        config: ServerConfig
        name: str
        client_info: Implementation
        limits: Limits
        state: ConnectionState
        era: str | None
        _capabilities: Callable[[], dict[str, Any]]
        _era: EraSteps
        _session: Session | None
        _init_rid: jsonrpc.RequestId | None
        _events: deque[Event]
        _calls: Pipeline
        _outbox: list[Outgoing]
        _internal: dict[jsonrpc.RequestId, Callable[[bool, float], None]]
        _close_deadline: float | None
        _asked: set[jsonrpc.RequestId]
        _transport: Transport
        _listen: ListenManager | _NoListen

        def _drain(self, now: float) -> None: ...
        def _take_output(self) -> None: ...
        def _flush(self, now: float) -> None: ...
        def _emit(self, frame: Frame) -> None: ...
        def _diagnostic(self, level: str, message: str) -> None: ...
        def _judge(self, call: Call, error: MCPError, now: float) -> None: ...
        def _finish_close(self, now: float, lost: MCPError | None = None) -> None: ...

    def _on_usable(self, now: float) -> None:
        """The transport can carry messages: decide the era (probe or handshake)."""
        self._era.begin(now)

    def _new_session(self) -> Session:
        caps = self._transport.capabilities(dict(self._capabilities()))
        session = Session(client_info=self.client_info, capabilities=caps, limits=self.limits)
        self._session = session
        self._asked = set()
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
        self._events.append(Connected(session.server))

    def _teardown(self, error: MCPError, now: float, *, close: bool) -> None:
        """Drop the transport and the session; calls in flight are judged."""
        self._drain(now)  # events already received come first
        self._init_rid = None
        self._era.probe = self._era.late = None  # no era decision from a dead transport
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

    def _on_lost(self, error: MCPError, now: float) -> None:
        """The transport went away on its own (transports call this)."""
        if self.state is ConnectionState.CLOSING:
            if self._close_deadline is not None:  # lost during the answer grace
                self._finish_close(now, lost=error)
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
            # During the probe too, what the server wrote says why (issue 24 C).
            quoted = self._session.first_unusable if self._session is not None else None
            self._connect_failed(with_note(error, quoted), now)
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
