#!/usr/bin/env python3
"""A tiny stdio MCP server (stdlib only) that tells the test what the client sent.

``initialize`` is answered normally (2025-11-25, capabilities ``{"tools": {}}``).

tools
    init            -> JSON of the ``initialize`` params the client sent
    notifications   -> JSON list of the notifications received so far ({method, params})
    ask             arguments ``{"requests": [{"method", "params"}, ...], "linger": 0.3,
                    "timeout": 10}``: sends each request to the client (ids ``"ask-1"``,
                    ``"ask-2"``, ...), waits until every one is answered (at most
                    ``timeout`` s), keeps listening ``linger`` s more, and answers with the
                    JSON list of *every* response received for those ids, in arrival
                    order (so duplicate answers show up).

Everything else: ``ping`` -> ``{}``, other requests -> -32601.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time
from typing import Any

TOOLS = [
    {"name": name, "inputSchema": {"type": "object"}} for name in ("init", "notifications", "ask")
]


class Server:
    def __init__(self) -> None:
        self.buf = b""
        self.eof = False
        self.init_params: Any = None
        self.notifications: list[dict[str, Any]] = []
        self.responses: list[dict[str, Any]] = []
        self.next_id = 0

    def send(self, obj: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    def readline(self, timeout: float | None) -> bytes | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self.buf:
            if self.eof:
                return None
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return None
            ready, _, _ = select.select([0], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(0, 65536)
            if not chunk:
                self.eof = True
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line

    def run(self) -> None:
        while True:
            line = self.readline(None)
            if line is None:
                return
            self.handle(line)

    def handle(self, line: bytes) -> None:
        try:
            msg = json.loads(line)
        except ValueError:
            return
        if not isinstance(msg, dict):
            return
        method = msg.get("method")
        if not isinstance(method, str):
            if "id" in msg:
                self.responses.append(msg)
            return
        if "id" not in msg:
            self.notifications.append({"method": method, "params": msg.get("params")})
            return
        self.request(msg["id"], method, msg.get("params"))

    def text(self, req_id: Any, value: Any) -> None:
        result = {"content": [{"type": "text", "text": json.dumps(value)}]}
        self.send({"jsonrpc": "2.0", "id": req_id, "result": result})

    def request(self, req_id: Any, method: str, params: Any) -> None:
        if method == "initialize":
            self.init_params = params
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "recording", "version": "0.0.0"},
            }
            self.send({"jsonrpc": "2.0", "id": req_id, "result": result})
        elif method == "ping":
            self.send({"jsonrpc": "2.0", "id": req_id, "result": {}})
        elif method == "tools/list":
            self.send({"jsonrpc": "2.0", "id": req_id, "result": {"tools": TOOLS}})
        elif method == "tools/call" and isinstance(params, dict):
            name = params.get("name")
            args = params.get("arguments") or {}
            if name == "init":
                self.text(req_id, self.init_params)
            elif name == "notifications":
                self.text(req_id, self.notifications)
            else:
                self.text(req_id, self.ask(args))
        else:
            error = {"code": -32601, "message": "Method not found"}
            self.send({"jsonrpc": "2.0", "id": req_id, "error": error})

    def ask(self, args: dict[str, Any]) -> list[dict[str, Any]]:
        ids = []
        for req in args.get("requests") or []:
            self.next_id += 1
            rid = f"ask-{self.next_id}"
            ids.append(rid)
            msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": req["method"]}
            if req.get("params") is not None:
                msg["params"] = req["params"]
            self.send(msg)
        mine = set(ids)
        start = len(self.responses)
        deadline = time.monotonic() + float(args.get("timeout", 10))
        linger_until = None
        while True:
            now = time.monotonic()
            got = {r.get("id") for r in self.responses[start:]}
            if linger_until is None and mine <= got:
                linger_until = now + float(args.get("linger", 0.3))
            end = min(deadline, linger_until) if linger_until is not None else deadline
            if now >= end:
                break
            line = self.readline(end - now)
            if line is None:
                if self.eof:
                    break
                continue
            self.handle(line)
        return [r for r in self.responses[start:] if r.get("id") in mine]


if __name__ == "__main__":
    Server().run()
