"""What goes over the wire around the handshake and the close (issue 8, item 5).

server-everything over stdio, behind ``stdio_tap.py``, which records every line in each
direction and the moment the client closed stdin. Asserted on messages, not time:

* with no roots registered the client declares no ``roots`` capability (CAP-4), so the
  server never asks ``roots/list``;
* with roots registered it declares them, and the server's ``roots/list`` is answered;
* a server request still pending at close (a sampling handler that has not returned)
  is answered with a JSON-RPC error before stdin is closed, so the server is not left
  waiting on it (a Node server would stay alive on it until it timed out).
"""

from __future__ import annotations

import json
import shutil
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import trio

from mcp_proto.session import CLOSING_CODE

from .conftest import EVERYTHING, PEERS_NODE_MODULES, Shell, text_of

#: Handshake-era behaviour (server requests, sessions, the GET stream, initialize on the
#: wire): pinned to protocol="legacy" (conftest ``Shell.protocol``); the 2026-07-28 era
#: has its own suites (test_modern_*.py, test_dual_era_matrix.py).
PROTOCOL = "legacy"

if not PEERS_NODE_MODULES.is_dir():
    pytest.skip(
        f"{PEERS_NODE_MODULES} is missing: run `npm ci` in tests/peers (make test does)",
        allow_module_level=True,
    )

pytestmark = pytest.mark.peer
assert shutil.which("node"), "node is not on PATH"

TAP = Path(__file__).with_name("stdio_tap.py")
SAMPLING_TOOL = "trigger-sampling-request"


def tapped(log: Path) -> list[str]:
    return [sys.executable, str(TAP), str(log), "--", *EVERYTHING]


class Traffic:
    """The tap's log: messages in each direction, and where the client's stdin ended."""

    def __init__(self, log: Path) -> None:
        self.entries = [json.loads(line) for line in log.read_text("utf-8").splitlines()]

    def messages(self, direction: str) -> list[dict[str, Any]]:
        return [
            json.loads(e["line"]) for e in self.entries if e["dir"] == direction and "line" in e
        ]

    def before_eof(self) -> list[dict[str, Any]]:
        """What the client wrote before it closed stdin."""
        out = []
        for e in self.entries:
            if e["dir"] == "c2s":
                if e.get("eof"):
                    return out
                out.append(json.loads(e["line"]))
        raise AssertionError("the client never closed stdin")

    def server_requests(self) -> list[dict[str, Any]]:
        return [m for m in self.messages("s2c") if "method" in m and "id" in m]


def test_no_roots_registered_no_roots_capability_no_roots_list(
    shell: Shell, tmp_path: Path
) -> None:
    log = tmp_path / "tap.jsonl"

    async def scenario(c: Any) -> None:
        assert text_of(await c.call_tool("echo", {"message": "hi"})) == "Echo: hi"

    shell.run(scenario, tapped(log))
    traffic = Traffic(log)
    sent = traffic.before_eof()
    initialize = next(m for m in sent if m.get("method") == "initialize")
    assert "roots" not in initialize["params"]["capabilities"]
    assert [m["method"] for m in traffic.server_requests()] == []
    # The whole exchange: initialize, initialized, tools/list (the client checks the
    # tool exists) or not, tools/call; nothing else, and no answer owed at close.
    assert [m.get("method") for m in sent if "method" in m][:2] == [
        "initialize",
        "notifications/initialized",
    ]
    assert not [m for m in sent if "method" not in m]  # no responses: nothing was asked


def test_registered_roots_are_declared_and_served(shell: Shell, tmp_path: Path) -> None:
    log = tmp_path / "tap.jsonl"
    messages: list[str] = []

    def on_note(server: Any, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/message":
            messages.append(str(params.get("data")))

    async def scenario(c: Any) -> None:
        c.on_notification(on_note)
        await c.ping()
        # The server asks roots/list after the handshake and logs what it got.
        assert await shell.wait_for(lambda: any("Roots updated" in m for m in messages))

    root = {"uri": "file:///tmp/tap-root", "name": "tap"}
    shell.run_client(
        scenario,
        [{"name": "everything", "command": tapped(log), "read_timeout": 20}],
        roots=[root],
    )
    traffic = Traffic(log)
    sent = traffic.before_eof()
    initialize = next(m for m in sent if m.get("method") == "initialize")
    assert initialize["params"]["capabilities"]["roots"] == {"listChanged": True}
    [ask] = [m for m in traffic.server_requests() if m["method"] == "roots/list"]
    [answer] = [m for m in sent if m.get("id") == ask["id"] and "method" not in m]
    assert answer["result"]["roots"] == [root]


def test_server_requests_pending_at_close_are_answered_before_stdin_closes(
    shell: Shell, tmp_path: Path
) -> None:
    log = tmp_path / "tap.jsonl"
    release = threading.Event()
    asked = threading.Event()

    if shell.is_trio:

        async def sampling(messages: Any) -> str:
            asked.set()
            await trio.sleep(60)  # never answers before close
            return "late"

        handler: Any = sampling
    else:

        def blocking_sampling(messages: Any) -> str:
            asked.set()
            release.wait(60)
            return "late"

        handler = blocking_sampling

    async def scenario(c: Any) -> None:
        for _ in range(100):  # the tool appears once the server saw our capabilities
            if SAMPLING_TOOL in {t.name for t in await c.list_tools()}:
                break
            await shell.sleep(0.05)
        # The tool waits for our sampling answer; we give up on the tool first.
        with pytest.raises(shell.mod.RequestTimeoutError):
            await c.call_tool(SAMPLING_TOOL, {"prompt": "hi", "maxTokens": 5}, timeout=1)
        assert asked.is_set()

    try:
        shell.run_client(
            scenario,
            [{"name": "everything", "command": tapped(log), "read_timeout": 20}],
            sampling_handler=handler,
            roots=[{"uri": "file:///tmp/tap-root"}],
        )
    finally:
        release.set()
    traffic = Traffic(log)
    # Every request the server sent got exactly one answer before stdin closed: the
    # roots/list from the handshake a result, the sampling still running an error.
    sent_before_eof = {m["id"] for m in traffic.before_eof() if "method" not in m}
    assert {m["id"] for m in traffic.server_requests()} <= sent_before_eof
    [ask] = [m for m in traffic.server_requests() if m["method"] == "sampling/createMessage"]
    sent = traffic.before_eof()
    [answer] = [m for m in sent if m.get("id") == ask["id"] and "method" not in m]
    assert answer["error"]["code"] == CLOSING_CODE
    # ... and exactly one answer in all, the late handler's result is not sent after it.
    assert len([m for m in traffic.messages("c2s") if m.get("id") == ask["id"]]) == 1
