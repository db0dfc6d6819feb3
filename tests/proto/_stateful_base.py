"""The shared half of tests/proto/test_connection_stateful.py: the bookkeeping, the
user, time and the driver's transport events of a hypothesis state machine around one
``mcp_proto.connection.Connection``, with its invariants (see that file). The server
side of each transport is a subclass there."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from typing import Any

import attrs
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from mcp_proto._util import NEED_DATA
from mcp_proto.config import ServerConfig
from mcp_proto.connection import Connection, ConnectionState, events, frames
from mcp_proto.errors import CapabilityError, ConnectionError, LocalProtocolError, MCPError
from mcp_proto.limits import Limits
from mcp_proto.types import Implementation

LIMITS = Limits(
    max_pending_requests=3,
    max_line_size=512,
    max_log_message=64,
    server_request_backlog=4,
    server_request_concurrency=2,
    max_queued_notifications=8,
)
INIT_RESULT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {"tools": {}, "resources": {}, "logging": {}},
    "serverInfo": {"name": "stateful", "version": "1"},
}
METHODS = ("tools/list", "tools/call", "resources/read", "ping", "prompts/list")
TIMEOUTS = (None, 0.5, 30.0)
STEPS = (0.01, 0.3, 1.0, 5.0)
#: Closes / transport losses per run (more only resets the machine again).
MAX_CLOSES = 2
MAX_LOSSES = 3
#: What a synchronous ``start_call`` may raise: a caller mistake or a full table.
CALLER_ERRORS = (ValueError, CapabilityError, LocalProtocolError)
GARBAGE = (
    b"garbage\n",
    b"{\n",
    b"\n",
    b'{"jsonrpc":"2.0","id":99999,"result":{}}\n',
    b'{"jsonrpc":"2.0","id":1,"result":\n',
    b"\xff\xfe\n",
    b"[]\n",
    b'{"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n',
    b'{"jsonrpc":"2.0","method":"notifications/progress","params":'
    b'{"progressToken":"p2","progress":"x"}}\n',
)


def message(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def answer_to(request_id: Any, method: str, kind: str = "result") -> dict[str, Any]:
    if kind == "error":
        return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": "x"}}
    result: Any = INIT_RESULT if method == "initialize" else {"tools": [], "contents": []}
    if kind == "bad" and method != "initialize":
        result = "not an object"
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def progress_of(token: Any, value: float, total: bool) -> dict[str, Any]:
    params: dict[str, Any] = {"progressToken": token, "progress": value}
    if total:
        params["total"] = 7
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}


def notification(method: str) -> dict[str, Any]:
    params = {"level": "info", "data": "hello " * 30} if method.endswith("message") else {}
    return {"jsonrpc": "2.0", "method": method, "params": params}


@attrs.define
class Sent:
    """A request the machine sent that the server has not answered."""

    method: str
    token: Any
    xid: int | None = None  # HTTP: the POST exchange it came on


class _Base(RuleBasedStateMachine):
    """Bookkeeping, the user, time and the driver's transport events; the server side
    of each transport is in a subclass."""

    config: ServerConfig

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0
        self.conn = Connection(
            self.config,
            name="stateful",
            client_info=Implementation("stateful-test", "1"),
            capabilities=dict,
            limits=LIMITS,
            random=lambda: 0.5,
        )
        self.auto = True  # the driver opens and closes transports at once
        self.todo: deque[Callable[[], None]] = deque()  # the obliging driver's inputs
        self.started: set[int] = set()
        self.ended: set[int] = set()
        self.with_progress: set[int] = set()
        self.close_requested = False
        self.closed = False
        self.closes = 0
        self.losses = 0
        self.open_pending = 0  # OpenTransport frames not answered yet (manual driver)
        self.close_pending = 0  # CloseTransport frames not answered yet (manual driver)
        self.server_requests: list[Any] = []  # ServerRequest ids not answered
        self.server_requests_seen = 0
        self.wire: dict[Any, Sent] = {}

    # ------------------------------------------------------------ driving the machine

    def pump(self) -> None:
        """Drain frames and events, as a driver does after every input."""
        for _ in range(10_000):
            todo = self.conn.frames_to_send()
            for frame in todo:
                self.perform(frame)
            if self.todo:
                self.todo.popleft()()
                continue
            event = self.conn.next_event()
            if event is not NEED_DATA:
                self.check_event(event)
            elif not todo:
                return
        raise AssertionError("the machine produced frames or events without end")

    def perform(self, frame: Any) -> None:
        if isinstance(frame, frames.OpenTransport):
            if self.auto:
                self.todo.append(lambda: self.open_result(True, manual=False))
            else:
                self.open_pending += 1
        elif isinstance(frame, frames.CloseTransport):
            self.transport_gone()
            if self.auto:
                self.todo.append(lambda: self.conn.transport_closed(self.now))
            else:
                self.close_pending += 1
        else:
            self.perform_transport(frame)

    def perform_transport(self, frame: Any) -> None:
        raise AssertionError(f"unexpected frame {frame!r}")

    def transport_gone(self) -> None:
        """The transport closed: nothing the server has not answered will be."""
        self.wire.clear()

    def check_event(self, event: Any) -> None:
        if isinstance(event, (events.CallSucceeded, events.CallFailed)):
            assert event.call_id in self.started, f"{event} for a call never started"
            assert event.call_id not in self.ended, f"call {event.call_id} ended twice"
            self.ended.add(event.call_id)
            if isinstance(event, events.CallFailed):
                assert isinstance(event.error, MCPError), repr(event.error)
        elif isinstance(event, (events.CallProgress, events.CallLog)):
            assert event.call_id in self.with_progress, "progress for a call that wanted none"
            assert event.call_id not in self.ended, "progress after the call's end"
        elif isinstance(event, (events.ConnectFailed, events.Disconnected)):
            assert isinstance(event.error, MCPError), repr(event.error)
        elif isinstance(event, events.ServerRequest):
            self.server_requests.append(event.request_id)
            self.server_requests_seen += 1
        elif isinstance(event, events.Closed):
            assert self.close_requested, "Closed without close()"
            assert self.started == self.ended, f"open at Closed: {self.started - self.ended}"
            self.closed = True

    def tokens(self) -> list[Any]:
        return [sent.token for sent in self.wire.values() if sent.token is not None]

    # ------------------------------------------------------------ the start

    @initialize(auto=st.booleans(), connected=st.sampled_from([True, True, False]))
    def start(self, auto: bool, connected: bool) -> None:
        """Most runs start from a completed handshake; the rest from IDLE."""
        self.auto = auto
        if connected:
            self.conn.connect(self.now)
            self.pump()
            while self.open_pending:
                self.open_result(True)
            self.settle()
            assert self.conn.is_connected

    # ------------------------------------------------------------ the user

    @rule(
        method=st.sampled_from(METHODS), timeout=st.sampled_from(TIMEOUTS), progress=st.booleans()
    )
    def start_call(self, method: str, timeout: float | None, progress: bool) -> None:
        params: dict[str, Any] | None = None
        if method == "tools/call":
            params = {"name": "t", "arguments": {}}
        elif method == "resources/read":
            params = {"uri": "demo://x"}
        try:
            call_id = self.conn.start_call(
                method, params, now=self.now, timeout=timeout, progress=progress
            )
        except CALLER_ERRORS:
            self.pump()
            return
        assert call_id not in self.started, "a call id was reused"
        self.started.add(call_id)
        if progress:
            self.with_progress.add(call_id)
        self.pump()

    @precondition(lambda self: self.started - self.ended)
    @rule(pick=st.integers(0, 7))
    def cancel_call(self, pick: int) -> None:
        open_calls = sorted(self.started - self.ended)
        call_id = open_calls[pick % len(open_calls)]
        self.conn.cancel_call(call_id, "the user gave up", now=self.now)
        self.pump()
        assert call_id in self.ended, "cancel_call must end the call"

    @precondition(lambda self: self.server_requests)
    @rule(pick=st.integers(0, 7), ok=st.booleans())
    def answer_server_request(self, pick: int, ok: bool) -> None:
        request_id = self.server_requests.pop(pick % len(self.server_requests))
        if ok:
            self.conn.answer(request_id, {})
        else:
            self.conn.refuse(request_id, -32601, "no")
        self.pump()

    @precondition(lambda self: self.closes < MAX_CLOSES)
    @rule()
    def close(self) -> None:
        self.closes += 1
        self.request_close()

    def request_close(self) -> None:
        """``close()``; a ``Closed`` is due unless a close was already under way."""
        if self.conn.state is not ConnectionState.CLOSING:
            self.closed = False
        self.close_requested = True
        self.conn.close(self.now)
        self.pump()

    # ------------------------------------------------------------ time

    @rule(step=st.sampled_from(STEPS))
    def advance(self, step: float) -> None:
        self.now += step
        deadline = self.conn.next_deadline()
        if deadline is not None and self.now >= deadline:
            self.conn.handle_timeout(self.now)
        self.pump()

    @precondition(lambda self: self.conn.next_deadline() is not None)
    @rule()
    def jump_to_deadline(self) -> None:
        deadline = self.conn.next_deadline()
        assert deadline is not None
        self.now = max(self.now, deadline)
        self.conn.handle_timeout(self.now)
        self.pump()

    # ------------------------------------------------------------ the driver

    @precondition(lambda self: self.open_pending)
    @rule(ok=st.sampled_from([True, True, False]))
    def open_result(self, ok: bool, manual: bool = True) -> None:
        if manual:
            self.open_pending -= 1
        self.wire.clear()
        if ok:
            self.conn.transport_opened(self.now)
        else:
            self.conn.transport_failed(ConnectionError("cannot start 'server'"), self.now)
        if manual:
            self.pump()

    @precondition(lambda self: self.close_pending)
    @rule()
    def transport_closed(self) -> None:
        self.close_pending -= 1
        self.conn.transport_closed(self.now)
        self.pump()

    # ------------------------------------------------------------ invariants, the end

    @invariant()
    def bounded(self) -> None:
        assert self.conn.pending_count <= LIMITS.max_pending_requests
        assert len(self.started - self.ended) <= LIMITS.max_pending_requests
        assert 0 <= self.conn.unanswered_server_requests <= self.server_requests_seen

    def settle(self) -> None:
        """A well-behaved server catches up: everything asked gets its answer."""
        raise NotImplementedError

    def teardown(self) -> None:
        """Close, then play a well-behaved driver and server until ``Closed``."""
        self.request_close()
        for _ in range(200):
            if self.closed:
                break
            if self.open_pending:
                self.open_result(True)
            elif self.close_pending:
                self.transport_closed()
            else:
                self.settle()
                deadline = self.conn.next_deadline()
                if deadline is not None:
                    self.now = max(self.now, deadline)
                    self.conn.handle_timeout(self.now)
                self.pump()
        assert self.closed, f"no Closed after close(); state {self.conn.state}"
        assert self.started == self.ended
