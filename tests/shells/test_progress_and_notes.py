"""Row 6 of issue 24 in both shells.

PROG-4: ``progress=`` on ``get_prompt``, ``read_resource`` and ``send_rpc`` too, against
the SDK server (its ``greet`` prompt and ``demo://item/{id}`` template report progress for
``progress``), in both eras.
NOTIF-2, PROG-7, NOTIF-5: a ``resources/updated``, a server's ``notifications/cancelled``
and an unknown notification are logged at debug; a server log message reaches the host's
logger after the notifications before it were routed, in the order they came (scripted
peer ``hostile_stdio.py notes``: no real server sends all of these on cue).
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from .conftest import SDK_SERVER, Shell, hostile


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
def test_progress_on_prompts_resources_and_raw_requests(shell: Shell, protocol: str) -> None:
    seen: list[tuple[str, float, float | None, str | None]] = []

    def on(kind: str) -> Any:
        return lambda p, total, message: seen.append((kind, p, total, message))

    async def scenario(c: Any) -> None:
        prompt = await c.get_prompt("greet", {"name": "progress"}, progress=on("prompt"))
        assert "Please greet progress." in str(prompt.messages[0].content)
        (content,) = await c.read_resource("demo://item/progress", progress=on("read"))
        assert content.text == "item progress"
        raw = await c.send_rpc(
            "tools/call", {"name": "progress", "arguments": {"steps": 2}}, progress=on("rpc")
        )
        assert raw["content"][0]["text"] == "done"
        # A call returns once its progress callbacks have run (PROG-1).
        assert seen == [
            ("prompt", 1.0, 2.0, "prompt 1/2"),
            ("prompt", 2.0, 2.0, "prompt 2/2"),
            ("read", 1.0, 2.0, "read 1/2"),
            ("read", 2.0, 2.0, "read 2/2"),
            ("rpc", 1.0, 2.0, "step 1/2"),
            ("rpc", 2.0, 2.0, "step 2/2"),
        ]

    shell.run(scenario, SDK_SERVER, protocol=protocol)


def test_the_clients_own_handling_of_notifications_is_logged_in_order(shell: Shell) -> None:
    got: list[str] = []

    async def scenario(c: Any) -> None:
        c.on_notification(lambda server, method, params: got.append(method))
        await c.call_tool("t")
        await c.flush_callbacks()

    shell.run(scenario, hostile("notes"), protocol="legacy", name="srv")
    assert got == [
        "notifications/resources/updated",
        "notifications/cancelled",
        "notifications/hostile/unknown",
        "notifications/message",
    ]
    lines = [
        m
        for m in shell.log.messages(logging.DEBUG)
        if "demo://x" in m or "request 99" in m or "hostile/unknown" in m or "hello" in m
    ]
    assert lines == [
        "server 'srv': resource updated: demo://x",
        "server 'srv' cancelled its request 99: gave up",
        "server 'srv': notification notifications/hostile/unknown (the client does not handle it)",
        "[srv] notes: hello",
    ]
    levels = {r.getMessage(): r.levelno for r in shell.log.records}
    assert levels["server 'srv': resource updated: demo://x"] == logging.DEBUG
    assert levels["[srv] notes: hello"] == logging.INFO
