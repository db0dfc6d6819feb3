"""Both shells over the deprecated HTTP+SSE transport against the real servers that
speak it (server-everything's ``sse`` mode and the SDK's SSE server), with the wire
recorded by a transparent tap in front of each (tests/servers/http_tap.py): what the
client declared, and in which order its messages reached the server (issue 24, A, B).
"""

from __future__ import annotations

import itertools
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


# ================================================================ B: message order

#: Connects per shell and server: the race it guards against showed in 3 of 8 runs.
RUNS = 20
#: server-everything's tools for a client that declared nothing, once the session is
#: set up (after notifications/initialized); a half-set-up session lists 12.
EVERYTHING_TOOLS = 13


def in_order(tap: Any, posts: list[Any]) -> None:
    """Each POST reached the tap (and so the server) after the server had answered
    the previous one: the server got them in the order the client sent them."""
    for before, after in itertools.pairwise(posts):
        assert after.t > tap.answered[before.seq], (before.rpc_method, after.rpc_method)


@servers
def test_initialized_reaches_the_server_before_any_request_in_every_run(
    shell: Shell, peers: PeerPool, server: str
) -> None:
    counts: list[int] = []

    async def scenario(c: Any) -> None:
        counts.append(len(await c.list_tools()))

    with http_tap.http_tap(sse_peer(peers, server)) as tap:
        for _ in range(RUNS):
            first = len(tap.recorder.requests)
            shell.run(scenario, tap.url, read_timeout=HTTP_READ_TIMEOUT, deadline=60)
            assert tap.recorder.wait_for(
                lambda r, first=first: all(x.status for x in r.requests[first:] if x.body)
            )
            posts = [r for r in tap.recorder.requests[first:] if r.method == "POST"]
            methods = [r.rpc_method for r in posts]
            assert methods[:3] == ["initialize", "notifications/initialized", "tools/list"]
            in_order(tap, posts)
    if server == "everything":
        assert counts == [EVERYTHING_TOOLS] * RUNS
    else:
        assert len(set(counts)) == 1


@servers
def test_messages_reach_the_server_in_the_order_sent(
    shell: Shell, peers: PeerPool, server: str
) -> None:
    # Concurrent calls: each POST still waits for the previous one's head, so the
    # server sees the requests in the order the client put them on the wire.
    tool = {"everything": ("echo", "message"), "sdk": ("echo", "text")}[server]

    async def scenario(c: Any) -> None:
        thunks = [(lambda i=i: c.call_tool(tool[0], {tool[1]: f"m{i}"})) for i in range(8)]
        results = await shell.gather(thunks)
        assert [text_of(r).endswith(f"m{i}") for i, r in enumerate(results)] == [True] * 8

    with http_tap.http_tap(sse_peer(peers, server)) as tap:
        shell.run(scenario, tap.url, read_timeout=HTTP_READ_TIMEOUT, deadline=60)
        posts = tap.recorder.posts()
        assert len([p for p in posts if p.rpc_method == "tools/call"]) == 8
        in_order(tap, posts)
