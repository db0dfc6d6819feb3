"""Both shells against the reference ``@modelcontextprotocol/server-everything`` (Node).

Installed under tests/peers/node_modules by ``make test`` (npm ci in tests/peers).
"""

from __future__ import annotations

import logging
import shutil
from typing import Any

import pytest

from .conftest import EVERYTHING, EVERYTHING_BIN, PEERS_NODE_MODULES, Shell, text_of

if not PEERS_NODE_MODULES.is_dir():
    pytest.skip(
        f"{PEERS_NODE_MODULES} is missing: run `npm ci` in tests/peers (make test does)",
        allow_module_level=True,
    )

pytestmark = pytest.mark.peer

assert EVERYTHING_BIN.exists(), f"{EVERYTHING_BIN} missing although node_modules is installed"
assert shutil.which("node"), "node is not on PATH"

SAMPLING_TOOL = "trigger-sampling-request"
ELICITATION_TOOL = "trigger-elicitation-request"


async def _tool_names(c: Any, want: str | None = None, shell: Shell | None = None) -> set[str]:
    """Tool names; with ``want``, re-list (bounded) until it shows up: the server adds
    capability-dependent tools right after the handshake and announces them with
    ``notifications/tools/list_changed``."""
    names = {t.name for t in await c.list_tools()}
    if want is None or shell is None:
        return names
    for _ in range(100):
        if want in names:
            break
        await shell.sleep(0.05)
        names = {t.name for t in await c.list_tools()}
    return names


def test_lists_basic_tools_and_progress(shell: Shell) -> None:
    steps: list[tuple[Any, ...]] = []

    async def scenario(c: Any) -> None:
        info = c.servers[0].info
        assert info.server_info.name == "mcp-servers/everything"
        assert info.has_capability("tools") and info.has_capability("completions")
        names = await _tool_names(c)
        assert {
            "echo",
            "get-sum",
            "get-structured-content",
            "trigger-long-running-operation",
        } <= names
        # Sampling / elicitation tools are offered only to clients declaring them.
        assert SAMPLING_TOOL not in names and ELICITATION_TOOL not in names
        prompts = {p.name: p for p in await c.list_prompts()}
        assert {"simple-prompt", "args-prompt", "completable-prompt"} <= set(prompts)
        assert [a.name for a in prompts["args-prompt"].arguments][:1] == ["city"]
        resources = (await c.list_resources())["resources"]
        assert resources and all(r.uri for r in resources)

        assert text_of(await c.call_tool("echo", {"message": "hi there"})) == "Echo: hi there"
        assert "3" in text_of(await c.call_tool("get-sum", {"a": 1, "b": 2}))
        weather = await c.call_tool("get-structured-content", {"location": "Chicago"})
        assert set(weather["structuredContent"]) >= {"temperature", "conditions", "humidity"}
        assert (await c.find_tool("get-structured-content")).has_structured_output
        assert await c.ping() == {}
        simple = await c.get_prompt("simple-prompt")
        assert simple["messages"]

        result = await c.call_tool(
            "trigger-long-running-operation",
            {"duration": 0.5, "steps": 5},
            progress=lambda *args: steps.append(args),
        )
        assert "completed" in text_of(result).lower()
        assert await shell.wait_for(lambda: len(steps) >= 5, timeout=5)

    shell.run(scenario, EVERYTHING)
    assert [(p, total) for p, total, _ in steps] == [(float(i), 5.0) for i in range(1, 6)]
    # The real server's structured output matches its own outputSchema: nothing to warn about.
    assert not [m for m in shell.log.messages(logging.WARNING) if "structured" in m]


def test_resources_completion_and_logging(shell: Shell) -> None:
    messages: list[dict[str, Any]] = []

    def on_note(server: Any, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/message" and "-level message" in str(params.get("data")):
            messages.append(params)

    async def scenario(c: Any) -> None:
        templates = (await c.list_resource_templates())["resourceTemplates"]
        uris = {t.uri_template for t in templates}
        text_template = "demo://resource/dynamic/text/{resourceId}"
        assert text_template in uris
        [text] = await c.read_resource("demo://resource/dynamic/text/1")
        assert text.is_text and text.text
        [blob] = await c.read_resource("demo://resource/dynamic/blob/1")
        assert blob.is_binary and blob.data
        first = (await c.list_resources())["resources"][0]
        [content] = await c.read_resource(first.uri)
        assert content.uri == first.uri

        departments = await c.complete(
            {"type": "ref/prompt", "name": "completable-prompt"},
            {"name": "department", "value": "E"},
        )
        assert departments["values"] == ["Engineering"]
        members = await c.complete(
            {"type": "ref/prompt", "name": "completable-prompt"},
            {"name": "name", "value": ""},
            context={"arguments": {"department": "Engineering"}},
        )
        assert members["values"]
        got = await c.get_prompt(
            "completable-prompt", {"department": "Engineering", "name": members["values"][0]}
        )
        assert members["values"][0] in got["messages"][0]["content"]["text"]
        ids = await c.complete(
            {"type": "ref/resource", "uri": text_template}, {"name": "resourceId", "value": "1"}
        )
        assert "1" in ids["values"]

        # toggle-simulated-logging sends one message at once, then one every 5 s.
        c.on_notification(on_note)
        assert await c.set_log_level("debug") == ["mcp-server-everything"]
        await c.call_tool("toggle-simulated-logging", {})
        assert await shell.wait_for(lambda: bool(messages), timeout=12)
        await c.call_tool("toggle-simulated-logging", {})

    shell.run(scenario, EVERYTHING)
    # ... and reaches the Python logger too.
    assert [r for r in shell.log.records if "-level message" in r.getMessage()]


def test_sampling_elicitation_and_roots(shell: Shell) -> None:
    sampled: list[Any] = []
    elicited: list[Any] = []
    messages: list[dict[str, Any]] = []

    def sampling(prompt_messages: Any, prefs: Any, system_prompt: Any, max_tokens: Any) -> str:
        sampled.append((prompt_messages, system_prompt, max_tokens))
        return "the host model answers"

    def elicitation(message: str, schema: Any) -> Any:
        elicited.append(schema)
        return {"action": "decline"}

    def on_note(server: Any, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/message":
            messages.append(params)

    async def scenario(c: Any) -> None:
        c.on_notification(on_note)
        assert await c.ping() == {}
        # The server asks roots/list right after the handshake; the client answers it.
        assert await shell.wait_for(
            lambda: any("Roots updated" in str(m.get("data")) for m in messages), timeout=10
        )
        names = await _tool_names(c, SAMPLING_TOOL, shell)
        assert SAMPLING_TOOL in names and ELICITATION_TOOL in names

        sampled_result = await c.call_tool(SAMPLING_TOOL, {"prompt": "hello", "maxTokens": 50})
        assert "the host model answers" in text_of(sampled_result)
        assert sampled and sampled[0][2] == 50
        assert "hello" in sampled[0][0][0]["content"]["text"]

        declined = await c.call_tool(ELICITATION_TOOL, {})
        assert "declined" in " ".join(b.get("text", "") for b in declined["content"])
        assert elicited and elicited[0]["type"] == "object"

        await c.set_roots([{"uri": "file:///tmp/everything-root", "name": "workspace"}])
        for _ in range(100):
            roots_text = text_of(await c.call_tool("get-roots-list", {}))
            if "file:///tmp/everything-root" in roots_text:
                break
            await shell.sleep(0.05)
        assert "file:///tmp/everything-root" in roots_text

    # Lazily connected, so the callback is registered before the handshake.
    shell.run_client(
        scenario,
        [{"name": "everything", "command": EVERYTHING, "read_timeout": 20}],
        sampling_handler=sampling,
        elicitation_handler=elicitation,
        roots=[],  # registers roots (CAP-4): set later, served from the start
    )
