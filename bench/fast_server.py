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

stdin is read with a buffered binary reader (``readline`` on a 256 KiB buffer), every
reply is written with one ``write`` + ``flush``; an echo reply of plain ASCII text is
spliced as bytes instead of going through ``json.dumps`` (same JSON, less server
time). Requests are answered strictly in order, one at a time (a client's concurrency
is measured against a serial server).

Run: ``python bench/fast_server.py``.
"""

from __future__ import annotations

import json
import sys
from typing import Any, BinaryIO

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


# Bytes that a JSON string must escape (control characters, '"' and backslash).
_MUST_ESCAPE = bytes(range(32)) + b'"\\'


def _json_string(text: str) -> bytes:
    """``json.dumps(text)`` as bytes, with a fast path for plain ASCII text.

    ``json.dumps`` of a 1 MiB string costs ~2 ms on the bench machine; when the text is
    ASCII with nothing to escape, quoting it as is gives the same JSON in ~0.6 ms, so
    the server's share of a large-payload round trip stays small.
    """
    if text.isascii():
        raw = text.encode("ascii")
        if len(raw.translate(None, _MUST_ESCAPE)) == len(raw):
            return b'"' + raw + b'"'
    return json.dumps(text).encode()


def _echo_result(rid: object, text: str) -> bytes:
    head = json.dumps(rid).encode()
    return (
        b'{"jsonrpc":"2.0","id":'
        + head
        + b',"result":{"content":[{"type":"text","text":'
        + _json_string(text)
        + b'}],"isError":false}}\n'
    )


def _result(rid: object, result: object) -> bytes:
    return (
        json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}, separators=(",", ":")).encode()
        + b"\n"
    )


def _error(rid: object, code: int, message: str) -> bytes:
    msg = {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}
    return json.dumps(msg, separators=(",", ":")).encode() + b"\n"


def handle(msg: dict[str, Any]) -> bytes | None:
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
    # Buffered binary pipes; a large read buffer means fewer read() calls per 1 MiB line.
    with (
        open(sys.stdin.fileno(), "rb", buffering=1 << 18, closefd=False) as stdin,
        open(sys.stdout.fileno(), "wb", buffering=1 << 16, closefd=False) as stdout,
    ):
        serve(stdin, stdout)


def serve(stdin: BinaryIO, stdout: BinaryIO) -> None:
    readline = stdin.readline
    write = stdout.write
    flush = stdout.flush
    loads = json.loads
    while True:
        line = readline()
        if not line:
            return
        if line.isspace():
            continue
        try:
            msg = loads(line)
        except ValueError:
            write(_error(None, -32700, "Parse error"))
            flush()
            continue
        if not isinstance(msg, dict):
            continue
        out = handle(msg)
        if out is not None:
            write(out)
            flush()


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
