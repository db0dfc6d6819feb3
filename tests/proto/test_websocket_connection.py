"""The WebSocket strategy of the connection machine (issue 25), time as a number.

The server end is wsproto's server connection: the machine's ``Write`` frames are the
bytes a socket would carry, and what the server sends is fed back as ``receive_data``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from _machine_driver import ALL_CAPS, Harness
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, CloseConnection, Ping, Request, TextMessage
from wsproto.extensions import PerMessageDeflate

from mcp_proto.config import websocket_config
from mcp_proto.connection import CloseTransport, OpenTransport, Write
from mcp_proto.connection.events import (
    CallFailed,
    CallSucceeded,
    Connected,
    ConnectFailed,
    Disconnected,
)
from mcp_proto.errors import (
    UnauthorizedError,
    WebSocketClosedError,
    WebSocketHandshakeError,
    WebSocketProtocolError,
)

URL = "ws://127.0.0.1:9/mcp"


class WsPeer:
    """The machine plus a wsproto server reading what it writes."""

    def __init__(self, **config: Any) -> None:
        self.h = Harness(websocket_config(URL, **config))
        self.server = WSConnection(ConnectionType.SERVER)
        self.requests: list[Request] = []
        self.closes: list[CloseConnection] = []
        self.pings: list[Ping] = []

    def written(self) -> list[dict[str, Any]]:
        """Messages the machine wrote since the last call (the handshake noted)."""
        self.h.pump()
        out: list[dict[str, Any]] = []
        keep = []
        for frame in self.h.frames:
            if isinstance(frame, Write):
                self.server.receive_data(b"".join(frame.messages))
                for event in self.server.events():
                    if isinstance(event, Request):
                        self.requests.append(event)
                    elif isinstance(event, TextMessage):
                        out.append(json.loads(event.data))
                    elif isinstance(event, CloseConnection):
                        self.closes.append(event)
                    elif isinstance(event, Ping):
                        self.pings.append(event)
            else:
                keep.append(frame)
        self.h.frames = keep
        return out

    def send(self, *messages: bytes) -> None:
        data = b"".join(self.server.send(TextMessage(data=m.decode())) for m in messages)
        self.h.conn.receive_data(data, self.h.now)

    def open(self) -> None:
        h = self.h
        h.conn.connect(h.now)
        assert h.take_frames() == [OpenTransport()]
        h.conn.transport_opened(h.now)
        assert self.written() == []
        assert len(self.requests) == 1

    def accept(self, deflate: bool = True) -> None:
        extensions = [PerMessageDeflate()] if deflate else []
        data = self.server.send(AcceptConnection(subprotocol="mcp", extensions=extensions))
        self.h.conn.receive_data(data, self.h.now)

    def connect(self) -> None:
        self.open()
        self.accept()
        (init,) = self.written()
        assert init["method"] == "initialize"
        self.send(_init_result(init["id"]))
        assert [m["method"] for m in self.written()] == ["notifications/initialized"]
        assert [type(e) for e in self.h.take_events()] == [Connected]


def _init_result(rid: Any) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": ALL_CAPS,
                "serverInfo": {"name": "ws", "version": "1"},
            },
        }
    ).encode()


def _result(rid: Any, value: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": value}).encode()


def test_handshake_then_a_call_and_its_answer() -> None:
    p = WsPeer(headers={"Authorization": "Bearer s3cret"})
    p.connect()
    (req,) = p.requests
    assert req.target == "/mcp" and req.subprotocols == ["mcp"]
    assert dict(req.extra_headers)[b"authorization"] == b"Bearer s3cret"
    cid = p.h.conn.start_call("tools/list", now=p.h.now)
    (msg,) = p.written()
    assert msg["method"] == "tools/list"
    p.send(_result(msg["id"], {"tools": []}))
    assert p.h.take_events() == [CallSucceeded(cid, "tools/list", {"tools": []})]


def test_several_calls_and_server_messages_in_one_read() -> None:
    p = WsPeer()
    p.connect()
    ids = [p.h.conn.start_call("ping", now=p.h.now) for _ in range(3)]
    msgs = p.written()
    assert len(msgs) == 3
    p.send(*[_result(m["id"], {}) for m in reversed(msgs)])
    got = {e.call_id for e in p.h.take_events(CallSucceeded)}
    assert got == set(ids)


def test_the_probe_era_on_websocket_is_decided_as_on_stdio() -> None:
    h = Harness(websocket_config(URL), probe=True)
    p = WsPeer()
    p.h = h
    p.open()
    p.accept()
    (probe,) = p.written()
    assert probe["method"] == "server/discover"
    error = {"jsonrpc": "2.0", "id": probe["id"], "error": {"code": -32601, "message": "nope"}}
    p.send(json.dumps(error).encode())
    (init,) = p.written()
    assert init["method"] == "initialize"


def test_a_2026_07_28_server_over_websocket() -> None:
    """Both eras where the peer speaks them: a server answering ``server/discover``
    is spoken to in 2026-07-28 (``_meta`` on each request, no headers: HDR-7)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).with_name("modern")))
    from _modern_wire import assert_valid_request

    p = WsPeer()
    p.h = Harness(websocket_config(URL), probe=True)
    p.open()
    p.accept()
    (probe,) = p.written()
    assert probe["method"] == "server/discover"
    body = {
        "supportedVersions": ["2026-07-28"],
        "capabilities": ALL_CAPS,
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "2"}},
    }
    p.send(_result(probe["id"], body))
    assert [type(e) for e in p.h.take_events()] == [Connected]
    assert p.h.conn.era == "modern"
    cid = p.h.conn.start_call("tools/list", now=p.h.now)
    (msg,) = p.written()
    assert_valid_request(msg)
    assert msg["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    p.send(_result(msg["id"], {"tools": [], "resultType": "complete"}))
    (done,) = p.h.take_events(CallSucceeded)
    assert done.call_id == cid


def test_a_server_that_never_answers_the_upgrade_fails_the_connect_at_read_timeout() -> None:
    p = WsPeer(read_timeout=5.0)
    p.open()
    assert p.h.conn.next_deadline() == 5.0
    p.h.advance(4.9)
    assert p.h.take_events() == []
    p.h.advance(5.0)
    (failed,) = p.h.take_events(ConnectFailed)
    assert isinstance(failed.error, WebSocketHandshakeError)
    assert "did not complete the WebSocket handshake" in str(failed.error)
    assert CloseTransport(graceful=False) in p.h.take_frames()


def test_http_200_to_the_upgrade_fails_the_connect() -> None:
    p = WsPeer()
    p.open()
    body = b'{"jsonrpc":"2.0"}'
    p.h.conn.receive_data(
        b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body), p.h.now
    )
    (failed,) = p.h.take_events(ConnectFailed)
    assert isinstance(failed.error, WebSocketHandshakeError)
    assert failed.error.http_status == 200


def test_401_to_the_upgrade_is_unauthorized() -> None:
    p = WsPeer()
    p.open()
    p.h.conn.receive_data(b"HTTP/1.1 401 No\r\nContent-Length: 0\r\n\r\n", p.h.now)
    (failed,) = p.h.take_events(ConnectFailed)
    assert isinstance(failed.error, UnauthorizedError) and failed.error.http_status == 401


def test_a_binary_frame_loses_the_connection_and_fails_the_call_then_reconnects() -> None:
    p = WsPeer()
    p.connect()
    cid = p.h.conn.start_call("tools/list", now=p.h.now)
    p.written()
    p.h.conn.receive_data(b"\x82\x01x", p.h.now)
    events = p.h.take_events()
    assert [type(e) for e in events] == [Disconnected, CallFailed]
    assert isinstance(events[1].error, WebSocketProtocolError) and events[1].call_id == cid
    frames = p.h.take_frames()
    # The Close (1003) goes out before the transport is closed.
    assert isinstance(frames[0], Write) and frames[-1] == CloseTransport(graceful=False)
    p.h.frames = frames[:-1]
    p.written()
    assert [c.code for c in p.closes] == [1003]
    # The next call opens a new connection.
    p.h.conn.start_call("ping", now=p.h.now)
    assert OpenTransport() in p.h.take_frames()


def test_the_servers_close_is_answered_and_the_call_fails_with_its_code() -> None:
    p = WsPeer()
    p.connect()
    p.h.conn.start_call("tools/list", now=p.h.now)
    p.written()
    data = p.server.send(CloseConnection(code=1001, reason="restart"))
    p.h.conn.receive_data(data, p.h.now)
    (failed,) = p.h.take_events(CallFailed)
    assert isinstance(failed.error, WebSocketClosedError) and failed.error.code == 1001
    p.h.frames = [f for f in p.h.take_frames() if isinstance(f, Write)]
    p.written()


def test_messages_before_the_end_are_delivered() -> None:
    p = WsPeer()
    p.connect()
    cid = p.h.conn.start_call("ping", now=p.h.now)
    (msg,) = p.written()
    data = p.server.send(TextMessage(data=_result(msg["id"], {}).decode()))
    p.h.conn.receive_data(data + b"\x82\x00", p.h.now)
    events = p.h.take_events()
    assert events[0] == CallSucceeded(cid, "ping", {})
    assert isinstance(events[1], Disconnected)


def test_eof_loses_the_connection() -> None:
    p = WsPeer()
    p.connect()
    p.h.conn.receive_eof(p.h.now)
    (lost,) = p.h.take_events(Disconnected)
    assert isinstance(lost.error, WebSocketClosedError) and lost.error.code == 1006


def test_close_sends_a_close_frame_then_closes_the_transport() -> None:
    p = WsPeer()
    p.connect()
    p.h.conn.close(p.h.now)
    frames = p.h.take_frames()
    assert frames[-1] == CloseTransport(graceful=True)
    p.h.frames = frames[:-1]
    p.written()
    assert [c.code for c in p.closes] == [1000]


def test_a_message_over_max_line_size_is_refused() -> None:
    p = WsPeer(max_line_size=1000)
    p.connect()
    p.h.conn.start_call("ping", now=p.h.now)
    p.written()
    p.send(b'{"pad":"' + b"x" * 2000 + b'"}')
    (failed,) = p.h.take_events(CallFailed)
    assert "exceeded 1000" in str(failed.error)


@pytest.mark.parametrize("url", ["http://h/mcp", "ws://", "wss://h:0x/"])
def test_websocket_config_refuses_bad_urls(url: str) -> None:
    with pytest.raises(ValueError):
        websocket_config(url)


def test_keepalive_pings_while_the_server_answers() -> None:
    p = WsPeer(ping=10.0)
    p.connect()
    assert p.h.conn.next_deadline() == 10.0
    p.h.advance(10.0)
    p.written()
    assert len(p.pings) == 1
    p.h.conn.receive_data(p.server.send(p.pings[0].response()), p.h.now)
    assert p.h.conn.next_deadline() == 20.0
    p.h.advance(20.0)
    p.written()
    assert len(p.pings) == 2
    assert p.h.take_events() == []


def test_a_pong_that_never_comes_loses_the_connection() -> None:
    p = WsPeer(ping=10.0)
    p.connect()
    p.h.advance(10.0)
    p.written()
    assert len(p.pings) == 1
    p.h.advance(34.9)
    assert p.h.take_events() == []
    p.h.advance(35.0)
    (lost,) = p.h.take_events(Disconnected)
    assert "did not answer a WebSocket Ping within 25 s" in str(lost.error)


def test_no_keepalive_by_default() -> None:
    p = WsPeer()
    p.connect()
    assert p.h.conn.next_deadline() is None


def test_a_header_http_cannot_carry_fails_the_connect_naming_it() -> None:
    p = WsPeer(headers={"X Bad": "v"})
    p.h.conn.connect(p.h.now)
    p.h.take_frames()
    p.h.conn.transport_opened(p.h.now)
    (failed,) = p.h.take_events(ConnectFailed)
    assert "X Bad" in str(failed.error)
    assert p.h.take_frames() == [CloseTransport(graceful=False)]


def test_a_header_value_outside_latin_1_is_sent_as_utf8() -> None:
    p = WsPeer(headers={"X-Name": "caf\u00e9 \u20ac"})
    p.open()
    (req,) = p.requests
    assert dict(req.extra_headers)[b"x-name"] == "caf\u00e9 \u20ac".encode()
