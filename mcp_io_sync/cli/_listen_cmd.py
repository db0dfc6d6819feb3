"""``mcp-proto listen``: print a 2026-07-28 server's notifications as they come.

    mcp-proto listen -- python server.py                 # tools/prompts/resources list changes
    mcp-proto listen --resource file:///a --json -c URL  # updates of one resource, as JSON lines

Opens one ``subscriptions/listen`` subscription per server (see docs/cli.md). Each
notification is printed as it arrives: ``METHOD PARAMS`` (text), or one JSON object a
line (``--json``: ``{"server", "method", "params"}``, flushed at once, for a pipe).
Runs until Ctrl-C (exit 130), ``--count`` notifications (exit 0), ``--duration``
seconds (exit 0), or until the server ends the subscription (exit 0 when it does so
cleanly, else the error's exit code).
"""

from __future__ import annotations

import argparse
import json
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp_proto.errors import MCPError
from mcp_proto.modern.notify_queue import ListenFilter

from ._args import EXIT_OK, EXIT_SERVER, CommandFailed
from ._log import classify

if TYPE_CHECKING:
    from .._listen import Subscription
    from ._commands import Runner

__all__ = ["add_listen_command", "cmd_listen"]

_LOGGER = logging.getLogger("mcp_io_sync.cli")


def add_listen_command(command: Callable[..., argparse.ArgumentParser]) -> None:
    """Register ``listen`` with the parser (``command`` is ``build_parser``'s)."""
    p = command(
        "listen",
        "print the server's notifications as they come (2026-07-28 servers)",
        "[--tools] [--prompts] [--resources] [--resource URI]... [--count N] [--duration S]",
    )
    p.add_argument("--tools", action="store_true", help="tools/list_changed")
    p.add_argument("--prompts", action="store_true", help="prompts/list_changed")
    p.add_argument("--resources", action="store_true", help="resources/list_changed")
    p.add_argument(
        "--resource",
        metavar="URI",
        action="append",
        default=[],
        dest="resource_uris",
        help="resources/updated for this URI (repeatable)",
    )
    p.add_argument("--count", type=int, metavar="N", help="stop after N notifications")
    p.add_argument("--duration", type=float, metavar="SECONDS", help="stop after SECONDS")


_LISTS = ("tools", "prompts", "resources")


def _filter(opts: argparse.Namespace, server: Any) -> ListenFilter:
    flags = (opts.tools, opts.prompts, opts.resources)
    if not any(flags) and not opts.resource_uris:
        # Nothing chosen: every list change the server says it sends (capabilities
        # ``tools.listChanged``...). A handshake-era server gets the full filter, and
        # listen's own error: that era has no listen at all.
        flags = (True, True, True)
        if server.is_modern:
            flags = tuple(server.has_capability(kind, "listChanged") for kind in _LISTS)
            if not any(flags):
                raise CommandFailed(
                    f"server {server.name!r} sends no list changes (its capabilities declare"
                    " no tools, prompts or resources listChanged); ask for a resource's"
                    " updates with --resource URI",
                    EXIT_SERVER,
                )
    return ListenFilter(
        tools_list_changed=flags[0],
        prompts_list_changed=flags[1],
        resources_list_changed=flags[2],
        resource_subscriptions=tuple(opts.resource_uris),
    )


def cmd_listen(runner: Runner) -> int:
    opts, output, client = runner.opts, runner.output, runner.client
    lock = threading.Lock()
    stop = threading.Event()
    seen = [0]

    def printer(server: str) -> Callable[[str, dict[str, Any]], None]:
        def show(method: str, params: dict[str, Any]) -> None:
            with lock:
                if stop.is_set():
                    return
                if output.as_json:
                    line = json.dumps(
                        {"server": server, "method": method, "params": params},
                        ensure_ascii=False,
                        separators=(",", ":"),
                    )
                    output.out.write(line + "\n")
                else:
                    shown = json.dumps(params, ensure_ascii=False, separators=(",", ":"))
                    prefix = f"[{server}] " if runner.multi else ""
                    output.text(f"{prefix}{method} {shown}")
                output.out.flush()
                seen[0] += 1
                if opts.count is not None and seen[0] >= opts.count:
                    stop.set()

        return show

    subs: list[Subscription] = []
    try:
        failures: list[CommandFailed] = []
        for name in runner.usable:
            sub = None
            try:
                server = client.find_server(name)
                sub = server.listen(_filter(opts, server), printer(name))
                granted = sub.wait_acknowledged()
            except (MCPError, CommandFailed) as exc:
                if sub is not None:
                    sub.close()
                if not runner.multi:
                    raise
                # One server that cannot listen does not stop the others (reported
                # once); when none can, that is the command's error.
                code, message = classify(exc, opts, name)
                if repr(name) not in message:
                    message = f"server {name!r}: cannot listen: {message}"
                failures.append(CommandFailed(message, code))
                _LOGGER.warning("%s", message)
                continue
            subs.append(sub)
            unsupported = f" (not granted: {', '.join(sub.unsupported)})" if sub.unsupported else ""
            output.note(
                f"listening to {name}: {json.dumps(dict(granted), default=list)}{unsupported}"
            )
        if not subs and failures:
            raise failures[0]
        deadline = None if opts.duration is None else time.monotonic() + opts.duration
        while not stop.wait(0.1):
            if deadline is not None and time.monotonic() >= deadline:
                break
            ended = [s for s in subs if s.closed]
            if len(ended) == len(subs):
                errors = [s.error for s in ended if s.error is not None]
                if errors:
                    raise errors[0]
                break
        return EXIT_OK
    finally:
        stop.set()
        for sub in subs:
            sub.close()
