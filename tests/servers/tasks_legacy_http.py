"""A scripted 2025-11-25 task server over Streamable HTTP whose tasks outlive the
session that created them, for TASK-16 (a handle finished by another process).

    python tests/servers/tasks_legacy_http.py --port N   # 127.0.0.1:N/mcp

``@modelcontextprotocol/server-everything`` keeps its tasks per HTTP session, as
2025-11-25 basic/utilities/tasks.mdx § Task Isolation and Access Control allows; this
server is the other case the section describes: no authorization context, so tasks are
not bound to a requestor and their ids are cryptographically secure (``secrets``); it
does not declare ``tasks.list`` (the section says such a server SHOULD NOT).

Each POST gets one ``application/json`` answer (``initialize`` with an
``Mcp-Session-Id``), a notification 202; ``GET`` (the optional standalone stream) is
405. Tools (both ``taskSupport: "required"``):

    countdown   working ("n polls left"), completed on the third tasks/get; its result is
                the text "lift-off"
    forever     working, never completes (for tasks/cancel)

Every answer is checked against the 2025-11-25 schema (tests/proto/schema_2025_11_25.json)
before it is sent; a problem is written to stderr and answered with HTTP 500.
"""

from __future__ import annotations

import json
import secrets
import sys
import threading
from datetime import datetime, timezone
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final

import jsonschema_rs

VERSION: Final = "2025-11-25"
SCHEMA: Final = Path(__file__).resolve().parents[1] / "proto" / "schema_2025_11_25.json"
TOOLS: Final = [
    {
        "name": name,
        "description": text,
        "inputSchema": {"type": "object"},
        "execution": {"taskSupport": "required"},
    }
    for name, text in (("countdown", "completes on the third poll"), ("forever", "never ends"))
]
_RESULT_DEFS: Final = {
    "initialize": "InitializeResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CreateTaskResult",
    "tasks/get": "GetTaskResult",
    "tasks/result": "CallToolResult",
    "tasks/cancel": "CancelTaskResult",
}


@cache
def _validator(definition: str) -> Any:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    root = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
    return jsonschema_rs.Draft202012Validator(root)


def check_sent(method: str, message: dict[str, Any]) -> None:
    if "error" in message:
        problems = [str(e) for e in _validator("JSONRPCErrorResponse").iter_errors(message)]
    else:
        problems = [str(e) for e in _validator("JSONRPCResultResponse").iter_errors(message)]
        definition = _RESULT_DEFS.get(method, "Result")
        problems += [str(e) for e in _validator(definition).iter_errors(message["result"])]
    if problems:
        raise AssertionError(f"tasks_legacy_http sent an invalid answer to {method}: {problems}")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


class _Task:
    def __init__(self, tool: str) -> None:
        self.task_id = secrets.token_hex(16)
        self.tool = tool
        self.created = self.updated = _now()
        self.polls = 0
        self.status = "working"

    def advance(self) -> None:
        self.polls += 1
        if self.status == "working" and self.tool == "countdown" and self.polls >= 3:
            self.status, self.updated = "completed", _now()

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created,
            "lastUpdatedAt": self.updated,
            "ttl": 60_000,
            "pollInterval": 100,
        }
        if self.status == "working" and self.tool == "countdown":
            out["statusMessage"] = f"{3 - self.polls} polls left"
        return out


class LegacyTasksServer:
    def __init__(self) -> None:
        self.tasks: dict[str, _Task] = {}
        self.lock = threading.Lock()

    def handle(self, message: dict[str, Any]) -> dict[str, Any] | None:
        method, rid = message.get("method"), message.get("id")
        if rid is None or not isinstance(method, str):
            return None
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        with self.lock:
            reply = self._answer(method, rid, params)
        check_sent(method, reply)
        return reply

    def _answer(self, method: str, rid: Any, params: dict[str, Any]) -> dict[str, Any]:
        def ok(result: dict[str, Any]) -> dict[str, Any]:
            return {"jsonrpc": "2.0", "id": rid, "result": result}

        def error(code: int, text: str) -> dict[str, Any]:
            return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": text}}

        if method == "initialize":
            return ok({
                "protocolVersion": VERSION,
                "capabilities": {
                    "tools": {},
                    "tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}},
                },
                "serverInfo": {"name": "tasks-legacy-http", "version": "1.0.0"},
            })  # fmt: skip
        if method == "ping":
            return ok({})
        if method == "tools/list":
            return ok({"tools": TOOLS})
        if method == "tools/call":
            name = params.get("name")
            if not any(t["name"] == name for t in TOOLS):
                return error(-32602, f"Unknown tool: {name}")
            if not isinstance(params.get("task"), dict):
                return error(-32601, "this tool requires task augmentation")
            task = _Task(str(name))
            self.tasks[task.task_id] = task
            return ok({"task": task.wire()})
        if method in ("tasks/get", "tasks/result", "tasks/cancel"):
            task = self.tasks.get(params.get("taskId"))  # type: ignore[arg-type]
            if task is None:
                return error(-32602, "Failed to retrieve task: Task not found")
            if method == "tasks/get":
                task.advance()
                return ok(task.wire())
            if method == "tasks/cancel":
                if task.status != "working":
                    return error(-32602, f"Cannot cancel a task in status {task.status}")
                task.status, task.updated = "cancelled", _now()
                return ok(task.wire())
            if task.status != "completed":
                return error(-32602, "the task has not completed")  # (no blocking here)
            return ok({"content": [{"type": "text", "text": "lift-off"}], "isError": False})
        return error(-32601, "Method not found")


def serve(port: int) -> int:
    server = LegacyTasksServer()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                message = json.loads(body)
                reply = server.handle(message)
            except AssertionError as exc:
                sys.stderr.write(f"{exc}\n")
                self.send_error(500)
                return
            if reply is None:
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            data = json.dumps(reply, separators=(",", ":")).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if message.get("method") == "initialize":
                self.send_header("Mcp-Session-Id", secrets.token_hex(8))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self.send_error(405)  # no standalone stream

        def do_DELETE(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

    httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    httpd.daemon_threads = True
    try:
        httpd.serve_forever()
    finally:
        httpd.server_close()
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "--port":
        sys.exit("usage: tasks_legacy_http.py --port N")
    sys.exit(serve(int(sys.argv[2])))
