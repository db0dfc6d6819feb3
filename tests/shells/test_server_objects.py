"""Per-server objects (REQUIREMENTS §E3, issue 22 item 4), in both shells: the
client's methods scoped to one server, and its own handlers, written once on
``BaseClient`` (``mcp_proto.client.scoped.ServerMethods``).

Real peer: the official SDK server (tests/servers/sdk_server.py), in the handshake
era (its sampling and roots requests are handshake-era features).
"""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path
from typing import Any

from mcp_proto import errors

from .conftest import SDK_SERVER, Shell, text_of

PROTOCOL = "legacy"


async def got(value: Any) -> Any:
    """A server object's method returns what the client's returns: awaited in Trio."""
    return await value if inspect.isawaitable(value) else value


def test_a_server_object_offers_the_clients_methods_for_that_server(shell: Shell) -> None:
    async def scenario(client: Any) -> dict[str, Any]:
        server = client.find_server(0)
        assert server is client.servers[0] is client.find_server(server)
        tools = await got(server.list_tools())
        result = await got(server.call_tool("echo", {"text": "hi"}))
        raw = await got(server.rpc_request("tools/list"))
        await got(server.rpc_notify("notifications/roots/list_changed"))
        prompts = await got(server.list_prompts())
        read = await got(server.read_resource("demo://text"))
        return {
            "tools": "echo" in [t.name for t in tools] and all(t.server == "sdk" for t in tools),
            "call": text_of(result),
            "raw": "echo" in [t["name"] for t in raw["tools"]],
            "ping": await got(server.ping()),
            "prompts": len(prompts) > 0,
            "read": read[0].text is not None,
        }

    out = shell.run(scenario, SDK_SERVER, name="sdk")
    assert out == {
        "tools": True,
        "call": "hi",
        "raw": True,
        "ping": {},
        "prompts": True,
        "read": True,
    }


def test_a_server_objects_own_handlers(shell: Shell) -> None:
    seen: list[tuple[str, str]] = []

    async def scenario(client: Any) -> list[str]:
        server = client.servers[0]

        @server.on_sampling_request
        def sample(messages: Any, *_: Any) -> dict[str, Any]:
            return {"role": "assistant", "content": {"type": "text", "text": "own"}, "model": "m"}

        @server.on_roots_list_request
        def roots() -> list[dict[str, str]]:
            return [{"uri": "file:///own"}]

        server.on_notification(lambda s, method, params: seen.append((s.name, method)))
        # The handlers are declared from the next connection on (CAP-1).
        await got(server.terminate_session())
        out = [text_of(await got(server.call_tool("sample", {"prompt": "p"})))]
        out.append(text_of(await got(server.call_tool("list_roots", {}))))
        await got(server.call_tool("change_tools", {}))
        await client.flush_callbacks()
        return out

    sampled, roots = shell.run(scenario, SDK_SERVER, name="sdk")
    assert sampled == "own"
    assert json.loads(roots) == [{"uri": "file:///own"}]
    assert ("sdk", "notifications/tools/list_changed") in seen


RECORDING: list[str] = [
    sys.executable,
    str(Path(__file__).with_name("recording_server.py")),
]


def test_a_server_object_sets_its_own_client_info(shell: Shell) -> None:
    """§E3 ``set_client_info``: the next handshake of that server says it (the
    recording server answers its ``init`` tool with the ``initialize`` params it got);
    a malformed one is refused before anything is sent."""

    async def scenario(client: Any) -> list[Any]:
        server = client.servers[0]
        before = json.loads(text_of(await got(server.call_tool("init", {}))))["clientInfo"]
        server.set_client_info({"name": "per-server", "version": "2.0"})
        refused = False
        try:
            server.set_client_info({"name": "no version"})
        except errors.ValidationError:
            refused = True
        await got(server.terminate_session())  # a new session: initialize again
        after = json.loads(text_of(await got(server.call_tool("init", {}))))["clientInfo"]
        return [before, refused, after]

    before, refused, after = shell.run(
        scenario, RECORDING, client_info={"name": "c", "version": "1"}
    )
    assert before == {"name": "c", "version": "1"}
    assert refused
    assert after == {"name": "per-server", "version": "2.0"}


def test_a_server_objects_cache_invalidation_hook(shell: Shell) -> None:
    """§E3 ``on_cache_invalidation``, NOTIF-3/NOTIF-4: the hook runs for its own
    server's ``list_changed`` only, with the client's caches already dropped (listing
    the tools there refetches: the new tool is in it), and before the client's
    ``on_notification`` callbacks for that notification."""
    changed = "notifications/tools/list_changed"
    order: list[tuple[str, str, str]] = []  # (who, server, method)
    listed: list[str] = []  # what the hook's list_tools returned

    async def scenario(client: Any) -> str:
        one, two = client.servers[0], client.servers[1]
        assert "dynamic_1" not in [t.name for t in await got(one.list_tools())]  # cached
        await got(two.list_tools())

        async def hook(server: Any, method: str, params: dict[str, Any]) -> None:
            listed.extend(t.name for t in await got(server.list_tools()))
            order.append(("hook", server.name, method))

        one.on_cache_invalidation(shell.callback(hook))
        client.on_notification(lambda s, method, params: order.append(("host", s.name, method)))
        await got(two.call_tool("change_tools", {}))
        await shell.wait_for(lambda: len(order) >= 1)  # two's, first
        added = text_of(await got(one.call_tool("change_tools", {})))
        await shell.wait_for(lambda: len(order) >= 3)
        await client.flush_callbacks()
        return added

    configs = [{"name": n, "command": SDK_SERVER, "read_timeout": 20} for n in ("one", "two")]
    added = shell.run_client(scenario, configs)
    assert order == [("host", "two", changed), ("hook", "one", changed), ("host", "one", changed)]
    assert added == "dynamic_1" and added in listed  # refetched after the invalidation
