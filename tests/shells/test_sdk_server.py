"""Both shells against a real server written with the official SDK (tests/servers/sdk_server.py).

Each test body is one ``async def scenario(client)`` run by the ``shell`` fixture under
``mcp_io_sync`` and under ``mcp_io_trio`` (see conftest.py).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import psutil
import pytest

from mcp_proto import errors

from .conftest import (
    SDK_SERVER,
    SERVERS,
    Shell,
    children_matching,
    pid_gone,
    text_of,
)

#: Handshake-era behaviour (server requests, sessions, the GET stream, initialize on the
#: wire): pinned to protocol="legacy" (conftest ``Shell.protocol``); the 2026-07-28 era
#: has its own suites (test_modern_*.py, test_dual_era_matrix.py).
PROTOCOL = "legacy"

pytestmark = pytest.mark.peer

CONTRACT_TOOLS = {
    "echo",
    "add",
    "bad_structured",
    "missing_structured",
    "slow",
    "progress",
    "sample",
    "elicit_name",
    "list_roots",
    "log",
    "change_tools",
    "fail",
    "big",
    "stderr_spam",
    "touch",
    "events",
}


def requests_logged(shell: Shell, method: str) -> int:
    """How many ``method`` requests the client logged sending (DEBUG ``-> server method``)."""
    return sum(
        1 for m in shell.log.messages(logging.DEBUG) if m.startswith("-> ") and f" {method} " in m
    )


# ---------------------------------------------------------------------- connection


def test_connect_server_info_and_list_tools(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        [server] = c.servers
        # Named after its command (issue 24 E), not "sdk_server".
        assert server.name == "sdk_server"
        assert server.is_connected  # connect() connects before returning
        info = server.info
        assert info.protocol_version == "2025-11-25"
        assert info.server_info.name == "mcp-proto-sdk-test-server"
        assert info.server_info.version == "1.0.0"
        assert info.has_capability("tools", "listChanged")
        assert info.has_capability("logging")
        assert info.has_capability("completions")
        assert info.has_capability("resources", "subscribe")
        assert info.has_capability("prompts")
        assert not info.has_capability("tasks")
        assert c.find_server("sdk_server") is server
        assert c.find_server(0) is server
        assert c.find_server("stdio") is server
        with pytest.raises(errors.ServerNotFound):
            c.find_server("nope")
        assert await c.ping() == {}
        assert await c.ping(server="sdk_server", timeout=5) == {}

        tools = await c.list_tools()
        by_name = {t.name: t for t in tools}
        assert set(by_name) >= CONTRACT_TOOLS
        echo = by_name["echo"]
        assert echo.server == "sdk_server"
        assert echo.description == "Return the text unchanged."
        assert echo.input_schema["required"] == ["text"]
        # No annotations from the server: the ToolAnnotations defaults apply (TOOL-9).
        assert echo.read_only_hint is False
        assert echo.destructive_hint is True
        assert echo.idempotent_hint is False
        assert echo.open_world_hint is True
        assert not echo.has_structured_output and echo.output_schema is None
        add = by_name["add"]
        assert add.has_structured_output
        assert add.output_schema["properties"]["sum"]["type"] == "integer"
        assert add.output_schema["required"] == ["sum"]
        assert by_name["bad_structured"].has_structured_output
        assert {t.name for t in c.tool_cache} == set(by_name)
        assert (await c.find_tool("echo")).name == "echo"
        assert {t.name for t in await c.find_tools("_")} >= {"bad_structured", "elicit_name"}
        assert await c.find_tool("no-such-tool") is None
        openai = await c.to_openai_tools(["echo"])
        assert [t["function"]["name"] for t in openai] == ["echo"]

    shell.run(scenario, SDK_SERVER)


def test_connect_with_a_name_and_a_string_command(shell: Shell) -> None:
    import shlex

    async def scenario(c: Any) -> None:
        assert [s.name for s in c.servers] == ["sdk"]
        result = await c.call_tool("echo", {"text": "via a command string"})
        assert text_of(result) == "via a command string"

    shell.run(scenario, shlex.join(SDK_SERVER), name="sdk")


# ---------------------------------------------------------------------- tools


def test_large_messages_both_ways(shell: Shell) -> None:
    """Multi-MiB arguments and results cross the pipes intact, whether the encoder
    splices them (plain ASCII, base64-like) or escapes them (quotes, control
    characters, non-ASCII), and the framing holds for the small call after them."""
    plain = ("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3+/=" * 80_000)[: 3 * 1024 * 1024]
    mixed = ('caf\u00e9 "quoted" \\ tab\t line\n \u2603 ' * 40_000)[: 1024 * 1024]

    async def scenario(c: Any) -> None:
        for text in (plain, mixed, plain):
            assert text_of(await c.call_tool("echo", {"text": text})) == text
        result = await c.call_tool("big", {"n": 2 * 1024 * 1024})
        assert text_of(result) == "x" * (2 * 1024 * 1024)
        assert text_of(await c.call_tool("echo", {"text": "small"})) == "small"

    shell.run(scenario, SDK_SERVER)


def test_list_tools_is_cached_until_cleared_or_refetched(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        await c.list_tools()
        await c.list_tools()
        await c.call_tool("echo", {"text": "x"})  # resolving the tool uses the cache too
        assert requests_logged(shell, "tools/list") == 1
        await c.list_tools(cache=False)
        assert requests_logged(shell, "tools/list") == 2
        c.clear_cache()
        assert c.tool_cache == []
        await c.list_tools()
        assert requests_logged(shell, "tools/list") == 3

    shell.run(scenario, SDK_SERVER)


def test_tools_list_changed_invalidates_the_cache(shell: Shell) -> None:
    seen: list[str] = []

    async def scenario(c: Any) -> None:
        c.on_notification(lambda server, method, params: seen.append(method))
        before = {t.name for t in await c.list_tools()}
        assert not any(n.startswith("dynamic_") for n in before)
        name = text_of(await c.call_tool("change_tools"))
        assert name == "dynamic_1"
        # NOTIF-4: the cache was dropped before the call returned, no waiting needed.
        assert name in {t.name for t in await c.list_tools()}
        assert text_of(await c.call_tool(name)) == "dynamic 1"
        assert await shell.wait_for(lambda: "notifications/tools/list_changed" in seen)

    shell.run(scenario, SDK_SERVER)


def test_notification_callback_may_call_list_tools(shell: Shell) -> None:
    """STDIO-9 / NOTIF-4: a callback making a request from inside must not deadlock,
    and sees the new tool."""
    seen: list[set[str]] = []

    async def scenario(c: Any) -> None:
        await c.list_tools()  # fill the cache

        async def on_note(server: Any, method: str, params: dict[str, Any]) -> None:
            if method == "notifications/tools/list_changed":
                seen.append({t.name for t in await c.list_tools()})

        c.on_notification(shell.callback(on_note))
        name = text_of(await c.call_tool("change_tools"))
        assert await shell.wait_for(lambda: bool(seen), timeout=15), "callback never finished"
        assert name in seen[0]
        # The client is still fully usable afterwards.
        assert text_of(await c.call_tool("echo", {"text": "after"})) == "after"

    shell.run(scenario, SDK_SERVER)


def test_a_blocked_notification_callback_blocks_no_request(shell: Shell) -> None:
    """NOTIF-8: host callbacks run apart from the reader; while one is stuck, requests
    (and the cache invalidation that precedes callbacks) still go through."""
    released = [False]
    entered: list[str] = []
    left: list[str] = []

    async def stuck(server: Any, method: str, params: dict[str, Any]) -> None:
        entered.append(method)
        await shell.wait_for(lambda: released[0], timeout=15)
        left.append(method)

    async def scenario(c: Any) -> None:
        c.on_notification(shell.callback(stuck))
        name = text_of(await c.call_tool("change_tools"))
        assert await shell.wait_for(lambda: bool(entered))
        assert text_of(await c.call_tool("echo", {"text": "not blocked"})) == "not blocked"
        assert name in {t.name for t in await c.list_tools()}
        # Answered while the callback was still stuck (not after it gave up).
        assert left == []
        released[0] = True

    shell.run(scenario, SDK_SERVER)


def test_raising_notification_callback_stops_nothing(shell: Shell) -> None:
    seen: list[str] = []

    def bad(server: Any, method: str, params: dict[str, Any]) -> None:
        raise RuntimeError("callback bug")

    async def scenario(c: Any) -> None:
        c.on_notification(bad)
        c.on_notification(lambda server, method, params: seen.append(method))
        await c.call_tool("change_tools")
        assert await shell.wait_for(lambda: "notifications/tools/list_changed" in seen)
        assert text_of(await c.call_tool("echo", {"text": "still fine"})) == "still fine"
        c.remove_notification_handler(bad)

    shell.run(scenario, SDK_SERVER)
    assert any("callback" in m for m in shell.log.messages(logging.ERROR))


def test_call_tool_results_and_local_errors(shell: Shell) -> None:
    secret = "TOP-SECRET-PAYLOAD-7d1e"

    async def scenario(c: Any) -> None:
        await c.list_tools()
        # TOOL-5: missing required arguments fail before anything is sent.
        with pytest.raises(errors.ValidationError, match="text"):
            await c.call_tool("echo", {})
        with pytest.raises(ValueError, match="b"):
            await c.call_tool("add", {"a": 1})
        assert requests_logged(shell, "tools/call") == 0
        with pytest.raises(errors.ToolNotFound):
            await c.call_tool("no_such_tool", {})
        with pytest.raises(LookupError):
            await c.call_tool("no_such_tool")

        result = await c.call_tool("echo", {"text": "héllo\nworld"})
        assert text_of(result) == "héllo\nworld"
        assert result.get("isError") in (None, False)
        assert text_of(await c.call_tool("echo", {"text": secret})) == secret
        added = await c.call_tool("add", {"a": 2, "b": 40})
        assert added["structuredContent"] == {"sum": 42}
        assert added["isError"] is False
        assert json.loads(text_of(added)) == {"sum": 42}
        # Optional parameters may be left out.
        assert text_of(await c.call_tool("progress", {"steps": 1})) == "done"
        assert not shell.log.messages(logging.WARNING)

        # A failing tool is a result, not an exception.
        failed = await c.call_tool("fail")
        assert failed["isError"] is True
        assert "intentional failure" in text_of(failed)

        # Invalid structured output, warn mode (the default): logged, returned.
        bad = await c.call_tool("bad_structured")
        assert bad["structuredContent"] == {"sum": "not a number"}
        warnings = shell.log.messages(logging.WARNING)
        assert any("bad_structured" in w and "structured" in w for w in warnings), warnings

        # TOOL-6: a batch, in order.
        results = await c.call_tools(
            [
                {"name": "echo", "arguments": {"text": "first"}},
                {"name": "add", "parameters": {"a": 1, "b": 2}},
                {"name": "echo", "arguments": {"text": "third"}, "server": "sdk_server"},
            ]
        )
        assert [text_of(results[0]), results[1]["structuredContent"], text_of(results[2])] == [
            "first",
            {"sum": 3},
            "third",
        ]
        with pytest.raises(ValueError):
            await c.call_tools([{"arguments": {}}])

    shell.run(scenario, SDK_SERVER)
    # HYG-1: at DEBUG the client logs method/id summaries, never params or results.
    own = [r.getMessage() for r in shell.log.records if not r.name.endswith(".stderr")]
    assert any("tools/call" in m for m in own)
    assert not [m for m in own if secret in m]


def test_concurrent_calls_get_their_own_answers(shell: Shell) -> None:
    """Many requests in flight at once on one pipe (threads / tasks): each caller gets
    the answer to its own request, including while another one times out."""

    async def scenario(c: Any) -> list[Any]:
        await c.list_tools()

        def echo(i: int) -> Callable[[], Awaitable[Any]]:
            return lambda: c.call_tool("echo", {"text": f"message {i}"})

        async def slow_timeout() -> str:
            with pytest.raises(errors.RequestTimeoutError):
                await c.call_tool("slow", {"seconds": 3}, timeout=0.3)
            return "timed out"

        thunks: list[Callable[[], Awaitable[Any]]] = [echo(i) for i in range(20)]
        thunks.append(slow_timeout)
        thunks.append(lambda: c.call_tool("add", {"a": 20, "b": 22}))
        return await shell.gather(thunks)

    results = shell.run(scenario, SDK_SERVER)
    assert [text_of(r) for r in results[:20]] == [f"message {i}" for i in range(20)]
    assert results[20] == "timed out"
    assert results[21]["structuredContent"] == {"sum": 42}


def test_unusable_timeout_is_a_clear_error_and_the_client_stays_usable(shell: Shell) -> None:
    """``timeout=1e300`` raised a bare OverflowError from the blocking shell's wait."""

    async def scenario(c: Any) -> Any:
        for bad in (1e300, 10**400, float("inf")):
            with pytest.raises(ValueError, match=r"^timeout must be"):
                await c.call_tool("add", {"a": 1, "b": 2}, timeout=bad)
        return await c.call_tool("add", {"a": 20, "b": 22}, timeout=10**9)

    assert shell.run(scenario, SDK_SERVER)["structuredContent"] == {"sum": 42}


def test_invalid_structured_output_raises_in_strict_mode(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        with pytest.raises(errors.ValidationError, match="bad_structured"):
            await c.call_tool("bad_structured")
        # A valid result still passes in strict mode.
        assert (await c.call_tool("add", {"a": 1, "b": 1}))["structuredContent"] == {"sum": 2}

    shell.run(scenario, SDK_SERVER, validate_structured_content="strict")


@pytest.mark.parametrize("mode", ["warn", "strict"])
def test_missing_structured_output_is_a_violation(shell: Shell, mode: str) -> None:
    """SCH-1/SCH-2: a tool that declares an outputSchema must return structuredContent
    on success; without it the result is a violation (a warning, or an error in strict
    mode), even though its text holds the same JSON."""

    async def scenario(c: Any) -> None:
        if mode == "strict":
            with pytest.raises(errors.ValidationError, match="no structuredContent"):
                await c.call_tool("missing_structured")
        else:
            result = await c.call_tool("missing_structured")
            assert "structuredContent" not in result
            warnings = shell.log.messages(logging.WARNING)
            assert any("missing_structured" in w and "no structuredContent" in w for w in warnings)

    shell.run(scenario, SDK_SERVER, validate_structured_content=mode)


# ---------------------------------------------------------------------- progress & timeouts


def test_progress_callback_gets_ordered_steps(shell: Shell) -> None:
    steps: list[tuple[float, float | None, str | None]] = []

    async def scenario(c: Any) -> None:
        result = await c.call_tool(
            "progress",
            {"steps": 5, "delay": 0.01},
            progress=lambda p, total, message: steps.append((p, total, message)),
        )
        assert text_of(result) == "done"
        assert await shell.wait_for(lambda: len(steps) >= 5, timeout=5)

    shell.run(scenario, SDK_SERVER)
    assert steps == [(float(i), 5.0, f"step {i}/5") for i in range(1, 6)]


def test_flush_callbacks_waits_for_queued_progress(shell: Shell) -> None:
    """Progress callbacks run apart from the reader, so ``call_tool`` may return before
    the ones queued for it have run; ``flush_callbacks()`` waits for them."""
    steps: list[float] = []

    def slow_progress(p: float, total: float | None, message: str | None) -> None:
        time.sleep(0.03)  # a host callback doing a little work (e.g. redrawing a bar)
        steps.append(p)

    async def scenario(c: Any) -> None:
        await c.call_tool("progress", {"steps": 10, "delay": 0}, progress=slow_progress)
        await c.flush_callbacks()
        assert steps == [float(i) for i in range(1, 11)]

    shell.run(scenario, SDK_SERVER)


def test_timeout_raises_and_the_server_sees_the_cancellation(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        # The limit fired, not the tool's end: the server saw the cancellation and never
        # finished (below), which a late timeout (after the tool's 10 s) would not show.
        with pytest.raises(errors.RequestTimeoutError) as info:
            await c.call_tool("slow", {"seconds": 10}, timeout=0.5)
        assert isinstance(info.value, TimeoutError)
        recorded: list[str] = []

        async def poll() -> bool:
            recorded.extend(json.loads(text_of(await c.call_tool("events"))))
            return "slow:cancelled" in recorded

        deadline = time.monotonic() + 10
        while not await poll() and time.monotonic() < deadline:
            await shell.sleep(0.1)
        assert "slow:cancelled" in recorded
        assert "slow:done" not in recorded

    shell.run(scenario, SDK_SERVER)


def test_send_rpc_with_a_timeout(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        listed = await c.send_rpc("tools/list", {})
        assert "echo" in {t["name"] for t in listed["tools"]}
        raw = await c.send_rpc("tools/call", {"name": "echo", "arguments": {"text": "raw"}})
        assert raw["content"][0]["text"] == "raw"
        with pytest.raises(errors.RequestTimeoutError):
            await c.send_rpc(
                "tools/call", {"name": "slow", "arguments": {"seconds": 5}}, timeout=0.3
            )
        with pytest.raises(errors.ServerError) as info:
            await c.send_rpc("bogus/method", {})
        assert info.value.code == -32601
        await c.send_notification("notifications/roots/list_changed")
        await c.send_notification("notifications/bogus", {"x": 1})
        assert await c.ping() == {}

    shell.run(scenario, SDK_SERVER)


# ---------------------------------------------------------------------- prompts


def test_prompts_list_and_get(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        [greet] = await c.list_prompts()
        assert greet.name == "greet" and greet.server == "sdk_server"
        assert [(a.name, a.required) for a in greet.arguments] == [("name", True)]
        assert [p.name for p in c.prompt_cache] == ["greet"]
        got = await c.get_prompt("greet", {"name": "Ann"})
        assert got["messages"] == [
            {"role": "user", "content": {"type": "text", "text": "Please greet Ann."}}
        ]
        with pytest.raises(errors.PromptNotFound):
            await c.get_prompt("nope", {})
        with pytest.raises(errors.ValidationError, match="name"):
            await c.get_prompt("greet", {})

    shell.run(scenario, SDK_SERVER)


# ---------------------------------------------------------------------- resources


def test_resources_list_read_and_templates(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        listed = await c.list_resources()
        assert listed["nextCursor"] is None
        by_uri = {r.uri: r for r in listed["resources"]}
        assert set(by_uri) == {"demo://text", "demo://blob"}
        assert by_uri["demo://text"].mime_type == "text/plain"
        assert by_uri["demo://blob"].server == "sdk_server"

        [text] = await c.read_resource("demo://text")
        assert text.is_text and not text.is_binary
        assert text.text == "Hello from demo://text"
        assert text.mime_type == "text/plain"
        [blob] = await c.read_resource("demo://blob")
        assert blob.is_binary and not blob.is_text
        assert blob.data == bytes(range(256))
        assert blob.mime_type == "application/octet-stream"

        templates = (await c.list_resource_templates())["resourceTemplates"]
        assert [t.uri_template for t in templates] == ["demo://item/{id}"]
        # RES-3: a URI only reachable through a template is still readable.
        [item] = await c.read_resource("demo://item/42")
        assert item.text == "item 42"
        with pytest.raises(errors.ResourceNotFound):
            await c.read_resource("demo://nope")

    shell.run(scenario, SDK_SERVER)


def test_subscribe_touch_and_unsubscribe(shell: Shell) -> None:
    updates: list[dict[str, Any]] = []

    def on_note(server: Any, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/resources/updated":
            updates.append(params)

    async def scenario(c: Any) -> None:
        c.on_notification(on_note)
        assert await c.subscribe_resource("demo://text") is True
        assert text_of(await c.call_tool("touch", {"uri": "demo://text"})) == "sent"
        assert await shell.wait_for(lambda: bool(updates))
        assert updates[0]["uri"] == "demo://text"
        assert await c.unsubscribe_resource("demo://text") is True
        assert text_of(await c.call_tool("touch", {"uri": "demo://text"})) == "not subscribed"

    # resources/subscribe is the handshake era's (the SDK's touch tool tracks it); on a
    # 2026-07-28 server subscribe_resource is a listen: tests/shells/test_listen.py.
    shell.run(scenario, SDK_SERVER, protocol="legacy")


# ---------------------------------------------------------------------- completion, logging


def test_complete_prompt_and_template_arguments(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        names = await c.complete(
            {"type": "ref/prompt", "name": "greet"}, {"name": "name", "value": "Al"}
        )
        assert names["values"] == ["Alice", "Alex"]
        assert names["total"] == 2 and names["hasMore"] is False
        ids = await c.complete(
            {"type": "ref/resource", "uri": "demo://item/{id}"}, {"name": "id", "value": "1"}
        )
        assert ids["values"] == ["1", "10"]
        nothing = await c.complete(
            {"type": "ref/prompt", "name": "greet"}, {"name": "other", "value": ""}
        )
        assert nothing["values"] == []
        with pytest.raises(ValueError):
            await c.complete({"type": "ref/bogus"}, {"name": "x"})

    shell.run(scenario, SDK_SERVER)


def test_log_level_and_server_log_messages(shell: Shell) -> None:
    messages: list[dict[str, Any]] = []

    def on_note(server: Any, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/message":
            messages.append(params)

    async def scenario(c: Any) -> None:
        c.on_notification(on_note)
        assert await c.set_log_level("warning") == ["sdk_server"]
        assert (
            text_of(await c.call_tool("log", {"level": "info", "message": "quiet"})) == "suppressed"
        )
        sent = await c.call_tool("log", {"level": "error", "message": "line one\nFAKE LOG LINE"})
        assert text_of(sent) == "sent"
        assert await shell.wait_for(lambda: bool(messages))
        with pytest.raises(ValueError):
            await c.set_log_level("loud")

    shell.run(scenario, SDK_SERVER)
    assert messages[0]["level"] == "error"
    assert messages[0]["data"] == "line one\nFAKE LOG LINE"
    assert messages[0]["logger"] == "sdk_server"
    records = [r for r in shell.log.records if "FAKE LOG LINE" in r.getMessage()]
    assert len(records) == 1
    record = records[0]
    assert record.levelno == logging.ERROR
    text = record.getMessage()
    assert "\n" not in text and "line one\\x0aFAKE LOG LINE" in text
    # "[server] logger: ...": the server is named after its command (issue 24 E).
    assert text.startswith("[sdk_server] sdk_server: line one")


# ---------------------------------------------------------------------- sampling


def test_sampling_handler_outcomes(shell: Shell) -> None:
    """A plain handler's answer reaches the server; ``None`` is error -1 (SAMP-4); a
    raising handler gives the constant "Sampling error", never its text (HYG-3)."""
    seen: list[Any] = []

    def handler(
        messages: list[dict[str, Any]], prefs: Any, system_prompt: Any, max_tokens: Any
    ) -> Any:
        text = messages[0]["content"]["text"]
        seen.append((messages, max_tokens))
        if text == "reject":
            return None
        if text == "explode":
            raise RuntimeError("SECRET-DETAIL the API key is hunter2")
        return "model says: " + text

    async def scenario(c: Any) -> list[Any]:
        answered = text_of(await c.call_tool("sample", {"prompt": "hello?"}))
        rejected = await c.call_tool("sample", {"prompt": "reject"})
        exploded = await c.call_tool("sample", {"prompt": "explode"})
        assert rejected["isError"] is True and exploded["isError"] is True
        return [answered, text_of(rejected), text_of(exploded)]

    answered, rejected, exploded = shell.run(scenario, SDK_SERVER, sampling_handler=handler)
    assert answered == "model says: hello?"
    assert seen[0] == ([{"role": "user", "content": {"type": "text", "text": "hello?"}}], 100)
    assert json.loads(rejected)["error"]["code"] == -1
    assert json.loads(exploded)["error"] == {"code": -32603, "message": "Sampling error"}
    assert "SECRET-DETAIL" not in exploded and "hunter2" not in exploded
    # The detail stays in the local log.
    assert any("SECRET-DETAIL" in m for m in shell.log.messages(logging.ERROR))


def test_sampling_with_an_async_handler_that_uses_the_client(shell: Shell) -> None:
    """Under Trio the handler is a real ``async def``; it awaits, and even makes a
    request of its own on the same server while that server waits for its answer
    (STDIO-9: handlers never run on the reader)."""
    holder: dict[str, Any] = {}

    async def handler(messages: list[dict[str, Any]]) -> dict[str, Any]:
        await shell.sleep(0.01)
        echoed = text_of(await holder["client"].call_tool("echo", {"text": "inner"}))
        text = f"{echoed}+{messages[0]['content']['text']}"
        return {"content": {"type": "text", "text": text}, "model": "test-model"}

    async def scenario(c: Any) -> str:
        holder["client"] = c
        return text_of(await c.call_tool("sample", {"prompt": "outer"}))

    result = shell.run(scenario, SDK_SERVER, sampling_handler=shell.callback(handler))
    assert result == "inner+outer"


def test_without_a_sampling_handler_the_server_gets_method_not_found(shell: Shell) -> None:
    async def scenario(c: Any) -> dict[str, Any]:
        result = await c.call_tool("sample", {"prompt": "anyone?"})
        assert result["isError"] is True
        return json.loads(text_of(result))

    payload = shell.run(scenario, SDK_SERVER)
    assert payload["error"]["code"] == -32601


# ---------------------------------------------------------------------- elicitation


def test_elicitation_answers(shell: Shell) -> None:
    answers: list[Any] = [
        {"action": "accept", "content": {"name": "Ann"}},
        {"action": "decline"},
        {"action": "cancel"},
        {"action": "sure-why-not", "content": {"name": "Eve"}},  # unknown action -> cancel
        {"name": "Bob"},  # a bare content mapping -> accept (ELIC-4)
        None,  # -> cancel
        {"action": "accept", "content": {"name": 42}},  # violates the schema -> -32603
        RuntimeError("PRIVATE user data"),  # raised: constant -32603 (ELIC-11, HYG-3)
    ]
    calls: list[tuple[str, Any]] = []

    def handler(message: str, schema: Any) -> Any:
        calls.append((message, schema))
        answer = answers[len(calls) - 1]
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def scenario(c: Any) -> list[dict[str, Any]]:
        out = []
        for _ in answers:
            out.append(json.loads(text_of(await c.call_tool("elicit_name"))))
        return out

    results = shell.run(scenario, SDK_SERVER, elicitation_handler=handler)
    assert results == [
        {"action": "accept", "content": {"name": "Ann"}},
        {"action": "decline", "content": None},
        {"action": "cancel", "content": None},
        {"action": "cancel", "content": None},
        {"action": "accept", "content": {"name": "Bob"}},
        {"action": "cancel", "content": None},
        # ELIC-6, §B2: not transmitted, and not a `cancel` the server would take for
        # the user's choice.
        {
            "error": {
                "code": -32603,
                "message": "Elicitation answer does not match the requested schema",
            }
        },
        {"error": {"code": -32603, "message": "Elicitation handler error"}},
    ]
    message, schema = calls[0]
    assert message == "What is your name?"
    assert schema["properties"]["name"]["type"] == "string"
    assert schema["required"] == ["name"]


# ---------------------------------------------------------------------- roots


def test_roots_set_and_listed(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        assert json.loads(text_of(await c.call_tool("list_roots"))) == []
        await c.set_roots([{"uri": "file:///tmp/project", "name": "project"}])
        assert [r.uri for r in c.roots] == ["file:///tmp/project"]
        assert json.loads(text_of(await c.call_tool("list_roots"))) == [
            {"uri": "file:///tmp/project", "name": "project"}
        ]
        await c.set_roots([{"uri": "file:///srv/a"}, {"uri": "file:///srv/b", "name": "b"}])
        assert json.loads(text_of(await c.call_tool("list_roots"))) == [
            {"uri": "file:///srv/a"},
            {"uri": "file:///srv/b", "name": "b"},
        ]
        with pytest.raises(ValueError):
            await c.set_roots([{"uri": "https://example.com/"}])

    shell.run(scenario, SDK_SERVER)


def test_roots_given_at_construction(shell: Shell) -> None:
    async def scenario(c: Any) -> Any:
        return json.loads(text_of(await c.call_tool("list_roots")))

    roots = shell.run(scenario, SDK_SERVER, roots=[{"uri": "file:///tmp/initial", "name": "init"}])
    assert roots == [{"uri": "file:///tmp/initial", "name": "init"}]


# ---------------------------------------------------------------------- lifecycle


def test_cleanup_then_call_respawns_the_server(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        assert text_of(await c.call_tool("echo", {"text": "one"})) == "one"
        [first] = children_matching("sdk_server.py")
        await c.cleanup()
        assert pid_gone(first.pid)
        assert not c.servers[0].is_connected
        assert children_matching("sdk_server.py") == []
        # STDIO-10: the next request spawns a new process and handshakes again.
        assert text_of(await c.call_tool("echo", {"text": "two"})) == "two"
        [second] = children_matching("sdk_server.py")
        assert second.pid != first.pid
        await c.cleanup()
        await c.cleanup()  # idempotent
        assert await c.ping() == {}

    shell.run(scenario, SDK_SERVER)
    assert children_matching("sdk_server.py") == []


def test_stderr_goes_to_the_logger_and_never_breaks_the_protocol(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        result = await c.call_tool("stderr_spam", {"n": 2_000_000, "line_length": 1000})
        assert text_of(result) == "wrote 2000000 bytes to stderr"
        assert text_of(await c.call_tool("echo", {"text": "after spam"})) == "after spam"
        # Over-long stderr lines are capped, not fatal.
        await c.call_tool("stderr_spam", {"n": 300_000, "line_length": 200_000})
        assert (
            text_of(await c.call_tool("echo", {"text": "after long lines"})) == "after long lines"
        )

    shell.run(scenario, SDK_SERVER)
    stderr = [r for r in shell.log.records if r.name.endswith(".stderr")]
    assert len(stderr) > 100
    assert all(len(r.getMessage()) <= 64 * 1024 + 100 for r in stderr)


def test_stderr_is_drained_at_pipe_speed(shell: Shell) -> None:
    """STDIO-5: draining stderr must keep up with a chatty server: 16 MB in 1 MB lines
    are drained (the server, blocked on a full pipe otherwise, answers) in big reads,
    never byte by byte. What happened is counted, not timed: this process's read system
    calls (psutil), at most one per KiB drained on average (64 KiB reads make ~250)."""
    me = psutil.Process()

    async def scenario(c: Any) -> int:
        await c.ping()
        before = me.io_counters().read_count
        result = await c.call_tool("stderr_spam", {"n": 16_000_000, "line_length": 1_000_000})
        assert text_of(result) == "wrote 16000000 bytes to stderr"
        return me.io_counters().read_count - before

    reads = shell.run(scenario, SDK_SERVER)
    assert reads < 16_000_000 // 1024, f"{reads} reads for 16 MB of stderr"
    stderr = [r for r in shell.log.records if r.name.endswith(".stderr")]
    assert len(stderr) >= 16  # every 1 MB line reached the log, capped
    assert all(len(r.getMessage()) <= 64 * 1024 + 100 for r in stderr)


# ---------------------------------------------------------------------- several servers


def _sdk_config(name: str) -> dict[str, Any]:
    return {"name": name, "command": SDK_SERVER, "read_timeout": 20}


def test_several_servers_route_by_name(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        assert [s.name for s in c.servers] == ["alpha", "beta"]
        assert not any(s.is_connected for s in c.servers)  # create_client is lazy
        tools = await c.list_tools()
        assert sorted({t.server for t in tools}) == ["alpha", "beta"]
        assert len([t for t in tools if t.name == "echo"]) == 2
        with pytest.raises(errors.AmbiguousToolName):
            await c.call_tool("echo", {"text": "which one?"})
        assert text_of(await c.call_tool("echo", {"text": "a"}, server="alpha")) == "a"
        assert text_of(await c.call_tool("echo", {"text": "b"}, server="BETA")) == "b"
        assert text_of(await c.call_tool("echo", {"text": "c"}, server=1)) == "c"
        with pytest.raises(errors.ServerNotFound):
            await c.call_tool("echo", {"text": "?"}, server="gamma")
        with pytest.raises(errors.AmbiguousPromptName):
            await c.get_prompt("greet", {"name": "x"})
        got = await c.get_prompt("greet", {"name": "x"}, server="beta")
        assert got["messages"][0]["content"]["text"] == "Please greet x."
        with pytest.raises(errors.AmbiguousResourceURI):
            await c.read_resource("demo://text")
        [content] = await c.read_resource("demo://text", server="alpha")
        assert content.text == "Hello from demo://text"
        # change_tools on one server only changes that server's list.
        name = text_of(await c.call_tool("change_tools", server="alpha"))
        assert text_of(await c.call_tool(name)) == "dynamic 1"
        assert {t.server for t in await c.list_tools() if t.name == name} == {"alpha"}
        assert await c.set_log_level("error") == ["alpha", "beta"]

    shell.run_client(scenario, [_sdk_config("alpha"), _sdk_config("beta")])
    assert children_matching("sdk_server.py") == []


def test_create_client_from_a_definition_file(shell: Shell, tmp_path: Any) -> None:
    path = tmp_path / "servers.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "sdk": {"command": sys.executable, "args": [str(SERVERS / "sdk_server.py")]},
                    "off": {"command": "does-not-exist", "disabled": True},
                }
            }
        ),
        encoding="utf-8",
    )

    async def scenario(c: Any) -> None:
        assert [s.name for s in c.servers] == ["sdk"]
        assert text_of(await c.call_tool("echo", {"text": "from file"})) == "from file"
        assert c.servers[0].is_connected

    shell.run_client(scenario, server_definition_file=path)
    assert any("disabled" in m for m in shell.log.messages(logging.WARNING))
