"""Server-initiated traffic over Streamable HTTP from a TypeScript-SDK server (issue 8,
item 1): server-everything keeps an event store, so a GET that carries a
``Last-Event-ID`` is a resume of the stream that id belongs to. The standalone GET
stream must therefore open without one (2025-11-25 § Resumability: each stream is
resumed with its own last event id), or the server never opens it and everything it
sends there (log messages, list_changed, roots/list) is lost.

Both shells, against the real server (``tests/peers``).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from ._http_support import HTTP_READ_TIMEOUT, PeerPool
from .conftest import EVERYTHING_BIN, PEERS_NODE_MODULES, Shell, text_of

if not PEERS_NODE_MODULES.is_dir():
    pytest.skip(
        f"{PEERS_NODE_MODULES} is missing: run `npm ci` in tests/peers (make test does)",
        allow_module_level=True,
    )

pytestmark = pytest.mark.peer

assert EVERYTHING_BIN.exists(), f"{EVERYTHING_BIN} missing although node_modules is installed"
assert shutil.which("node"), "node is not on PATH"


@pytest.fixture(scope="module")
def peers() -> Iterator[PeerPool]:
    pool = PeerPool()
    try:
        yield pool
    finally:
        pool.close()


def test_log_messages_arrive_after_set_log_level(shell: Shell, peers: PeerPool) -> None:
    url = peers.everything("streamableHttp").url
    messages: list[dict[str, Any]] = []

    def on_note(server: Any, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/message":
            messages.append(params)

    async def scenario(c: Any) -> None:
        c.on_notification(on_note)
        # Named after its host and port (issue 24 E).
        assert await c.set_log_level("debug") == [urlsplit(url).netloc]
        # Sends one message at once (on the standalone GET stream: it is not tied to
        # the tools/call), then one every few seconds until toggled off.
        await c.call_tool("toggle-simulated-logging", {})
        try:
            assert await shell.wait_for(lambda: bool(messages), timeout=8)
        finally:
            await c.call_tool("toggle-simulated-logging", {})

    shell.run(scenario, url, read_timeout=HTTP_READ_TIMEOUT, deadline=40)
    assert messages and isinstance(messages[0].get("level"), str)


def test_get_roots_list_is_answered(shell: Shell, peers: PeerPool) -> None:
    url = peers.everything("streamableHttp").url
    root = {"uri": "file:///tmp/shttp-root", "name": "workspace"}

    async def scenario(c: Any) -> str:
        # The tool sends roots/list to the client on the standalone stream and waits
        # for the answer; without that stream it would wait until our timeout.
        return text_of(await c.call_tool("get-roots-list", {}, timeout=8))

    text = shell.run(scenario, url, roots=[root], read_timeout=HTTP_READ_TIMEOUT, deadline=40)
    assert "file:///tmp/shttp-root" in text
    assert "workspace" in text
