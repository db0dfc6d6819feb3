"""Fuzz target: the per-server machine, ``mcp_proto.connection.Connection``, whole.

The bytes choose everything a driver and a server could do, one step at a time,
through the machine driver of the pure tests (``tests/proto/_machine_driver.py``):
the transport (stdio, Streamable HTTP, plain HTTP, legacy HTTP+SSE) and the era
(``protocol="legacy"|"auto"|"modern"``, so the ``server/discover`` probe, its fallback
and a late answer are reached); then the user's operations (``start_call`` with or
without ``flush``, ``cancel_call``, ``notify``, ``answer``/``refuse``, ``start_listen``,
``close_listen``, ``log_level``, ``set_header``, ``close``), the driver's inputs
(``transport_opened``/``failed``/``closed``; stdio bytes, zero-copy buffers, end of
output; HTTP heads, bodies, ends and failures of the exchanges the machine started)
and time (``handle_timeout`` at every deadline up to a chosen instant). What the
server says is either built from the requests it saw (answers, errors, progress,
server requests, notifications, a discover result, a -32022) or raw fuzz bytes.

Contract, checked after every step and at the end:

* a driver input never raises; an operation raises only its documented errors
  (``ValueError`` for a caller's bad arguments, ``MCPError``: ``CapabilityError``,
  ``LocalProtocolError``, ``ValidationError``);
* every call id ends exactly once (``CallSucceeded`` or ``CallFailed`` with an
  ``MCPError``), never before it started; progress only for open calls; after
  ``close`` and the transport's end, every call has ended and the state is CLOSED;
  every subscription ends once (``ListenEnded``);
* bounded: open calls within ``Limits.max_pending_requests``, the session's pending
  requests within it plus the machine's own (a ping, the probe, the listens), the
  frames and events all handed out, the HTTP exchanges in flight and the stdio
  framer's buffer within their bounds;
* every message written on stdio is one JSON text without a raw newline.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from _fuzzlib import Reader, Target, json_value

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "proto"))
from _machine_driver import Harness, init_result, notification, request
from _proto_support import error, result

from mcp_proto.config import http_config, sse_config, stdio_config, streamable_http_config
from mcp_proto.connection import (
    AbortExchange,
    CallFailed,
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
    ListenAcknowledged,
    ListenEnded,
    ListenInterrupted,
    ListenNotification,
    LogMessage,
    MessageDiscarded,
    NotificationReceived,
    OpenTransport,
    ServerRequest,
    StartExchange,
    Write,
)
from mcp_proto.errors import ConnectionError, MCPError
from mcp_proto.limits import Limits

V = "2026-07-28"
LIMITS = Limits(max_pending_requests=6, max_line_size=2048)
MAX_STEPS = 48
KINDS = ("stdio", "streamable_http", "http", "sse")
PROTOCOLS = ("legacy", "auto", "modern")
METHODS = (
    "tools/list",
    "tools/call",
    "ping",
    "prompts/get",
    "resources/read",
    "resources/subscribe",
    "logging/setLevel",
    "server/discover",
    "completion/complete",
    "",
)
PARAM_KEYS = ("name", "arguments", "uri", "level", "_meta", "progressToken", "cursor", "x")
PARAM_STRINGS = ("echo", "debug", "info", "file:///a", "bogus", 7)
TIMEOUTS = (None, 0.0, 0.5, 1.0, 5.0, -1.0, float("nan"))
DELAYS = (0.0, 0.01, 0.2, 1.0, 2.5, 5.5, 11.0, 31.0, 301.0)
STATUSES = (200, 200, 200, 202, 204, 307, 400, 401, 403, 404, 405, 500, 503)
CONTENT_TYPES = ("application/json", "text/event-stream", "text/html", None)
NOTIFICATIONS = (
    "notifications/tools/list_changed",
    "notifications/message",
    "notifications/resources/updated",
    "notifications/subscriptions/acknowledged",
    "notifications/cancelled",
    "notifications/progress",
)
FILTERS: tuple[Any, ...] = (
    {"toolsListChanged": True},
    {"resourceSubscriptions": ["file:///a"]},
    {},
    {"bogus": 1},
    "not a filter",
)
ALL_CAPS: dict[str, Any] = {
    "tools": {"listChanged": True},
    "prompts": {},
    "resources": {"subscribe": True},
    "logging": {},
    "completions": {},
    "subscriptions": {},
}
ENDED = (CallSucceeded, CallFailed)
EVENTS = (
    Connected,
    ConnectFailed,
    CallSucceeded,
    CallFailed,
    CallProgress,
    Disconnected,
    Closed,
    Diagnostic,
    ServerRequest,
    NotificationReceived,
    LogMessage,
    MessageDiscarded,
    ListenAcknowledged,
    ListenNotification,
    ListenInterrupted,
    ListenEnded,
)


def _config(kind: str, protocol: str, retries: int) -> Any:
    common: dict[str, Any] = {"retries": retries, "read_timeout": 10.0}
    if kind == "stdio":
        return stdio_config(["srv"], protocol=protocol, **common)
    if kind == "http":
        return http_config("http://127.0.0.1:9/mcp", protocol=protocol, **common)
    if kind == "sse":
        return sse_config("http://127.0.0.1:9/sse", ping=2.0, **common)
    return streamable_http_config("http://127.0.0.1:9/mcp", protocol=protocol, **common)


class Run:
    """One input's run: the machine, what the server saw, and the books the contract
    is checked against."""

    def __init__(self, r: Reader) -> None:
        self.r = r
        kind = r.choice(KINDS)
        self.kind = kind
        config = _config(kind, r.choice(PROTOCOLS), r.below(3))
        self.h = Harness(config, limits=LIMITS, capabilities={"roots": {}}, probe=True)
        self.conn = self.h.conn
        self.started: set[int] = set()
        self.ended: set[int] = set()
        self.subs: set[int] = set()
        self.subs_ended: set[int] = set()
        self.seen: list[dict[str, Any]] = []  # requests the server saw
        self.exchanges: dict[int, list[Any]] = {}  # xid -> [StartExchange, headed?]
        self.open_asked = False
        self.close_asked = False
        self.server_requests: list[Any] = []

    # ------------------------------------------------------------ the driver's books

    def settle(self) -> None:
        conn = self.conn
        for frame in conn.frames_to_send():
            if isinstance(frame, OpenTransport):
                self.open_asked = True
            elif isinstance(frame, CloseTransport):
                self.close_asked = True
                self.exchanges.clear()
            elif isinstance(frame, Write):
                for data in frame.messages:
                    assert b"\n" not in data and b"\r" not in data, data
                    msg = json.loads(data)
                    if isinstance(msg, dict) and "method" in msg and "id" in msg:
                        self.seen.append(msg)
            elif isinstance(frame, StartExchange):
                self.exchanges[frame.xid] = [frame, False]
                if frame.body:
                    msg = json.loads(frame.body)
                    if isinstance(msg, dict) and "method" in msg and "id" in msg:
                        self.seen.append(msg)
            elif isinstance(frame, AbortExchange):
                self.exchanges.pop(frame.xid, None)
            else:  # pragma: no cover - a frame type the contract does not know
                raise AssertionError(frame)
        del self.seen[:-32]  # the server remembers the recent ones
        while True:
            event = conn.next_event()
            if not isinstance(event, EVENTS):
                break
            if isinstance(event, ENDED):
                assert event.call_id in self.started, f"{event} before it started"
                assert event.call_id not in self.ended, f"{event}: ended twice"
                self.ended.add(event.call_id)
                if isinstance(event, CallFailed):
                    assert isinstance(event.error, MCPError), event
            elif isinstance(event, CallProgress):
                assert event.call_id in self.started and event.call_id not in self.ended
            elif isinstance(event, (ConnectFailed, Disconnected)):
                assert isinstance(event.error, MCPError), event
            elif isinstance(event, ServerRequest):
                self.server_requests.append(event.request_id)
            elif isinstance(event, ListenEnded):
                assert event.sub_id in self.subs, event
                assert event.sub_id not in self.subs_ended, f"{event}: ended twice"
                self.subs_ended.add(event.sub_id)
        self.bounded()

    def bounded(self) -> None:
        conn = self.conn
        assert conn.pending_count == len(self.started - self.ended)
        assert conn.pending_count <= LIMITS.max_pending_requests
        session = conn._session
        if session is not None:
            # + a keep-alive ping, the probe or a late one, and the listen requests.
            extra = 3 + len(self.subs - self.subs_ended)
            assert session.pending_count <= LIMITS.max_pending_requests + extra
            assert len(session._outbox) <= 4 * LIMITS.max_pending_requests + 8
        assert conn._frames == [] and not conn._events  # all handed out
        transport = conn._transport
        assert len(getattr(transport, "_ex", {})) <= 3 * LIMITS.max_pending_requests + 8
        framer = getattr(transport, "_framer", None)
        if framer is not None:
            assert framer.buffered <= LIMITS.max_line_size + 1

    def input(self, fn: Any, *args: Any, **kwargs: Any) -> None:
        """A driver input: it never raises."""
        fn(*args, **kwargs)
        self.settle()

    def op(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """A user operation: only its documented errors."""
        try:
            return fn(*args, **kwargs)
        except (ValueError, MCPError):
            return None

    # ------------------------------------------------------------ what the server says

    def _params(self) -> Any:
        r = self.r
        pick = r.below(4)
        if pick == 0:
            return None
        if pick == 1:
            return {"name": "echo", "arguments": {"x": 1}}
        return json_value(r, PARAM_KEYS, PARAM_STRINGS, max_depth=3)

    def _message(self) -> bytes:
        r = self.r
        how = r.below(12)
        msg = r.choice(self.seen) if self.seen else {"id": 0, "method": "ping"}
        rid, method = msg.get("id"), msg.get("method")
        if how <= 3:
            if method == "initialize":
                version = r.choice(("2025-11-25", "2024-11-05", "1999-01-01", V))
                return init_result(rid, version=version, caps=ALL_CAPS)
            if method == "server/discover" and r.below(4):
                versions = r.choice(([V], ["2025-11-25"], [], "x"))
                return result(rid, {"supportedVersions": versions, "capabilities": ALL_CAPS})
            if method == "subscriptions/listen":
                return result(rid, r.choice(({}, {"resultType": "complete"}, {"x": 1})))
            return result(rid, r.choice(({}, {"tools": []}, {"content": []}, None, [1])))
        if how == 4:
            code = r.choice((-32601, -32602, -32603, -32000, -32020, -32021, -32022, -1))
            data = {"supported": [V], "requested": "x"} if code == -32022 else None
            return error(rid, code, "no", data)
        if how == 5:
            token = ((msg.get("params") or {}).get("_meta") or {}).get("progressToken", 1)
            return notification(
                "notifications/progress", {"progressToken": token, "progress": r.below(5)}
            )
        if how == 6:
            method = r.choice(("roots/list", "sampling/createMessage", "ping", "x/y"))
            return request(f"s{r.below(4)}", method, {})
        if how == 7:
            params = json_value(r, ("_meta", "level", "data", "requestId", "uri"), (rid, "x"))
            if r.flag():
                meta = {"io.modelcontextprotocol/subscriptionId": rid}
                params = {**(params if isinstance(params, dict) else {}), "_meta": meta}
            return notification(r.choice(NOTIFICATIONS), params)
        if how == 8:
            return b'{"jsonrpc":"2.0","id":' + json.dumps(rid).encode() + b',"result":'
        return r.take(r.below(64))  # raw peer bytes

    # ------------------------------------------------------------ steps

    def step(self) -> None:
        r = self.r
        conn, now = self.conn, self.h.now
        what = r.below(20)
        if what <= 2:
            call_id = self.op(
                conn.start_call,
                r.choice(METHODS),
                self._params(),
                now=now,
                timeout=r.choice(TIMEOUTS),
                progress=r.flag(),
                flush=r.below(4) != 0,
            )
            if call_id is not None:
                self.started.add(call_id)
            self.settle()
        elif what == 3:
            open_ids = sorted(self.started - self.ended)
            if open_ids:
                self.op(conn.cancel_call, r.choice(open_ids), "gave up", now=now)
            else:
                self.op(conn.flush, now)
        elif what == 4:
            self.op(
                conn.notify,
                r.choice(NOTIFICATIONS),
                self._params(),
                now=now,
                only_if_connected=r.flag(),
            )
        elif what == 5:
            self.h.advance(now + r.choice(DELAYS))
            self.settle()
        elif what == 6:
            if r.below(3) == 0:
                self.op(conn.close, now, keep_subscriptions=r.flag())
            elif self.close_asked:
                self.close_asked = False
                self.input(conn.transport_closed, now)
            else:
                self.op(conn.connect, now)
        elif what == 7:
            if self.open_asked:
                self.open_asked = False
                if r.below(4):
                    pid = r.choice((None, 100, 101))
                    self.input(conn.transport_opened, now, pid=pid)
                else:
                    self.input(conn.transport_failed, ConnectionError("spawn failed"), now)
            elif self.server_requests:
                rid = self.server_requests.pop(r.below(len(self.server_requests)))
                if r.flag():
                    self.op(conn.refuse, rid, -1, "no", now=now)
                else:
                    self.op(conn.answer, rid, {"roots": []}, now=now)
        elif what == 8:
            pick = r.below(6)
            if pick <= 2:
                sub_id = self.op(conn.start_listen, r.choice(FILTERS), now=now)
                if sub_id is not None:
                    self.subs.add(sub_id)
                self.settle()
            elif pick == 3 and self.subs:
                self.op(conn.close_listen, r.choice(sorted(self.subs)), now=now)
            elif pick == 4:
                level = r.choice(("debug", "error", None, "loud"))
                self.op(setattr, conn, "log_level", level)
            else:
                self.op(conn.set_header, "Authorization", r.choice(("Bearer t", None, "a\nb")))
        elif self.kind == "stdio":
            self.stdio_step()
        else:
            self.http_step()
        self.settle()

    def stdio_step(self) -> None:
        r, conn, now = self.r, self.conn, self.h.now
        pick = r.below(10)
        if pick <= 6:
            data = self._message()
            if r.below(4):
                data += b"\n"
            self.input(conn.receive_data, data, now)
        elif pick == 7:
            data = self._message() + b"\n"
            buffer = conn.get_buffer(len(data))
            n = min(len(buffer), len(data))
            buffer[:n] = data[:n]
            self.input(conn.buffer_updated, n, now)
        elif pick == 8:
            self.input(conn.receive_eof, now, r.choice(("", "exit status 1")))
        else:
            self.input(conn.receive_data, b"x" * (LIMITS.max_line_size + 10), now)

    def http_step(self) -> None:
        r, conn, now = self.r, self.conn, self.h.now
        if not self.exchanges:
            self.h.advance(now + 0.5)
            self.settle()
            return
        xid = r.choice(sorted(self.exchanges))
        entry = self.exchanges[xid]
        x: StartExchange = entry[0]
        pick = r.below(8)
        if not entry[1] and pick <= 3:
            entry[1] = True
            status = r.choice(STATUSES)
            headers: list[tuple[str, str]] = []
            content_type = r.choice(CONTENT_TYPES)
            if content_type is not None:
                headers.append(("Content-Type", content_type))
            if r.flag():
                headers.append(("Mcp-Session-Id", r.choice(("sid", "s\x7fd", ""))))
            if r.below(8) == 0:
                headers.append(("Content-Encoding", r.choice(("gzip", "br", "identity"))))
            if status == 307:
                headers.append(("Location", r.choice(("/mcp/", "http://evil.example/"))))
            self.input(conn.exchange_head, xid, status, headers, now)
        elif pick <= 5:
            payload = self._message()
            streamed = x.streaming or self.kind == "sse" or r.flag()
            if streamed and r.below(4):
                text = payload.decode("utf-8", "replace")
                event = None
                if self.kind == "sse" and x.method == "GET" and r.below(3) == 0:
                    event, text = "endpoint", r.choice(("/messages", "http://evil/x", ""))
                payload = _sse(text, event, r.choice((None, "1", "2")), r.choice((None, 10)))
            if self.kind == "sse" and x.method == "POST" and r.flag():
                # Legacy HTTP+SSE answers on the event stream.
                streams = [v[0] for v in self.exchanges.values() if v[0].streaming and v[1]]
                if streams:
                    xid, payload = streams[0].xid, _sse(payload.decode("utf-8", "replace"))
            self.input(conn.exchange_data, xid, payload, now)
            if xid in self.exchanges and not conn.wants_exchange(xid):
                self.exchanges.pop(xid, None)
        elif pick == 6:
            self.exchanges.pop(xid, None)
            self.input(conn.exchange_end, xid, now)
        else:
            self.exchanges.pop(xid, None)
            kind = r.choice(("read_timeout", "timeout", "network", "protocol"))
            self.input(conn.exchange_failed, xid, ExchangeFailure(kind, "x"), now)

    def finish(self) -> None:
        """Close: every call and subscription ends, and the machine is CLOSED."""
        conn, h = self.conn, self.h
        conn.close(h.now)
        self.settle()
        if conn.state is ConnectionState.CLOSING:
            h.advance(h.now + 1.0)  # the answer grace
            self.settle()
            conn.transport_closed(h.now)
            self.settle()
        assert conn.state is ConnectionState.CLOSED, conn.state
        # Subscriptions a close(keep_subscriptions=True) kept wait for the next connect
        # (SUB-22); a plain close of the closed connection ends them.
        conn.close(h.now)
        self.settle()
        assert conn.state is ConnectionState.CLOSED, conn.state
        assert self.started == self.ended, f"never ended: {self.started - self.ended}"
        assert self.subs == self.subs_ended, f"never ended: {self.subs - self.subs_ended}"


def _sse(data: str, event: str | None = None, id: str | None = None, retry: Any = None) -> bytes:
    lines = []
    if event is not None:
        lines.append(f"event: {event}")
    if id is not None:
        lines.append(f"id: {id}")
    if retry is not None:
        lines.append(f"retry: {retry}")
    lines.extend(f"data: {line}" for line in data.split("\n"))
    return ("\n".join(lines) + "\n\n").encode()


def check(data: bytes) -> None:
    r = Reader(data)
    run = Run(r)
    if r.flag():  # most interesting runs begin by connecting
        run.op(run.conn.connect, run.h.now)
        run.settle()
    for _ in range(MAX_STEPS):
        if r.exhausted:
            break
        run.step()
    run.finish()


def _seed(kind: int, protocol: int, *steps: int) -> bytes:
    return bytes([kind, protocol, 0, 1, *steps])


SEEDS = (
    b"",
    _seed(0, 0, 7, 1, 0, 0, 9, 0, 0, 9, 0, 0, 0, 0, 0, 0),  # stdio legacy: connect, answer
    _seed(0, 1, 7, 1, 9, 0, 0, 0, 5, 6, 0, 0, 0, 0),  # stdio auto: probe, time
    _seed(1, 1, 7, 1, 0, 0, 9, 0, 0, 9, 0, 4, 5, 6),  # streamable HTTP auto
    _seed(2, 0, 7, 1, 0, 0, 9, 0, 0, 9, 0, 4, 5, 6),  # plain HTTP legacy
    _seed(3, 0, 7, 1, 9, 0, 0, 9, 0, 4, 5, 6, 6, 6),  # legacy HTTP+SSE
    _seed(0, 2, 7, 1, 8, 0, 0, 9, 0, 0, 0, 5, 7, 5, 6),  # stdio modern, a listen
)

TARGET = Target(
    name="connection",
    check=check,
    seeds=SEEDS,
    max_len=2048,
    description=(
        "the connection machine driven step by step: operations, driver inputs, "
        "peer bytes and time over stdio and HTTP"
    ),
)

if __name__ == "__main__":
    from run import main

    main(["connection"])
