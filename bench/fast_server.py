#!/usr/bin/env python3
"""A minimal, fast stdio MCP server for benchmarks (stdlib only).

Hand-rolled newline-delimited JSON-RPC, so that the *client* is what a benchmark
measures, not the server:

* ``initialize``: answers with the requested ``protocolVersion`` when it is one of the
  handshake-era revisions below, else the newest of them; declares ``tools``.
* ``notifications/initialized`` and every other notification: ignored.
* ``ping``: ``{}``.
* ``tools/list``: one tool, ``echo`` (``{"text": string}``).
* ``tools/call`` ``echo``: returns ``text`` as one text content block.
* anything else with an id: JSON-RPC ``-32601`` (method not found).

stdin is read into one reused buffer, every reply is written with one ``writev``; an
echo reply of plain ASCII text is spliced as bytes instead of going through
``json.dumps`` (same JSON, less server time). Requests are answered strictly in order,
one at a time (a client's concurrency is measured against a serial server).

Run: ``python bench/fast_server.py`` (handshake era) or ``python bench/fast_server.py
--modern`` (the 2026-07-28 revision, for ``bench/run_modern.py``):

* ``server/discover``: a DiscoverResult (supportedVersions ["2026-07-28"], ``tools``,
  ttlMs 0, cacheScope "public");
* every other request must carry ``_meta["io.modelcontextprotocol/protocolVersion"]`` =
  "2026-07-28" (else -32022 with ``data.supported``), as a stateless server checks each
  request's own envelope; ``initialize`` is -32022 too (no handshake in the revision);
* results carry ``resultType: "complete"``; ``tools/list`` also ttlMs 0 (nothing cached:
  each call is measured, not a cache) and cacheScope "public".
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
MODERN = "2026-07-28"
MODERN_KEY = "io.modelcontextprotocol/protocolVersion"

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


# The characters a JSON string must escape (control characters, '"' and backslash).
_MUST_ESCAPE = (*(chr(c) for c in range(32)), '"', "\\")


def _json_string(text: str) -> list[bytes]:
    """``json.dumps(text)`` as a list of byte strings, with a fast path for plain ASCII.

    ``json.dumps`` of a 1 MiB string costs ~2 ms (its per-character escape loop, plus
    copies); when the text is ASCII with nothing to escape (``isascii`` is O(1), each
    ``in`` one memchr pass) the quoted text is the same JSON, written without a copy.
    """
    if text.isascii() and all(ch not in text for ch in _MUST_ESCAPE):
        return [b'"', text.encode("ascii"), b'"']
    return [json.dumps(text).encode()]


def _echo_result(rid: object, text: str) -> list[bytes]:
    head = json.dumps(rid).encode()
    return [
        b'{"jsonrpc":"2.0","id":' + head + b',"result":{"content":[{"type":"text","text":',
        *_json_string(text),
        b'}],"isError":false}}\n',
    ]


def _modern_echo_result(rid: object, text: str) -> list[bytes]:
    head = json.dumps(rid).encode()
    return [
        b'{"jsonrpc":"2.0","id":' + head + b',"result":{"resultType":"complete",'
        b'"content":[{"type":"text","text":',
        *_json_string(text),
        b'}],"isError":false}}\n',
    ]


MODERN_TOOLS = {"resultType": "complete", "ttlMs": 0, "cacheScope": "public", **TOOLS}
DISCOVER = {
    "resultType": "complete",
    "supportedVersions": [MODERN],
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "bench-fast-server", "version": "1.0"},
    "ttlMs": 0,
    "cacheScope": "public",
}


def handle_modern(msg: dict[str, Any]) -> list[bytes] | None:
    """The 2026-07-28 revision: no handshake, every request carries its own envelope."""
    if "id" not in msg or "method" not in msg:
        return None
    rid, method = msg["id"], msg["method"]
    params = msg.get("params") or {}
    meta = params.get("_meta") or {}
    if meta.get(MODERN_KEY) != MODERN:
        err = {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": [MODERN], "requested": str(meta.get(MODERN_KEY, ""))},
        }
        out = {"jsonrpc": "2.0", "id": rid, "error": err}
        return [json.dumps(out, separators=(",", ":")).encode() + b"\n"]
    if method == "tools/call":
        if params.get("name") != "echo":
            return _result(
                rid,
                {
                    "resultType": "complete",
                    "content": [{"type": "text", "text": "unknown tool"}],
                    "isError": True,
                },
            )
        text = (params.get("arguments") or {}).get("text", "")
        if not isinstance(text, str):
            text = json.dumps(text)
        return _modern_echo_result(rid, text)
    if method == "tools/list":
        return _result(rid, MODERN_TOOLS)
    if method == "server/discover":
        return _result(rid, DISCOVER)
    return _error(rid, -32601, f"Method not found: {method}")


def _result(rid: object, result: object) -> list[bytes]:
    msg = {"jsonrpc": "2.0", "id": rid, "result": result}
    return [json.dumps(msg, separators=(",", ":")).encode() + b"\n"]


def _error(rid: object, code: int, message: str) -> list[bytes]:
    msg = {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}
    return [json.dumps(msg, separators=(",", ":")).encode() + b"\n"]


def handle(msg: dict[str, Any]) -> list[bytes] | None:
    method = msg.get("method")
    if "id" not in msg:
        return None  # a notification (or a response to nothing we sent): ignore
    rid = msg["id"]
    if method == "tools/call":
        params = msg.get("params") or {}
        if params.get("name") != "echo":
            return _result(
                rid,
                {"content": [{"type": "text", "text": "unknown tool"}], "isError": True},
            )
        text = (params.get("arguments") or {}).get("text", "")
        if not isinstance(text, str):
            text = json.dumps(text)
        return _echo_result(rid, text)
    if method == "tools/list":
        return _result(rid, TOOLS)
    if method == "ping":
        return _result(rid, {})
    if method == "initialize":
        requested = (msg.get("params") or {}).get("protocolVersion")
        version = requested if requested in VERSIONS else VERSIONS[0]
        return _result(
            rid,
            {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "bench-fast-server", "version": "1.0"},
            },
        )
    if method is None:
        return None  # a response to a request we never sent
    return _error(rid, -32601, f"Method not found: {method}")


def main() -> None:
    serve(sys.stdin.fileno(), sys.stdout.fileno(), modern="--modern" in sys.argv[1:])


def _write_all(fd: int, pieces: list[bytes]) -> None:
    views: list[Any] = pieces
    while views:
        written = os.writev(fd, views)
        while views and written >= len(views[0]):
            written -= len(views.pop(0))
        if written:
            views[0] = memoryview(views[0])[written:]


def serve(fd_in: int, fd_out: int, modern: bool = False) -> None:
    """Read lines into one buffer that is reused (no allocation per read: for 1 MiB
    messages the page faults of fresh buffers cost as much as the copies), decode each
    line straight from it, and write each reply's pieces with one ``writev``."""
    buf = bytearray(1 << 16)
    start = end = scanned = 0
    loads = json.loads
    answer = handle_modern if modern else handle
    while True:
        idx = buf.find(b"\n", start + scanned, end)
        if idx < 0:
            scanned = end - start
            if start == end:
                start = end = scanned = 0
            elif len(buf) - end < 1 << 16 and start:
                buf[: end - start] = buf[start:end]
                start, end = 0, end - start
            if len(buf) - end < 1 << 16:
                buf += bytes(max(1 << 16, end - start))
            with memoryview(buf) as view:
                got = os.readv(fd_in, [view[end:]])
            if not got:
                return
            end += got
            continue
        with memoryview(buf) as view:
            line = view[start:idx]
            try:
                text = str(line, "utf-8")
            except UnicodeDecodeError:
                text = ""
            finally:
                line.release()
        start, scanned = idx + 1, 0
        if not text or text.isspace():
            continue
        try:
            msg = loads(text)
        except ValueError:
            _write_all(fd_out, _error(None, -32700, "Parse error"))
            continue
        if not isinstance(msg, dict):
            continue
        out = answer(msg)
        if out is not None:
            _write_all(fd_out, out)


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
