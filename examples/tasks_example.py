#!/usr/bin/env python3
"""Tasks and streaming with the blocking client: run it from the project root.

    python examples/tasks_example.py

1. ``call_tool_streaming``: the demo server's ``countdown`` reports progress; each
   progress notification is a chunk as it arrives, the result is the last chunk.
2. Tasks (2025-11-25) against ``@modelcontextprotocol/server-everything`` (installed
   under tests/peers by ``make peers``; or give another server command as arguments):
   ``simulate-research-query`` runs as a task; its handle is serialised and continued
   as another process would (``Task.from_dict``), the clarification the server asks
   for is answered by the elicitation handler, then the result is read.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mcp_io_sync import LogChunk, ProgressChunk, Task, ToolResult, connect

ROOT = Path(__file__).resolve().parent.parent
DEMO = [sys.executable, str(ROOT / "examples" / "demo_server.py")]
EVERYTHING = ["node", str(ROOT / "tests/peers/node_modules/.bin/mcp-server-everything"), "stdio"]


def clarify(message: str, schema: Any) -> dict[str, Any]:
    """The server asks which interpretation of the topic we meant: take the first."""
    choice = schema["properties"]["interpretation"]["oneOf"][0]["const"]
    print(f"  elicitation: {message[:60]!r} -> {choice!r}")
    return {"action": "accept", "content": {"interpretation": choice}}


def main(argv: list[str]) -> int:
    with connect(DEMO) as client:
        for chunk in client.call_tool_streaming("countdown", {"seconds": 1}, timeout=30):
            if isinstance(chunk, ProgressChunk):
                print(f"  chunk: progress {chunk.progress:g}/{chunk.total or 0:g}")
            elif isinstance(chunk, LogChunk):
                print(f"  chunk: log [{chunk.level}] {chunk.data}")
            elif isinstance(chunk, ToolResult):
                print("streamed countdown:", chunk.text)

    server = argv or EVERYTHING
    with connect(server, protocol="legacy", elicitation_handler=clarify) as client:
        args = {"topic": "MCP tasks", "ambiguous": True}
        task = client.call_tool_as_task("simulate-research-query", args, ttl=60_000)
        print(f"task {task.task_id}: {task.status.value}")
        saved = task.to_dict()  # e.g. written to disk and read by another process
        done = client.wait_for_task(Task.from_dict(saved), timeout=60)
        print(f"task {done.task_id}: {done.status.value}")
        result = client.get_task_result(done)
        first_line = result["content"][0]["text"].splitlines()[0]
        print("result:", first_line)
    print(f"✅ tasks: streamed, then {first_line!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
