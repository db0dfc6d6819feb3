"""What the client's task store needs of the host (2025-11-25 tasks run by the client):
task ids and ISO 8601 timestamps. Ids are cryptographically secure (basic/utilities/
tasks.mdx § Security Considerations: a task not bound to an authorization context must
not be guessable)."""

from __future__ import annotations

import datetime
import secrets

__all__ = ["new_task_id", "task_timestamp"]


def new_task_id() -> str:
    return secrets.token_hex(16)


def task_timestamp() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")
