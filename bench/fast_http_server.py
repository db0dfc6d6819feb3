#!/usr/bin/env python3
"""A minimal, fast Streamable HTTP MCP server for benchmarks (stdlib only).

    python bench/fast_http_server.py [json|sse] [--port N] [--modern]

Listens on 127.0.0.1 (port 0 = any free port, the default), prints ``PORT n`` on stdout
once listening, and serves ``/mcp`` until killed. A thread per connection, keep-alive
connections, a hand-written HTTP/1.1 parser (request line, headers, ``Content-Length``
or chunked bodies): the *client* is what a benchmark measures, not the server.

* ``POST /mcp`` with one JSON-RPC message:

  * ``initialize``: answers with the requested ``protocolVersion`` when it is one of the
    handshake-era revisions (2025-11-25 / 2025-06-18 / 2025-03-26 / 2024-11-05), else
    the newest; declares ``tools``; sets a fresh ``Mcp-Session-Id``.
  * every later request must carry a known ``Mcp-Session-Id`` (missing: 400, unknown:
    404, as the 2025-11-25 transport says).
  * a notification (``notifications/initialized``, ...) or a response: ``202``, no body.
  * ``ping``: ``{}``; ``tools/list``: one tool ``echo``; ``tools/call echo``: the text as
    one text content block; anything else: JSON-RPC ``-32601``.

* Reply mode (argv): ``json`` answers ``application/json`` with ``Content-Length``;
  ``sse`` answers ``text/event-stream`` with one ``event: message`` carrying the
  response, then ends the stream (chunked encoding, as a streaming server sends it;
  the connection stays open for the next request).
* ``GET /mcp``: ``405`` (no server-initiated stream). ``DELETE /mcp``: ends the session,
  ``200``. Any other path: ``404``.

``--modern`` serves the 2026-07-28 revision instead (for ``bench/run_modern.py``): no
session, no ``initialize`` (-32022); every POST must carry ``MCP-Protocol-Version:
2026-07-28`` and the same version in ``_meta["io.modelcontextprotocol/protocolVersion"]``
(else 400 with -32022 and ``data.supported``); ``server/discover`` answers a
DiscoverResult; results carry ``resultType: "complete"`` (``tools/list`` also ttlMs 0,
cacheScope "public").

Echo replies of plain ASCII text are spliced as bytes instead of going through
``json.dumps`` (same JSON, less server time).
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
import uuid
from typing import Any

VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")

TOOLS = {
    "tools": [
        {
            "name": "echo",
            "description": "Echo the text back.",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
            },
        }
    ]
}

_MUST_ESCAPE = bytes(range(32)) + b'"\\'
MAX_HEAD = 64 * 1024
MAX_BODY = 64 * 1024 * 1024

MODERN = "2026-07-28"
MODERN_KEY = "io.modelcontextprotocol/protocolVersion"
MODERN_TOOLS = {"resultType": "complete", "ttlMs": 0, "cacheScope": "public", **TOOLS}
DISCOVER = {
    "resultType": "complete",
    "supportedVersions": [MODERN],
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "fast-http-bench-server", "version": "1.0"},
    "ttlMs": 0,
    "cacheScope": "public",
}

SESSIONS: set[str] = set()
SESSIONS_LOCK = threading.Lock()


class BadRequest(Exception):
    pass


def _json_string(text: str) -> bytes:
    if text.isascii():
        raw = text.encode("ascii")
        if len(raw.translate(None, _MUST_ESCAPE)) == len(raw):
            return b'"' + raw + b'"'
    return json.dumps(text).encode()


def _echo_result(rid: object, text: str) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":'
        + json.dumps(rid).encode()
        + b',"result":{"content":[{"type":"text","text":'
        + _json_string(text)
        + b'}],"isError":false}}'
    )


def _result(rid: object, result: object) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": rid, "result": result}, separators=(",", ":")
    ).encode()


def _error(rid: object, code: int, message: str) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}},
        separators=(",", ":"),
    ).encode()


def _modern_echo_result(rid: object, text: str) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":'
        + json.dumps(rid).encode()
        + b',"result":{"resultType":"complete","content":[{"type":"text","text":'
        + _json_string(text)
        + b'}],"isError":false}}'
    )


def _version_error(rid: object, requested: str) -> bytes:
    error = {
        "code": -32022,
        "message": "Unsupported protocol version",
        "data": {"supported": [MODERN], "requested": requested},
    }
    return json.dumps({"jsonrpc": "2.0", "id": rid, "error": error}, separators=(",", ":")).encode()


def _answer_modern(msg: dict[str, Any], header_version: str) -> tuple[bytes, bool]:
    """(JSON-RPC response, ok) for one 2026-07-28 request; not ok means HTTP 400."""
    rid = msg.get("id")
    params = msg.get("params") or {}
    meta = params.get("_meta") or {}
    if header_version != MODERN or meta.get(MODERN_KEY) != MODERN:
        return _version_error(rid, header_version or str(meta.get(MODERN_KEY, ""))), False
    method = msg.get("method")
    if method == "tools/call":
        args = params.get("arguments") or {}
        if params.get("name") == "echo" and isinstance(args.get("text"), str):
            return _modern_echo_result(rid, args["text"]), True
        return _error(rid, -32602, f"unknown tool {params.get('name')!r}"), True
    if method == "tools/list":
        return _result(rid, MODERN_TOOLS), True
    if method == "server/discover":
        return _result(rid, DISCOVER), True
    return _error(rid, -32601, f"method not found: {method}"), True


def _answer(msg: dict[str, Any]) -> tuple[bytes, str | None]:
    """(JSON-RPC response, new session id or None) for one request."""
    rid = msg.get("id")
    method = msg.get("method")
    params = msg.get("params") or {}
    if method == "tools/call":
        args = params.get("arguments") or {}
        if params.get("name") == "echo" and isinstance(args.get("text"), str):
            return _echo_result(rid, args["text"]), None
        return _error(rid, -32602, f"unknown tool {params.get('name')!r}"), None
    if method == "ping":
        return _result(rid, {}), None
    if method == "tools/list":
        return _result(rid, TOOLS), None
    if method == "initialize":
        asked = params.get("protocolVersion")
        version = asked if asked in VERSIONS else VERSIONS[0]
        sid = uuid.uuid4().hex
        with SESSIONS_LOCK:
            SESSIONS.add(sid)
        return _result(
            rid,
            {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "fast-http-bench-server", "version": "1.0"},
            },
        ), sid
    return _error(rid, -32601, f"method not found: {method}"), None


def _plain(status: bytes, extra: bytes = b"", body: bytes = b"") -> bytes:
    return (
        b"HTTP/1.1 "
        + status
        + b"\r\ncontent-length: "
        + str(len(body)).encode()
        + b"\r\n"
        + extra
        + b"\r\n"
        + body
    )


class Conn:
    def __init__(self, sock: socket.socket, sse: bool, modern: bool = False) -> None:
        self.sock = sock
        self.sse = sse
        self.modern = modern
        self.buf = b""

    def _fill(self) -> bool:
        data = self.sock.recv(262144)
        if not data:
            return False
        self.buf += data
        return True

    def _read_exact(self, n: int) -> bytes:
        while len(self.buf) < n:
            if not self._fill():
                raise BadRequest("connection closed mid-body")
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _read_line(self) -> bytes:
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line, self.buf = self.buf[:i], self.buf[i + 2 :]
                return line
            if len(self.buf) > MAX_HEAD or not self._fill():
                raise BadRequest("bad chunked body")

    def _read_chunked(self) -> bytes:
        parts = []
        total = 0
        while True:
            size = int(self._read_line().split(b";", 1)[0], 16)
            if size == 0:
                while self._read_line():  # trailers, then the empty line
                    pass
                return b"".join(parts)
            total += size
            if total > MAX_BODY:
                raise BadRequest("body too large")
            parts.append(self._read_exact(size))
            self._read_line()

    def serve(self) -> None:
        sock = self.sock
        while True:
            while True:
                end = self.buf.find(b"\r\n\r\n")
                if end >= 0:
                    break
                if len(self.buf) > MAX_HEAD or not self._fill():
                    return
            head, self.buf = self.buf[:end], self.buf[end + 4 :]
            lines = head.split(b"\r\n")
            try:
                method, target, _version = lines[0].split(b" ", 2)
            except ValueError:
                sock.sendall(_plain(b"400 Bad Request", b"connection: close\r\n"))
                return
            headers: dict[bytes, bytes] = {}
            for line in lines[1:]:
                name, _, value = line.partition(b":")
                headers[name.strip().lower()] = value.strip()
            try:
                if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
                    body = self._read_chunked()
                else:
                    n = int(headers.get(b"content-length", b"0"))
                    if n > MAX_BODY:
                        raise BadRequest("body too large")
                    body = self._read_exact(n) if n else b""
            except (BadRequest, ValueError):
                sock.sendall(_plain(b"400 Bad Request", b"connection: close\r\n"))
                return
            close = headers.get(b"connection", b"").lower() == b"close"
            sock.sendall(self._respond(method, target, headers, body))
            if close:
                return

    def _respond(
        self, method: bytes, target: bytes, headers: dict[bytes, bytes], body: bytes
    ) -> bytes:
        if target.split(b"?", 1)[0] != b"/mcp":
            return _plain(b"404 Not Found")
        if method == b"GET":
            return _plain(b"405 Method Not Allowed", b"allow: POST, DELETE\r\n")
        sid = headers.get(b"mcp-session-id", b"").decode("latin-1")
        if method == b"DELETE":
            with SESSIONS_LOCK:
                known = sid in SESSIONS
                SESSIONS.discard(sid)
            return _plain(b"200 OK" if known else b"404 Not Found")
        if method != b"POST":
            return _plain(b"405 Method Not Allowed", b"allow: POST, DELETE\r\n")
        try:
            msg = json.loads(body)
        except ValueError:
            return _plain(
                b"400 Bad Request",
                b"content-type: application/json\r\n",
                _error(None, -32700, "parse error"),
            )
        if not isinstance(msg, dict):
            return _plain(
                b"400 Bad Request",
                b"content-type: application/json\r\n",
                _error(None, -32600, "one JSON-RPC message per POST"),
            )
        if self.modern:
            if "id" not in msg or "method" not in msg:
                return _plain(b"202 Accepted")
            version = headers.get(b"mcp-protocol-version", b"").decode("latin-1")
            reply, ok = _answer_modern(msg, version)
            if not ok:
                return _plain(b"400 Bad Request", b"content-type: application/json\r\n", reply)
            return self._reply(reply, b"")
        if msg.get("method") != "initialize":
            if not sid:
                return _plain(
                    b"400 Bad Request",
                    b"content-type: application/json\r\n",
                    _error(msg.get("id"), -32600, "missing Mcp-Session-Id"),
                )
            with SESSIONS_LOCK:
                known = sid in SESSIONS
            if not known:
                return _plain(
                    b"404 Not Found",
                    b"content-type: application/json\r\n",
                    _error(msg.get("id"), -32001, "session not found"),
                )
        if "id" not in msg or "method" not in msg:
            return _plain(b"202 Accepted")  # a notification or a response
        reply, new_sid = _answer(msg)
        extra = b"mcp-session-id: " + new_sid.encode() + b"\r\n" if new_sid else b""
        return self._reply(reply, extra)

    def _reply(self, reply: bytes, extra: bytes) -> bytes:
        if not self.sse:
            return _plain(b"200 OK", b"content-type: application/json\r\n" + extra, reply)
        event = b"event: message\r\ndata: " + reply + b"\r\n\r\n"
        return (
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n"
            + extra
            + b"\r\n"
            + f"{len(event):x}\r\n".encode()
            + event
            + b"\r\n0\r\n\r\n"
        )


def _serve_conn(sock: socket.socket, sse: bool, modern: bool = False) -> None:
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        Conn(sock, sse, modern).serve()
    except OSError:
        pass
    finally:
        sock.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("mode", nargs="?", default="json", choices=["json", "sse"])
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--modern", action="store_true", help="serve the 2026-07-28 revision")
    args = p.parse_args()
    sse = args.mode == "sse"
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("127.0.0.1", args.port))
    lsock.listen(512)
    sys.stdout.write(f"PORT {lsock.getsockname()[1]}\n")
    sys.stdout.flush()
    try:
        while True:
            conn, _ = lsock.accept()
            threading.Thread(target=_serve_conn, args=(conn, sse, args.modern), daemon=True).start()
    except KeyboardInterrupt:
        pass
    finally:
        lsock.close()


if __name__ == "__main__":
    main()
