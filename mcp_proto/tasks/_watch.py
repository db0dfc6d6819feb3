"""The task state table and poll pacing, pure: every method takes ``now``.

A :class:`TaskWatch` follows one task while a client waits for it (``wait_for_task``,
a transparent ``call_tool``). It is told what each poll observed and answers what to
do next: poll, wait so long, answer input requests, fetch the 2025-11-25 result
stream, or stop with exactly one outcome (the terminal task) or one reason (timed
out, outlived its TTL). Observations that break the rules raise a typed error.

The rules, with their sources:

- **Transitions** (SEP-2663 § Task lifecycle; 2025-11-25 § Task Status): ``working``
  and ``input_required`` may go anywhere; ``completed``, ``failed`` and ``cancelled``
  are terminal, "once reached, the task's state does not change": a terminal task
  reported in another status is a :class:`~mcp_proto.errors.RemoteProtocolError`.
- **Lifetime** (TASK-17): the same id with another ``createdAt`` is a new task; the
  handle raises :class:`~mcp_proto.errors.TaskReplacedError` rather than follow it.
- **Pacing** (SEP-2663 § Task Polling "Clients SHOULD respect the pollIntervalMs";
  2025-11-25 § Getting Tasks): the next poll is never earlier than the interval the
  server last suggested after the previous poll. The interval is floored at
  :data:`MIN_POLL_INTERVAL` (a ``pollIntervalMs`` of 0 must not make the client spin)
  and a wait never runs past the call's deadline (a ``pollIntervalMs`` of one hour
  under a 30 s timeout waits 30 s, then the wait is over). Without a suggestion,
  :data:`DEFAULT_POLL_INTERVAL`.
- **TTL** (SEP-2663 § Task Polling: "clients MAY treat the TTL as a backstop"): past
  ``ttlMs`` from when the client first saw the task, a task that is still not terminal
  is no longer usable. The TTL "MAY change over the lifetime of a task": the latest
  value counts; ``null`` is unlimited.
- **Input** (SEP-2663 § Task Update Requests): a 2026-07-28 ``input_required`` task's
  requests are answered once each; keys already answered are never asked again, even
  when the next poll still lists them (the ack is eventually consistent). A
  2025-11-25 ``input_required`` task is served by opening ``tasks/result``, on which
  the server sends its requests (2025-11-25 § Task-Augmented Tool Call With
  Elicitation).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Union

import attrs

from ..errors import RemoteProtocolError, TaskReplacedError
from ._model import Task

__all__ = [
    "DEFAULT_POLL_INTERVAL",
    "DEFAULT_WAIT_TIMEOUT",
    "MIN_POLL_INTERVAL",
    "Action",
    "Answer",
    "Done",
    "Expired",
    "FetchResult",
    "Poll",
    "TaskWatch",
    "TimedOut",
    "Wait",
]

#: Seconds between polls when the server suggests no interval.
DEFAULT_POLL_INTERVAL: Final = 1.0
#: The shortest wait between two polls, whatever the server suggests (seconds).
MIN_POLL_INTERVAL: Final = 0.1
#: A wait with no timeout given is bounded by this (TIME-5: ``wait_for_task(timeout=120)``).
DEFAULT_WAIT_TIMEOUT: Final = 120.0


@attrs.frozen
class Poll:
    """Send ``tasks/get`` now."""


@attrs.frozen
class Wait:
    """Sleep ``seconds``, then ask again."""

    seconds: float


@attrs.frozen
class Answer:
    """Answer these 2026-07-28 input requests (key → request) with ``tasks/update``."""

    requests: Mapping[str, Any]


@attrs.frozen
class FetchResult:
    """2025-11-25 ``input_required``: open ``tasks/result`` (the server sends its
    requests on it and answers when the task is terminal)."""


@attrs.frozen
class Done:
    """The task reached a terminal status: the one outcome."""

    task: Task


@attrs.frozen
class TimedOut:
    """The call's deadline passed before the task ended."""

    waited: float


@attrs.frozen
class Expired:
    """The task outlived its TTL without ending (SEP-2663: no longer usable)."""

    ttl_ms: int


Action = Union[Poll, Wait, Answer, FetchResult, Done, TimedOut, Expired]


def interval_of(task: Task) -> float:
    """The wait before the next poll of ``task``, seconds (floored, defaulted)."""
    if task.poll_interval_ms is None:
        return DEFAULT_POLL_INTERVAL
    return max(MIN_POLL_INTERVAL, task.poll_interval_ms / 1000.0)


class TaskWatch:
    """Where a wait for one task stands. ``fresh``: ``task`` was observed just now (a
    creation result or a poll), so the first poll waits one interval; otherwise the
    first action is a poll. ``seen_at`` is when the client first saw the task (its
    TTL counts from there; defaults to ``now``). ``timeout`` ``None`` waits without a
    deadline (the operations pass :data:`DEFAULT_WAIT_TIMEOUT`)."""

    def __init__(
        self,
        task: Task,
        *,
        now: float,
        timeout: float | None,
        fresh: bool = True,
        seen_at: float | None = None,
    ) -> None:
        if timeout is not None and not timeout >= 0:
            raise ValueError(f"timeout must be a number of seconds >= 0, not {timeout!r}")
        self.task = task
        self.started = now
        self.deadline = None if timeout is None else now + timeout
        self.seen_at = now if seen_at is None else seen_at
        self.last_poll: float | None = now if fresh else None
        self.polls: list[float] = []  # when each poll went out (for pacing checks)
        self._asked: set[str] = set(task.answered)
        self.fetched_result = False

    @property
    def interval(self) -> float:
        return interval_of(self.task)

    @property
    def expires(self) -> float | None:
        ttl = self.task.ttl_ms
        return None if ttl is None else self.seen_at + ttl / 1000.0

    def next_action(self, now: float) -> Action:
        """What to do at ``now``."""
        task = self.task
        if task.is_terminal:
            return Done(task)
        pending = self.pending_input()
        if pending:
            return Answer(pending)
        if task.is_input_required and task.era == "legacy" and not self.fetched_result:
            return FetchResult()
        expires = self.expires
        stops = [t for t in (self.deadline, expires) if t is not None]
        stop = min(stops) if stops else None
        if stop is not None and now >= stop:
            if expires is not None and stop == expires:
                assert task.ttl_ms is not None
                return Expired(task.ttl_ms)
            return TimedOut(now - self.started)
        due = now if self.last_poll is None else self.last_poll + self.interval
        if now >= due:
            return Poll()
        until = due if stop is None else min(due, stop)
        return Wait(until - now)

    def pending_input(self) -> dict[str, Any]:
        """The 2026-07-28 input requests not answered yet (key → request)."""
        task = self.task
        if not task.is_input_required or task.era != "modern" or not task.input_requests:
            return {}
        return {k: v for k, v in task.input_requests.items() if k not in self._asked}

    def polled(self, now: float) -> None:
        """A ``tasks/get`` went out at ``now``."""
        self.last_poll = now
        self.polls.append(now)

    def observe(self, observed: Task, now: float) -> Task:
        """Take what a poll (or a notification, or ``tasks/result``) showed; returns the
        updated handle. Raises ``RemoteProtocolError`` (another id; a terminal task
        reported in another status) or ``TaskReplacedError`` (a new task on this id)."""
        task = self.task
        if observed.task_id != task.task_id:
            raise RemoteProtocolError(
                f"asked about task {task.task_id!r}, the server answered about {observed.task_id!r}"
            )
        if not task.same_lifetime(observed):
            raise TaskReplacedError(
                f"task {task.task_id!r} on server {task.server!r} was replaced: its id now"
                f" names a task created at {observed.created_at!r}, not {task.created_at!r}"
            )
        if task.is_terminal and observed.status is not task.status:
            raise RemoteProtocolError(
                f"task {task.task_id!r} went from the terminal status {task.status.value!r}"
                f" to {observed.status.value!r}"
            )
        self.task = task.refreshed(observed)
        return self.task

    def answered(self, keys: set[str] | frozenset[str]) -> Task:
        """These input request keys were answered (sent with ``tasks/update``)."""
        self._asked.update(keys)
        self.task = attrs.evolve(self.task, answered=self.task.answered | keys)
        return self.task

    def result_fetched(self) -> None:
        """The 2025-11-25 ``tasks/result`` stream was opened and answered: it blocks until
        the task is terminal, so it is not opened again; polls follow until a poll
        shows the terminal status."""
        self.fetched_result = True
