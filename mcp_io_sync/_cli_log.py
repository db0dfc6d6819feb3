"""Errors and logging for ``mcp-proto``: the one-line message and exit code of each
failure, the stderr log handler, and the tail of each server's stderr."""

from __future__ import annotations

import argparse
import logging
import re
import sys
from collections import deque

from mcp_proto import errors

from . import _cli_render as render
from ._cli_args import (
    EXIT_CONNECTION,
    EXIT_INTERNAL,
    EXIT_SERVER,
    EXIT_TIMEOUT,
    EXIT_USAGE,
    PROG,
    CommandFailed,
)

# --------------------------------------------------------------------------- errors & logging


class _StderrTail(logging.Handler):
    """Keeps the last lines the server wrote to its stderr, for connection errors."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: deque[str] = deque(maxlen=20)

    def emit(self, record: logging.LogRecord) -> None:
        args = record.args
        tail = isinstance(args, tuple) and len(args) == 2
        line = str(args[1]) if tail and isinstance(args, tuple) else record.getMessage()
        if line.strip():
            self.lines.append(line.strip())


HANDLER = render.StatusAwareHandler(sys.stderr)
TAIL = _StderrTail()


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


def setup_logging(verbose: int, quiet: bool) -> None:
    if verbose:
        level = logging.DEBUG if verbose > 1 else logging.INFO
    else:
        level = logging.ERROR if quiet else logging.WARNING
    HANDLER.setStream(sys.stderr)
    HANDLER.setFormatter(_Formatter(bool(verbose)))
    HANDLER.setLevel(level)
    root = logging.getLogger()
    if HANDLER not in root.handlers:
        root.addHandler(HANDLER)
    root.setLevel(level)
    # The server's stderr is logged at INFO; keep its tail even when not shown.
    stderr_logger = logging.getLogger("mcp_io_sync.stderr")
    stderr_logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    if TAIL not in stderr_logger.handlers:
        stderr_logger.addHandler(TAIL)


def _timed_out(exc: errors.RequestTimeoutError, opts: argparse.Namespace | None) -> str:
    limit = getattr(opts, "effective_timeout", None)
    what = exc.method or "the request"
    after = f" after {limit:g}s" if limit else ""
    return f"{what} timed out{after}; change the limit with --timeout SECONDS"


def classify(exc: BaseException, opts: argparse.Namespace | None) -> tuple[int, str]:
    """The exit code and one-line message for a failure."""
    code, message = _classify(exc, opts)
    # The library's advice names its keyword argument; the command line has an option.
    message = re.sub(
        r"[;:] pass server=$", "; choose one with --config FILE --server NAME", message
    )
    return code, message


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
        message = str(exc)
        if TAIL.lines and not (opts is not None and opts.verbose):
            message += f"; server stderr: {TAIL.lines[-1]}"
        return EXIT_CONNECTION, message
    if isinstance(exc, errors.CapabilityError):
        return EXIT_SERVER, f"not supported by the server: {exc}"
    if isinstance(exc, errors.MCPError):
        return EXIT_SERVER, str(exc)
    return EXIT_INTERNAL, f"internal error: {type(exc).__name__}: {exc}"


def _print_error(message: str) -> None:
    line = render.one_line(message)
    if not line.startswith(f"{PROG}"):
        line = f"{PROG}: {line}"
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
