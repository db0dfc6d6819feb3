"""What both shells' stdio transports do alike, without waiting: the facts of a stdio
server object, how its process is started (pipes, environment, its own session), what
a failed start raises, and where its stderr goes. Stopping the process is
:func:`mcp_io_common.processes.stop_steps`; framing and every other rule are the
machine's (``mcp_proto.connection``).

Each shell's ``StdioServer`` mixes :class:`StdioTarget` in before its ``BaseServer``
and keeps only its I/O: a reader thread and blocking pipes in
``mcp_io_sync/_stdio.py``, tasks on non-blocking pipes in ``mcp_io_trio/_stdio.py``.
"""

from __future__ import annotations

import os
import subprocess
from typing import Any

from mcp_proto.config import ServerConfig
from mcp_proto.errors import ConnectionError
from mcp_proto.limits import Limits

from .lines import StderrLog

__all__ = ["StdioTarget"]


class StdioTarget:
    """Mixed in before a shell's server class by its stdio transport."""

    type = "stdio"
    #: After the last caller stops waiting, the background reader waits this long
    #: before it reads again: back-to-back calls read their answers themselves and
    #: never have to wake it, and notifications between calls arrive at most this much
    #: later. (A class attribute: a test lengthens it on the shell's class.)
    _LINGER = 0.05

    name: str
    config: ServerConfig
    _logger: Any
    _limits: Limits

    def __init__(self, config: ServerConfig, **kwargs: Any) -> None:
        # The next class in the MRO is the shell's BaseServer (object to mypy here).
        super().__init__(config, **kwargs)  # type: ignore[call-arg]
        # The running process (the shell's own kind), None while there is none.
        self._proc: Any = None

    def _spawn_options(self) -> dict[str, Any]:
        """The keyword arguments that start the server's process, for
        ``subprocess.Popen`` or ``trio.lowlevel.open_process`` alike: a pipe for each
        stream, the configuration's environment over the host's, its directory."""
        return {
            "stdin": subprocess.PIPE,
            "stdout": subprocess.PIPE,
            "stderr": subprocess.PIPE,
            "env": {**os.environ, **self.config.env} if self.config.env else None,
            "cwd": self.config.cwd,
            # Its own session and process group: a Ctrl-C at the host's terminal does
            # not kill the server mid-reply (close() ends it), and closing can signal
            # the group, which reaches what a launcher started (issue 8, item 6; see
            # mcp_io_common/processes.py).
            "start_new_session": True,
        }

    def _start_failed(self, exc: OSError) -> ConnectionError:
        """What a process that could not be started raises (or fails the transport
        with)."""
        return ConnectionError(f"cannot start {self.config.command[0]!r}: {exc.strerror or exc}")

    def _stderr_log(self) -> StderrLog:
        """Where the process's stderr goes, line by line and bounded (STDIO-5)."""
        return StderrLog(self._logger, self.name, self._limits.max_stderr_line)
