"""Both shells against tests/servers/hostile_http.py, a scripted misbehaving HTTP server
(h11 on 127.0.0.1, in-process on threads; its module docstring describes every mode).

Each fault of issue 3 ("How it is proven") is a test; the server's recorder shows what the
client really sent.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from mcp_proto import errors

from ._http_support import hostile_http, hostile_http_server
from .conftest import RSSSampler, Shell, text_of

MIB = 1024 * 1024
#: Bound on this process's RSS growth while a hostile body is refused.
RSS_BOUND = 200 * MIB
READ_TIMEOUT = 10.0
DEADLINE = 30.0


def run(shell: Shell, peer: Any, scenario: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("read_timeout", READ_TIMEOUT)
    return shell.run(scenario, peer.url, deadline=DEADLINE, **kwargs)


# ---------------------------------------------------------------------- size bounds (SIZE)


@pytest.mark.parametrize("mode", ["gzip_bomb", "gzip_bomb+sse"])
def test_gzip_bomb_is_refused_with_bounded_memory(shell: Shell, mode: str) -> None:
    with hostile_http_server(mode) as peer:
        rec = peer.recorder

        async def scenario(c: Any) -> None:
            await c.list_tools()
            with pytest.raises(errors.ResponseTooLargeError):
                await c.call_tool("t")
            assert await c.ping() == {}  # the client is still usable

        # (What is asserted is what happened, not how long it took: the bound is the
        # typed error and the memory, the time a loaded machine takes is not.)
        with RSSSampler() as rss:
            run(shell, peer, scenario, retries=3, retry_backoff=0.05)
        assert rss.growth < RSS_BOUND, f"RSS grew by {rss.growth / MIB:.0f} MiB"
        # A too-large response is never retried (and tools/call never is).
        assert len(rec.posts("tools/call")) == 1
        # The default bound is 64 MiB of inflated body; the bomb is 1 GiB.
        assert rec.counters.get("bomb_bytes_sent", 0) > 0


def test_endless_sse_event_is_refused_with_bounded_memory(shell: Shell) -> None:
    with hostile_http_server("endless_sse", max_seconds=30) as peer:
        rec = peer.recorder

        async def scenario(c: Any) -> None:
            with pytest.raises(errors.ResponseTooLargeError):
                await c.call_tool("t")
            assert await c.ping() == {}

        with RSSSampler() as rss:
            run(shell, peer, scenario)
        assert rss.growth < RSS_BOUND, f"RSS grew by {rss.growth / MIB:.0f} MiB"
        # The client hung up instead of reading forever.
        assert rec.wait_for(
            lambda r: any("endless_sse: client disconnected" in n for n in r.notes), timeout=10
        ), rec.notes
        sent = rec.counters.get("endless_bytes_sent", 0)
        assert sent < 1024 * MIB, f"{sent} bytes were read"
        assert len(rec.posts("tools/call")) == 1


# ---------------------------------------------------------------------- SSE resumability


def test_retry_zero_does_not_drive_a_reconnect_loop(shell: Shell) -> None:
    with hostile_http_server("retry_zero") as peer:
        rec = peer.recorder

        async def scenario(c: Any) -> None:
            assert text_of(await c.call_tool("t")) == "ok"
            await shell.sleep(2.5)
            assert text_of(await c.call_tool("t")) == "ok"

        run(shell, peer, scenario)
        gets = rec.gets("/mcp")
        assert len(gets) >= 3, "the GET stream was not re-opened at all"
        # retry: 0 is floored (0.1 s): about 10 reconnects in any second at most (11 allows
        # for arrival jitter; a loop honouring retry: 0 would make hundreds).
        assert rec.max_rate("GET") <= 11, [round(g.t - gets[0].t, 3) for g in gets]


@pytest.mark.parametrize("variant", ["all", "huge", "crlf"])
def test_hostile_event_ids_are_never_echoed(shell: Shell, variant: str) -> None:
    with hostile_http_server("huge_event_id", variant=variant) as peer:
        rec = peer.recorder

        async def scenario(c: Any) -> None:
            assert text_of(await c.call_tool("t", timeout=8)) == "ok"

        run(shell, peer, scenario)
        ids = rec.last_event_ids()
        assert ids, "the broken stream was not resumed"
        for value in ids:
            assert len(value) < 1024, f"a {len(value)}-character Last-Event-ID was sent"
            assert all(0x20 < ord(ch) < 0x7F for ch in value), repr(value)
        # Only ids that are safe to echo: the priming event's, or the part of a CR / CRLF
        # line before its line break (the rest, "X-Injected: 1", is a field of its own).
        assert set(ids) <= {"ok-1", "e-cr", "e-crlf"}, ids
        if variant == "huge":
            assert set(ids) == {"ok-1"}
        for req in rec.requests:
            assert req.header("x-injected") is None


def test_drop_mid_stream_is_resumed_with_last_event_id(shell: Shell) -> None:
    steps: list[tuple[Any, ...]] = []
    with hostile_http_server("drop_mid_stream") as peer:
        rec = peer.recorder

        async def scenario(c: Any) -> None:
            result = await c.call_tool("t", progress=lambda *a: steps.append(a), timeout=8)
            assert text_of(result) == "ok"
            await c.flush_callbacks()

        run(shell, peer, scenario)
        resumes = [g for g in rec.gets("/mcp") if g.header("last-event-id") is not None]
        assert [g.header("last-event-id") for g in resumes] == ["e2"]
        assert resumes[0].header("mcp-session-id") == "hs-1"
        assert len(rec.posts("tools/call")) == 1  # resumed, not re-sent
        assert [(p, total) for p, total, _ in steps] == [(1.0, 2.0)]


def test_drop_mid_stream_with_a_reset_is_resumed_too(shell: Shell) -> None:
    with hostile_http_server("drop_mid_stream", drop="rst") as peer:

        async def scenario(c: Any) -> None:
            assert text_of(await c.call_tool("t", timeout=8)) == "ok"
            assert text_of(await c.call_tool("t", timeout=8)) == "ok"

        run(shell, peer, scenario)
        resumes = [g.header("last-event-id") for g in peer.recorder.gets("/mcp")]
        assert [r for r in resumes if r is not None] == ["e2", "e5"]


def test_a_stream_that_cannot_be_resumed_fails_the_call_bounded(shell: Shell) -> None:
    with hostile_http_server("drop_mid_stream", resume="405") as peer:

        async def scenario(c: Any) -> None:
            # The resumes gave up (a transport error), not the call's 8 s limit (that
            # would be a RequestTimeoutError).
            with pytest.raises(errors.ToolCallError) as info:
                await c.call_tool("t", timeout=8)
            assert isinstance(info.value.__cause__, errors.TransportError)
            assert not isinstance(info.value.__cause__, errors.RequestTimeoutError)
            assert await c.ping() == {}

        run(shell, peer, scenario)
        resumes = [g for g in peer.recorder.gets("/mcp") if g.header("last-event-id")]
        assert 1 <= len(resumes) <= 5
        assert len(peer.recorder.posts("tools/call")) == 1


# ---------------------------------------------------------------------- legacy endpoint origin


ENDPOINTS = list(hostile_http.ENDPOINT_VARIANTS)


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_cross_origin_endpoint_is_refused(shell: Shell, endpoint: str) -> None:
    with hostile_http_server("cross_origin_endpoint", endpoint=endpoint, keepalive=0.2) as peer:
        rec = peer.recorder

        async def scenario(c: Any) -> None:
            raise AssertionError("connected through a cross-origin endpoint")

        with pytest.raises(errors.ConnectionError, match=r"origin|endpoint"):
            run(shell, peer, scenario)
        time.sleep(0.3)  # anything still in flight would reach the trap listener now
        assert rec.other_origin_requests() == []
        assert rec.posts() == []  # nothing POSTed anywhere


# ---------------------------------------------------------------------- odd responses


@pytest.mark.parametrize("mode", ["unsolicited", "unsolicited+sse"])
def test_responses_for_ids_never_sent_are_discarded(shell: Shell, mode: str) -> None:
    with hostile_http_server(mode) as peer:

        async def scenario(c: Any) -> None:
            assert text_of(await c.call_tool("t")) == "ok"  # not "WRONG" nor "STALE"
            assert text_of(await c.call_tool("t")) == "ok"
            assert await c.ping() == {}

        run(shell, peer, scenario)


def test_flaky_5xx_is_retried_but_tools_call_is_not(shell: Shell) -> None:
    with hostile_http_server("flaky_5xx", fail_count=2) as peer:
        rec = peer.recorder

        async def scenario(c: Any) -> None:
            tools = await c.list_tools()
            assert [t.name for t in tools] == ["t"]
            assert [p.status for p in rec.posts("tools/list")] == [503, 503, 200]
            with pytest.raises(errors.TransientServerError) as info:
                await c.call_tool("t")
            assert isinstance(info.value, errors.ServerError)
            assert await c.ping() == {}

        run(shell, peer, scenario, retries=3, retry_backoff=0.05)
        assert len(rec.posts("tools/call")) == 1


def test_flaky_5xx_without_retries_raises_at_once(shell: Shell) -> None:
    with hostile_http_server("flaky_5xx", fail_count=1) as peer:

        async def scenario(c: Any) -> None:
            with pytest.raises(errors.TransientServerError):
                await c.list_tools()
            assert [t.name for t in await c.list_tools()] == ["t"]

        run(shell, peer, scenario, retries=0)
        assert len(peer.recorder.posts("tools/list")) == 2


def test_expired_session_list_is_resent_on_a_new_session(shell: Shell) -> None:
    with hostile_http_server("session_expired", expire_on="tools/list") as peer:
        rec = peer.recorder

        async def scenario(c: Any) -> None:
            assert [t.name for t in await c.list_tools()] == ["t"]
            assert text_of(await c.call_tool("t")) == "ok"

        run(shell, peer, scenario)
        assert rec.sessions == ["hs-1", "hs-2"]
        lists = [(p.header("mcp-session-id"), p.status) for p in rec.posts("tools/list")]
        assert lists[:2] == [("hs-1", 404), ("hs-2", 200)]
        assert set(lists[2:]) <= {("hs-2", 200)}  # (the new session may re-list)
        assert rec.posts("tools/call")[0].header("mcp-session-id") == "hs-2"


def test_expired_session_tools_call_is_not_resent(shell: Shell) -> None:
    with hostile_http_server("session_expired", expire_on="tools/call") as peer:
        rec = peer.recorder

        async def scenario(c: Any) -> None:
            await c.list_tools()
            # The connection failed under the call: ToolCallError, caused by the
            # ConnectionError of the expired session.
            with pytest.raises(errors.ToolCallError) as info:
                await c.call_tool("t")
            assert isinstance(info.value.__cause__, errors.ConnectionError)
            assert "not re-sent" in str(info.value)
            assert len(rec.posts("tools/call")) == 1  # not re-sent
            # The next call uses the new session.
            assert text_of(await c.call_tool("t")) == "ok"

        run(shell, peer, scenario)
        calls = rec.posts("tools/call")
        assert [(p.header("mcp-session-id"), p.status) for p in calls] == [
            ("hs-1", 404),
            ("hs-2", 200),
        ]
        assert rec.sessions == ["hs-1", "hs-2"]


def test_jsonrpc_error_in_a_400_keeps_code_and_data(shell: Shell) -> None:
    with hostile_http_server("jsonrpc_400") as peer:

        async def scenario(c: Any) -> None:
            with pytest.raises(errors.HeaderMismatchError) as info:
                await c.call_tool("t")
            assert info.value.code == -32020
            assert info.value.message == "Header mismatch"
            assert info.value.data == {"header": "Mcp-Name", "expected": "t", "received": "x"}
            assert await c.ping() == {}

        run(shell, peer, scenario, retries=3, retry_backoff=0.05)
        assert len(peer.recorder.posts("tools/call")) == 1


def test_forbidden_scope_is_an_insufficient_scope_error(shell: Shell) -> None:
    with hostile_http_server("forbidden_scope") as peer:

        async def scenario(c: Any) -> None:
            with pytest.raises(errors.InsufficientScopeError) as info:
                await c.call_tool("t")
            assert info.value.scope == "a b"

        run(shell, peer, scenario, retries=3, retry_backoff=0.05)
        assert len(peer.recorder.posts("tools/call")) == 1


# ---------------------------------------------------------------------- timeouts


@pytest.mark.parametrize("mode", ["slow", "slow+sse"])
def test_timeout_sends_notifications_cancelled(shell: Shell, mode: str) -> None:
    with hostile_http_server(mode) as peer:
        rec = peer.recorder

        async def scenario(c: Any) -> None:
            await c.list_tools()
            # (That the call's own limit, not read_timeout, fires is shown without a
            # clock by test_hostile.py::test_silent_server_times_out.)
            with pytest.raises(errors.RequestTimeoutError):
                await c.call_tool("t", timeout=1)
            assert await c.ping() == {}  # still usable

        run(shell, peer, scenario, retries=3, retry_backoff=0.05)
        [call] = rec.posts("tools/call")  # a timeout is never retried
        assert rec.wait_for(lambda r: bool(r.cancelled()), timeout=5)
        [params] = rec.cancelled()
        assert params["requestId"] == call.rpc_id
        # The held connection was let go.
        assert rec.wait_for(
            lambda r: any(n.startswith("slow: client closed") for n in r.notes), timeout=5
        ), rec.notes
