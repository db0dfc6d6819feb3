"""TASK-16: a task started in one client process is finished in another, through the
serialised handle (``Task.to_dict`` / ``Task.from_dict``), over Streamable HTTP where
both processes reach the one server.

Each step is a real OS process (``python -c`` with :data:`STEP`) of one shell: the
first starts the task and prints its handle as JSON; the second reads it on stdin and
waits for, answers, reads or cancels the task. The two processes use different shells
(the blocking one, then Trio, or the reverse), so the handle is shown to need nothing of
the process or the shell that made it.

- 2025-11-25: the scripted ``tests/servers/tasks_legacy_http.py --port N`` (tasks not
  bound to a session, as § Task Isolation allows without an authorization context):
  ``countdown`` finished, ``forever`` cancelled by the second process. And
  ``@modelcontextprotocol/server-everything`` over Streamable HTTP (npm, in
  tests/peers), whose tasks are bound to the HTTP session that made them: the second
  process gets ``TaskNotFound``, at once.
- 2026-07-28 (``io.modelcontextprotocol/tasks``, SEP-2663): the scripted
  ``tests/servers/tasks_modern.py --port N``; ``two_inputs`` asks for input twice, which
  the second process answers with its own elicitation handler; ``poll_hour`` is
  cancelled by the second process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SERVERS = ROOT / "tests" / "servers"
if str(SERVERS) not in sys.path:
    sys.path.insert(0, str(SERVERS))

from http_peers import Peer, _process_peer, everything_http_server  # noqa: E402

pytestmark = pytest.mark.peer

EVERYTHING_INSTALLED = (ROOT / "tests" / "peers" / "node_modules" / ".bin").is_dir()

#: One step of the hand-over, in a process of its own: argv is shell, url, era, step,
#: then (for "start") the tool and its JSON arguments; "finish" / "cancel" read the
#: handle on stdin. It prints one JSON line.
STEP = r"""
import json, sys
shell, url, era, step = sys.argv[1:5]
options = {"protocol": era, "read_timeout": 30}
if era == "modern":
    options["extensions"] = ["io.modelcontextprotocol/tasks"]
names = iter(["Ada", "Lovelace"])

def elicit(message, schema):
    return {"action": "accept", "content": {"name": next(names)}}

options["elicitation_handler"] = elicit

def run_sync():
    from mcp_io_sync import Task, connect
    with connect(url, **options) as c:
        if step == "start":
            task = c.call_tool_as_task(sys.argv[5], json.loads(sys.argv[6]))
            return {"handle": json.loads(task.to_json()), "server": c.servers[0].name}
        handle = Task.from_json(sys.stdin.read())
        if step == "cancel":
            return {"status": c.cancel_task(handle).status.value}
        done = c.wait_for_task(handle, timeout=60)
        result = c.get_task_result(done)
        return {"status": done.status.value, "text": result["content"][0]["text"]}

async def run_trio():
    from mcp_io_trio import Task, connect
    async with connect(url, **options) as c:
        if step == "start":
            task = await c.call_tool_as_task(sys.argv[5], json.loads(sys.argv[6]))
            return {"handle": json.loads(task.to_json()), "server": c.servers[0].name}
        handle = Task.from_json(sys.stdin.read())
        if step == "cancel":
            return {"status": (await c.cancel_task(handle)).status.value}
        done = await c.wait_for_task(handle, timeout=60)
        result = await c.get_task_result(done)
        return {"status": done.status.value, "text": result["content"][0]["text"]}

from mcp_proto.errors import MCPError
try:
    if shell == "sync":
        out = run_sync()
    else:
        import trio
        out = trio.run(run_trio)
except MCPError as exc:  # the typed error, for the test to see
    out = {"error": type(exc).__name__}
print(json.dumps(out))
"""


def step(shell: str, url: str, era: str, name: str, *extra: str, stdin: str = "") -> Any:
    proc = subprocess.run(
        [sys.executable, "-c", STEP, shell, url, era, name, *extra],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(ROOT),
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def hand_over(
    url: str, era: str, tool: str, args: dict[str, Any], first: str, second: str, last: str
) -> tuple[dict[str, Any], Any]:
    started = step(first, url, era, "start", tool, json.dumps(args))
    handle = started["handle"]
    assert handle["era"] == era and handle["server"] == started["server"]
    return handle, step(second, url, era, last, stdin=json.dumps(handle))


@pytest.fixture(scope="module")
def modern_server() -> Iterator[Peer]:
    with _process_peer(
        lambda port: [sys.executable, str(SERVERS / "tasks_modern.py"), "--port", str(port)],
        path="/mcp",
        kind="tasks-modern",
        mode="http",
        timeout=30,
    ) as peer:
        yield peer


@pytest.fixture(scope="module")
def legacy_server() -> Iterator[Peer]:
    with _process_peer(
        lambda port: [sys.executable, str(SERVERS / "tasks_legacy_http.py"), "--port", str(port)],
        path="/mcp",
        kind="tasks-legacy",
        mode="http",
        timeout=30,
    ) as peer:
        yield peer


@pytest.mark.parametrize(("first", "second"), [("sync", "trio"), ("trio", "sync")])
def test_a_2025_task_started_in_one_process_is_finished_in_another(
    legacy_server: Peer, first: str, second: str
) -> None:
    handle, out = hand_over(legacy_server.url, "legacy", "countdown", {}, first, second, "finish")
    assert handle["status"] == "working" and handle["tool"]["name"] == "countdown"
    assert out == {"status": "completed", "text": "lift-off"}


def test_a_2025_task_started_in_one_process_is_cancelled_from_another(
    legacy_server: Peer,
) -> None:
    _, out = hand_over(legacy_server.url, "legacy", "forever", {}, "sync", "trio", "cancel")
    assert out == {"status": "cancelled"}


@pytest.mark.parametrize(("first", "second"), [("sync", "trio"), ("trio", "sync")])
def test_a_2026_task_started_in_one_process_is_finished_in_another(
    modern_server: Peer, first: str, second: str
) -> None:
    # The second process answers both input requests with its own handler: nothing of
    # the first is needed but the handle.
    handle, out = hand_over(modern_server.url, "modern", "two_inputs", {}, first, second, "finish")
    assert handle["status"] == "working" and handle["tool"]["name"] == "two_inputs"
    assert out == {"status": "completed", "text": "Ada and Lovelace"}


def test_a_2026_task_started_in_one_process_is_cancelled_from_another(
    modern_server: Peer,
) -> None:
    _, out = hand_over(modern_server.url, "modern", "poll_hour", {}, "trio", "sync", "cancel")
    assert out == {"status": "cancelled"}


@pytest.mark.skipif(not EVERYTHING_INSTALLED, reason="make peers not run")
def test_a_session_bound_2025_task_is_not_found_from_another_process() -> None:
    # server-everything keeps a task store per HTTP session (one McpServer per session,
    # dist/transports/streamableHttp.js), as 2025-11-25 § Task Isolation allows: a
    # handle taken to another process (another session) is TaskNotFound, a typed error
    # at once, never a wait.
    with everything_http_server("streamableHttp") as peer:
        args = {"topic": "portable handles"}
        handle, out = hand_over(
            peer.url, "legacy", "simulate-research-query", args, "sync", "trio", "finish"
        )
    assert handle["era"] == "legacy" and "ttl" in handle
    assert out == {"error": "TaskNotFound"}
