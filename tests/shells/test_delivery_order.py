"""Both shells: what has been delivered when a call returns (issue 9, item 6).

* Progress before return: a call returns only after the progress callbacks for the
  notifications that arrived before its result have run. Proven against the official
  SDK server (its ``progress`` tool) over stdio and Streamable HTTP, with callbacks that
  take a moment (as a host redrawing a progress bar would): before the fix the blocking
  shell returned with some of them still queued.
* Notifications after the result: what a server sends on a POST's SSE stream after the
  result is delivered too. Proven against the scripted h11 server
  (``hostile_http.py`` mode ``after_result``), which sends the result and only then
  notifications on the same stream: before the fix the Trio shell stopped reading at
  the result and lost them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ._http_support import HTTP_READ_TIMEOUT, PeerPool, hostile_http_server
from .conftest import SDK_SERVER, Shell, text_of

STEPS = 5


@pytest.fixture(scope="module")
def peers() -> Iterator[PeerPool]:
    pool = PeerPool()
    try:
        yield pool
    finally:
        pool.close()


def _target(transport: str, peers: PeerPool) -> tuple[Any, dict[str, Any]]:
    if transport == "stdio":
        return SDK_SERVER, {}
    return peers.sdk("streamable-http").url, {"read_timeout": HTTP_READ_TIMEOUT}


def _slow_progress(shell: Shell, seen: list[float]) -> Any:
    """A progress callback that takes a moment (a scheduler pass under Trio)."""

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        await shell.sleep(0.02)
        seen.append(p)

    return shell.callback(on_progress)


@pytest.mark.peer
@pytest.mark.parametrize("transport", ["stdio", "streamable_http"])
def test_progress_callbacks_have_run_when_the_call_returns(
    shell: Shell, peers: PeerPool, transport: str
) -> None:
    seen: list[float] = []
    at_return: list[list[float]] = []

    async def scenario(c: Any) -> None:
        for delay in (0.0, 0.01):  # all at once, and spread out
            seen.clear()
            result = await c.call_tool(
                "progress",
                {"steps": STEPS, "delay": delay},
                progress=_slow_progress(shell, seen),
            )
            at_return.append(list(seen))  # no flush_callbacks(): the call itself waited
            assert text_of(result) == "done"

    target, kwargs = _target(transport, peers)
    shell.run(scenario, target, **kwargs)
    every_step = [float(i) for i in range(1, STEPS + 1)]
    assert at_return == [every_step, every_step]


@pytest.mark.peer
def test_concurrent_calls_each_wait_for_their_own_progress(shell: Shell) -> None:
    """Two calls in flight at once on one server: each returns with its own callbacks
    run."""
    seen: dict[str, list[float]] = {"a": [], "b": []}

    async def gathered(c: Any) -> None:
        results = await shell.gather(
            [
                lambda: c.call_tool(
                    "progress", {"steps": 3, "delay": 0}, progress=_slow_progress(shell, seen["a"])
                ),
                lambda: c.call_tool(
                    "progress", {"steps": 4, "delay": 0}, progress=_slow_progress(shell, seen["b"])
                ),
            ]
        )
        snapshot = {k: list(v) for k, v in seen.items()}
        assert [text_of(r) for r in results] == ["done", "done"]
        assert snapshot == {"a": [1.0, 2.0, 3.0], "b": [1.0, 2.0, 3.0, 4.0]}

    shell.run(gathered, SDK_SERVER)


@pytest.mark.peer
def test_a_progress_callback_may_call_the_server_itself(shell: Shell) -> None:
    """A callback runs on the dispatcher; a call it makes with its own progress callback
    must not wait for the dispatcher (itself) to drain: no deadlock, both complete."""
    outer: list[float] = []
    inner: list[float] = []
    inner_results: list[str] = []

    async def scenario(c: Any) -> None:
        async def on_progress(p: float, total: float | None, message: str | None) -> None:
            outer.append(p)
            if p == 1.0:
                result = await c.call_tool(
                    "progress",
                    {"steps": 2, "delay": 0},
                    progress=lambda q, t, m: inner.append(q),
                )
                inner_results.append(text_of(result))

        result = await c.call_tool(
            "progress", {"steps": 3, "delay": 0}, progress=shell.callback(on_progress)
        )
        assert text_of(result) == "done"
        assert outer == [1.0, 2.0, 3.0]
        assert inner_results == ["done"]

    shell.run(scenario, SDK_SERVER)


# ---------------------------------------------------------------------- after the result


def _after_result_notes(seen: list[tuple[str, Any]]) -> list[Any]:
    return [
        params.get("data")
        for method, params in seen
        if method == "notifications/message" and params.get("logger") == "after_result"
    ]


def test_notifications_after_the_result_on_the_post_stream_are_delivered(shell: Shell) -> None:
    """The scripted server answers tools/call on an SSE stream and then sends three
    notifications on that same stream before ending it. Both shells deliver them; the
    calls made afterwards work normally (the stream's connection was finished cleanly)."""
    seen: list[tuple[str, Any]] = []

    async def scenario(c: Any) -> None:
        c.on_notification(lambda server, method, params: seen.append((method, params)))
        for round_ in (1, 2):
            result = await c.call_tool("t")
            assert text_of(result) == "ok"
            # Bounded wait (the Trio shell reads the rest of the stream in the
            # background after handing the caller its result).
            assert await shell.wait_for(
                lambda r=round_: len(_after_result_notes(seen)) >= 3 * r, timeout=10
            ), _after_result_notes(seen)
            await c.flush_callbacks()
        assert await c.ping() == {}

    with hostile_http_server("after_result") as peer:
        shell.run(scenario, peer.url, read_timeout=HTTP_READ_TIMEOUT)
        posts = peer.recorder.posts("tools/call")
    assert _after_result_notes(seen) == ["after 1", "after 2", "after 3"] * 2
    assert len(posts) == 2  # each call sent once


def test_a_post_stream_left_open_after_the_result_ends_with_the_client(shell: Shell) -> None:
    """The server keeps the stream open after its notifications: the call still
    returns its result, the notifications are delivered, and the stream's connection
    is closed (by the read timeout or by closing the client): nothing left behind, no
    hang at close."""
    seen: list[tuple[str, Any]] = []

    async def scenario(c: Any) -> None:
        c.on_notification(lambda server, method, params: seen.append((method, params)))
        assert text_of(await c.call_tool("t")) == "ok"
        assert await shell.wait_for(lambda: len(_after_result_notes(seen)) >= 3, timeout=10)

    with hostile_http_server("after_result", hold=True) as peer:
        shell.run(scenario, peer.url, read_timeout=3.0)
        assert peer.recorder.wait_for(
            lambda r: "after_result: client closed" in r.notes, timeout=10
        ), peer.recorder.notes
    assert _after_result_notes(seen) == ["after 1", "after 2", "after 3"]


def test_a_post_stream_kept_alive_after_the_result_is_closed_by_the_client(shell: Shell) -> None:
    """The server keeps the stream open after its notifications with an SSE comment
    every 0.2 s, so no read timeout ever fires. The client reads that tail for
    read_timeout more, then closes it by itself, while the client stays open (before,
    each such call kept a connection and a reader until the client closed)."""
    seen: list[tuple[str, Any]] = []

    with hostile_http_server("after_result", hold=True, keepalive=0.2) as peer:

        async def scenario(c: Any) -> None:
            c.on_notification(lambda server, method, params: seen.append((method, params)))
            assert text_of(await c.call_tool("t")) == "ok"
            assert await shell.wait_for(
                lambda: "after_result: client closed" in peer.recorder.notes, timeout=20
            ), peer.recorder.notes
            assert await c.ping() == {}  # the client itself goes on

        shell.run(scenario, peer.url, read_timeout=2.0)
    assert _after_result_notes(seen) == ["after 1", "after 2", "after 3"]
