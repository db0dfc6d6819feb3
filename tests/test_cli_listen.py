"""``mcp-proto listen`` as a subprocess: notifications printed as they come (text and
``--json``), against the SDK server over Streamable HTTP (a second client makes it
change its tools) and the scripted listen peer; a handshake-era server, and a
2026-07-28 server without subscriptions (``mcp-server-time``, the published console
script), are clear one-line errors, and in a config file only skip that server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import mcp_io_sync

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "tests" / "servers"
CLI = [sys.executable, "-m", "mcp_io_sync.cli"]
LISTEN_PEER = [sys.executable, str(SERVERS / "listen_stdio.py")]
TIME = ["mcp-server-time"]  # the bare console script, found on PATH like a user's
EVERYTHING = [
    "node",
    str(ROOT / "tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
]
ENV = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}

sys.path.insert(0, str(SERVERS))
import http_peers  # noqa: E402

pytestmark = pytest.mark.peer


def run(*args: str, server: list[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args, "--", *server],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        input="",
        env=ENV,
    )


@pytest.fixture(scope="module")
def sdk_url() -> Iterator[str]:
    with http_peers.sdk_http_server("streamable-http") as peer:
        yield peer.url


def test_listen_json_prints_the_notifications_a_change_causes(sdk_url: str) -> None:
    proc = subprocess.Popen(
        [*CLI, "listen", "--tools", "--json", "--count", "1", "-c", sdk_url],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    try:
        assert proc.stderr is not None
        note = proc.stderr.readline()  # printed once the subscription is acknowledged
        assert note.startswith("mcp-proto: listening to ") and "toolsListChanged" in note
        with mcp_io_sync.connect(sdk_url, read_timeout=10) as client:
            client.call_tool("change_tools", {})
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    (line,) = out.splitlines()
    record = json.loads(line)
    assert record["method"] == "notifications/tools/list_changed"
    assert set(record) == {"server", "method", "params"}


def test_listen_text_output_and_count() -> None:
    proc = run(
        "listen", "--resource", "demo://busy", "--count", "3", server=[*LISTEN_PEER, "flood", "5"]
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 3
    assert all(line.startswith("notifications/resources/updated {") for line in lines)
    assert '"uri":"demo://busy"' in lines[0]


def test_listen_for_a_duration_prints_everything_then_exits_cleanly() -> None:
    proc = run(
        "listen",
        "--json",
        "--duration",
        "2",
        "--resource",
        "demo://busy",
        server=[*LISTEN_PEER, "flood", "5"],
    )
    assert proc.returncode == 0, proc.stderr
    methods = [json.loads(line)["method"] for line in proc.stdout.splitlines()]
    assert methods == ["notifications/resources/updated"] * 6 + ["notifications/tools/list_changed"]


def test_a_listen_never_acknowledged_is_a_timeout() -> None:
    """SUB-5 through the CLI: the acknowledgment is awaited for --timeout."""
    proc = run("listen", "--tools", "--timeout", "0.5", server=[*LISTEN_PEER, "never_ack"])
    assert proc.returncode == 5, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines == [
        "mcp-proto: subscriptions/listen timed out after 0.5s; "
        "change the limit with --timeout SECONDS"
    ]


def test_listen_on_a_handshake_era_server_is_a_one_line_error() -> None:
    proc = run("listen", server=EVERYTHING)
    assert proc.returncode == 4, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("mcp-proto: ")
    assert "handshake era" in lines[0]


def test_a_server_that_declares_no_list_changes_is_a_one_line_error() -> None:
    """mcp-server-time (2026-07-28) declares tools/prompts/resources with listChanged
    false: with nothing asked for, there is nothing it would send."""
    proc = run("listen", server=TIME, timeout=30)
    assert proc.returncode == 4, proc.stderr
    assert proc.stderr.splitlines() == [
        "mcp-proto: server 'mcp-server-time' sends no list changes (its capabilities"
        " declare no tools, prompts or resources listChanged); ask for a resource's"
        " updates with --resource URI"
    ]


def test_a_server_without_subscriptions_is_named_in_a_one_line_error() -> None:
    """Asked for anyway, mcp-server-time answers -32601: the error names the server and
    what it lacks (it was "server error: Method not found (code -32601)")."""
    proc = run("listen", "--tools", server=TIME, timeout=30)
    assert proc.returncode == 4, proc.stderr
    assert proc.stderr.splitlines() == [
        "mcp-proto: server 'mcp-server-time' does not offer subscriptions/listen"
        " (it answered -32601, method not found)"
    ]


def test_in_a_config_a_server_that_cannot_listen_is_skipped(tmp_path: Path) -> None:
    config = tmp_path / "servers.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "time": {"command": TIME[0]},
                    "listen": {"command": LISTEN_PEER[0], "args": [LISTEN_PEER[1], "flood", "2"]},
                }
            }
        )
    )
    proc = subprocess.run(
        [*CLI, "listen", "--tools", "--count", "3", "--config", str(config)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        input="",
        env=ENV,
    )
    assert proc.returncode == 0, proc.stderr
    assert "mcp-proto: warning: server 'time' does not offer subscriptions/listen" in proc.stderr
    assert "mcp-proto: listening to listen: " in proc.stderr
    assert len(proc.stdout.splitlines()) == 3
    assert all(line.startswith("[listen] notifications/") for line in proc.stdout.splitlines())
