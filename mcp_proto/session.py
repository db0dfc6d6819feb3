"""The per-server protocol state machine (handshake era), in the style of h11.

Internal: :class:`~mcp_proto.connection.Connection` composes it, and is what embedders
drive; ``mcp_proto`` does not export :class:`Session` (:class:`ServerInfo`, the facts
it learns, is public).

One :class:`Session` per server connection. It never does I/O and never reads a clock:

* ``send_request`` / ``send_notification`` / ``send_response`` queue encoded messages,
  drained by the shell with ``data_to_send()`` (each item is one JSON text; the shell
  frames it for its transport: a newline for stdio, a POST body for HTTP).
* ``receive_message`` feeds one JSON text that arrived; ``next_event()`` hands out the
  resulting events one at a time (or ``NEED_DATA``).
* Time enters as ``now``: ``send_request(..., now=, timeout=)`` stores an absolute
  deadline, ``next_deadline()`` tells the shell when to wake up, and
  ``handle_timeout(now)`` expires what is due (queuing ``notifications/cancelled``).

Peer input never raises: garbage becomes a ``MessageDiscarded`` event, an error
response becomes a ``RequestFailed`` event carrying a typed ``ServerError``.
"""

from __future__ import annotations

import enum
import heapq
from collections import deque
from typing import Any, Final

from . import jsonrpc
from ._session_data import REQUIRED_CAPABILITY, ServerInfo, as_float, log_message
from ._unusable import note_for, quote_line, recover_response_id, with_note
from ._util import MAX_SECONDS, NEED_DATA, check_seconds, sanitize_peer_text
from .errors import (
    CapabilityError,
    IncompatibleServerError,
    LocalProtocolError,
    MCPError,
    RemoteProtocolError,
    RequestTimeoutError,
    server_error_from,
)
from .events import (
    Event,
    MessageDiscarded,
    NotificationReceived,
    ProgressReceived,
    RequestFailed,
    ServerRequest,
    _response_received,
)
from .limits import Limits
from .types import Implementation
from .versions import LATEST_LEGACY, LEGACY_VERSIONS

__all__ = [
    "CLOSING_CODE",
    "CLOSING_MESSAGE",
    "REQUIRED_CAPABILITY",
    "ServerInfo",
    "Session",
    "State",
]


class State(enum.Enum):
    """Where a session is in its lifecycle (2025-11-25, Lifecycle)."""

    IDLE = "idle"  # nothing sent yet
    INITIALIZING = "initializing"  # initialize sent, no answer yet
    READY = "ready"  # handshake complete: operation phase
    CLOSED = "closed"  # connection lost or closed: terminal


# Which outbound requests each state allows. Lifecycle § Initialization: before the
# server answered initialize the client SHOULD NOT send requests other than pings.
# A missing state (CLOSED) allows nothing. ``None`` means "any method".
_ALLOWED_REQUESTS: Final[dict[State, frozenset[str] | None]] = {
    State.IDLE: frozenset({"initialize"}),
    State.INITIALIZING: frozenset({"ping"}),
    State.READY: None,
}

# The lifecycle transitions, as data: (state, verb) -> next state. A missing key is a
# LocalProtocolError (the caller drove the session illegally).
_TRANSITIONS: Final[dict[tuple[State, str], State]] = {
    (State.IDLE, "start_handshake"): State.INITIALIZING,
    (State.INITIALIZING, "complete_handshake"): State.READY,
    (State.IDLE, "connection_lost"): State.CLOSED,
    (State.INITIALIZING, "connection_lost"): State.CLOSED,
    (State.READY, "connection_lost"): State.CLOSED,
    (State.CLOSED, "connection_lost"): State.CLOSED,
}

#: Client notifications that only a session which declared the capability may send
#: (CAP-5): a server that was not told the client has roots learns nothing of them.
_GATED_NOTIFICATIONS: Final[dict[str, str]] = {"notifications/roots/list_changed": "roots"}

#: At most this many events wait in a session's queue when another discarded message
#: arrives; beyond it, discards are counted instead (``Session._discard``).
DISCARD_BACKLOG: Final = 1000

#: The error a server request still unanswered at close gets (the SDKs' "connection
#: closed" code, in the implementation-defined range of JSON-RPC 2.0 § 5.1).
CLOSING_CODE: Final = -32000
CLOSING_MESSAGE: Final = "Client is closing the connection"

# Never answer initialize's own timeout with notifications/cancelled (Lifecycle:
# "The initialize request MUST NOT be cancelled by clients").
_NEVER_CANCEL: Final = frozenset({"initialize"})


class _Pending:
    """A request of ours awaiting its answer (made per request: a plain slotted class)."""

    __slots__ = ("cancel_on_timeout", "deadline", "method", "progress_token")

    def __init__(
        self,
        method: str,
        deadline: float | None,
        progress_token: jsonrpc.RequestId | None,
        cancel_on_timeout: bool,
    ) -> None:
        self.method = method
        self.deadline = deadline
        self.progress_token = progress_token
        self.cancel_on_timeout = cancel_on_timeout


class Session:
    """Protocol state for one server connection (handshake-era revisions).

    Args:
        client_info: sent as ``clientInfo`` in ``initialize``.
        capabilities: the client capabilities to declare (derived by the client from
            the handlers the host registered, never hard-coded: CAP-4).
        limits: bounds on peer input.
        protocol_version: the revision offered in ``initialize`` (the newest legacy one).
        supported_versions: revisions accepted in the server's answer.
    """

    def __init__(
        self,
        *,
        client_info: Implementation,
        capabilities: dict[str, Any],
        limits: Limits | None = None,
        protocol_version: str = LATEST_LEGACY,
        supported_versions: tuple[str, ...] = LEGACY_VERSIONS,
    ) -> None:
        self.client_info = client_info
        self.capabilities = capabilities
        self.limits = limits or Limits()
        self.offered_version = protocol_version
        self.supported_versions = supported_versions
        self.state = State.IDLE
        self.server: ServerInfo | None = None
        # method -> the ServerInfo that was found to allow it (require_capability once
        # per method and server, not per request; the era may replace ``server``).
        self._allowed: dict[str, ServerInfo] = {}
        self._next_id = 1
        self._pending: dict[jsonrpc.RequestId, _Pending] = {}
        # (deadline, sequence, request id) of pending requests with a deadline, as a heap:
        # next_deadline() is then O(1) amortized, not a scan of every pending request per
        # wait (O(n²) per round of n concurrent calls). The entry of a request answered
        # first goes with it (_finish); others are dropped lazily, and the heap is
        # rebuilt when they outnumber the live ones.
        self._deadlines: list[tuple[float, int, jsonrpc.RequestId]] = []
        self._progress: dict[jsonrpc.RequestId, jsonrpc.RequestId] = {}  # token -> id
        self._outbox: list[bytes] = []
        self._events: deque[Event] = deque()
        # Server requests received and not answered yet (id -> method): close answers
        # them first (refuse_server_requests), so the server is not left waiting on
        # them after our stdin closes. Bounded by the shell, which answers every request
        # ("Client busy" beyond its backlog: UT-8).
        self._inbound: dict[jsonrpc.RequestId, str] = {}
        # Ids refused at close: a handler that finishes later must not answer twice.
        self._refused: set[jsonrpc.RequestId] = set()
        # The first line the server wrote that is not JSON-RPC, quoted safely: timeouts
        # and a failed handshake mention it (issue 8, item 8; see _unusable).
        self.first_unusable: str | None = None
        self._saw_invalid = False  # the message being received held an Invalid
        # Discarded messages not reported as events because the queue held
        # DISCARD_BACKLOG events already (see _discard).
        self.discards_unreported = 0

    # ------------------------------------------------------------------ lifecycle

    def _transition(self, verb: str) -> None:
        try:
            self.state = _TRANSITIONS[(self.state, verb)]
        except KeyError:
            raise LocalProtocolError(f"cannot {verb} in state {self.state.value}") from None

    def initialize_params(self) -> dict[str, Any]:
        """The ``initialize`` request's params (Lifecycle § Initialization)."""
        return {
            "protocolVersion": self.offered_version,
            "capabilities": self.capabilities,
            "clientInfo": self.client_info.to_dict(),
        }

    def start_handshake(self, *, now: float, timeout: float | None) -> jsonrpc.RequestId:
        """Queue ``initialize``; returns its request id."""
        if self.state is not State.IDLE:
            raise LocalProtocolError(f"cannot start a handshake in state {self.state.value}")
        request_id = self.send_request(
            "initialize", self.initialize_params(), now=now, timeout=timeout
        )
        self._transition("start_handshake")
        return request_id

    def complete_handshake(self, result: Any) -> ServerInfo:
        """Take the server's ``InitializeResult``; queue ``notifications/initialized``.

        Raises:
            IncompatibleServerError: the server named a revision this client does not
                speak (or none, or sent no object); a ``ConnectionError``. Lifecycle
                § Version Negotiation: the client SHOULD disconnect; the shell does so.
        """
        if self.state is not State.INITIALIZING:
            raise LocalProtocolError(f"cannot complete a handshake in state {self.state.value}")
        if not isinstance(result, dict):
            raise IncompatibleServerError("the server's initialize result is not an object")
        version = result.get("protocolVersion")
        if not isinstance(version, str) or version not in self.supported_versions:
            shown = sanitize_peer_text(repr(version), cap=64)
            raise IncompatibleServerError(
                f"the server answered initialize with protocol version {shown}; "
                f"this client speaks {', '.join(self.supported_versions)}",
                protocol_version=version if isinstance(version, str) else None,
            )
        caps = result.get("capabilities")
        server_info: Implementation | None
        try:
            server_info = Implementation.from_dict(result.get("serverInfo"))
        except (ValueError, TypeError):
            # serverInfo is informational: a malformed one must not cost the connection.
            server_info = None
        instructions = result.get("instructions")
        self.server = ServerInfo(
            protocol_version=version,
            capabilities=caps if isinstance(caps, dict) else {},
            server_info=server_info,
            instructions=instructions if isinstance(instructions, str) else None,
        )
        self._transition("complete_handshake")
        self.send_notification("notifications/initialized")
        return self.server

    def connection_lost(self, error: MCPError) -> None:
        """The transport is gone: every pending request fails with ``error``. A
        handshake that fails so after the server wrote unusable output says so."""
        if self.state is State.INITIALIZING:
            error = with_note(error, self.first_unusable)
        self._transition("connection_lost")
        for request_id, pending in list(self._pending.items()):
            self._finish(request_id)
            self._events.append(RequestFailed(request_id, pending.method, error))

    # ------------------------------------------------------------------ outbound

    def require_capability(self, method: str) -> None:
        """Raise ``CapabilityError`` if ``method`` needs a capability not negotiated."""
        path = REQUIRED_CAPABILITY.get(method)
        if path is None or self.server is None:
            return
        if path[0] == "tasks" and self.server.protocol_era == "modern":
            # SEP-2663: on 2026-07-28 the declared io.modelcontextprotocol/tasks
            # extension gates tasks/* (checked by mcp_proto.tasks.ops), not the
            # 2025-11-25 ``tasks`` capability.
            return
        if not self.server.has_capability(*path):
            raise CapabilityError(
                f"the server did not declare the {'.'.join(path)!r} capability needed for {method}"
            )

    def send_request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        now: float,
        timeout: float | None,
        want_progress: bool = False,
        cancel_on_timeout: bool = True,
    ) -> jsonrpc.RequestId:
        """Queue a request; returns its id.

        With ``want_progress`` the request carries a progress token (the caller's own
        ``params._meta.progressToken`` if present, else a fresh one) and matching
        ``notifications/progress`` become ``ProgressReceived`` events while it is in
        flight (PROG-1).
        """
        if timeout is not None and (type(timeout) is not float or not 0.0 < timeout <= MAX_SECONDS):
            # A caller's timeout=1e300 or 10**400 must be a clear error here, not an
            # OverflowError from the shell's timed wait (issue 11's "bad input" rule).
            # (check_seconds' own first test, inline: the usual timeout costs no call)
            timeout = check_seconds(timeout, "timeout", allow_zero=True)
        state = self.state
        if state is not State.READY:  # (READY allows every request; no enum hash then)
            allowed = _ALLOWED_REQUESTS.get(state, frozenset())
            if allowed is not None and method not in allowed:
                raise LocalProtocolError(f"cannot send {method} in state {state.value}")
        server = self.server
        if server is None or self._allowed.get(method) is not server:
            self.require_capability(method)
            if server is not None and method in REQUIRED_CAPABILITY:  # (bounded)
                self._allowed[method] = server
        if len(self._pending) >= self.limits.max_pending_requests:
            raise LocalProtocolError("too many requests in flight")
        request_id = self._next_id
        token: jsonrpc.RequestId | None = None
        if want_progress:
            params = dict(params or {})
            given_meta = params.get("_meta")
            if given_meta is not None and not isinstance(given_meta, dict):
                raise ValueError("params._meta must be an object")
            meta = dict(given_meta or {})
            token = meta.get("progressToken")
            if token is None:
                token = f"p{request_id}"
                while token in self._progress:  # another request hand-picked this one
                    token = f"_{token}"
                meta["progressToken"] = token
            elif isinstance(token, bool) or not isinstance(token, (int, str)):
                raise ValueError("progressToken must be a string or an integer")
            if token in self._progress:
                raise ValueError(f"progressToken {token!r} is already in use")
            params["_meta"] = meta
        elif params is not None:
            hand_meta = params.get("_meta")
            if isinstance(hand_meta, dict):
                # A hand-picked token (PROG-2) routes progress even without a callback
                # registration; the shell then simply has nobody to call.
                hand_token = hand_meta.get("progressToken")
                if isinstance(hand_token, (int, str)) and not isinstance(hand_token, bool):
                    token = hand_token
        # Encode before touching any state: params the caller cannot serialise
        # (TypeError from json) must not leave a pending entry for an unsent request.
        encoded = jsonrpc.encode_request(request_id, method, params)
        self._next_id += 1
        if token is not None:
            if want_progress:
                self._progress[token] = request_id
            else:
                self._progress.setdefault(token, request_id)
        deadline = None if timeout is None else now + timeout
        self._pending[request_id] = _Pending(method, deadline, token, cancel_on_timeout)
        if deadline is not None:
            heapq.heappush(self._deadlines, (deadline, self._next_id, request_id))
        self._outbox.append(encoded)
        return request_id

    def send_notification(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Queue a notification. One that needs a client capability this session did
        not declare (CAP-5: ``roots/list_changed`` without ``roots``) is dropped."""
        if self.state is State.CLOSED:
            raise LocalProtocolError("cannot send on a closed session")
        needed = _GATED_NOTIFICATIONS.get(method)
        if needed is not None and needed not in self.capabilities:
            return
        self._outbox.append(jsonrpc.encode_notification(method, params))

    def _answering(self, request_id: jsonrpc.RequestId) -> bool:
        """Whether an answer to ``request_id`` may go out (and mark it answered)."""
        if self.state is State.CLOSED:
            return False  # the server that asked is gone; nobody to answer
        # Refused at close already: one answer per request.
        return self._inbound.pop(request_id, None) is not None or request_id not in self._refused

    def send_response(self, request_id: jsonrpc.RequestId, result: Any) -> None:
        if self._answering(request_id):
            self._outbox.append(jsonrpc.encode_result(request_id, result))

    def send_error_response(
        self, request_id: jsonrpc.RequestId, code: int, message: str, data: Any = None
    ) -> None:
        if self._answering(request_id):
            self._outbox.append(jsonrpc.encode_error(request_id, code, message, data))

    @property
    def unanswered_server_requests(self) -> int:
        """Server requests received and not answered yet."""
        return len(self._inbound)

    def refuse_server_requests(self) -> int:
        """Before closing: answer every server request still unanswered with a JSON-RPC
        error (``CLOSING_CODE``), so that the server is not left waiting for answers
        that will never come (a Node server stays alive on a pending request after its
        stdin closes: issue 8, item 5). Returns how many were refused; a handler's late
        answer to one of them is dropped."""
        if self.state is State.CLOSED:
            return 0
        refused = list(self._inbound)
        self._inbound.clear()
        for request_id in refused:
            self._refused.add(request_id)
            self._outbox.append(jsonrpc.encode_error(request_id, CLOSING_CODE, CLOSING_MESSAGE))
        return len(refused)

    def cancel_request(
        self, request_id: jsonrpc.RequestId, reason: str, *, notify: bool = True
    ) -> bool:
        """Abandon one of our requests (the caller gave up). Returns whether it was
        pending. Queues ``notifications/cancelled`` unless it is ``initialize``
        (Cancellation: "The client MUST NOT attempt to cancel its initialize request")
        or the request opted out. Its late response, if any, will be discarded."""
        pending = self._pending.get(request_id)
        if pending is None:
            return False
        self._finish(request_id)
        if (
            notify
            and pending.cancel_on_timeout
            and pending.method not in _NEVER_CANCEL
            and self.state is not State.CLOSED
        ):
            self.send_notification(
                "notifications/cancelled", {"requestId": request_id, "reason": reason}
            )
        return True

    def await_late_answer(self, request_id: jsonrpc.RequestId, method: str) -> None:
        """Take a late answer to ``request_id`` (a request of ours that timed out) as an
        answer again, with no deadline: the stdio era probe, whose answer may come after
        ``discover_timeout`` from a server slow to start (LIFE-7). The caller ends the
        wait with :meth:`cancel_request`."""
        self._pending[request_id] = _Pending(method, None, None, False)

    def data_to_send(self) -> list[bytes]:
        """Encoded messages queued since the last call, oldest first."""
        out, self._outbox = self._outbox, []
        return out

    @property
    def pending_count(self) -> int:
        return len(self._pending)

    def is_pending(self, request_id: jsonrpc.RequestId) -> bool:
        return request_id in self._pending

    def deadline_of(self, request_id: jsonrpc.RequestId) -> float | None:
        """The absolute deadline of a pending request (``None``: none, or not pending)."""
        pending = self._pending.get(request_id)
        return pending.deadline if pending is not None else None

    # ------------------------------------------------------------------ time

    def next_deadline(self) -> float | None:
        """The earliest deadline among pending requests, or ``None``."""
        heap = self._deadlines
        while heap:
            deadline, _, request_id = heap[0]
            pending = self._pending.get(request_id)
            if pending is not None and pending.deadline == deadline:
                return deadline
            heapq.heappop(heap)  # that request is no longer pending
        return None

    def handle_timeout(self, now: float) -> None:
        """Expire every pending request whose deadline is ``<= now``.

        Each becomes ``RequestFailed(RequestTimeoutError)`` and (PROG-5) a best-effort
        ``notifications/cancelled`` is queued for it, never for ``initialize``.
        """
        expired = [
            (rid, p)
            for rid, p in self._pending.items()
            if p.deadline is not None and p.deadline <= now
        ]
        # A server that wrote unusable output may have meant it as the answer: say so.
        note = "" if self.first_unusable is None else note_for(self.first_unusable)
        for request_id, pending in expired:
            self.cancel_request(request_id, "Request timed out")
            self._events.append(
                RequestFailed(
                    request_id,
                    pending.method,
                    RequestTimeoutError(
                        f"{pending.method} timed out (request {request_id}){note}",
                        method=pending.method,
                    ),
                )
            )

    # ------------------------------------------------------------------ inbound

    def receive_message(self, data: bytes | str) -> None:
        """Feed one JSON text from the server. Never raises on peer input."""
        for message in jsonrpc.decode_all(data):
            self._receive(message)
        if self._saw_invalid:
            self._saw_invalid = False
            self._unusable(data)

    def _unusable(self, data: bytes | str) -> None:
        """``data`` held something that is not JSON-RPC: keep the first such line for
        the errors, and fail the request it answers at once when its id is certain."""
        if self.first_unusable is None:
            self.first_unusable = quote_line(data)
        if not self._pending:
            return  # nobody to fail: skip the second parse
        request_id = recover_response_id(data)
        pending = self._finish(request_id) if request_id is not None else None
        if pending is None:
            return
        self._events.append(
            RequestFailed(
                request_id,
                pending.method,
                RemoteProtocolError(
                    f"the server's response to {pending.method} (request {request_id}) "
                    f"is not valid JSON-RPC: [{quote_line(data)}]"
                ),
            )
        )

    def next_event(self) -> Event | type[NEED_DATA]:
        if self._events:
            return self._events.popleft()
        return NEED_DATA

    def _finish(self, request_id: jsonrpc.RequestId) -> _Pending | None:
        pending = self._pending.pop(request_id, None)
        heap = self._deadlines
        if heap:
            if heap[0][2] == request_id:
                # Answered first of those in flight (the usual case): its deadline goes
                # now, so next_deadline, asked after every input, finds none to pop.
                heapq.heappop(heap)
            elif len(heap) > 2 * len(self._pending) + 16:
                # Answered out of order, its entry left behind: once the stale entries
                # outnumber the live ones (plus 16), rebuild (O(n) per n/2 answers).
                heap[:] = [
                    (p.deadline, i, rid)
                    for i, (rid, p) in enumerate(self._pending.items())
                    if p.deadline is not None
                ]
                heapq.heapify(heap)
        if (
            pending is not None
            and pending.progress_token is not None
            and self._progress.get(pending.progress_token) == request_id
        ):
            del self._progress[pending.progress_token]
        return pending

    def _discard(self, reason: str) -> None:
        """Report a discarded message as an event, unless DISCARD_BACKLOG events wait
        in the queue already: then it is only counted, and the count is reported with
        the next discard that finds room. A server flooding its output with garbage
        (a chatty server logging to stdout; ``yes``) hands over one read of up to
        1 MiB at once, half a million lines: as events they held ~100 MB until the
        driver took them (issue 8's "bounded memory" rule)."""
        events = self._events
        if len(events) >= DISCARD_BACKLOG:
            self.discards_unreported += 1
            return
        skipped = self.discards_unreported
        if skipped:
            self.discards_unreported = 0
            events.append(MessageDiscarded(f"{skipped} more messages discarded (too many)"))
        events.append(MessageDiscarded(reason))

    def _receive(self, message: jsonrpc.Message) -> None:
        if isinstance(message, jsonrpc.Response):
            pending = self._finish(message.id)
            if pending is None:
                # UT-7: only ids with an outstanding request are accepted.
                self._discard(f"response to unknown id {message.id!r}")
                return
            self._events.append(_response_received(message.id, pending.method, message.result))
        elif isinstance(message, jsonrpc.ErrorResponse):
            pending = self._finish(message.id) if message.id is not None else None
            if pending is None:
                self._discard("error response to no pending request")
                return
            self._events.append(
                RequestFailed(
                    message.id,  # type: ignore[arg-type]  # not None: pending found
                    pending.method,
                    server_error_from(message.error, method=pending.method),
                )
            )
        elif isinstance(message, jsonrpc.Request):
            self._inbound[message.id] = message.method
            self._events.append(ServerRequest(message.id, message.method, message.params or {}))
        elif isinstance(message, jsonrpc.Notification):
            self._receive_notification(message.method, message.params or {})
        else:
            self._saw_invalid = True
            self._discard(message.reason)

    def _receive_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/progress":
            token = params.get("progressToken")
            # bool is an int subclass (True == 1): a JSON true is no integer token.
            request_id = (
                self._progress.get(token)
                if isinstance(token, (int, str)) and not isinstance(token, bool)
                else None
            )
            if request_id is None:
                # PROG-1: tokens of finished (or never sent) requests are dropped.
                self._discard("progress for an unknown token")
                return
            progress = as_float(params.get("progress"))
            if progress is None:
                self._discard("progress without a usable number")
                return
            msg = params.get("message")
            self._events.append(
                ProgressReceived(
                    request_id,
                    progress,
                    as_float(params.get("total")),
                    msg if isinstance(msg, str) else None,
                )
            )
            return
        # The notification first, then what the client does with it: the log line of a
        # notifications/message comes after the notification was routed to its
        # listeners and queued for the host's callbacks (NOTIF-3, NOTIF-5). A server's
        # notifications/cancelled abandons one of *its* requests (PROG-7): the shell may
        # still be running the handler; answering late is harmless, so it is surfaced
        # (and logged by the client), nothing more.
        self._events.append(NotificationReceived(method, params))
        if method == "notifications/message":
            self._events.append(log_message(params, cap=self.limits.max_log_message))
