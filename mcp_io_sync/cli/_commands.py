"""The ``mcp-proto`` commands, run against a connected client, and where their output
goes."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from mcp_proto import errors
from mcp_proto.types import Prompt, Resource, ResourceContent, ResourceTemplate, Tool

from .._client import Client
from . import _render as render
from ._args import EXIT_OK, EXIT_SERVER, EXIT_TOOL_ERROR, EXIT_USAGE, PROG, CommandFailed
from ._listen_cmd import cmd_listen
from ._log import HANDLER, classify
from ._schema import (
    _arg_list,
    _describe,
    _suggest,
    _tool_args,
    _tool_hints,
    arg_rows,
    coerce_to_schema,
)
from ._tasks_cmd import cmd_call_task, cmd_skill, cmd_skills, cmd_task, cmd_tasks

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

    def table(
        self,
        headers: Sequence[str],
        rows: Sequence[Sequence[str]],
        empty: str,
        expendable: Sequence[str] = (),
    ) -> None:
        if not rows:
            self.out.write(f"({empty})\n")
            return
        width = render.terminal_columns(self.out) if self.tty else None
        ellipsis = "…" if render._supports(self.out, "…") else "..."
        bold = render.color_ok(self.out)
        self.out.write(
            render.table(
                headers, rows, width=width, bold=bold, ellipsis=ellipsis, expendable=expendable
            )
        )
        self.out.write("\n")

    def note(self, message: str) -> None:
        """An informational line on stderr (not in quiet mode)."""
        if not self.quiet:
            self.err.write(f"{PROG}: {render.one_line(message)}\n")


# --------------------------------------------------------------------------- commands


_CAPABILITY = {
    "tools": "tools",
    "prompts": "prompts",
    "resources": "resources",
    "templates": "resources",
}
_WHAT = {
    "tools": "tools",
    "prompts": "prompts",
    "resources": "resources",
    "templates": "resource templates",
}
_LOGGER = logging.getLogger("mcp_io_sync.cli")
#: ``call``'s limit on a terminal without ``--timeout`` (seconds): the tool may ask the
#: user a question, whose answer takes a person's time (server-everything waits 10
#: minutes for one). Ctrl-C ends it sooner.
INTERACTIVE_CALL_TIMEOUT = 600.0


class Runner:
    """Runs one command against a connected client."""

    def __init__(
        self,
        opts: argparse.Namespace,
        client: Client,
        output: Output,
        usable: Sequence[str] | None = None,
    ) -> None:
        self.opts = opts
        self.client = client
        self.output = output
        # The servers that connected. Every request names its server, so a config
        # entry that could not start is never retried (and never reported again), and
        # a failed list is reported once, by the CLI (issue 8 items 4 and 10).
        self.usable = list(usable) if usable is not None else [s.name for s in client.servers]
        self.multi = len(self.usable) > 1

    cmd_listen = cmd_listen  # mcp-proto listen (_listen_cmd.py)
    # mcp-proto tasks, task, skills, skill (_tasks_cmd.py)
    cmd_tasks = cmd_tasks
    cmd_task = cmd_task
    cmd_skills = cmd_skills
    cmd_skill = cmd_skill

    def run(self) -> int:
        if self.opts.log_level is not None:
            self._set_log_level(self.opts.log_level)
        handler: Callable[[], int] = getattr(self, f"cmd_{self.opts.command}")
        return handler()

    def _set_log_level(self, level: str) -> None:
        for name in self.usable:
            if self.client.find_server(name).has_capability("logging"):
                self.client.set_log_level(level, server=name)
            else:
                _LOGGER.warning(
                    "server %r does not declare the 'logging' capability; "
                    "--log-level is ignored for it",
                    name,
                )

    # ---- which server offers what

    def _offering(self, kind: str) -> list[str]:
        """The usable servers declaring ``kind``'s capability. Asked for a list that no
        server offers, say so instead of printing an empty list (issue 8 item 11): the
        library's aggregate lists are rightly silent about it, one server's are not."""
        capability = _CAPABILITY[kind]
        names = [n for n in self.usable if self.client.find_server(n).has_capability(capability)]
        if names:
            return names
        what = _WHAT[kind]
        if len(self.usable) == 1:
            who = f"server {self.usable[0]!r} offers no {what}"
        else:
            who = f"none of the servers ({', '.join(self.usable)}) offers {what}"
        raise CommandFailed(
            f"{who}: it does not declare the {capability!r} capability", EXIT_SERVER
        )

    def _list(self, kind: str) -> list[Any]:
        """``kind``'s items from every usable server that offers them. A server whose
        list fails is reported once; when every one fails, that is the command's one
        error line (issue 8 item 10)."""
        fetchers: dict[str, Callable[[str], list[Any]]] = {
            "tools": lambda n: self.client.list_tools(server=n),
            "prompts": lambda n: self.client.list_prompts(server=n),
            "resources": lambda n: list(self.client.list_resources(server=n).resources),
            "templates": lambda n: list(
                self.client.list_resource_templates(server=n).resource_templates
            ),
        }
        fetch = fetchers[kind]
        items: list[Any] = []
        failures: list[CommandFailed] = []
        for name in self._offering(kind):
            try:
                items.extend(fetch(name))
            except errors.MCPError as exc:
                code, message = classify(exc, self.opts, name)
                failure = CommandFailed(
                    f"listing {_WHAT[kind]} of server {name!r} failed: {message}", code
                )
                if len(self.usable) == 1:
                    raise failure from exc
                failures.append(failure)
        if failures and len(failures) == len(self._offering(kind)):
            raise failures[0]
        for failure in failures:
            _LOGGER.warning("%s", failure)
        return items

    def _owner(self, kind: str, name: str) -> tuple[str, Any]:
        """The server offering the tool or prompt ``name``, and the item."""
        items = self._list(kind)
        matches = [item for item in items if item.name == name]
        noun = kind[:-1]
        if not matches:
            error = errors.ToolNotFound if kind == "tools" else errors.PromptNotFound
            raise error(f"no {noun} named {name!r}{_suggest(name, items)}")
        owners = sorted({str(item.server) for item in matches})
        if len(owners) > 1:
            ambiguous = errors.AmbiguousToolName if kind == "tools" else errors.AmbiguousPromptName
            raise ambiguous(
                f"{noun} {name!r} is offered by servers {', '.join(map(repr, owners))}; "
                "choose one with --config FILE --server NAME"
            )
        return owners[0], matches[0]

    def _resource_owner(self, uri: str) -> str:
        if len(self.usable) == 1:
            return self._offering("resources")[0]
        owners = sorted({str(r.server) for r in self._list("resources") if r.uri == uri})
        if len(owners) > 1:
            raise errors.AmbiguousResourceURI(
                f"resource {uri!r} is offered by servers {', '.join(map(repr, owners))}; "
                "choose one with --config FILE --server NAME"
            )
        if owners:
            return owners[0]
        # RES-3: a URI reachable only through a template is in no list; if exactly one
        # server offers resources at all, it is the one to ask.
        capable = self._offering("resources")
        if len(capable) == 1:
            return capable[0]
        raise errors.ResourceNotFound(
            f"no server lists a resource {uri!r}; choose one with --config FILE --server NAME"
        )

    def _server_column(self, items: Sequence[Any]) -> list[str]:
        return [str(getattr(item, "server", "") or "") for item in items]

    def _with_server(self, item: Any, wire: dict[str, Any]) -> dict[str, Any]:
        if self.multi and getattr(item, "server", None):
            wire["server"] = item.server
        return wire

    # ---- tools

    def cmd_tools(self) -> int:
        tools: list[Tool] = self._list("tools")
        if self.opts.name is not None:
            return self._describe_tool(tools, self.opts.name)
        if self.output.as_json:
            self.output.json(
                {
                    "tools": [self._with_server(t, t.to_dict()) for t in tools],
                    "servers": {n: self._era(n) for n in self.usable},
                }
            )
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
        self.output.table(headers, rows, "no tools", expendable=("HINTS",))
        # Which revision each server speaks (issue 10), as a note on stderr (not with
        # -q): stdout stays the table alone, for scripts that read it. "--json" has it
        # in its "servers" object.
        for name in self.usable:
            era = self._era(name)
            self.output.note(f"server {name}: {era['protocolVersion']} ({era['era']})")
        return EXIT_OK

    def _era(self, name: str) -> dict[str, Any]:
        server = self.client.find_server(name)
        return {"protocolVersion": server.protocol_version, "era": server.protocol_era}

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
            rows = arg_rows(tool)
            if rows:
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
        owner, tool = self._owner("tools", opts.tool)
        if values:
            arguments.update(coerce_to_schema(tool, values, raw))
        reporter = None
        if not self.output.quiet:
            reporter = render.ProgressReporter(self.output.err, tty=self.output.err_tty)
            HANDLER.reporter = reporter
        asker = getattr(opts, "asker", None)
        timeout = None
        if asker is not None:
            asker.tool, asker.server = opts.tool, owner
            if asker.interactive and opts.timeout is None and opts.config is None:
                # The time a user takes to answer a form counts against the call's
                # limit (the request is pending meanwhile): on a terminal, without
                # --timeout (or a config file's readTimeout), the call waits as long as a
                # person may need.
                timeout = INTERACTIVE_CALL_TIMEOUT
                opts.effective_timeout = timeout
        try:
            if opts.task:
                result = cmd_call_task(self, owner, arguments)
            else:
                result = self.client.call_tool(
                    opts.tool,
                    arguments,
                    server=owner,
                    progress=reporter.update if reporter is not None else None,
                    timeout=timeout,
                )
        finally:
            if asker is not None:
                asker.stop()  # a question still open ends now (Ctrl-C, a timeout)
            if reporter is not None:
                self._flush_callbacks()
                reporter.finish()
                HANDLER.reporter = None
        if self.output.as_json:
            self.output.json(result.to_dict())
        else:
            self.output.text(render.render_call_result(result))
        if result.is_error:
            self.output.out.flush()
            self.output.err.write(f"{PROG}: tool {opts.tool!r} reported an error (isError)\n")
            return EXIT_TOOL_ERROR
        return EXIT_OK

    def _flush_callbacks(self) -> None:
        """Wait (briefly) until progress callbacks queued before the result have run."""
        self.client.flush_callbacks(timeout=1.0)

    # ---- prompts

    def cmd_prompts(self) -> int:
        prompts: list[Prompt] = self._list("prompts")
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
        owner, _ = self._owner("prompts", self.opts.name)
        result = self.client.get_prompt(self.opts.name, arguments, server=owner)
        if self.output.as_json:
            self.output.json(result.to_dict())
        else:
            self.output.text(render.render_prompt_result(result))
        return EXIT_OK

    # ---- resources

    def cmd_resources(self) -> int:
        resources: list[Resource] = self._list("resources")
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
        templates: list[ResourceTemplate] = self._list("templates")
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
        owner = self._resource_owner(self.opts.uri)
        contents: list[ResourceContent] = self.client.read_resource(self.opts.uri, server=owner)
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

    def _completion_owner(self, ref: dict[str, Any]) -> str:
        if len(self.usable) == 1:
            return self.usable[0]
        if ref["type"] == "ref/prompt":
            return self._owner("prompts", str(ref["name"]))[0]
        owners = sorted(
            {str(t.server) for t in self._list("templates") if t.uri_template == ref["uri"]}
        )
        if len(owners) == 1:
            return owners[0]
        raise CommandFailed(
            f"{'several servers offer' if owners else 'no server offers'} the template "
            f"{ref['uri']!r}; choose one with --config FILE --server NAME",
            EXIT_USAGE,
        )

    def cmd_complete(self) -> int:
        opts = self.opts
        if opts.prompt is not None:
            ref: dict[str, Any] = {"type": "ref/prompt", "name": opts.prompt}
        else:
            ref = {"type": "ref/resource", "uri": opts.resource}
        context_args = opts.pairs[0]
        context = {"arguments": context_args} if context_args else None
        result = self.client.complete(
            ref,
            {"name": opts.argument, "value": opts.value},
            context=context,
            server=self._completion_owner(ref),
        )
        if self.output.as_json:
            self.output.json({"completion": result.to_dict()})
            return EXIT_OK
        values = result.completions
        if values:
            self.output.text("\n".join(values))
        elif self.output.tty:
            self.output.text("(no completions)")
        total = result.total
        if result.has_more or (total is not None and total > len(values)):
            shown = f" of {total}" if total is not None else ""
            self.output.note(f"showing {len(values)}{shown} completions; type more to narrow")
        return EXIT_OK

    # ---- ping

    def cmd_ping(self) -> int:
        report: list[dict[str, Any]] = []
        lines: list[str] = []
        for server in map(self.client.find_server, self.usable):
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
