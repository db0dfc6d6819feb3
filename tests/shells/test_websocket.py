"""MCP over WebSocket in both shells (issue 25).

* The real peer: the official Python SDK 1.x WebSocket server (``mcp<2`` in
  tests/peers/ws-venv, ``make ws-peer``; tests/servers/ws_sdk1_server.py) on uvicorn with
  ``websockets``, which negotiates ``permessage-deflate``.
* The hostile peer: tests/servers/ws_hostile.py, raw sockets, one fault per mode.
"""

from __future__ import annotations

import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_proto import errors

from ._http_support import http_peers
from .conftest import ROOT, SERVERS, RSSSampler, Shell, text_of

WS_PYTHON = ROOT / "tests" / "peers" / "ws-venv" / "bin" / "python"
MIB = 1024 * 1024
RSS_BOUND = 200 * MIB
READ_TIMEOUT = 15.0
DEADLINE = 60.0

if not WS_PYTHON.exists():
    pytest.skip(
        f"{WS_PYTHON} is missing: run `make ws-peer` (make test does)", allow_module_level=True
    )

pytestmark = pytest.mark.peer


def _ws_url(peer: http_peers.Peer) -> str:
    return f"ws://127.0.0.1:{peer.port}/mcp"


@pytest.fixture(scope="module")
def sdk1() -> Iterator[str]:
    with http_peers._process_peer(
        lambda port: [str(WS_PYTHON), str(SERVERS / "ws_sdk1_server.py"), str(port)],
        path="/mcp",
        kind="sdk1-ws",
        mode="websocket",
        timeout=http_peers.SDK_STARTUP_TIMEOUT,
    ) as peer:
        yield _ws_url(peer)


@pytest.fixture(scope="module")
def sdk1_tls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The same server over ``wss://``, with a self-signed certificate: (url, cert)."""
    directory = tmp_path_factory.mktemp("ws-tls")
    with http_peers._process_peer(
        lambda port: [
            str(WS_PYTHON),
            str(SERVERS / "ws_sdk1_server.py"),
            str(port),
            "--tls",
            str(directory),
        ],
        path="/mcp",
        kind="sdk1-wss",
        mode="websocket",
        timeout=http_peers.SDK_STARTUP_TIMEOUT,
    ) as peer:
        yield f"wss://127.0.0.1:{peer.port}/mcp", directory / "cert.pem"


def hostile(mode: str) -> Any:
    return http_peers._process_peer(
        lambda port: [sys.executable, str(SERVERS / "ws_hostile.py"), mode, str(port)],
        path="/mcp",
        kind="ws-hostile",
        mode=mode,
        timeout=http_peers.HOSTILE_STARTUP_TIMEOUT,
    )


def run(shell: Shell, url: str, scenario: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("read_timeout", READ_TIMEOUT)
    return shell.run(scenario, url, deadline=DEADLINE, **kwargs)


# ---------------------------------------------------------------------- the SDK 1.x server


def test_tools_and_a_call(shell: Shell, sdk1: str) -> None:
    async def scenario(c: Any) -> tuple[list[str], str]:
        names = [t.name for t in await c.list_tools()]
        return names, text_of(await c.call_tool("echo", {"text": "h\u00e9 \u2603"}))

    names, text = run(shell, sdk1, scenario)
    assert {"echo", "count", "ask_name", "summarize", "notify", "big", "slow"} <= set(names)
    assert text == "h\u00e9 \u2603"


def test_transport_option_and_config_helper(shell: Shell, sdk1: str) -> None:
    from mcp_proto.config import websocket_config

    async def scenario(c: Any) -> str:
        return text_of(await c.call_tool("echo", {"text": "cfg"}))

    assert run(shell, sdk1, scenario, transport="websocket") == "cfg"
    config = websocket_config(sdk1, name="ws", read_timeout=READ_TIMEOUT)
    assert shell.run_client(scenario, [config], deadline=DEADLINE) == "cfg"


def test_wss_with_the_clients_ssl_context(shell: Shell, sdk1_tls: tuple[str, Path]) -> None:
    url, cert = sdk1_tls

    async def scenario(c: Any) -> str:
        return text_of(await c.call_tool("big", {"size": 1_000_000}))

    context = ssl.create_default_context(cafile=str(cert))
    assert len(run(shell, url, scenario, ssl_context=context)) == 1_000_000


def test_wss_verifies_the_certificate(shell: Shell, sdk1_tls: tuple[str, Path]) -> None:
    url, _ = sdk1_tls

    async def scenario(c: Any) -> None:
        raise AssertionError("connected")  # pragma: no cover

    with pytest.raises(errors.ConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
        run(shell, url, scenario)


def test_keepalive_pings_are_answered_by_the_server(shell: Shell, sdk1: str) -> None:
    from mcp_proto.config import websocket_config

    async def scenario(c: Any) -> str:
        await c.ping()
        server = c.servers[0]
        await shell.sleep(1.0)  # five keep-alive Pings, each answered
        assert server.is_connected
        return text_of(await c.call_tool("echo", {"text": "alive"}))

    config = websocket_config(sdk1, name="ws", ping=0.2, read_timeout=READ_TIMEOUT)
    assert shell.run_client(scenario, [config], deadline=DEADLINE) == "alive"
    assert not [m for m in shell.log.messages() if "Ping" in m]


def test_progress(shell: Shell, sdk1: str) -> None:
    steps: list[Any] = []

    async def scenario(c: Any) -> str:
        result = await c.call_tool(
            "count", {"n": 5}, progress=lambda p, total, message: steps.append((p, total))
        )
        return text_of(result)

    assert run(shell, sdk1, scenario) == "counted 5"
    assert steps == [(i, 5) for i in range(1, 6)]


def test_elicitation_and_sampling(shell: Shell, sdk1: str) -> None:
    asked: list[Any] = []

    def elicitation(message: str, schema: Any) -> Any:
        asked.append(message)
        return {"action": "accept", "content": {"name": "Ada"}}

    def sampling(messages: Any, prefs: Any, system_prompt: Any, max_tokens: Any) -> str:
        return "a summary"

    async def scenario(c: Any) -> tuple[str, str]:
        hello = text_of(await c.call_tool("ask_name", {}))
        summary = text_of(await c.call_tool("summarize", {"text": "long text"}))
        return hello, summary

    assert run(
        shell, sdk1, scenario, elicitation_handler=elicitation, sampling_handler=sampling
    ) == ("hello Ada", "a summary")
    assert asked == ["Your name?"]


def test_notifications(shell: Shell, sdk1: str) -> None:
    seen: list[str] = []

    def on_note(server: Any, method: str, params: dict[str, Any]) -> None:
        seen.append(method)

    async def scenario(c: Any) -> None:
        c.on_notification(on_note)
        assert text_of(await c.call_tool("notify", {})) == "sent"
        assert await shell.wait_for(
            lambda: {"notifications/message", "notifications/tools/list_changed"} <= set(seen)
        )

    run(shell, sdk1, scenario)


def test_a_5_mb_result_compressed_by_the_server(shell: Shell, sdk1: str) -> None:
    async def scenario(c: Any) -> int:
        return len(text_of(await c.call_tool("big", {"size": 5_000_000})))

    assert run(shell, sdk1, scenario) == 5_000_000


def test_a_timeout_then_the_connection_is_reused(shell: Shell, sdk1: str) -> None:
    async def scenario(c: Any) -> str:
        with pytest.raises(errors.RequestTimeoutError):
            await c.call_tool("slow", {"seconds": 5}, timeout=0.3)
        return text_of(await c.call_tool("echo", {"text": "after"}))

    assert run(shell, sdk1, scenario) == "after"


def test_close_then_reconnect_on_the_next_call(shell: Shell, sdk1: str) -> None:
    async def scenario(c: Any) -> str:
        await c.ping()
        await c.cleanup()  # closes the WebSocket (Close 1000), keeps the client
        return text_of(await c.call_tool("echo", {"text": "again"}))

    assert run(shell, sdk1, scenario) == "again"


# ---------------------------------------------------------------------- the hostile peer


@pytest.mark.parametrize(
    ("mode", "error", "words"),
    [
        ("binary", errors.WebSocketProtocolError, "binary"),
        ("utf8", errors.WebSocketProtocolError, "UTF-8"),
        ("close_mid", errors.WebSocketClosedError, "middle of a message"),
        ("eof_mid", errors.WebSocketClosedError, "middle of a message"),
    ],
)
def test_faults_after_the_handshake_are_typed(
    shell: Shell, mode: str, error: type[Exception], words: str
) -> None:
    with hostile(mode) as peer:

        async def scenario(c: Any) -> None:
            with pytest.raises(error, match=words):
                await c.list_tools()
            # The next call reconnects (and meets the same fault at its request).
            assert await c.ping() == {}

        run(shell, _ws_url(peer), scenario, protocol="legacy")


def test_close_mid_message_names_the_servers_code(shell: Shell) -> None:
    with hostile("close_mid") as peer:

        async def scenario(c: Any) -> Any:
            with pytest.raises(errors.WebSocketClosedError) as caught:
                await c.list_tools()
            return caught.value

        error = run(shell, _ws_url(peer), scenario, protocol="legacy")
        assert error.code == 1011 and error.reason == "bye"


def test_a_100_mb_frame_is_refused_with_bounded_memory(shell: Shell) -> None:
    with hostile("huge") as peer:

        async def scenario(c: Any) -> None:
            with pytest.raises(errors.ResponseTooLargeError):
                await c.list_tools()

        with RSSSampler() as rss:
            run(shell, _ws_url(peer), scenario, protocol="legacy")
        # The default bound is 32 MiB a message; the frame announced 100 MB.
        assert rss.growth < RSS_BOUND, f"RSS grew by {rss.growth / MIB:.0f} MiB"
        # The client closed the connection long before the frame's end: the peer's
        # writes failed (it prints what it managed to send when they do).
        for _ in range(200):
            sent = [line for line in peer.output().splitlines() if line.startswith("SENT ")]
            if sent:
                break
            time.sleep(0.05)
        assert sent and int(sent[0].split()[1]) < 100 * 1024 * 1024


def test_a_deflate_bomb_is_refused_with_bounded_memory(shell: Shell) -> None:
    with hostile("deflate_bomb") as peer:

        async def scenario(c: Any) -> None:
            with pytest.raises(errors.ResponseTooLargeError, match="expanded past"):
                await c.list_tools()

        from mcp_proto.config import websocket_config

        # The inflation bound below the message bound (32 MiB), so it is the one met.
        config = websocket_config(
            _ws_url(peer),
            name="bomb",
            protocol="legacy",
            read_timeout=READ_TIMEOUT,
            max_decompressed_body_bytes=8 * MIB,
        )
        with RSSSampler() as rss:
            shell.run_client(scenario, [config], deadline=DEADLINE)
        # 256 MiB of inflated text against an 8 MiB bound.
        assert rss.growth < RSS_BOUND, f"RSS grew by {rss.growth / MIB:.0f} MiB"


def test_a_deflate_bomb_meets_the_message_bound_by_default(shell: Shell) -> None:
    with hostile("deflate_bomb") as peer:

        async def scenario(c: Any) -> None:
            with pytest.raises(errors.ResponseTooLargeError):
                await c.list_tools()

        with RSSSampler() as rss:
            run(shell, _ws_url(peer), scenario, protocol="legacy")
        assert rss.growth < RSS_BOUND, f"RSS grew by {rss.growth / MIB:.0f} MiB"


def test_a_ping_flood_does_not_stop_the_answer(shell: Shell) -> None:
    with hostile("ping_flood") as peer:

        async def scenario(c: Any) -> list[Any]:
            return list(await c.list_tools())

        assert run(shell, _ws_url(peer), scenario, protocol="legacy") == []


@pytest.mark.parametrize(
    ("mode", "error", "words"),
    [
        ("http200", errors.WebSocketHandshakeError, "HTTP 200"),
        ("no_subprotocol", errors.WebSocketHandshakeError, "subprotocol"),
        ("no_handshake", errors.WebSocketHandshakeError, "did not complete"),
    ],
)
def test_handshake_faults_fail_the_connect(
    shell: Shell, mode: str, error: type[Exception], words: str
) -> None:
    with hostile(mode) as peer:

        async def scenario(c: Any) -> None:
            raise AssertionError("connected")  # pragma: no cover

        with pytest.raises(error, match=words):
            run(shell, _ws_url(peer), scenario, read_timeout=2.0)


def test_connection_refused_is_a_connection_error(shell: Shell) -> None:
    port = http_peers.free_port()

    async def scenario(c: Any) -> None:
        raise AssertionError("connected")  # pragma: no cover

    with pytest.raises(errors.ConnectionError, match="cannot connect"):
        run(shell, f"ws://127.0.0.1:{port}/mcp", scenario, read_timeout=2.0)


# ---------------------------------------------------------------------- the CLI


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_io_sync.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(ROOT),
    )


def test_cli_tools_and_call_over_websocket(sdk1: str) -> None:
    tools = _cli("tools", "-c", sdk1)
    assert tools.returncode == 0, tools.stderr
    assert "summarize" in tools.stdout and "echo" in tools.stdout
    call = _cli("call", "echo", "text=over ws", "--transport", "websocket", "-c", sdk1)
    assert call.returncode == 0, call.stderr
    assert call.stdout.strip() == "over ws"


def test_cli_refuses_an_endpoint_for_websocket() -> None:
    done = _cli("tools", "--endpoint", "/x", "-c", "ws://127.0.0.1:1/mcp")
    assert done.returncode != 0 and "does not apply to WebSocket" in done.stderr
