"""Both shells against ``@modelcontextprotocol/server-everything`` over HTTP: its
``streamableHttp`` mode (``/mcp``) and its deprecated ``sse`` mode (``/sse``).

Installed under tests/peers/node_modules by ``make test`` (npm ci in tests/peers).
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from ._http_support import HTTP_READ_TIMEOUT, PeerPool
from .conftest import EVERYTHING_BIN, PEERS_NODE_MODULES, Shell, text_of

if not PEERS_NODE_MODULES.is_dir():
    pytest.skip(
        f"{PEERS_NODE_MODULES} is missing: run `npm ci` in tests/peers (make test does)",
        allow_module_level=True,
    )

pytestmark = pytest.mark.peer

assert EVERYTHING_BIN.exists(), f"{EVERYTHING_BIN} missing although node_modules is installed"
assert shutil.which("node"), "node is not on PATH"

MODES = {"streamableHttp": "streamable_http", "sse": "sse"}
modes = pytest.mark.parametrize("mode", list(MODES))


@pytest.fixture(scope="module")
def peers() -> Iterator[PeerPool]:
    pool = PeerPool()
    try:
        yield pool
    finally:
        pool.close()


def run(shell: Shell, peers: PeerPool, mode: str, scenario: Any, **kwargs: Any) -> Any:
    peer = peers.everything(mode)
    kwargs.setdefault("read_timeout", HTTP_READ_TIMEOUT)
    return shell.run(scenario, peer.url, deadline=30, **kwargs)


@modes
def test_tools_echo_sum_and_structured_content(shell: Shell, peers: PeerPool, mode: str) -> None:
    async def scenario(c: Any) -> None:
        [server] = c.servers
        assert server.type == MODES[mode]
        assert server.info.server_info.name == "mcp-servers/everything"
        assert server.has_capability("tools")
        names = {t.name for t in await c.list_tools()}
        assert {
            "echo",
            "get-sum",
            "get-structured-content",
            "trigger-long-running-operation",
        } <= names
        assert text_of(await c.call_tool("echo", {"message": "hi there"})) == "Echo: hi there"
        assert "3" in text_of(await c.call_tool("get-sum", {"a": 1, "b": 2}))
        weather = await c.call_tool("get-structured-content", {"location": "Chicago"})
        assert set(weather["structuredContent"]) >= {"temperature", "conditions", "humidity"}
        assert (await c.find_tool("get-structured-content")).has_structured_output
        assert await c.ping() == {}

    run(shell, peers, mode, scenario)
    # Its structured output matches its own outputSchema: nothing to warn about.
    assert not [m for m in shell.log.messages(logging.WARNING) if "structured" in m]


@modes
def test_long_running_operation_reports_progress(shell: Shell, peers: PeerPool, mode: str) -> None:
    steps: list[tuple[Any, ...]] = []

    async def scenario(c: Any) -> None:
        result = await c.call_tool(
            "trigger-long-running-operation",
            {"duration": 0.3, "steps": 3},
            progress=lambda *args: steps.append(args),
            timeout=10,
        )
        assert "completed" in text_of(result).lower()
        await c.flush_callbacks()

    run(shell, peers, mode, scenario)
    assert [(p, total) for p, total, _ in steps] == [(1.0, 3.0), (2.0, 3.0), (3.0, 3.0)]
