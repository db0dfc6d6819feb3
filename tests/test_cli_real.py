"""The ``mcp-proto`` command line against the real servers people use, run as a
subprocess and checked on stdout, stderr and the exit code.

Peers (all pinned, installed by ``make install peers``): the npm reference servers
server-everything, server-filesystem (on a temporary folder) and server-memory (its file
in a temporary folder), all three started as ``node .../dist/index.js``; ``mcp-server-time``
from PyPI, started as the bare console script; the FastMCP 4 server
``tests/servers/fastmcp_server.py`` (stdio and Streamable HTTP); the SDK server
``tests/servers/sdk_server.py``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from _cli_support import CLI, ROOT, SDK, Proc, on_terminal, one_line_error, run_cli

from mcp_io_sync import cli

NPM = ROOT / "tests" / "peers" / "node_modules" / "@modelcontextprotocol"
EVERYTHING = ["node", str(NPM / "server-everything" / "dist" / "index.js")]
FILESYSTEM = ["node", str(NPM / "server-filesystem" / "dist" / "index.js")]
MEMORY = ["node", str(NPM / "server-memory" / "dist" / "index.js")]
TIME = ["mcp-server-time"]  # the bare console script, found on PATH like a user's
FASTMCP = [sys.executable, str(ROOT / "tests" / "servers" / "fastmcp_server.py")]
# The virtual environment's scripts on PATH, as with an activated environment.
ENV = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
ENV.pop("COLUMNS", None)

pytestmark = pytest.mark.peer


def run(*args: str, server: list[str] | None = None, timeout: float = 90) -> Proc:
    return run_cli(*args, server=server, timeout=timeout, env=ENV)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def serve(argv: list[str], port: int) -> subprocess.Popen[bytes]:
    server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                pytest.fail(f"{argv} did not start listening")
            time.sleep(0.1)


@pytest.fixture(scope="module")
def fastmcp_http() -> Iterator[tuple[str, str]]:
    """FastMCP over Streamable HTTP: (base URL with the endpoint at /mcp, base URL of
    one mounted at /)."""
    at_mcp, at_root = free_port(), free_port()
    base = [*FASTMCP, "--transport", "http"]
    servers = [
        serve([*base, "--port", str(at_mcp)], at_mcp),
        serve([*base, "--port", str(at_root), "--path", "/"], at_root),
    ]
    try:
        yield f"http://127.0.0.1:{at_mcp}", f"http://127.0.0.1:{at_root}"
    finally:
        for server in servers:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


# ------------------------------------------------------------------ the batch

NOTE = "hello from a file\n"
ADA = {"entities": [{"name": "Ada", "entityType": "person", "observations": ["wrote notes"]}]}
TRIP = {"trip": {"name": "tour", "stops": [{"city": "Oslo", "nights": 2}, {"city": "Rome"}]}}


def batch(tmp: Path, http: str) -> dict[str, tuple[list[str], list[str] | None]]:
    """Invocations run side by side once per module. FastMCP is reached over Streamable
    HTTP (one long-lived server: a FastMCP process takes seconds of CPU to start),
    except for one stdio call."""
    files = tmp / "files"
    memory = str(tmp / "memory.jsonl")
    config = write_broken_config(tmp / "mcp.json", files, f"{http}/mcp")
    fast = ["-c", f"{http}/mcp"]
    return {
        # server-everything
        "ev-tools": (["tools"], EVERYTHING),
        "ev-call": (["call", "get-sum", "a=2", "b=3"], EVERYTHING),
        "ev-read": (["read", "demo://resource/static/document/architecture.md"], EVERYTHING),
        "ev-prompt": (["prompt", "args-prompt", "city=Paris"], EVERYTHING),
        # server-filesystem, on a temporary folder
        "fs-tools": (["--json", "tools"], [*FILESYSTEM, str(files)]),
        "fs-call": (
            ["call", "read_text_file", f"path={files / 'note.txt'}"],
            [*FILESYSTEM, str(files)],
        ),
        "fs-describe": (["tools", "edit_file"], [*FILESYSTEM, str(files)]),
        "fs-prompts": (["prompts"], [*FILESYSTEM, str(files)]),
        "fs-read": (["read", (files / "note.txt").as_uri()], [*FILESYSTEM, str(files)]),
        # server-memory, its graph in a temporary file
        "mem-create": (
            [
                "--env",
                f"MEMORY_FILE_PATH={memory}",
                "call",
                "create_entities",
                "--args",
                json.dumps(ADA),
            ],
            MEMORY,
        ),
        "mem-describe": (["tools", "create_entities"], MEMORY),
        "mem-prompt": (["prompt", "anything"], MEMORY),
        # mcp-server-time, the bare console script
        "time-tools": (["tools"], TIME),
        "time-call": (["--json", "call", "get_current_time", "timezone=Europe/Paris"], TIME),
        "time-prompts": (["prompts"], TIME),
        "time-read": (["read", "time://now"], TIME),
        "time-connect": (["-c", "mcp-server-time", "tools"], None),
        # FastMCP 4
        "fm-stdio": (["call", "add", "a=1", "b=2"], FASTMCP),
        "fm-tools": ([*fast, "tools"], None),
        "fm-call": ([*fast, "call", "add", "a=1", "b=2"], None),
        "fm-call-json": ([*fast, "--json", "call", "add", "a=1", "b=2"], None),
        "fm-nested": ([*fast, "call", "plan", "--args", json.dumps(TRIP)], None),
        "fm-describe": ([*fast, "tools", "plan"], None),
        "fm-read": ([*fast, "read", "fastmcp://motd"], None),
        "fm-prompt": ([*fast, "prompt", "haiku", "topic=sea"], None),
        "fm-log": (
            [*fast, "--log-level", "warning", "call", "warn", "message=disk almost full"],
            None,
        ),
        "fm-log-error": (
            [*fast, "--log-level", "error", "call", "warn", "message=disk almost full"],
            None,
        ),
        "fm-log-quiet": ([*fast, "-q", "--log-level", "debug", "call", "warn", "message=x"], None),
        # the SDK server (its tools, resources and prompts: tests/test_cli.py)
        "sdk-log-debug": (
            ["--log-level", "debug", "call", "log", "level=debug", "message=dbg"],
            SDK,
        ),
        "sdk-log-default": (["call", "log", "level=debug", "message=dbg"], SDK),
        "fs-log-level": (
            ["--log-level", "info", "call", "list_allowed_directories"],
            [*FILESYSTEM, str(files)],
        ),
        # a config file with broken entries
        "cfg-tools": (["--config", config, "tools"], None),
        "cfg-call": (["--config", config, "call", "add", "a=2", "b=3"], None),
        "cfg-quiet": (["--config", config, "-q", "call", "add", "a=2", "b=3"], None),
        "cfg-only-broken": (["--config", config, "--server", "files", "tools"], None),
    }


def write_broken_config(path: Path, files: Path, url: str) -> str:
    """Two good servers (server-memory announces itself on its stderr), two that cannot
    start for reasons they write to their own stderr, one disabled."""
    servers = {
        "memory": {"command": MEMORY[0], "args": MEMORY[1:]},
        "files": {"command": FILESYSTEM[0], "args": [*FILESYSTEM[1:], str(files / "missing")]},
        "clock": {"command": "mcp-server-time", "args": ["--local-timezone", "Not/AZone"]},
        "fast": {"type": "streamable-http", "url": url},
        "off": {"command": "true", "disabled": True},
    }
    path.write_text(json.dumps({"mcpServers": servers}))
    return str(path)


@pytest.fixture(scope="module")
def tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("real")
    (tmp / "files").mkdir()
    (tmp / "files" / "note.txt").write_text(NOTE)
    return tmp


@pytest.fixture(scope="module")
def ran(tmp: Path, fastmcp_http: tuple[str, str]) -> dict[str, Proc]:
    # Each invocation starts its own server: run them side by side.
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {
            key: pool.submit(run, *args, server=server)
            for key, (args, server) in batch(tmp, fastmcp_http[0]).items()
        }
        return {key: future.result() for key, future in futures.items()}


Ran = dict[str, Proc]


# ------------------------------------------------------------------ server-everything


def test_everything(ran: Ran) -> None:
    proc = ran["ev-tools"]
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].split()[:2] == ["NAME", "ARGUMENTS"]
    assert any(line.split()[:2] == ["get-sum", "a,"] for line in proc.stdout.splitlines())

    proc = ran["ev-call"]
    assert (proc.returncode, proc.stdout) == (0, "The sum of 2 and 3 is 5.\n"), proc.stderr

    proc = ran["ev-read"]
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# Everything Server")

    proc = ran["ev-prompt"]
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("[user]\n") and "Paris" in proc.stdout


# ------------------------------------------------------------------ server-filesystem


def test_filesystem(ran: Ran) -> None:
    proc = ran["fs-tools"]
    assert proc.returncode == 0, proc.stderr
    names = {t["name"] for t in json.loads(proc.stdout)["tools"]}
    assert {"read_text_file", "list_directory", "edit_file"} <= names

    # The text content and the structuredContent {"content": text} are one value:
    # printed once (issue 8 item 9).
    proc = ran["fs-call"]
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, NOTE, "")


def test_filesystem_nested_arguments(ran: Ran) -> None:
    # edit_file(edits: array of {oldText, newText}) shows the items' fields (item 9).
    proc = ran["fs-describe"]
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line.split()[1:] for line in proc.stdout.splitlines() if line.strip()}
    assert rows["edits"][:3] == ["array", "of", "object"]
    assert rows["edits[].oldText"][:2] == ["string", "yes"]
    assert rows["edits[].newText"][:2] == ["string", "yes"]


def test_filesystem_offers_no_prompts_or_resources(ran: Ran) -> None:
    # Item 11: one clear line, exit code 4, and the server named after its npm package
    # rather than its script, index.js (item 10).
    proc = ran["fs-prompts"]
    assert proc.returncode == cli.EXIT_SERVER and proc.stdout == ""
    assert one_line_error(proc) == (
        "mcp-proto: server 'server-filesystem' offers no prompts: "
        "it does not declare the 'prompts' capability"
    )
    proc = ran["fs-read"]
    assert proc.returncode == cli.EXIT_SERVER and proc.stdout == ""
    assert one_line_error(proc) == (
        "mcp-proto: server 'server-filesystem' offers no resources: "
        "it does not declare the 'resources' capability"
    )


# ------------------------------------------------------------------ server-memory


def test_memory(ran: Ran, tmp: Path) -> None:
    proc = ran["mem-create"]
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == ADA["entities"]  # the text, not also {"entities": ...}
    assert '"name":"Ada"' in (tmp / "memory.jsonl").read_text()

    proc = run(
        "--env",
        f"MEMORY_FILE_PATH={tmp / 'memory.jsonl'}",
        "--json",
        "call",
        "read_graph",
        server=MEMORY,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["structuredContent"]["entities"] == ADA["entities"]

    proc = ran["mem-describe"]
    assert proc.returncode == 0, proc.stderr
    assert "entities[].observations  array of string  yes" in proc.stdout

    proc = ran["mem-prompt"]
    assert proc.returncode == cli.EXIT_SERVER
    assert one_line_error(proc) == (
        "mcp-proto: server 'server-memory' offers no prompts: "
        "it does not declare the 'prompts' capability"
    )


# ------------------------------------------------------------------ mcp-server-time


def test_time(ran: Ran) -> None:
    proc = ran["time-tools"]
    assert proc.returncode == 0, proc.stderr
    assert {line.split()[0] for line in proc.stdout.splitlines()[1:]} == {
        "get_current_time",
        "convert_time",
    }

    proc = ran["time-call"]
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["structuredContent"]["timezone"] == "Europe/Paris"

    # It declares prompts and resources but has none: an empty list is the truth.
    proc = ran["time-prompts"]
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "(no prompts)\n", "")
    proc = ran["time-read"]
    assert proc.returncode == cli.EXIT_SERVER
    assert "Unknown resource: time://now" in one_line_error(proc)


def test_time_as_a_bare_console_script(ran: Ran) -> None:
    # -c with a bare console-script name: a command, run through PATH.
    proc = ran["time-connect"]
    assert proc.returncode == 0, proc.stderr
    assert "get_current_time" in proc.stdout


# ------------------------------------------------------------------ FastMCP


def test_fastmcp(ran: Ran) -> None:
    proc = ran["fm-stdio"]
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "3\n", "")
    proc = ran["fm-tools"]
    assert proc.returncode == 0, proc.stderr
    add = next(line for line in proc.stdout.splitlines() if line.startswith("add "))
    assert add.split() == ["add", "a,", "b", "Add", "two", "integers."]  # no "Add: " title echo

    # FastMCP wraps a scalar as {"result": 3} next to the text "3": shown once (item 9).
    proc = ran["fm-call"]
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "3\n", "")
    proc = ran["fm-call-json"]
    assert json.loads(proc.stdout)["structuredContent"] == {"result": 3}

    proc = ran["fm-nested"]
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"name": "tour", "stops": ["Oslo", "Rome"], "nights": 3}

    proc = ran["fm-read"]
    assert (proc.returncode, proc.stdout) == (0, "Hello from FastMCP\n"), proc.stderr

    proc = ran["fm-prompt"]
    assert (proc.returncode, proc.stdout) == (0, "[user]\nWrite a haiku about sea.\n")


def test_fastmcp_nested_arguments(ran: Ran) -> None:
    proc = ran["fm-describe"]
    assert proc.returncode == 0, proc.stderr
    table = [line.split() for line in proc.stdout.splitlines() if line.startswith("  trip")]
    assert table == [
        ["trip", "object", "yes"],
        ["trip.name", "string", "yes"],
        ["trip.stops", "array", "of", "object", "yes"],
        ["trip.stops[].city", "string", "yes"],
        ["trip.stops[].nights", "integer", "default", "1"],
    ]


def test_log_level(ran: Ran) -> None:
    # --log-level sets the server's level (logging/setLevel); its messages from that
    # level up are shown on stderr (item 10).
    proc = ran["fm-log"]
    assert proc.returncode == 0, proc.stderr
    logged = [line for line in proc.stderr.splitlines() if "disk almost full" in line]
    assert len(logged) == 1 and logged[0].startswith("mcp-proto: warning: [127.0.0.1]")
    # At "error" the server itself drops the warning.
    proc = ran["fm-log-error"]
    assert proc.returncode == 0, proc.stderr
    assert "disk almost full" not in proc.stderr
    proc = ran["fm-log-quiet"]
    assert (proc.returncode, proc.stderr) == (0, "")
    # --log-level debug shows the server's debug messages without -v...
    proc = ran["sdk-log-debug"]
    assert (proc.returncode, proc.stdout) == (0, "sent\n"), proc.stderr
    # Setting a log level uses Logging, deprecated by 2026-07-28: one notice (DEP-4).
    assert [line for line in proc.stderr.splitlines() if "deprecated" not in line] == [
        "mcp-proto: debug: [sdk_server] sdk_server: dbg"
    ]
    # ...which the default verbosity hides.
    proc = ran["sdk-log-default"]
    assert (proc.returncode, proc.stderr) == (0, "")
    # A server without the logging capability: one warning, the command still runs.
    proc = ran["fs-log-level"]
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        "mcp-proto: warning: server 'server-filesystem' does not declare the 'logging' "
        "capability; --log-level is ignored for it"
    ]


# ------------------------------------------------------------------ broken config entries


def warnings_of(proc: Proc) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.startswith("mcp-proto: warning:")]


def test_config_with_broken_entries(ran: Ran) -> None:
    # Item 4: the good servers are used; each broken one is reported once, with its
    # own stderr (never another server's), and the command succeeds.
    proc = ran["cfg-tools"]
    assert proc.returncode == 0, proc.stderr
    rows = [line.split()[:2] for line in proc.stdout.splitlines()[1:]]
    assert ["memory", "create_entities"] in rows and ["fast", "add"] in rows
    assert {row[0] for row in rows} == {"memory", "fast"}
    for proc in (ran["cfg-tools"], ran["cfg-call"]):
        warnings = warnings_of(proc)
        assert len(warnings) == 3, proc.stderr
        assert sum("server 'off': skipped, marked disabled" in w for w in warnings) == 1
        files = [w for w in warnings if "server 'files' skipped" in w]
        clock = [w for w in warnings if "server 'clock' skipped" in w]
        assert len(files) == 1 and files[0].endswith(
            "server stderr: Error: None of the specified directories are accessible"
        )
        assert len(clock) == 1 and clock[0].endswith(
            "server stderr: Error: invalid --local-timezone 'Not/AZone': "
            "not a known IANA timezone name"
        )
        assert "Knowledge Graph" not in proc.stderr  # server-memory's stderr, quoted nowhere
    proc = ran["cfg-call"]
    assert (proc.returncode, proc.stdout) == (0, "5\n")
    # -q: no warnings at all
    proc = ran["cfg-quiet"]
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "5\n", "")
    # The only server chosen cannot start: that is the error, with its own stderr.
    proc = ran["cfg-only-broken"]
    assert proc.returncode == cli.EXIT_CONNECTION
    assert one_line_error(proc).endswith(
        "server stderr: Error: None of the specified directories are accessible"
    )


# ------------------------------------------------------------------ Streamable HTTP


def test_streamable_http_url_and_endpoint(fastmcp_http: tuple[str, str]) -> None:
    at_mcp, at_root = fastmcp_http
    # --endpoint: the path the requests go to, the URL being the server's base.
    proc = run(
        "-c",
        at_mcp,
        "--transport",
        "streamable_http",
        "--endpoint",
        "/mcp",
        "call",
        "add",
        "a=2",
        "b=2",
    )
    assert (proc.returncode, proc.stdout) == (0, "4\n"), proc.stderr
    # A server mounted at / (FastMCP's path="/"): --endpoint / reaches it.
    proc = run("-c", at_root, "--endpoint", "/", "call", "add", "a=3", "b=2")
    assert (proc.returncode, proc.stdout) == (0, "5\n"), proc.stderr
    # --endpoint does not apply to a command, --transport sse to no endpoint
    proc = run("--endpoint", "/mcp", "tools", server=FASTMCP)
    assert proc.returncode == cli.EXIT_USAGE and "--endpoint" in one_line_error(proc)
    proc = run("-c", at_mcp, "--transport", "sse", "--endpoint", "/mcp", "tools")
    assert proc.returncode == cli.EXIT_USAGE and "endpoint" in one_line_error(proc)
    proc = run("--transport", "sse", "tools", server=FASTMCP)
    assert proc.returncode == cli.EXIT_USAGE and "--transport sse" in one_line_error(proc)


def test_streamable_http_mounted_at_root(fastmcp_http: tuple[str, str]) -> None:
    # The URL is used as given (the library's fix: no path appended).
    _, at_root = fastmcp_http
    proc = run("-c", f"{at_root}/", "call", "add", "a=1", "b=2")
    assert (proc.returncode, proc.stdout) == (0, "3\n"), proc.stderr


def test_config_type_http_is_streamable_http(fastmcp_http: tuple[str, str], tmp_path: Path) -> None:
    # "type": "http" as Claude Code, VS Code and Cursor write it (the library's fix).
    at_mcp, _ = fastmcp_http
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps({"mcpServers": {"fast": {"type": "http", "url": f"{at_mcp}/mcp"}}})
    )
    proc = run("--config", str(config), "call", "add", "a=1", "b=2")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "3\n", "")


def test_config_streamable_http_spellings(fastmcp_http: tuple[str, str], tmp_path: Path) -> None:
    at_mcp, _ = fastmcp_http
    spellings = ["streamable-http", "streamable_http", "streamableHttp"]
    servers = {s: {"type": s, "url": f"{at_mcp}/mcp"} for s in spellings}
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    proc = run("--config", str(config), "ping")
    assert proc.returncode == 0, proc.stderr
    assert [line.split()[0] for line in proc.stdout.splitlines()] == spellings


def test_config_windsurf_and_gemini_url_keys(fastmcp_http: tuple[str, str], tmp_path: Path) -> None:
    # Entries as Windsurf (serverUrl) and Gemini CLI (httpUrl) write them: skipped
    # before, "neither 'command' nor 'url'".
    at_mcp, _ = fastmcp_http
    servers = {
        "windsurf": {"serverUrl": f"{at_mcp}/mcp"},
        "gemini": {"httpUrl": f"{at_mcp}/mcp"},
    }
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    proc = run("--config", str(config), "ping")
    assert proc.returncode == 0, proc.stderr
    assert [line.split()[0] for line in proc.stdout.splitlines()] == ["windsurf", "gemini"]


# ------------------------------------------------------------------ on a terminal


def test_tools_table_fits_a_110_column_terminal(tmp: Path) -> None:
    """Item 9: server-filesystem's table (long ARGUMENTS and HINTS columns) wrapped on a
    110-column terminal, because only the last column was cut."""
    code, screen, err = on_terminal(
        [*CLI, "tools", "--", *FILESYSTEM, str(tmp / "files")],
        terminal="stdout",
        env={**ENV, "COLUMNS": "110", "NO_COLOR": "1"},
    )
    assert code == 0, err
    lines = screen.replace("\r\n", "\n").splitlines()
    # Issue 24 G: HINTS gives way before the description is cut below 40 cells (it
    # was cut to 12 to keep the hints).
    assert lines[0].split() == ["NAME", "ARGUMENTS", "DESCRIPTION"]
    assert any(line.startswith("list_directory_with_sizes ") for line in lines)
    assert max(len(line) for line in lines) <= 109, screen
    description = lines[0].index("DESCRIPTION")
    assert min(len(line) - description for line in lines[1:] if len(line) > description) > 12


# ------------------------------------------------------------------ HTTP+SSE


def test_sse_deprecation_notice_once_and_quiet() -> None:
    """Item 10: the HTTP+SSE notice is shown once per invocation (a call lists the tools,
    then calls), and -q silences it."""
    port = free_port()
    server = serve([*SDK, "--transport", "sse", "--port", str(port)], port)
    try:
        url = f"http://127.0.0.1:{port}/sse"
        proc = run("-c", url, "call", "add", "a=1", "b=2")
        assert proc.returncode == 0, proc.stderr
        notices = [line for line in proc.stderr.splitlines() if "deprecated" in line]
        assert len(notices) == 1 and notices[0].startswith(
            "mcp-proto: warning: The HTTP+SSE transport is deprecated"
        )
        proc = run("-q", "-c", url, "call", "add", "a=1", "b=2")
        assert (proc.returncode, proc.stderr) == (0, "")
    finally:
        server.terminate()
        server.wait(10)
