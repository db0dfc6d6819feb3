"""SUB-2 over both shells: ``server.listen(notifications, callback)`` opens a
subscription on one 2026-07-28 server (the SDK server, ``mcp==2.3.0``, forced modern
over stdio), delivers what its filter asked for to the callback, and
``subscription.close()`` ends it (no error, not active).
"""

from __future__ import annotations

import inspect
from typing import Any

from .conftest import SDK_SERVER, Shell


async def done(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


def test_server_listen_opens_a_subscription_on_that_server(shell: Shell) -> None:
    got: list[str] = []

    async def scenario(c: Any) -> None:
        server = c.servers[0]

        async def listener(method: str, params: dict[str, Any]) -> None:
            got.append(method)

        sub = await done(
            server.listen({"tools_list_changed": True}, shell.callback(listener), ack_timeout=10)
        )
        granted = await done(sub.wait_acknowledged(10))
        assert dict(granted) == {"toolsListChanged": True}
        assert sub.server is server and sub.active and sub.unsupported == ()
        await c.call_tool("change_tools", {})
        assert await shell.wait_for(lambda: "notifications/tools/list_changed" in got)
        await done(sub.close())
        assert sub.closed and sub.error is None and not sub.active

    shell.run(scenario, SDK_SERVER, protocol="modern")
