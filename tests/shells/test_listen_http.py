"""``listen`` over Streamable HTTP in both shells, against the SDK server (``mcp==2.3.0``)
in the 2026-07-28 era: each subscription is its own POST stream (SUB-4, SHTTP-9); a
stream that drops because the server went away is re-opened once it is back (SUB-17);
closing the subscription closes the stream (SUB-16).
"""

from __future__ import annotations

import contextlib
import inspect
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from ._http_support import HTTP_READ_TIMEOUT, PeerPool, free_port, http_peers
from .conftest import SERVERS, Shell

SDK = SERVERS / "sdk_server.py"


async def done(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


@pytest.fixture(scope="module")
def peers() -> Iterator[PeerPool]:
    pool = PeerPool()
    try:
        yield pool
    finally:
        pool.close()


@contextlib.contextmanager
def sdk_on(port: int) -> Iterator[subprocess.Popen[bytes]]:
    """The SDK server on a port of our choosing (to bring it back on the same one)."""
    argv = [sys.executable, str(SDK), "--transport", "streamable-http", "--port", str(port)]
    proc = subprocess.Popen(
        [*argv, "--host", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        http_peers.wait_for_port(port, 20.0, proc)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_a_byte_heavy_flood_over_http_stays_within_the_byte_bound(shell: Shell) -> None:
    """SUB-7/8/10/12 over HTTP (scripted peer: tests/servers/hostile_modern.py): 1500
    updates of ~20 KB each (30 MB) on the listen stream while the listener is stuck:
    what waits stays within MAX_PENDING_NOTIFICATION_BYTES, the rest is dropped and
    counted, and every one of the 50 resources keeps its newest update."""
    if str(SERVERS) not in sys.path:
        sys.path.insert(0, str(SERVERS))
    import hostile_modern

    total = 1500
    url, stop, _peer = hostile_modern.start_http(
        "listen_flood", count=total, distinct=50, pad=20_000
    )
    released: list[bool] = []
    seen: list[str] = []

    async def scenario(c: Any) -> None:
        async def listener(method: str, params: dict[str, Any]) -> None:
            seen.append(params["uri"])
            await shell.wait_for(lambda: bool(released), timeout=60)

        sub = await c.listen({"resources_list_changed": True}, shell.callback(listener))
        await done(sub.wait_acknowledged(10))
        assert await shell.wait_for(
            lambda: len(seen) + sub.pending_notifications + sub.dropped_notifications == total,
            timeout=60,
        )
        limit = sub.MAX_PENDING_NOTIFICATION_BYTES
        assert sub.pending_notification_bytes <= limit
        assert sub.pending_notifications * 20_000 <= limit + 20_100
        assert sub.dropped_notifications > 0
        released.append(True)
        assert await shell.wait_for(lambda: sub.pending_notifications == 0, timeout=60)
        assert set(seen) == {f"demo://r/{i}" for i in range(50)}
        await done(sub.close())

    try:
        shell.run(scenario, url, read_timeout=HTTP_READ_TIMEOUT, deadline=120)
    finally:
        stop()


@pytest.mark.parametrize("mode", ["streamable-http", "streamable-http+stateless"])
def test_listen_over_streamable_http(shell: Shell, peers: PeerPool, mode: str) -> None:
    got: list[str] = []

    async def scenario(c: Any) -> None:
        sub = await c.listen(
            {"tools_list_changed": True, "resource_subscriptions": ["demo://text"]},
            lambda method, params: got.append(method),
        )
        granted = await done(sub.wait_acknowledged(10))
        assert granted["toolsListChanged"] is True and sub.active
        await c.call_tool("change_tools", {})
        await c.call_tool("touch", {"uri": "demo://text", "force": True})
        assert await shell.wait_for(lambda: len(got) >= 2)
        assert got == ["notifications/tools/list_changed", "notifications/resources/updated"]
        await done(sub.close())
        assert sub.closed and sub.error is None

    shell.run(scenario, peers.sdk(mode).url, read_timeout=HTTP_READ_TIMEOUT)


def test_a_dropped_stream_is_re_opened_when_the_server_is_back(shell: Shell) -> None:
    """SUB-4/14/17: the server process goes away (the stream breaks, re-opens fail);
    the subscription is not active meanwhile, and not ended; once a server listens on
    the same port again the stream is re-opened, acknowledged, and notifications flow."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    got: list[str] = []
    stack = contextlib.ExitStack()
    first = stack.enter_context(sdk_on(port))  # connect() needs it up at once

    async def scenario(c: Any) -> None:
        sub = await c.listen({"tools_list_changed": True}, lambda m, p: got.append(m))
        await done(sub.wait_acknowledged(10))
        first.kill()  # abruptly: the stream breaks, nobody answers the re-opens
        first.wait(10)
        assert await shell.wait_for(lambda: not sub.active, timeout=15)
        assert not sub.closed
        stack.enter_context(sdk_on(port))
        assert await shell.wait_for(lambda: sub.active, timeout=30)
        await c.call_tool("change_tools", {})
        assert await shell.wait_for(lambda: "notifications/tools/list_changed" in got)
        await done(sub.close())

    with stack:
        shell.run(scenario, url, read_timeout=HTTP_READ_TIMEOUT, retry_backoff=0.2, deadline=120)
