"""examples/asyncio_client.py, a whole client on ``BaseClient`` under asyncio (issue 22),
against real peers, the SDK server (tests/servers/sdk_server.py, mcp==2.3.0, dual-era)
and the npm server-everything (handshake era): as a script (list the tools, or call one
through ``call_tool``), and through its ``AsyncioClient`` under ``asyncio.run`` (no
pytest plugin): progress, timeouts, cancellation, handlers, notifications, close."""

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
EVERYTHING = [
    "node",
    str(ROOT / "tests" / "peers" / "node_modules" / ".bin" / "mcp-server-everything"),
]
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


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_script_calls_a_tool_on_the_sdk_server(protocol: str) -> None:
    proc = run_script("--protocol", protocol, shlex.join(SDK_SERVER), "echo", '{"text": "hi"}')
    assert (proc.returncode, proc.stdout) == (0, "hi\n"), proc.stderr
    # A tool with an outputSchema: the result is checked against it (SCH-1) and printed.
    proc = run_script("--protocol", protocol, shlex.join(SDK_SERVER), "add", '{"a": 1, "b": 2}')
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"sum": 3}


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_script_calls_a_tool_on_server_everything(protocol: str) -> None:
    target = shlex.join([*EVERYTHING, "stdio"])
    proc = run_script("--protocol", protocol, target, "echo", '{"message": "hi"}')
    assert (proc.returncode, proc.stdout) == (0, "Echo: hi\n"), proc.stderr


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_script_calls_a_tool_over_streamable_http(http_peer: Any, protocol: str) -> None:
    proc = run_script("--protocol", protocol, http_peer.url, "echo", '{"text": "over http"}')
    assert (proc.returncode, proc.stdout) == (0, "over http\n"), proc.stderr


def test_script_refuses_bad_json_args() -> None:
    proc = run_script(shlex.join(SDK_SERVER), "echo", "[1]")
    assert proc.returncode == 1
    assert "JSON_ARGS must be a JSON object" in proc.stderr


# ------------------------------------------------------------------------ the class


def run(scenario: Callable[[Any], Awaitable[Any]], config: Any = None, **options: Any) -> Any:
    """Run ``scenario(client)`` on a connected AsyncioClient under asyncio.run; close it."""

    async def main() -> Any:
        client = example.AsyncioClient(
            [config or stdio_config(SDK_SERVER, read_timeout=20, protocol="legacy")], **options
        )
        try:
            await client.connect_all()
            return await asyncio.wait_for(scenario(client), 60)
        finally:
            await client.close()
            for proc in client.servers[0]._procs:  # the server and its group are gone
                assert proc.returncode is not None
                with pytest.raises(ProcessLookupError):
                    os.killpg(proc.pid, 0)

    return asyncio.run(main())


def texts(result: dict[str, Any]) -> list[str]:
    return [item["text"] for item in result["content"] if item.get("type") == "text"]


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_both_eras_list_and_call(protocol: str) -> None:
    async def scenario(client: Any) -> tuple[str | None, list[str]]:
        names = {tool.name for tool in await client.list_tools()}
        assert {"echo", "progress", "slow", "add"} <= names
        result = await client.call_tool("echo", {"text": protocol})
        return client.servers[0].protocol_era, texts(result)

    era, echoed = run(scenario, stdio_config(SDK_SERVER, read_timeout=20, protocol=protocol))
    assert era == ("modern" if protocol == "auto" else "legacy")
    assert echoed == [protocol]


def test_call_with_progress_runs_every_callback_before_returning() -> None:
    async def scenario(client: Any) -> None:
        seen: list[tuple[float, float | None, str | None]] = []
        result = await client.call_tool(
            "progress", {"steps": 5, "delay": 0}, progress=lambda p, t, m: seen.append((p, t, m))
        )
        # Taken as the call returns: all five callbacks have run (issue 9 item 6).
        assert seen == [(i, 5.0, f"step {i}/5") for i in range(1, 6)]
        assert texts(result) == ["done"]

    run(scenario)


def test_a_failing_progress_callback_does_not_stall_the_call() -> None:
    async def scenario(client: Any) -> None:
        def boom(progress: float, total: float | None, message: str | None) -> None:
            raise RuntimeError("callback bug")

        result = await client.call_tool("progress", {"steps": 2, "delay": 0}, progress=boom)
        assert texts(result) == ["done"]

    run(scenario)


def test_resources_read() -> None:
    async def scenario(client: Any) -> None:
        [content] = await client.read_resource("demo://text")
        assert content.uri == "demo://text"
        assert content.mime_type == "text/plain"
        assert isinstance(content.text, str) and content.text

    run(scenario)


def test_timeout_raises_and_the_connection_stays_usable() -> None:
    async def scenario(client: Any) -> None:
        with pytest.raises(RequestTimeoutError):
            await client.call_tool("slow", {"seconds": 30}, timeout=0.3)
        # Still the same process, still answering.
        assert texts(await client.call_tool("echo", {"text": "hi"})) == ["hi"]
        assert len(client.servers[0]._procs) == 1
        # The machine told the server: its slow tool was cancelled (bounded polling).
        for _ in range(100):
            events = await client.call_tool("events", {})
            if "slow:cancelled" in json.loads(texts(events)[0]):
                break
            await asyncio.sleep(0.05)
        else:
            pytest.fail("the server never saw notifications/cancelled")

    run(scenario)


def test_caller_cancellation_ends_the_call() -> None:
    async def scenario(client: Any) -> None:
        task = asyncio.ensure_future(client.call_tool("slow", {"seconds": 30}))
        for _ in range(100):  # the request is on its way
            await asyncio.sleep(0)
            if client.servers[0].conn.pending_count:
                break
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert client.servers[0].conn.pending_count == 0
        assert texts(await client.call_tool("echo", {"text": "ok"})) == ["ok"]

    run(scenario)


def test_handlers_and_notifications() -> None:
    """The host's handlers answer the server's requests (served through BaseClient's
    ``_answer_op``), and notifications reach ``on_notification`` after the caches."""

    def sampling(messages: Any, *_: Any) -> dict[str, Any]:
        text = messages[0]["content"]["text"]
        return {"role": "assistant", "content": {"type": "text", "text": f"re: {text}"}}

    async def scenario(client: Any) -> tuple[list[str], list[str], list[str]]:
        seen: list[str] = []
        client.on_notification(lambda server, method, params: seen.append(method))
        sampled = texts(await client.call_tool("sample", {"prompt": "hello?"}))
        roots = texts(await client.call_tool("list_roots", {}))
        await client.call_tool("change_tools", {})
        for _ in range(100):
            if seen:
                break
            await asyncio.sleep(0.01)
        return sampled, roots, seen

    sampled, roots, seen = run(
        scenario, sampling_handler=sampling, roots=[{"uri": "file:///tmp", "name": "tmp"}]
    )
    assert sampled == ["re: hello?"]
    assert json.loads(roots[0]) == [{"uri": "file:///tmp", "name": "tmp"}]
    assert "notifications/tools/list_changed" in seen


def test_connect_failure_is_a_typed_error() -> None:
    async def main() -> None:
        client = example.AsyncioClient([stdio_config(["/nonexistent/mcp-server"])])
        try:
            with pytest.raises(ConnectionError, match="cannot start"):
                await client.connect_all()
        finally:
            await client.close()

    asyncio.run(main())


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_streamable_http_progress_and_resource(http_peer: Any, protocol: str) -> None:
    async def scenario(client: Any) -> None:
        seen: list[float] = []
        result = await client.call_tool(
            "progress", {"steps": 3, "delay": 0}, progress=lambda p, t, m: seen.append(p)
        )
        assert seen == [1, 2, 3]
        assert texts(result) == ["done"]
        [content] = await client.read_resource("demo://text")
        assert content.uri == "demo://text"

    run(scenario, streamable_http_config(http_peer.url, read_timeout=20, protocol=protocol))
