"""``client.listen`` / ``server.listen`` (``subscriptions/listen``, issue 10 item 7) in
both shells: against the SDK server (``mcp==2.3.0``, dual-era) over stdio, and a
scripted 2026-07-28 stdio peer (``tests/servers/listen_stdio.py``) for a notification
flood, a process that exits, one that never acknowledges.
"""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_proto.errors import CapabilityError, ConnectionError, RequestTimeoutError

from .conftest import SDK_SERVER, SERVERS, Shell

LISTEN_PEER = [sys.executable, str(SERVERS / "listen_stdio.py")]


async def done(value: Any) -> Any:
    """A Subscription method's outcome in either shell (a coroutine in Trio)."""
    if inspect.isawaitable(value):
        return await value
    return value


def log_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    out = []
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            pid, _, text = line.partition(" ")
            out.append((int(pid), json.loads(text)))
    return out


# ---------------------------------------------------------------------- the SDK server


def test_listen_on_the_sdk_server_delivers_list_changed_and_updates(shell: Shell) -> None:
    """SUB-1/3/6, NOTIF-4: acknowledged as asked; a listener that reacts to
    tools/list_changed by listing the tools (a request from the listener: not on the
    reader) sees the new tool; resources/updated for the subscribed URI arrives."""
    got: list[tuple[str, Any]] = []
    seen_by_listener: list[list[str]] = []
    hosts: list[str] = []

    async def scenario(c: Any) -> None:
        async def listener(method: str, params: dict[str, Any]) -> None:
            got.append((method, params.get("uri")))
            if method == "notifications/tools/list_changed":
                tools = await c.list_tools()
                seen_by_listener.append([t.name for t in tools])

        c.on_notification(lambda server, method, params: hosts.append(method))
        assert [t.name for t in await c.list_tools()]  # cached before the change
        sub = await c.listen(
            {"tools_list_changed": True, "resource_subscriptions": ["demo://text"]},
            shell.callback(listener),
        )
        granted = await done(sub.wait_acknowledged(10))
        assert dict(granted) == {
            "toolsListChanged": True,
            "resourceSubscriptions": ("demo://text",),
        }
        assert sub.unsupported == () and sub.active and not sub.closed
        name = (await c.call_tool("change_tools", {}))["content"][0]["text"]
        await c.call_tool("touch", {"uri": "demo://text", "force": True})
        assert await shell.wait_for(lambda: len(got) >= 2 and bool(seen_by_listener))
        assert got == [
            ("notifications/tools/list_changed", None),
            ("notifications/resources/updated", "demo://text"),
        ]
        assert name in seen_by_listener[0]
        assert await shell.wait_for(lambda: len(hosts) >= 2)
        assert "notifications/tools/list_changed" in hosts  # the host callback, last
        await done(sub.close())
        assert sub.closed and sub.error is None and not sub.active

    shell.run(scenario, SDK_SERVER)


def test_listen_on_a_handshake_era_server_is_a_capability_error(shell: Shell) -> None:
    async def scenario(c: Any) -> None:
        with pytest.raises(CapabilityError):
            await c.listen({"tools_list_changed": True})

    shell.run(scenario, SDK_SERVER, protocol="legacy")


def test_unsupported_fields_are_judged_from_the_values(shell: Shell) -> None:
    """SUB-3: the SDK server has no prompts capability change stream... it grants what it
    can; a filter field it leaves out is reported."""

    async def scenario(c: Any) -> None:
        sub = await c.listen({"tools_list_changed": True, "prompts_list_changed": True})
        granted = await done(sub.wait_acknowledged(10))
        assert granted.get("toolsListChanged") is True
        expected = () if granted.get("promptsListChanged") is True else ("promptsListChanged",)
        assert sub.unsupported == expected
        await done(sub.close())

    shell.run(scenario, SDK_SERVER)


def test_subscribe_resource_maps_onto_listen_on_a_modern_server(shell: Shell) -> None:
    """RES-7/RES-9: on a 2026-07-28 server subscribe_resource opens a listen for the URI
    (confirmed by its acknowledgment); updates reach on_notification; unsubscribe
    closes it and no further update arrives."""
    updates: list[Any] = []

    async def scenario(c: Any) -> None:
        c.on_notification(
            lambda server, method, params: (
                updates.append(params.get("uri"))
                if method == "notifications/resources/updated"
                else None
            )
        )
        assert await c.subscribe_resource("demo://text") is True
        assert await c.subscribe_resource("demo://text") is True  # already: one listen
        await c.call_tool("touch", {"uri": "demo://text", "force": True})
        assert await shell.wait_for(lambda: updates == ["demo://text"])
        assert await c.unsubscribe_resource("demo://text") is True
        await c.call_tool("touch", {"uri": "demo://text", "force": True})
        await c.flush_callbacks()
        assert updates == ["demo://text"]

    shell.run(scenario, SDK_SERVER)


# ---------------------------------------------------------------------- scripted peer


def test_a_flood_beyond_the_queue_bound_keeps_memory_bounded(shell: Shell) -> None:
    """SUB-7/9/12: the listener is stuck on the first notification while 5000 more
    arrive: the queue stays within its bounds, repeats are dropped (counted) and the
    quiet resource and the end marker keep their signal."""
    total = 5002
    released: list[bool] = []
    seen: list[Any] = []

    async def scenario(c: Any) -> None:
        async def listener(method: str, params: dict[str, Any]) -> None:
            seen.append((method, params.get("uri")))
            await shell.wait_for(lambda: bool(released), timeout=30)

        sub = await c.listen(
            {"resource_subscriptions": ["demo://busy", "demo://quiet"]}, shell.callback(listener)
        )
        await done(sub.wait_acknowledged(10))
        cap = sub.MAX_PENDING_NOTIFICATIONS
        assert await shell.wait_for(
            lambda: len(seen) + sub.pending_notifications + sub.dropped_notifications == total,
            timeout=30,
        )
        assert sub.pending_notifications <= cap
        assert sub.pending_notification_bytes <= sub.MAX_PENDING_NOTIFICATION_BYTES
        assert sub.dropped_notifications == total - len(seen) - sub.pending_notifications > 0
        released.append(True)
        assert await shell.wait_for(lambda: sub.pending_notifications == 0, timeout=30)
        uris = [u for m, u in seen]
        assert "demo://quiet" in uris
        assert seen[-1] == ("notifications/tools/list_changed", None)
        await done(sub.close())

    shell.run(scenario, [*LISTEN_PEER, "flood", "5000"])


def test_a_never_acknowledged_listen_ends_with_a_timeout(shell: Shell) -> None:
    """SUB-5: the ack timeout cancels the request and ends the subscription."""

    async def scenario(c: Any) -> None:
        sub = await c.listen({"tools_list_changed": True}, ack_timeout=0.3)
        with pytest.raises(RequestTimeoutError):
            await done(sub.wait_acknowledged(10))
        assert sub.closed and isinstance(sub.error, RequestTimeoutError)

    shell.run(scenario, [*LISTEN_PEER, "never_ack"])


def test_a_process_that_exits_is_restarted_and_the_listen_re_sent(
    shell: Shell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SUB-19: nobody makes calls; the exit alone brings a new process, which receives
    the listen again; closing cancels only the live process's listen (SUB-29)."""
    log = tmp_path / "listen.log"
    monkeypatch.setenv("LISTEN_LOG", str(log))
    monkeypatch.setattr(shell.mod.StdioServer, "SUBSCRIPTION_RESTART_MIN_INTERVAL", 0.2)

    async def scenario(c: Any) -> None:
        sub = await c.listen({"tools_list_changed": True})
        await done(sub.wait_acknowledged(10))

        def listened_by() -> list[int]:
            return [p for p, m in log_lines(log) if m.get("method") == "subscriptions/listen"]

        # The peer exits 0.5 s after its acknowledgment; a new process gets the listen.
        assert await shell.wait_for(lambda: len(set(listened_by())) >= 2, timeout=15)
        assert await shell.wait_for(lambda: sub.active, timeout=15)
        assert not sub.closed
        await done(sub.close())
        assert await shell.wait_for(
            lambda: any(m.get("method") == "notifications/cancelled" for _, m in log_lines(log))
        )
        listens = [
            (p, m["id"]) for p, m in log_lines(log) if m.get("method") == "subscriptions/listen"
        ]
        cancels = [
            (p, m["params"]["requestId"])
            for p, m in log_lines(log)
            if m.get("method") == "notifications/cancelled"
        ]
        assert cancels == [listens[-1]]  # only the live process's listen, by its id

    shell.run(scenario, [*LISTEN_PEER, "exit_after", "0.5"])


def test_a_crash_loop_ends_the_subscription(shell: Shell) -> None:
    """SUB-21: the process died 0.5 s after receiving the listen (< the 5 s bound)."""

    async def scenario(c: Any) -> None:
        sub = await c.listen({"tools_list_changed": True})
        await done(sub.wait_acknowledged(10))
        assert await shell.wait_for(lambda: sub.closed, timeout=15)
        assert isinstance(sub.error, ConnectionError)
        assert "not re-sent" in str(sub.error)

    shell.run(scenario, [*LISTEN_PEER, "exit_after", "0.5"])
