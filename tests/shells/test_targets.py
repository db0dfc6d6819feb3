"""``connect`` targets and definition files as users write them (issue 8 items 2, 3, 7),
over both shells.

* ``"type": "http"`` in a definition file is Streamable HTTP (as Claude Code, VS Code
  and Cursor write it); ``"plain_http"`` is plain JSON-RPC over HTTP.

* A URL is used as given: an SDK server mounted at ``/`` is reached at
  ``http://127.0.0.1:PORT/`` and ``http://127.0.0.1:PORT`` (not at ``/rpc``).
* A failed fallback chain names every URL it tried.
* A target that is not a URL is a command line: a bare console script on PATH (the
  PATH of ``env=`` when given), ``bash server.sh``, ``env K=V cmd``; a first word that
  does not resolve is one typed, one-line error naming it, and nothing is started.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_proto import deprecations, errors

from ._http_support import (
    HTTP_READ_TIMEOUT,
    Peer,
    flex_http_server,
    hostile_http_server,
    sdk_http_server,
)
from .conftest import SDK_SERVER, Shell, children_matching, text_of

#: Handshake-era behaviour (server requests, sessions, the GET stream, initialize on the
#: wire): pinned to protocol="legacy" (conftest ``Shell.protocol``); the 2026-07-28 era
#: has its own suites (test_modern_*.py, test_dual_era_matrix.py).
PROTOCOL = "legacy"

DEADLINE = 60.0
#: A console-script name that exists nowhere but in the tests' temporary bin directory.
SCRIPT = "mcp-proto-test-sdk-server"


async def _echo_works(c: Any) -> str:
    names = {tool.name for tool in await c.list_tools()}
    assert "echo" in names
    return text_of(await c.call_tool("echo", {"text": "hi"}))


# ------------------------------------------------------------------------ URLs at "/"


@pytest.fixture(scope="module")
def root_peer() -> Iterator[Peer]:
    """The official SDK server (mcp==2.3.0) with its Streamable HTTP endpoint at ``/``."""
    with sdk_http_server("streamable-http", path="/") as peer:
        yield peer


@pytest.mark.peer
@pytest.mark.parametrize("suffix", ["/", ""], ids=["slash", "no-path"])
def test_sdk_server_mounted_at_root(shell: Shell, root_peer: Peer, suffix: str) -> None:
    async def scenario(c: Any) -> None:
        # Streamable HTTP on the first try: the URL was used as given, so no fallback.
        assert c.servers[0].type == "streamable_http"
        assert c.servers[0].config.endpoint_url == root_peer.base + "/"
        assert await _echo_works(c) == "hi"

    shell.run(scenario, root_peer.base + suffix, read_timeout=HTTP_READ_TIMEOUT, deadline=DEADLINE)


# ------------------------------------------------------------ definition-file types


@pytest.mark.peer
def test_definition_file_type_http_is_streamable_http(shell: Shell, tmp_path: Path) -> None:
    # The entry exactly as `claude mcp add --transport http sdk URL` writes it. Read as
    # plain HTTP it failed with "Not Acceptable: Client must accept both
    # application/json and text/event-stream" against every Streamable HTTP server.
    with (
        sdk_http_server("streamable-http") as sdk,
        flex_http_server("ok", alias="/rpc", plain_only=True) as plain,
    ):
        document = {
            "mcpServers": {
                "sdk": {"type": "http", "url": sdk.url},
                "plain": {"type": "plain_http", "url": plain.url},
            }
        }
        path = tmp_path / ".mcp.json"
        path.write_text(json.dumps(document), encoding="utf-8")

        async def scenario(c: Any) -> None:
            assert [(s.name, s.type) for s in c.servers] == [
                ("sdk", "streamable_http"),
                ("plain", "http"),
            ]
            assert text_of(await c.call_tool("echo", {"text": "hi"}, server="sdk")) == "hi"
            assert text_of(await c.call_tool("t", server="plain")) == "ok"

        shell.run_client(scenario, server_definition_file=str(path), deadline=DEADLINE)
        # Plain HTTP: POSTs that accept JSON only, never an event stream.
        assert plain.recorder.gets() == []
        accept = plain.recorder.requests[0].header("accept") or ""
        assert "text/event-stream" not in accept


def test_definition_file_placeholders_are_expanded_from_the_environment(
    shell: Shell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A Claude Code .mcp.json keeps the token out of the file. Before expansion the
    # server received "Bearer ${MCP_PROTO_TEST_TOKEN}" as the credential.
    monkeypatch.setenv("MCP_PROTO_TEST_TOKEN", "s3cret")
    monkeypatch.delenv("MCP_PROTO_TEST_UNSET", raising=False)
    with flex_http_server("ok", alias="/rpc", plain_only=True) as plain:
        document = {
            "mcpServers": {
                "plain": {
                    "type": "plain_http",
                    "url": plain.url,
                    "headers": {"Authorization": "Bearer ${MCP_PROTO_TEST_TOKEN}"},
                },
                # Skipped with a warning: never started with the placeholder as it is.
                "broken": {"command": "server", "args": ["${MCP_PROTO_TEST_UNSET}"]},
            }
        }
        path = tmp_path / ".mcp.json"
        path.write_text(json.dumps(document), encoding="utf-8")

        async def scenario(c: Any) -> None:
            assert [s.name for s in c.servers] == ["plain"]
            assert text_of(await c.call_tool("t", server="plain")) == "ok"

        shell.run_client(scenario, server_definition_file=str(path), deadline=DEADLINE)
        sent = {r.header("authorization") for r in plain.recorder.requests}
        assert sent == {"Bearer s3cret"}


@pytest.mark.peer
@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_a_server_mounted_under_a_prefix_is_reached_through_its_redirect(
    shell: Shell, protocol: str
) -> None:
    # The official SDK's app under Starlette's Mount("/mcp"): POST /mcp is answered 307
    # /mcp/. The URL a user pastes failed with "server error: HTTP 307 from the server".
    with sdk_http_server("streamable-http", mount="/mcp") as sdk:
        assert sdk.url.endswith("/mcp")

        async def scenario(c: Any) -> str:
            assert text_of(await c.call_tool("echo", {"text": "hi"})) == "hi"
            return str(c.servers[0].protocol_era)

        era = shell.run(
            scenario, sdk.url, protocol=protocol, read_timeout=HTTP_READ_TIMEOUT, deadline=DEADLINE
        )
    assert era == ("legacy" if protocol == "legacy" else "modern")
    redirects = [m for m in shell.log.messages(logging.INFO) if "redirects to" in m]
    assert redirects and redirects[0].endswith("/mcp/ (HTTP 307); requests go there")


def test_connect_all_starts_every_server_at_once(shell: Shell, tmp_path: Path) -> None:
    # "a" cannot finish starting until "b" has started: connecting one after the other
    # (as connect_all and the CLI did) waits on "a" for ever, here its read timeout.
    started = tmp_path / "b-started"
    sdk = shlex.join(SDK_SERVER)
    wait_for_b = f"while [ ! -e {started} ]; do sleep 0.02; done; exec {sdk}"
    configs = [
        # Generous: the SDK server's cold start on a busy machine takes seconds; connected
        # one after the other, "a" still never finishes, so the test still tells.
        {"name": "a", "command": "sh", "args": ["-c", wait_for_b], "read_timeout": 30.0},
        {"name": "b", "command": "sh", "args": ["-c", f"touch {started}; exec {sdk}"]},
    ]

    async def scenario(c: Any) -> list[str]:
        await c.connect_all()
        return [s.name for s in c.servers if s.is_connected]

    assert shell.run_client(scenario, configs, deadline=DEADLINE) == ["a", "b"]


# ------------------------------------------------------------- the fallback error text


@pytest.mark.parametrize("path", ["/nowhere", "", "/"], ids=["path", "no-path", "root"])
def test_fallback_error_names_every_url_it_tried(shell: Shell, path: str) -> None:
    # The scripted server serves /mcp only: every other path is 404 for every method, so
    # each transport of the chain (CONN-6) is refused in turn.
    with hostile_http_server("ok") as peer:
        url = peer.base + path

        async def scenario(c: Any) -> None:
            raise AssertionError("connected to a server that refuses everything")

        deprecations.reset()
        with pytest.raises(errors.AllTransportsFailedError) as info:
            shell.run(scenario, url, read_timeout=HTTP_READ_TIMEOUT, deadline=DEADLINE)
        sent = [(r.method, r.path) for r in peer.recorder.requests]
    # Trying HTTP+SSE is not using it: no "HTTP+SSE is deprecated, migrate the server"
    # for a server that is not one (it was announced when the GET went out).
    warned = shell.log.messages(logging.WARNING)
    assert not any("HTTP+SSE" in m for m in warned), warned
    assert deprecations.claim("http_sse") is not None  # still unannounced

    posted = url if path else url + "/"
    message = str(info.value)
    assert "\n" not in message
    for tried in (f"POST {posted}", f"GET {url}"):
        assert tried in message, message
    assert message.count(f"POST {posted}:") == 2  # Streamable HTTP, then plain HTTP
    assert [(kind, where) for kind, where, _ in info.value.attempts] == [
        ("streamable_http", posted),
        ("sse", url),
        ("http", posted),
    ]
    assert isinstance(info.value, errors.ConnectionError)
    # What the message says is what was sent.
    assert sent == [("POST", path or "/"), ("GET", path or "/"), ("POST", path or "/")]
    # Every transport got a 404: at the site's root (a new user's first guess), the
    # message says where servers usually are; under a path of its own, it does not.
    assert [exc.http_status for _, _, exc in info.value.attempts] == [404, 404, 404]
    hint = "; nothing answers at the root: MCP servers are usually at /mcp (Streamable HTTP)"
    hint += f" or /sse (HTTP+SSE), e.g. {peer.base}/mcp"
    assert message.endswith(hint) is (path in ("", "/")), message


# ------------------------------------------------------------------- command lines


def _write_script(path: Path, body: str, *, executable: bool = True) -> Path:
    path.write_text("#!/bin/sh\n" + body + "\n", encoding="utf-8")
    mode = path.stat().st_mode
    path.chmod(mode | stat.S_IXUSR if executable else mode & ~0o111)
    return path


def _sdk_exec() -> str:
    return "exec " + shlex.join(SDK_SERVER) + ' "$@"'


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    """A directory holding a bare console script that runs the SDK server over stdio."""
    directory = tmp_path / "bin"
    directory.mkdir()
    _write_script(directory / SCRIPT, _sdk_exec())
    return directory


def _path_with(directory: Path) -> str:
    return f"{directory}{os.pathsep}{os.environ.get('PATH', os.defpath)}"


@pytest.mark.peer
def test_bare_console_script_on_path(
    shell: Shell, bin_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # How most PyPI/npm servers are documented: connect("mcp-server-time").
    monkeypatch.setenv("PATH", _path_with(bin_dir))

    async def scenario(c: Any) -> None:
        assert c.servers[0].type == "stdio"
        assert await _echo_works(c) == "hi"

    shell.run(scenario, SCRIPT)
    # ... with arguments, like "mcp-server-git --repository .".
    shell.run(scenario, f"{SCRIPT} --transport stdio")


@pytest.mark.peer
def test_mcp_server_time_by_its_console_script_name(
    shell: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The real PyPI server (test extra), documented as `mcp-server-time`: the virtual
    # environment's scripts on PATH, as in an activated environment.
    monkeypatch.setenv("PATH", _path_with(Path(sys.executable).parent))

    async def scenario(c: Any) -> None:
        assert c.servers[0].type == "stdio"
        assert {t.name for t in await c.list_tools()} >= {"get_current_time", "convert_time"}
        answer = json.loads(text_of(await c.call_tool("get_current_time", {"timezone": "UTC"})))
        assert answer["timezone"] == "UTC"

    shell.run(scenario, "mcp-server-time")
    shell.run(scenario, "mcp-server-time --local-timezone UTC")


@pytest.mark.peer
def test_bare_console_script_on_the_path_given_by_env(shell: Shell, bin_dir: Path) -> None:
    # env= is merged into the child's environment, so its PATH is where the child's
    # command is looked up; the lookup must use it too.
    async def scenario(c: Any) -> None:
        assert await _echo_works(c) == "hi"

    shell.run(scenario, SCRIPT, env={"PATH": _path_with(bin_dir)})


def test_env_path_without_the_script_is_not_found(
    shell: Shell, bin_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # On the host's PATH but not on the child's (env= replaces PATH): the child could
    # not start it, so the lookup must not find it either.
    monkeypatch.setenv("PATH", _path_with(bin_dir))

    async def scenario(c: Any) -> None:
        raise AssertionError("started a command that is not on the child's PATH")

    with pytest.raises(errors.CommandNotFoundError) as info:
        shell.run(scenario, SCRIPT, env={"PATH": str(bin_dir.parent / "empty")})
    assert info.value.command == SCRIPT


def test_unknown_command_is_one_typed_line_naming_it(shell: Shell) -> None:
    word = "mcp-proto-no-such-server-anywhere"

    async def scenario(c: Any) -> None:
        raise AssertionError("connected to a command that does not exist")

    with pytest.raises(errors.CommandNotFoundError) as info:
        shell.run(scenario, f"{word} --repository .")
    message = str(info.value)
    assert "\n" not in message
    assert repr(word) in message and "not found on PATH" in message
    assert info.value.command == word
    # The transport was known (stdio); the server cannot start: a connection failure,
    # as a failed start always was (the CLI exits with its connection status).
    assert isinstance(info.value, errors.ConnectionError)
    assert children_matching(word) == []


@pytest.mark.peer
def test_bash_script_in_cwd(shell: Shell, tmp_path: Path) -> None:
    _write_script(tmp_path / "server.sh", _sdk_exec(), executable=False)

    async def scenario(c: Any) -> None:
        assert await _echo_works(c) == "hi"

    shell.run(scenario, "bash server.sh", cwd=str(tmp_path))


@pytest.mark.peer
def test_env_assignments_before_the_command(shell: Shell, tmp_path: Path) -> None:
    # The script refuses to start unless env set the variable: the target's own
    # "K=V" reached the server.
    body = '[ "$MCP_PROTO_MARK" = set-by-env ] || exit 3\n' + _sdk_exec()
    _write_script(tmp_path / "server.sh", body, executable=False)

    async def scenario(c: Any) -> None:
        assert await _echo_works(c) == "hi"

    shell.run(scenario, "env MCP_PROTO_MARK=set-by-env bash server.sh", cwd=str(tmp_path))
    shell.run(scenario, "env MCP_PROTO_MARK=x " + shlex.join(SDK_SERVER))


@pytest.mark.peer
def test_script_path_relative_to_cwd(shell: Shell, tmp_path: Path) -> None:
    script = _write_script(tmp_path / "server.sh", _sdk_exec(), executable=False)

    async def scenario(c: Any) -> None:
        assert await _echo_works(c) == "hi"

    # Not executable: refused before anything runs, with the way out in the message.
    with pytest.raises(errors.CommandNotFoundError, match="not executable") as info:
        shell.run(scenario, "./server.sh", cwd=str(tmp_path))
    assert "'bash ./server.sh'" in str(info.value)
    # A bare file name is not looked up in the working directory (exec does not either).
    with pytest.raises(errors.CommandNotFoundError, match="not on PATH") as info:
        shell.run(scenario, "server.sh", cwd=str(tmp_path))
    assert "'./server.sh'" in str(info.value)
    # Executable: it runs, found relative to cwd= (not to the test's working directory).
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    assert Path.cwd() != tmp_path
    shell.run(scenario, "./server.sh", cwd=str(tmp_path))
    # A path that does not exist names itself.
    with pytest.raises(errors.CommandNotFoundError, match="no such file"):
        shell.run(scenario, "./missing.sh", cwd=str(tmp_path))


def test_argv_list_is_checked_too(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        raise AssertionError("unreachable")

    with pytest.raises(errors.CommandNotFoundError, match="mcp-proto-absent"):
        shell.run(scenario, ["mcp-proto-absent", "--flag"])
    with pytest.raises(errors.CommandNotFoundError, match="mcp-proto-absent"):
        shell.run(scenario, "mcp-proto-absent", transport="stdio")
