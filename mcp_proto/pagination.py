"""Auto-pagination (2025-11-25, Utilities § Pagination) as a sans-IO operation."""

from __future__ import annotations

from typing import Any

from .effects import Call, Log, Op
from .errors import RemoteProtocolError

__all__ = ["list_all"]


def list_all(
    server: str, method: str, key: str, *, max_pages: int, timeout: float | None = None
) -> Op[list[Any]]:
    """Follow ``nextCursor`` until the list ends and return every item (TOOL-2).

    Guards against hostile pagination: at most ``max_pages`` requests, and a cursor
    that repeats one already seen ends the walk (both with a warning, keeping what was
    collected). A result that is not a list page raises ``RemoteProtocolError`` instead
    of being read as empty (TOOL-3); a bare JSON array is accepted as one final page.
    """
    items: list[Any] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(max_pages):
        params = {"cursor": cursor} if cursor is not None else None
        result = yield Call(server, method, params, timeout)
        if isinstance(result, list):
            items.extend(result)
            return items
        if not isinstance(result, dict) or not isinstance(result.get(key), list):
            raise RemoteProtocolError(f"server {server!r} sent a malformed {method} result")
        items.extend(result[key])
        next_cursor = result.get("nextCursor")
        if next_cursor is None:
            return items
        if not isinstance(next_cursor, str):
            raise RemoteProtocolError(f"server {server!r} sent a non-string nextCursor")
        if next_cursor in seen:
            yield Log("WARNING", f"{method} on {server!r}: cursor repeated; stopping")
            return items
        seen.add(next_cursor)
        cursor = next_cursor
    yield Log("WARNING", f"{method} on {server!r}: stopped after {max_pages} pages")
    return items
