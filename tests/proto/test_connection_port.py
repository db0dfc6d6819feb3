"""The connection's helpers see it through narrow ports only (issue 22 item 3).

``Connection`` is one owner class (``mcp_proto/connection/_machine.py``); its helpers
(the transport strategies, the era steps, the subscriptions' manager) hold a port
(``TransportPort``, ``EraPort``, ``ListenPort``), never the connection, and touch none of
its private members. These tests keep it that way.
"""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest
from _listen_support import connect_modern_http
from _machine_driver import Harness

from mcp_proto.config import http_config, sse_config, stdio_config, streamable_http_config
from mcp_proto.connection import Connection
from mcp_proto.versions import ERAS, Era

CONNECTION = Path(__file__).resolve().parents[2] / "mcp_proto" / "connection"
HELPERS = (
    "_calls.py",
    "_era.py",
    "_exchange.py",
    "_http.py",
    "_http_streams.py",
    "_legacy_sse.py",
    "_listen.py",
    "_redirects.py",
    "_stdio.py",
    "_transport.py",
)


@pytest.mark.parametrize("name", HELPERS)
def test_a_helper_never_reaches_into_the_connection(name: str) -> None:
    source = (CONNECTION / name).read_text()
    assert not re.findall(r"\b(?:port|conn)\._[A-Za-z]", source)
    assert "_machine import" not in source  # not even for a type


def test_the_connection_is_one_module() -> None:
    assert not (CONNECTION / "_core.py").exists()
    assert not (CONNECTION / "_lifecycle.py").exists()
    assert Connection.__mro__ == (Connection, object)


@pytest.mark.parametrize(
    "config",
    [
        stdio_config(["srv"]),
        http_config("http://127.0.0.1:9/mcp"),
        streamable_http_config("http://127.0.0.1:9/mcp"),
        sse_config("http://127.0.0.1:9/sse"),
    ],
    ids=["stdio", "http", "streamable_http", "sse"],
)
def test_the_helpers_hold_a_port_not_the_connection(config: typing.Any) -> None:
    conn = Harness(config).conn
    conn.start_listen({"toolsListChanged": True}, now=0.0)  # creates the listen manager
    helpers = (conn._transport, conn._era, conn._listen)
    for helper in helpers:
        port = helper.port  # type: ignore[union-attr]
        assert port is not conn and not isinstance(port, Connection)
        assert not hasattr(port, "start_call")  # the port is not the public surface


def test_the_era_is_a_literal_of_the_seeds_names() -> None:
    assert typing.get_args(Era) == ("modern", "legacy") == ERAS
    h = Harness(streamable_http_config("http://127.0.0.1:9/mcp"), probe=True)
    assert h.conn.era is None  # undecided until the probe is answered
    connect_modern_http(h)
    assert h.conn.era in ERAS and h.conn.era == "modern"
    assert Harness(stdio_config(["srv"], protocol="legacy")).conn.era == "legacy"
