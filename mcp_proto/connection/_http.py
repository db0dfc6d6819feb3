"""Streamable HTTP and plain HTTP strategies (filled in by the next commit)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._transport import Outgoing, Transport

if TYPE_CHECKING:
    from ._machine import Connection

__all__ = ["HttpTransport"]


class HttpTransport(Transport):
    def __init__(self, conn: Connection, *, streamable: bool) -> None:
        super().__init__(conn)
        self.streamable = streamable

    def open(self, now: float) -> None:
        raise NotImplementedError("HTTP strategies land in the next commit")

    def transmit(self, messages: list[Outgoing], now: float) -> None:
        raise NotImplementedError("HTTP strategies land in the next commit")
