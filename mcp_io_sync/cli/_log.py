"""Errors and logging for ``mcp-proto``: the one-line message and exit code of each
failure, the stderr log handler, and the tail of each server's stderr."""

from __future__ import annotations

import argparse
import contextlib
import logging
import re
import sys
from collections import deque
from typing import Final

from mcp_proto import errors

from . import _render as render
from ._args import (
    EXIT_CONNECTION,
    EXIT_INTERNAL,
    EXIT_SERVER,
    EXIT_TIMEOUT,
    EXIT_USAGE,
    PROG,
    CommandFailed,
)

# --------------------------------------------------------------------------- errors & logging


class _StderrTails(logging.Handler):
    """Keeps the last lines each server wrote to its stderr, for its connection errors.

    Kept per server: with a config file of several servers, the error of one must quote
    its own stderr, not whichever server wrote last (issue 8 item 4). The stdio shell
    logs each line as ``"[%s] %s" % (server name, line)``."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: dict[str, deque[str]] = {}

    def emit(self, record: logging.LogRecord) -> None:
        args = record.args
        if isinstance(args, tuple) and len(args) == 2:
            server, line = str(args[0]), str(args[1])
        else:
            server, line = "", record.getMessage()
        if line.strip():
            self.lines.setdefault(server, deque(maxlen=20)).append(line.strip())

    def last(self, server: str | None) -> str | None:
        """The last line ``server`` wrote to its stderr (``None``: nothing, or unknown)."""
        if server is None:
            return None
        lines = self.lines.get(server)
        return lines[-1] if lines else None

    def clear(self) -> None:
        self.lines.clear()


HANDLER = render.StatusAwareHandler(sys.stderr)
TAIL = _StderrTails()


class _Levels(logging.Filter):
    """What reaches stderr: records at the handler's own level, and the servers' log
    messages (``notifications/message``, logged by the client as ``[server] text``) from
    ``server_level`` up, so that ``--log-level debug`` shows the server's debug lines
    without turning on the CLI's own debug logging."""

    def __init__(self) -> None:
        super().__init__()
        self.level = logging.WARNING
        self.server_level = logging.WARNING

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "mcp_io_sync" and record.msg == "[%s]%s %s":
            return record.levelno >= min(self.level, self.server_level)
        return record.levelno >= self.level


LEVELS = _Levels()
# MCP log levels (spec: server/utilities/logging) -> Python levels, as the client maps
# notifications/message (LOG-3).
_PYTHON_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
}


class _Formatter(logging.Formatter):
    """Log lines for a terminal: peer text cleaned of control characters; without -v,
    ``mcp-proto: warning: message`` on one line."""

    def __init__(self, verbose: bool) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s", "%H:%M:%S")
        self.verbose = verbose

    def format(self, record: logging.LogRecord) -> str:
        if self.verbose:
            return render.clean(super().format(record))
        return f"{PROG}: {record.levelname.lower()}: {render.one_line(record.getMessage(), 2000)}"


def setup_logging(verbose: int, quiet: bool, server_level: str | None = None) -> None:
    """Without ``-v``: warnings (``-q``: errors only). ``-v``: info, including every
    line the servers write to their stderr; ``-vv``: debug. ``--log-level LEVEL`` also
    shows the servers' log messages from LEVEL up (``-q`` keeps them to errors)."""
    if verbose:
        level = logging.DEBUG if verbose > 1 else logging.INFO
    else:
        level = logging.ERROR if quiet else logging.WARNING
    LEVELS.level = level
    LEVELS.server_level = level
    if server_level is not None and not quiet:
        LEVELS.server_level = _PYTHON_LEVELS.get(server_level, logging.ERROR)
    lowest = min(LEVELS.level, LEVELS.server_level)
    # Not setStream: it flushes the stream it replaces, and a host (or a test) that
    # runs main() again after closing the stderr it had swapped in would get
    # "I/O operation on closed file" before the command even starts.
    with HANDLER.lock or contextlib.nullcontext():
        HANDLER.stream = sys.stderr
    HANDLER.setFormatter(_Formatter(bool(verbose)))
    HANDLER.setLevel(lowest)
    if LEVELS not in HANDLER.filters:
        HANDLER.addFilter(LEVELS)
    root = logging.getLogger()
    if HANDLER not in root.handlers:
        root.addHandler(HANDLER)
    root.setLevel(lowest)
    # The server's stderr is logged at INFO; keep its tail even when not shown.
    stderr_logger = logging.getLogger("mcp_io_sync.stderr")
    stderr_logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    if TAIL not in stderr_logger.handlers:
        stderr_logger.addHandler(TAIL)
    TAIL.clear()


def _timed_out(exc: errors.RequestTimeoutError, opts: argparse.Namespace | None) -> str:
    limit = getattr(opts, "effective_timeout", None)
    what = exc.method or "the request"
    after = f" after {limit:g}s" if limit else ""
    # What the library says after its first sentence (the server's unusable output
    # quoted, say) is kept: it is often the reason (issue 24 C).
    _, sep, detail = str(exc).partition("; ")
    said = f"; {detail}" if sep else ""
    return f"{what} timed out{after}{said}; change the limit with --timeout SECONDS"


class ServerFailed(Exception):
    """Server ``server`` could not be used: ``error`` says why."""

    def __init__(self, server: str, error: BaseException) -> None:
        super().__init__(str(error))
        self.server = server
        self.error = error


def classify(
    exc: BaseException, opts: argparse.Namespace | None, server: str | None = None
) -> tuple[int, str]:
    """The exit code and one-line message for a failure; a connection failure quotes
    the last stderr line of ``server`` (the one that failed, when it is known)."""
    if isinstance(exc, ServerFailed):
        server, exc = exc.server, exc.error
    code, message = _classify(exc, opts)
    quoted = isinstance(exc, CommandFailed)  # already worded, stderr included
    if code == EXIT_CONNECTION and not quoted and not (opts is not None and opts.verbose):
        line = TAIL.last(server)
        if line is not None:
            message += f"; server stderr: {line}"
    # The library's advice names its keyword argument; the command line has an option.
    message = re.sub(
        r"[;:] pass server=$", "; choose one with --config FILE --server NAME", message
    )
    return code, message


#: Library wording that names its API, and what the command line says instead.
_IN_CLI_WORDS: Final = (
    ("protocol='modern'", "--protocol modern"),
    ("protocol='legacy'", "--protocol legacy"),
    ("; use subscribe_resource there", "; `listen` needs a 2026-07-28 server"),
)


def _classify(exc: BaseException, opts: argparse.Namespace | None) -> tuple[int, str]:
    if isinstance(exc, CommandFailed):
        return exc.code, str(exc)
    if isinstance(exc, errors.RequestTimeoutError):
        return EXIT_TIMEOUT, _timed_out(exc, opts)
    if isinstance(
        exc, (errors.AmbiguousToolName, errors.AmbiguousPromptName, errors.AmbiguousResourceURI)
    ):
        return EXIT_USAGE, str(exc)
    if isinstance(exc, errors.SchemaError):
        return EXIT_SERVER, f"bad schema from the server: {exc}"
    if isinstance(exc, errors.ValidationError):
        return EXIT_USAGE, f"invalid arguments: {exc}"
    if isinstance(exc, (errors.ToolNotFound, errors.PromptNotFound, errors.ResourceNotFound)):
        return EXIT_SERVER, str(exc)
    if isinstance(exc, errors.TransportDetectionError):
        return EXIT_USAGE, str(exc)
    if isinstance(exc, errors.ServerError):
        return EXIT_SERVER, f"server error: {exc}"
    if isinstance(exc, errors.RemoteProtocolError):
        return EXIT_SERVER, f"protocol error: {exc}"
    if isinstance(
        exc,
        (
            errors.MCPConnectionError,
            errors.TransportError,
            errors.ToolCallError,
            errors.PromptGetError,
        ),
    ):
        return EXIT_CONNECTION, str(exc)
    if isinstance(exc, errors.CapabilityError):
        return EXIT_SERVER, str(exc)  # "server 'x' does not support ..." says it all
    if isinstance(exc, errors.MCPError):
        return EXIT_SERVER, str(exc)
    return EXIT_INTERNAL, f"internal error: {type(exc).__name__}: {exc}"


def _print_error(message: str) -> None:
    # The library's words name its API: said in the command line's (issue 24 E).
    for library, command_line in _IN_CLI_WORDS:
        message = message.replace(library, command_line)
    line = render.one_line(message)
    if not line.startswith(f"{PROG}"):
        line = f"{PROG}: {line}"
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
