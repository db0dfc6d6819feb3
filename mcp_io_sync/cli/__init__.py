"""``mcp-proto``: talk to an MCP server from the shell.

    mcp-proto tools -- python server.py
    mcp-proto -c "python server.py" call add a=1 b=2
    mcp-proto --config mcp.json --server files read file:///etc/hosts

The server is given after ``--`` (an argv, no quoting needed), with ``-c/--connect``
(a command line or a URL), or with ``--config FILE [--server NAME]``. See docs/cli.md.

Exit codes: 0 ok, 1 the tool reported an error (``isError``), 2 usage, 3 connection or
transport failure, 4 server or protocol error, 5 timeout, 70 internal error, 130
interrupted.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import traceback
from collections.abc import Sequence

from mcp_io_common.processes import kill_started

from .. import __version__
from .._client import Client

# The command line lives in this package's modules, named for what they hold; ``main``
# is here (the console script's entry point; ``python -m mcp_io_sync.cli`` runs it
# through ``__main__``), and the names below stay importable from ``cli`` (``name as
# name`` marks a deliberate re-export).
from ._args import EXIT_CONNECTION as EXIT_CONNECTION
from ._args import EXIT_INTERNAL as EXIT_INTERNAL
from ._args import EXIT_INTERRUPTED as EXIT_INTERRUPTED
from ._args import EXIT_OK as EXIT_OK
from ._args import EXIT_SERVER as EXIT_SERVER
from ._args import EXIT_TIMEOUT as EXIT_TIMEOUT
from ._args import EXIT_TOOL_ERROR as EXIT_TOOL_ERROR
from ._args import EXIT_USAGE as EXIT_USAGE
from ._args import PROG as PROG
from ._args import CommandFailed as CommandFailed
from ._args import UsageError as UsageError
from ._args import build_parser as build_parser
from ._args import parse_args as parse_args
from ._args import parse_env as parse_env
from ._args import parse_headers as parse_headers
from ._args import parse_pairs as parse_pairs
from ._args import parse_value as parse_value
from ._auth_cmd import AUTH_COMMANDS, auth_main
from ._commands import Output as Output
from ._commands import Runner as Runner
from ._elicit import Asker, stdin_is_terminal
from ._log import HANDLER
from ._log import _print_error as _print_error
from ._log import classify as classify
from ._log import setup_logging as setup_logging
from ._notices import Notices, configuration, state_file
from ._open import _server_name as _server_name
from ._open import load_config as load_config
from ._open import open_client as open_client
from ._schema import _arg_list as _arg_list
from ._schema import _schema_summary as _schema_summary
from ._schema import _tool_args as _tool_args
from ._schema import _tool_hints as _tool_hints
from ._schema import coerce_to_schema as coerce_to_schema

__all__ = ["main"]

_LOGGER = logging.getLogger("mcp_io_sync.cli")


def _on_sigint(signum: int, frame: object) -> None:
    # A second Ctrl-C while shutting down exits at once.
    signal.signal(signal.SIGINT, _on_second_sigint)
    raise KeyboardInterrupt


def _on_second_sigint(signum: int, frame: object) -> None:
    # Without waiting for the graceful close, but not without the servers: each runs
    # in its own session (the terminal's Ctrl-C does not reach it), and would otherwise
    # run on after this process is gone.
    kill_started()
    os._exit(EXIT_INTERRUPTED)


def _safe_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    _safe_streams()
    if args and args[0] in AUTH_COMMANDS:  # login, logout, auth status (issue 21)
        return auth_main(args)
    try:
        opts = parse_args(args)
    except UsageError as exc:
        _print_error(str(exc))
        return EXIT_USAGE
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    setup_logging(opts.verbose, opts.quiet, opts.log_level)
    # Deprecation notices: once per configuration and version, not per command (_notices).
    notices = Notices(state_file(), configuration(opts), __version__)
    notices.silence_shown()
    HANDLER.addFilter(notices)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _on_sigint)
    output = Output(as_json=opts.json, quiet=opts.quiet)
    # A tool that elicits asks the user on a terminal, else is answered cancel (_elicit).
    opts.asker = Asker(interactive=stdin_is_terminal())
    client: Client | None = None
    only: str | None = None  # the one server of the invocation, if there is one

    def skipped(name: str, exc: BaseException) -> None:
        # Issue 8 item 4: once per server and invocation, with that server's own error.
        _LOGGER.warning("server %r skipped: %s", name, classify(exc, opts, name)[1])

    try:
        client, usable = open_client(opts, skipped)
        notices.connected(client.find_server(name).protocol_era for name in usable)
        if len(usable) == 1:
            only = usable[0]
        limits = {client.find_server(name).read_timeout for name in usable}
        opts.effective_timeout = limits.pop() if len(limits) == 1 else None
        code = Runner(opts, client, output, usable).run()
        sys.stdout.flush()
        return code
    except KeyboardInterrupt:
        opts.asker.stop()
        HANDLER.reporter = None
        if output.err_tty:
            sys.stderr.write("\r\x1b[K")  # over the terminal's "^C"
        _print_error("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (``| head``): quietly stop writing.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_OK
    except UsageError as exc:
        _print_error(str(exc))
        return EXIT_USAGE
    except Exception as exc:
        if client is not None:
            client.close()  # let the stderr reader finish (the tail of the server's stderr)
        code, message = classify(exc, opts, only)
        if opts.verbose:
            traceback.print_exc()
        elif code == EXIT_INTERNAL:
            message += " (run with -v for the traceback)"
        _print_error(message)
        return code
    finally:
        opts.asker.stop()  # (no question outlives the command)
        if client is not None:
            try:
                client.close()
            except KeyboardInterrupt:
                pass
        HANDLER.removeFilter(notices)
        notices.remember()
