"""Both shells over the deprecated HTTP+SSE transport against the real servers that
speak it (server-everything's ``sse`` mode and the SDK's SSE server), with the wire
recorded by a transparent tap in front of each (tests/servers/http_tap.py): what the
client declared, and in which order its messages reached the server (issue 24, A, B).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from ._http_support import HTTP_READ_TIMEOUT, PeerPool, http_tap
from .conftest import PEERS_NODE_MODULES, Shell, text_of

pytestmark = pytest.mark.peer

SERVERS = ["everything", "sdk"]
servers = pytest.mark.parametrize("server", SERVERS)


@pytest.fixture(scope="module")
def peers() -> Iterator[PeerPool]:
    pool = PeerPool()
    try:
        yield pool
    finally:
        pool.close()


def sse_peer(peers: PeerPool, server: str) -> Any:
    if server == "everything":
        if not PEERS_NODE_MODULES.is_dir() or not shutil.which("node"):
            pytest.skip("server-everything needs `make peers` and node")  # pragma: no cover
        return peers.everything("sse")
    return peers.sdk("sse")


def sampling(messages: Any, prefs: Any, system_prompt: Any, max_tokens: Any) -> str:
    return "the host model answers"


def elicitation(message: str, schema: Any) -> Any:
    return {"action": "accept", "content": {"name": "Ada"}}


HANDLERS: dict[str, Any] = {
    "sampling_handler": sampling,
    "elicitation_handler": elicitation,
    "roots": [{"uri": "file:///tmp/sse-root", "name": "workspace"}],
}


def declared(tap: Any) -> dict[str, Any]:
    (init,) = tap.recorder.posts("initialize")
    caps: dict[str, Any] = init.json["params"]["capabilities"]
    return caps


# ================================================================ A: capabilities


@servers
def test_initialize_over_sse_declares_the_handlers_capabilities(
    shell: Shell, peers: PeerPool, server: str
) -> None:
    peer = sse_peer(peers, server)

    async def scenario(c: Any) -> None:
        [conn] = c.servers
        assert conn.type == "sse"
        if server == "everything":
            # It registers these tools only for a client that declared the capability.
            names = {t.name for t in await c.list_tools()}
            for _ in range(100):
                if "trigger-sampling-request" in names:
                    break
                await shell.sleep(0.05)
                names = {t.name for t in await c.list_tools()}
            assert {
                "trigger-sampling-request",
                "trigger-elicitation-request",
                "get-roots-list",
            } <= names
            got = await c.call_tool("trigger-sampling-request", {"prompt": "hi", "maxTokens": 9})
            assert "the host model answers" in text_of(got)
        else:
            assert text_of(await c.call_tool("sample", {"prompt": "hi"})) == (
                "the host model answers"
            )
            assert json.loads(text_of(await c.call_tool("elicit_name", {}))) == {
                "action": "accept",
                "content": {"name": "Ada"},
            }
            roots = json.loads(text_of(await c.call_tool("list_roots", {})))
            assert [r["uri"] for r in roots] == ["file:///tmp/sse-root"]

    with http_tap.http_tap(peer) as tap:
        shell.run(scenario, tap.url, read_timeout=HTTP_READ_TIMEOUT, deadline=60, **HANDLERS)
        caps = declared(tap)
    assert caps["sampling"] == {}
    assert caps["roots"] == {"listChanged": True}
    assert "form" in caps["elicitation"]


@servers
def test_without_handlers_nothing_is_declared_over_sse(
    shell: Shell, peers: PeerPool, server: str
) -> None:
    async def scenario(c: Any) -> None:
        assert await c.ping() == {}

    with http_tap.http_tap(sse_peer(peers, server)) as tap:
        shell.run(scenario, tap.url, read_timeout=HTTP_READ_TIMEOUT, deadline=60)
        assert declared(tap) == {}
