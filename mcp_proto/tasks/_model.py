"""The task handle and the wire parsers of both task eras.

Two incompatible wire forms exist (SEP-2663 § Backward Compatibility):

- **2025-11-25** (``basic/utilities/tasks.mdx``): the client opts in per request with
  ``params.task = {ttl}``; a ``CreateTaskResult`` nests the task under ``task``;
  ``ttl`` / ``pollInterval`` in milliseconds; ``tasks/get``, ``tasks/result``,
  ``tasks/list``, ``tasks/cancel``; ``notifications/tasks/status``.
- **2026-07-28, the ``io.modelcontextprotocol/tasks`` extension** (SEP-2663): the
  server decides; a ``CreateTaskResult`` is the task itself with ``resultType:
  "task"``; ``ttlMs`` / ``pollIntervalMs``; ``tasks/get`` carries the result, the
  error or the ``inputRequests``; ``tasks/update``, ack-only ``tasks/cancel``;
  ``notifications/tasks``.

Both parse into one :class:`Task` handle. Parsers accept everything the schemas allow
(extra fields, a ``null`` TTL, an integral float) and turn anything else into a
:class:`~mcp_proto.errors.RemoteProtocolError` naming what is wrong, never a
``KeyError``.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from typing import Any, Final, Literal

import attrs

from .._util import sanitize_peer_text, shown
from ..errors import RemoteProtocolError

__all__ = [
    "EXTENSION",
    "RELATED_TASK",
    "STATUS_NOTIFICATIONS",
    "TERMINAL",
    "Era",
    "Task",
    "TaskPage",
    "TaskStatus",
    "parse_create_result",
    "parse_list_result",
    "parse_task",
    "status_note",
    "task_of_notification",
]

#: The extension's identifier (SEP-2663 § Extension Identifier).
EXTENSION: Final = "io.modelcontextprotocol/tasks"
#: The ``_meta`` key associating a message with its task (2025-11-25 § Related Task
#: Metadata).
RELATED_TASK: Final = "io.modelcontextprotocol/related-task"

Era = Literal["legacy", "modern"]

#: Integers JSON peers may send (the schemas bound them to ±(2**53 - 1)).
_MAX_INT: Final = 2**53 - 1


class TaskStatus(str, enum.Enum):
    """A task's status (both eras use the same five values)."""

    WORKING = "working"
    INPUT_REQUIRED = "input_required"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def coerce(cls, value: Any) -> TaskStatus:
        """A status from a string (or a status); anything else is a ``ValueError``."""
        if isinstance(value, TaskStatus):
            return value
        if isinstance(value, str):
            try:
                return cls(value)
            except ValueError:
                pass
        raise ValueError(f"not a task status: {shown(value)}")


def _status(value: Any) -> TaskStatus:
    return TaskStatus.coerce(value)


#: Once reached, a task's state does not change (SEP-2663 § Task lifecycle; 2025-11-25
#: § Task Status).
TERMINAL: Final = frozenset({TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED})


def _frozen_map(value: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    return None if value is None else dict(value)


def _keys(value: Any) -> frozenset[str]:
    return frozenset(value)


@attrs.frozen(eq=False)
class Task:
    """A handle on one task of one server (TASK-2, §E4).

    ``ttl_ms`` is ``None`` for an unlimited TTL (or when the server gave none);
    ``poll_interval_ms`` is ``None`` when the server suggests none. In the 2026-07-28
    era a ``tasks/get`` result inlines ``result`` (completed), ``error`` (failed) or
    ``input_requests`` (input_required).

    ``tool`` is the tool definition (its dict) the creating call went out under: a
    result delivered through this handle is validated against its ``outputSchema``
    (SCH-19); a handle made from a bare id has none and its results are not validated.
    ``answered`` holds the ``inputRequests`` keys already answered with ``tasks/update``
    (MRTR-8, TASK-20: never put back to a handler, even by another process).

    Equality is by id and status (TASK-2). ``to_dict`` / ``from_dict`` carry a handle
    to another client (TASK-16).
    """

    task_id: str
    status: TaskStatus = attrs.field(converter=_status)
    era: Era = "legacy"
    server: str | None = None
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    result: Mapping[str, Any] | None = attrs.field(default=None, converter=_frozen_map)
    error: Mapping[str, Any] | None = attrs.field(default=None, converter=_frozen_map)
    input_requests: Mapping[str, Any] | None = attrs.field(default=None, converter=_frozen_map)
    tool: Mapping[str, Any] | None = attrs.field(default=None, converter=_frozen_map)
    answered: frozenset[str] = attrs.field(default=frozenset(), converter=_keys)
    meta: Mapping[str, Any] | None = attrs.field(default=None, converter=_frozen_map, repr=False)

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.task_id, str):
            raise TypeError("task_id must be a string")
        if self.era not in ("legacy", "modern"):
            raise ValueError(f"era must be 'legacy' or 'modern', not {self.era!r}")

    # -- the Ruby predicates of TASK-2, as properties (§E4)

    @property
    def ttl(self) -> int | None:
        """The TTL in milliseconds (the 2025-11-25 name)."""
        return self.ttl_ms

    @property
    def poll_interval(self) -> int | None:
        """The suggested polling interval in milliseconds (TASK-9)."""
        return self.poll_interval_ms

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def is_input_required(self) -> bool:
        return self.status is TaskStatus.INPUT_REQUIRED

    @property
    def is_working(self) -> bool:
        return self.status is TaskStatus.WORKING

    @property
    def is_active(self) -> bool:
        return not self.is_terminal

    @property
    def is_completed(self) -> bool:
        return self.status is TaskStatus.COMPLETED

    @property
    def is_immediate(self) -> bool:
        """A 2026-07-28 server answered the call at once: no task exists on the server
        (SEP-2663: the server decides), only this completed handle with its result."""
        return self.task_id == ""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Task):
            return NotImplemented
        return (self.task_id, self.status) == (other.task_id, other.status)

    def __hash__(self) -> int:
        return hash((self.task_id, self.status))

    # -- lifetime (TASK-17)

    def same_lifetime(self, other: Task) -> bool:
        """Whether ``other`` (a later observation of this id) is still this task: a
        server that hands the id to a new task gives it a new ``createdAt``. A handle
        that never saw a ``createdAt`` (a bare id) accepts the first one it meets."""
        return self.created_at is None or other.created_at in (None, self.created_at)

    def refreshed(self, observed: Task) -> Task:
        """This handle updated with a later observation of the same task: the server's
        fields win, the handle's own (server, tool, answered keys) are kept."""
        return attrs.evolve(
            observed,
            server=observed.server or self.server,
            tool=self.tool,
            answered=self.answered | observed.answered,
            created_at=observed.created_at or self.created_at,
        )

    # -- portability (TASK-16)

    def to_dict(self) -> dict[str, Any]:
        """The task in its era's wire shape (``ttl`` / ``ttlMs`` always present), plus
        what another client needs to continue it: ``server``, ``era``, ``tool``,
        ``answered``. JSON-serialisable."""
        out: dict[str, Any] = {"taskId": self.task_id, "status": self.status.value}
        if self.status_message is not None:
            out["statusMessage"] = self.status_message
        if self.created_at is not None:
            out["createdAt"] = self.created_at
        if self.last_updated_at is not None:
            out["lastUpdatedAt"] = self.last_updated_at
        if self.era == "modern":
            out["ttlMs"] = self.ttl_ms
            if self.poll_interval_ms is not None:
                out["pollIntervalMs"] = self.poll_interval_ms
            for key, value in (
                ("result", self.result),
                ("error", self.error),
                ("inputRequests", self.input_requests),
            ):
                if value is not None:
                    out[key] = dict(value)
        else:
            out["ttl"] = self.ttl_ms
            if self.poll_interval_ms is not None:
                out["pollInterval"] = self.poll_interval_ms
            if self.result is not None:
                out["result"] = dict(self.result)
        out["era"] = self.era
        if self.server is not None:
            out["server"] = self.server
        if self.tool is not None:
            out["tool"] = dict(self.tool)
        if self.answered:
            out["answered"] = sorted(self.answered)
        return out

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any] | str, *, server: str | None = None, era: Era | None = None
    ) -> Task:
        """A handle from :meth:`to_dict`'s output, a wire task of either era, or a bare
        task id (status ``working`` until refreshed). ``server=`` wins over the data's
        (TASK-7). A malformed mapping is a ``ValueError``."""
        if isinstance(data, str):
            return cls(data, TaskStatus.WORKING, era=era or "legacy", server=server)
        if not isinstance(data, Mapping):
            raise TypeError("Task.from_dict needs a mapping or a task id")
        given = data.get("era")
        if era is None:
            if given in ("legacy", "modern"):
                era = given
            else:
                era = "modern" if ("ttlMs" in data or "pollIntervalMs" in data) else "legacy"
        try:
            task = parse_task(data, era=era, server=server or _opt_str(data, "server"))
        except RemoteProtocolError as exc:
            raise ValueError(str(exc)) from None
        tool = data.get("tool")
        answered = data.get("answered", ())
        if tool is not None and not isinstance(tool, Mapping):
            raise ValueError("tool must be a tool definition (an object)")
        if not isinstance(answered, (list, tuple)) or not all(isinstance(k, str) for k in answered):
            raise ValueError("answered must be a list of strings")
        result = data.get("result")
        return attrs.evolve(
            task,
            tool=tool,
            answered=answered,
            result=result if isinstance(result, Mapping) else task.result,
        )

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text: what one process writes for another (TASK-16)."""
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(
        cls,
        data: Mapping[str, Any] | str | bytes,
        *,
        server: str | None = None,
        era: Era | None = None,
    ) -> Task:
        """§E1's ``Task.from_json``: :meth:`from_dict`, also from the JSON text of
        :meth:`to_json` (a ``str`` or ``bytes`` holding a JSON object, as another process
        wrote it: TASK-16). Any other string is a bare task id, as for :meth:`from_dict`.
        Text that starts as an object but is not JSON is a ``ValueError``."""
        if isinstance(data, bytes):
            data = data.decode("utf-8")
        if isinstance(data, str) and data.lstrip().startswith("{"):
            try:
                parsed = json.loads(data)
            except ValueError as exc:
                raise ValueError(f"not a serialised task handle: {exc}") from None
            if not isinstance(parsed, Mapping):  # pragma: no cover - "{" parses to a dict
                raise ValueError("not a serialised task handle")
            data = parsed
        return cls.from_dict(data, server=server, era=era)


@attrs.frozen
class TaskPage:
    """One page of ``tasks/list`` (TASK-5): ``tasks`` and ``next_cursor``; also reads
    as the mapping ``{'tasks', 'next_cursor'}``."""

    tasks: tuple[Task, ...]
    next_cursor: str | None = None

    def __getitem__(self, key: str) -> Any:
        if key == "tasks":
            return list(self.tasks)
        if key == "next_cursor":
            return self.next_cursor
        raise KeyError(key)

    def keys(self) -> tuple[str, str]:
        return ("tasks", "next_cursor")


# ---------------------------------------------------------------- parsers


def _bad(where: str, problem: str) -> RemoteProtocolError:
    return RemoteProtocolError(f"{where}: {problem}")


def _opt_str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


def _millis(data: Mapping[str, Any], key: str, where: str, *, nullable: bool) -> int | None:
    """An integer count of milliseconds. The schemas say integer; a JSON number with
    no fraction (``5000.0``) is the same value and accepted; negative values are
    allowed by the schemas and read as 0 (a TTL or interval already past)."""
    if key not in data:
        return None
    value = data[key]
    if value is None:
        if nullable:
            return None
        raise _bad(where, f"{key} is null")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _bad(where, f"{key} is not a number: {shown(value)}")
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")) or not value.is_integer():
            raise _bad(where, f"{key} is not an integer: {shown(value)}")
        value = int(value)
    if abs(value) > _MAX_INT:
        raise _bad(where, f"{key} is out of range: {shown(value)}")
    return max(0, value)


def _object(data: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any] | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise _bad(where, f"{key} is not an object")
    return value


def parse_task(data: Any, *, era: Era, server: str | None = None, where: str = "the task") -> Task:
    """One task object of ``era`` (a ``tasks/get`` / ``tasks/cancel`` result, a list
    entry, a status notification's params, a modern ``CreateTaskResult``).

    Required: ``taskId`` (string) and ``status`` (one of the five). ``createdAt`` /
    ``lastUpdatedAt`` / the TTL are required by the schemas but tolerated when absent
    (only their type is checked). 2026-07-28: ``result`` / ``error`` are taken when
    their status says so, ``inputRequests`` when ``input_required`` (each request an
    object with a string ``method``).
    """
    if not isinstance(data, Mapping):
        raise _bad(where, f"not an object: {shown(data)}")
    task_id = data.get("taskId")
    if not isinstance(task_id, str):
        raise _bad(where, "taskId is missing or not a string")
    try:
        status = TaskStatus.coerce(data.get("status"))
    except ValueError:
        raise _bad(where, f"unknown status {shown(data.get('status'))}") from None
    for key in ("statusMessage", "createdAt", "lastUpdatedAt"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise _bad(where, f"{key} is not a string")
    ttl_key, poll_key = ("ttlMs", "pollIntervalMs") if era == "modern" else ("ttl", "pollInterval")
    ttl = _millis(data, ttl_key, where, nullable=True)
    poll = _millis(data, poll_key, where, nullable=era == "legacy")
    result = error = requests = None
    if era == "modern":
        if status is TaskStatus.COMPLETED:
            result = _object(data, "result", where)
            if result is None:
                raise _bad(where, "a completed task has no result")
        elif status is TaskStatus.FAILED:
            error = _object(data, "error", where)
            if error is None:
                raise _bad(where, "a failed task has no error")
        elif status is TaskStatus.INPUT_REQUIRED:
            requests = _object(data, "inputRequests", where)
            if requests is None:
                raise _bad(where, "an input_required task has no inputRequests")
            for key, request in requests.items():
                if not isinstance(request, Mapping) or not isinstance(request.get("method"), str):
                    raise _bad(where, f"input request {shown(key)} has no method")
                if request.get("params") is not None and not isinstance(request["params"], Mapping):
                    raise _bad(where, f"input request {shown(key)} has params not an object")
    meta = _object(data, "_meta", where)
    return Task(
        task_id,
        status,
        era=era,
        server=server,
        status_message=_opt_str(data, "statusMessage"),
        created_at=_opt_str(data, "createdAt"),
        last_updated_at=_opt_str(data, "lastUpdatedAt"),
        ttl_ms=ttl,
        poll_interval_ms=poll,
        result=result,
        error=error,
        input_requests=requests,
        meta=meta,
    )


def parse_create_result(result: Any, *, era: Era, server: str | None = None) -> Task:
    """A ``CreateTaskResult``: 2025-11-25 nests the task under ``task``; 2026-07-28 is
    the task itself, marked ``resultType: "task"``."""
    where = "the CreateTaskResult"
    if not isinstance(result, Mapping):
        raise _bad(where, f"not an object: {shown(result)}")
    if era == "legacy":
        if "task" not in result:
            raise _bad(where, "no task (the server did not create one)")
        return parse_task(result["task"], era=era, server=server, where=where)
    if result.get("resultType") != "task":
        raise _bad(where, f"resultType is {shown(result.get('resultType'))}, not 'task'")
    return parse_task(result, era=era, server=server, where=where)


def parse_list_result(result: Any, *, server: str | None = None) -> TaskPage:
    """A 2025-11-25 ``tasks/list`` result (the extension has no ``tasks/list``)."""
    where = "the tasks/list result"
    if not isinstance(result, Mapping):
        raise _bad(where, f"not an object: {shown(result)}")
    tasks = result.get("tasks")
    if not isinstance(tasks, list):
        raise _bad(where, "tasks is missing or not a list")
    cursor = result.get("nextCursor")
    if cursor is not None and not isinstance(cursor, str):
        raise _bad(where, "nextCursor is not a string")
    parsed = tuple(
        parse_task(t, era="legacy", server=server, where=f"{where}: task {i}")
        for i, t in enumerate(tasks)
    )
    return TaskPage(parsed, cursor or None)


def task_of_notification(server: str, method: str, params: Any, *, era: Era) -> Task | None:
    """The task a status notification announces (TASK-8: ``notifications/tasks/status``,
    2025-11-25; TASK-15: ``notifications/tasks``, 2026-07-28), or ``None`` when it is not
    one or is malformed. It announces only: nothing here answers its input requests."""
    expected = "notifications/tasks/status" if era == "legacy" else "notifications/tasks"
    if method != expected:
        return None
    try:
        return parse_task(params, era=era, server=server, where=method)
    except RemoteProtocolError:
        return None


#: The status notifications of both eras: 2025-11-25 ``notifications/tasks/status``
#: (§ Task Status Notification) and the extension's ``notifications/tasks`` (SEP-2663).
STATUS_NOTIFICATIONS: Final[dict[str, Era]] = {
    "notifications/tasks/status": "legacy",
    "notifications/tasks": "modern",
}
_NOTE_CAP: Final = 200  # characters of a server's statusMessage put in a log line


def status_note(server: str, method: str, params: Any) -> tuple[str, str] | None:
    """NOTIF-2: a task status notification parsed, as the ``(level, line)`` the client
    logs once the notification has been queued for delivery (NOTIF-5): ``DEBUG`` with
    the task's id and status, or ``WARNING`` naming what is malformed (the notification
    is still delivered as it came: it announces, it drives nothing, TASK-15). ``None``
    for any other method."""
    era = STATUS_NOTIFICATIONS.get(method)
    if era is None:
        return None
    try:
        task = parse_task(params, era=era, server=server, where=method)
    except RemoteProtocolError as exc:
        return "WARNING", f"server {server!r} sent a malformed {method}: {exc}"
    line = f"server {server!r}: task {shown(task.task_id)} is {task.status.value}"
    if task.status_message:
        line += f" ({sanitize_peer_text(task.status_message, cap=_NOTE_CAP)})"
    return "DEBUG", line
