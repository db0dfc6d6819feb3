"""The ``mcp-proto`` command line, run as a subprocess against real SDK servers.

Servers: ``tests/servers/sdk_server.py`` (echo, add, fail, slow, progress, greet,
demo://text, demo://blob, demo://item/{id}, completions) and ``examples/demo_server.py``
(countdown, weather, demo://readme, review).
"""

from __future__ import annotations

import io
import json
import logging
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from _cli_support import CLI, ROOT, SDK, on_terminal, one_line_error, run_cli

from mcp_io_sync import cli
from mcp_io_sync.cli import _render as render
from mcp_proto.types import Tool

DEMO = [sys.executable, str(ROOT / "examples" / "demo_server.py")]


def run(
    *args: str,
    server: list[str] | None = SDK,
    timeout: float = 90,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, server=server, timeout=timeout, stdin=stdin or "")


peer = pytest.mark.peer

# One-shot invocations, run concurrently once per module (each starts its own server,
# and a server takes a second or two to start): ``ran[key]`` is the finished process.
BATCH: dict[str, tuple[list[str], list[str] | None]] = {
    "tools": (["tools"], SDK),
    "tools-json": (["--json", "tools"], SDK),
    "tools-describe": (["tools", "progress"], SDK),
    "prompts": (["prompts"], SDK),
    "resources": (["resources"], SDK),
    "templates-json": (["templates", "--json"], SDK),
    "call-add": (["call", "add", "a=1", "b=41"], SDK),
    "call-args": (["--json", "call", "add", "--args", '{"a": 2, "b": 3}', "b=5"], SDK),
    "call-echo-number": (["--json", "call", "echo", "text=123"], SDK),
    "call-echo-object": (["call", "echo", 'text={"a": 1}'], SDK),
    "call-fail": (["call", "fail"], SDK),
    "call-fail-json": (["--json", "call", "fail"], SDK),
    "call-unknown": (["call", "ech", "text=x"], SDK),
    "call-missing-arg": (["call", "add", "a=1"], SDK),
    "progress": (["call", "progress", "steps=3"], SDK),
    "progress-quiet": (["-q", "call", "progress", "steps=3"], SDK),
    "countdown": (["call", "countdown", "seconds=1"], DEMO),
    "prompt": (["prompt", "greet", "name=Bob"], SDK),
    "prompt-demo": (["prompt", "review", "code=print(1)", "--json"], DEMO),
    "read-text": (["read", "demo://text"], SDK),
    "read-demo": (["read", "demo://readme"], DEMO),
    "complete-prompt": (["complete", "--prompt", "greet", "name", "Al"], SDK),
    # ARG=VALUE, as call and prompt take arguments (it asked for an argument named
    # "name=Al" and printed nothing)
    "complete-pair": (["complete", "--prompt", "greet", "name=Al"], SDK),
    "complete-template": (
        ["--json", "complete", "--resource", "demo://item/{id}", "id", "1"],
        SDK,
    ),
    "ping-connect": (["-c", " ".join(f'"{part}"' for part in SDK), "ping"], None),
    "config-one": (["--config", "{config}", "--server", "demo", "tools"], None),
    "config-all": (["--config", "{config}", "tools"], None),
    "config-route": (["--config", "{config}", "call", "weather", "city=Oslo"], None),
    "config-unknown": (["--config", "{config}", "--server", "nope", "tools"], None),
}


def write_config(path: Path) -> Path:
    """A definition file with the SDK server (no "type": inferred) and the demo server."""
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "sdk": {"command": SDK[0], "args": SDK[1:]},
                    "demo": {"type": "stdio", "command": DEMO[0], "args": DEMO[1:]},
                }
            }
        )
    )
    return path


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.CompletedProcess[str]]:
    config = str(write_config(tmp_path_factory.mktemp("cli") / "mcp.json"))
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {
            key: pool.submit(run, *(a.replace("{config}", config) for a in args), server=server)
            for key, (args, server) in BATCH.items()
        }
        return {key: future.result() for key, future in futures.items()}


Ran = dict[str, subprocess.CompletedProcess[str]]


# ------------------------------------------------------------------ listing


@peer
def test_tools_table(ran: Ran) -> None:
    proc = ran["tools"]
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["NAME", "ARGUMENTS", "DESCRIPTION"]
    add = next(line for line in lines if line.startswith("add "))
    assert "a, b" in add and "Add two integers" in add
    progress = next(line for line in lines if line.startswith("progress "))
    assert "steps, delay?" in progress
    # aligned: every description starts in the same column
    column = lines[0].index("DESCRIPTION")
    assert add[column - 2 : column] == "  " and add[column] != " "
    # stderr holds only the revision the server speaks (issue 10).
    assert proc.stderr.splitlines() == ["mcp-proto: server sdk_server: 2026-07-28 (modern)"]


@peer
def test_tools_json_and_describe(ran: Ran) -> None:
    proc = ran["tools-json"]
    assert proc.returncode == 0, proc.stderr
    tools = {t["name"]: t for t in json.loads(proc.stdout)["tools"]}
    assert {"echo", "add", "fail", "slow", "progress"} <= set(tools)
    assert tools["add"]["inputSchema"]["required"] == ["a", "b"]

    proc = ran["tools-describe"]
    assert proc.returncode == 0, proc.stderr
    assert "steps" in proc.stdout and "integer" in proc.stdout
    assert "default 0.01" in proc.stdout


@peer
def test_prompts_resources_templates_tables(ran: Ran) -> None:
    proc = ran["prompts"]
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1].split()[:2] == ["greet", "name"]

    proc = ran["resources"]
    assert proc.returncode == 0, proc.stderr
    assert "demo://text" in proc.stdout and "application/octet-stream" in proc.stdout

    proc = ran["templates-json"]
    assert proc.returncode == 0, proc.stderr
    templates = json.loads(proc.stdout)["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["demo://item/{id}"]


# ------------------------------------------------------------------ calling


@peer
def test_call_key_value_structured(ran: Ran) -> None:
    proc = ran["call-add"]
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"sum": 42}  # the duplicate text copy is shown once


@peer
def test_call_args_json_and_overrides(ran: Ran) -> None:
    proc = ran["call-args"]
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["structuredContent"] == {"sum": 7}
    assert result["isError"] is False

    proc = run("call", "echo", "--args", "-", stdin='{"text": "from stdin"}')
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "from stdin\n"


@peer
def test_call_values_follow_the_schema(ran: Ran) -> None:
    # ``text`` is a string property: 123 stays the text "123" (not the number).
    proc = ran["call-echo-number"]
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["content"][0]["text"] == "123"
    proc = ran["call-echo-object"]
    assert proc.stdout == '{"a": 1}\n'


@peer
def test_call_is_error_exit_code(ran: Ran) -> None:
    proc = ran["call-fail"]
    assert proc.returncode == cli.EXIT_TOOL_ERROR
    assert "intentional failure" in proc.stdout
    assert "reported an error" in one_line_error(proc)

    proc = ran["call-fail-json"]
    assert proc.returncode == cli.EXIT_TOOL_ERROR
    assert json.loads(proc.stdout)["isError"] is True


@peer
def test_unknown_tool(ran: Ran) -> None:
    proc = ran["call-unknown"]
    assert proc.returncode == cli.EXIT_SERVER
    message = one_line_error(proc)
    assert "no tool named 'ech'" in message and "'echo'" in message
    assert proc.stdout == ""


@peer
def test_missing_required_argument_is_a_usage_error(ran: Ran) -> None:
    proc = ran["call-missing-arg"]
    assert proc.returncode == cli.EXIT_USAGE
    assert "b" in one_line_error(proc)


@peer
def test_timeout_exit_code() -> None:
    # The 4 s limit ended the call, not the tool's 30 s (that would exit 0).
    proc = run("--timeout", "4", "call", "slow", "seconds=30")
    assert proc.returncode == cli.EXIT_TIMEOUT, proc.stderr
    assert "timed out after 4s" in one_line_error(proc)


@peer
def test_progress_lines_when_not_a_tty(ran: Ran) -> None:
    proc = ran["progress"]
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "done\n"
    assert proc.stderr.splitlines() == [
        "progress 1/3 (33%): step 1/3",
        "progress 2/3 (67%): step 2/3",
        "progress 3/3 (100%): step 3/3",
    ]
    proc = ran["progress-quiet"]
    assert proc.returncode == 0 and proc.stderr == ""


@peer
def test_demo_countdown_with_progress(ran: Ran) -> None:
    proc = ran["countdown"]
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Liftoff!\n"
    lines = proc.stderr.splitlines()
    assert lines[0] == "progress 1/4 (25%): T-minus 0.75s"
    assert lines[-1] == "progress 4/4 (100%): Ignition!"


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pty")
@peer
def test_progress_bar_on_a_tty() -> None:
    code, screen, out = on_terminal(
        [*CLI, "call", "progress", "steps=4", "delay=0.05", "--", *SDK],
        terminal="stderr",
        env={**os.environ, "COLUMNS": "80"},
    )
    assert code == 0, screen
    assert out == b"done\n"
    assert "\r" in screen and "\x1b[K" in screen
    assert "100%  4/4  step 4/4" in screen
    assert screen.endswith("\n")  # the live line is finished cleanly
    assert "progress 1/4" not in screen  # no line-per-update on a terminal


# ------------------------------------------------------------------ prompts, resources


@peer
def test_prompt(ran: Ran) -> None:
    proc = ran["prompt"]
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "[user]\nPlease greet Bob.\n"

    proc = ran["prompt-demo"]
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert "print(1)" in result["messages"][0]["content"]["text"]


@peer
def test_read(ran: Ran, tmp_path: Path) -> None:
    proc = ran["read-text"]
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Hello from demo://text\n"

    target = tmp_path / "blob.bin"
    proc = run("read", "demo://blob", "-o", str(target))
    assert proc.returncode == 0, proc.stderr
    assert target.read_bytes() == bytes(range(256))

    proc = ran["read-demo"]
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# mcp-proto demo server")


@peer
def test_complete(ran: Ran) -> None:
    proc = ran["complete-prompt"]
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["Alice", "Alex"]

    proc = ran["complete-template"]
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["completion"]["values"] == ["1", "10"]

    proc = ran["complete-pair"]
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["Alice", "Alex"]


@peer
def test_ping_and_connect_option(ran: Ran) -> None:
    proc = ran["ping-connect"]
    assert proc.returncode == 0, proc.stderr
    assert "sdk_server (mcp-proto-sdk-test-server" in proc.stdout and "pong" in proc.stdout


# ------------------------------------------------------------------ configuration


@peer
def test_config_and_server(ran: Ran) -> None:
    proc = ran["config-one"]
    assert proc.returncode == 0, proc.stderr
    assert "countdown" in proc.stdout and "echo" not in proc.stdout
    assert proc.stderr.splitlines() == ["mcp-proto: server demo: 2026-07-28 (modern)"]

    proc = ran["config-all"]
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:2] == ["SERVER", "NAME"]
    assert any(line.split()[:2] == ["demo", "weather"] for line in lines)
    assert any(line.split()[:2] == ["sdk", "echo"] for line in lines)

    # calls are routed to the server that has the tool
    proc = ran["config-route"]
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["city"] == "Oslo"

    proc = ran["config-unknown"]
    assert proc.returncode == cli.EXIT_USAGE
    assert "available: sdk, demo" in one_line_error(proc)


def test_config_file_errors(tmp_path: Path) -> None:
    proc = run("--config", str(tmp_path / "missing.json"), "tools", server=None)
    assert proc.returncode == cli.EXIT_USAGE
    one_line_error(proc)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    proc = run("--config", str(bad), "tools", server=None)
    assert proc.returncode == cli.EXIT_USAGE
    assert "not valid JSON" in one_line_error(proc)
    # A wrong path: an endless file is refused after 16 MiB (it was read for ever), a
    # deeply nested one is invalid JSON (it was an internal error).
    proc = run("--config", "/dev/zero", "tools", server=None)
    assert proc.returncode == cli.EXIT_USAGE
    assert one_line_error(proc) == "mcp-proto: /dev/zero is larger than 16 MiB"
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    proc = run("--config", str(deep), "tools", server=None)
    assert proc.returncode == cli.EXIT_USAGE
    assert one_line_error(proc).endswith("is not valid JSON: nested too deeply")


def test_config_placeholders_are_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # As Claude Code writes .mcp.json: the interpreter's path from the environment.
    monkeypatch.setenv("MCP_PROTO_TEST_PYTHON", SDK[0])
    monkeypatch.delenv("MCP_PROTO_TEST_UNSET", raising=False)
    config = tmp_path / ".mcp.json"
    entry = {"command": "${MCP_PROTO_TEST_PYTHON}", "args": SDK[1:]}
    config.write_text(json.dumps({"mcpServers": {"sdk": entry}}))
    proc = run("--config", str(config), "call", "echo", "text=hi", server=None)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "hi"
    # Unset: the entry is skipped, the warning names the variable; nothing is started.
    entry["env"] = {"KEY": "${MCP_PROTO_TEST_UNSET}"}
    config.write_text(json.dumps({"mcpServers": {"sdk": entry}}))
    proc = run("--config", str(config), "tools", server=None)
    assert proc.returncode == cli.EXIT_USAGE
    assert "'env'.'KEY': environment variable MCP_PROTO_TEST_UNSET" in proc.stderr
    assert proc.stderr.splitlines()[-1].endswith("defines no usable server")


def test_config_servers_start_at_once(tmp_path: Path) -> None:
    # "a" cannot finish starting until "b" has started: the command line connected the
    # servers of a file one after the other, and "a" timed out waiting for "b".
    started = tmp_path / "b-started"
    sdk = shlex.join(SDK)
    config = tmp_path / "mcp.json"
    servers = {
        "a": {
            "command": "sh",
            "args": ["-c", f"while [ ! -e {started} ]; do sleep 0.02; done; exec {sdk}"],
        },
        "b": {"command": "sh", "args": ["-c", f"touch {started}; exec {sdk}"]},
    }
    config.write_text(json.dumps({"mcpServers": servers}))
    proc = run("--config", str(config), "--timeout", "5", "ping", server=None)
    assert proc.returncode == 0, proc.stderr
    assert [line.split()[0] for line in proc.stdout.splitlines()] == ["a", "b"]


# ------------------------------------------------------------------ failures


@pytest.mark.parametrize(
    "args",
    [
        ["tools"],  # no server at all
        ["call", "echo", "novalue", "--", *SDK],  # checked before starting the server
        ["call", "echo", "--args", "[1]", "--", *SDK],
        ["-c", "ftp://example.com", "tools"],
        ["--timeout", "-1", "tools", "--", *SDK],
        ["frobnicate", "--", *SDK],
        ["--server", "x", "tools", "--", *SDK],
        ["-c", "python x.py", "tools", "--", *SDK],
        ["--log-level", "loud", "tools", "--", *SDK],
        ["--transport", "sse", "--config", "mcp.json", "tools"],
        ["--transport", "streamable_http", "tools", "--", *SDK],
        ["-c", "http://127.0.0.1:1/sse", "--endpoint", "/x", "tools"],
        ["-c", "http://127.0.0.1:1", "--endpoint", "no-slash", "tools"],
    ],
)
def test_usage_errors(args: list[str]) -> None:
    proc = run(*args, server=None, timeout=30)
    assert proc.returncode == cli.EXIT_USAGE
    one_line_error(proc)


def test_connection_failures() -> None:
    crash = [
        sys.executable,
        "-c",
        "import sys; sys.stderr.write('boom: no config\\n'); sys.exit(3)",
    ]
    proc = run("tools", server=crash)
    assert proc.returncode == cli.EXIT_CONNECTION
    message = one_line_error(proc)
    assert "exit code 3" in message and "boom: no config" in message  # the stderr tail

    proc = run("tools", server=["/nonexistent/server-binary"])
    assert proc.returncode == cli.EXIT_CONNECTION
    assert "cannot start" in one_line_error(proc)

    # Nothing listens there: one clear line, exit code 3.
    proc = run("-c", f"http://127.0.0.1:{free_port()}/mcp", "tools", server=None)
    assert proc.returncode == cli.EXIT_CONNECTION
    one_line_error(proc)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """The SDK server over Streamable HTTP on a free local port."""
    port = free_port()
    server = subprocess.Popen(
        [*SDK, "--transport", "streamable-http", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("the SDK server did not start listening")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@peer
def test_http_url(http_url: str) -> None:
    proc = run("-c", http_url, "-H", "X-Client: cli-test", "call", "add", "a=2", "b=3", server=None)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"sum": 5}

    proc = run("-c", http_url, "call", "progress", "steps=2", server=None)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "done\n"
    assert proc.stderr.splitlines()[-1] == "progress 2/2 (100%): step 2/2"

    proc = run("-c", http_url, "call", "fail", server=None)
    assert proc.returncode == cli.EXIT_TOOL_ERROR


def test_header_needs_a_url() -> None:
    proc = run("-H", "X-A: 1", "tools", timeout=30)
    assert proc.returncode == cli.EXIT_USAGE
    assert "--header" in one_line_error(proc)
    proc = run("-c", "http://127.0.0.1:1/mcp", "-H", "no colon", "tools", server=None)
    assert proc.returncode == cli.EXIT_USAGE
    one_line_error(proc)


def test_version_and_help() -> None:
    proc = run("--version", server=None)
    assert proc.returncode == 0 and proc.stdout.startswith("mcp-proto ")
    proc = run("call", "--help", server=None)
    assert proc.returncode == 0 and "KEY=VALUE" in proc.stdout


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def _long_call(server: list[str]) -> subprocess.Popen[str]:
    """The command line running a 20-second call with progress on ``server``, once the
    call runs (its first progress line was printed)."""
    proc = subprocess.Popen(
        [*CLI, "call", "progress", "steps=200", "delay=0.1", "--", *server],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    first = proc.stderr.readline()
    if not first.startswith("progress 1/200"):
        proc.kill()
        proc.wait()
        raise AssertionError(first)
    return proc


@peer
def test_ctrl_c_exits_130() -> None:
    proc = _long_call(SDK)
    try:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == cli.EXIT_INTERRUPTED
    assert err.splitlines()[-1] == "mcp-proto: interrupted"
    assert "Traceback" not in err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals, /proc")
@peer
def test_a_second_ctrl_c_exits_at_once_and_leaves_no_server_running(tmp_path: Path) -> None:
    # The server runs in its own session (the terminal's Ctrl-C does not reach it). The
    # second Ctrl-C used to os._exit without it: the server's group (here a background
    # child that ignores the closed stdin) ran on after the command line was gone.
    pidfile = tmp_path / "group"
    launcher = f"echo $$ > {pidfile}; sleep 300 </dev/null >/dev/null 2>&1 & exec {shlex.join(SDK)}"
    proc = _long_call(["sh", "-c", launcher])
    try:
        group = int(pidfile.read_text())
        proc.send_signal(signal.SIGINT)  # closing gracefully: waits for the server...
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)  # ...which a second Ctrl-C does not
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == cli.EXIT_INTERRUPTED
    # SIGKILL is immediate, but the group's members are reaped by init: wait for that
    # (bounded), then nothing of the group may still run.
    deadline = time.monotonic() + 10
    while _group_running(group) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _group_running(group)


def _group_running(pgid: int) -> bool:
    """Whether a process of group ``pgid`` still runs (zombies waiting for init to reap
    them have ended)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


# ------------------------------------------------------------------ helpers, in process


def test_parse_value() -> None:
    assert cli.parse_value("1") == 1
    assert cli.parse_value("1.5") == 1.5
    assert cli.parse_value("true") is True
    assert cli.parse_value("null") is None
    assert cli.parse_value('{"a": 1}') == {"a": 1}
    assert cli.parse_value("[1, 2]") == [1, 2]
    assert cli.parse_value('"quoted"') == "quoted"
    assert cli.parse_value("hello world") == "hello world"
    assert cli.parse_value("") == ""
    values, raw = cli.parse_pairs(["a=1", "b=x=y", "a=2"], what="x")
    assert values == {"a": 2, "b": "x=y"} and raw == {"a": "2", "b": "x=y"}


def test_server_name() -> None:
    assert cli._server_name(["python", "examples/demo_server.py"]) == "demo_server"
    assert cli._server_name(["npx", "-y", "@scope/server-files", "/tmp"]) == "server-files"
    assert cli._server_name(["python3", "-c", "pass"]) == "python3"
    assert cli._server_name(["python", "-m", "pkg.server"]) == "pkg.server"
    assert cli._server_name(["./bin/srv"]) == "srv"


def test_table_alignment_and_truncation() -> None:
    text = render.table(["A", "LONG"], [["x", "one two three"], ["yyy", "\x1b[31mred\nline"]])
    assert text.splitlines() == [
        "A    LONG",
        "x    one two three",
        "yyy  \\x1b[31mred line",  # control characters are made visible, one line per row
    ]
    cut = render.table(["A", "B"], [["x", "y" * 100]], width=30)
    assert all(len(line) < 30 for line in cut.splitlines())
    assert cut.splitlines()[1].endswith("...")


def test_render_call_result_notes_media() -> None:
    result: dict[str, Any] = {
        "content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "audio", "data": "AAAAAAAA", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///x", "name": "x", "mimeType": "text/plain"},
            {"type": "resource", "resource": {"uri": "demo://r", "text": "inner"}},
        ],
        "structuredContent": {"k": 1},
    }
    assert render.render_call_result(result).splitlines() == [
        "hello",
        "[image: image/png, 3 B]",
        "[audio: audio/wav, 6 B]",
        "[resource link: file:///x x (text/plain)]",
        "[resource: demo://r]",
        "inner",
        "{",
        '  "k": 1',
        "}",
    ]


def test_progress_reporter_tty_mode() -> None:
    stream = io.StringIO()
    reporter = render.ProgressReporter(stream, tty=True)
    reporter.update(1, 4, "first")
    reporter.update(4, 4, "last\x1b]0;evil\x07")
    reporter.finish()
    reporter.update(5, 4, "ignored after finish")
    text = stream.getvalue()
    assert text.count("\r") == 2 and text.endswith("\n")
    assert " 25%  1/4  first" in text and "100%  4/4  last" in text
    assert "\x1b]" not in text  # the server's escape sequence is neutralised
    assert "ignored" not in text

    lines = io.StringIO()
    plain = render.ProgressReporter(lines, tty=False)
    plain.update(2, None, None)
    plain.update(0.5, 2, "half")
    assert lines.getvalue() == "progress 2\nprogress 0.5/2 (25%): half\n"


def test_log_lines_step_around_the_progress_line() -> None:
    stream = io.StringIO()
    reporter = render.ProgressReporter(stream, tty=True)
    handler = render.StatusAwareHandler(stream)
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler.reporter = reporter
    reporter.update(1, 2, "half")
    drawn = stream.getvalue()
    handler.emit(logging.makeLogRecord({"msg": "a log line"}))
    after = stream.getvalue()[len(drawn) :]
    # erase the live line, write the log line, redraw the live line
    assert after.startswith("\r\x1b[Ka log line\n\r")
    assert after.endswith(drawn.lstrip("\r"))


def test_tool_hints_and_argument_summary() -> None:
    tool = Tool.from_dict(
        {
            "name": "t",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "mode": {"enum": ["r", "w"]},
                    "ids": {"type": "array", "items": {"type": "integer"}},
                },
                "required": ["path"],
            },
            "annotations": {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
        }
    )
    assert cli._tool_hints(tool) == "read-only, idempotent, closed-world"
    assert cli._arg_list([(n, r) for n, r, _ in cli._tool_args(tool)]) == "path, mode?, ids?"
    summaries = [cli._schema_summary(schema) for _, _, schema in cli._tool_args(tool)]
    assert summaries == ["string", '"r"|"w"', "array of integer"]
    assert cli._tool_hints(Tool.from_dict({"name": "plain", "inputSchema": {}})) == ""
    destructive = Tool.from_dict(
        {"name": "rm", "inputSchema": {}, "annotations": {"destructiveHint": True}}
    )
    assert cli._tool_hints(destructive) == "destructive"
