"""Tasks and skills through the shells' public API, both shells, one suite.

Real peer: ``@modelcontextprotocol/server-everything`` (npm, tests/peers) speaks the
2025-11-25 task API: ``simulate-research-query`` is a task-only tool (a plain call is
answered -32601 "requires task augmentation"); with ``ambiguous`` the server asks for a
clarification on the ``tasks/result`` stream. The 2026-07-28 extension
(``io.modelcontextprotocol/tasks``, SEP-2663) has no published server: the scripted
``tests/servers/tasks_modern.py`` speaks it over stdio (every message it sends checked
against the 2026-07-28 and extension schemas). ``tests/servers/skills_server.py`` is the
SEP-2640 skills peer.

Time is real (server-everything's research stages take a second or so each): the
assertions are on results, messages and states, never on durations.
"""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_proto.config import stdio_config
from mcp_proto.errors import (
    CapabilityError,
    RequestTimeoutError,
    ServerError,
    SkillVerificationError,
    TaskError,
    TaskNotFound,
)
from mcp_proto.tasks import EXTENSION, Task, TaskStatus

from .conftest import EVERYTHING, PEERS_NODE_MODULES, SERVERS, Shell, text_of

if not PEERS_NODE_MODULES.is_dir():
    pytest.skip(f"{PEERS_NODE_MODULES} is missing: run `make peers`", allow_module_level=True)

pytestmark = pytest.mark.peer

RESEARCH = "simulate-research-query"
MODERN: list[str] = [sys.executable, str(SERVERS / "tasks_modern.py")]
SKILLS: list[str] = [sys.executable, str(SERVERS / "skills_server.py")]
TAP = Path(__file__).with_name("stdio_tap.py")


async def got(value: Any) -> Any:
    """A server object's method returns what the client's returns: awaited in Trio."""
    return await value if inspect.isawaitable(value) else value


def pick(message: str, schema: Any) -> dict[str, Any]:
    """server-everything's clarification: choose the first interpretation offered."""
    options = schema["properties"]["interpretation"]["oneOf"]
    return {"action": "accept", "content": {"interpretation": options[0]["const"]}}


# ---------------------------------------------------------------- 2025-11-25, real peer


def test_call_tool_runs_a_task_required_tool_as_a_task(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        tool = await c.find_tool(RESEARCH)
        assert tool is not None and tool.task_required
        result = await c.call_tool(RESEARCH, {"topic": "tasks"}, timeout=60)
        assert "Research Report: tasks" in text_of(result)

    shell.run(scenario, EVERYTHING, protocol="legacy")


def test_call_tool_as_task_wait_and_result_with_elicitation(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        task = await c.call_tool_as_task(RESEARCH, {"topic": "python", "ambiguous": True})
        assert isinstance(task, Task) and task.status is TaskStatus.WORKING
        assert task.server == c.servers[0].name
        done = await c.wait_for_task(task, timeout=60)
        assert done.is_completed and done.task_id == task.task_id
        result = await c.get_task_result(done)
        assert "Clarification" in text_of(result)

    shell.run(scenario, EVERYTHING, protocol="legacy", elicitation_handler=pick)


def test_list_get_cancel_and_a_portable_handle(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        server = c.servers[0]
        task = await got(server.call_tool_as_task(RESEARCH, {"topic": "x"}))  # §E3 scoped
        page = await c.list_tasks()
        assert task.task_id in [t.task_id for t in page.tasks]
        cancelled = await c.cancel_task(task)
        assert cancelled.status is TaskStatus.CANCELLED
        # Another holder of the serialised handle reads the same task (TASK-16).
        again = await c.get_task(Task.from_dict(task.to_dict()))
        assert again.status is TaskStatus.CANCELLED and again.task_id == task.task_id
        with pytest.raises(TaskError, match="already cancelled"):
            await c.cancel_task(again)  # TASK-6: terminal, nothing sent
        with pytest.raises(TaskNotFound):
            await got(server.get_task("no-such-task"))

    shell.run(scenario, EVERYTHING, protocol="legacy")


def test_a_tool_without_task_support_is_refused_before_sending(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        with pytest.raises(TaskError, match="does not support tasks"):
            await c.call_tool_as_task("echo", {"message": "hi"})
        assert "hi" in text_of(await c.call_tool("echo", {"message": "hi"}))

    shell.run(scenario, EVERYTHING, protocol="legacy")


def test_task_status_notifications_reach_on_notification_and_the_log(shell: Shell) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    async def scenario(c: Any) -> None:
        c.on_notification(lambda server, method, params: seen.append((method, params)))
        await c.call_tool(RESEARCH, {"topic": "status"}, timeout=60)
        await c.flush_callbacks()

    shell.run(scenario, EVERYTHING, protocol="legacy")
    statuses = [p for m, p in seen if m == "notifications/tasks/status"]
    assert statuses and all(isinstance(p.get("taskId"), str) for p in statuses)
    assert statuses[-1]["status"] == "completed"
    task_id = statuses[-1]["taskId"]
    # NOTIF-2: parsed and logged (after delivery, NOTIF-5), one line per notification.
    logged = [m for m in shell.log.messages() if f"task {task_id!r} is " in m]
    assert len(logged) == len(statuses) and "is completed" in logged[-1]


def test_a_timed_out_task_is_cancelled_with_tasks_cancel(shell: Shell, tmp_path: Any) -> None:
    """TASK-19: past the call's timeout the task gets tasks/cancel; no
    notifications/cancelled is ever sent for the task-augmented tools/call."""
    log = tmp_path / "tap.jsonl"

    async def scenario(c: Any) -> None:
        await c.list_tools()  # connected and warm: the creation answers at once
        with pytest.raises(RequestTimeoutError):
            await c.call_tool(RESEARCH, {"topic": "slow"}, timeout=2.5)

    shell.run(scenario, [sys.executable, str(TAP), str(log), "--", *EVERYTHING], protocol="legacy")
    sent = [json.loads(e["line"]) for e in map(json.loads, log.read_text().splitlines())
            if e["dir"] == "c2s" and "line" in e]  # fmt: skip
    methods = [m.get("method") for m in sent]
    assert "notifications/cancelled" not in methods
    (create,) = [m for m in sent if m.get("method") == "tools/call"]
    assert "task" in create["params"]
    (cancel,) = [m for m in sent if m.get("method") == "tasks/cancel"]
    received = [json.loads(e["line"]) for e in map(json.loads, log.read_text().splitlines())
                if e["dir"] == "s2c" and "line" in e]  # fmt: skip
    (created,) = [m for m in received if m.get("id") == create["id"]]
    assert cancel["params"]["taskId"] == created["result"]["task"]["taskId"]


@pytest.mark.parametrize(
    "tool", ["trigger-sampling-request-async", "trigger-elicitation-request-async"]
)
def test_the_client_runs_the_servers_request_as_a_task(shell: Shell, tool: str) -> None:
    """Part 2 of issue 23: declaring tasks.requests.sampling.createMessage and
    tasks.requests.elicitation.create, the client answers the server's task-augmented
    request with a task at once, runs the handler, and answers the server's tasks/get
    and tasks/result about it from its bounded store."""

    def sample(messages: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "sampled text"},
                "model": "test-model", "stopReason": "endTurn"}  # fmt: skip

    def elicit(message: str, schema: Any) -> dict[str, Any]:
        props = schema.get("properties", {})
        content = {k: v.get("default", "x") for k, v in props.items() if "default" in v}
        for name, prop in props.items():
            if name not in content:
                content[name] = {"boolean": True, "number": 1, "integer": 1}.get(
                    prop.get("type"), prop.get("enum", ["answer"])[0]
                )
        return {"action": "accept", "content": content}

    async def scenario(c: Any) -> str:
        names = {t.name for t in await c.list_tools()}
        for _ in range(100):
            if tool in names:
                break
            await shell.sleep(0.05)
            names = {t.name for t in await c.list_tools()}
        args = {"prompt": "hi"} if "sampling" in tool else {}
        return text_of(await c.call_tool(tool, args, timeout=60))

    text = shell.run(
        scenario, EVERYTHING, protocol="legacy", sampling_handler=sample, elicitation_handler=elicit
    )
    assert text.startswith("[COMPLETED]"), text[:300]
    if "sampling" in tool:
        assert "sampled text" in text


# ---------------------------------------------------------------- 2026-07-28 extension


def test_modern_call_tool_polls_a_task_transparently(shell: Shell) -> None:
    answers = iter(["Ada", "Lovelace"])

    def elicit(message: str, schema: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": next(answers)}}

    async def scenario(c: Any) -> None:
        # TASK-11: no UnknownResultTypeError; input asked twice through the handler.
        result = await c.call_tool("two_inputs", {}, timeout=30)
        assert "Ada" in text_of(result) and "Lovelace" in text_of(result)
        result = await c.call_tool("poll_zero", {}, timeout=30)
        assert not result.is_error
        with pytest.raises(ServerError) as failed:
            await c.call_tool("fails", {}, timeout=30)
        assert failed.value.code == -32603

    shell.run(scenario, MODERN, extensions=[EXTENSION], elicitation_handler=elicit)


def test_modern_task_handle_operations(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        task = await c.call_tool_as_task("poll_zero", {})
        assert task.era == "modern" and not task.is_terminal
        done = await c.wait_for_task(task, timeout=30)
        assert done.is_completed and done.result is not None
        with pytest.raises(CapabilityError):
            await c.list_tasks()  # the extension has no tasks/list
        hour = await c.call_tool_as_task("poll_hour", {})
        cancelled = await c.cancel_task(hour)
        assert cancelled.status is TaskStatus.CANCELLED

    shell.run(scenario, MODERN, extensions=[EXTENSION])


def test_modern_update_task_by_the_host(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        task = await c.call_tool_as_task("two_inputs", {})
        seen = await c.get_task(task)
        for _ in range(50):
            if seen.is_input_required:
                break
            await shell.sleep(0.05)
            seen = await c.get_task(seen)
        assert seen.is_input_required and "first" in (seen.input_requests or {})
        updated = await c.update_task(
            seen, {"first": {"action": "accept", "content": {"name": "Grace"}}}
        )
        assert "first" in updated.answered

    shell.run(scenario, MODERN, extensions=[EXTENSION])


# ---------------------------------------------------------------- skills (SEP-2640)


def test_skills_listed_loaded_and_verified(shell: Shell) -> None:
    configs = [stdio_config([*SKILLS, mode], name=mode) for mode in ("good", "digest", "size")]

    async def scenario(c: Any) -> None:
        (entry,) = await c.list_skills(server="good")
        assert entry.name == "pdf-processing"
        loaded = await c.load_skill(entry)
        assert loaded.entry.name == "pdf-processing" and "Skill body." in loaded.text
        assert await c.read_skill_file(loaded, "references/FORMS.md") == b"Supporting content.\n"
        for mode in ("digest", "size"):
            server = c.find_server(mode)  # §E3: the per-server object
            with pytest.raises(SkillVerificationError) as refused:
                await got(server.load_skill("pdf-processing"))
            assert refused.value.reason == mode

    shell.run_client(scenario, configs)
