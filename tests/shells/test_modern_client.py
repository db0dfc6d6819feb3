"""The 2026-07-28 revision in the client operations, over both shells (issue 10).

Real peer: the SDK server (``mcp==2.3.0``, dual era) forced modern, over stdio and
Streamable HTTP: list / call / read / prompt, the era introspection, the log level as
``_meta`` and the cache (its results carry ``ttlMs`` 0: every access refetches).

Scripted peer (``tests/servers/hostile_modern.py``) for what real servers do not
produce on demand: a positive ``ttlMs`` and private scopes (requests counted on the
server), -32020 once then twice, ``input_required`` for 11 rounds, a state-only wait
and malformed input requests. Every request the peer received validates against the
2026-07-28 schema.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ._http_support import HTTP_READ_TIMEOUT, PeerPool, requests_logged
from .conftest import SDK_SERVER, SERVERS, Shell, text_of

if str(SERVERS) not in sys.path:
    sys.path.insert(0, str(SERVERS))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "proto" / "modern"))

import hostile_modern
from _modern_wire import REQUEST_DEFS, assert_valid_request, request

HOSTILE_MODERN = [sys.executable, str(SERVERS / "hostile_modern.py")]


@pytest.fixture(scope="module")
def peers() -> Iterator[PeerPool]:
    pool = PeerPool()
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture
def modern_http() -> Iterator[Any]:
    """``start(modes, **options)`` -> (url, peer) of an in-process scripted modern peer;
    every one started is stopped at the end, and its requests schema-checked."""
    started: list[tuple[Any, Any]] = []

    def start(modes: str, **options: Any) -> tuple[str, Any]:
        url, stop, peer = hostile_modern.start_http(modes, **options)
        started.append((stop, peer))
        return url, peer

    yield start
    for stop, peer in started:
        stop()
        valid_mode = not (peer.modes & hostile_modern.INVALID_MODES)
        for i, got in enumerate(peer.received):
            if valid_mode and got["method"] in REQUEST_DEFS:
                assert_valid_request(request(got["method"], got["params"], i + 1))


def accept_ok(*_: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"ok": True}}


# ---------------------------------------------------------------- the SDK server


def sdk_target(peers: PeerPool, transport: str) -> Any:
    return SDK_SERVER if transport == "stdio" else peers.sdk("streamable-http").url


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_sdk_server_modern_list_call_read_prompt(
    shell: Shell, peers: PeerPool, transport: str
) -> None:
    async def scenario(c: Any) -> None:
        server = c.servers[0]
        assert (server.is_modern, server.protocol_era) == (True, "modern")
        assert server.protocol_version == "2026-07-28"
        names = [t.name for t in await c.list_tools()]
        assert "echo" in names and "add" in names
        assert text_of(await c.call_tool("echo", {"text": "hi"})) == "hi"
        added = await c.call_tool("add", {"a": 2, "b": 3})
        assert added["structuredContent"] == {"sum": 5}
        (content,) = await c.read_resource("demo://text")
        assert content.text == "Hello from demo://text"
        prompt = await c.get_prompt("greet", {"name": "Ada"})
        assert prompt["messages"][0]["content"]["text"] == "Please greet Ada."
        # The SDK server answers ttlMs 0 ("stale at once", private): list_tools() asks
        # again every time; routing a call uses the list already known.
        assert requests_logged(shell, "tools/list") == 1
        await c.list_tools()
        assert requests_logged(shell, "tools/list") == 2
        info = (await c.cache_info("tools"))[server.name]
        assert (info.ttl_ms, info.cache_scope, info.fresh) == (0, "private", False)
        assert server.cache_info("tools") == info
        assert requests_logged(shell, "initialize") == 0

    shell.run(
        scenario, sdk_target(peers, transport), protocol="modern", read_timeout=HTTP_READ_TIMEOUT
    )


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_sdk_server_modern_log_level_is_meta_not_set_level(
    shell: Shell, peers: PeerPool, transport: str
) -> None:
    async def scenario(c: Any) -> None:
        assert await c.set_log_level("error") == [c.servers[0].name]
        assert c.servers[0].log_level == "error"
        await c.call_tool("echo", {"text": "x"})
        assert requests_logged(shell, "logging/setLevel") == 0  # LIFE-15
        notices = [m for m in shell.log.messages() if m.startswith("Logging is deprecated")]
        assert len(notices) <= 1  # once per process (DEP-9): maybe announced already

    shell.run(
        scenario, sdk_target(peers, transport), protocol="modern", read_timeout=HTTP_READ_TIMEOUT
    )


def test_sdk_server_legacy_is_unchanged(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        server = c.servers[0]
        assert (server.is_modern, server.protocol_era) == (False, "legacy")
        await c.list_tools()
        await c.list_tools()
        assert requests_logged(shell, "tools/list") == 1  # TOOL-16: until list_changed
        assert (await c.cache_info("tools")) == {server.name: None}
        await c.set_log_level("debug")
        assert requests_logged(shell, "logging/setLevel") == 1

    shell.run(scenario, SDK_SERVER, protocol="legacy")


# ---------------------------------------------------------------- caching (scripted peer)


def test_fresh_results_are_reused_and_counted_on_the_server(shell: Shell, modern_http: Any) -> None:
    url, peer = modern_http("baseline")

    async def scenario(c: Any) -> None:
        for _ in range(3):
            await c.list_tools()
            await c.read_resource("demo://r")
        await c.call_tool("t")
        info = c.servers[0].cache_info("read", "demo://r")
        assert (info.ttl_ms, info.cache_scope, info.fresh) == (60_000, "public", True)

    shell.run(scenario, url, protocol="modern", read_timeout=HTTP_READ_TIMEOUT)
    assert peer.counts.get("tools/list") == 1  # CACHE-2
    assert peer.counts.get("resources/read") == 1  # CACHE-4


@pytest.mark.parametrize("mode", ["ttl_missing", "ttl_negative", "ttl_string"])
def test_a_malformed_ttl_is_stale_at_once(shell: Shell, modern_http: Any, mode: str) -> None:
    url, peer = modern_http(mode)

    async def scenario(c: Any) -> None:
        for _ in range(2):
            await c.list_tools()
            await c.read_resource("demo://r")

    shell.run(scenario, url, protocol="modern", read_timeout=HTTP_READ_TIMEOUT)
    assert peer.counts.get("tools/list") == 2  # CACHE-5
    assert peer.counts.get("resources/read") == 2


def test_private_results_are_bound_to_the_authorization_sent(
    shell: Shell, modern_http: Any
) -> None:
    url, peer = modern_http("private_scope")

    async def scenario(c: Any) -> None:
        tools = await c.list_tools()
        await c.list_tools()
        (t,) = [x for x in tools if x.name == "t"]
        assert t.description != "for none"  # the server saw our Authorization
        info = c.servers[0].cache_info("tools")
        assert (info.cache_scope, info.fresh) == ("private", True)

    shell.run(
        scenario,
        url,
        protocol="modern",
        headers={"Authorization": "Bearer one"},
        read_timeout=HTTP_READ_TIMEOUT,
    )
    assert peer.counts.get("tools/list") == 1


# ---------------------------------------------------------------- -32020 (HDR-5)


def test_a_header_mismatch_refreshes_the_tool_and_retries_once(
    shell: Shell, modern_http: Any
) -> None:
    url, peer = modern_http("mismatch_once")

    async def scenario(c: Any) -> None:
        result = await c.call_tool("h", {"region": "eu-west"})
        assert text_of(result).startswith("ok h")

    shell.run(scenario, url, protocol="modern", read_timeout=HTTP_READ_TIMEOUT)
    calls = [r for r in peer.received if r["method"] == "tools/call"]
    assert len(calls) == 2
    assert calls[0]["headers"].get("mcp-param-region") == "eu-west"
    # The retry's headers come from the refreshed definition (Region -> Zone).
    assert calls[1]["headers"].get("mcp-param-zone") == "eu-west"
    assert "mcp-param-region" not in calls[1]["headers"]
    assert peer.counts.get("tools/list") == 2
    assert any("-32020" in m for m in shell.log.messages())


def test_a_second_header_mismatch_raises(shell: Shell, modern_http: Any) -> None:
    url, peer = modern_http("mismatch_twice")

    async def scenario(c: Any) -> None:
        with pytest.raises(shell.mod.HeaderMismatchError):
            await c.call_tool("h", {"region": "eu-west"})

    shell.run(scenario, url, protocol="modern", read_timeout=HTTP_READ_TIMEOUT)
    assert peer.counts.get("tools/call") == 2


# ---------------------------------------------------------------- input_required (MRTR)


def hostile_target(transport: str, modern_http: Any, modes: str, **options: Any) -> Any:
    if transport == "http":
        return modern_http(modes, **options)[0]
    argv = [*HOSTILE_MODERN, modes]
    for key, value in options.items():
        argv += ["--opt", f"{key}={value}"]
    return argv


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_eleven_rounds_fail_resumably_then_resume_completes(
    shell: Shell, modern_http: Any, transport: str
) -> None:
    target = hostile_target(transport, modern_http, "input_required", rounds=11)

    async def scenario(c: Any) -> None:
        with pytest.raises(shell.mod.InputRequiredError) as caught:
            await c.call_tool("t")
        err = caught.value
        assert err.resumable and err.reason == "rounds"  # MRTR-3: at most 10
        assert err.request_state == "round-11"  # the 11th round's state, kept
        assert requests_logged(shell, "tools/call") == 11
        result = await c.resume_input_required(err)
        assert text_of(result) == "done after 11 rounds"
        assert requests_logged(shell, "tools/call") == 12

    shell.run(
        scenario,
        target,
        protocol="modern",
        elicitation_handler=accept_ok,
        read_timeout=HTTP_READ_TIMEOUT,
    )


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_rounds_within_the_limit_complete_in_one_call(
    shell: Shell, modern_http: Any, transport: str
) -> None:
    target = hostile_target(transport, modern_http, "input_required", rounds=3)
    asked: list[str] = []

    def answer(message: str, *_: Any) -> dict[str, Any]:
        asked.append(message)
        return accept_ok()

    async def scenario(c: Any) -> None:
        assert text_of(await c.call_tool("t")) == "done after 3 rounds"

    shell.run(scenario, target, protocol="modern", elicitation_handler=answer, read_timeout=10)
    assert asked == ["round 1", "round 2", "round 3"]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_state_only_wait_is_retried_with_the_state(
    shell: Shell, modern_http: Any, transport: str
) -> None:
    target = hostile_target(transport, modern_http, "state_only")
    waits: list[Any] = []

    def on_wait(wait: Any) -> str:
        waits.append(wait)
        return "retry"

    async def scenario(c: Any) -> None:
        assert text_of(await c.call_tool("t")) == "waited"

    shell.run(
        scenario,
        target,
        protocol="modern",
        on_input_required_wait=on_wait,
        read_timeout=HTTP_READ_TIMEOUT,
    )
    assert [(w.rpc_method, w.request_state) for w in waits] == [("tools/call", "wait-1")]


def test_a_cancelled_wait_is_resumable(shell: Shell, modern_http: Any) -> None:
    url, _peer = modern_http("state_only")

    async def scenario(c: Any) -> None:
        c.on_input_required_wait(lambda wait: "cancel")
        with pytest.raises(shell.mod.InputRequiredError) as caught:
            await c.call_tool("t")
        assert caught.value.reason == "cancelled"
        c.on_input_required_wait(None)
        assert text_of(await c.resume_input_required(caught.value)) == "waited"

    shell.run(scenario, url, protocol="modern", read_timeout=HTTP_READ_TIMEOUT)


@pytest.mark.parametrize("shape", ["list", "nomethod", "unknown"])
def test_malformed_input_requests_fail_typed(shell: Shell, modern_http: Any, shape: str) -> None:
    url, peer = modern_http("bad_input_requests", shape=shape)

    async def scenario(c: Any) -> None:
        with pytest.raises(shell.mod.InputRequiredError) as caught:
            await c.call_tool("t")
        assert caught.value.reason in ("malformed", "unanswerable")

    shell.run(
        scenario,
        url,
        protocol="modern",
        elicitation_handler=accept_ok,
        read_timeout=HTTP_READ_TIMEOUT,
    )
    assert peer.counts.get("tools/call") == 1  # nothing of it was answered to the server


def test_request_meta_reaches_the_server(shell: Shell, modern_http: Any) -> None:
    url, peer = modern_http("baseline")

    async def scenario(c: Any) -> None:
        await c.call_tool("t")
        client = getattr(c, "raw", c)  # the blocking client behind the test proxy
        client.request_meta = {"com.example/tenant": "t2"}
        await c.call_tool("t")

    shell.run(
        scenario,
        url,
        protocol="modern",
        request_meta={"com.example/tenant": "t1"},
        read_timeout=HTTP_READ_TIMEOUT,
    )
    tenants = [
        r["params"]["_meta"].get("com.example/tenant")
        for r in peer.received
        if r["method"] == "tools/call"
    ]
    assert tenants == ["t1", "t2"]
    assert json.dumps(peer.received)  # the peer's record is plain JSON
