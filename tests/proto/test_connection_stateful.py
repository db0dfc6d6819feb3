"""The connection machine under random interleavings (issue 9, "How it is proven").

A hypothesis ``RuleBasedStateMachine`` plays driver, server and user of one
``mcp_proto.connection.Connection`` at once: server bytes (answers to what the machine
sent, progress, notifications, server requests, garbage, lines cut in two), transport
events (opened, failed, EOF, closed; over Streamable and plain HTTP: exchange heads,
bodies, ends and failures), time passing, user calls, cancellations and close, in any
order. Time is a number; nothing here does I/O. Half the runs use an obliging driver that opens and
closes transports at once (so calls get far); the other half leave that to the rules.

What must hold, whatever the order:

* every call id the machine handed out ends exactly once (one ``CallSucceeded`` or
  ``CallFailed``), with no progress after its end; once ``Closed`` is emitted every call
  has ended, and after a final ``close()`` with a well-behaved driver ``Closed`` comes;
* a failed call's error (and a failed connect's, a disconnect's) is an
  ``mcp_proto.errors.MCPError``; no exception escapes the machine's input methods;
  ``start_call`` raises only the documented caller errors;
* memory stays bounded: open calls never exceed ``Limits.max_pending_requests`` (small
  here), and unanswered server requests never exceed those received;
* HTTP: exchange ids are never reused, and a resumed SSE stream carries its own
  stream's ``Last-Event-ID`` (never another stream's); plain HTTP opens no GET stream.
"""

from __future__ import annotations

import json
from typing import Any

import attrs
from _stateful_base import (
    GARBAGE,
    MAX_LOSSES,
    Sent,
    _Base,
    answer_to,
    message,
    notification,
    progress_of,
)
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from mcp_proto.config import http_config, stdio_config, streamable_http_config
from mcp_proto.connection import ExchangeFailure, frames


class StdioMachine(_Base):
    """The stdio strategy: the machine writes JSON lines, the server answers in bytes."""

    config = stdio_config(["server"], read_timeout=5.0, retries=1, retry_backoff=0.2)

    def __init__(self) -> None:
        super().__init__()
        self.tail = b""  # the second half of a line cut in two

    def perform_transport(self, frame: Any) -> None:
        assert isinstance(frame, frames.Write), frame
        for data in frame.messages:
            assert b"\n" not in data
            msg = json.loads(data)
            if "method" in msg and "id" in msg:
                meta = (msg.get("params") or {}).get("_meta") or {}
                self.wire[msg["id"]] = Sent(msg["method"], meta.get("progressToken"))
            elif msg.get("method") == "notifications/cancelled":
                self.wire.pop(msg["params"]["requestId"], None)

    def transport_gone(self) -> None:
        super().transport_gone()
        self.tail = b""

    def feed(self, data: bytes) -> None:
        self.conn.receive_data(data, self.now)
        self.pump()

    def settle(self) -> None:
        while self.wire:
            request_id, sent = self.wire.popitem()
            self.feed(message(answer_to(request_id, sent.method)) + b"\n")

    # ------------------------------------------------------------ the server

    @precondition(lambda self: self.wire)
    @rule(
        pick=st.integers(0, 7),
        kind=st.sampled_from(["result", "result", "error", "bad"]),
        steps=st.integers(0, 2),
    )
    def answer(self, pick: int, kind: str, steps: int) -> None:
        """An answer, after ``steps`` progress notifications when the request has a
        token; all in one chunk."""
        request_id = list(self.wire)[pick % len(self.wire)]
        sent = self.wire.pop(request_id)
        data = b""
        if sent.token is not None:
            data = b"".join(message(progress_of(sent.token, i, True)) + b"\n" for i in range(steps))
        self.feed(data + message(answer_to(request_id, sent.method, kind)) + b"\n")

    @precondition(lambda self: self.wire)
    @rule()
    def answer_all(self) -> None:
        self.settle()

    @precondition(lambda self: self.tokens())
    @rule(pick=st.integers(0, 7), value=st.sampled_from([1, 0.5, 7]), total=st.booleans())
    def progress(self, pick: int, value: float, total: bool) -> None:
        tokens = self.tokens()
        self.feed(message(progress_of(tokens[pick % len(tokens)], value, total)) + b"\n")

    @rule(method=st.sampled_from(["notifications/message", "notifications/tools/list_changed"]))
    def notify(self, method: str) -> None:
        self.feed(message(notification(method)) + b"\n")

    @rule(n=st.integers(0, 7), method=st.sampled_from(["ping", "sampling/createMessage"]))
    def server_request(self, n: int, method: str) -> None:
        self.feed(message({"jsonrpc": "2.0", "id": f"s{n}", "method": method}) + b"\n")

    @rule(data=st.sampled_from([*GARBAGE, b"x" * 600]))  # 600: past max_line_size
    def garbage(self, data: bytes) -> None:
        self.feed(data)

    @precondition(lambda self: self.wire)
    @rule(pick=st.integers(0, 7), cut=st.integers(1, 30))
    def half_line(self, pick: int, cut: int) -> None:
        """An answer cut in two: the first half now, the rest by ``rest_of_line``."""
        request_id = list(self.wire)[pick % len(self.wire)]
        sent = self.wire.pop(request_id)
        data = message(answer_to(request_id, sent.method)) + b"\n"
        self.tail = data[cut:]
        self.feed(data[:cut])

    @precondition(lambda self: self.tail)
    @rule()
    def rest_of_line(self) -> None:
        data, self.tail = self.tail, b""
        self.feed(data)

    @precondition(lambda self: self.losses < MAX_LOSSES)
    @rule(detail=st.sampled_from(["", "exit status 1"]))
    def eof(self, detail: str) -> None:
        self.losses += 1
        self.transport_gone()
        self.conn.receive_eof(self.now, detail)
        self.pump()


@attrs.define
class Ex:
    """An HTTP exchange the machine started, as the scripted server sees it."""

    role: str  # "request" (a POST with a request), "message", "get", "resume", "delete"
    rid: Any = None  # request / resume: the request whose answer it may carry
    session: str | None = None  # the Mcp-Session-Id it carried
    head: str | None = None  # None: not answered yet; else "sse" (open stream) or "other"
    events: int = 0  # SSE events sent (their ids: r<rid>-<n> / g-<n>)


def header(headers: tuple[tuple[str, str], ...], name: str) -> str | None:
    return next((v for k, v in headers if k.lower() == name), None)


def sse(data: dict[str, Any] | None, event_id: str | None = None) -> bytes:
    out = b"" if event_id is None else f"id: {event_id}\n".encode()
    return out + (b"" if data is None else b"data: " + message(data) + b"\n") + b"\n"


SSE_GARBAGE = (
    b"data: {not json\n\n",
    b": a comment\n\n",
    b"event: weird\ndata: x\n\n",
    b"retry: 1\n\n",
    b"data: " + b"x" * 600 + b"\n\n",  # past max_line_size
    b"data: [1, 2]\n\n",
)
STATUSES = (400, 401, 403, 404, 405, 500, 503)
FAILURE_KINDS = ("read_timeout", "timeout", "network", "protocol")


class HttpMachine(_Base):
    """The Streamable HTTP strategy: every message a POST; answers as JSON or SSE on
    the POST, on a resume GET, and server messages on the standalone GET stream."""

    config = streamable_http_config(
        "http://127.0.0.1:9/mcp", read_timeout=5.0, retries=1, retry_backoff=0.2
    )

    def __init__(self) -> None:
        super().__init__()
        self.ex: dict[int, Ex] = {}  # live exchanges
        self.sessions = 0

    def perform_transport(self, frame: Any) -> None:
        if isinstance(frame, frames.AbortExchange):
            self.ex.pop(frame.xid, None)
            return
        assert isinstance(frame, frames.StartExchange), frame
        assert frame.xid not in self.ex, "an exchange id was reused"
        session = header(frame.headers, "mcp-session-id")
        if frame.method == "DELETE":
            self.ex[frame.xid] = Ex("delete", session=session)
        elif frame.method == "GET":
            # Each stream is resumed with its own last id (2025-11-25 § Resumability):
            # the standalone stream with a g-<n> (or none), a request's with r<rid>-<n>.
            last = header(frame.headers, "last-event-id")
            if last is None or frame.streaming:
                assert frame.streaming, "a request's stream resumed without its id"
                assert last is None or last.startswith("g-"), f"GET resumed with {last!r}"
                events = 0 if last is None else int(last[2:])
                self.ex[frame.xid] = Ex("get", session=session, events=events)
            else:
                assert last.startswith("r"), f"a request's stream resumed with {last!r}"
                rid_text, _, n = last[1:].partition("-")
                rid = int(rid_text)
                self.ex[frame.xid] = Ex("resume", rid, session, events=int(n))
                if rid in self.wire:
                    self.wire[rid].xid = frame.xid
        else:
            assert frame.method == "POST" and frame.body is not None
            msg = json.loads(frame.body)
            if "method" in msg and "id" in msg:
                meta = (msg.get("params") or {}).get("_meta") or {}
                sent = Sent(msg["method"], meta.get("progressToken"), frame.xid)
                self.wire[msg["id"]] = sent
                self.ex[frame.xid] = Ex("request", msg["id"], session)
            else:
                if msg.get("method") == "notifications/cancelled":
                    self.wire.pop(msg["params"]["requestId"], None)
                self.ex[frame.xid] = Ex("message", session=session)

    def transport_gone(self) -> None:
        super().transport_gone()
        self.ex.clear()

    # ------------------------------------------------------------ feeding exchanges

    def head(self, xid: int, status: int, content_type: str | None, extra: Any = ()) -> None:
        ex = self.ex[xid]
        ex.head = "sse" if content_type == "text/event-stream" else "other"
        headers = [("content-type", content_type)] if content_type else []
        self.conn.exchange_head(xid, status, [*headers, *extra], self.now)
        self.pump()
        if not self.conn.wants_exchange(xid):
            self.ex.pop(xid, None)

    def data(self, xid: int, data: bytes, split: int = 0) -> None:
        for part in (data[:split], data[split:]) if 0 < split < len(data) else (data,):
            if xid not in self.ex:
                return
            self.conn.exchange_data(xid, part, self.now)
            self.pump()
            if not self.conn.wants_exchange(xid):
                self.ex.pop(xid, None)  # the driver closes the response

    def end(self, xid: int) -> None:
        if self.ex.pop(xid, None) is not None:
            self.conn.exchange_end(xid, self.now)
            self.pump()

    def answered(self, ex: Ex) -> bytes:
        """The SSE events answering ``ex``'s request (with a progress first)."""
        sent = self.wire.pop(ex.rid, None)
        if sent is None:
            return b""
        out = b""
        if sent.token is not None:
            ex.events += 1
            out += sse(progress_of(sent.token, 1, True), f"r{ex.rid}-{ex.events}")
        ex.events += 1
        return out + sse(answer_to(ex.rid, sent.method), f"r{ex.rid}-{ex.events}")

    def respond_well(self, xid: int) -> None:
        """What a well-behaved server answers to exchange ``xid``."""
        ex = self.ex[xid]
        if ex.role == "request":
            sent = self.wire.pop(ex.rid, None)
            if sent is None:
                self.head(xid, 202, None)
            else:
                extra = [("Mcp-Session-Id", f"s{self.sessions}")]
                if sent.method == "initialize":
                    self.sessions += 1
                    extra = [("Mcp-Session-Id", f"s{self.sessions}")]
                self.head(xid, 200, "application/json", extra)
                self.data(xid, message(answer_to(ex.rid, sent.method)))
        elif ex.role == "get":
            self.head(xid, 200, "text/event-stream")
            return  # the standalone stream stays open
        elif ex.role == "resume":
            self.head(xid, 200, "text/event-stream")
            self.data(xid, self.answered(ex))
        else:
            self.head(xid, 202 if ex.role == "message" else 200, None)
        self.end(xid)

    def settle(self) -> None:
        for _ in range(100):
            fresh = [xid for xid, ex in self.ex.items() if ex.head is None]
            carried = [
                sent.xid
                for sent in self.wire.values()
                if sent.xid in self.ex and self.ex[sent.xid].head == "sse"
            ]
            if not fresh and not carried:
                return
            for xid in fresh:
                if xid in self.ex and self.ex[xid].head is None:
                    self.respond_well(xid)
            for xid in carried:
                if xid in self.ex:
                    self.data(xid, self.answered(self.ex[xid]))
                    self.end(xid)

    def fresh(self) -> list[int]:
        return sorted(xid for xid, ex in self.ex.items() if ex.head is None)

    def streams(self) -> list[int]:
        return sorted(xid for xid, ex in self.ex.items() if ex.head == "sse")

    # ------------------------------------------------------------ the server

    @precondition(lambda self: self.fresh())
    @rule(pick=st.integers(0, 7))
    def respond(self, pick: int) -> None:
        fresh = self.fresh()
        self.respond_well(fresh[pick % len(fresh)])

    @precondition(lambda self: self.fresh())
    @rule()
    def answer_all(self) -> None:
        self.settle()

    @precondition(lambda self: self.fresh())
    @rule(pick=st.integers(0, 7), status=st.sampled_from(STATUSES), jsonrpc_body=st.booleans())
    def respond_status(self, pick: int, status: int, jsonrpc_body: bool) -> None:
        fresh = self.fresh()
        xid = fresh[pick % len(fresh)]
        ex = self.ex[xid]
        sent = self.wire.pop(ex.rid, None) if ex.role == "request" else None
        extra = [("WWW-Authenticate", 'Bearer scope="x"')] if status == 401 else []
        self.head(xid, status, "application/json" if jsonrpc_body else "text/plain", extra)
        if jsonrpc_body and sent is not None:
            self.data(xid, message(answer_to(ex.rid, sent.method, "error")))
        else:
            self.data(xid, b"no")
        self.end(xid)

    def fresh_posts(self) -> list[int]:
        return [x for x in self.fresh() if self.ex[x].role in ("request", "resume")]

    @precondition(lambda self: self.fresh_posts())
    @rule(
        pick=st.integers(0, 7),
        steps=st.integers(0, 2),
        then=st.sampled_from(["answer", "stay open", "end", "break"]),
    )
    def respond_sse(self, pick: int, steps: int, then: str) -> None:
        """A request answered with an SSE stream: a priming event (an id, no data),
        maybe progress, then the answer and the end, or the stream left open, or ended
        or broken before the answer (the machine resumes it: 2025-11-25 §
        Resumability)."""
        fresh = self.fresh_posts()
        xid = fresh[pick % len(fresh)]
        ex = self.ex[xid]
        self.head(xid, 200, "text/event-stream")
        sent = self.wire.get(ex.rid)
        ex.events += 1
        data = sse(None, f"r{ex.rid}-{ex.events}")
        if sent is not None and sent.token is not None:
            for i in range(steps):
                ex.events += 1
                data += sse(progress_of(sent.token, i, True), f"r{ex.rid}-{ex.events}")
        if then == "answer":
            data += self.answered(ex)
        self.data(xid, data)
        if then in ("answer", "end"):
            self.end(xid)
        elif then == "break" and self.ex.pop(xid, None) is not None:
            self.conn.exchange_failed(xid, ExchangeFailure("network", "cut"), self.now)
            self.pump()

    @precondition(lambda self: self.fresh_posts())
    @rule(pick=st.integers(0, 7), broken=st.booleans())
    def cut_then_wait(self, pick: int, broken: bool) -> None:
        """An SSE answer cut before the answer, then the clock moves to the machine's
        next deadline (its resume delay, unless a timeout comes first)."""
        self.respond_sse(pick, 1, "break" if broken else "end")
        if self.conn.next_deadline() is not None:
            self.jump_to_deadline()

    @precondition(lambda self: self.streams())
    @rule(
        pick=st.integers(0, 7),
        kind=st.sampled_from(["answer", "notify", "request", "garbage"]),
        n=st.integers(0, 7),
        split=st.integers(0, 40),
    )
    def stream_event(self, pick: int, kind: str, n: int, split: int) -> None:
        """One event on an open SSE stream (POST, resume or the standalone GET), maybe
        cut in two chunks."""
        streams = self.streams()
        xid = streams[pick % len(streams)]
        ex = self.ex[xid]
        # Each stream numbers its own events: r<rid>-<n> on a request's, g-<n> on GET's.
        ex.events += 1
        event_id = f"r{ex.rid}-{ex.events}" if ex.rid is not None else f"g-{ex.events}"
        if kind == "answer":
            data = self.answered(ex) if ex.rid is not None else b""
        elif kind == "notify":
            data = sse(notification("notifications/message"), event_id)
        elif kind == "request":
            data = sse({"jsonrpc": "2.0", "id": f"s{n}", "method": "ping"}, event_id)
        else:
            data = SSE_GARBAGE[n % len(SSE_GARBAGE)]
        if data:
            self.data(xid, data, split)

    @precondition(lambda self: self.streams())
    @rule(pick=st.integers(0, 7))
    def end_stream(self, pick: int) -> None:
        streams = self.streams()
        self.end(streams[pick % len(streams)])

    @precondition(lambda self: self.ex and self.losses < MAX_LOSSES)
    @rule(pick=st.integers(0, 7), kind=st.sampled_from(FAILURE_KINDS))
    def fail_exchange(self, pick: int, kind: Any) -> None:
        self.losses += 1
        xid = sorted(self.ex)[pick % len(self.ex)]
        del self.ex[xid]
        self.conn.exchange_failed(xid, ExchangeFailure(kind, "scripted"), self.now)
        self.pump()


class PlainHttpMachine(HttpMachine):
    """Plain HTTP: POSTs answered with JSON, no GET stream (an SSE answer is the
    server's misbehaviour here, kept among the rules)."""

    config = http_config("http://127.0.0.1:9/rpc", read_timeout=5.0, retries=1, retry_backoff=0.2)

    def perform_transport(self, frame: Any) -> None:
        if isinstance(frame, frames.StartExchange):
            assert frame.method != "GET" or header(frame.headers, "last-event-id"), frame
        super().perform_transport(frame)


SETTINGS = settings(
    max_examples=100,
    stateful_step_count=50,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

TestStdioConnection = StdioMachine.TestCase
TestStdioConnection.settings = SETTINGS

TestHttpConnection = HttpMachine.TestCase
TestHttpConnection.settings = SETTINGS

TestPlainHttpConnection = PlainHttpMachine.TestCase
TestPlainHttpConnection.settings = SETTINGS
