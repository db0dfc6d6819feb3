"""A Trio caller's answer slot (a call's result, a connect's or a close's outcome)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import trio

from mcp_proto.errors import MCPError

__all__ = ["_Waiter"]


class _Waiter:
    """One answer slot (a call's result, a connect's or a close's outcome). The waiting
    task parks itself directly (``wait_task_rescheduled``): no ``trio.Event`` or
    ``ParkingLot`` per request."""

    __slots__ = ("done", "error", "reading", "result", "settle", "task")

    def __init__(self) -> None:
        self.done = False
        self.result: Any = None
        self.error: MCPError | None = None
        self.task: trio.lowlevel.Task | None = None  # set while the caller is parked
        # The fd the caller waits on while it reads its own answer (stdio), else -1.
        self.reading = -1
        # Set (by the client, before ``finish``) only for a call whose progress
        # callbacks were queued: waits until they have run (see BaseServer._finish_call).
        self.settle: Callable[[], Awaitable[None]] | None = None

    def finish(self) -> None:
        self.done = True
        task = self.task
        if task is not None:
            self.task = None
            trio.lowlevel.reschedule(task)
        elif self.reading >= 0:
            # Finished by someone else (the timer, a close, a failed write) while its
            # caller waits for the pipe to read its own answer: wake it from that wait
            # (it sees ClosedResourceError, then ``done``). The fd stays open; its next
            # wait registers it again.
            trio.lowlevel.notify_closing(self.reading)

    def abort(self, _raise_cancel: Any) -> trio.lowlevel.Abort:
        # The parked caller is being cancelled: forget it (finish() must not wake it).
        self.task = None
        return trio.lowlevel.Abort.SUCCEEDED

    async def park(self) -> None:
        """Wait until ``finish`` (the caller's checkpoint); a no-op pass if done."""
        if self.done:
            await trio.lowlevel.checkpoint()
            return
        self.task = trio.lowlevel.current_task()
        await trio.lowlevel.wait_task_rescheduled(self.abort)
