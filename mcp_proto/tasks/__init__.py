"""Tasks in both eras: the 2025-11-25 task API and the 2026-07-28
``io.modelcontextprotocol/tasks`` extension (SEP-2663), as pure core.

- :mod:`._model`: the :class:`Task` handle, :class:`TaskStatus`, the wire parsers;
- :mod:`._watch`: the state table and poll pacing (:class:`TaskWatch`, ``now`` in);
- :mod:`.ops`: :class:`TaskOps`, the client's operations as generators of effects;
- :mod:`.store`: the client's side of 2025-11-25 tasks (a server asking the client to
  run sampling or elicitation as a task), a bounded store.

:class:`~mcp_proto.client.ClientCore` includes :class:`TaskOps`; both shells' clients
offer its operations (docs/tasks.md).
"""

from __future__ import annotations

from ._model import (
    EXTENSION,
    RELATED_TASK,
    STATUS_NOTIFICATIONS,
    TERMINAL,
    Era,
    Task,
    TaskPage,
    TaskStatus,
    parse_create_result,
    parse_list_result,
    parse_task,
    status_note,
    task_of_notification,
)
from ._watch import DEFAULT_POLL_INTERVAL, DEFAULT_WAIT_TIMEOUT, MIN_POLL_INTERVAL, TaskWatch

__all__ = [
    "DEFAULT_POLL_INTERVAL",
    "DEFAULT_WAIT_TIMEOUT",
    "EXTENSION",
    "MIN_POLL_INTERVAL",
    "RELATED_TASK",
    "STATUS_NOTIFICATIONS",
    "TERMINAL",
    "Era",
    "Task",
    "TaskPage",
    "TaskStatus",
    "TaskWatch",
    "parse_create_result",
    "parse_list_result",
    "parse_task",
    "status_note",
    "task_of_notification",
]
