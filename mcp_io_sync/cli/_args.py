"""Command-line parsing for ``mcp-proto``: the options, the server selection, and the
``KEY=VALUE`` / ``--args`` tool arguments. Everything checkable is checked here, before
any server is started (exit code 2 on a bad command line)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit

PROG = "mcp-proto"

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2
EXIT_CONNECTION = 3
EXIT_SERVER = 4
EXIT_TIMEOUT = 5
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


class UsageError(Exception):
    """Bad command line (exit code 2)."""


class CommandFailed(Exception):
    """A failure already worded for the user, with its exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


# --------------------------------------------------------------------------- parsing


class _Parser(argparse.ArgumentParser):
    """argparse whose errors are one line (exit code 2 is applied by ``main``)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see '{self.prog} --help')")


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or value != value or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


# --transport values: the library's ``transport=`` names (CONN-11), with the dash
# spelling of Streamable HTTP that config files use.
TRANSPORTS = ("stdio", "streamable_http", "streamable-http", "sse", "http", "websocket")
# logging/setLevel levels (spec: server/utilities/logging), lowest first.
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def _log_level(text: str) -> str:
    level = text.strip().lower()
    if level not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(
            f"unknown log level {text!r} (expected one of {', '.join(LOG_LEVELS)})"
        )
    return level


def _add_global_options(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """Options valid before and after the command. Below the command they default to
    ``SUPPRESS`` so that they do not overwrite what was given before it."""

    def default(value: Any) -> Any:
        return value if top else argparse.SUPPRESS

    group = parser.add_argument_group("server selection (one of)")
    group.add_argument(
        "-c",
        "--connect",
        metavar="TARGET",
        default=default(None),
        help='a server command line ("python server.py") or URL; or put the command '
        "after -- at the end",
    )
    group.add_argument(
        "--config",
        metavar="FILE",
        default=default(None),
        help='a JSON server definition file ({"mcpServers": {...}})',
    )
    group.add_argument(
        "--server",
        metavar="NAME",
        default=default(None),
        help="with --config: use only this server (default: all of them)",
    )
    opts = parser.add_argument_group("common options")
    opts.add_argument(
        "--json",
        action="store_true",
        default=default(False),
        help="print the raw results as JSON on stdout",
    )
    opts.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=_positive_float,
        default=default(None),
        help="bound on the connection and on each request (default: 15 for a command, "
        "or the config file's readTimeout)",
    )
    opts.add_argument(
        "--env",
        metavar="KEY=VALUE",
        action="append",
        default=default([]),
        dest="env_" if top else "env_sub",
        help="set an environment variable for the server process (repeatable)",
    )
    opts.add_argument(
        "--cwd", metavar="DIR", default=default(None), help="working directory of the server"
    )
    opts.add_argument(
        "-H",
        "--header",
        metavar="'NAME: VALUE'",
        action="append",
        default=default([]),
        dest="header_" if top else "header_sub",
        help="an HTTP header for a URL server, e.g. 'Authorization: Bearer ...' (repeatable)",
    )
    opts.add_argument(
        "--transport",
        choices=TRANSPORTS,
        default=default(None),
        help="force the transport instead of guessing it from the target: stdio for a "
        "command; streamable_http, sse or http (plain HTTP, request/response) for a URL; "
        "websocket for a ws(s):// URL",
    )
    opts.add_argument(
        "--endpoint",
        metavar="PATH",
        default=default(None),
        help="with -c URL: the path requests are POSTed to, instead of the URL's own "
        "(Streamable HTTP and plain HTTP)",
    )
    opts.add_argument(
        "--proxy",
        metavar="URL",
        default=default(None),
        help="reach URL servers (-c URL or --config) through this proxy: "
        "http://[user:password@]host:port, https://... or socks5://...; without it, "
        "HTTP_PROXY / HTTPS_PROXY / NO_PROXY apply",
    )
    opts.add_argument(
        "--protocol",
        choices=("auto", "modern", "legacy"),
        default=default(None),
        help="the protocol era: auto (default: probe with server/discover, fall back to "
        "the initialize handshake), modern (2026-07-28 only) or legacy (handshake only)",
    )
    opts.add_argument(
        "--log-level",
        metavar="LEVEL",
        type=_log_level,
        default=default(None),
        help="ask the servers to send log messages from LEVEL up (debug, info, notice, "
        "warning, error, critical, alert, emergency) and show them on stderr",
    )
    opts.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        default=default(False),
        help="no progress display and no warnings",
    )
    opts.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=default(0),
        dest="verbose" if top else "verbose_sub",
        help="log to stderr (-v: info and the server's stderr, -vv: debug); show tracebacks",
    )


def _version() -> str:
    from .. import __version__

    return f"{PROG} {__version__}"


def build_parser() -> argparse.ArgumentParser:
    from ._listen_cmd import add_listen_command
    from ._tasks_cmd import add_task_commands

    parser = _Parser(
        prog=PROG,
        usage=f"{PROG} [options] COMMAND [ARGS...] [-- SERVER_COMMAND...]",
        description="Talk to a Model Context Protocol server from the command line.",
        epilog="examples:\n"
        f"  {PROG} tools -- python server.py\n"
        f'  {PROG} -c "python server.py" call add a=1 b=2\n'
        f'  {PROG} call search --args \'{{"query": "mcp", "limit": 5}}\' -- npx -y some-server\n'
        f"  {PROG} --config mcp.json --server files resources\n\n"
        "exit codes: 0 ok, 1 tool error (isError), 2 usage, 3 connection/transport,\n"
        "            4 server/protocol error, 5 timeout, 70 internal error, 130 interrupted",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=_version())
    _add_global_options(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    def command(name: str, help: str, args: str = "") -> argparse.ArgumentParser:
        usage = f"{PROG} [options] {name} {args}{' ' if args else ''}[-- SERVER_COMMAND...]"
        p = sub.add_parser(
            name,
            help=help,
            description=f"{help[0].upper()}{help[1:]}. The options can also come before "
            f"'{name}'. Give the server after --, with -c TARGET, or with --config FILE.",
            prog=f"{PROG} {name}",
            usage=usage,
        )
        _add_global_options(p, top=False)
        return p

    p = command("tools", "list the tools (or describe one)", "[TOOL]")
    p.add_argument("name", nargs="?", metavar="TOOL", help="show this tool's arguments in detail")

    p = command("call", "call a tool", "TOOL [KEY=VALUE...] [--args JSON]")
    p.add_argument("tool", metavar="TOOL")
    p.add_argument(
        "arguments",
        nargs="*",
        default=[],
        metavar="KEY=VALUE",
        help="a tool argument; VALUE is parsed as JSON when it parses (1, true, "
        '[1,2], {"a":1}), otherwise taken as a string',
    )
    p.add_argument(
        "--task",
        action="store_true",
        help="run the tool as a task: its status is shown while it runs, then its result",
    )
    p.add_argument(
        "--args",
        metavar="JSON",
        dest="args_json",
        help="all arguments as a JSON object; @FILE reads it from a file, - from stdin "
        "(KEY=VALUE pairs are applied on top)",
    )

    command("prompts", "list the prompts")

    p = command("prompt", "get a prompt", "PROMPT [KEY=VALUE...]")
    p.add_argument("name", metavar="PROMPT")
    p.add_argument(
        "arguments",
        nargs="*",
        default=[],
        metavar="KEY=VALUE",
        help="a prompt argument (always a string)",
    )

    command("resources", "list the resources")
    command("templates", "list the resource templates")

    p = command("read", "read a resource", "URI [-o FILE]")
    p.add_argument("uri", metavar="URI")
    p.add_argument("-o", "--output", metavar="FILE", help="write the content to FILE (binary safe)")

    p = command(
        "complete",
        "ask for completions of a prompt or resource-template argument",
        "(--prompt NAME | --resource URI_TEMPLATE) ARG [VALUE] [--context KEY=VALUE]",
    )
    ref = p.add_mutually_exclusive_group(required=True)
    ref.add_argument("--prompt", metavar="NAME", help="complete an argument of this prompt")
    ref.add_argument(
        "--resource", metavar="URI_TEMPLATE", help="complete a variable of this URI template"
    )
    p.add_argument("argument", metavar="ARG", help="the argument (or template variable) name")
    p.add_argument(
        "value",
        metavar="VALUE",
        nargs="?",
        default=None,
        help="what is typed so far (ARG=VALUE works too, as for call and prompt)",
    )
    p.add_argument(
        "--context",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="an already-resolved argument, sent as context (repeatable)",
    )

    command("ping", "check that the server answers, and how fast")
    add_listen_command(command)
    add_task_commands(command)
    return parser


def _split_server_argv(argv: Sequence[str]) -> tuple[list[str], list[str] | None]:
    """``(cli args, server argv)``: everything after the first ``--`` is the server."""
    if "--" in argv:
        i = list(argv).index("--")
        return list(argv[:i]), list(argv[i + 1 :])
    return list(argv), None


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    own, server_argv = _split_server_argv(argv)
    parser = build_parser()
    opts, extra = parser.parse_known_args(own)
    # KEY=VALUE pairs after an option (``call t --args '{}' b=5``) land here.
    if extra and opts.command in ("call", "prompt") and not any(x.startswith("-") for x in extra):
        opts.arguments = [*opts.arguments, *extra]
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    # Merge the options given after the command with those given before it.
    opts.env = list(opts.env_) + list(getattr(opts, "env_sub", []))
    opts.header = list(opts.header_) + list(getattr(opts, "header_sub", []))
    opts.verbose = opts.verbose + getattr(opts, "verbose_sub", 0)
    opts.server_argv = server_argv
    if server_argv is not None and not server_argv:
        raise UsageError(f"{PROG}: nothing follows '--': give the server command after it")
    given = [
        name
        for name, present in (
            ("-- SERVER_COMMAND", server_argv is not None),
            ("-c/--connect", opts.connect is not None),
            ("--config", opts.config is not None),
        )
        if present
    ]
    if not given:
        raise UsageError(
            f"{PROG}: no server given: add '-- SERVER_COMMAND...', -c TARGET or "
            "--config FILE (see 'mcp-proto --help')"
        )
    if len(given) > 1:
        raise UsageError(f"{PROG}: give only one of {' and '.join(given)}")
    if opts.server is not None and opts.config is None:
        raise UsageError(f"{PROG}: --server NAME selects a server of a --config file")
    # Check everything that can be checked before a server is started.
    opts.env_vars = parse_env(opts.env)
    opts.headers = parse_headers(opts.header)
    opts.url = None
    if opts.connect is not None:
        scheme = _URL.match(opts.connect.strip())
        if scheme and scheme.group(1).lower() not in ("http", "https", "ws", "wss", "stdio"):
            raise UsageError(
                f"{PROG}: cannot use a {scheme.group(1)}:// URL: give an http(s):// or "
                "ws(s):// URL, a stdio:// target or a command"
            )
        if scheme and scheme.group(1).lower() != "stdio":
            opts.url = opts.connect.strip()
    if opts.headers and opts.config is None and opts.url is None:
        raise UsageError(f"{PROG}: --header applies to an http(s) URL server, not a command")
    if opts.proxy is not None:
        if opts.config is None and opts.url is None:
            raise UsageError(f"{PROG}: --proxy applies to a URL server, not a command")
        proxy_scheme = urlsplit(opts.proxy.strip()).scheme.lower()
        if (
            proxy_scheme not in ("http", "https", "socks5", "socks5h")
            or not urlsplit(opts.proxy.strip()).hostname
        ):
            # Never quoted: the URL may hold the proxy's password.
            raise UsageError(
                f"{PROG}: --proxy expects an http://, https:// or socks5:// URL with a host"
            )
        opts.proxy = opts.proxy.strip()
    if opts.url is not None and (opts.env_vars or opts.cwd is not None):
        raise UsageError(f"{PROG}: --env and --cwd apply to a server command, not a URL")
    if opts.transport is not None:
        opts.transport = opts.transport.replace("-", "_")
        if opts.config is not None:
            raise UsageError(f"{PROG}: --transport does not apply to --config (use 'type')")
        if (opts.url is None) != (opts.transport == "stdio"):
            what = "a URL" if opts.url is not None else "a command"
            raise UsageError(f"{PROG}: --transport {opts.transport} does not apply to {what}")
    if opts.endpoint is not None:
        if opts.url is None:
            raise UsageError(f"{PROG}: --endpoint PATH applies to a -c URL server")
        if urlsplit(opts.url).scheme.lower() in ("ws", "wss"):
            raise UsageError(f"{PROG}: --endpoint does not apply to WebSocket (use the URL)")
        sse = opts.transport == "sse" or (
            opts.transport is None and urlsplit(opts.url).path.rstrip("/").endswith("/sse")
        )
        if sse:
            # HTTP+SSE has no endpoint to choose: the server announces it (CONN-17).
            raise UsageError(f"{PROG}: --endpoint does not apply to HTTP+SSE")
        if not opts.endpoint.startswith("/"):
            raise UsageError(
                f"{PROG}: --endpoint expects a path starting with '/', got {opts.endpoint!r}"
            )
    if opts.command == "call":
        opts.base_arguments = _read_args_json(opts.args_json) if opts.args_json is not None else {}
        opts.pairs = parse_pairs(opts.arguments, what="a tool argument")
    elif opts.command == "prompt":
        opts.pairs = parse_pairs(opts.arguments, what="a prompt argument", as_json=False)
    elif opts.command == "complete":
        opts.pairs = parse_pairs(opts.context, what="--context", as_json=False)
        if opts.value is None:
            # ``department=Eng``, spelled as call and prompt take their arguments (an
            # argument or template variable name never holds "=").
            name, sep, value = opts.argument.partition("=")
            opts.argument, opts.value = (name, value) if sep and name else (opts.argument, "")
    return opts


def parse_env(pairs: Sequence[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"{PROG}: --env expects KEY=VALUE, got {pair!r}")
        env[key] = value
    return env


def parse_headers(lines: Sequence[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for line in lines:
        name, sep, value = line.partition(":")
        if not sep or not name.strip() or any(ch.isspace() for ch in name.strip()):
            raise UsageError(f"{PROG}: --header expects 'NAME: VALUE', got {line!r}")
        headers[name.strip()] = value.strip()
    return headers


def parse_value(text: str) -> Any:
    """A ``key=value`` value: JSON when it parses, else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_pairs(
    pairs: Sequence[str], *, what: str, as_json: bool = True
) -> tuple[dict[str, Any], dict[str, str]]:
    """``(values, raw texts)`` of ``key=value`` arguments (the last of a key wins)."""
    values: dict[str, Any] = {}
    raw: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"{PROG}: {what} must be KEY=VALUE, got {pair!r}")
        values[key] = parse_value(value) if as_json else value
        raw[key] = value
    return values, raw


def _read_args_json(spec: str) -> dict[str, Any]:
    source = "--args"
    text = spec
    try:
        if spec == "-":
            source, text = "stdin", sys.stdin.read()
        elif spec.startswith("@"):
            # Named before reading, so that a missing file is named in the error.
            source = spec[1:]
            text = Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{PROG}: cannot read {source}: {exc.strerror or exc}") from None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{PROG}: {source} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise UsageError(f"{PROG}: {source} must be a JSON object, got {type(value).__name__}")
    return value
