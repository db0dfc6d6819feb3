"""The scripted task and skill peers speak real bytes: each is started as a process and
fed newline-delimited JSON-RPC on stdin, as a stdio client would (their logic is
exercised in-process by tests/proto/test_tasks_server.py and test_skills.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

SERVERS = Path(__file__).resolve().parent / "servers"
CAPS = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    },
}


def exchange(argv: list[str], requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    lines = "".join(
        json.dumps({"jsonrpc": "2.0", "id": i, **r}) + "\n" for i, r in enumerate(requests, 1)
    )
    done = subprocess.run(
        [sys.executable, *argv], input=lines.encode(), capture_output=True, timeout=60, check=True
    )
    return [json.loads(line) for line in done.stdout.decode().splitlines()]


def test_tasks_modern_over_stdio() -> None:
    replies = exchange(
        [str(SERVERS / "tasks_modern.py")],
        [
            {"method": "server/discover", "params": {"_meta": CAPS}},
            {"method": "tools/call", "params": {"name": "fails", "arguments": {}, "_meta": CAPS}},
            {"method": "tasks/get", "params": {"taskId": "task-1", "_meta": CAPS}},
            {"method": "tasks/get", "params": {"taskId": "task-1", "_meta": CAPS}},
            {"method": "tasks/get", "params": {"taskId": "task-1"}},  # undeclared
        ],
    )
    assert "io.modelcontextprotocol/tasks" in replies[0]["result"]["capabilities"]["extensions"]
    assert replies[1]["result"]["resultType"] == "task"
    assert [r["result"]["status"] for r in replies[2:4]] == ["working", "failed"]
    assert replies[4]["error"]["code"] == -32021


def test_skills_server_over_stdio() -> None:
    replies = exchange(
        [str(SERVERS / "skills_server.py"), "size"],
        [
            {"method": "skills/list", "params": {}},
            {"method": "resources/read", "params": {"uri": "skill://pdf-processing/SKILL.md"}},
        ],
    )
    listed = replies[0]["result"]["skills"][0]["resources"][0]["size"]
    served = replies[1]["result"]["contents"][0]["text"]
    assert len(served.encode()) != listed  # the size mode serves more than it lists
