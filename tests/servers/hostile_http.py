#!/usr/bin/env python3
"""A scripted, misbehaving MCP HTTP server for tests (stdlib + h11 only, threads).

Listens on 127.0.0.1 only. Two ways to run it::

    python tests/servers/hostile_http.py MODE [--port 0] [--opt KEY=VALUE]... [--log FILE]
        # prints "PORT <n>" as its first stdout line once listening (port 0 = OS-chosen);
        # cross_origin_endpoint also prints "OTHER_PORT <n>". Runs until SIGTERM/SIGINT.
        # --log FILE appends one JSON line per request received (RecordedRequest.as_dict plus
        # "seq"), and a {"seq": n, "status": s} line when it is answered.

    from hostile_http import start
    url_base, stop, recorder = start("flaky_5xx", fail_count=3)   # in-process, on threads
    # url_base is "http://127.0.0.1:<port>"; Streamable HTTP is at url_base + "/mcp",
    # the legacy HTTP+SSE stream (SSE modes) at url_base + "/sse"; stop() is idempotent.

MODE is a name below, optionally with the suffix ``+sse``: then every ordinary reply to a
JSON-RPC request on ``/mcp`` is a ``text/event-stream`` carrying one ``event: message`` (no
event id) instead of ``application/json``. (The modes' own SSE streams are SSE either way.)

Baseline (Streamable HTTP, every mode except the legacy-SSE ones, at ``/mcp``)
    POST  needs ``Content-Type: application/json`` (415 otherwise) and an ``Accept`` listing
          both ``application/json`` and ``text/event-stream`` (406 otherwise); a body that is
          not one JSON object -> 400 with a JSON-RPC error (-32700 / -32600).
          ``initialize`` -> protocolVersion = the requested one if it is one of 2024-11-05,
          2025-03-26, 2025-06-18, 2025-11-25, else 2025-11-25; capabilities ``{"tools": {}}``;
          serverInfo ``{"name": "hostile-http", "version": "0.0.0"}``; response header
          ``Mcp-Session-Id: hs-<n>`` (n = 1, 2, ... per initialize).
          Every other POST/GET/DELETE must carry a live ``Mcp-Session-Id``: missing -> 400,
          unknown / expired / deleted -> 404 (JSON-RPC error body, code -32001).
          An ``MCP-Protocol-Version`` header that is not a known version -> 400.
          Notifications and client responses -> 202 (no body). ``ping`` -> ``{}``;
          ``tools/list`` -> one tool ``t`` (inputSchema ``{"type": "object"}``);
          ``tools/call`` -> ``{"content": [{"type": "text", "text": "ok"}], "isError": false}``
          unless the mode says otherwise; any other request -> -32601.
    GET   -> 405 (``Allow: POST, DELETE``) unless the mode uses a GET stream (below); 406 if
          ``Accept`` lacks ``text/event-stream``.
    DELETE-> 200, the session is gone (later requests with it get 404).
    Other paths -> 404. Legacy-SSE modes answer /mcp with 404.

Modes (the fault happens on ``tools/call`` unless stated; "records" = what to assert on besides
the request list every mode records):

ok                     well-behaved Streamable HTTP (baseline only).
gzip_bomb              tools/call -> 200, ``Content-Encoding: gzip`` (always, whatever the
                       Accept-Encoding), ``Content-Length`` set, body a gzip stream inflating to
                       a JSON-RPC response whose text is ``bomb_bytes`` (default 1 GiB) of "x";
                       ~1 MiB compressed, generated on the fly (deflate blocks ended by a full
                       flush repeat byte-for-byte). With ``+sse`` the same inside ``data:``.
                       records counter ``bomb_bytes_sent`` (compressed bytes written) and a note
                       when the client hangs up.
endless_sse            tools/call -> 200 text/event-stream: ``event: message``, then ONE
                       ``data:`` line that never ends (64 KiB chunks of "x", as fast as the client
                       reads, no newline ever) until the client disconnects (or ``max_bytes``,
                       default 16 GiB / ``max_seconds``, default 300). records counter
                       ``endless_bytes_sent`` and note "endless_sse: client disconnected after N
                       bytes".
retry_zero             GET /mcp -> 200 text/event-stream ``: retry zero`` + ``retry: 0`` + blank
                       line, end of body, ``Connection: close`` - every time. POSTs normal.
                       Use ``recorder.max_rate("GET")`` (most GETs in any 1 s window).
huge_event_id          tools/call -> SSE: ``id: ok-1`` priming event (empty data), then events
                       with hostile ids, then the connection is dropped (no response).
                       ``variant`` (server option, or ``arguments.variant`` of the call) picks them:
                       ``huge`` (an id of ``id_bytes`` bytes, default 1 MiB: the whole event is
                       then a little over 1 MiB), ``cr`` (``id: e-cr\\rX-Injected: 1``: a bare CR
                       inside the line), ``crlf`` (``id: e-crlf\\r\\nX-Injected: 1``), ``nonascii``
                       (UTF-8 ``id: é-€-😀`` and an invalid-UTF-8 id), ``nul`` (``id: a\\0b``),
                       ``all`` (default: all of these in that order).
                       GET /mcp WITH any ``Last-Event-ID`` -> SSE with the pending response
                       (``id: ok-2``), then end; GET without it -> 405. records the
                       ``Last-Event-ID`` values (``recorder.last_event_ids()``).
cross_origin_endpoint  legacy HTTP+SSE. GET /sse -> the ``endpoint`` event points elsewhere, per
                       option ``endpoint``: ``port`` (default; ``http://127.0.0.1:<other>/messages
                       ?session=...``), ``host`` (``http://127.0.0.2:<other>/messages...``),
                       ``evil`` (``http://evil.example/x``), ``scheme`` (``https://`` + this very
                       host:port), ``userinfo`` (``http://127.0.0.1:<port>@127.0.0.1:<other>/
                       messages...``), ``netpath`` (``//127.0.0.1:<other>/messages...``).
                       A second listener on 127.0.0.1:<other> (and 127.0.0.2:<other> when that
                       can be bound) records any hit with listener="other"
                       (``recorder.other_origin_requests()``; must stay empty) and answers 202.
                       The stream then stays open (keep-alive comments) until the client leaves.
unsolicited            tools/call -> SSE: responses (results and errors) to ids never sent
                       (``unsolicited_count``, default 100, random ints in [10**9, 2**53) and
                       random strings, seeded), a response to the already-answered initialize
                       id, an ``id: null`` error, then the real response (text "ok").
flaky_5xx              the first ``fail_count`` (default 2) POSTs of tools/list -> 503
                       (text/plain), later ones succeed; every tools/call POST -> 503.
                       ``recorder.posts("tools/call")`` must have exactly one entry.
session_expired        for the first ``expirations`` (default 1) sessions: once the session has
                       sent notifications/initialized, its first JSON-RPC *request* POST (of
                       method ``expire_on``, default ``any``) gets 404 and the session is dead
                       (later requests with it, GET/DELETE included: 404). A new initialize
                       works (new id ``hs-<n+1>``). ``recorder.sessions`` lists issued ids.
                       (With expirations=2 and expire_on=any the re-sent request on the new
                       session is that session's first request and expires it too; use
                       ``expire_on="tools/call"`` to test list-then-call on one server.)
drop_mid_stream        tools/call -> SSE: ``id: e<k>`` + ``retry: <retry_ms>`` (default 100; 0 or
                       negative omits it) + empty data (priming), then ``id: e<k+1>`` with a
                       ``notifications/progress`` (the call's progressToken, else "hostile"),
                       then the connection is dropped (FIN; ``drop=rst`` for a RST) before the
                       response (id ``e<k+2>``). Event ids count up across calls (first call:
                       e1, e2, e3). GET /mcp with ``Last-Event-ID`` of a known event -> SSE
                       replaying the events after it (the response included), then end of body.
                       Option ``resume``: ``ok`` (default), ``405`` (GET always 405), ``drop``
                       (the GET stream sends a priming event with the same retry and is dropped,
                       every time). GET with an unknown id -> 400, without one -> 405.
jsonrpc_400            tools/call -> HTTP 400, application/json, body a JSON-RPC error response
                       (the call's id) ``{"code": -32020, "message": "Header mismatch",
                       "data": {"header": "Mcp-Name", "expected": "t", "received": "x"}}``.
forbidden_scope        tools/call -> HTTP 403, ``WWW-Authenticate: Bearer
                       error="insufficient_scope", scope="a b"``, text body "Forbidden".
unauthorized           every request (any method, any path) -> HTTP 401, text body
                       "Unauthorized", ``WWW-Authenticate: Bearer resource_metadata=
                       "<base>/.well-known/oauth-protected-resource", scope="a b",
                       error="invalid_token"``: a protected MCP server without a token.
refuse_after_initialize  POST initialize (any path) -> the normal result with Mcp-Session-Id
                       ``hs-1``; every other request -> HTTP 400, text body "Bad Request"
                       (no JSON-RPC body): a server that answered, then refuses.
slow                   tools/call is never answered: no status line at all (with ``+sse``: 200
                       text/event-stream headers, then nothing); the connection is held until the
                       client closes it. notifications/cancelled POSTs -> 202 (recorded, and
                       ``recorder.cancelled()`` returns their params); note "slow: client closed"
                       when a held connection ends.
batch                  every tools/call is held until ``arguments.batch`` of them are in flight at
                       once, then all are answered, each with its ``arguments.text``; a call still
                       held after ``batch_wait`` s (default 10) is answered with ``isError``
                       "batch: only N calls came".
                       A client that sends one call at a time never gets an answer in time.
after_result           tools/call -> 200 text/event-stream: the response first (text "ok"), then
                       a pause of ``pause`` s (default 0.05: the response reaches the client on
                       its own), then ``notifications`` (default 3) ``notifications/message`` on
                       the same stream (level "info", logger "after_result", data "after <i>"
                       for i = 1..n), then the end of the body (with ``hold``: no end, the
                       connection is held until the client closes it; note "after_result:
                       client closed"; with ``keepalive`` > 0, an SSE comment every
                       ``keepalive`` s meanwhile, so no read timeout ever fires). A client that
                       stops reading at the response loses them.
post_tail              tools/call ``t`` -> 200 text/event-stream: the response first (text "ok"),
                       then one ``notifications/message`` (logger "post_tail", data "before
                       release"), then the stream stays OPEN (nothing sent) until a
                       ``tools/call`` of the tool ``release`` (listed by tools/list besides
                       ``t``) arrives on another connection, or
                       ``hold_max`` s pass (default 30), or the client hangs up. On release the
                       held stream sends ``notifications/message`` "after release" and ends.
                       ``release`` answers text "released" if a stream was still held open at
                       that moment, else "nothing held". A client that makes the caller read
                       the POST stream to its end returns from the first call only once the
                       stream is gone, and then gets "nothing held". records notes
                       "post_tail: released", "post_tail: client closed", "post_tail: gave up".
oversized_tail         tools/call -> 200 text/event-stream, all in ONE write: a
                       ``notifications/message`` (logger "oversized_tail", data "before"), the
                       response (text "ok"), then an event whose data is ``size`` bytes of "x"
                       (default 2 MiB), then the end. A client bounding events below ``size``
                       still has the notification and the response: complete events before the
                       oversized one are not lost with it.
legacy_sse_ok          well-behaved legacy HTTP+SSE: GET /sse (or GET /) -> ``event: endpoint``,
                       ``data: /messages?session=abc`` (the 2nd stream gets abc-2, ...);
                       POST /messages?session=<id> -> 202 "Accepted", the JSON-RPC reply comes on
                       that session's stream as ``event: message``; unknown session -> 404.
                       ``: keep-alive`` comments every ``keepalive`` seconds (default 15).
                       initialize answers like the baseline (no Mcp-Session-Id). POST / or /sse
                       -> 405; /mcp -> 404. In-process, ``stop.server.silent`` (an Event) set
                       makes it stop sending (SSE-5): POSTs are taken (202) and never answered,
                       no keep-alive comments, a new GET stream -> 503; cleared, it is back.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import select
import signal
import socket
import struct
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import h11

HOST = "127.0.0.1"
PROTOCOL_VERSION = "2025-11-25"
KNOWN_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
SERVER_INFO = {"name": "hostile-http", "version": "0.0.0"}
TOOL = {
    "name": "t",
    "description": "The hostile HTTP test server's only tool; calling it triggers the fault.",
    "inputSchema": {"type": "object"},
}
OK_RESULT = {"content": [{"type": "text", "text": "ok"}], "isError": False}
MIB = 1024 * 1024
GIB = 1024 * MIB

STREAMABLE_MODES = frozenset(
    {
        "ok",
        "gzip_bomb",
        "endless_sse",
        "retry_zero",
        "huge_event_id",
        "unsolicited",
        "flaky_5xx",
        "session_expired",
        "drop_mid_stream",
        "jsonrpc_400",
        "forbidden_scope",
        "unauthorized",
        "refuse_after_initialize",
        "slow",
        "batch",
        "after_result",
        "post_tail",
        "oversized_tail",
    }
)
LEGACY_MODES = frozenset({"cross_origin_endpoint", "legacy_sse_ok"})
MODES = STREAMABLE_MODES | LEGACY_MODES

#: Options each mode accepts (name -> default). Unknown options are an error.
OPTIONS: dict[str, dict[str, Any]] = {
    "gzip_bomb": {"bomb_bytes": GIB},
    "endless_sse": {"max_bytes": 16 * GIB, "max_seconds": 300.0},
    "huge_event_id": {"variant": "all", "id_bytes": MIB},
    "cross_origin_endpoint": {"endpoint": "port", "keepalive": 15.0},
    "unsolicited": {"unsolicited_count": 100},
    "flaky_5xx": {"fail_count": 2},
    "session_expired": {"expirations": 1, "expire_on": "any"},
    "drop_mid_stream": {"retry_ms": 100, "resume": "ok", "drop": "fin"},
    "legacy_sse_ok": {"keepalive": 15.0},
    "batch": {"batch_wait": 10.0},
    "after_result": {"notifications": 3, "pause": 0.05, "hold": False, "keepalive": 0.0},
    "post_tail": {"hold_max": 30.0},
    "oversized_tail": {"size": 2 * MIB},
}
HUGE_ID_VARIANTS = ("huge", "cr", "crlf", "nonascii", "nul")
ENDPOINT_VARIANTS = ("port", "host", "evil", "scheme", "userinfo", "netpath")

#: Poll interval of every blocking wait (so stop() is noticed promptly).
TICK = 0.2
MAX_REQUEST_BODY = 16 * MIB


# ------------------------------------------------------------------------------------ recording


@dataclass
class RecordedRequest:
    """One HTTP request as received (the body complete), plus the status we answered."""

    t: float  # time.monotonic() when the request head arrived
    listener: str  # "main", or "other" for the cross-origin trap listener
    method: str
    target: str  # raw request target, e.g. "/messages?session=abc"
    headers: list[tuple[str, str]]  # names lower-cased; values decoded as latin-1 (bytes kept)
    body: bytes = b""
    status: int | None = None  # None until answered (or if never answered / dropped first)
    local_port: int = 0
    seq: int = -1  # position in the recorder

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def query(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.target).query)

    def header(self, name: str) -> str | None:
        """The first value of header `name` (case-insensitive), or None."""
        name = name.lower()
        for key, value in self.headers:
            if key == name:
                return value
        return None

    def header_values(self, name: str) -> list[str]:
        name = name.lower()
        return [value for key, value in self.headers if key == name]

    @property
    def json(self) -> Any:
        """The body parsed as JSON, or None."""
        try:
            return json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            return None

    @property
    def rpc_method(self) -> str | None:
        msg = self.json
        if isinstance(msg, dict) and isinstance(msg.get("method"), str):
            return str(msg["method"])
        return None

    @property
    def rpc_id(self) -> Any:
        msg = self.json
        return msg.get("id") if isinstance(msg, dict) else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "t": self.t,
            "listener": self.listener,
            "method": self.method,
            "target": self.target,
            "headers": self.headers,
            "body": self.body.decode("utf-8", "replace"),
            "status": self.status,
        }


class Recorder:
    """Thread-safe log of everything the server saw. All getters return copies."""

    def __init__(self, log_path: str | None = None) -> None:
        self._cond = threading.Condition()
        self._requests: list[RecordedRequest] = []
        self._notes: list[tuple[float, str]] = []
        self._counters: dict[str, int] = {}
        self._sessions: list[str] = []
        self._log_path = log_path

    # -- writing (server side)
    def add(self, req: RecordedRequest) -> None:
        with self._cond:
            req.seq = len(self._requests)
            self._requests.append(req)
            self._cond.notify_all()
            self._log({"seq": req.seq, **req.as_dict()})

    def set_status(self, req: RecordedRequest, status: int) -> None:
        with self._cond:
            req.status = status
            self._cond.notify_all()
            self._log({"seq": req.seq, "status": status})

    def _log(self, line: dict[str, Any]) -> None:
        """--log: one JSON line per request at arrival, one {"seq", "status"} line per answer."""
        if self._log_path:
            with contextlib.suppress(OSError), open(self._log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(line) + "\n")

    def note(self, text: str) -> None:
        with self._cond:
            self._notes.append((time.monotonic(), text))
            self._cond.notify_all()

    def bump(self, counter: str, n: int = 1) -> None:
        with self._cond:
            self._counters[counter] = self._counters.get(counter, 0) + n

    def add_session(self, session_id: str) -> None:
        with self._cond:
            self._sessions.append(session_id)
            self._cond.notify_all()

    # -- reading (test side)
    @property
    def requests(self) -> list[RecordedRequest]:
        with self._cond:
            return list(self._requests)

    @property
    def notes(self) -> list[str]:
        with self._cond:
            return [text for _, text in self._notes]

    @property
    def counters(self) -> dict[str, int]:
        with self._cond:
            return dict(self._counters)

    @property
    def sessions(self) -> list[str]:
        """Mcp-Session-Id values issued, in order."""
        with self._cond:
            return list(self._sessions)

    def filter(
        self,
        method: str | None = None,
        path: str | None = None,
        rpc_method: str | None = None,
        listener: str | None = "main",
    ) -> list[RecordedRequest]:
        """Requests matching every given criterion (listener=None: any listener)."""
        return [
            r
            for r in self.requests
            if (method is None or r.method == method)
            and (path is None or r.path == path)
            and (rpc_method is None or r.rpc_method == rpc_method)
            and (listener is None or r.listener == listener)
        ]

    def posts(self, rpc_method: str | None = None) -> list[RecordedRequest]:
        return self.filter(method="POST", rpc_method=rpc_method)

    def gets(self, path: str | None = None) -> list[RecordedRequest]:
        return self.filter(method="GET", path=path)

    def deletes(self) -> list[RecordedRequest]:
        return self.filter(method="DELETE")

    def count(self, **criteria: Any) -> int:
        return len(self.filter(**criteria))

    def cancelled(self) -> list[Any]:
        """params of every notifications/cancelled POSTed."""
        return [(r.json or {}).get("params") for r in self.posts("notifications/cancelled")]

    def last_event_ids(self) -> list[str]:
        """Every Last-Event-ID header value received (any method), in order (latin-1 str)."""
        return [v for r in self.requests for v in r.header_values("last-event-id")]

    def header_values(self, name: str, method: str | None = None) -> list[str]:
        return [v for r in self.filter(method=method) for v in r.header_values(name)]

    def max_rate(self, method: str = "GET", path: str | None = None, window: float = 1.0) -> int:
        """The most matching requests that arrived within any `window` seconds."""
        times = sorted(r.t for r in self.filter(method=method, path=path))
        best = 0
        lo = 0
        for hi, t in enumerate(times):
            while t - times[lo] > window:
                lo += 1
            best = max(best, hi - lo + 1)
        return best

    def other_origin_requests(self) -> list[RecordedRequest]:
        """Requests that reached the cross-origin trap listener (must be none)."""
        return self.filter(listener="other")

    def wait_for(self, predicate: Callable[[Recorder], bool], timeout: float = 10.0) -> bool:
        """Wait until predicate(self) is true; False on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            if predicate(self):
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            with self._cond:
                self._cond.wait(min(remaining, TICK))


# ------------------------------------------------------------------------------------ wire bits


def sse_event(
    data: str | bytes | None = None,
    *,
    event: str | None = None,
    event_id: str | bytes | None = None,
    retry: int | None = None,
) -> bytes:
    """One SSE event (LF line endings). Byte ids are written raw (hostile ids)."""
    out = bytearray()
    if event_id is not None:
        out += b"id: " + (event_id if isinstance(event_id, bytes) else event_id.encode()) + b"\n"
    if event is not None:
        out += b"event: " + event.encode() + b"\n"
    if retry is not None:
        out += b"retry: " + str(retry).encode() + b"\n"
    if data is not None:
        raw = data if isinstance(data, bytes) else data.encode()
        lines = raw.split(b"\n") if raw else [b""]
        for line in lines:
            out += b"data: " + line + b"\n" if line else b"data:\n"
    out += b"\n"
    return bytes(out)


def message_event(msg: Any, event_id: str | None = None) -> bytes:
    return sse_event(compact(msg), event="message", event_id=event_id)


def _peer_closed(sock: socket.socket) -> bool:
    """True if the client closed ``sock`` (readable with nothing to read) or it broke."""
    try:
        ready, _, _ = select.select([sock], [], [], 0)
        return bool(ready) and not sock.recv(1, socket.MSG_PEEK)
    except OSError:
        return True


def _log_note(logger: str, data: str) -> dict[str, Any]:
    """A ``notifications/message`` at level info."""
    return {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "info", "logger": logger, "data": data},
    }


def compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def rpc_result(req_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": req_id, "result": result}


def rpc_error(req_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": req_id, "error": err}


BOMB_BLOCK = 1 * MIB


def _deflate_fragment(data: bytes, final: bool) -> bytes:
    """Raw deflate of `data` from a fresh compressor, byte-aligned, no back references out."""
    comp = zlib.compressobj(9, zlib.DEFLATED, -15, 9)
    return comp.compress(data) + comp.flush(zlib.Z_FINISH if final else zlib.Z_FULL_FLUSH)


def gzip_bomb(prefix: bytes, suffix: bytes, fill_bytes: int) -> tuple[int, Iterator[bytes]]:
    """(compressed length, chunk iterator) of a gzip member inflating to
    prefix + b"x" * n + suffix with n = fill_bytes rounded up to whole MiB.

    Each fragment comes from a fresh compressor ended by a full flush (final one: finish), so
    fragments are independent, byte-aligned block sequences and may be concatenated; the 1 MiB
    block is compressed once (~1 KiB) and repeated. Memory stays small; the CRC is computed as
    the blocks go out (only a client that inflates everything pays for it on our side).
    """
    blocks = max(1, -(-fill_bytes // BOMB_BLOCK))
    head = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    first = _deflate_fragment(prefix, final=False)
    block = _deflate_fragment(b"x" * BOMB_BLOCK, final=False)
    last = _deflate_fragment(suffix, final=True)
    total = len(head) + len(first) + blocks * len(block) + len(last) + 8

    def chunks() -> Iterator[bytes]:
        raw_block = b"x" * BOMB_BLOCK
        crc = zlib.crc32(prefix)
        yield head + first
        batch = 64
        sent = 0
        while sent < blocks:
            n = min(batch, blocks - sent)
            for _ in range(n):
                crc = zlib.crc32(raw_block, crc)
            yield block * n
            sent += n
        crc = zlib.crc32(suffix, crc)
        size = len(prefix) + blocks * BOMB_BLOCK + len(suffix)
        yield last + struct.pack("<II", crc & 0xFFFFFFFF, size & 0xFFFFFFFF)

    return total, chunks()


def hostile_id_events(variant: str, id_bytes: int = MIB) -> list[bytes]:
    """Events whose ids a client must never echo in Last-Event-ID."""
    events: dict[str, list[bytes]] = {
        "huge": [b"id: " + b"h" * id_bytes + b"\ndata:\n\n"],
        "cr": [b"id: e-cr\rX-Injected: 1\ndata:\n\n"],
        "crlf": [b"id: e-crlf\r\nX-Injected: 1\r\ndata:\r\n\r\n"],
        "nonascii": [
            "id: é-€-😀\ndata:\n\n".encode(),
            b"id: bad-\xff\xfe-utf8\ndata:\n\n",
        ],
        "nul": [b"id: a\x00b\ndata:\n\n"],
    }
    if variant == "all":
        return [ev for name in HUGE_ID_VARIANTS for ev in events[name]]
    if variant not in events:
        raise ValueError(f"unknown huge_event_id variant {variant!r}")
    return events[variant]


# ----------------------------------------------------------------------------------- connection


class _Gone(Exception):
    """The client closed the connection (or the server is stopping)."""


class Exchange:
    """One request/response on a connection: the request as recorded, and ways to answer."""

    def __init__(self, conn: _Connection, req: RecordedRequest) -> None:
        self.conn = conn
        self.req = req
        self.started = False
        self.dropped = False

    # -- whole responses
    def respond(
        self,
        status: int,
        body: bytes = b"",
        content_type: str | None = None,
        headers: list[tuple[str, str]] | None = None,
    ) -> None:
        hdrs = list(headers or [])
        if content_type is not None:
            hdrs.append(("Content-Type", content_type))
        hdrs.append(("Content-Length", str(len(body))))
        self._head(status, hdrs)
        if body:
            self.conn.send(h11.Data(data=body))
        self.conn.send(h11.EndOfMessage())

    def respond_json(
        self, status: int, obj: Any, headers: list[tuple[str, str]] | None = None
    ) -> None:
        self.respond(status, compact(obj).encode(), "application/json", headers)

    def respond_text(
        self, status: int, text: str, headers: list[tuple[str, str]] | None = None
    ) -> None:
        self.respond(status, text.encode(), "text/plain; charset=utf-8", headers)

    # -- streamed responses
    def start_stream(
        self,
        status: int = 200,
        content_type: str = "text/event-stream",
        headers: list[tuple[str, str]] | None = None,
        content_length: int | None = None,
    ) -> None:
        hdrs = [("Content-Type", content_type), ("Cache-Control", "no-cache")]
        hdrs += list(headers or [])
        if content_length is not None:
            hdrs.append(("Content-Length", str(content_length)))
        self._head(status, hdrs)

    def write(self, data: bytes) -> None:
        if data:
            self.conn.send(h11.Data(data=data))

    def end(self) -> None:
        self.conn.send(h11.EndOfMessage())

    def drop(self, rst: bool = False) -> None:
        """Close the connection abruptly (mid-body: no terminating chunk)."""
        self.dropped = True
        self.conn.close(rst=rst)

    def hold(self) -> str:
        """Keep the connection open, sending nothing, until the client closes it or stop()."""
        return self.conn.wait_closed()

    def _head(self, status: int, headers: list[tuple[str, str]]) -> None:
        self.started = True
        self.conn.server.recorder.set_status(self.req, status)
        self.conn.send(h11.Response(status_code=status, headers=headers))


class _Connection:
    def __init__(self, server: HostileHTTPServer, sock: socket.socket, listener: str) -> None:
        self.server = server
        self.sock = sock
        self.listener = listener
        self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=64 * 1024)
        self.closed = False
        self.local_port = sock.getsockname()[1]

    def send(self, event: h11.Event) -> None:
        data = self.h11.send(event)
        if data:
            try:
                self.sock.sendall(data)
            except OSError as exc:
                raise _Gone(str(exc)) from exc

    def close(self, rst: bool = False) -> None:
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(OSError):
            if rst:
                self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            else:
                self.sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self.sock.close()

    def _recv(self) -> bytes:
        """Bytes from the client; b"" at EOF. Raises _Gone when the server stops."""
        while True:
            if self.server.stopping.is_set() or self.closed:
                raise _Gone("stopping")
            try:
                ready, _, _ = select.select([self.sock], [], [], TICK)
            except (OSError, ValueError) as exc:
                raise _Gone(str(exc)) from exc
            if ready:
                try:
                    return self.sock.recv(65536)
                except OSError:
                    return b""

    def wait_closed(self) -> str:
        """Block until the client closes (returns "client closed") or stop() ("stopping")."""
        while True:
            try:
                data = self._recv()
            except _Gone:
                return "stopping"
            if not data:
                return "stopping" if self.server.stopping.is_set() else "client closed"
            # Anything the client sends meanwhile is ignored (no pipelining expected).

    def read_request(self) -> tuple[h11.Request, bytes] | None:
        body = bytearray()
        request: h11.Request | None = None
        while True:
            event = self.h11.next_event()
            if event is h11.NEED_DATA:
                self.h11.receive_data(self._recv())
                continue
            if isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                body += event.data
                if len(body) > MAX_REQUEST_BODY:
                    raise _Gone("request body too large")
            elif isinstance(event, h11.EndOfMessage):
                assert request is not None
                return request, bytes(body)
            elif isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
                return None

    def serve(self) -> None:
        try:
            while not self.server.stopping.is_set():
                got = self.read_request()
                if got is None:
                    return
                request, body = got
                rec = RecordedRequest(
                    t=time.monotonic(),
                    listener=self.listener,
                    method=request.method.decode("ascii", "replace"),
                    target=request.target.decode("latin-1"),
                    headers=[
                        (k.decode("latin-1").lower(), v.decode("latin-1"))
                        for k, v in request.headers
                    ],
                    body=body,
                    local_port=self.local_port,
                )
                self.server.recorder.add(rec)
                ex = Exchange(self, rec)
                self.server.dispatch(ex)
                if self.closed or ex.dropped:
                    return
                if self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE:
                    self.h11.start_next_cycle()
                else:
                    return
        except _Gone:
            pass
        except h11.RemoteProtocolError as exc:
            self.server.recorder.note(f"{self.listener}: bad HTTP from client: {exc}")
            with contextlib.suppress(Exception):
                self.sock.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        except (OSError, h11.LocalProtocolError) as exc:
            self.server.recorder.note(f"{self.listener}: connection error: {exc!r}")
        except Exception as exc:  # a bug in this server: keep it visible but never crash a test
            self.server.recorder.note(f"{self.listener}: SERVER BUG: {exc!r}")
            print(f"hostile_http: SERVER BUG: {exc!r}", file=sys.stderr)
        finally:
            self.close()


# ------------------------------------------------------------------------------------ the server


@dataclass
class _Session:
    sid: str
    initialized: bool = False  # notifications/initialized seen


@dataclass
class _LegacySession:
    sid: str
    outbox: list[bytes] = field(default_factory=list)
    cond: threading.Condition = field(default_factory=threading.Condition)

    def push(self, data: bytes) -> None:
        with self.cond:
            self.outbox.append(data)
            self.cond.notify_all()


class HostileHTTPServer:
    def __init__(
        self,
        mode: str,
        *,
        port: int = 0,
        log_path: str | None = None,
        **options: Any,
    ) -> None:
        base, _, suffix = mode.partition("+")
        if base not in MODES:
            raise ValueError(f"unknown mode {mode!r}; known: {sorted(MODES)}")
        if suffix not in ("", "sse"):
            raise ValueError(f"unknown mode suffix {suffix!r} (only '+sse')")
        if suffix and base in LEGACY_MODES:
            raise ValueError(f"'+sse' makes no sense for the legacy mode {base!r}")
        allowed = OPTIONS.get(base, {})
        unknown = set(options) - set(allowed)
        if unknown:
            raise ValueError(f"mode {base!r} takes no option(s) {sorted(unknown)}")
        self.mode = base
        self.sse_replies = bool(suffix)
        self.opts: dict[str, Any] = {**allowed, **options}
        self._check_options()
        self.recorder = Recorder(log_path)
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._batch = threading.Condition()  # the batch mode's calls in flight
        self._batch_held = 0
        self._batch_round = 0
        self._tail = threading.Condition()  # post_tail: a stream held open, its release
        self._tail_socks: list[socket.socket] = []
        self._tail_released = 0
        self._threads: list[threading.Thread] = []
        self._conns: set[_Connection] = set()
        self._listeners: list[socket.socket] = []
        self._requested_port = port
        self.port = 0
        self.other_port: int | None = None
        # Streamable HTTP state
        self._sessions: dict[str, _Session] = {}
        self._session_counter = 0
        self._expired = 0
        self._init_ids: list[Any] = []
        self._tools_list_posts = 0
        self._event_counter = 0
        self._streams: dict[str, list[tuple[str, bytes]]] = {}  # stream key -> [(id, event)]
        self._event_index: dict[str, tuple[str, int]] = {}  # event id -> (stream key, index)
        self._pending_resume: list[bytes] = []  # huge_event_id: events for the next resume GET
        # legacy SSE state
        self._legacy: dict[str, _LegacySession] = {}
        self._legacy_counter = 0
        self.silent = threading.Event()  # legacy_sse_ok: stopped sending (SSE-5 tests)
        self._rng = random.Random(20251125)

    def _check_options(self) -> None:
        o = self.opts
        if self.mode == "huge_event_id" and o["variant"] not in (*HUGE_ID_VARIANTS, "all"):
            raise ValueError(f"variant must be one of {HUGE_ID_VARIANTS} or 'all'")
        if self.mode == "cross_origin_endpoint" and o["endpoint"] not in ENDPOINT_VARIANTS:
            raise ValueError(f"endpoint must be one of {ENDPOINT_VARIANTS}")
        if self.mode == "drop_mid_stream":
            if str(o["resume"]) not in ("ok", "405", "drop"):
                raise ValueError("resume must be 'ok', '405' or 'drop'")
            if o["drop"] not in ("fin", "rst"):
                raise ValueError("drop must be 'fin' or 'rst'")

    # -- lifecycle
    @property
    def url_base(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self) -> HostileHTTPServer:
        main = self._listen(HOST, self._requested_port)
        self.port = main.getsockname()[1]
        self._spawn(self._accept_loop, main, "main")
        if self.mode == "cross_origin_endpoint":
            other = self._listen(HOST, 0)
            self.other_port = other.getsockname()[1]
            self._spawn(self._accept_loop, other, "other")
            try:  # the same port on another loopback address, when the OS allows it
                other2 = self._listen("127.0.0.2", self.other_port)
            except OSError as exc:
                self.recorder.note(f"could not bind 127.0.0.2:{self.other_port}: {exc}")
            else:
                self._spawn(self._accept_loop, other2, "other")
        return self

    def stop(self) -> None:
        if self.stopping.is_set():
            return
        self.stopping.set()
        for sock in self._listeners:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        with self._lock:
            conns = list(self._conns)
        for conn in conns:  # wakes threads blocked in sendall; they close their own sockets
            with contextlib.suppress(OSError):
                conn.sock.shutdown(socket.SHUT_RDWR)
        for legacy in list(self._legacy.values()):
            with legacy.cond:
                legacy.cond.notify_all()
        deadline = time.monotonic() + 5.0
        for thread in list(self._threads):
            thread.join(max(0.0, deadline - time.monotonic()))
        for sock in self._listeners:
            with contextlib.suppress(OSError):
                sock.close()

    def _listen(self, host: str, port: int) -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
            sock.listen(64)
        except OSError:
            sock.close()
            raise
        self._listeners.append(sock)
        return sock

    def _spawn(self, target: Callable[..., None], *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True, name="hostile-http")
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
        thread.start()

    def _accept_loop(self, listener: socket.socket, name: str) -> None:
        while not self.stopping.is_set():
            try:
                ready, _, _ = select.select([listener], [], [], TICK)
                if not ready:
                    continue
                sock, _ = listener.accept()
            except (OSError, ValueError):
                if self.stopping.is_set():
                    return
                time.sleep(TICK)
                continue
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = _Connection(self, sock, name)
            with self._lock:
                self._conns.add(conn)
            self._spawn(self._serve_conn, conn)

    def _serve_conn(self, conn: _Connection) -> None:
        try:
            conn.serve()
        finally:
            with self._lock:
                self._conns.discard(conn)

    # -- routing
    def dispatch(self, ex: Exchange) -> None:
        if ex.req.listener == "other":
            # The cross-origin trap: whatever arrives here is a client bug; answer plausibly.
            self.recorder.note(f"OTHER ORIGIN HIT: {ex.req.method} {ex.req.target}")
            ex.respond_text(202, "Accepted")
            return
        path = ex.req.path
        if self.mode == "unauthorized":
            self._unauthorized(ex)
            return
        if self.mode == "refuse_after_initialize":
            msg = ex.req.json if ex.req.method == "POST" else None
            if isinstance(msg, dict) and msg.get("method") == "initialize" and "id" in msg:
                self._reply(ex, self._answer(msg), [("Mcp-Session-Id", "hs-1")])
            else:
                ex.respond_text(400, "Bad Request")
            return
        if self.mode in LEGACY_MODES:
            if path in ("/sse", "/"):
                if ex.req.method == "GET":
                    self._legacy_stream(ex)
                else:
                    ex.respond_text(405, "Method Not Allowed", [("Allow", "GET")])
            elif path == "/messages":
                if ex.req.method == "POST":
                    self._legacy_post(ex)
                else:
                    ex.respond_text(405, "Method Not Allowed", [("Allow", "POST")])
            else:
                ex.respond_text(404, "Not Found")
            return
        if path != "/mcp":
            ex.respond_text(404, "Not Found")
        elif ex.req.method == "POST":
            self._mcp_post(ex)
        elif ex.req.method == "GET":
            self._mcp_get(ex)
        elif ex.req.method == "DELETE":
            self._mcp_delete(ex)
        else:
            ex.respond_text(405, "Method Not Allowed", [("Allow", "GET, POST, DELETE")])

    # -- plain JSON-RPC semantics (shared by both transports)
    def _answer(self, msg: dict[str, Any]) -> dict[str, Any]:
        """The well-behaved reply to request `msg`."""
        method = msg.get("method")
        req_id = msg.get("id")
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        if method == "initialize":
            requested = params.get("protocolVersion")
            version = requested if requested in KNOWN_VERSIONS else PROTOCOL_VERSION
            with self._lock:
                self._init_ids.append(req_id)
            return rpc_result(
                req_id,
                {
                    "protocolVersion": version,
                    "capabilities": {"tools": {}},
                    "serverInfo": SERVER_INFO,
                },
            )
        if method == "ping":
            return rpc_result(req_id, {})
        if method == "tools/list":
            return rpc_result(req_id, {"tools": [TOOL]})
        if method == "tools/call":
            if self.mode == "batch":
                return rpc_result(req_id, self._batch_call(params))
            return rpc_result(req_id, OK_RESULT)
        return rpc_error(req_id, -32601, f"Method not found: {method}")

    def _batch_call(self, params: dict[str, Any]) -> dict[str, Any]:
        """Hold this call (its handler thread) until ``arguments.batch`` are held."""
        args = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        want = args.get("batch") if isinstance(args.get("batch"), int) else 1
        deadline = time.monotonic() + float(self.opts["batch_wait"])
        with self._batch:
            self._batch_held += 1
            my_round = self._batch_round
            if self._batch_held >= want:
                self._batch_held = 0
                self._batch_round += 1
                self._batch.notify_all()
            while self._batch_round == my_round:
                left = deadline - time.monotonic()
                if left <= 0 or self.stopping.is_set():
                    self._batch_held -= 1
                    text = f"batch: only {self._batch_held + 1} calls came"
                    return {"content": [{"type": "text", "text": text}], "isError": True}
                self._batch.wait(min(left, TICK))
        text = str(args.get("text", "ok"))
        return {"content": [{"type": "text", "text": text}], "isError": False}

    # -- Streamable HTTP
    def _reply(self, ex: Exchange, msg: Any, headers: list[tuple[str, str]] | None = None) -> None:
        if self.sse_replies:
            body = message_event(msg)
            ex.start_stream(200, headers=headers)
            ex.write(body)
            ex.end()
        else:
            ex.respond_json(200, msg, headers)

    def _session_ok(self, ex: Exchange, req_id: Any = None) -> _Session | None:
        """The live session named by the request, or None after answering 400/404."""
        sid = ex.req.header("mcp-session-id")
        if sid is None:
            ex.respond_json(
                400, rpc_error(req_id, -32600, "Bad Request: Mcp-Session-Id header required")
            )
            return None
        with self._lock:
            session = self._sessions.get(sid)
        if session is None:
            ex.respond_json(404, rpc_error(req_id, -32001, "Session not found"))
            return None
        version = ex.req.header("mcp-protocol-version")
        if version is not None and version not in KNOWN_VERSIONS:
            ex.respond_json(
                400, rpc_error(req_id, -32600, f"Unsupported MCP-Protocol-Version: {version}")
            )
            return None
        return session

    def _mcp_post(self, ex: Exchange) -> None:
        ctype = (ex.req.header("content-type") or "").split(";")[0].strip().lower()
        if ctype != "application/json":
            ex.respond_text(415, "Unsupported Media Type: Content-Type must be application/json")
            return
        accept = (ex.req.header("accept") or "").lower()
        if "application/json" not in accept or "text/event-stream" not in accept:
            ex.respond_text(
                406, "Not Acceptable: Accept must list application/json and text/event-stream"
            )
            return
        msg = ex.req.json
        if msg is None:
            ex.respond_json(400, rpc_error(None, -32700, "Parse error"))
            return
        if not isinstance(msg, dict):
            ex.respond_json(400, rpc_error(None, -32600, "Invalid Request: one JSON object"))
            return
        method = msg.get("method")
        is_request = isinstance(method, str) and "id" in msg
        if method == "initialize" and is_request:
            with self._lock:
                self._session_counter += 1
                sid = f"hs-{self._session_counter}"
                self._sessions[sid] = _Session(sid)
            self.recorder.add_session(sid)
            self._reply(ex, self._answer(msg), [("Mcp-Session-Id", sid)])
            return
        req_id = msg.get("id") if is_request else None
        session = self._session_ok(ex, req_id)
        if session is None:
            return
        if not is_request:  # notification or a response from the client
            if method == "notifications/initialized":
                session.initialized = True
            ex.respond(202)
            return
        if (
            self.mode == "session_expired"
            and session.initialized
            and self.opts["expire_on"] in ("any", method)
        ):
            with self._lock:
                expire = self._expired < int(self.opts["expirations"])
                if expire:
                    self._expired += 1
                    self._sessions.pop(session.sid, None)
            if expire:
                self.recorder.note(f"session_expired: expired {session.sid} on {method}")
                ex.respond_json(404, rpc_error(req_id, -32001, "Session not found"))
                return
        handler = getattr(self, f"_post_{self.mode}", None)
        if handler is not None and handler(ex, msg):
            return
        self._reply(ex, self._answer(msg))

    # Mode hooks: return True when they answered.
    def _post_gzip_bomb(self, ex: Exchange, msg: dict[str, Any]) -> bool:
        if msg.get("method") != "tools/call":
            return False
        head = compact(msg.get("id"))
        prefix = '{"jsonrpc":"2.0","id":' + head + ',"result":{"content":[{"type":"text","text":"'
        suffix = '"}],"isError":false}}'
        pre, suf = prefix.encode(), suffix.encode()
        ctype = "application/json"
        if self.sse_replies:
            pre, suf, ctype = b"event: message\ndata: " + pre, suf + b"\n\n", "text/event-stream"
        total, chunks = gzip_bomb(pre, suf, int(self.opts["bomb_bytes"]))
        ex.start_stream(200, ctype, [("Content-Encoding", "gzip")], content_length=total)
        try:
            for chunk in chunks:
                ex.write(chunk)
                self.recorder.bump("bomb_bytes_sent", len(chunk))
            ex.end()
            self.recorder.note("gzip_bomb: the whole bomb was sent")
        except _Gone:
            sent = self.recorder.counters.get("bomb_bytes_sent", 0)
            who = "server stopped" if self.stopping.is_set() else "client disconnected"
            self.recorder.note(f"gzip_bomb: {who} after {sent} bytes")
            ex.drop()
        return True

    def _post_after_result(self, ex: Exchange, msg: dict[str, Any]) -> bool:
        if msg.get("method") != "tools/call":
            return False
        ex.start_stream(200)
        ex.write(message_event(self._answer(msg)))
        self.stopping.wait(float(self.opts["pause"]))
        for i in range(1, int(self.opts["notifications"]) + 1):
            note = {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "info", "logger": "after_result", "data": f"after {i}"},
            }
            ex.write(message_event(note))
        if self.opts["hold"] in (True, "1", "true"):
            every = float(self.opts["keepalive"])
            outcome = self._keep_alive(ex, every) if every > 0 else ex.hold()
            self.recorder.note(f"after_result: {outcome}")
            ex.drop()
            return True
        ex.end()
        return True

    def _keep_alive(self, ex: Exchange, every: float) -> str:
        """Hold ``ex``'s stream open with an SSE comment every ``every`` s (each one
        resets a client's read timeout) until the client hangs up, stop(), or 120 s."""
        deadline = time.monotonic() + 120.0
        sock = ex.conn.sock
        while time.monotonic() < deadline:
            if self.stopping.is_set():
                return "stopping"
            if _peer_closed(sock):
                return "client closed"
            try:
                ex.write(b": keep-alive\n\n")
            except _Gone:
                return "client closed"
            self.stopping.wait(every)
        return "gave up"

    def _post_oversized_tail(self, ex: Exchange, msg: dict[str, Any]) -> bool:
        if msg.get("method") != "tools/call":
            return False
        ex.start_stream(200)
        oversized = b"event: message\ndata: " + b"x" * int(self.opts["size"]) + b"\n\n"
        with contextlib.suppress(_Gone):
            ex.write(
                message_event(_log_note("oversized_tail", "before"))
                + message_event(self._answer(msg))
                + oversized
            )
            ex.end()
            return True
        ex.drop()
        return True

    def _post_post_tail(self, ex: Exchange, msg: dict[str, Any]) -> bool:
        if msg.get("method") == "tools/list":
            release = {**TOOL, "name": "release", "description": "Ends the held stream."}
            self._reply(ex, rpc_result(msg.get("id"), {"tools": [TOOL, release]}))
            return True
        if msg.get("method") != "tools/call":
            return False
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        if params.get("name") == "release":
            with self._tail:
                # Held, and its client still there (a client may have hung up an instant
                # before the holder's next look).
                held = any(not _peer_closed(sock) for sock in self._tail_socks)
                if held:
                    self._tail_released += 1
                    self._tail.notify_all()
            text = "released" if held else "nothing held"
            result = {"content": [{"type": "text", "text": text}]}
            self._reply(ex, rpc_result(msg.get("id"), result))
            return True
        # Held from before the answer is written: a client that has its answer may send
        # ``release`` at once, and must find this stream held (it was a race: the
        # release could be judged before the holder registered, "nothing held").
        sock = ex.conn.sock
        with self._tail:
            self._tail_socks.append(sock)
            seen = self._tail_released  # a release from now on is this stream's too
        try:
            ex.start_stream(200)
            ex.write(message_event(self._answer(msg)))
            ex.write(message_event(_log_note("post_tail", "before release")))
            outcome = self._hold_tail(ex, seen)
        finally:
            with self._tail:
                self._tail_socks.remove(sock)
        self.recorder.note(f"post_tail: {outcome}")
        if outcome == "released":
            with contextlib.suppress(_Gone):
                ex.write(message_event(_log_note("post_tail", "after release")))
                ex.end()
                return True
        ex.drop()
        return True

    def _hold_tail(self, ex: Exchange, seen: int) -> str:
        """Hold ``ex``'s stream open until a release after ``seen`` releases, the client
        hanging up, or hold_max (the caller registered it in ``_tail_socks``)."""
        deadline = time.monotonic() + float(self.opts["hold_max"])
        sock = ex.conn.sock
        with self._tail:
            while self._tail_released == seen:
                if self.stopping.is_set():
                    return "stopping"
                left = deadline - time.monotonic()
                if left <= 0:
                    return "gave up"
                if _peer_closed(sock):
                    return "client closed"
                self._tail.wait(min(left, TICK))
            return "released"

    def _post_endless_sse(self, ex: Exchange, msg: dict[str, Any]) -> bool:
        if msg.get("method") != "tools/call":
            return False
        ex.start_stream(200)
        head = compact(msg.get("id"))
        ex.write(
            b"event: message\ndata: "
            + b'{"jsonrpc":"2.0","id":'
            + head.encode()
            + b',"result":{"content":[{"type":"text","text":"'
        )
        chunk = b"x" * 65536
        sent = 0
        deadline = time.monotonic() + float(self.opts["max_seconds"])
        try:
            while sent < int(self.opts["max_bytes"]) and time.monotonic() < deadline:
                if self.stopping.is_set():
                    raise _Gone("stopping")
                ex.write(chunk)
                sent += len(chunk)
                self.recorder.bump("endless_bytes_sent", len(chunk))
            self.recorder.note(f"endless_sse: gave up after {sent} bytes (client kept reading)")
        except _Gone:
            who = "server stopped" if self.stopping.is_set() else "client disconnected"
            self.recorder.note(f"endless_sse: {who} after {sent} bytes")
        ex.drop()
        return True

    def _post_huge_event_id(self, ex: Exchange, msg: dict[str, Any]) -> bool:
        if msg.get("method") != "tools/call":
            return False
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        args = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        variant = str(args.get("variant", self.opts["variant"]))
        size = int(self.opts["id_bytes"])
        try:
            events = hostile_id_events(variant, size)
        except ValueError:
            events = hostile_id_events("all", size)
        with self._lock:
            self._pending_resume = [message_event(self._answer(msg), event_id="ok-2")]
        ex.start_stream(200)
        ex.write(sse_event("", event_id="ok-1"))
        for event in events:
            ex.write(event)
        self.recorder.note(f"huge_event_id: sent variant {variant}, dropping")
        ex.drop()
        return True

    def _post_unsolicited(self, ex: Exchange, msg: dict[str, Any]) -> bool:
        if msg.get("method") != "tools/call":
            return False
        sent_ids = {compact(r.rpc_id) for r in self.recorder.posts() if r.rpc_id is not None}
        ex.start_stream(200)
        out = bytearray()
        for i in range(int(self.opts["unsolicited_count"])):
            if i % 2 == 0:
                fake: Any = self._rng.randrange(10**9, 2**53)
            else:
                fake = f"hostile-{self._rng.getrandbits(64):016x}"
            if compact(fake) in sent_ids:
                continue
            if i % 3 == 0:
                out += message_event(rpc_error(fake, -32603, "unsolicited error"))
            else:
                wrong = {"content": [{"type": "text", "text": "WRONG"}], "isError": False}
                out += message_event(rpc_result(fake, wrong))
        with self._lock:
            init_ids = list(self._init_ids)
        for init_id in init_ids:  # already answered: no request is pending under it
            wrong = {"content": [{"type": "text", "text": "STALE"}], "isError": False}
            out += message_event(rpc_result(init_id, wrong))
        out += message_event(rpc_error(None, -32600, "unsolicited id-null error"))
        out += message_event(self._answer(msg))
        ex.write(bytes(out))
        ex.end()
        return True

    def _post_flaky_5xx(self, ex: Exchange, msg: dict[str, Any]) -> bool:
        method = msg.get("method")
        if method == "tools/call":
            ex.respond_text(503, "Service Unavailable (hostile: tools/call always fails)")
            return True
        if method == "tools/list":
            with self._lock:
                self._tools_list_posts += 1
                fail = self._tools_list_posts <= int(self.opts["fail_count"])
            if fail:
                ex.respond_text(503, "Service Unavailable (hostile: flaky)")
                return True
        return False

    def _new_event_id(self) -> str:
        with self._lock:
            self._event_counter += 1
            return f"e{self._event_counter}"

    def _post_drop_mid_stream(self, ex: Exchange, msg: dict[str, Any]) -> bool:
        if msg.get("method") != "tools/call":
            return False
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        token = meta.get("progressToken", "hostile")
        retry = int(self.opts["retry_ms"])
        prime_id, progress_id, response_id = (self._new_event_id() for _ in range(3))
        key = f"stream-{prime_id}"
        prime = sse_event("", event_id=prime_id, retry=retry if retry > 0 else None)
        progress = message_event(
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": token, "progress": 1, "total": 2},
            },
            event_id=progress_id,
        )
        response = message_event(self._answer(msg), event_id=response_id)
        events = [(prime_id, prime), (progress_id, progress), (response_id, response)]
        with self._lock:
            self._streams[key] = events
            for index, (event_id, _) in enumerate(events):
                self._event_index[event_id] = (key, index)
        ex.start_stream(200)
        ex.write(prime + progress)
        self.recorder.note(f"drop_mid_stream: dropped {key} after {progress_id}")
        ex.drop(rst=self.opts["drop"] == "rst")
        return True

    def _post_jsonrpc_400(self, ex: Exchange, msg: dict[str, Any]) -> bool:
        if msg.get("method") != "tools/call":
            return False
        data = {"header": "Mcp-Name", "expected": "t", "received": "x"}
        ex.respond_json(400, rpc_error(msg.get("id"), -32020, "Header mismatch", data))
        return True

    def _post_forbidden_scope(self, ex: Exchange, msg: dict[str, Any]) -> bool:
        if msg.get("method") != "tools/call":
            return False
        challenge = 'Bearer error="insufficient_scope", scope="a b"'
        ex.respond_text(403, "Forbidden", [("WWW-Authenticate", challenge)])
        return True

    def _unauthorized(self, ex: Exchange) -> None:
        metadata = f"{self.url_base}/.well-known/oauth-protected-resource"
        challenge = f'Bearer resource_metadata="{metadata}", scope="a b", error="invalid_token"'
        ex.respond_text(401, "Unauthorized", [("WWW-Authenticate", challenge)])

    def _post_slow(self, ex: Exchange, msg: dict[str, Any]) -> bool:
        if msg.get("method") != "tools/call":
            return False
        if self.sse_replies:
            ex.start_stream(200)
        self.recorder.note(f"slow: holding tools/call id={compact(msg.get('id'))}")
        how = ex.hold()
        self.recorder.note(f"slow: {how} (tools/call id={compact(msg.get('id'))})")
        ex.drop()
        return True

    def _mcp_get(self, ex: Exchange) -> None:
        accept = (ex.req.header("accept") or "").lower()
        if "text/event-stream" not in accept:
            ex.respond_text(406, "Not Acceptable: Accept must list text/event-stream")
            return
        if self._session_ok(ex) is None:
            return
        last_id = ex.req.header("last-event-id")
        if self.mode == "retry_zero":
            ex.start_stream(200, headers=[("Connection", "close")])
            ex.write(b": retry zero\nretry: 0\n\n")
            ex.end()
            return
        if self.mode == "huge_event_id" and last_id is not None:
            with self._lock:
                events, self._pending_resume = self._pending_resume, []
            ex.start_stream(200)
            ex.write(b"".join(events))
            ex.end()
            return
        if self.mode == "drop_mid_stream" and last_id is not None:
            self._resume(ex, last_id)
            return
        ex.respond_text(405, "Method Not Allowed", [("Allow", "POST, DELETE")])

    def _resume(self, ex: Exchange, last_id: str) -> None:
        resume = str(self.opts["resume"])
        if resume == "405":
            ex.respond_text(405, "Method Not Allowed", [("Allow", "POST, DELETE")])
            return
        with self._lock:
            where = self._event_index.get(last_id)
            events = self._streams.get(where[0], []) if where else []
        if where is None:
            ex.respond_text(400, f"Unknown Last-Event-ID {last_id!r}")
            return
        if resume == "drop":
            retry = int(self.opts["retry_ms"])
            ex.start_stream(200)
            ex.write(sse_event("", event_id=last_id, retry=retry if retry > 0 else None))
            self.recorder.note(f"drop_mid_stream: dropped the resume GET after {last_id}")
            ex.drop(rst=self.opts["drop"] == "rst")
            return
        ex.start_stream(200)
        ex.write(b"".join(event for _, event in events[where[1] + 1 :]))
        ex.end()

    def _mcp_delete(self, ex: Exchange) -> None:
        session = self._session_ok(ex)
        if session is None:
            return
        with self._lock:
            self._sessions.pop(session.sid, None)
        ex.respond(200)

    # -- legacy HTTP+SSE
    def _legacy_stream(self, ex: Exchange) -> None:
        if self.silent.is_set():
            ex.respond_text(503, "Service Unavailable")
            return
        with self._lock:
            self._legacy_counter += 1
            sid = "abc" if self._legacy_counter == 1 else f"abc-{self._legacy_counter}"
            session = _LegacySession(sid)
            self._legacy[sid] = session
        self.recorder.add_session(sid)
        if self.mode == "cross_origin_endpoint":
            endpoint = self._cross_origin_endpoint(sid)
        else:
            endpoint = f"/messages?session={sid}"
        keepalive = float(self.opts["keepalive"])
        try:
            ex.start_stream(200)
            ex.write(sse_event(endpoint, event="endpoint"))
            next_ping = time.monotonic() + keepalive if keepalive > 0 else float("inf")
            while not self.stopping.is_set():
                with session.cond:
                    if not session.outbox:
                        session.cond.wait(TICK)
                    out, session.outbox = session.outbox, []
                if out:
                    ex.write(b"".join(out))
                if time.monotonic() >= next_ping and not self.silent.is_set():
                    ex.write(b": keep-alive\n\n")
                    next_ping = time.monotonic() + keepalive
                if self._client_gone(ex.conn):
                    self.recorder.note(f"legacy: client closed the stream of session {sid}")
                    break
        except _Gone:
            pass
        finally:
            with self._lock:
                self._legacy.pop(sid, None)
            ex.drop()

    @staticmethod
    def _client_gone(conn: _Connection) -> bool:
        try:
            ready, _, _ = select.select([conn.sock], [], [], 0)
            if not ready:
                return False
            return conn.sock.recv(65536, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def _cross_origin_endpoint(self, sid: str) -> str:
        other = self.other_port
        variant = self.opts["endpoint"]
        return {
            "port": f"http://127.0.0.1:{other}/messages?session={sid}",
            "host": f"http://127.0.0.2:{other}/messages?session={sid}",
            "evil": "http://evil.example/x",
            "scheme": f"https://127.0.0.1:{self.port}/messages?session={sid}",
            "userinfo": f"http://127.0.0.1:{self.port}@127.0.0.1:{other}/messages?session={sid}",
            "netpath": f"//127.0.0.1:{other}/messages?session={sid}",
        }[variant]

    def _legacy_post(self, ex: Exchange) -> None:
        sid = (ex.req.query.get("session") or [""])[0]
        with self._lock:
            session = self._legacy.get(sid)
        if session is None:
            ex.respond_text(404, "Could not find session")
            return
        msg = ex.req.json
        if not isinstance(msg, dict):
            ex.respond_text(400, "Could not parse message")
            return
        ex.respond_text(202, "Accepted")
        if isinstance(msg.get("method"), str) and "id" in msg and not self.silent.is_set():
            session.push(message_event(self._answer(msg)))


def start(
    mode: str, *, port: int = 0, log_path: str | None = None, **options: Any
) -> tuple[str, Callable[[], None], Recorder]:
    """Start the server in-process on 127.0.0.1. Returns (url_base, stop, recorder).

    The server object itself is ``stop.server`` (e.g. ``stop.server.other_port``).
    """
    server = HostileHTTPServer(mode, port=port, log_path=log_path, **options).start()

    def stop() -> None:
        server.stop()

    stop.server = server  # type: ignore[attr-defined]
    return server.url_base, stop, server.recorder


def _parse_opt(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"--opt wants KEY=VALUE, got {text!r}")
    parsed: Any = value
    for conv in (int, float):
        try:
            parsed = conv(value)
            break
        except ValueError:
            continue
    return key, parsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", help=f"one of {sorted(MODES)}, optionally with '+sse'")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--opt", type=_parse_opt, action="append", default=[], metavar="K=V")
    parser.add_argument("--log", default=None, help="append one JSON line per request here")
    args = parser.parse_args(argv)
    server = HostileHTTPServer(args.mode, port=args.port, log_path=args.log, **dict(args.opt))
    server.start()
    done = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        done.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    print(f"PORT {server.port}", flush=True)
    if server.other_port is not None:
        print(f"OTHER_PORT {server.other_port}", flush=True)
    while not done.wait(TICK):
        pass
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
