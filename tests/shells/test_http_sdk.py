"""Both shells over HTTP against the official SDK server (tests/servers/sdk_server.py under
uvicorn on 127.0.0.1): Streamable HTTP (stateful, stateless, JSON replies), plain HTTP and the
deprecated HTTP+SSE; plus ``connect()`` detection and fallback (issue 3, "How it is proven").

Each scenario is one ``async def scenario(client)`` run by the ``shell`` fixture under
``mcp_io_sync`` and under ``mcp_io_trio`` (see conftest.py). The SDK servers are started once
per module (``peers``) and shared: their state (dynamic tools, recorded events) is global, so
the scenarios never depend on a fresh server.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from mcp_proto import deprecations, errors
from mcp_proto.config import sse_config

from ._http_support import (
    HTTP_READ_TIMEOUT,
    PeerPool,
    flex_http_server,
    free_port,
    hostile_http_server,
    requests_logged,
    wait_for_sdk_event,
)
from .conftest import Shell, text_of

#: Handshake-era behaviour (server requests, sessions, the GET stream, initialize on the
#: wire): pinned to protocol="legacy" (conftest ``Shell.protocol``); the 2026-07-28 era
#: has its own suites (test_modern_*.py, test_dual_era_matrix.py).
PROTOCOL = "legacy"

pytestmark = pytest.mark.peer

DEADLINE = 30.0

CONTRACT_TOOLS = {
    "echo",
    "add",
    "slow",
    "progress",
    "sample",
    "elicit_name",
    "list_roots",
    "change_tools",
    "events",
}


@dataclass(frozen=True)
class Variant:
    """One way of reaching the SDK server over HTTP."""

    id: str
    mode: str  # sdk_http_server mode
    type: str  # the server's transport type once connected
    transport: str | None = None  # connect(transport=...); None: detected from the URL
    channel: bool = False  # server->client requests work (sampling, elicitation, roots)
    notifications: bool = False  # notifications unrelated to a request reach the client
    progress: bool = False  # progress notifications reach the client during a call
    cancel_seen: bool = False  # the server's handler is cancelled when a call times out


SHTTP = "streamable_http"
VARIANTS = [
    # Stateful, SSE replies, GET stream: everything works.
    Variant(
        "shttp",
        "streamable-http",
        SHTTP,
        channel=True,
        notifications=True,
        progress=True,
        cancel_seen=True,
    ),
    # JSON replies: no progress during a call, no back-channel for requests tied to a call.
    Variant("shttp-json", "streamable-http+json", SHTTP, notifications=True, cancel_seen=True),
    # Stateless: no session, no GET stream.
    Variant("shttp-stateless", "streamable-http+stateless", SHTTP, progress=True, cancel_seen=True),
    Variant("shttp-stateless-json", "streamable-http+stateless+json", SHTTP),
    # Plain HTTP: request/response.
    Variant("http", "streamable-http+stateless+json", "http", transport="http"),
    # The deprecated HTTP+SSE transport: one event stream carries everything.
    Variant("sse", "sse", "sse", channel=True, notifications=True, progress=True, cancel_seen=True),
]


def _variants(**want: bool) -> Any:
    chosen = [v for v in VARIANTS if all(getattr(v, k) == val for k, val in want.items())]
    return pytest.mark.parametrize("variant", chosen, ids=[v.id for v in chosen])


all_variants = _variants()


@pytest.fixture(scope="module")
def peers() -> Iterator[PeerPool]:
    pool = PeerPool()
    try:
        yield pool
    finally:
        pool.close()


def run(shell: Shell, peers: PeerPool, variant: Variant, scenario: Any, **kwargs: Any) -> Any:
    """``scenario(client)`` connected to the variant's SDK server."""
    peer = peers.sdk(variant.mode)
    if variant.transport is not None:
        kwargs.setdefault("transport", variant.transport)
    kwargs.setdefault("read_timeout", HTTP_READ_TIMEOUT)
    return shell.run(scenario, peer.url, deadline=DEADLINE, **kwargs)


# ---------------------------------------------------------------------- the SDK server


@all_variants
def test_connect_list_tools_and_call(shell: Shell, peers: PeerPool, variant: Variant) -> None:
    async def scenario(c: Any) -> None:
        [server] = c.servers
        assert server.type == variant.type
        assert server.is_connected
        assert server.protocol_version == "2025-11-25"
        assert server.info.server_info.name == "mcp-proto-sdk-test-server"
        assert server.has_capability("tools", "listChanged")
        assert await c.ping() == {}

        tools = {t.name: t for t in await c.list_tools()}
        assert set(tools) >= CONTRACT_TOOLS
        assert tools["add"].has_structured_output
        assert not tools["echo"].has_structured_output

        assert text_of(await c.call_tool("echo", {"text": "héllo\nworld"})) == "héllo\nworld"
        added = await c.call_tool("add", {"a": 2, "b": 40})
        assert added["structuredContent"] == {"sum": 42}
        assert added["isError"] is False
        failed = await c.call_tool("fail")
        assert failed["isError"] is True and "intentional failure" in text_of(failed)
        with pytest.raises(errors.ServerError) as info:
            await c.send_rpc("bogus/method", {})
        assert info.value.code == -32601
        # Many requests in flight at once, each gets its own answer.
        results = await shell.gather(
            [lambda i=i: c.call_tool("echo", {"text": f"m{i}"}) for i in range(8)]
        )
        assert [text_of(r) for r in results] == [f"m{i}" for i in range(8)]

    run(shell, peers, variant, scenario)
    assert requests_logged(shell, "tools/list") == 1  # call_tool used the cache


@all_variants
def test_resources_prompts_and_completion(shell: Shell, peers: PeerPool, variant: Variant) -> None:
    async def scenario(c: Any) -> None:
        by_uri = {r.uri: r for r in (await c.list_resources())["resources"]}
        assert set(by_uri) == {"demo://text", "demo://blob"}
        [text] = await c.read_resource("demo://text")
        assert text.text == "Hello from demo://text"
        [blob] = await c.read_resource("demo://blob")
        assert blob.data == bytes(range(256))
        [item] = await c.read_resource("demo://item/42")
        assert item.text == "item 42"
        with pytest.raises(errors.ResourceNotFound):
            await c.read_resource("demo://nope")

        [greet] = await c.list_prompts()
        assert greet.name == "greet"
        got = await c.get_prompt("greet", {"name": "Ann"})
        assert got["messages"] == [
            {"role": "user", "content": {"type": "text", "text": "Please greet Ann."}}
        ]
        names = await c.complete(
            {"type": "ref/prompt", "name": "greet"}, {"name": "name", "value": "Al"}
        )
        assert names["values"] == ["Alice", "Alex"]
        ids = await c.complete(
            {"type": "ref/resource", "uri": "demo://item/{id}"}, {"name": "id", "value": "1"}
        )
        assert ids["values"] == ["1", "10"]

    run(shell, peers, variant, scenario)


@_variants(progress=True)
def test_progress_callback(shell: Shell, peers: PeerPool, variant: Variant) -> None:
    steps: list[tuple[float, float | None, str | None]] = []

    async def scenario(c: Any) -> None:
        result = await c.call_tool(
            "progress",
            {"steps": 4, "delay": 0.01},
            progress=lambda p, total, message: steps.append((p, total, message)),
        )
        assert text_of(result) == "done"
        await c.flush_callbacks()

    run(shell, peers, variant, scenario)
    assert steps == [(float(i), 4.0, f"step {i}/4") for i in range(1, 5)]


@_variants(channel=True)
def test_sampling_elicitation_and_roots(shell: Shell, peers: PeerPool, variant: Variant) -> None:
    sampled: list[Any] = []
    elicited: list[Any] = []

    def sampling(messages: list[dict[str, Any]], prefs: Any, system: Any, max_tokens: Any) -> str:
        sampled.append((messages, max_tokens))
        return "model says: " + messages[0]["content"]["text"]

    def elicitation(message: str, schema: Any) -> Any:
        elicited.append((message, schema))
        return {"action": "accept", "content": {"name": "Ann"}}

    async def scenario(c: Any) -> None:
        assert text_of(await c.call_tool("sample", {"prompt": "hello?"})) == "model says: hello?"
        answer = json.loads(text_of(await c.call_tool("elicit_name")))
        assert answer == {"action": "accept", "content": {"name": "Ann"}}
        assert json.loads(text_of(await c.call_tool("list_roots"))) == [
            {"uri": "file:///tmp/initial", "name": "init"}
        ]
        await c.set_roots([{"uri": "file:///srv/a"}, {"uri": "file:///srv/b", "name": "b"}])
        assert json.loads(text_of(await c.call_tool("list_roots"))) == [
            {"uri": "file:///srv/a"},
            {"uri": "file:///srv/b", "name": "b"},
        ]

    run(
        shell,
        peers,
        variant,
        scenario,
        sampling_handler=sampling,
        elicitation_handler=elicitation,
        roots=[{"uri": "file:///tmp/initial", "name": "init"}],
    )
    assert sampled == [([{"role": "user", "content": {"type": "text", "text": "hello?"}}], 100)]
    assert elicited[0][0] == "What is your name?"


@_variants(notifications=True)
def test_tools_list_changed_invalidates_the_cache(
    shell: Shell, peers: PeerPool, variant: Variant
) -> None:
    """On Streamable HTTP the notification is not related to a request: it arrives on the
    GET stream (on HTTP+SSE on the one event stream)."""
    seen: list[str] = []

    async def scenario(c: Any) -> None:
        c.on_notification(lambda server, method, params: seen.append(method))
        before = {t.name for t in await c.list_tools()}
        name = text_of(await c.call_tool("change_tools"))
        assert name.startswith("dynamic_") and name not in before
        assert await shell.wait_for(lambda: "notifications/tools/list_changed" in seen)
        # The cache was dropped before the callback ran: this list_tools asks again.
        assert name in {t.name for t in await c.list_tools()}
        assert requests_logged(shell, "tools/list") == 2
        assert text_of(await c.call_tool(name)) == f"dynamic {name.removeprefix('dynamic_')}"

    run(shell, peers, variant, scenario)


@all_variants
def test_timeout_raises_and_the_server_sees_the_cancellation(
    shell: Shell, peers: PeerPool, variant: Variant
) -> None:
    async def scenario(c: Any) -> None:
        # The 0.5 s limit ended it, not the tool (that would return its result).
        with pytest.raises(errors.RequestTimeoutError) as info:
            await c.call_tool("slow", {"seconds": 10 if variant.cancel_seen else 3}, timeout=0.5)
        assert isinstance(info.value, TimeoutError)
        # The client stays usable.
        assert text_of(await c.call_tool("echo", {"text": "after"}, timeout=5)) == "after"
        if variant.cancel_seen:
            recorded = await wait_for_sdk_event(shell, c, "slow:cancelled")
            assert "slow:cancelled" in recorded
            assert "slow:done" not in recorded

    run(shell, peers, variant, scenario)
    if variant.cancel_seen:
        assert "SLOW CANCELLED seconds=10" in peers.sdk(variant.mode).output()


@all_variants
def test_cleanup_then_call_reconnects(shell: Shell, peers: PeerPool, variant: Variant) -> None:
    async def scenario(c: Any) -> None:
        assert text_of(await c.call_tool("echo", {"text": "one"})) == "one"
        await c.cleanup()
        assert not c.servers[0].is_connected
        assert text_of(await c.call_tool("echo", {"text": "two"})) == "two"
        assert c.servers[0].is_connected
        assert c.servers[0].type == variant.type
        await c.cleanup()
        await c.cleanup()  # idempotent
        assert await c.ping() == {}

    run(shell, peers, variant, scenario)
    connects = [m for m in shell.log.messages(logging.DEBUG) if m.startswith("connected to ")]
    assert len(connects) == 3


def test_sse_cleanup_and_reconnect_repeatedly(shell: Shell, peers: PeerPool) -> None:
    """Every reconnection opens its own event stream and waits for its own endpoint event
    (keep-alive pings off: only the reconnection is exercised)."""
    config = sse_config(peers.sdk("sse").url, ping=None, read_timeout=HTTP_READ_TIMEOUT)

    async def scenario(c: Any) -> None:
        for i in range(5):
            assert text_of(await c.call_tool("echo", {"text": f"round {i}"})) == f"round {i}"
            assert c.servers[0].is_connected
            await c.cleanup()
            assert not c.servers[0].is_connected

    shell.run_client(scenario, [config], deadline=DEADLINE)
    connects = [m for m in shell.log.messages(logging.DEBUG) if m.startswith("connected to ")]
    assert len(connects) == 5


def test_sse_deprecation_notice_is_logged_once_per_process(shell: Shell, peers: PeerPool) -> None:
    url = peers.sdk("sse").url

    async def scenario(c: Any) -> None:
        assert c.servers[0].type == "sse"
        assert await c.ping() == {}
        await c.cleanup()
        assert await c.ping() == {}  # a reconnection: still no second notice

    def notices(sh: Shell) -> list[str]:
        return [
            m for m in sh.log.messages(logging.WARNING) if "HTTP+SSE transport is deprecated" in m
        ]

    deprecations.reset()
    shell.run(scenario, url, read_timeout=HTTP_READ_TIMEOUT, deadline=DEADLINE)
    shell.run(scenario, url, read_timeout=HTTP_READ_TIMEOUT, deadline=DEADLINE)
    other = Shell(shell.kind, shell.protocol)  # another client, another logger, the same process
    other.run(scenario, url, read_timeout=HTTP_READ_TIMEOUT, deadline=DEADLINE)
    [notice] = notices(shell)
    assert "Migrate the server to Streamable HTTP" in notice
    assert notices(other) == []
    # Not for Streamable HTTP.
    deprecations.reset()
    third = Shell(shell.kind, shell.protocol)
    third.run(scenario_shttp, peers.sdk("streamable-http").url, read_timeout=HTTP_READ_TIMEOUT)
    assert notices(third) == []


async def scenario_shttp(c: Any) -> None:
    assert c.servers[0].type == "streamable_http"
    assert await c.ping() == {}


# ---------------------------------------------------------------------- sessions, headers


def test_cleanup_sends_delete_for_the_session(shell: Shell) -> None:
    with hostile_http_server("ok") as peer:
        rec = peer.recorder

        async def scenario(c: Any) -> None:
            assert text_of(await c.call_tool("t")) == "ok"
            await c.cleanup()
            assert not c.servers[0].is_connected
            assert [d.header("mcp-session-id") for d in rec.deletes()] == ["hs-1"]
            # The next call opens a new session.
            assert text_of(await c.call_tool("t")) == "ok"
            assert rec.sessions == ["hs-1", "hs-2"]
            assert rec.posts("tools/call")[-1].header("mcp-session-id") == "hs-2"

        shell.run(scenario, peer.url, read_timeout=HTTP_READ_TIMEOUT, deadline=DEADLINE)
        # Closing the client ends the second session too.
        assert [d.header("mcp-session-id") for d in rec.deletes()] == ["hs-1", "hs-2"]
        assert [d.status for d in rec.deletes()] == [200, 200]
        # After initialize, every request carries the session and the negotiated version.
        for req in rec.requests:
            if req.rpc_method == "initialize":
                assert req.header("mcp-session-id") is None
                continue
            assert req.header("mcp-session-id") in ("hs-1", "hs-2"), req
            assert req.header("mcp-protocol-version") == "2025-11-25", req


def test_configured_headers_are_sent_on_every_request(shell: Shell) -> None:
    headers = {
        "X-Api-Key": "k-123",
        "Authorization": "Bearer tok",
        "Mcp-Session-Id": "forged",  # a protocol header: the client's own value wins
    }
    with hostile_http_server("ok") as peer:
        rec = peer.recorder

        async def scenario(c: Any) -> None:
            await c.list_tools()
            assert text_of(await c.call_tool("t")) == "ok"
            assert await c.ping() == {}

        shell.run(
            scenario,
            peer.url,
            headers=headers,
            read_timeout=HTTP_READ_TIMEOUT,
            deadline=DEADLINE,
        )
        requests = rec.requests
        assert {r.method for r in requests} >= {"POST", "DELETE"}
        for req in requests:
            assert req.header_values("x-api-key") == ["k-123"], req
            assert req.header_values("authorization") == ["Bearer tok"], req
            assert "forged" not in req.header_values("mcp-session-id"), req
            assert len(req.header_values("mcp-session-id")) <= 1, req


# ---------------------------------------------------------------------- plain HTTP (HTTP-4)


def test_plain_http_declares_no_capability_needing_a_server_channel(shell: Shell) -> None:
    handlers = {
        "sampling_handler": lambda messages: "never used",
        "elicitation_handler": lambda message, schema: {"action": "decline"},
        "roots": [{"uri": "file:///tmp/r", "name": "r"}],
    }

    def declared(rec: Any) -> dict[str, Any]:
        [init] = rec.posts("initialize")
        return dict(init.json["params"]["capabilities"])

    async def scenario(c: Any) -> None:
        assert text_of(await c.call_tool("t")) == "ok"

    with flex_http_server("ok") as peer:
        shell.run(
            scenario,
            peer.url,
            transport="http",
            read_timeout=HTTP_READ_TIMEOUT,
            deadline=DEADLINE,
            **handlers,
        )
        caps = declared(peer.recorder)
        assert not {"roots", "sampling", "elicitation"} & set(caps), caps
        # Plain HTTP: request/response only, no GET stream.
        assert peer.recorder.gets() == []
        for post in peer.recorder.posts():
            assert "text/event-stream" not in (post.header("accept") or ""), post
    # The same client over Streamable HTTP does declare them: the check above can fail.
    with flex_http_server("ok") as peer:
        shell.run(
            scenario,
            peer.url,
            transport="streamable_http",
            read_timeout=HTTP_READ_TIMEOUT,
            deadline=DEADLINE,
            **handlers,
        )
        caps = declared(peer.recorder)
        assert {"roots", "sampling", "elicitation"} <= set(caps), caps


# ---------------------------------------------------------------------- connect() detection


def test_detection_by_path_and_a_list_of_urls(shell: Shell, peers: PeerPool) -> None:
    shttp, sse = peers.sdk("streamable-http").url, peers.sdk("sse").url
    assert shttp.endswith("/mcp") and sse.endswith("/sse")

    async def scenario(c: Any) -> None:
        assert [s.type for s in c.servers] == ["streamable_http", "sse"]
        first, second = (s.name for s in c.servers)
        assert first != second
        assert all(s.is_connected for s in c.servers)  # connect() connects them all
        tools = await c.list_tools()
        assert {t.server for t in tools if t.name == "echo"} == {first, second}
        with pytest.raises(errors.AmbiguousToolName):
            await c.call_tool("echo", {"text": "which one?"})
        assert text_of(await c.call_tool("echo", {"text": "a"}, server=first)) == "a"
        assert text_of(await c.call_tool("echo", {"text": "b"}, server=second)) == "b"

    shell.run(scenario, [shttp, sse], read_timeout=HTTP_READ_TIMEOUT, deadline=DEADLINE)


def test_another_path_is_tried_as_streamable_http_first(shell: Shell) -> None:
    with flex_http_server("ok", alias="/api/v1") as peer:

        async def scenario(c: Any) -> None:
            assert c.servers[0].type == "streamable_http"
            assert text_of(await c.call_tool("t")) == "ok"

        shell.run(scenario, peer.url, read_timeout=HTTP_READ_TIMEOUT, deadline=DEADLINE)
        first = peer.recorder.requests[0]
        assert (first.method, first.path, first.rpc_method) == ("POST", "/api/v1", "initialize")


def test_fallback_to_legacy_sse(shell: Shell) -> None:
    """A URL that is neither ``/mcp`` nor ``/sse``, served only as legacy HTTP+SSE."""
    with hostile_http_server("legacy_sse_ok") as peer:
        rec = peer.recorder

        async def scenario(c: Any) -> None:
            assert c.servers[0].type == "sse"
            assert text_of(await c.call_tool("t")) == "ok"
            assert await c.ping() == {}

        shell.run(scenario, peer + "/", read_timeout=HTTP_READ_TIMEOUT, deadline=DEADLINE)
        methods = [(r.method, r.path) for r in rec.requests]
        # Streamable HTTP first (refused: the URL is used as given, so it posts to "/",
        # which serves only the legacy GET stream), then the event stream.
        first = rec.requests[0]
        assert (first.method, first.path, first.rpc_method, first.status) == (
            "POST",
            "/",
            "initialize",
            405,
        )
        assert methods[1] == ("GET", "/")
        assert {r.path for r in rec.posts()[1:]} == {"/messages"}


def test_fallback_to_plain_http(shell: Shell) -> None:
    """Streamable HTTP refused (406), no event stream (405): plain HTTP works."""
    with flex_http_server("ok", alias="/rpc", plain_only=True) as peer:
        rec = peer.recorder

        async def scenario(c: Any) -> None:
            assert c.servers[0].type == "http"
            assert text_of(await c.call_tool("t")) == "ok"

        shell.run(scenario, peer.url, read_timeout=HTTP_READ_TIMEOUT, deadline=DEADLINE)
        statuses = [(r.method, r.status) for r in rec.requests[:3]]
        assert statuses == [("POST", 406), ("GET", 405), ("POST", 200)]


def test_nothing_listening_is_one_error_naming_every_attempt(shell: Shell) -> None:
    url = f"http://127.0.0.1:{free_port()}/somewhere"

    async def scenario(c: Any) -> None:
        raise AssertionError("connected to nothing")

    with pytest.raises(errors.ConnectionError) as info:
        shell.run(scenario, url, read_timeout=5, deadline=DEADLINE)
    message = str(info.value)
    assert "tried all transports" in message
    assert url in message
    for kind in ("streamable_http:", "sse:", "http:"):
        assert kind in message, message


def test_transport_forces_one(shell: Shell) -> None:
    async def plain(c: Any) -> None:
        assert c.servers[0].type == "http"
        assert text_of(await c.call_tool("t")) == "ok"

    with flex_http_server("ok", alias="/rpc") as peer:
        shell.run(
            plain, peer.url, transport="http", read_timeout=HTTP_READ_TIMEOUT, deadline=DEADLINE
        )
        # No detection: plain POSTs from the first request on, no GET stream.
        assert peer.recorder.gets() == []
        assert "text/event-stream" not in (peer.recorder.requests[0].header("accept") or "")

    async def legacy(c: Any) -> None:
        assert c.servers[0].type == "sse"
        assert text_of(await c.call_tool("t")) == "ok"

    with hostile_http_server("legacy_sse_ok") as peer:
        shell.run(
            legacy, peer + "/", transport="sse", read_timeout=HTTP_READ_TIMEOUT, deadline=DEADLINE
        )
        assert peer.recorder.requests[0].method == "GET"  # no Streamable HTTP attempt

    # Forcing a transport the server does not speak fails, without trying the others.
    with hostile_http_server("legacy_sse_ok") as peer:
        with pytest.raises(errors.MCPError) as info:
            shell.run(
                legacy,
                peer + "/",
                transport="streamable_http",
                read_timeout=HTTP_READ_TIMEOUT,
                deadline=DEADLINE,
            )
        assert "tried all transports" not in str(info.value)
        assert {r.method for r in peer.recorder.requests} == {"POST"}
