"""HTTP-6 and CONN-17 in both shells: a ``0.0.0.0`` URL warns once whichever way the
server was configured (``connect()``, ``Client(...)``/``create_client``, a builder with
or without ``logger=``), and a builder's ``logger=`` is that server's logger.

The server: the official SDK 1.x WebSocket server (tests/servers/ws_sdk1_server.py),
listening on 127.0.0.1 and reached as ``ws://0.0.0.0:PORT/mcp`` (Linux connects an
unspecified destination address to the host itself), so the warning is about a URL that
works, as the row's users meet it.
"""

# ruff: noqa: F811 (the SDK server fixture comes from test_websocket)
from __future__ import annotations

import logging
from typing import Any

from mcp_proto.config import websocket_config

from .conftest import Shell, make_logger, text_of
from .test_websocket import READ_TIMEOUT, run, sdk1  # noqa: F401 (fixture)

DEADLINE = 60.0


def _unspecified(url: str) -> str:
    return url.replace("127.0.0.1", "0.0.0.0")


def _0000(messages: list[str]) -> list[str]:
    return [m for m in messages if "uses 0.0.0.0" in m]


async def echo(c: Any) -> str:
    return text_of(await c.call_tool("echo", {"text": "any"}))


def test_connect_warns_once(shell: Shell, sdk1: str) -> None:
    url = _unspecified(sdk1)
    assert run(shell, url, echo) == "any"
    warned = _0000(shell.log.messages(logging.WARNING))
    assert len(warned) == 1 and url in warned[0] and "127.0.0.1" in warned[0]


def test_a_client_warns_once_for_a_builders_config(shell: Shell, sdk1: str) -> None:
    config = websocket_config(_unspecified(sdk1), name="ws", read_timeout=READ_TIMEOUT)
    assert shell.run_client(echo, [config], deadline=DEADLINE) == "any"
    warned = _0000(shell.log.messages(logging.WARNING))
    assert len(warned) == 1 and warned[0].startswith("server ws: ")


def test_a_client_warns_once_for_a_dict_config(shell: Shell, sdk1: str) -> None:
    config = {"type": "websocket", "url": _unspecified(sdk1), "name": "d"}
    assert shell.run_client(echo, [config], deadline=DEADLINE) == "any"
    assert len(_0000(shell.log.messages(logging.WARNING))) == 1


def test_a_builders_logger_gets_the_warning_and_the_servers_messages(
    shell: Shell, sdk1: str
) -> None:
    own, own_log = make_logger()
    config = websocket_config(_unspecified(sdk1), name="own", read_timeout=READ_TIMEOUT, logger=own)
    assert len(_0000(own_log.messages(logging.WARNING))) == 1  # at once, by the builder
    assert shell.run_client(echo, [config], deadline=DEADLINE) == "any"
    # Once in all: the client does not repeat it, to either logger.
    assert len(_0000(own_log.messages(logging.WARNING))) == 1
    assert _0000(shell.log.messages()) == []
    # The server object's own messages (its calls, at debug) go to the server's logger.
    assert any(m.startswith("-> own tools/call") for m in own_log.messages())
    assert not any(m.startswith("-> own ") for m in shell.log.messages())


def test_an_ordinary_url_warns_of_nothing(shell: Shell, sdk1: str) -> None:
    assert run(shell, sdk1, echo) == "any"
    assert _0000(shell.log.messages()) == []
