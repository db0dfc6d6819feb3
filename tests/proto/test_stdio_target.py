"""What both shells' stdio server objects take from ``mcp_io_common.stdio``: how the
server's process is started (pipes, environment, directory, its own session), what a
failed start says, and the ``stdio`` type. The shells' real processes are
tests/shells/test_process_tree.py's."""

from __future__ import annotations

import logging
import os
import subprocess
from typing import Any

import pytest

from mcp_io_common.stdio import StdioTarget
from mcp_proto.config import ServerConfig, stdio_config
from mcp_proto.errors import ConnectionError
from mcp_proto.limits import Limits


class _Shell:
    """The shell's BaseServer, as far as the mixin needs it."""

    def __init__(self, config: ServerConfig, **kwargs: Any) -> None:
        self.config = config
        self.name = kwargs["name"]
        self._logger = logging.getLogger("test.stdio")
        self._limits = Limits()


class _Server(StdioTarget, _Shell):
    pass


def test_the_process_gets_pipes_its_own_session_and_directory() -> None:
    server = _Server(stdio_config("srv", args=["--x"], cwd="/tmp"), name="s")
    options = server._spawn_options()
    assert options["stdin"] == options["stdout"] == options["stderr"] == subprocess.PIPE
    assert options["start_new_session"] is True  # closing signals its whole group
    assert options["cwd"] == "/tmp"
    assert options["env"] is None  # the host's environment, untouched
    assert server.type == "stdio"
    assert server._proc is None


def test_the_configured_environment_goes_over_the_hosts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_TEST_KEPT", "host")
    monkeypatch.setenv("MCP_TEST_SET", "host")
    server = _Server(stdio_config("srv", env={"MCP_TEST_SET": "mine"}), name="s")
    env = server._spawn_options()["env"]
    assert env["MCP_TEST_KEPT"] == "host"
    assert env["MCP_TEST_SET"] == "mine"
    assert os.environ["MCP_TEST_SET"] == "host"  # the host's own is not changed


def test_a_failed_start_names_the_command_and_the_reason() -> None:
    server = _Server(stdio_config(["no-such-server", "--flag"]), name="s")
    error = server._start_failed(FileNotFoundError(2, "No such file or directory"))
    assert isinstance(error, ConnectionError)
    assert str(error) == "cannot start 'no-such-server': No such file or directory"
    bare = server._start_failed(PermissionError("denied"))
    assert str(bare) == "cannot start 'no-such-server': denied"


def test_stderr_goes_to_the_servers_logger_bounded(caplog: pytest.LogCaptureFixture) -> None:
    server = _Server(stdio_config("srv"), name="s")
    log = server._stderr_log()
    with caplog.at_level(logging.INFO, logger="test.stdio"):
        assert log.feed(b"hello\n" + b"x" * (Limits().max_stderr_line + 10) + b"\n")
        assert not log.feed(b"")
    lines = [r.getMessage() for r in caplog.records if r.name == "test.stdio.stderr"]
    assert lines[0] == "[s] hello"
    assert len(lines[1]) == len("[s] ") + Limits().max_stderr_line
