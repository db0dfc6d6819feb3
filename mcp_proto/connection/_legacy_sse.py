"""The deprecated HTTP+SSE strategy (filled in by a later commit)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._http import HttpTransport

if TYPE_CHECKING:
    from ._machine import Connection

__all__ = ["LegacySseTransport"]


class LegacySseTransport(HttpTransport):
    def __init__(self, conn: Connection) -> None:
        super().__init__(conn, streamable=False)
