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

import argparse
import difflib
import json
import logging
import os
import re
import shlex
import signal
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO
from urllib.parse import urlsplit

import attrs

from mcp_proto import errors
from mcp_proto.config import ServerConfig, parse_server_definitions, stdio_argv
from mcp_proto.types import Prompt, Resource, ResourceContent, ResourceTemplate, Tool

from . import _cli_render as render
from ._client import Client, connect, create_client

__all__ = ["main"]

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
_LAUNCHERS = frozenset(
    {"python", "python3", "py", "node", "npx", "uv", "uvx", "run", "deno", "bun", "pipx"}
)
_PYTHON = re.compile(r"python[\d.]*", re.IGNORECASE)
_LOGGER = logging.getLogger("mcp_io_sync.cli")


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
    from . import __version__

    return f"{PROG} {__version__}"


def build_parser() -> argparse.ArgumentParser:
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
    p.add_argument("value", metavar="VALUE", nargs="?", default="", help="what is typed so far")
    p.add_argument(
        "--context",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="an already-resolved argument, sent as context (repeatable)",
    )

    command("ping", "check that the server answers, and how fast")
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
        if scheme and scheme.group(1).lower() not in ("http", "https", "stdio"):
            raise UsageError(
                f"{PROG}: cannot use a {scheme.group(1)}:// URL: give an http(s):// URL, "
                "a stdio:// target or a command"
            )
        if scheme and scheme.group(1).lower() != "stdio":
            opts.url = opts.connect.strip()
    if opts.headers and opts.config is None and opts.url is None:
        raise UsageError(f"{PROG}: --header applies to an http(s) URL server, not a command")
    if opts.url is not None and (opts.env_vars or opts.cwd is not None):
        raise UsageError(f"{PROG}: --env and --cwd apply to a server command, not a URL")
    if opts.command == "call":
        opts.base_arguments = _read_args_json(opts.args_json) if opts.args_json is not None else {}
        opts.pairs = parse_pairs(opts.arguments, what="a tool argument")
    elif opts.command == "prompt":
        opts.pairs = parse_pairs(opts.arguments, what="a prompt argument", as_json=False)
    elif opts.command == "complete":
        opts.pairs = parse_pairs(opts.context, what="--context", as_json=False)
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
            source, text = spec[1:], Path(spec[1:]).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{PROG}: cannot read {source}: {exc.strerror or exc}") from None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{PROG}: {source} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise UsageError(f"{PROG}: {source} must be a JSON object, got {type(value).__name__}")
    return value


def _schema_types(schema: object) -> set[str]:
    """The JSON types a property schema allows (empty: unknown / anything)."""
    if not isinstance(schema, Mapping):
        return set()
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    types: set[str] = set()
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            for option in options:
                found = _schema_types(option)
                if not found:
                    return set()
                types |= found
    return types


def coerce_to_schema(
    tool: Tool | None, values: dict[str, Any], raw: Mapping[str, str]
) -> dict[str, Any]:
    """Keep a ``key=value`` as the typed string when the tool's schema says the
    property is a string (so ``text=123`` sends ``"123"``, not ``123``)."""
    if tool is None:
        return values
    props = tool.input_schema.get("properties")
    if not isinstance(props, Mapping):
        return values
    out = dict(values)
    for key, text in raw.items():
        if isinstance(out.get(key), str):
            continue  # already a string (plain text, or a quoted JSON string)
        types = _schema_types(props.get(key))
        if types == {"string"} or (types and types <= {"string", "null"} and text != "null"):
            out[key] = text
    return out


# --------------------------------------------------------------------------- output


class Output:
    """Where results go, and how (terminal or pipe, JSON or text)."""

    def __init__(self, *, as_json: bool, quiet: bool) -> None:
        self.as_json = as_json
        self.quiet = quiet
        self.out: TextIO = sys.stdout
        self.err: TextIO = sys.stderr
        self.tty = render.stream_is_tty(self.out)
        self.err_tty = render.stream_is_tty(self.err)

    def json(self, value: Any) -> None:
        self.out.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")

    def text(self, text: str) -> None:
        if self.tty:
            text = render.clean(text)
        self.out.write(text if text.endswith("\n") or not text else text + "\n")

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[str]], empty: str) -> None:
        if not rows:
            self.out.write(f"({empty})\n")
            return
        width = render.terminal_columns(self.out) if self.tty else None
        ellipsis = "…" if render._supports(self.out, "…") else "..."
        bold = render.color_ok(self.out)
        self.out.write(render.table(headers, rows, width=width, bold=bold, ellipsis=ellipsis))
        self.out.write("\n")

    def note(self, message: str) -> None:
        """An informational line on stderr (not in quiet mode)."""
        if not self.quiet:
            self.err.write(f"{PROG}: {render.one_line(message)}\n")


def _describe(title: str | None, description: str | None, name: str) -> str:
    first = render.first_line(description)
    if title and title != name:
        return f"{title}: {first}" if first else title
    return first


def _tool_hints(tool: Tool) -> str:
    notes = tool.annotations or {}
    hints = []
    if tool.read_only_hint or tool.is_read_only:
        hints.append("read-only")
    elif notes.get("destructiveHint") is True or tool.is_destructive:
        hints.append("destructive")
    if notes.get("idempotentHint") is True:
        hints.append("idempotent")
    if notes.get("openWorldHint") is False:
        hints.append("closed-world")
    elif notes.get("openWorldHint") is True:
        hints.append("open-world")
    if tool.task_required:
        hints.append("task-only")
    return ", ".join(hints)


def _schema_summary(schema: object) -> str:
    if not isinstance(schema, Mapping):
        return ""
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return "|".join(json.dumps(v, ensure_ascii=False) for v in enum[:6]) + (
            "|..." if len(enum) > 6 else ""
        )
    types = sorted(_schema_types(schema))
    if types == ["array"]:
        items = _schema_summary(schema.get("items"))
        return f"array of {items}" if items else "array"
    return "|".join(types)


def _tool_args(tool: Tool) -> list[tuple[str, bool, Mapping[str, Any]]]:
    props = tool.input_schema.get("properties")
    required = tool.input_schema.get("required")
    req = set(required) if isinstance(required, list) else set()
    if not isinstance(props, Mapping):
        return []
    return [
        (str(name), name in req, schema if isinstance(schema, Mapping) else {})
        for name, schema in props.items()
    ]


def _arg_list(args: Sequence[tuple[str, bool]]) -> str:
    return ", ".join(name if required else f"{name}?" for name, required in args)


# --------------------------------------------------------------------------- commands


class Runner:
    """Runs one command against a connected client."""

    def __init__(self, opts: argparse.Namespace, client: Client, output: Output) -> None:
        self.opts = opts
        self.client = client
        self.output = output
        self.multi = len(client.servers) > 1

    def run(self) -> int:
        handler: Callable[[], int] = getattr(self, f"cmd_{self.opts.command}")
        return handler()

    def _server_column(self, items: Sequence[Any]) -> list[str]:
        return [str(getattr(item, "server", "") or "") for item in items]

    def _with_server(self, item: Any, wire: dict[str, Any]) -> dict[str, Any]:
        if self.multi and getattr(item, "server", None):
            wire["server"] = item.server
        return wire

    # ---- tools

    def cmd_tools(self) -> int:
        tools = self.client.list_tools()
        if self.opts.name is not None:
            return self._describe_tool(tools, self.opts.name)
        if self.output.as_json:
            self.output.json({"tools": [self._with_server(t, t.to_dict()) for t in tools]})
            return EXIT_OK
        headers = ["NAME", "ARGUMENTS", "HINTS", "DESCRIPTION"]
        rows = [
            [
                t.name,
                _arg_list([(n, r) for n, r, _ in _tool_args(t)]),
                _tool_hints(t),
                _describe(t.display_name, t.description, t.name),
            ]
            for t in tools
        ]
        if not any(row[2] for row in rows):
            headers.pop(2)
            rows = [row[:2] + row[3:] for row in rows]
        if self.multi:
            headers.insert(0, "SERVER")
            rows = [[s, *row] for s, row in zip(self._server_column(tools), rows, strict=True)]
        self.output.table(headers, rows, "no tools")
        return EXIT_OK

    def _describe_tool(self, tools: Sequence[Tool], name: str) -> int:
        matches = [t for t in tools if t.name == name]
        if not matches:
            raise errors.ToolNotFound(f"no tool named {name!r}{_suggest(name, tools)}")
        if self.output.as_json:
            self.output.json([self._with_server(t, t.to_dict()) for t in matches])
            return EXIT_OK
        for i, tool in enumerate(matches):
            if i:
                self.output.text("")
            lines = [tool.name + (f": {tool.title}" if tool.title else "")]
            if self.multi and tool.server:
                lines.append(f"server: {tool.server}")
            if tool.description:
                lines.append("")
                lines.extend("  " + line for line in tool.description.strip().splitlines())
            lines.append("")
            args = _tool_args(tool)
            if args:
                rows = []
                for arg, required, schema in args:
                    desc = render.first_line(schema.get("description"))
                    if "default" in schema:
                        default = json.dumps(schema.get("default"), ensure_ascii=False)
                        desc = f"{desc} (default {default})" if desc else f"default {default}"
                    rows.append([arg, _schema_summary(schema), "yes" if required else "", desc])
                lines.append("arguments:")
                table = render.table(["NAME", "TYPE", "REQUIRED", "DESCRIPTION"], rows)
                lines.extend("  " + line for line in table.splitlines())
            else:
                lines.append("arguments: none")
            hints = _tool_hints(tool)
            if hints:
                lines.append(f"hints: {hints}")
            if tool.has_structured_output:
                lines.append("output: structured (an outputSchema is declared)")
            self.output.text("\n".join(lines))
        return EXIT_OK

    def cmd_call(self) -> int:
        opts = self.opts
        arguments: dict[str, Any] = dict(opts.base_arguments)
        values, raw = opts.pairs
        if values:
            tool = next((t for t in self.client.list_tools() if t.name == opts.tool), None)
            arguments.update(coerce_to_schema(tool, values, raw))
        reporter = None
        if not self.output.quiet:
            reporter = render.ProgressReporter(self.output.err, tty=self.output.err_tty)
            _HANDLER.reporter = reporter
        try:
            result = self.client.call_tool(
                opts.tool,
                arguments,
                progress=reporter.update if reporter is not None else None,
            )
        except errors.ToolNotFound as exc:
            raise errors.ToolNotFound(
                f"{exc}{_suggest(opts.tool, self.client.tool_cache)}"
            ) from exc
        finally:
            if reporter is not None:
                self._flush_callbacks()
                reporter.finish()
                _HANDLER.reporter = None
        is_error = result.get("isError") is True
        if self.output.as_json:
            self.output.json(result)
        else:
            self.output.text(render.render_call_result(result))
        if is_error:
            self.output.out.flush()
            self.output.err.write(f"{PROG}: tool {opts.tool!r} reported an error (isError)\n")
            return EXIT_TOOL_ERROR
        return EXIT_OK

    def _flush_callbacks(self) -> None:
        """Wait (briefly) until progress callbacks queued before the result have run."""
        self.client.flush_callbacks(timeout=1.0)

    # ---- prompts

    def cmd_prompts(self) -> int:
        prompts = self.client.list_prompts()
        if self.output.as_json:
            self.output.json({"prompts": [self._with_server(p, p.to_dict()) for p in prompts]})
            return EXIT_OK
        headers = ["NAME", "ARGUMENTS", "DESCRIPTION"]
        rows = [
            [
                p.name,
                _arg_list([(a.name, a.required) for a in p.arguments]),
                _describe(p.display_name, p.description, p.name),
            ]
            for p in prompts
        ]
        if self.multi:
            headers.insert(0, "SERVER")
            rows = [[s, *row] for s, row in zip(self._server_column(prompts), rows, strict=True)]
        self.output.table(headers, rows, "no prompts")
        return EXIT_OK

    def cmd_prompt(self) -> int:
        arguments = self.opts.pairs[0]
        try:
            result = self.client.get_prompt(self.opts.name, arguments)
        except errors.PromptNotFound as exc:
            suggestion = _suggest(self.opts.name, self.client.prompt_cache)
            raise errors.PromptNotFound(f"{exc}{suggestion}") from exc
        if self.output.as_json:
            self.output.json(result)
        else:
            self.output.text(render.render_prompt_result(result))
        return EXIT_OK

    # ---- resources

    def cmd_resources(self) -> int:
        resources: list[Resource] = self.client.list_resources()["resources"]
        if self.output.as_json:
            items = [self._with_server(r, r.to_dict()) for r in resources]
            self.output.json({"resources": items})
            return EXIT_OK
        headers = ["URI", "NAME", "MIME TYPE", "DESCRIPTION"]
        rows = [
            [r.uri, r.display_name, r.mime_type or "", render.first_line(r.description)]
            for r in resources
        ]
        if self.multi:
            headers.insert(0, "SERVER")
            rows = [[s, *row] for s, row in zip(self._server_column(resources), rows, strict=True)]
        self.output.table(headers, rows, "no resources")
        return EXIT_OK

    def cmd_templates(self) -> int:
        templates: list[ResourceTemplate] = self.client.list_resource_templates()[
            "resourceTemplates"
        ]
        if self.output.as_json:
            items = [self._with_server(t, t.to_dict()) for t in templates]
            self.output.json({"resourceTemplates": items})
            return EXIT_OK
        headers = ["URI TEMPLATE", "NAME", "MIME TYPE", "DESCRIPTION"]
        rows = [
            [t.uri_template, t.display_name, t.mime_type or "", render.first_line(t.description)]
            for t in templates
        ]
        if self.multi:
            headers.insert(0, "SERVER")
            rows = [[s, *row] for s, row in zip(self._server_column(templates), rows, strict=True)]
        self.output.table(headers, rows, "no resource templates")
        return EXIT_OK

    def cmd_read(self) -> int:
        contents: list[ResourceContent] = self.client.read_resource(self.opts.uri)
        if self.output.as_json:
            self.output.json({"contents": [c.to_dict() for c in contents]})
            return EXIT_OK
        if self.opts.output is not None:
            data = b"".join(c.data for c in contents)
            try:
                Path(self.opts.output).write_bytes(data)
            except OSError as exc:
                raise CommandFailed(
                    f"cannot write {self.opts.output}: {exc.strerror or exc}", EXIT_USAGE
                ) from None
            self.output.note(f"wrote {render.format_size(len(data))} to {self.opts.output}")
            return EXIT_OK
        for i, content in enumerate(contents):
            if len(contents) > 1:
                mime = f" ({content.mime_type})" if content.mime_type else ""
                self.output.text(("\n" if i else "") + f"--- {content.uri}{mime} ---")
            if content.text is not None:
                self.output.text(content.text)
            elif not self.output.tty:
                self.output.out.flush()
                self.output.out.buffer.write(content.data)
                self.output.out.buffer.flush()
            else:
                size = render.format_size(len(content.data))
                mime = content.mime_type or "binary"
                self.output.text(f"[{mime}, {size}: not shown on a terminal; use -o FILE]")
        return EXIT_OK

    # ---- completion

    def cmd_complete(self) -> int:
        opts = self.opts
        if opts.prompt is not None:
            ref: dict[str, Any] = {"type": "ref/prompt", "name": opts.prompt}
        else:
            ref = {"type": "ref/resource", "uri": opts.resource}
        context_args = opts.pairs[0]
        context = {"arguments": context_args} if context_args else None
        result = self.client.complete(
            ref, {"name": opts.argument, "value": opts.value}, context=context
        )
        if self.output.as_json:
            self.output.json({"completion": result})
            return EXIT_OK
        values = result.get("values")
        values = values if isinstance(values, list) else []
        if values:
            self.output.text("\n".join(str(v) for v in values))
        elif self.output.tty:
            self.output.text("(no completions)")
        total = result.get("total")
        if result.get("hasMore") or (isinstance(total, int) and total > len(values)):
            shown = f" of {total}" if isinstance(total, int) else ""
            self.output.note(f"showing {len(values)}{shown} completions; type more to narrow")
        return EXIT_OK

    # ---- ping

    def cmd_ping(self) -> int:
        report: list[dict[str, Any]] = []
        lines: list[str] = []
        for server in self.client.servers:
            start = time.perf_counter()
            self.client.ping(server=server.name)
            elapsed = (time.perf_counter() - start) * 1000
            info = server.info
            impl = info.server_info.to_dict() if info and info.server_info else None
            version = info.protocol_version if info is not None else None
            report.append(
                {
                    "server": server.name,
                    "latencyMs": round(elapsed, 3),
                    "protocolVersion": version,
                    "serverInfo": impl,
                }
            )
            who = " ".join(str(impl[k]) for k in ("name", "version") if impl and impl.get(k))
            label = f"{server.name} ({who})" if who else server.name
            lines.append(f"{label}: pong in {elapsed:.1f} ms (protocol {version})")
        if self.output.as_json:
            self.output.json(report)
        else:
            self.output.text("\n".join(lines))
        return EXIT_OK


def _suggest(name: str, items: Sequence[Tool] | Sequence[Prompt]) -> str:
    names = sorted({item.name for item in items})
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    if close:
        return "; did you mean " + " or ".join(repr(c) for c in close) + "?"
    if names and len(names) <= 12:
        return f"; available: {', '.join(names)}"
    return ""


# --------------------------------------------------------------------------- connecting


def _server_name(argv: Sequence[str]) -> str:
    """A short server name from its command, for messages: ``python x/demo_server.py``
    -> ``demo_server``, ``npx -y @scope/server-foo`` -> ``server-foo``."""

    def stem(word: str) -> str:
        base = os.path.basename(word.rstrip("/\\")) or word
        base = re.sub(r"\.(py|js|mjs|cjs|ts|exe|cmd|bat)$", "", base, flags=re.IGNORECASE)
        return base.rsplit("/", 1)[-1]

    launcher = stem(argv[0]) if argv else "server"
    rest = list(argv[1:]) if launcher.lower() in _LAUNCHERS or _PYTHON.fullmatch(launcher) else []
    if not rest:
        return launcher or "server"
    i = 0
    while i < len(rest):
        word = rest[i]
        if word in ("-c", "-e", "--eval"):
            return launcher
        if word == "-m" and i + 1 < len(rest):
            return rest[i + 1]
        if word.startswith("-") or word.lower() in _LAUNCHERS:
            i += 1
            continue
        name = stem(word)
        return name if name and not any(ch.isspace() for ch in name) else launcher
    return launcher


def load_config(opts: argparse.Namespace) -> list[ServerConfig]:
    path = Path(opts.config)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"{PROG}: cannot read {opts.config}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(f"{PROG}: {opts.config} is not valid JSON: {exc}") from None
    try:
        configs, warnings = parse_server_definitions(data)
    except ValueError as exc:
        raise UsageError(f"{PROG}: {opts.config}: {exc}") from None
    for warning in warnings:
        other = re.match(r"server '(.*?)': ", warning)
        if opts.server is not None and other and other.group(1).lower() != opts.server.lower():
            continue  # about a server that is not used
        # Most real-world files (Claude Desktop, Cursor...) omit "type": not worth a warning.
        inferred = "no 'type' given; inferred" in warning
        _LOGGER.log(logging.INFO if inferred else logging.WARNING, "%s: %s", opts.config, warning)
    names = [c.name or f"server_{i}" for i, c in enumerate(configs)]
    if opts.server is not None:
        chosen = [c for c, n in zip(configs, names, strict=True) if n == opts.server] or [
            c for c, n in zip(configs, names, strict=True) if n.lower() == opts.server.lower()
        ]
        if not chosen:
            available = ", ".join(names) or "none"
            raise UsageError(
                f"{PROG}: no server named {opts.server!r} in {opts.config} (available: {available})"
            )
        configs = chosen[:1]
    if not configs:
        raise UsageError(f"{PROG}: {opts.config} defines no usable server")
    env = opts.env_vars
    out = []
    for cfg in configs:
        changes: dict[str, Any] = {}
        if opts.timeout is not None:
            changes["read_timeout"] = opts.timeout
        if cfg.type != "stdio" and opts.headers:
            changes["headers"] = {**cfg.headers, **opts.headers}
        if cfg.type == "stdio":
            if env:
                changes["env"] = {**(cfg.env or {}), **env}
            if opts.cwd is not None:
                changes["cwd"] = opts.cwd
        out.append(attrs.evolve(cfg, **changes) if changes else cfg)
    return out


def open_client(opts: argparse.Namespace) -> Client:
    """Connect as the options say; every server is connected before this returns."""
    if opts.config is not None:
        configs = load_config(opts)
        if len({c.read_timeout for c in configs}) == 1:
            opts.effective_timeout = configs[0].read_timeout
        client = create_client(configs)
        try:
            client.connect_all()
        except BaseException:
            client.close()
            raise
        return client
    env = opts.env_vars
    kwargs: dict[str, Any] = {}
    if opts.timeout is not None:
        kwargs["read_timeout"] = opts.timeout
    opts.effective_timeout = opts.timeout
    if opts.url is not None:
        if opts.headers:
            kwargs["headers"] = opts.headers
        host = urlsplit(opts.url).hostname
        return connect(opts.url, name=host or None, **kwargs)
    target: str | None = opts.connect
    if opts.server_argv is not None:
        argv = list(opts.server_argv)
    else:
        assert target is not None
        try:
            argv = list(stdio_argv(target))
        except ValueError as exc:
            raise UsageError(f"{PROG}: bad server command: {exc}") from None
    return connect(
        shlex.join(argv),
        transport="stdio",
        name=_server_name(argv),
        env=env or None,
        cwd=opts.cwd,
        **kwargs,
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


_HANDLER = render.StatusAwareHandler(sys.stderr)
_TAIL = _StderrTail()


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
    _HANDLER.setStream(sys.stderr)
    _HANDLER.setFormatter(_Formatter(bool(verbose)))
    _HANDLER.setLevel(level)
    root = logging.getLogger()
    if _HANDLER not in root.handlers:
        root.addHandler(_HANDLER)
    root.setLevel(level)
    # The server's stderr is logged at INFO; keep its tail even when not shown.
    stderr_logger = logging.getLogger("mcp_io_sync.stderr")
    stderr_logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    if _TAIL not in stderr_logger.handlers:
        stderr_logger.addHandler(_TAIL)


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
        if _TAIL.lines and not (opts is not None and opts.verbose):
            message += f"; server stderr: {_TAIL.lines[-1]}"
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


def _on_sigint(signum: int, frame: object) -> None:
    # A second Ctrl-C while shutting down exits at once.
    signal.signal(signal.SIGINT, lambda *_: os._exit(EXIT_INTERRUPTED))
    raise KeyboardInterrupt


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
    try:
        opts = parse_args(args)
    except UsageError as exc:
        _print_error(str(exc))
        return EXIT_USAGE
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    setup_logging(opts.verbose, opts.quiet)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _on_sigint)
    output = Output(as_json=opts.json, quiet=opts.quiet)
    client: Client | None = None
    try:
        client = open_client(opts)
        limits = {server.read_timeout for server in client.servers}
        opts.effective_timeout = limits.pop() if len(limits) == 1 else None
        code = Runner(opts, client, output).run()
        sys.stdout.flush()
        return code
    except KeyboardInterrupt:
        _HANDLER.reporter = None
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
        code, message = classify(exc, opts)
        if opts.verbose:
            traceback.print_exc()
        elif code == EXIT_INTERNAL:
            message += " (run with -v for the traceback)"
        _print_error(message)
        return code
    finally:
        if client is not None:
            try:
                client.close()
            except KeyboardInterrupt:
                pass


if __name__ == "__main__":
    sys.exit(main())
