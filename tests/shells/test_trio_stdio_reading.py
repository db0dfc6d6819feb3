"""Trio shell, stdio: a caller reads its own answer (leader/follower).

The caller waiting for an answer reads the pipe itself and dispatches for everyone;
other callers park until the reader finishes them or hands them the reading role; the
reader task reads only when no caller has been waiting for a while (``_LINGER``). These
tests pin what that must keep: back-to-back calls never wake the reader task, a
cancelled reader hands the role to a waiting caller, a call that times out while its
caller waits for the pipe is woken, what arrives between calls is still delivered, and
a process that dies under a reading caller fails its call. The leading caller reads
once before waiting (an answer already in costs no wait, and the call is still a
checkpoint); after such a read finds nothing, the next callers wait at once.
"""

from __future__ import annotations

import select
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

import mcp_io_trio
from mcp_io_trio._stdio import StdioServer
from mcp_proto import errors

from .conftest import hostile, text_of

RECORDING: list[str] = [sys.executable, str(Path(__file__).with_name("recording_server.py"))]


class _Steps(trio.abc.Instrument):
    """Counts the scheduler steps of every task, by name."""

    def __init__(self) -> None:
        self.steps: Counter[str] = Counter()

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self.steps[task.name] += 1

    def reader(self) -> int:
        return sum(n for name, n in self.steps.items() if name.endswith("._read_loop"))


def test_back_to_back_calls_never_wake_the_reader_task(monkeypatch: pytest.MonkeyPatch) -> None:
    # The reader task lingers for an hour: only a caller can read in this test.
    monkeypatch.setattr(StdioServer, "_LINGER", 3600.0)

    async def main() -> None:
        with trio.fail_after(30):
            async with mcp_io_trio.connect(RECORDING) as c:
                await c.list_tools()  # the first call takes the role from the reader task
                instrument = _Steps()
                trio.lowlevel.add_instrument(instrument)
                try:
                    for _ in range(20):
                        assert await c.ping() == {}
                finally:
                    trio.lowlevel.remove_instrument(instrument)
                # Before callers read for themselves, every answer was one step of the
                # reader task (and one more pass of the caller's).
                assert instrument.reader() == 0

    trio.run(main)


def test_a_cancelled_reader_hands_the_role_to_a_waiting_caller() -> None:
    """The ``batch`` server holds every call until four arrived: the first caller reads
    (the others park), is cancelled, and a parked caller must take over the reading, or
    nobody reads the answers that come once the fourth call is sent."""

    async def main() -> None:
        with trio.fail_after(30):
            async with mcp_io_trio.connect(hostile("batch")) as c:
                await c.list_tools()
                results: dict[str, str] = {}

                async def call(text: str) -> None:
                    results[text] = text_of(await c.call_tool("t", {"batch": 4, "text": text}))

                async with trio.open_nursery() as nursery:
                    first = trio.CancelScope()

                    async def leader() -> None:
                        with first:
                            await call("a")

                    nursery.start_soon(leader)
                    await trio.testing.wait_all_tasks_blocked()
                    server = next(iter(c._servers.values()))
                    proc = server._proc  # type: ignore[attr-defined]
                    assert proc is not None and proc.leader is not None
                    reading = proc.leader
                    nursery.start_soon(call, "b")
                    nursery.start_soon(call, "c")
                    await trio.testing.wait_all_tasks_blocked()
                    assert proc.leader is reading and len(proc.followers) == 2
                    first.cancel()
                    await trio.testing.wait_all_tasks_blocked()
                    assert proc.leader is not None and proc.leader is not reading
                    nursery.start_soon(call, "d")
                assert first.cancelled_caught
                assert results == {"b": "b", "c": "c", "d": "d"}
                assert await c.ping() == {}

    trio.run(main)


def test_a_call_that_times_out_while_its_caller_reads_is_woken() -> None:
    async def main() -> None:
        with trio.fail_after(30):
            async with mcp_io_trio.connect(hostile("silent")) as c:
                await c.list_tools()
                with pytest.raises(errors.RequestTimeoutError):
                    await c.call_tool("t", timeout=0.3)
                assert await c.ping() == {}  # the role was given up
                with pytest.raises(errors.RequestTimeoutError):
                    await c.call_tool("t", timeout=0.3)
                assert await c.ping() == {}

    trio.run(main)


def test_what_arrives_between_calls_is_delivered() -> None:
    """A notification the server sends 0.3 s after the last answer, while no call is
    waiting: the reader task reads it."""

    async def main() -> None:
        seen: list[str] = []
        with trio.fail_after(30):
            async with mcp_io_trio.connect(hostile("note_after")) as c:
                c.on_notification(lambda server, method, params: seen.append(method))
                await c.list_tools()
                assert text_of(await c.call_tool("t")) == "ok"
                while "notifications/hostile/late" not in seen:
                    await trio.sleep(0.01)

    trio.run(main)


def test_a_process_that_dies_under_a_reading_caller_fails_its_call() -> None:
    async def main() -> None:
        with trio.fail_after(30):
            async with mcp_io_trio.connect(hostile("die")) as c:
                await c.list_tools()
                with pytest.raises(errors.ToolCallError, match="closed its output"):
                    await c.call_tool("t")

    trio.run(main)


# ---------------------------------------------------------------- reading before waiting


def test_an_answer_already_in_is_read_without_waiting_for_the_pipe(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The leading caller reads stdout once before waiting for it (``StdioServer._peek``):
    a server on the same CPU has answered by then. Here the read is held until the
    answer is surely in (``select``), so every call is answered by that read: the
    caller never waits for the pipe, and each call is still a checkpoint."""
    peek = StdioServer._peek
    waits: list[int] = []
    real_wait = trio.lowlevel.wait_readable
    caller: list[trio.lowlevel.Task] = []

    def answered_first(self: StdioServer, proc: Any, fd: int) -> bool:
        select.select([fd], [], [], 10)
        return peek(self, proc, fd)

    async def counted_wait(fd: Any) -> None:
        if caller and trio.lowlevel.current_task() is caller[0]:
            waits.append(fd)
        await real_wait(fd)

    monkeypatch.setattr(StdioServer, "_peek", answered_first)
    monkeypatch.setattr(trio.lowlevel, "wait_readable", counted_wait)

    async def main() -> None:
        with trio.fail_after(30):
            async with mcp_io_trio.connect(hostile("slow")) as c:
                await c.list_tools()
                caller.append(trio.lowlevel.current_task())
                for _ in range(5):
                    with trio.testing.assert_checkpoints():
                        result = await c.call_tool("t", {"delay": 0})
                    assert text_of(result) == "ok"
                assert waits == []
                # Cancelled at that checkpoint: the call is given up, the next one works.
                with trio.CancelScope() as scope:
                    scope.cancel()
                    await c.call_tool("t", {"delay": 0})
                assert scope.cancelled_caught
                assert text_of(await c.call_tool("t", {"delay": 0})) == "ok"

    trio.run(main)


def test_after_a_read_that_finds_nothing_callers_wait_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A read before waiting that finds nothing costs a system call (a server on another
    CPU, or a slow one): the next 16 callers wait for the pipe at once. Every answer
    here comes 50 ms after its request, so a read right after the request finds
    nothing; of 18 calls, the 1st and the 18th read first (a read that found something
    after all, its caller slowed for 50 ms, makes the next call read first too)."""
    peek = StdioServer._peek
    peeks: list[bool] = []

    def counted_peek(self: StdioServer, proc: Any, fd: int) -> bool:
        peeks.append(peek(self, proc, fd))
        return peeks[-1]

    monkeypatch.setattr(StdioServer, "_peek", counted_peek)

    async def main() -> None:
        with trio.fail_after(60):
            async with mcp_io_trio.connect(hostile("slow")) as c:
                await c.list_tools()
                peeks.clear()
                for _ in range(18):
                    assert text_of(await c.call_tool("t", {"delay": 0.05})) == "ok"

    trio.run(main)
    assert 1 <= peeks.count(False) <= 2, peeks
    assert len(peeks) <= 2 + 2 * peeks.count(True), peeks
