"""``mcp-proto tasks``, ``task``, ``skills``, ``skill`` and ``call --task`` (issue 23).

    mcp-proto tasks -c URL                       # the server's tasks (2025-11-25 tasks/list)
    mcp-proto task get|result|cancel|wait ID -c URL
    mcp-proto call --task simulate-research-query topic=x -- mcp-server-everything
    mcp-proto skills -- python server.py         # io.modelcontextprotocol/skills listing
    mcp-proto skill NAME -- python server.py     # SKILL.md, verified against the listing

Each runs the client's public methods (``list_tasks``, ``get_task``, ...): the CLI adds
printing only. A task id names a task on one server: with several servers (``--config``)
choose one with ``--server NAME``. Over stdio every run starts its own server process,
so ``task ID`` is for servers that outlive the CLI (HTTP).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp_proto.results import ToolResult
from mcp_proto.tasks import STATUS_NOTIFICATIONS, Task

from ._args import EXIT_OK, EXIT_TOOL_ERROR

if TYPE_CHECKING:
    from ._commands import Runner

__all__ = ["add_task_commands", "cmd_call_task", "cmd_skill", "cmd_skills", "cmd_task", "cmd_tasks"]


def add_task_commands(command: Callable[..., argparse.ArgumentParser]) -> None:
    """Register ``tasks``, ``task``, ``skills`` and ``skill`` (``command`` is
    ``build_parser``'s)."""
    p = command("tasks", "list the server's tasks (2025-11-25 servers with tasks/list)")
    p.add_argument("--cursor", metavar="CURSOR", help="the page after this cursor")
    p = command("task", "show, read, wait for or cancel one task", "(get|result|wait|cancel) ID")
    p.add_argument("action", choices=("get", "result", "wait", "cancel"), metavar="ACTION")
    p.add_argument("task_id", metavar="ID")
    command("skills", "list the server's skills (io.modelcontextprotocol/skills)")
    p = command("skill", "load a skill and print its verified SKILL.md", "NAME")
    p.add_argument("name", metavar="NAME", help="the skill's name or its SKILL.md URI")


def _row(task: Task) -> list[str]:
    return [task.task_id, task.status.value, task.status_message or ""]


def _one_server(runner: Runner) -> str:
    return runner.usable[0]


def cmd_tasks(runner: Runner) -> int:
    page = runner.client.list_tasks(cursor=runner.opts.cursor, server=_one_server(runner))
    if runner.output.as_json:
        runner.output.json(
            {"tasks": [t.to_dict() for t in page.tasks], "nextCursor": page.next_cursor}
        )
        return EXIT_OK
    runner.output.table(
        ["ID", "STATUS", "MESSAGE"], [_row(t) for t in page.tasks], "no tasks", ("MESSAGE",)
    )
    if page.next_cursor is not None:
        runner.output.note(f"more: --cursor {page.next_cursor}")
    return EXIT_OK


def cmd_task(runner: Runner) -> int:
    client, opts, output = runner.client, runner.opts, runner.output
    server = _one_server(runner)
    if opts.action == "result":
        result = client.get_task_result(opts.task_id, server=server)
        output.json(result) if output.as_json else output.text(_result_text(result))
        return EXIT_TOOL_ERROR if result.get("isError") is True else EXIT_OK
    if opts.action == "get":
        task = client.get_task(opts.task_id, server=server)
    elif opts.action == "cancel":
        task = client.cancel_task(opts.task_id, server=server)
    else:
        task = client.wait_for_task(opts.task_id, server=server)
    if output.as_json:
        output.json(task.to_dict())
    else:
        output.table(["ID", "STATUS", "MESSAGE"], [_row(task)], "no task", ("MESSAGE",))
    return EXIT_OK


def cmd_call_task(runner: Runner, owner: str, arguments: dict[str, Any]) -> Any:
    """``call --task``: the tool as a task; its status changes go to stderr (unless
    ``--quiet``) while it runs, then its result is returned for ``call`` to print."""
    client, opts, output = runner.client, runner.opts, runner.output
    task = client.call_tool_as_task(opts.tool, arguments, server=owner)
    output.note(f"task {task.task_id}: {task.status.value}")
    shown: tuple[Any, Any] = (task.status.value, task.status_message)

    def on_status(server: Any, method: str, params: dict[str, Any]) -> None:
        nonlocal shown
        if method in STATUS_NOTIFICATIONS and params.get("taskId") == task.task_id:
            now = (params.get("status"), params.get("statusMessage"))
            if now != shown:
                shown = now
                message = f" ({now[1]})" if now[1] else ""
                output.note(f"task {task.task_id}: {now[0]}{message}")

    client.on_notification(on_status)
    try:
        done = client.wait_for_task(task, server=owner)
        if not task.is_immediate and shown[0] != done.status.value:
            output.note(f"task {task.task_id}: {done.status.value}")
        result = client.get_task_result(done, server=owner)
        return ToolResult.from_wire(result, server=owner)
    finally:
        client.remove_notification_handler(on_status)


def cmd_skills(runner: Runner) -> int:
    rows, entries = [], []
    for server in runner.usable:
        for entry in runner.client.list_skills(server=server):
            files = (
                entry.resources
                if entry.resources == "dynamic"
                else [{"uri": f.uri, "digest": f.digest, "size": f.size} for f in entry.resources]
            )
            entries.append(
                {
                    "server": server,
                    "uri": entry.uri,
                    "frontmatter": dict(entry.frontmatter),
                    "resources": files,
                }
            )
            rows.append([entry.name, entry.description, entry.uri])
    if runner.output.as_json:
        runner.output.json(entries)
    else:
        runner.output.table(["NAME", "DESCRIPTION", "URI"], rows, "no skills", ("DESCRIPTION",))
    return EXIT_OK


def cmd_skill(runner: Runner) -> int:
    loaded = runner.client.load_skill(runner.opts.name, server=_one_server(runner))
    if runner.output.as_json:
        runner.output.json({"uri": loaded.entry.uri, "text": loaded.text})
    else:
        runner.output.text(loaded.text)
    return EXIT_OK


def _result_text(result: Any) -> str:
    from . import _render as render

    typed = result if isinstance(result, ToolResult) else ToolResult.from_wire(result, server="")
    return render.render_call_result(typed)
