"""The hooks of :class:`mcp_proto.client.base.BaseClient` both shells fill alike, none
of which waits: which server class serves a transport, how a deprecation notice is
written (DEP-11..14), and the entropy and wall clock of client-side tasks (the core has
neither). A shell's ``Client`` derives from :class:`ClientIO` before ``BaseClient``."""

from __future__ import annotations

import logging
from typing import Generic, TypeVar

from .notices import write_notice
from .servers import server_class
from .task_ids import new_task_id, task_timestamp

__all__ = ["ClientIO"]

S = TypeVar("S")


class ClientIO(Generic[S]):
    """``S``: the shell's server class, set as :attr:`_server_base`."""

    _server_base: type[S]
    logger: logging.Logger

    def _server_class(self, kind: str) -> type[S]:
        """The server class of a transport, in the shell's package (imported when a
        server of that transport is first configured)."""
        base = self._server_base
        package = base.__module__.rpartition(".")[0]  # (not a subclass's module)
        return server_class(package, kind, base)

    def _deprecation_notice(self, text: str) -> bool:
        return write_notice(self.logger, text)

    _new_task_id = staticmethod(new_task_id)
    _task_timestamp = staticmethod(task_timestamp)
