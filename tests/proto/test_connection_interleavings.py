"""A stateful test of the connection machine: random interleavings of server bytes and
exchange events, timeouts, user calls and cancellations, connection loss and close,
over stdio and Streamable HTTP (issue 9, "How it is proven").

Invariants: every call ends exactly once (``CallSucceeded`` or ``CallFailed``), and
only after it started; progress only for open calls and never after their end;
nothing but typed errors (``MCPError``; ``ValueError`` for a caller's bad arguments
to ``start_call``) escapes; what the machine holds stays bounded. At the end,
``close`` ends every call.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from _machine_driver import (
    SSE_HEAD,
    Harness,
    body_of,
    connect_http,
    init_result,
    notification,
    request,
    sse_event,
)
from _proto_support import error, result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from mcp_proto.config import http_config, sse_config, stdio_config, streamable_http_config
from mcp_proto.connection import (
    AbortExchange,
    CallFailed,
    CallLog,
    CallProgress,
    CallSucceeded,
    Closed,
    CloseTransport,
    Connected,
    ConnectFailed,
    ConnectionState,
    Diagnostic,
    Disconnected,
    ExchangeFailure,
    LogMessage,
    MessageDiscarded,
    NotificationReceived,
    OpenTransport,
    ServerRequest,
    StartExchange,
    Write,
)
from mcp_proto.errors import MCPError
from mcp_proto.limits import Limits

_METHODS = ["tools/list", "tools/call", "ping", "prompts/list", "resources/read"]
_LIMITS = Limits(max_pending_requests=12, max_line_size=4096)


class ConnectionMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.h: Harness | None = None
        self.started: set[int] = set()
        self.ended: set[int] = set()
        self.written: list[dict[str, Any]] = []  # requests the server has seen (stdio)
        self.exchanges: dict[int, list[Any]] = {}  # xid -> [StartExchange, head kind]
        self.open_asked = False
        self.close_asked = False
        self.server_requests: list[Any] = []

    # ------------------------------------------------------------ plumbing

    @property
    def conn(self) -> Any:
        assert self.h is not None
        return self.h.conn

    def settle(self) -> None:
        h = self.h
        assert h is not None
        for frame in h.conn.frames_to_send():
            if isinstance(frame, OpenTransport):
                self.open_asked = True
            elif isinstance(frame, CloseTransport):
                self.close_asked = True
                self.exchanges.clear()
            elif isinstance(frame, Write):
                for data in frame.messages:
                    msg = json.loads(data)
                    if "method" in msg and "id" in msg:
                        self.written.append(msg)
            elif isinstance(frame, StartExchange):
                self.exchanges[frame.xid] = [frame, None]
            elif isinstance(frame, AbortExchange):
                self.exchanges.pop(frame.xid, None)
        for event in h.take_events():
            assert isinstance(
                event,
                (
                    Connected,
                    ConnectFailed,
                    CallSucceeded,
                    CallFailed,
                    CallProgress,
                    CallLog,
                    Disconnected,
                    Closed,
                    Diagnostic,
                    ServerRequest,
                    NotificationReceived,
                    LogMessage,
                    MessageDiscarded,
                ),
            ), event
            if isinstance(event, (CallSucceeded, CallFailed)):
                assert event.call_id in self.started, "ended before it started"
                assert event.call_id not in self.ended, "ended twice"
                self.ended.add(event.call_id)
                if isinstance(event, CallFailed):
                    assert isinstance(event.error, MCPError)
            elif isinstance(event, (CallProgress, CallLog)):
                assert event.call_id in self.started and event.call_id not in self.ended
            elif isinstance(event, (ConnectFailed, Disconnected)):
                assert isinstance(event.error, MCPError)
            elif isinstance(event, ServerRequest):
                self.server_requests.append(event.request_id)

    def do(self, fn: Any, *args: Any, **kwargs: Any) -> None:
        fn(*args, **kwargs)  # inputs from the driver never raise
        self.settle()

    # ------------------------------------------------------------ setup

    @initialize(
        kind=st.sampled_from(["stdio", "streamable_http", "http", "sse"]),
        retries=st.integers(0, 2),
        connected=st.sampled_from([True, True, True, False]),
    )
    def setup(self, kind: str, retries: int, connected: bool) -> None:
        """Most runs begin connected, where most of the protocol happens."""
        if kind == "stdio":
            config = stdio_config(["srv"], retries=retries, read_timeout=10.0)
        elif kind == "http":
            config = http_config("http://127.0.0.1:9/mcp", retries=retries, read_timeout=10.0)
        elif kind == "sse":
            config = sse_config(
                "http://127.0.0.1:9/sse", retries=retries, read_timeout=10.0, ping=2.0
            )
        else:
            config = streamable_http_config(
                "http://127.0.0.1:9/mcp", retries=retries, read_timeout=10.0
            )
        self.h = Harness(config, limits=_LIMITS, capabilities={"roots": {}})
        if connected and kind == "stdio":
            self.h.connect_stdio()
        elif connected and kind == "sse":
            self._connect_legacy()
        elif connected:
            get = connect_http(self.h)
            if get is not None:
                self.exchanges[get.xid] = [get, "sse"]

    def _connect_legacy(self) -> None:
        h = self.h
        assert h is not None
        h.conn.connect(h.now)
        h.take_frames()
        h.conn.transport_opened(h.now)
        (stream,) = h.exchanges()
        h.conn.exchange_head(stream.xid, 200, SSE_HEAD, h.now)
        h.conn.exchange_data(stream.xid, sse_event("/messages", event="endpoint"), h.now)
        (init,) = h.exchanges()
        h.reply_status(init, 202)
        h.conn.exchange_data(stream.xid, sse_event(init_result(body_of(init)["id"])), h.now)
        (initialized,) = h.exchanges()
        h.reply_status(initialized, 202)
        h.take_events()
        h.take_frames()
        self.exchanges[stream.xid] = [stream, "sse"]

    def _legacy_stream(self) -> StartExchange | None:
        for x, kind in self.exchanges.values():
            if x.streaming and kind == "sse":
                return x  # type: ignore[no-any-return]
        return None

    # ------------------------------------------------------------ user side

    @rule(
        method=st.sampled_from(_METHODS),
        progress=st.booleans(),
        timeout=st.none() | st.sampled_from([0.0, 1.0, 5.0]),
    )
    def start_call(self, method: str, progress: bool, timeout: float | None) -> None:
        try:
            call_id = self.conn.start_call(
                method,
                {"x": 1},
                now=self.h.now,
                timeout=timeout,
                progress=progress,  # type: ignore[union-attr]
            )
        except MCPError:
            self.settle()
            return
        self.started.add(call_id)
        self.settle()

    @precondition(lambda self: bool(self.started - self.ended))
    @rule(pick=st.integers(0, 50))
    def cancel(self, pick: int) -> None:
        open_ids = sorted(self.started - self.ended)
        if open_ids:
            self.do(
                self.conn.cancel_call, open_ids[pick % len(open_ids)], "gave up", now=self.h.now
            )  # type: ignore[union-attr]

    @rule(dt=st.sampled_from([0.1, 0.5, 1.0, 2.5, 11.0]))
    def advance(self, dt: float) -> None:
        assert self.h is not None
        self.h.advance(self.h.now + dt)
        self.settle()

    @rule(go=st.integers(0, 7))
    def close(self, go: int) -> None:
        if go:  # rarely: a close ends everything
            return
        self.do(self.conn.close, self.h.now)  # type: ignore[union-attr]

    @precondition(lambda self: self.close_asked)
    @rule()
    def transport_closed(self) -> None:
        if self.close_asked:
            self.close_asked = False
            self.do(self.conn.transport_closed, self.h.now)  # type: ignore[union-attr]

    @precondition(lambda self: bool(self.server_requests))
    @rule(pick=st.integers(0, 50), refuse=st.booleans())
    def answer_server_request(self, pick: int, refuse: bool) -> None:
        if not self.server_requests:
            return
        rid = self.server_requests.pop(pick % len(self.server_requests))
        if refuse:
            self.do(self.conn.refuse, rid, -1, "no", now=self.h.now)  # type: ignore[union-attr]
        else:
            self.do(self.conn.answer, rid, {}, now=self.h.now)  # type: ignore[union-attr]

    # ------------------------------------------------------------ transport side

    @precondition(lambda self: self.open_asked)
    @rule(ok=st.booleans())
    def open_transport(self, ok: bool) -> None:
        if not self.open_asked:
            return
        self.open_asked = False
        if ok:
            self.do(self.conn.transport_opened, self.h.now)  # type: ignore[union-attr]
        else:
            from mcp_proto.errors import ConnectionError

            self.do(self.conn.transport_failed, ConnectionError("spawn failed"), self.h.now)  # type: ignore[union-attr]

    def _answer_bytes(self, msg: dict[str, Any], how: str) -> bytes:
        rid = msg["id"]
        if how == "result":
            if msg["method"] == "initialize":
                return init_result(rid)
            return result(rid, {"ok": True})
        if how == "error":
            return error(rid, -32000, "no")
        if how == "progress":
            token = (msg.get("params") or {}).get("_meta", {}).get("progressToken", "none")
            return notification("notifications/progress", {"progressToken": token, "progress": 1})
        if how == "server_request":
            return request(f"s{rid}", "roots/list")
        if how == "log":
            return notification("notifications/message", {"level": "info", "data": "x\n" * 5})
        return b'{"jsonrpc":"2.0","id":' + json.dumps(rid).encode() + b',"result":'  # broken

    @precondition(lambda self: self._stdio() and bool(self.written))
    @rule(
        pick=st.integers(0, 50),
        how=st.sampled_from(
            ["result"] * 4 + ["error", "progress", "server_request", "log", "junk"]
        ),
    )
    def stdio_answer(self, pick: int, how: str) -> None:
        if self.conn.config.type != "stdio" or not self.written:
            return
        msg = self.written[pick % len(self.written)]
        if how in ("result", "error"):
            self.written.remove(msg)
        self.do(self.conn.receive_data, self._answer_bytes(msg, how) + b"\n", self.h.now)  # type: ignore[union-attr]

    @precondition(lambda self: self._stdio())
    @rule(data=st.sampled_from([b"banner\n", b"x" * 5000, b"\n\n", b"\xff\xfe\n", b"[1,2]\n"]))
    def stdio_noise(self, data: bytes) -> None:
        if self.conn.config.type == "stdio":
            self.do(self.conn.receive_data, data, self.h.now)  # type: ignore[union-attr]

    @precondition(lambda self: self._stdio())
    @rule(detail=st.sampled_from(["", "exit status 1"]), go=st.integers(0, 5))
    def stdio_eof(self, detail: str, go: int) -> None:
        if self.conn.config.type == "stdio" and not go:
            self.written.clear()
            self.do(self.conn.receive_eof, self.h.now, detail)  # type: ignore[union-attr]

    def _stdio(self) -> bool:
        return self.h is not None and self.h.conn.config.type == "stdio"

    def _any_exchange(self, headed: bool) -> bool:
        return any((v[1] is not None) == headed for v in self.exchanges.values())

    def _pick_exchange(self, pick: int, headed: bool) -> list[Any] | None:
        pool = [v for v in self.exchanges.values() if (v[1] is not None) == headed]
        # Mostly the exchanges that carry a request: their answers move calls along.
        requests = [v for v in pool if v[0].body is not None and b'"id"' in v[0].body]
        if requests and pick % 4:
            pool = requests
        return pool[pick % len(pool)] if pool else None

    @precondition(lambda self: self._any_exchange(False))
    @rule(
        pick=st.integers(0, 50),
        kind=st.sampled_from(
            ["json"] * 3 + ["sse"] * 3 + ["202", "404", "401", "503", "405", "html"]
        ),
    )
    def http_head(self, pick: int, kind: str) -> None:
        entry = self._pick_exchange(pick, headed=False)
        if entry is None:
            return
        x: StartExchange = entry[0]
        entry[1] = kind
        headers: list[tuple[str, str]] = []
        status = 200
        if kind == "json":
            headers = [("Content-Type", "application/json"), ("Mcp-Session-Id", "sid")]
        elif kind == "sse":
            headers = [*SSE_HEAD, ("Mcp-Session-Id", "sid")]
        elif kind == "html":
            headers = [("Content-Type", "text/html")]
        else:
            status = int(kind)
        self.do(self.conn.exchange_head, x.xid, status, headers, self.h.now)  # type: ignore[union-attr]

    @precondition(lambda self: self._any_exchange(True))
    @rule(
        pick=st.integers(0, 50),
        how=st.sampled_from(
            ["result"] * 4 + ["error", "progress", "server_request", "junk", "big"]
        ),
        event_id=st.none() | st.sampled_from(["1", "2"]),
    )
    def http_data(self, pick: int, how: str, event_id: str | None) -> None:
        entry = self._pick_exchange(pick, headed=True)
        if entry is None:
            return
        x: StartExchange = entry[0]
        msg = json.loads(x.body) if x.body else {"id": 0, "method": "ping"}
        if "id" not in msg or "method" not in msg:
            msg = {"id": 0, "method": "ping"}
        payload = b"x" * 5000 if how == "big" else self._answer_bytes(msg, how)
        target = x
        if self.conn.config.type == "sse":
            # Legacy HTTP+SSE: answers come on the event stream, which also names the
            # endpoint first.
            stream = self._legacy_stream()
            if stream is None:
                return
            target = stream
            if x.method == "GET" and how == "junk":
                payload = sse_event("/messages", event="endpoint")
            elif x.method == "GET":
                payload = sse_event(payload)
            else:
                payload = sse_event(payload, id=event_id)
        elif entry[1] == "sse":
            payload = sse_event(payload, id=event_id)
        self.do(self.conn.exchange_data, target.xid, payload, self.h.now)  # type: ignore[union-attr]
        x = target
        if x.xid in self.exchanges and not self.conn.wants_exchange(x.xid):
            self.exchanges.pop(x.xid, None)

    @precondition(lambda self: bool(self.exchanges))
    @rule(pick=st.integers(0, 50), headed=st.booleans())
    def http_end(self, pick: int, headed: bool) -> None:
        entry = self._pick_exchange(pick, headed=headed)
        if entry is not None:
            self.exchanges.pop(entry[0].xid, None)
            self.do(self.conn.exchange_end, entry[0].xid, self.h.now)  # type: ignore[union-attr]

    @precondition(lambda self: bool(self.exchanges))
    @rule(
        pick=st.integers(0, 50),
        headed=st.booleans(),
        kind=st.sampled_from(["read_timeout", "timeout", "network", "protocol"]),
    )
    def http_fail(self, pick: int, headed: bool, kind: Any) -> None:
        entry = self._pick_exchange(pick, headed=headed)
        if entry is not None:
            self.exchanges.pop(entry[0].xid, None)
            self.do(self.conn.exchange_failed, entry[0].xid, ExchangeFailure(kind, "x"), self.h.now)  # type: ignore[union-attr]

    # ------------------------------------------------------------ invariants

    @invariant()
    def bounded(self) -> None:
        if self.h is None:
            return
        conn = self.conn
        assert conn.pending_count == len(self.started - self.ended)
        assert conn.pending_count <= _LIMITS.max_pending_requests
        session = conn._session
        if session is not None:
            assert session.pending_count <= _LIMITS.max_pending_requests + 1  # + a ping
        assert len(conn._frames) == 0 and len(conn._events) == 0  # all drained
        assert len(conn._transport.__dict__.get("_ex", {})) <= 3 * _LIMITS.max_pending_requests + 8

    def teardown(self) -> None:
        if self.h is None:
            return
        self.conn.close(self.h.now)
        self.settle()
        if self.conn.state is ConnectionState.CLOSING:
            self.h.advance(self.h.now + 1.0)  # the answer grace
            self.settle()
            self.conn.transport_closed(self.h.now)
            self.settle()
        assert self.conn.state is ConnectionState.CLOSED
        assert self.started == self.ended, "a call never ended"


ConnectionMachine.TestCase.settings = settings(
    max_examples=100,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestConnectionMachine = ConnectionMachine.TestCase


# A seeded random walk over the same rules, weighted towards progress (answers rather
# than closes): hypothesis's rule choice favours the argument-less rules, so this walk
# reaches deeper states (successes, resumptions, expiries) in every run.
_ANSWERS = ["result"] * 4 + ["error", "progress", "server_request", "log", "junk"]
_HTTP_ANSWERS = ["result"] * 4 + ["error", "progress", "server_request", "junk", "big"]
_HEADS = ["json"] * 3 + ["sse"] * 3 + ["202", "404", "401", "503", "405", "html"]


def _walk(m: ConnectionMachine, rng: Any, steps: int) -> None:
    stdio = m._stdio()
    for _ in range(steps):
        r = rng.random()
        if r < 0.2:
            m.start_call(
                method=rng.choice(_METHODS),
                progress=rng.random() < 0.5,
                timeout=rng.choice([None, 1.0, 5.0]),
            )
        elif r < 0.3:
            m.advance(dt=rng.choice([0.1, 0.5, 1.0, 2.5, 11.0]))
        elif r < 0.33 and m.started - m.ended:
            m.cancel(pick=rng.randint(0, 50))
        elif r < 0.35:
            m.close(go=0)
        elif r < 0.38:
            m.transport_closed()
            m.open_transport(ok=rng.random() < 0.9)
        elif r < 0.4 and m.server_requests:
            m.answer_server_request(pick=rng.randint(0, 50), refuse=rng.random() < 0.5)
        elif stdio:
            if r < 0.8 and m.written:
                m.stdio_answer(pick=rng.randint(0, 50), how=rng.choice(_ANSWERS))
            elif r < 0.95:
                m.stdio_noise(data=rng.choice([b"banner\n", b"x" * 5000, b"\xff\n", b"[1]\n"]))
            else:
                m.stdio_eof(detail="exit status 1", go=0)
        elif r < 0.6 and m._any_exchange(False):
            m.http_head(pick=rng.randint(0, 50), kind=rng.choice(_HEADS))
        elif r < 0.85 and m._any_exchange(True):
            m.http_data(
                pick=rng.randint(0, 50),
                how=rng.choice(_HTTP_ANSWERS),
                event_id=rng.choice([None, "1", "2"]),
            )
        elif r < 0.95 and m.exchanges:
            m.http_end(pick=rng.randint(0, 50), headed=rng.random() < 0.8)
        elif m.exchanges:
            m.http_fail(
                pick=rng.randint(0, 50),
                headed=rng.random() < 0.5,
                kind=rng.choice(["read_timeout", "timeout", "network", "protocol"]),
            )
        m.bounded()


@pytest.mark.parametrize("kind", ["stdio", "streamable_http", "http", "sse"])
@settings(max_examples=40, deadline=None)
@given(rng=st.randoms(use_true_random=False), retries=st.integers(0, 2))
def test_random_walks_end_every_call_exactly_once(kind: str, rng: Any, retries: int) -> None:
    m = ConnectionMachine()
    m.setup(kind=kind, retries=retries, connected=rng.random() < 0.8)
    _walk(m, rng, 60)
    m.teardown()
