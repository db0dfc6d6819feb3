"""The ``mcp-proto`` commands, run against a connected client, and where their output
goes."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from mcp_proto import errors
from mcp_proto.types import Resource, ResourceContent, ResourceTemplate, Tool

from . import _cli_render as render
from ._cli_args import EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE, PROG, CommandFailed
from ._cli_log import HANDLER
from ._cli_schema import (
    _arg_list,
    _describe,
    _schema_summary,
    _suggest,
    _tool_args,
    _tool_hints,
    coerce_to_schema,
)
from ._client import Client

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
            HANDLER.reporter = reporter
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
                HANDLER.reporter = None
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
