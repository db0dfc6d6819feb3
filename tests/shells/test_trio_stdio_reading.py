"""Trio shell, stdio: a caller reads its own answer (leader/follower).

The caller waiting for an answer reads the pipe itself and dispatches for everyone;
other callers park until the reader finishes them or hands them the reading role; the
reader task reads only when no caller has been waiting for a while (``_LINGER``). These
tests pin what that must keep: back-to-back calls never wake the reader task, a
cancelled reader hands the role to a waiting caller, a call that times out while its
caller waits for the pipe is woken, what arrives between calls is still delivered, and
a process that dies under a reading caller fails its call.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

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
