"""Both shells: what a server printed reaches the error the user reads (issue 24 C).

The servers are small scripts written by the test: a real server that is started with
a wrong argument prints its usage line and exits, which no scripted mode of the other
peers does."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_proto import errors

from ._http_support import http_tap
from .conftest import Shell

USAGE = "usage: weather-server [--port N] --token TOKEN"


def usage_server(tmp_path: Path) -> list[str]:
    script = tmp_path / "usage_server.py"
    script.write_text(f"import sys\nprint({USAGE!r})\nsys.exit(2)\n", encoding="utf-8")
    return [sys.executable, str(script)]


@pytest.mark.parametrize("protocol", ["auto", "modern", "legacy"])
def test_a_server_that_prints_its_usage_and_exits_is_quoted(
    shell: Shell, tmp_path: Path, protocol: str
) -> None:
    async def scenario(c: Any) -> None:  # pragma: no cover - never connects
        raise AssertionError("connected to a server that exited")

    with pytest.raises(errors.ConnectionError) as caught:
        shell.run(scenario, usage_server(tmp_path), protocol=protocol)
    message = str(caught.value)
    assert "closed its output (exit code 2)" in message
    assert f"first: [{USAGE}]" in message


class LoopServer(http_tap.hostile_http.HostileHTTPServer):
    """Answers every request with a 307 to the other of /mcp and /mcp/: a same-origin
    redirect loop (a proxy rule and an app that disagree about the trailing slash)."""

    def dispatch(self, ex: Any) -> None:
        target = "/mcp/" if ex.req.path == "/mcp" else "/mcp"
        ex.respond(307, b"", headers=[("Location", target)])


def test_a_redirect_loop_says_so(shell: Shell) -> None:
    server = LoopServer("ok").start()
    try:

        async def scenario(c: Any) -> None:  # pragma: no cover - never connects
            raise AssertionError("connected through a redirect loop")

        url = server.url_base + "/mcp"
        with pytest.raises(errors.MCPError) as caught:
            shell.run(scenario, url, transport="streamable_http", read_timeout=10)
    finally:
        server.stop()
    message = str(caught.value)
    assert "too many redirects" in message
    assert "not followed" not in message


def test_a_silent_server_on_auto_names_both_waits(shell: Shell) -> None:
    # Issue 24 D: protocol="auto" over stdio waits for the server/discover probe, then
    # for initialize; the error names both.
    async def scenario(c: Any) -> None:  # pragma: no cover - never connects
        raise AssertionError("connected to a silent server")

    silent = [sys.executable, "-c", "import time; time.sleep(60)"]
    with pytest.raises(errors.RequestTimeoutError) as caught:
        shell.run(scenario, silent, protocol="auto", read_timeout=1.0)
    message = str(caught.value)
    assert message.startswith("initialize timed out")
    assert "server/discover had gone unanswered for 1s before it (2s in all" in message
