"""The hooks of :class:`mcp_proto.client.base.BaseClient` both shells fill alike, none
of which waits: which server class serves a transport, the default logger (the shell
package's), the proxy environment (``trust_env``), how a deprecation notice is written
(DEP-11..14), and the entropy and wall clock of client-side tasks (the core has
neither). A shell's ``Client`` derives from :class:`ClientIO` before ``BaseClient``.

Also the documentation of the public methods each shell writes its own way (they wait:
blocking, or ``async``): the shell's method has no docstring of its own and
``help()``/``inspect.getdoc`` show the one here (the methods made from core operations
carry the operation's, ``blocking``/``awaiting``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from .notices import write_notice
from .proxy_env import proxy_environment
from .servers import server_class
from .task_ids import new_task_id, task_timestamp

__all__ = ["ClientIO", "shell_logger"]

S = TypeVar("S")


def shell_logger(module: str) -> logging.Logger:
    """The logger of the shell package ``module`` is in (``mcp_io_sync``,
    ``mcp_io_trio``): its clients' default. It has a ``NullHandler``, so that nothing
    is printed (Python's last-resort handler) unless the host configures logging."""
    logger = logging.getLogger(module.partition(".")[0])
    if not any(type(handler) is logging.NullHandler for handler in logger.handlers):
        logger.addHandler(logging.NullHandler())
    return logger


class ClientIO(Generic[S]):
    """``S``: the shell's server class, set as :attr:`_server_base`."""

    _server_base: type[S]
    logger: logging.Logger

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        base = cls.__dict__.get("_server_base")
        if base is not None:  # a shell's client: its package's logger is set up now
            shell_logger(base.__module__)

    def _default_logger(self) -> logging.Logger:
        return shell_logger(self._server_base.__module__)

    def _proxy_environment(self) -> Mapping[str, str]:
        return proxy_environment()  # trust_env: HTTP_PROXY, NO_PROXY, ...

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

    # ------------------------------------------------------------ the public API's docs
    # (Each shell's method, with its own signature, overrides these.)

    def connect_all(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
        """Connect every server now instead of on first use, all at once (ten servers
        that each take a second to start are ready in about a second, not ten).

        Raises:
            MCPError: the first failure in server order, once every server has been
                tried (the others stay connected).
        """
        raise NotImplementedError

    def call_tool_streaming(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
        """Call a tool and iterate its chunks as they arrive (TOOL-7): the call's
        progress, log messages, input requests and task statuses (``ProgressChunk``,
        ``LogChunk``, ``InputChunk``, ``TaskChunk`` of
        :mod:`mcp_proto.client.streaming`), then the result, checked as ``call_tool``
        checks it (SCH-3); a failed call raises its error after the chunks before it.
        Leaving the iteration early cancels the call (``notifications/cancelled``, or
        ``tasks/cancel`` for a call running as a task): ``break`` or ``close()`` in the
        blocking shell; under Trio close the async iterator promptly with
        ``contextlib.aclosing(...)`` (else it is closed when collected). Bounded: see
        :class:`mcp_proto.client.streaming.ToolStream`. The call starts at the first
        ``next()``."""
        raise NotImplementedError

    def listen(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
        """Open a ``subscriptions/listen`` subscription on a 2026-07-28 server (the
        only one, or ``server=``); see ``BaseServer.listen``."""
        raise NotImplementedError
