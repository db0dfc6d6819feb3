"""The dual-era matrix (issue 10, "How it is proven"; LIFE-5..8): both shells.

``protocol="auto" | "modern" | "legacy"`` x a server that speaks the 2026-07-28 revision
or only the handshake era x stdio | Streamable HTTP. Every cell either works (the client
lists the tools, in the era the table says) or fails with the typed error the table says.

The servers are real peers:

* ``sdk-dual``: the official SDK server (``mcp==2.3.0``) as shipped, which serves both
  eras (the client's first request decides): the modern server of the matrix;
* ``sdk-modern``: the same server with ``--era modern``: ``initialize`` is refused with
  -32022 (a 2026-07-28-only server);
* ``sdk-legacy``: the same server with ``--era legacy``: ``server/discover`` is -32601 and
  an HTTP POST with ``MCP-Protocol-Version: 2026-07-28`` is a 400, as in the published
  pre-2026 SDKs (an old-revision server);
* ``everything``: ``@modelcontextprotocol/server-everything`` 2026.8.31 (npm), which
  speaks the handshake era only.

The expected table is data (:data:`EXPECTED`); docs/usage.md ("The 2026-07-28 revision")
documents the same outcomes for users.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_proto.errors import IncompatibleServerError, UnsupportedProtocolVersionError

from ._http_support import HTTP_READ_TIMEOUT, Peer, PeerPool, everything_http_server, http_peers
from .conftest import EVERYTHING, EVERYTHING_BIN, SDK_SERVER, SERVERS, Shell

MODERN = "2026-07-28"
LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
PROTOCOLS = ("auto", "modern", "legacy")
SERVER_KINDS = ("sdk-dual", "sdk-modern", "sdk-legacy", "everything")
TRANSPORTS = ("stdio", "http")

#: (protocol, server) -> the era the client ends up in, or the error class it raises.
#: The same on both transports and in both shells.
EXPECTED: dict[tuple[str, str], str | type[Exception]] = {
    # auto: probe with server/discover; a DiscoverResult means modern, any other answer
    # (-32601, an HTTP 400 without a modern error body) means the handshake (LIFE-6).
    ("auto", "sdk-dual"): "modern",
    ("auto", "sdk-modern"): "modern",
    ("auto", "sdk-legacy"): "legacy",
    ("auto", "everything"): "legacy",
    # modern: never falls back; a server that does not speak 2026-07-28 is incompatible.
    ("modern", "sdk-dual"): "modern",
    ("modern", "sdk-modern"): "modern",
    ("modern", "sdk-legacy"): IncompatibleServerError,
    ("modern", "everything"): IncompatibleServerError,
    # legacy: never sends server/discover; a modern-only server refuses initialize
    # with -32022 (UnsupportedProtocolVersionError, data.supported = ["2026-07-28"]).
    ("legacy", "sdk-dual"): "legacy",
    ("legacy", "sdk-modern"): UnsupportedProtocolVersionError,
    ("legacy", "sdk-legacy"): "legacy",
    ("legacy", "everything"): "legacy",
}

assert set(EXPECTED) == {(p, s) for p in PROTOCOLS for s in SERVER_KINDS}


def stdio_target(server: str) -> list[str]:
    if server == "everything":
        return list(EVERYTHING)
    era = server.removeprefix("sdk-")
    return [*SDK_SERVER, "--era", era] if era != "dual" else list(SDK_SERVER)


@contextlib.contextmanager
def sdk_era_http_server(era: str) -> Iterator[Peer]:
    """tests/servers/sdk_server.py over Streamable HTTP at /mcp with ``--era``."""

    def argv(port: int) -> list[str]:
        return [
            sys.executable,
            str(SERVERS / "sdk_server.py"),
            "--transport",
            "streamable-http",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--era",
            era,
        ]

    with http_peers._process_peer(
        argv,
        path="/mcp",
        kind="sdk",
        mode=f"streamable-http+{era}",
        timeout=http_peers.SDK_STARTUP_TIMEOUT,
    ) as peer:
        yield peer


class MatrixPeers(PeerPool):
    """The HTTP servers of the matrix, started once for the module."""

    def http_url(self, server: str) -> str:
        if server == "everything":
            return self._get("everything", "streamableHttp", everything_http_server).url
        era = server.removeprefix("sdk-")
        return self._get("sdk-era", era, sdk_era_http_server).url


@pytest.fixture(scope="module")
def peers() -> Iterator[MatrixPeers]:
    pool = MatrixPeers()
    try:
        yield pool
    finally:
        pool.close()


def cell_id(protocol: str, server: str, transport: str) -> str:
    return f"{protocol}-{server}-{transport}"


CELLS = [
    pytest.param(p, s, t, id=cell_id(p, s, t))
    for p in PROTOCOLS
    for s in SERVER_KINDS
    for t in TRANSPORTS
]


@pytest.mark.parametrize(("protocol", "server", "transport"), CELLS)
def test_dual_era_cell(
    shell: Shell, peers: MatrixPeers, protocol: str, server: str, transport: str
) -> None:
    assert EVERYTHING_BIN.exists(), f"{EVERYTHING_BIN} missing: run `make peers`"
    target: Any = stdio_target(server) if transport == "stdio" else peers.http_url(server)
    expected = EXPECTED[(protocol, server)]
    seen: dict[str, Any] = {}

    async def scenario(c: Any) -> None:
        tools = await c.list_tools()
        seen["tools"] = [t.name for t in tools]
        info = c.servers[0]
        seen["era"] = info.protocol_era
        seen["version"] = info.protocol_version

    options: dict[str, Any] = {"protocol": protocol}
    if transport == "http":
        options["read_timeout"] = HTTP_READ_TIMEOUT
    if isinstance(expected, type):
        with pytest.raises(expected) as caught:
            shell.run(scenario, target, **options)
        # A typed error that says what happened, not a bare code.
        assert str(caught.value), caught.value
        if expected is UnsupportedProtocolVersionError:
            assert MODERN in str(caught.value) or MODERN in repr(
                getattr(caught.value, "supported", "")
            ), caught.value
        assert seen == {}, seen
        return
    shell.run(scenario, target, **options)
    assert "echo" in seen["tools"], seen
    assert seen["era"] == expected, seen
    if expected == "modern":
        assert seen["version"] == MODERN, seen
    else:
        assert seen["version"] in LEGACY_VERSIONS, seen


#: Dual-era servers that read their first message to pick the era, and take a second or
#: more to start: the official SDK server and a FastMCP 4 one.
SLOW_STARTERS = {
    "sdk-dual": (list(SDK_SERVER), "echo"),
    "fastmcp": ([sys.executable, str(SERVERS / "fastmcp_server.py")], "add"),
}


@pytest.mark.parametrize("server", sorted(SLOW_STARTERS))
def test_a_dual_era_server_slower_to_start_than_discover_timeout_is_modern(
    shell: Shell, server: str
) -> None:
    # The probe times out long before the server is up, so initialize follows it. The
    # server reads the probe first, answers it and refuses initialize with -32022: the
    # late answer decides (LIFE-7). A FastMCP server cold-starting on a loaded machine
    # took more than the default 5 s and failed this way.
    argv, tool = SLOW_STARTERS[server]
    seen: dict[str, Any] = {}

    async def scenario(c: Any) -> None:
        seen["tools"] = [t.name for t in await c.list_tools()]
        seen["era"] = c.servers[0].protocol_era

    shell.run(scenario, argv, discover_timeout=0.01)
    assert tool in seen["tools"] and seen["era"] == "modern", seen


def test_protocol_modern_waits_for_a_server_slower_to_start_than_the_auto_bound(
    shell: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A forced protocol="modern" has no fallback to decide, so its probe waits
    # read_timeout like any first request, not the bound that declares a silent server
    # legacy under "auto" (here shrunk to 0.2 s; the SDK server also starts 1 s late).
    # CI met this as "no answer to server/discover within discover_timeout" from the
    # SDK server cold-starting in more than 5 s.
    monkeypatch.setattr("mcp_proto.connection._era.DISCOVER_TIMEOUT", 0.2)
    late = "import os, sys, time; time.sleep(1); os.execv(sys.argv[1], sys.argv[1:])"
    seen: dict[str, Any] = {}

    async def scenario(c: Any) -> None:
        seen["tools"] = [t.name for t in await c.list_tools()]
        seen["era"] = c.servers[0].protocol_era

    shell.run(scenario, [sys.executable, "-c", late, *SDK_SERVER], protocol="modern")
    assert "echo" in seen["tools"] and seen["era"] == "modern", seen
