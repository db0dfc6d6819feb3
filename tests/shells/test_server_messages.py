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
