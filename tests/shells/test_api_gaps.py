"""Row 9 of issue 24 in both shells, against the SDK server: ``resource_cache`` (RES-1),
``on_notification``'s handle (NOTIF-1), ``log_level`` and ``roots`` as properties (LOG-1,
ROOT-1), and the names both shells export (GEN-5, GEN-7: ``AudioContent``,
``ResourceLink``; ``Subscription``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import mcp_io_sync
import mcp_io_trio
import mcp_proto

from .conftest import SDK_SERVER, Shell, text_of


def test_resource_cache_and_the_notification_handle(shell: Shell) -> None:
    got: list[str] = []

    async def scenario(c: Any) -> None:
        assert c.resource_cache == []
        await c.list_resources()
        assert {r.uri for r in c.resource_cache} == {"demo://text", "demo://blob"}
        handle = c.on_notification(lambda server, method, params: got.append(method))
        await c.call_tool("change_tools", {})
        assert await shell.wait_for(lambda: "notifications/tools/list_changed" in got)
        assert handle.remove() is True
        got.clear()
        await c.call_tool("change_tools", {})
        await c.list_tools()  # the change was sent before this answer
        await c.flush_callbacks()
        assert got == []  # removed: called no more
        assert not handle.active

    shell.run(scenario, SDK_SERVER, protocol="legacy")


def test_log_level_and_roots_properties(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        client = getattr(c, "raw", c)  # (the blocking shell's test proxy forwards reads only)
        assert client.log_level is None
        client.log_level = "warning"
        assert client.log_level == "warning"
        # Blocking: set before the assignment returns; Trio: in the background.
        for _ in range(100):
            answer = text_of(await c.call_tool("log", {"level": "info", "message": "q"}))
            if answer == "suppressed":
                break
            await shell.sleep(0.05)
        assert answer == "suppressed"
        with pytest.raises(ValueError):
            client.log_level = "loud"
        client.roots = [{"uri": "file:///tmp/project", "name": "project"}]
        assert [r.uri for r in client.roots] == ["file:///tmp/project"]
        for _ in range(100):
            listed = json.loads(text_of(await c.call_tool("list_roots")))
            if listed:
                break
            await shell.sleep(0.05)
        assert listed == [{"uri": "file:///tmp/project", "name": "project"}]

    shell.run(scenario, SDK_SERVER, protocol="legacy", roots=[])


@pytest.mark.parametrize("package", [mcp_io_sync, mcp_io_trio])
def test_both_shells_export_the_content_types_and_subscription(package: Any) -> None:
    for name in ("AudioContent", "ResourceLink", "Subscription", "NotificationHandle"):
        assert name in package.__all__
    assert package.AudioContent is mcp_proto.AudioContent
    assert package.ResourceLink is mcp_proto.ResourceLink
    assert package.Subscription.__module__ == f"{package.__name__}._listen"
