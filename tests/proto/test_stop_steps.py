"""Stopping a server process (STDIO-6) is one flow both shells run,
``mcp_io_common.processes.stop_steps``: after stdin is closed, a wait for a clean exit
(graceful only), then SIGTERM to the whole group and a wait, then SIGKILL and a wait,
each wait up to the grace period and for the group to be empty too. Here the flow is
driven by hand against a scripted process, group and clock; the shells' real processes
are tests/shells/test_process_tree.py's."""

from __future__ import annotations

import itertools
import signal
from contextlib import closing
from typing import Any

import pytest

from mcp_io_common import processes
from mcp_io_common.processes import KILL, TERMINATE, StopStep, stop_steps

GRACE = 2.0


class World:
    """A scripted process and its group, a clock, and what was signalled."""

    def __init__(self, exits_after: int | None, group_polls: int = 0) -> None:
        self.now = 100.0
        self.sent: list[int] = []
        self.exits_after = exits_after  # the process exits after this many signals
        self.group_polls = group_polls  # looks at the group that still find it alive
        self.returncode: int | None = None

    def clock(self) -> float:
        return self.now

    def poll(self) -> int | None:
        return self.returncode

    def signal(self, pgid: int | None, process: Any, sig: int) -> None:
        assert process is self
        self.sent.append(sig)

    def group_alive(self, pgid: int) -> bool:
        if self.group_polls:
            self.group_polls -= 1
            return True
        return False

    def run(self, flow: Any) -> list[StopStep]:
        """Drive ``flow`` as a shell does: each step waits until its time (the process
        exits at the first exit wait once enough signals went), or less."""
        steps = []
        with closing(flow):
            for step in flow:
                steps.append(step)
                assert step.until >= self.now
                if (
                    step.exit
                    and self.exits_after is not None
                    and len(self.sent) >= self.exits_after
                ):
                    self.returncode = 0
                    self.now += 0.01
                else:
                    self.now = step.until
        return steps


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> World:
    w = World(exits_after=0)
    monkeypatch.setattr(processes, "signal_server", w.signal)
    monkeypatch.setattr(processes, "group_alive", w.group_alive)
    return w


def started(pgid: int) -> None:
    processes._STARTED[pgid] = processes.os.getpid()


def test_a_server_that_exits_at_the_end_of_its_input_is_not_signalled(world: World) -> None:
    started(4242)
    steps = world.run(stop_steps(4242, world, True, world.clock, GRACE))
    assert steps == [StopStep(100.0 + GRACE, exit=True)]
    assert world.sent == []
    assert 4242 not in processes._STARTED  # ended: nothing left to kill at exit


def test_a_server_that_ignores_its_closed_input_is_terminated_then_killed(world: World) -> None:
    world.exits_after = 2  # only SIGKILL ends it
    steps = world.run(stop_steps(4242, world, True, world.clock, GRACE))
    assert world.sent == [TERMINATE, KILL]
    assert [s.exit for s in steps] == [True, True, True]
    # Each wait is bounded by the grace period from its own step.
    assert [s.until for s in steps] == [102.0, 104.0, 106.0]


def test_a_failed_transport_skips_the_wait_for_a_clean_exit(world: World) -> None:
    world.exits_after = 1
    steps = world.run(stop_steps(4242, world, False, world.clock, GRACE))
    assert world.sent == [TERMINATE]
    assert steps == [StopStep(102.0, exit=True)]


def test_what_the_server_started_is_waited_for_with_growing_pauses(world: World) -> None:
    # The leader exits at once; its group (a launcher's child) for five more looks.
    world.group_polls = 5
    steps = world.run(stop_steps(4242, world, True, world.clock, GRACE))
    assert world.sent == []
    pauses = [round(b.until - a.until, 6) for a, b in itertools.pairwise(steps[1:])]
    assert steps[0].exit and not any(s.exit for s in steps[1:])
    assert len(steps) == 6
    assert pauses == [0.004, 0.008, 0.016, 0.032]  # doubling from 2 ms


def test_a_group_that_outlives_the_grace_is_signalled(world: World) -> None:
    # The leader exits at once, what it started never does: each grace runs out in
    # pauses of at most 50 ms, then the group gets the next signal; after SIGKILL's
    # grace the flow gives up (nothing stronger is left).
    world.group_polls = 1_000_000
    steps = world.run(stop_steps(4242, world, True, world.clock, GRACE))
    assert world.sent == [TERMINATE, KILL]
    assert [s.until for s in steps if s.exit] == [102.0, 104.0, 106.0]
    assert steps[-1].until == 106.0  # the last pause ends with the last grace
    pauses = [b.until - a.until for a, b in itertools.pairwise(steps) if not b.exit]
    assert max(pauses) <= 0.05 + 1e-9


def test_without_a_group_the_exit_of_the_child_is_enough(world: World) -> None:
    world.group_polls = 3  # (never looked at: there is no group)
    steps = world.run(stop_steps(None, world, True, world.clock, GRACE))
    assert len(steps) == 1
    assert world.group_polls == 3


def test_closing_the_flow_early_still_forgets_the_group(world: World) -> None:
    started(4343)
    flow = stop_steps(4343, world, True, world.clock, GRACE)
    with closing(flow):
        next(flow)  # the shell is interrupted in its first wait
    assert 4343 not in processes._STARTED


def test_signals_are_real_ones() -> None:
    assert TERMINATE == signal.SIGTERM
    assert processes.shutdown_signals(True) == (None, TERMINATE, KILL)
