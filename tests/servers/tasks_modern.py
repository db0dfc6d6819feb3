"""A scripted 2026-07-28 server of the ``io.modelcontextprotocol/tasks`` extension
(SEP-2663), for behaviours no published server produces yet.

    python tests/servers/tasks_modern.py          # stdio, newline-delimited JSON-RPC
    python tests/servers/tasks_modern.py --port N # Streamable HTTP on 127.0.0.1:N/mcp

Over HTTP (for clients in several processes sharing its tasks: TASK-16) each POST is
answered with one ``application/json`` response (2026-07-28
basic/transports/streamable-http.mdx allows JSON or SSE), a notification with 202;
there is no session and no GET stream.

:class:`TasksServer` is the logic, pure (``handle(message, now)``), so the tests in
``tests/proto`` can drive it in-process; ``main`` runs it over stdio with the
monotonic clock. It answers ``server/discover`` (tools, the extension declared),
``tools/list``, ``tools/call``, ``tasks/get``, ``tasks/update`` and ``tasks/cancel``.
A tool call of a client that declared the extension in its request's
``clientCapabilities`` gets a task; one that did not gets -32021 naming the extension
(SEP-2663 § Capability Negotiation), as do its ``tasks/*`` requests.

The tools (each a task):

    two_inputs       working, then input_required ("first"), then input_required
                     ("second"), then completed with both answers
    fails            working, then failed with the JSON-RPC error -32603
    outlives_ttl     ttlMs 2000, stays working; past its TTL tasks/get answers -32602
                     "Task has expired"
    reused_id        every call creates the task "reused" anew (a new createdAt),
                     completed at once: an old handle names a replaced task
    poll_zero        pollIntervalMs 0, completed on the third poll
    poll_hour        pollIntervalMs 3600000, never completes
    bad_output       declares an outputSchema; completed with structuredContent
                     that does not match it

Every message it sends is validated against the 2026-07-28 schema and, for the
extension's results, the extension's schema (``tests/proto/modern/``): a server
message that breaks them raises ``AssertionError`` in-process; over stdio the process
writes the problem to stderr and exits with status 70.
"""

from __future__ import annotations

import json
import sys
import time
from functools import cache
from pathlib import Path
from typing import Any, Final

import jsonschema_rs

EXTENSION: Final = "io.modelcontextprotocol/tasks"
VERSION: Final = "2026-07-28"
SCHEMAS: Final = Path(__file__).resolve().parents[1] / "proto" / "modern"
CAPS_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}
ELICIT = "elicitation/create"

TOOLS: Final = [
    {"name": name, "description": text, "inputSchema": {"type": "object"}}
    for name, text in (
        ("two_inputs", "asks for input twice"),
        ("fails", "fails with a JSON-RPC error"),
        ("outlives_ttl", "never ends within its TTL"),
        ("reused_id", "reuses one task id"),
        ("poll_zero", "pollIntervalMs 0"),
        ("poll_hour", "pollIntervalMs one hour"),
    )
] + [
    {
        "name": "bad_output",
        "inputSchema": {"type": "object"},
        "outputSchema": {
            "type": "object",
            "properties": {"answer": {"type": "string"}},
            "required": ["answer"],
        },
    }
]


@cache
def _validator(path: str, definition: str) -> Any:
    schema = json.loads((SCHEMAS / path).read_text(encoding="utf-8"))
    root = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
    return jsonschema_rs.Draft202012Validator(root)


#: method -> (schema file, definition of its result)
_RESULT_DEFS: Final = {
    "server/discover": ("schema_2026_07_28.json", "DiscoverResult"),
    "tools/list": ("schema_2026_07_28.json", "ListToolsResult"),
    "tasks/get": ("schema_tasks_extension.json", "GetTaskResult"),
    "tasks/update": ("schema_tasks_extension.json", "UpdateTaskResult"),
    "tasks/cancel": ("schema_tasks_extension.json", "CancelTaskResult"),
}


def check_sent(method: str, message: dict[str, Any]) -> None:
    """The message this server sends in answer to ``method`` is schema-valid."""
    problems: list[str] = []
    if "error" in message:
        problems += [
            str(e)
            for e in _validator("schema_2026_07_28.json", "JSONRPCErrorResponse").iter_errors(
                message
            )
        ]
    else:
        problems += [
            str(e)
            for e in _validator("schema_2026_07_28.json", "JSONRPCResultResponse").iter_errors(
                message
            )
        ]
        result = message["result"]
        if method == "tools/call":
            definition = (
                ("schema_tasks_extension.json", "CreateTaskResult")
                if result.get("resultType") == "task"
                else ("schema_2026_07_28.json", "CallToolResult")
            )
        else:
            definition = _RESULT_DEFS[method]
        problems += [str(e) for e in _validator(*definition).iter_errors(result)]
    if problems:
        raise AssertionError(f"tasks_modern sent an invalid answer to {method}: {problems}")


def _error(rid: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": err}


def _result(rid: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


class _Task:
    def __init__(self, task_id: str, tool: str, now: float, created_at: str) -> None:
        self.task_id = task_id
        self.tool = tool
        self.started = now
        self.created_at = created_at
        self.polls = 0
        self.status = "working"
        self.answers: dict[str, Any] = {}
        self.ttl_ms: int | None = 60_000
        self.poll_ms = 200
        self.result: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        if tool == "outlives_ttl":
            self.ttl_ms = 2000
        elif tool == "poll_zero":
            self.poll_ms = 0
        elif tool == "poll_hour":
            self.poll_ms = 3_600_000
        elif tool == "reused_id":
            self.status = "completed"
            self.result = {"resultType": "complete", "content": [_text(f"created {created_at}")]}

    def advance(self) -> None:
        """A poll moves the task on (deterministic: polls, not wall time)."""
        self.polls += 1
        if self.status in ("completed", "failed", "cancelled"):
            return
        tool, n = self.tool, self.polls
        if tool == "two_inputs":
            if "first" not in self.answers:
                self.status = "input_required" if n >= 2 else "working"
            elif "second" not in self.answers:
                self.status = "input_required"
            else:
                self.status = "completed"
                first, second = (self.answers[k]["content"]["name"] for k in ("first", "second"))
                text = f"{first} and {second}"
                self.result = {"resultType": "complete", "content": [_text(text)], "isError": False}
        elif tool == "fails" and n >= 2:
            self.status = "failed"
            self.error = {"code": -32603, "message": "rate limited"}
        elif (tool == "poll_zero" and n >= 3) or tool == "bad_output":
            self.status = "completed"
            if tool == "bad_output":
                self.result = {
                    "resultType": "complete",
                    "content": [],
                    "structuredContent": {"answer": 42},
                }
            else:
                self.result = {"resultType": "complete", "content": [_text("done")]}

    def wire(self, result_type: str) -> dict[str, Any]:
        out: dict[str, Any] = {
            "resultType": result_type,
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.created_at,
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": self.poll_ms,
        }
        if self.status == "input_required":
            key = "first" if "first" not in self.answers else "second"
            out["inputRequests"] = {
                key: {
                    "method": ELICIT,
                    "params": {
                        "mode": "form",
                        "message": f"{key} name?",
                        "requestedSchema": NAME_SCHEMA,
                    },
                }
            }
        elif self.status == "completed":
            out["result"] = self.result
        elif self.status == "failed":
            out["error"] = self.error
        return out


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


class TasksServer:
    """The scripted server's logic: ``handle`` one request (a dict) at ``now``."""

    def __init__(self) -> None:
        self.tasks: dict[str, _Task] = {}
        self.received: list[dict[str, Any]] = []
        self.created = 0

    def handle(self, message: dict[str, Any], now: float) -> dict[str, Any] | None:
        self.received.append(message)
        method, rid = message.get("method"), message.get("id")
        if rid is None or not isinstance(method, str):
            return None  # notifications: only recorded
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        reply = self._answer(method, rid, params, now)
        check_sent(method, reply)
        return reply

    def _declared(self, params: dict[str, Any]) -> bool:
        caps = params.get("_meta", {}).get(CAPS_KEY, {})
        return isinstance(caps, dict) and EXTENSION in (caps.get("extensions") or {})

    def _answer(self, method: str, rid: Any, params: dict[str, Any], now: float) -> dict[str, Any]:
        cached = {"ttlMs": 0, "cacheScope": "private"}
        if method == "server/discover":
            return _result(rid, {
                "resultType": "complete",
                "supportedVersions": [VERSION],
                "capabilities": {"tools": {}, "extensions": {EXTENSION: {}}},
                "serverInfo": {"name": "tasks-modern", "version": "1.0.0"},
                **cached,
            })  # fmt: skip
        if method == "tools/list":
            return _result(rid, {"resultType": "complete", "tools": TOOLS, **cached})
        missing = _error(
            rid,
            -32021,
            "Missing required client capability",
            {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
        )
        if method == "tools/call":
            name = params.get("name")
            if not any(t["name"] == name for t in TOOLS):
                return _error(rid, -32602, f"Unknown tool: {name}")
            if not self._declared(params):
                return missing
            self.created += 1
            stamp = f"2026-07-28T10:{self.created // 60:02d}:{self.created % 60:02d}Z"
            task_id = "reused" if name == "reused_id" else f"task-{self.created}"
            task = self.tasks[task_id] = _Task(task_id, str(name), now, stamp)
            return _result(rid, task.wire("task"))
        if method in ("tasks/get", "tasks/update", "tasks/cancel"):
            if not self._declared(params):
                return missing
            task = self.tasks.get(params.get("taskId"))  # type: ignore[arg-type]
            if task is None:
                return _error(rid, -32602, "Failed to retrieve task: Task not found")
            if task.ttl_ms is not None and now >= task.started + task.ttl_ms / 1000:
                del self.tasks[task.task_id]
                return _error(rid, -32602, "Failed to retrieve task: Task has expired")
            if method == "tasks/get":
                task.advance()
                return _result(rid, task.wire("complete"))
            if method == "tasks/update":
                responses = params.get("inputResponses")
                if isinstance(responses, dict):
                    for key, value in responses.items():
                        # SEP-2663: answers for keys not outstanding are ignored.
                        if key in ("first", "second") and key not in task.answers:
                            task.answers[key] = value
                    if task.status == "input_required":
                        task.status = "working"
                return _result(rid, {"resultType": "complete"})
            if task.status not in ("completed", "failed", "cancelled"):
                task.status = "cancelled"
            return _result(rid, {"resultType": "complete"})
        return _error(rid, -32601, "Method not found")


def serve_http(port: int) -> int:
    """The same server over Streamable HTTP on 127.0.0.1:``port`` (path ``/mcp``)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    server, lock = TasksServer(), threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: the tests read messages, not access logs

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                with lock:
                    reply = server.handle(json.loads(body), time.monotonic())
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
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self.send_error(405)  # no standalone stream in 2026-07-28

        do_DELETE = do_GET

    httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    httpd.daemon_threads = True
    try:
        httpd.serve_forever()
    finally:
        httpd.server_close()
    return 0


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--port":
        return serve_http(int(sys.argv[2]))
    server = TasksServer()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            reply = server.handle(json.loads(line), time.monotonic())
        except AssertionError as exc:
            sys.stderr.write(f"{exc}\n")
            return 70
        if reply is not None:
            sys.stdout.write(json.dumps(reply, separators=(",", ":")) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
