"""Both shells against tests/servers/hostile_stdio.py, a scripted misbehaving server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trio

import mcp_io_trio
from mcp_proto import errors
from mcp_proto.limits import Limits

from .conftest import (
    DEFAULT_READ_TIMEOUT,
    RSSSampler,
    Shell,
    children_matching,
    hostile,
    pid_gone,
    text_of,
)

MIB = 1024 * 1024
#: Just over a 1 MiB limit: the rest fits in the pipe buffer, so the server finishes
#: writing, sees stdin close and exits at once (no SIGTERM grace period to wait out).
OVER_1MIB = MIB + 16 * 1024


def _config(mode: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": "hostile",
        "command": hostile(mode),
        "read_timeout": DEFAULT_READ_TIMEOUT,
        **extra,
    }


def test_garbage_lines_are_skipped(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        assert await c.ping() == {}
        result = await c.call_tool("t")
        assert text_of(result) == "ok"  # not the "WRONG" answer to an unknown id
        assert text_of(await c.call_tool("t")) == "ok"

    shell.run(scenario, hostile("garbage"))


def test_unsolicited_responses_are_discarded(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        assert text_of(await c.call_tool("t")) == "ok"
        assert text_of(await c.call_tool("t", {"count": 5000})) == "ok"
        assert await c.ping() == {}

    shell.run(scenario, hostile("unsolicited"))


def test_huge_line_is_a_typed_error_with_bounded_memory(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        # The line's bound ends the call (a typed error), not its 60 s limit (that would
        # be a RequestTimeoutError): no timing needed to tell the two apart.
        with RSSSampler() as rss, pytest.raises(errors.ResponseTooLargeError):
            await c.call_tool("t", timeout=60)
        assert rss.growth < 200 * MIB, f"RSS grew by {rss.growth / MIB:.0f} MiB"
        # The connection was dropped; the next request starts a new process.
        assert text_of(await c.call_tool("t", {"ok": True})) == "ok"
        assert len(children_matching("hostile_stdio.py hugeline")) == 1

    shell.run(scenario, hostile("hugeline"), name="hostile")


def test_line_limit_from_limits(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        assert text_of(await c.call_tool("t", {"ok": True})) == "ok"
        with pytest.raises(errors.LineTooLongError):
            await c.call_tool("t", {"size": OVER_1MIB})
        with pytest.raises(errors.LineTooLongError):
            await c.send_rpc("tools/call", {"name": "t", "arguments": {"size": OVER_1MIB}})
        assert text_of(await c.call_tool("t", {"ok": True})) == "ok"

    shell.run(scenario, hostile("hugeline"), limits=Limits(max_line_size=1 * MIB))


def test_line_limit_from_the_server_config(shell: Shell) -> None:
    """``stdio_config(max_line_size=...)`` / the ``max_line_size`` key overrides
    ``Limits.max_line_size`` for that server (mcp_proto/config.py: stdio_config)."""

    async def scenario(c: Any) -> None:
        with pytest.raises(errors.LineTooLongError):
            await c.call_tool("t", {"size": OVER_1MIB})

    shell.run_client(scenario, [_config("hugeline", max_line_size=1 * MIB)])


def test_dying_server_names_itself_and_restarts(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        with pytest.raises((errors.ToolCallError, errors.ConnectionError)) as info:
            await c.call_tool("t")
        assert "doomed" in str(info.value)
        # The next request starts a new process (which still answers ping).
        assert await c.ping() == {}
        assert c.servers[0].is_connected
        with pytest.raises((errors.ToolCallError, errors.ConnectionError)):
            await c.call_tool("t")
        assert await c.ping() == {}
        assert len(children_matching("hostile_stdio.py die")) == 1

    shell.run(scenario, hostile("die"), name="doomed")
    assert children_matching("hostile_stdio.py die") == []


async def _time_out_in_turn(shell: Shell, c: Any, timeouts: dict[str, float | None]) -> list[str]:
    """Call the silent server's ``t`` once per entry at once (``None``: no timeout of its
    own, the server's ``read_timeout``); the names in the order the calls timed out.
    The order shows which limit the core set for each, without timing anything."""
    order: list[str] = []

    async def one(name: str, timeout: float | None) -> None:
        with pytest.raises(errors.RequestTimeoutError):
            await c.call_tool("t", timeout=timeout)
        order.append(name)

    await shell.gather([lambda n=n, t=t: one(n, t) for n, t in timeouts.items()])
    return order


def test_silent_server_times_out(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        # The call's own 1 s limit fires before the server's read_timeout (6 s), though
        # started second (were it ignored, the two would end in the order they started).
        assert await _time_out_in_turn(shell, c, {"read_timeout": None, "own": 1}) == [
            "own",
            "read_timeout",
        ]
        assert await c.ping() == {}  # the connection is still usable

    shell.run(scenario, hostile("silent"), read_timeout=6)


def test_read_timeout_bounds_every_request(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        # A call without a limit of its own gets read_timeout (1 s): it ends before a
        # 6 s one started first.
        assert await _time_out_in_turn(shell, c, {"own": 6, "read_timeout": None}) == [
            "read_timeout",
            "own",
        ]

    shell.run(scenario, hostile("silent"), read_timeout=1)


def test_flood_of_notifications(shell: Shell) -> None:
    seen = [0]

    def count(server: Any, method: str, params: dict[str, Any]) -> None:
        seen[0] += 1

    async def scenario(c: Any) -> None:
        c.on_notification(count)
        # Answered within the server's read_timeout (the call fails otherwise), after
        # the 40000 notifications before it were routed.
        assert text_of(await c.call_tool("t")) == "ok"
        assert await c.ping() == {}

    shell.run(scenario, hostile("flood"))
    assert 0 < seen[0] <= 20000  # progress for unknown tokens is not a notification


def test_a_server_flooding_stdout_with_log_lines_is_still_answered(shell: Shell) -> None:
    """1 MiB of ``y`` lines before the answer (a server whose logging goes to stdout):
    every line is skipped (STDIO-2), the answer behind them is delivered, and the
    connection stays usable."""

    async def scenario(c: Any) -> None:
        assert text_of(await c.call_tool("t")) == "ok"
        assert await c.ping() == {}

    shell.run(scenario, hostile("logflood"))


@pytest.mark.parametrize("mode", ["badversion", "noversion"])
def test_bad_protocol_version_fails_the_connection(shell: Shell, mode: str) -> None:
    async def scenario(c: Any) -> None:  # pragma: no cover - never reached
        raise AssertionError("connected to a server with a bad protocol version")

    with pytest.raises(errors.ConnectionError, match="protocol version"):
        shell.run(scenario, hostile(mode))
    assert children_matching("hostile_stdio.py") == []


def test_errors_leave_the_client_context_unwrapped(shell: Shell) -> None:
    """An error raised inside ``with``/``async with connect(...)`` reaches the caller as
    itself (``except ToolNotFound`` must work), not wrapped in an ExceptionGroup."""

    async def scenario(c: Any) -> None:
        await c.call_tool("no-such-tool")

    with pytest.raises(errors.ToolNotFound):
        shell.run(scenario, hostile("silent"))
    assert children_matching("hostile_stdio.py") == []


def test_stderr_flood_at_start(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        assert text_of(await c.call_tool("t")) == "ok"

    # 10 MB of stderr before the handshake: generous read_timeout, this is about
    # correctness (test_stderr_is_drained_at_pipe_speed is about speed).
    shell.run(scenario, hostile("stderr"), read_timeout=60)
    assert any(r.name.endswith(".stderr") for r in shell.log.records)


def test_server_ignoring_sigterm_is_killed_in_bounded_time(shell: Shell) -> None:
    async def scenario(c: Any) -> int:
        assert text_of(await c.call_tool("t")) == "ok"
        [proc] = children_matching("hostile_stdio.py sigterm")
        await c.cleanup()
        # Gone (and reaped) when cleanup returns: a server that ignores SIGTERM and the
        # end of its stdin ends only by SIGKILL, so the client escalated (STDIO-6).
        assert pid_gone(proc.pid)
        return proc.pid

    pid = shell.run(scenario, hostile("sigterm"))
    assert pid_gone(pid)
    assert children_matching("hostile_stdio.py") == []


def test_server_requests_are_answered(shell: Shell) -> None:
    sampled: list[Any] = []

    def sampling(messages: Any, prefs: Any, system_prompt: Any, max_tokens: Any) -> Any:
        sampled.append((messages, max_tokens))
        return "sampled!"

    def elicitation(message: str, schema: Any) -> Any:
        return {"name": "Ann"}

    async def scenario(c: Any) -> dict[str, Any]:
        await c.set_roots([{"uri": "file:///tmp/r", "name": "r"}])
        return json.loads(text_of(await c.call_tool("t")))

    out = shell.run(
        scenario, hostile("requests"), sampling_handler=sampling, elicitation_handler=elicitation
    )
    by_method = out["by_method"]
    assert by_method["ping"]["result"] == {}
    assert by_method["roots/list"]["result"] == {"roots": [{"uri": "file:///tmp/r", "name": "r"}]}
    sampling_result = by_method["sampling/createMessage"]["result"]
    assert sampling_result["content"] == {"type": "text", "text": "sampled!"}
    assert sampling_result["role"] == "assistant"
    assert sampling_result["stopReason"] == "endTurn"
    assert isinstance(sampling_result["model"], str)
    assert by_method["elicitation/create"]["result"] == {
        "action": "accept",
        "content": {"name": "Ann"},
    }
    assert by_method["bogus/method"]["error"]["code"] == -32601
    for reply in out["replies"]:
        assert reply["reply"] is not None, reply
        assert reply["reply"]["id"] == reply["id"]  # string ids ("s-3") echoed as given
    assert sampled == [([{"role": "user", "content": {"type": "text", "text": "Say hello"}}], 16)]


def test_server_requests_without_handlers(shell: Shell) -> None:
    async def scenario(c: Any) -> dict[str, Any]:
        return json.loads(text_of(await c.call_tool("t")))["by_method"]

    by_method = shell.run(scenario, hostile("requests"))
    assert by_method["ping"]["result"] == {}
    assert by_method["roots/list"]["result"] == {"roots": []}
    assert by_method["sampling/createMessage"]["error"]["code"] == -32601
    assert by_method["elicitation/create"]["error"]["code"] == -32601
    assert by_method["bogus/method"]["error"]["code"] == -32601


def test_server_requests_edge_cases(shell: Shell) -> None:
    calls: list[tuple[Any, ...]] = []

    def sampling(messages: Any, *rest: Any) -> Any:
        calls.append(("sampling", messages))
        return {"content": {"type": "text", "text": "tools ok"}, "model": "m"}

    def elicitation(message: str, detail: Any, meta: Any) -> Any:
        calls.append(("elicitation", message, detail))
        if detail.get("mode") == "url":
            return True
        raise RuntimeError("PRIVATE elicitation failure")

    text_message = {"role": "user", "content": {"type": "text", "text": "hi"}}
    requests = [
        # 1: tools without sampling_supports_tools -> -32602, handler not called (SAMP-3)
        {
            "method": "sampling/createMessage",
            "params": {
                "messages": [text_message],
                "maxTokens": 5,
                "tools": [{"name": "x", "inputSchema": {"type": "object"}}],
            },
        },
        # 2: a malformed history -> -32602 (SAMP-6)
        {
            "method": "sampling/createMessage",
            "params": {
                "messages": [{"role": "robot", "content": {"type": "text", "text": "?"}}],
                "maxTokens": 5,
            },
        },
        # 3: URL-mode elicitation, handler answers True -> accept
        {
            "method": "elicitation/create",
            "params": {
                "mode": "url",
                "message": "Open it",
                "url": "https://example.com/x",
                "elicitationId": "e-1",
            },
        },
        # 4: an unsupported mode -> -32602
        {"method": "elicitation/create", "params": {"mode": "telepathy", "message": "?"}},
        # 5: a raising handler -> constant -32603 (HYG-3)
        {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "Name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
        },
    ]

    async def scenario(c: Any) -> list[Any]:
        out = json.loads(text_of(await c.call_tool("t", {"requests": requests})))
        return [r["reply"] for r in out["replies"]]

    replies = shell.run(
        scenario, hostile("requests"), sampling_handler=sampling, elicitation_handler=elicitation
    )
    assert replies[0]["error"]["code"] == -32602
    assert replies[1]["error"]["code"] == -32602
    assert replies[2]["result"] == {"action": "accept"}
    assert replies[3]["error"]["code"] == -32602
    assert replies[4]["error"] == {"code": -32603, "message": "Elicitation handler error"}
    assert "PRIVATE" not in json.dumps(replies)
    assert [c for c in calls if c[0] == "sampling"] == []  # refused before the handler
    # Handlers may run concurrently: look the URL-mode call up rather than by position.
    assert (
        "elicitation",
        "Open it",
        {"mode": "url", "url": "https://example.com/x", "elicitationId": "e-1"},
    ) in calls


def test_sampling_with_tools_when_opted_in(shell: Shell) -> None:
    seen: list[Any] = []

    def sampling(messages: Any, prefs: Any, system: Any, max_tokens: Any, params: Any) -> Any:
        seen.append(params)
        return {
            "content": [{"type": "tool_use", "id": "u1", "name": "x", "input": {}}],
            "model": "m",
        }

    request = {
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "use x"}}],
            "maxTokens": 5,
            "tools": [{"name": "x", "inputSchema": {"type": "object"}}],
            "toolChoice": {"mode": "auto"},
        },
    }

    async def scenario(c: Any) -> Any:
        out = json.loads(text_of(await c.call_tool("t", {"requests": [request]})))
        return out["replies"][0]["reply"]

    reply = shell.run(
        scenario, hostile("requests"), sampling_handler=sampling, sampling_supports_tools=True
    )
    assert reply["result"]["stopReason"] == "toolUse"
    assert seen[0]["tools"] == request["params"]["tools"]
    assert seen[0]["toolChoice"] == {"mode": "auto"}


def test_meta_in_arguments_is_hoisted(shell: Shell) -> None:
    async def scenario(c: Any) -> list[dict[str, Any]]:
        plain = await c.call_tool("t", {"x": 1, "_meta": {"progressToken": "mine", "trace": "abc"}})
        tracked = await c.call_tool("t", {"y": 2}, progress=lambda *a: None)
        chosen = await c.call_tool("t", {"_meta": {"progressToken": 77}}, progress=lambda *a: None)
        return [json.loads(text_of(r)) for r in (plain, tracked, chosen)]

    plain, tracked, chosen = shell.run(scenario, hostile("echo_raw"))
    assert plain == {
        "name": "t",
        "arguments": {"x": 1},
        "_meta": {"progressToken": "mine", "trace": "abc"},
    }
    assert tracked["arguments"] == {"y": 2}
    token = tracked["_meta"]["progressToken"]
    assert isinstance(token, (str, int)) and not isinstance(token, bool)
    assert chosen == {"name": "t", "arguments": {}, "_meta": {"progressToken": 77}}


def test_progress_after_completion_is_dropped(shell: Shell) -> None:
    progress: list[tuple[Any, ...]] = []

    async def scenario(c: Any) -> None:
        result = await c.call_tool(
            "t", {"late_delay": 0.2}, progress=lambda *args: progress.append(args)
        )
        assert text_of(result) == "ok"
        assert await shell.wait_for(lambda: bool(progress))
        await shell.sleep(0.8)  # the late one has been sent by now
        assert await c.ping() == {}

    shell.run(scenario, hostile("progress_after"))
    assert progress == [(1.0, 2.0, "before")]


def test_timeout_sends_notifications_cancelled(shell: Shell, tmp_path: Path) -> None:
    log = tmp_path / "cancelled.log"

    def lines() -> list[dict[str, Any]]:
        if not log.exists():
            return []
        return [
            json.loads(line.split(" ", 1)[1])
            for line in log.read_text(encoding="utf-8").splitlines()
            if line.startswith("CANCELLED ")
        ]

    async def scenario(c: Any) -> None:
        with pytest.raises(errors.RequestTimeoutError):
            await c.call_tool("t", {}, timeout=1)
        assert await shell.wait_for(lambda: bool(lines()))
        assert await c.ping() == {}
        with pytest.raises(errors.RequestTimeoutError):
            await c.send_rpc("tools/call", {"name": "t"}, timeout=0.5)
        assert await shell.wait_for(lambda: len(lines()) >= 2)

    shell.run(scenario, hostile("cancel_log", str(log)))
    first, second = lines()
    for note in (first, second):
        assert note["method"] == "notifications/cancelled"
        assert note["params"]["reason"] == "Request timed out"
        assert isinstance(note["params"]["requestId"], int)
    assert first["params"]["requestId"] != second["params"]["requestId"]


def test_trio_cancel_scope_sends_notifications_cancelled(tmp_path: Path) -> None:
    """Trio only: a caller's own cancel scope abandons the request politely."""
    log = tmp_path / "cancelled.log"

    async def main() -> None:
        with trio.fail_after(30):
            async with mcp_io_trio.connect(hostile("cancel_log", str(log))) as c:
                with trio.move_on_after(0.5) as scope:
                    await c.call_tool("t")
                assert scope.cancelled_caught
                with trio.move_on_after(10):
                    while not (log.exists() and "CANCELLED" in log.read_text()):
                        await trio.sleep(0.02)
                assert await c.ping() == {}

    trio.run(main)
    [line] = log.read_text(encoding="utf-8").splitlines()
    note = json.loads(line.split(" ", 1)[1])
    assert note["params"]["reason"] == "Request cancelled by the client"


def test_capabilities_gate_requests(shell: Shell) -> None:
    """CAP-1..3: the server declares only ``tools``; requests needing other capabilities
    are refused locally (the hostile server would answer them -32601 otherwise)."""

    async def scenario(c: Any) -> None:
        assert await c.set_log_level("info") == []  # CAP-3: skipped, not an error
        with pytest.raises(errors.CapabilityError):
            await c.set_log_level("info", server="hostile_stdio")
        with pytest.raises(errors.CapabilityError):
            await c.complete({"type": "ref/prompt", "name": "p"}, {"name": "a", "value": ""})
        with pytest.raises(errors.CapabilityError):
            await c.subscribe_resource("demo://x")
        assert await c.list_prompts() == []
        assert (await c.list_resources())["resources"] == []
        assert (await c.list_resource_templates())["resourceTemplates"] == []
        with pytest.raises(errors.CapabilityError):
            await c.send_rpc("prompts/get", {"name": "p"})
        assert text_of(await c.call_tool("t")) == "ok"

    shell.run(scenario, hostile("garbage"))
