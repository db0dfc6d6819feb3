#!/usr/bin/env python3
"""A scripted, misbehaving 2026-07-28 (stateless revision) MCP server for tests (stdlib only).

Two transports, the same script::

    python tests/servers/hostile_modern.py MODE[,MODE...] [--opt KEY=VALUE]...
        # stdio: newline-delimited JSON-RPC on stdin/stdout; stdin EOF -> exit 0
    python tests/servers/hostile_modern.py MODE --http [--port 0] [--opt KEY=VALUE]...
        # Streamable HTTP at http://127.0.0.1:<port>/mcp; prints "PORT <n>" first on stdout,
        # runs until SIGTERM/SIGINT

    from hostile_modern import Peer, start_http
    url, stop, peer = start_http("break_before")     # in-process, on threads
    peer.received                                     # every request received, in order

It is a modern-only peer: no ``initialize`` (answered -32022 with ``supported``
["2026-07-28"]), no session, no GET stream (405), no server-to-client requests.

Baseline (every mode unless it says otherwise)
    ``server/discover``  -> a DiscoverResult: supportedVersions ["2026-07-28"], capabilities
                            ``{"tools": {}, "resources": {"subscribe": true}}``, serverInfo
                            ``{"name": "hostile-modern", "version": "0.0.0"}``, ttlMs 60000,
                            cacheScope "public" (the cache fields as for every cacheable
                            result; the ttl_* / private_scope modes change them).
    ``tools/list``       -> tools ``t`` (no arguments) and ``h`` (``region`` string annotated
                            ``x-mcp-header: Region``; after a -32020 the annotation becomes
                            ``Zone``, so a refreshed definition differs), ttlMs 60000,
                            cacheScope "public".
    ``tools/call``       -> ``{"resultType": "complete", "content": [{"type": "text",
                            "text": "ok <name> <n>"}]}`` (n counts tools/call requests).
    ``resources/list``   -> one resource ``demo://r``; ``resources/read`` -> its text
                            ``"read <n>"`` (n counts reads), ttlMs 60000, cacheScope "public".
    ``subscriptions/listen`` -> ``notifications/subscriptions/acknowledged`` echoing the
                            filter (carrying the listen id as subscriptionId), then the
                            stream stays open (HTTP: the SSE response is held open).
    ``received``         (tool) -> JSON of every request received: ``[{"method", "id",
                            "params", "headers"}]`` (headers lower-cased; HTTP only).
    anything else        -> -32601. Notifications are ignored.
    Each request whose ``_meta`` lacks ``io.modelcontextprotocol/protocolVersion`` is still
    answered (the peer checks nothing) but recorded as received, so tests assert on it.

Modes (combine with commas)
    mismatch_once       the first tools/call -> -32020 HeaderMismatchError (HTTP 400).
    mismatch_twice      the first two tools/call -> -32020.
    unsupported_discover  the first server/discover -> -32022 with data
                        ``{"supported": <opt supported, default ["2026-07-28"]>, "requested":
                        <the version sent>}`` (HTTP 400); later ones are answered normally.
    unsupported_request   the first request that is not server/discover -> -32022 (as above).
    input_required      tools/call answers ``input_required`` with one elicitation
                        (``inputRequests: {"ask-<k>": elicitation/create form {"ok": boolean}}``)
                        and ``requestState`` ``"round-<k>"`` for rounds k = 1..<opt rounds,
                        default 11>; the retry after the last round is complete, with text
                        ``"done after <rounds> rounds"``. With more than 10 rounds a
                        conforming client gives up first (MRTR: at most 10).
    state_only          tools/call answers ``input_required`` with only ``requestState``
                        ``"wait-1"`` (an out-of-band wait: nothing to answer); the retry that
                        echoes it is complete (``"waited"``).
    bad_input_requests  tools/call answers ``input_required`` whose ``inputRequests`` is
                        malformed: opt ``shape`` = ``list`` (a JSON array, the default),
                        ``nomethod`` (an entry without ``method``) or ``unknown`` (an entry
                        with method ``bogus/method``). Deliberately INVALID on the wire.
    listen_flood        after the acknowledgement of subscriptions/listen, sends <opt count,
                        default 20000> ``notifications/resources/updated`` for URIs
                        ``demo://r/<i % distinct>`` (opt distinct, default 50), each with a
                        ``_meta`` padding of <opt pad, default 0> bytes, as fast as it can.
    ttl_negative        cacheable results (discover, tools/list, resources/*) carry ttlMs -5
                        (deliberately INVALID: the schema wants a non-negative integer).
    ttl_missing         cacheable results carry no ttlMs (deliberately INVALID).
    ttl_string          cacheable results carry ttlMs "60000" (deliberately INVALID).
    private_scope       cacheable results are cacheScope "private", ttlMs 60000, and
                        tools/list's ``t`` description is ``"for <auth>"`` where <auth> is
                        the first 12 hex digits of the SHA-256 of the Authorization header
                        received (HTTP; "none" without one), so a test can tell whose list it
                        got and count tools/list requests with ``received``.
    refetch_503         tools/list results carry ttlMs 0 (stale at once); every tools/list
                        after the first fails transiently: HTTP 503 (no body), on stdio a
                        -32603 JSON-RPC error (a server answer, never a transient failure).
    break_before        (HTTP) the first tools/call's SSE response is cut before the result
                        (headers and a comment sent, then the connection closes mid-body);
                        later ones are answered. ``break_before_twice``: the first two.
                        (Calls answered -32020 by a mismatch mode are not counted.)
    break_after         (HTTP) the first tools/call's SSE response carries the result, then
                        the connection closes mid-body (no final chunk). Later ones answered.
    reack_without       every subscriptions/listen after the first is acknowledged with
                        ``resourceSubscriptions: []`` (a re-opened listen granted more narrowly:
                        the URI withdrawn).
    reject_relisten     the second subscriptions/listen is refused: HTTP 403 (no body), on
                        stdio a -32600 JSON-RPC error; later ones are answered normally.

``Peer.drop_listens()`` (HTTP) cuts every listen stream held open, as a server restart
would; ``Peer.closed_by_client`` counts the held listen streams the client closed itself
(its cancellation, SUB-16).

Every message this peer sends validates against the 2026-07-28 schema, except in the modes
marked deliberately INVALID above (``tests/proto/modern/test_hostile_modern.py`` checks both).
"""

from __future__ import annotations

import argparse
import hashlib
import http.server
import json
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

VERSION = "2026-07-28"
SERVER_INFO = {"name": "hostile-modern", "version": "0.0.0"}
MODES = {
    "baseline",
    "mismatch_once",
    "mismatch_twice",
    "unsupported_discover",
    "unsupported_request",
    "input_required",
    "state_only",
    "bad_input_requests",
    "listen_flood",
    "ttl_negative",
    "ttl_missing",
    "ttl_string",
    "private_scope",
    "refetch_503",
    "break_before",
    "break_before_twice",
    "break_after",
    "reack_without",
    "reject_relisten",
}
#: Modes whose replies break the schema on purpose (a client must refuse them cleanly).
INVALID_MODES = {"bad_input_requests", "ttl_negative", "ttl_missing", "ttl_string"}
CACHEABLE = {"server/discover", "tools/list", "resources/list", "resources/read"}

# One reply of the script: ("message", obj) sends a JSON-RPC message; ("break", None) cuts
# the HTTP response there (stdio ignores it); ("hold", None) keeps the response open;
# ("status", code) first: HTTP answers that status without a body (stdio sends the
# messages that follow instead).
Action = tuple[str, Any]


def _error(req_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": req_id, "error": error}


def _result(req_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": req_id, "result": result}


class Peer:
    """The script, transport-free: ``handle(message, headers)`` -> actions. Thread-safe."""

    def __init__(self, modes: str = "baseline", **options: Any) -> None:
        self.modes = {m for m in modes.split(",") if m}
        unknown = self.modes - MODES
        if unknown:
            raise ValueError(f"unknown mode(s): {', '.join(sorted(unknown))}")
        self.options = options
        self.received: list[dict[str, Any]] = []
        self.counts: dict[str, int] = {}
        self.mismatches = 0
        self.plain_calls = 0  # tools/call requests that reached the normal answer
        self.lock = threading.Lock()
        self.held: list[socket.socket] = []  # HTTP: listen streams held open
        self.dropped: set[int] = set()  # ids of the held sockets drop_listens cut
        self.closed_by_client = 0

    def drop_listens(self) -> int:
        """Cut every held listen stream (HTTP); how many were cut."""
        with self.lock:
            held, self.held = self.held, []
            for sock in held:
                self.dropped.add(id(sock))
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        return len(held)

    def opt(self, key: str, default: Any) -> Any:
        value = self.options.get(key, default)
        if isinstance(default, int) and not isinstance(value, int):
            return int(value)
        if isinstance(default, list) and isinstance(value, str):
            return [v for v in value.split("+") if v]
        return value

    # -- the wire shapes

    def cache_fields(self, result: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        scope = "private" if "private_scope" in self.modes else "public"
        result["cacheScope"] = scope
        if "ttl_negative" in self.modes:
            result["ttlMs"] = -5
        elif "ttl_string" in self.modes:
            result["ttlMs"] = "60000"
        elif "ttl_missing" not in self.modes:
            result["ttlMs"] = 60000
        return result

    def tools(self, headers: dict[str, str]) -> list[dict[str, Any]]:
        header = "Zone" if self.mismatches else "Region"
        t_desc = "a tool without arguments"
        if "private_scope" in self.modes:
            auth = headers.get("authorization")
            t_desc = "for " + (hashlib.sha256(auth.encode()).hexdigest()[:12] if auth else "none")
        return [
            {"name": "t", "description": t_desc, "inputSchema": {"type": "object"}},
            {
                "name": "h",
                "description": "a tool with an x-mcp-header parameter",
                "inputSchema": {
                    "type": "object",
                    "properties": {"region": {"type": "string", "x-mcp-header": header}},
                    "required": ["region"],
                },
            },
            {
                "name": "received",
                "description": "the requests received, as JSON",
                "inputSchema": {"type": "object"},
            },
        ]

    def version_error(self, req_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        requested = str(meta.get("io.modelcontextprotocol/protocolVersion", ""))
        supported = self.opt("supported", [VERSION])
        return _error(
            req_id,
            -32022,
            "Unsupported protocol version",
            {"supported": supported, "requested": requested},
        )

    # -- the script

    def handle(self, message: Any, headers: dict[str, str] | None = None) -> list[Action]:
        headers = headers or {}
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            return []  # notifications and responses: nothing to answer
        method, req_id = message["method"], message["id"]
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        with self.lock:
            self.received.append(
                {"method": method, "id": req_id, "params": params, "headers": dict(headers)}
            )
            n = self.counts[method] = self.counts.get(method, 0) + 1
            return self._answer(method, req_id, params, headers, n)

    def _answer(
        self, method: str, req_id: Any, params: dict[str, Any], headers: dict[str, str], n: int
    ) -> list[Action]:
        if method == "initialize":
            return [("message", self.version_error(req_id, params))]
        if method == "server/discover":
            if "unsupported_discover" in self.modes and n == 1:
                return [("message", self.version_error(req_id, params))]
            result = {
                "resultType": "complete",
                "supportedVersions": [VERSION],
                "capabilities": {"tools": {}, "resources": {"subscribe": True}},
                "serverInfo": SERVER_INFO,
            }
            return [("message", _result(req_id, self.cache_fields(result, headers)))]
        others = sum(c for m, c in self.counts.items() if m != "server/discover")
        if "unsupported_request" in self.modes and others == 1:
            return [("message", self.version_error(req_id, params))]
        if method == "tools/list":
            if "refetch_503" in self.modes and n > 1:
                return [
                    ("status", 503),
                    ("message", _error(req_id, -32603, "Service Unavailable")),
                ]
            result = {"resultType": "complete", "tools": self.tools(headers)}
            result = self.cache_fields(result, headers)
            if "refetch_503" in self.modes:
                result["ttlMs"] = 0
            return [("message", _result(req_id, result))]
        if method == "resources/list":
            result = {
                "resultType": "complete",
                "resources": [{"uri": "demo://r", "name": "r", "mimeType": "text/plain"}],
            }
            return [("message", _result(req_id, self.cache_fields(result, headers)))]
        if method == "resources/read":
            contents = [
                {
                    "uri": str(params.get("uri", "demo://r")),
                    "mimeType": "text/plain",
                    "text": f"read {n}",
                }
            ]
            result = {"resultType": "complete", "contents": contents}
            return [("message", _result(req_id, self.cache_fields(result, headers)))]
        if method == "subscriptions/listen":
            if "reject_relisten" in self.modes and n == 2:
                return [("status", 403), ("message", _error(req_id, -32600, "Refused"))]
            return self._listen(req_id, params, n)
        if method == "tools/call":
            return self._call(req_id, params, n)
        return [("message", _error(req_id, -32601, f"Method not found: {method}"))]

    def _call(self, req_id: Any, params: dict[str, Any], n: int) -> list[Action]:
        name = str(params.get("name", ""))
        if name == "received":
            text = json.dumps(self.received[:-1])
            return [
                (
                    "message",
                    _result(
                        req_id,
                        {"resultType": "complete", "content": [{"type": "text", "text": text}]},
                    ),
                )
            ]
        limit = 2 if "mismatch_twice" in self.modes else 1 if "mismatch_once" in self.modes else 0
        if self.mismatches < limit:
            self.mismatches += 1
            return [("message", _error(req_id, -32020, "Mcp-Param-Region does not match the body"))]
        state = params.get("requestState")
        if "input_required" in self.modes:
            rounds = self.opt("rounds", 11)
            k = (
                int(state.split("-")[1])
                if isinstance(state, str) and state.startswith("round-")
                else 0
            )
            if k < rounds:
                ask = {
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": f"round {k + 1}",
                        "requestedSchema": {
                            "type": "object",
                            "properties": {"ok": {"type": "boolean"}},
                        },
                    },
                }
                result = {
                    "resultType": "input_required",
                    "inputRequests": {f"ask-{k + 1}": ask},
                    "requestState": f"round-{k + 1}",
                }
                return [("message", _result(req_id, result))]
            return [("message", _result(req_id, _text(f"done after {rounds} rounds")))]
        if "state_only" in self.modes:
            if state != "wait-1":
                return [
                    (
                        "message",
                        _result(req_id, {"resultType": "input_required", "requestState": "wait-1"}),
                    )
                ]
            return [("message", _result(req_id, _text("waited")))]
        if "bad_input_requests" in self.modes:
            shape = self.opt("shape", "list")
            bad: Any = {
                "list": [{"method": "elicitation/create", "params": {}}],
                "nomethod": {"ask": {"params": {"message": "no method"}}},
                "unknown": {"ask": {"method": "bogus/method", "params": {}}},
            }[shape]
            return [
                (
                    "message",
                    _result(
                        req_id,
                        {"resultType": "input_required", "inputRequests": bad, "requestState": "s"},
                    ),
                )
            ]
        answer: list[Action] = [("message", _result(req_id, _text(f"ok {name} {n}")))]
        breaks = (
            2 if "break_before_twice" in self.modes else 1 if "break_before" in self.modes else 0
        )
        self.plain_calls += 1
        if self.plain_calls <= breaks:
            return [("break", None)]
        if "break_after" in self.modes and self.plain_calls == 1:
            return [*answer, ("break", None)]
        return answer

    def _listen(self, req_id: Any, params: dict[str, Any], n: int) -> list[Action]:
        wanted = (
            params.get("notifications") if isinstance(params.get("notifications"), dict) else {}
        )
        if "reack_without" in self.modes and n > 1:
            wanted = {**wanted, "resourceSubscriptions": []}
        ack = {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {
                "notifications": wanted,
                "_meta": {"io.modelcontextprotocol/subscriptionId": req_id},
            },
        }
        actions: list[Action] = [("message", ack)]
        if "listen_flood" in self.modes:
            count, distinct, pad = (
                self.opt("count", 20000),
                self.opt("distinct", 50),
                self.opt("pad", 0),
            )
            for i in range(count):
                meta: dict[str, Any] = {"io.modelcontextprotocol/subscriptionId": req_id}
                if pad:
                    meta["padding"] = "x" * pad
                actions.append(
                    (
                        "message",
                        {
                            "jsonrpc": "2.0",
                            "method": "notifications/resources/updated",
                            "params": {"uri": f"demo://r/{i % distinct}", "_meta": meta},
                        },
                    )
                )
        actions.append(("hold", None))
        return actions


def _text(text: str) -> dict[str, Any]:
    return {"resultType": "complete", "content": [{"type": "text", "text": text}]}


def status_of(actions: list[Action]) -> int:
    """HTTP status for a reply: 400 for the modern errors that demand it (-32020, -32022)."""
    for kind, msg in actions:
        if kind == "message" and isinstance(msg, dict) and "error" in msg:
            return 400 if msg["error"]["code"] in (-32020, -32022) else 200
    return 200


# ---------------------------------------------------------------- stdio


def serve_stdio(peer: Peer) -> int:
    out = sys.stdout
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        for kind, msg in peer.handle(message):
            if kind == "message":
                out.write(json.dumps(msg, separators=(",", ":")) + "\n")
        out.flush()
    return 0


# ---------------------------------------------------------------- Streamable HTTP


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    peer: Peer  # set on the subclass made by start_http

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:  # no GET stream in the revision
        self._plain(405, "Method Not Allowed")

    def do_DELETE(self) -> None:  # no session to end
        self._plain(405, "Method Not Allowed")

    def _plain(self, status: int, text: str) -> None:
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            message = json.loads(self.rfile.read(length))
        except ValueError:
            self._json(400, _error(None, -32700, "Parse error"))
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        actions = self.peer.handle(message, headers)
        if actions and actions[0][0] == "status":
            self._plain(actions[0][1], "Service Unavailable")
            return
        if not actions:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if len(actions) == 1 and actions[0][0] == "message":
            self._json(status_of(actions), actions[0][1])
            return
        self._sse(actions)

    def _json(self, status: int, msg: Any) -> None:
        body = json.dumps(msg).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _sse(self, actions: list[Action]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self._chunk(b": hostile-modern\n\n")
        self.wfile.flush()
        try:
            for kind, msg in actions:
                if kind == "message":
                    self._chunk(b"event: message\ndata: " + json.dumps(msg).encode() + b"\n\n")
                elif kind == "break":
                    # Cut mid-body: no terminating chunk, the socket just goes away.
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                elif kind == "hold":
                    self.wfile.flush()
                    sock = self.connection
                    with self.peer.lock:
                        self.peer.held.append(sock)
                    self.rfile.read(1)  # until the client closes the stream (its cancellation)
                    with self.peer.lock:
                        if id(sock) in self.peer.dropped:
                            self.peer.dropped.discard(id(sock))
                        else:
                            self.peer.closed_by_client += 1
                            if sock in self.peer.held:
                                self.peer.held.remove(sock)
                    self.close_connection = True
                    return
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True


def start_http(
    modes: str = "baseline", *, port: int = 0, **options: Any
) -> tuple[str, Callable[[], None], Peer]:
    """Serve ``modes`` on 127.0.0.1 in threads: (url of /mcp, stop(), the Peer)."""
    peer = Peer(modes, **options)
    handler = type("Handler", (_Handler,), {"peer": peer})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    stopped = threading.Event()

    def stop() -> None:
        if not stopped.is_set():
            stopped.set()
            server.shutdown()
            server.server_close()

    return f"http://127.0.0.1:{server.server_address[1]}/mcp", stop, peer


def sent_messages(actions: list[Action]) -> Iterator[Any]:
    return (msg for kind, msg in actions if kind == "message")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode")
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--opt", action="append", default=[], type=lambda s: s.split("=", 1))
    args = parser.parse_args(argv)
    options = dict(args.opt)
    if not args.http:
        return serve_stdio(Peer(args.mode, **options))
    url, stop, _peer = start_http(args.mode, port=args.port, **options)
    print(f"PORT {url.split(':')[2].split('/')[0]}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
