"""HTTP-2: plain HTTP handles its session as Streamable HTTP does (SESS-1..3), in the
machine. Pure: time is a number.

SESS-1: the ``Mcp-Session-Id`` of the initialize answer is kept (an invalid one is
ignored); SESS-2: it is sent with ``MCP-Protocol-Version`` on every later request;
SESS-3: ``close`` sends ``DELETE`` with it (2025-11-25 Basic § Transports, "Session
Management": a client that no longer needs the session SHOULD send DELETE). Plain HTTP
keeps its differences: ``Accept: application/json`` and no GET stream."""

from __future__ import annotations

import pytest
from _machine_driver import Harness, body_of, connect_http, header, result

from mcp_proto.config import http_config, streamable_http_config
from mcp_proto.connection import CallSucceeded, Closed, CloseTransport, StartExchange

URL = "http://127.0.0.1:9/rpc"


@pytest.mark.parametrize("plain", [True, False], ids=["plain", "streamable"])
def test_the_session_is_sent_on_every_request_and_deleted_at_close(plain: bool) -> None:
    config = http_config(URL) if plain else streamable_http_config(URL)
    h = Harness(config)
    get = connect_http(h, session_id="s-7")
    assert (get is None) == plain  # plain HTTP opens no GET stream
    h.conn.start_call("tools/list", now=0.0)
    (post,) = h.exchanges()
    assert header(post, "Mcp-Session-Id") == "s-7"
    assert header(post, "MCP-Protocol-Version") == "2025-11-25"
    if plain:
        assert header(post, "Accept") == "application/json"
    h.reply_json(post, result(body_of(post)["id"], {"tools": []}))
    assert [type(e) for e in h.take_events()] == [CallSucceeded]
    h.conn.close(1.0)
    frames = h.take_frames()
    deletes = [f for f in frames if isinstance(f, StartExchange) and f.method == "DELETE"]
    assert len(deletes) == 1
    assert deletes[0].url == URL and header(deletes[0], "Mcp-Session-Id") == "s-7"
    assert frames[-1] == CloseTransport(graceful=True)
    h.conn.transport_closed(1.2)
    assert h.take_events() == [Closed()]


@pytest.mark.parametrize("plain", [True, False], ids=["plain", "streamable"])
def test_no_session_id_no_delete(plain: bool) -> None:
    config = http_config(URL) if plain else streamable_http_config(URL)
    h = Harness(config)
    connect_http(h, session_id=None, get_status=405)
    h.conn.close(1.0)
    frames = h.take_frames()
    assert not [f for f in frames if isinstance(f, StartExchange)]


def test_an_invalid_session_id_is_ignored_on_plain_http() -> None:
    h = Harness(http_config(URL))
    connect_http(h, session_id="bad id with spaces")
    h.take_events()
    h.conn.start_call("tools/list", now=0.0)
    (post,) = h.exchanges()
    assert header(post, "Mcp-Session-Id") is None
    h.conn.close(1.0)
    assert not [f for f in h.take_frames() if isinstance(f, StartExchange)]
