"""examples/asyncio_client.py, the third driver of the connection machine (issue 9 item 8),
against the real SDK server (tests/servers/sdk_server.py, mcp==2.3.0): as a script, and
through its ``AsyncioClient`` class under ``asyncio.run`` (no pytest plugin)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from mcp_proto.config import stdio_config, streamable_http_config
from mcp_proto.errors import ConnectionError, RequestTimeoutError

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "examples" / "asyncio_client.py"
SERVERS = ROOT / "tests" / "servers"
SDK_SERVER = [sys.executable, str(SERVERS / "sdk_server.py")]
#: Tools the SDK server offers, with the start of their descriptions.
EXPECTED_LINES = ("echo — ", "progress — Report progress 1..steps", "slow — Sleep `seconds`")

if str(SERVERS) not in sys.path:
    sys.path.insert(0, str(SERVERS))

from http_peers import sdk_http_server  # noqa: E402

_spec = importlib.util.spec_from_file_location("asyncio_client", SCRIPT)
assert _spec is not None and _spec.loader is not None
example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(example)

pytestmark = pytest.mark.peer


def run_script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def check_tool_list(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    for expected in EXPECTED_LINES:
        assert any(line.startswith(expected) for line in lines), (expected, lines)
    assert all(" — " in line or line.strip() for line in lines)


@pytest.fixture(scope="module")
def http_peer() -> Iterator[Any]:
    with sdk_http_server("streamable-http") as peer:
        yield peer


# ------------------------------------------------------------------------ the script


@pytest.mark.parametrize(
    "args", [["--", *SDK_SERVER], [shlex.join(SDK_SERVER)]], ids=["words", "line"]
)
def test_script_lists_tools_over_stdio(args: list[str]) -> None:
    check_tool_list(run_script(*args))


def test_script_lists_tools_over_streamable_http(http_peer: Any) -> None:
    check_tool_list(run_script(http_peer.url))


def test_script_logs_the_machines_diagnostics() -> None:
    """The legacy HTTP+SSE transport makes the machine emit a ``Diagnostic`` (its
    deprecation notice, level "warning"): the driver logs it and goes on."""
    with sdk_http_server("sse") as peer:
        proc = run_script(peer.url)
    check_tool_list(proc)
    assert "deprecated" in proc.stderr.lower()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--", "/nonexistent/mcp-server"], "cannot start '/nonexistent/mcp-server'"),
        (["--", sys.executable, "-c", "pass"], "error: "),
        (["ftp://example.invalid/"], "non-HTTP URL"),
        ([], "usage:"),
    ],
)
def test_script_failure_is_one_line_and_exit_1(args: list[str], needle: str) -> None:
    proc = run_script(*args)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.startswith("error: ")
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr


def test_script_interrupted_stops_the_server_and_exits_130() -> None:
    """Ctrl-C while the handshake waits: the server (in its own process group, so the
    terminal's SIGINT does not reach it) is stopped by the driver's close()."""
    silent = [sys.executable, "-c", "import time; time.sleep(120)"]
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--", *silent],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        servers: list[psutil.Process] = []
        for _ in range(200):  # bounded: until the server process exists
            # The server, not any child: importing trio runs ``ldconfig -p`` (ctypes'
            # find_library), and a SIGINT sent then interrupts the script's imports.
            servers = [p for p in psutil.Process(proc.pid).children() if _is_silent(p)]
            if servers:
                break
            time.sleep(0.05)
        [server] = servers
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert (out, err) == ("", "")
    assert not server.is_running()


def _is_silent(proc: psutil.Process) -> bool:
    try:
        return "time.sleep(120)" in " ".join(proc.cmdline())
    except psutil.Error:  # gone meanwhile (ldconfig)
        return False


# ------------------------------------------------------------------------ the class


def run(scenario: Callable[[Any], Awaitable[Any]], config: Any = None) -> Any:
    """Run ``scenario(client)`` on a connected AsyncioClient under asyncio.run; close it."""

    async def main() -> Any:
        client = example.AsyncioClient(config or stdio_config(SDK_SERVER, read_timeout=20))
        try:
            await client.connect()
            return await asyncio.wait_for(scenario(client), 60)
        finally:
            await client.close()
            for proc in client._procs:  # the server and its group are gone
                assert proc.returncode is not None
                with pytest.raises(ProcessLookupError):
                    os.killpg(proc.pid, 0)

    return asyncio.run(main())


def texts(result: dict[str, Any]) -> list[str]:
    return [item["text"] for item in result["content"] if item.get("type") == "text"]


def test_tools_list() -> None:
    async def scenario(client: Any) -> None:
        result = await client.call("tools/list")
        names = {tool["name"] for tool in result["tools"]}
        assert {"echo", "progress", "slow", "add"} <= names

    run(scenario)


def test_call_with_progress_runs_every_callback_before_returning() -> None:
    async def scenario(client: Any) -> None:
        seen: list[tuple[float, float | None, str | None]] = []
        result = await client.call(
            "tools/call",
            {"name": "progress", "arguments": {"steps": 5, "delay": 0}},
            progress=lambda p, t, m: seen.append((p, t, m)),
        )
        # Taken as the call returns: all five callbacks have run (issue 9 item 6).
        assert seen == [(i, 5.0, f"step {i}/5") for i in range(1, 6)]
        assert texts(result) == ["done"]

    run(scenario)


def test_a_failing_progress_callback_does_not_stall_the_call() -> None:
    async def scenario(client: Any) -> None:
        def boom(progress: float, total: float | None, message: str | None) -> None:
            raise RuntimeError("callback bug")

        params = {"name": "progress", "arguments": {"steps": 2, "delay": 0}}
        result = await client.call("tools/call", params, progress=boom)
        assert texts(result) == ["done"]

    run(scenario)


def test_resources_read() -> None:
    async def scenario(client: Any) -> None:
        result = await client.call("resources/read", {"uri": "demo://text"})
        [content] = result["contents"]
        assert content["uri"] == "demo://text"
        assert content["mimeType"] == "text/plain"
        assert isinstance(content["text"], str) and content["text"]

    run(scenario)


def test_timeout_raises_and_the_connection_stays_usable() -> None:
    async def scenario(client: Any) -> None:
        slow = {"name": "slow", "arguments": {"seconds": 30}}
        with pytest.raises(RequestTimeoutError):
            await client.call("tools/call", slow, timeout=0.3)
        # Still the same process, still answering.
        echoed = await client.call("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
        assert texts(echoed) == ["hi"]
        assert len(client._procs) == 1
        # The machine told the server: its slow tool was cancelled (bounded polling).
        for _ in range(100):
            events = await client.call("tools/call", {"name": "events", "arguments": {}})
            if "slow:cancelled" in json.loads(texts(events)[0]):
                break
            await asyncio.sleep(0.05)
        else:
            pytest.fail("the server never saw notifications/cancelled")

    run(scenario)


def test_caller_cancellation_ends_the_call() -> None:
    async def scenario(client: Any) -> None:
        slow = {"name": "slow", "arguments": {"seconds": 30}}
        task = asyncio.ensure_future(client.call("tools/call", slow))
        await asyncio.sleep(0)  # the request is on its way
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert client.conn.pending_count == 0
        echoed = await client.call("tools/call", {"name": "echo", "arguments": {"text": "ok"}})
        assert texts(echoed) == ["ok"]

    run(scenario)


def test_connect_failure_is_a_typed_error() -> None:
    async def main() -> None:
        client = example.AsyncioClient(stdio_config(["/nonexistent/mcp-server"]))
        try:
            with pytest.raises(ConnectionError, match="cannot start"):
                await client.connect()
        finally:
            await client.close()

    asyncio.run(main())


def test_streamable_http_progress_and_resource(http_peer: Any) -> None:
    async def scenario(client: Any) -> None:
        seen: list[float] = []
        result = await client.call(
            "tools/call",
            {"name": "progress", "arguments": {"steps": 3, "delay": 0}},
            progress=lambda p, t, m: seen.append(p),
        )
        assert seen == [1, 2, 3]
        assert texts(result) == ["done"]
        read = await client.call("resources/read", {"uri": "demo://text"})
        assert read["contents"][0]["uri"] == "demo://text"

    run(scenario, streamable_http_config(http_peer.url, read_timeout=20))
