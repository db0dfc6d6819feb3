"""The command line's error messages keep what the library knows (issue 24): run as a
subprocess, as users run it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from _cli_support import CLI, ROOT, on_terminal, run_cli

from mcp_io_sync import cli

USAGE = "usage: weather-server [--port N] --token TOKEN"


def run(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, timeout=timeout, stdin=None)


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return str(path)


def test_a_server_that_prints_its_usage_and_exits_is_quoted(tmp_path: Path) -> None:
    server = script(tmp_path, "usage.py", f"import sys\nprint({USAGE!r})\nsys.exit(2)\n")
    proc = run("tools", "--", sys.executable, server)
    assert proc.returncode == cli.EXIT_CONNECTION
    (line,) = proc.stderr.splitlines()
    assert "closed its output (exit code 2)" in line
    assert f"first: [{USAGE}]" in line


def test_a_timeout_keeps_the_librarys_quote(tmp_path: Path) -> None:
    # The command line rebuilt the timeout message from the method and the limit, and
    # dropped what the library said: here, the only clue.
    # A shell, not Python: its banner is out within milliseconds, however loaded the
    # machine (a Python server's start-up alone outlasted the 1 s limit under load), and
    # often before the client reports the process started (the lines read then were
    # dropped: test_a_banner_read_before_the_transport_opened_is_quoted in
    # tests/proto/test_connection_stdio.py).
    server = script(
        tmp_path, "banner.sh", "echo 'Listening on port 8080 (HTTP only)'\nexec sleep 60\n"
    )
    proc = run("--timeout", "1", "tools", "--", "sh", server)
    assert proc.returncode == cli.EXIT_TIMEOUT
    (line,) = proc.stderr.splitlines()
    assert line.startswith("mcp-proto: initialize timed out after 1s")
    assert "first: [Listening on port 8080 (HTTP only)]" in line
    # Both waits (issue 24 D): the probe's and initialize's.
    assert "server/discover had gone unanswered for 1s before it (2s in all" in line
    assert line.endswith("change the limit with --timeout SECONDS")


HINTED_SERVER = """
from mcp.server import MCPServer
from mcp.types import ToolAnnotations

mcp = MCPServer("hinted")


@mcp.tool(
    annotations=ToolAnnotations(readOnlyHint=True, idempotentHint=True, openWorldHint=False),
    description="Look up the current weather for a city and report temperature and wind.",
)
def weather(city: str) -> str:
    return city


mcp.run()
"""


def test_tools_on_a_narrow_terminal_drops_hints_before_cutting_descriptions(
    tmp_path: Path,
) -> None:
    # Issue 24 G: on a 70-column terminal the description was cut to 12 characters
    # to keep the hints column; the description is what tells a tool from another.
    server = script(tmp_path, "hinted.py", HINTED_SERVER)
    code, screen, err = on_terminal(
        [*CLI, "tools", "--", sys.executable, server],
        terminal="stdout",
        env={**os.environ, "COLUMNS": "70"},
    )
    assert code == 0, err
    lines = [line for line in screen.replace("\x1b[1m", "").replace("\x1b[0m", "").splitlines()]
    assert lines[0].split() == ["NAME", "ARGUMENTS", "DESCRIPTION"]
    assert lines[1].startswith("weather")
    assert "Look up the current weather for a city" in lines[1]
    assert all(len(line) < 70 for line in lines)


def test_errors_speak_the_command_lines_words() -> None:
    # Issue 24 E: the library's messages name its keyword arguments and methods; the
    # command line has options and commands instead.
    proc = run("--protocol", "modern", "-c", "http://127.0.0.1:9/sse", "tools")
    assert proc.returncode == cli.EXIT_USAGE
    assert proc.stderr.splitlines() == [
        "mcp-proto: --protocol modern needs Streamable HTTP; the SSE transport is legacy-only"
    ]


def test_listen_on_a_handshake_era_server_names_no_library_method() -> None:
    everything = ROOT / "tests" / "peers" / "node_modules" / ".bin" / "mcp-server-everything"
    proc = run("listen", "--", "node", str(everything), "stdio")
    assert proc.returncode == cli.EXIT_SERVER, proc.stderr
    (line,) = proc.stderr.splitlines()
    assert "subscribe_resource" not in line
    assert line.endswith("`listen` needs a 2026-07-28 server")
