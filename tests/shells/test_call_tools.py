"""``call_tools``: one after the other by default, side by side with ``concurrent=True``.

The proof that concurrent calls really are in flight together is a scripted server
(``hostile_stdio.py batch``) that answers nothing until all of them have arrived, and
then answers newest first: a client that waited for each answer would time out, and
results must still come back in the order of the calls.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_proto import errors

from ._http_support import hostile_http_server
from .conftest import SDK_SERVER, Shell, hostile, text_of

pytestmark = pytest.mark.peer


def _batch(n: int) -> list[dict[str, Any]]:
    return [{"name": "t", "arguments": {"batch": n, "text": f"r{i}"}} for i in range(n)]


def test_concurrent_calls_are_all_in_flight_and_come_back_in_order(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        results = await c.call_tools(_batch(40), concurrent=True)
        assert [text_of(r) for r in results] == [f"r{i}" for i in range(40)]
        # The connection is still in step afterwards.
        results = await c.call_tools(_batch(3), concurrent=True)
        assert [text_of(r) for r in results] == ["r0", "r1", "r2"]

    shell.run(scenario, hostile("batch"))


def test_sequential_calls_wait_for_each_answer(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        with pytest.raises(errors.RequestTimeoutError):
            await c.call_tools(_batch(2))  # the server holds the first call forever

    shell.run(scenario, hostile("batch"), read_timeout=1.0)


def test_concurrent_calls_against_the_sdk_server(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        seen: list[float] = []
        calls: list[dict[str, Any]] = [
            {"name": "echo", "arguments": {"text": f"m{i}"}} for i in range(30)
        ]
        calls.insert(7, {"name": "add", "parameters": {"a": 2, "b": 3}})
        results = await c.call_tools(calls, concurrent=True)
        texts = [text_of(r) for r in results]
        assert texts[:7] == [f"m{i}" for i in range(7)]
        assert results[7]["structuredContent"] == {"sum": 5}
        assert texts[8:] == [f"m{i}" for i in range(7, 30)]
        # Progress still reaches the right callback when calls run side by side.
        result = await c.call_tool(
            "progress", {"steps": 3}, progress=lambda p, t, m: seen.append(p)
        )
        assert text_of(result) and seen

    shell.run(scenario, SDK_SERVER)


def test_a_failing_concurrent_call_raises_after_the_others(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        calls = [
            {"name": "echo", "arguments": {"text": "first"}},
            {"name": "no_such_tool", "arguments": {}},
            {"name": "echo", "arguments": {}},  # missing a required argument
            {"name": "echo", "arguments": {"text": "last"}},
        ]
        with pytest.raises(errors.ToolNotFound):  # the first failure, in call order
            await c.call_tools(calls, concurrent=True)
        with pytest.raises(ValueError, match="call 1 needs a 'name'"):
            await c.call_tools([{"name": "echo"}, {"arguments": {}}], concurrent=True)
        results = await c.call_tools(calls[:1] + calls[3:], concurrent=True)
        assert [text_of(r) for r in results] == ["first", "last"]

    shell.run(scenario, SDK_SERVER)


def test_many_callers_at_once_all_get_their_answers(shell: Shell) -> None:
    """40 threads (sync) or tasks (Trio) each calling call_tool, against the server that
    answers only once all 40 are in: one caller reads for everyone while the others
    wait (the blocking shell's leader/follower hand-over), and nobody's answer is lost."""

    async def scenario(c: Any) -> None:
        for _ in range(3):
            thunks = [
                (lambda i=i: c.call_tool("t", {"batch": 40, "text": f"r{i}"})) for i in range(40)
            ]
            results = await shell.gather(thunks)
            assert [text_of(r) for r in results] == [f"r{i}" for i in range(40)]

    shell.run(scenario, hostile("batch"))


def test_concurrent_calls_over_http_are_all_in_flight(shell: Shell) -> None:
    """Over HTTP each call is a POST of its own: concurrent ones are all in flight at
    once (the server answers none before 12 have arrived), sequential ones are not."""
    with hostile_http_server("batch", batch_wait=1.0) as peer:

        async def scenario(c: Any) -> None:
            results = await c.call_tools(_batch(12), concurrent=True)
            assert [text_of(r) for r in results] == [f"r{i}" for i in range(12)]
            results = await c.call_tools(_batch(2))  # one at a time: the server gives up
            assert [r["isError"] for r in results] == [True, True]
            assert text_of(results[0]) == "batch: only 1 calls came"

        shell.run(scenario, peer.url, read_timeout=30.0)


def test_concurrent_calls_to_a_server_that_dies_fail_without_hanging(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        calls = [{"name": "t", "arguments": {"i": i}} for i in range(5)]
        with pytest.raises(errors.ToolCallError):
            await c.call_tools(calls, concurrent=True)
        # The next request starts the server again (STDIO-10).
        assert await c.ping() == {}

    shell.run(scenario, hostile("die"))


def test_concurrent_calls_that_are_never_answered_all_time_out(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        calls = [{"name": "t", "arguments": {"i": i}} for i in range(5)]
        with pytest.raises(errors.RequestTimeoutError):
            await c.call_tools(calls, concurrent=True)
        assert await c.ping() == {}  # the connection is still usable

    shell.run(scenario, hostile("silent"), read_timeout=0.5)
