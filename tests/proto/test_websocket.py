"""The WebSocket client codec (mcp_proto.websocket): handshake, messages, limits, faults.

The peer is wsproto's own server connection (real library bytes) or raw frames built
here for what no honest server sends.
"""

from __future__ import annotations

import json
import zlib

import pytest
from _ws_peer import Pair, announce, raw_frame
from wsproto.events import CloseConnection, Ping, Pong, TextMessage

from mcp_proto.errors import (
    ResponseTooLargeError,
    UnauthorizedError,
    WebSocketClosedError,
    WebSocketHandshakeError,
    WebSocketProtocolError,
)
from mcp_proto.websocket import (
    WebSocketClient,
    WsEnded,
    WsMessage,
    WsOpened,
    WsPong,
    parse_ws_url,
)

TEXT, BINARY, CLOSE, PING, CONT = 0x1, 0x2, 0x8, 0x9, 0x0


def _ended(events: list[object]) -> WsEnded:
    assert events and isinstance(events[-1], WsEnded), events
    return events[-1]


def _http_answer(status: int, headers: str = "", body: bytes = b"") -> bytes:
    return f"HTTP/1.1 {status} X\r\n{headers}Content-Length: {len(body)}\r\n\r\n".encode() + body


# ------------------------------------------------------------------ handshake


def test_the_request_offers_mcp_deflate_and_the_configured_headers() -> None:
    pair = Pair(headers=(("Authorization", "Bearer t0k"), ("X-Trace", "1"), ("Upgrade", "no")))
    req = pair.request
    assert req.target == "/mcp" and req.host == "127.0.0.1:8765"
    assert req.subprotocols == ["mcp"]
    assert any(str(e).startswith("permessage-deflate") for e in req.extensions)
    extra = dict(req.extra_headers)
    assert extra[b"authorization"] == b"Bearer t0k" and extra[b"x-trace"] == b"1"
    # A configured header the handshake sets itself is dropped, not sent twice.
    assert extra[b"upgrade"] == b"websocket"


def test_accepted_with_mcp_opens() -> None:
    pair = Pair()
    assert pair.accept() == [WsOpened("mcp", ("permessage-deflate",))]
    assert pair.client.opened


def test_accepted_without_deflate() -> None:
    pair = Pair(deflate=False)
    assert pair.accept() == [WsOpened("mcp", ())]


def test_no_subprotocol_selected_is_a_handshake_error_and_closes() -> None:
    pair = Pair()
    error = _ended(pair.accept(subprotocol=None)).error
    assert isinstance(error, WebSocketHandshakeError)
    assert "no subprotocol" in str(error) and "'mcp'" in str(error)
    (close,) = pair.to_server()
    assert isinstance(close, CloseConnection) and close.code == 1002


def test_an_unoffered_subprotocol_is_a_handshake_error() -> None:
    pair = Pair()
    answer = pair.server.send  # wsproto's server refuses to select what was not offered
    del answer
    head = (
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Accept: {_accept_key(pair)}\r\nSec-WebSocket-Protocol: graphql-ws\r\n\r\n"
    )
    error = _ended(pair.client.receive_data(head.encode())).error
    assert isinstance(error, WebSocketHandshakeError) and "graphql-ws" in str(error)


def _accept_key(pair: Pair) -> str:
    import base64
    import hashlib

    key = dict(pair.request.extra_headers)[b"sec-websocket-key"]
    digest = hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest()
    return base64.b64encode(digest).decode()


def test_a_bad_accept_key_is_a_handshake_error() -> None:
    pair = Pair()
    head = (
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Accept: AAAA\r\nSec-WebSocket-Protocol: mcp\r\n\r\n"
    )
    assert isinstance(
        _ended(pair.client.receive_data(head.encode())).error, WebSocketHandshakeError
    )


def test_http_200_to_the_upgrade_names_the_status_and_the_likely_mistake() -> None:
    pair = Pair()
    events = pair.client.receive_data(_http_answer(200, "Content-Type: application/json\r\n"))
    error = _ended(events).error
    assert isinstance(error, WebSocketHandshakeError) and error.http_status == 200
    assert "HTTP 200" in str(error) and "http://" in str(error)


def test_404_to_the_upgrade() -> None:
    error = _ended(Pair().client.receive_data(_http_answer(404))).error
    assert isinstance(error, WebSocketHandshakeError) and error.http_status == 404


def test_401_to_the_upgrade_is_unauthorized_with_the_challenge() -> None:
    challenge = 'WWW-Authenticate: Bearer resource_metadata="https://h/.well-known/x"\r\n'
    error = _ended(Pair().client.receive_data(_http_answer(401, challenge))).error
    assert isinstance(error, UnauthorizedError) and error.http_status == 401
    assert error.resource_metadata == "https://h/.well-known/x"


def test_close_during_the_handshake() -> None:
    pair = Pair()
    assert pair.client.receive_data(b"HTTP/1.1 101 Swi") == []
    error = _ended(pair.client.receive_data(b"")).error
    assert isinstance(error, WebSocketHandshakeError)
    assert "during the WebSocket handshake" in str(error)


def test_garbage_instead_of_http() -> None:
    error = _ended(Pair().client.receive_data(b"\x00\x01garbage\r\n\r\n")).error
    assert isinstance(error, WebSocketHandshakeError)


def test_an_oversized_answer_head_is_refused_not_buffered() -> None:
    pair = Pair()
    events: list[object] = pair.client.receive_data(b"HTTP/1.1 101 OK\r\n")
    for _ in range(100):
        events += pair.client.receive_data(b"X-Pad: " + b"a" * 1000 + b"\r\n")
        if events:
            break
    assert isinstance(_ended(events).error, WebSocketHandshakeError)


# ------------------------------------------------------------------ messages


def test_a_message_whole_fragmented_and_byte_by_byte() -> None:
    body = '{"jsonrpc":"2.0","id":1,"result":{"t":"h\u00e9llo \u2603"}}'
    wire_whole = raw_frame(TEXT, body.encode())
    raw = body.encode()
    wire_frag = (
        raw_frame(TEXT, raw[:10], fin=False)
        + raw_frame(CONT, raw[10:21], fin=False)  # splits a multi-byte character
        + raw_frame(CONT, raw[21:])
    )
    for wire in (wire_whole, wire_frag):
        for step in (len(wire), 1, 7):
            pair = Pair(deflate=False)
            pair.accept()
            got: list[object] = []
            for i in range(0, len(wire), step):
                got += pair.client.receive_data(wire[i : i + step])
            assert got == [WsMessage(body)]
            assert not pair.client.in_message


def test_messages_after_the_101_in_the_same_read() -> None:
    pair = Pair(deflate=False)
    from wsproto.events import AcceptConnection

    data = pair.server.send(AcceptConnection(subprotocol="mcp"))
    data += pair.server.send(TextMessage(data="[1]")) + pair.server.send(TextMessage(data="[2]"))
    assert pair.client.receive_data(data) == [
        WsOpened("mcp", ()),
        WsMessage("[1]"),
        WsMessage("[2]"),
    ]


def test_deflated_messages_from_a_real_peer() -> None:
    pair = Pair()
    pair.accept()
    doc = json.dumps({"result": {"content": [{"type": "text", "text": "x" * 100_000}]}})
    wire = pair.server.send(TextMessage(data=doc))
    assert len(wire) < 2000  # it was compressed
    assert pair.client.receive_data(wire) == [WsMessage(doc)]
    again = pair.server.send(TextMessage(data=doc))  # context takeover: smaller still
    assert pair.client.receive_data(again) == [WsMessage(doc)]


def test_sending_is_one_text_frame_per_message_and_the_server_reads_them() -> None:
    pair = Pair()
    pair.accept()
    data = pair.client.send_many([b'{"a":1}', b'{"b":"\xc3\xa9"}'])
    pair.server.receive_data(data)
    texts = [e.data for e in pair.server.events() if isinstance(e, TextMessage)]
    assert texts == ['{"a":1}', '{"b":"\u00e9"}']


# ------------------------------------------------------------------ limits


def test_a_message_over_the_bound_is_refused_with_1009() -> None:
    pair = Pair(deflate=False, max_message=100)
    pair.accept()
    assert pair.client.receive_data(raw_frame(TEXT, b"x" * 100)) == [WsMessage("x" * 100)]
    error = _ended(pair.client.receive_data(raw_frame(TEXT, b"x" * 101))).error
    assert isinstance(error, ResponseTooLargeError)
    (close,) = pair.to_server()
    assert isinstance(close, CloseConnection) and close.code == 1009


def test_fragments_count_toward_the_bound_before_the_message_ends() -> None:
    pair = Pair(deflate=False, max_message=100)
    pair.accept()
    events: list[object] = []
    events += pair.client.receive_data(raw_frame(TEXT, b"x" * 60, fin=False))
    assert events == [] and pair.client.in_message
    events += pair.client.receive_data(raw_frame(CONT, b"x" * 60, fin=False))
    assert isinstance(_ended(events).error, ResponseTooLargeError)
    assert not pair.client.in_message  # nothing kept


def test_a_100_mb_frame_announced_is_refused_at_the_bound_without_buffering_it() -> None:
    pair = Pair(deflate=False, max_message=1000)
    pair.accept()
    events = pair.client.receive_data(announce(TEXT, 100 * 2**20))
    assert events == []
    for _ in range(10):
        events += pair.client.receive_data(b"y" * 300)
        if events:
            break
    assert isinstance(_ended(events).error, ResponseTooLargeError)


def test_a_deflate_bomb_stops_at_the_decompression_bound() -> None:
    pair = Pair(max_message=1 << 30, max_decompressed=1 << 20)
    pair.accept()
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    payload = comp.compress(b"a" * (64 << 20)) + comp.flush(zlib.Z_SYNC_FLUSH)
    payload = payload[:-4]  # RFC 7692 § 7.2.1: the empty block's tail is removed
    assert len(payload) < 100_000
    events = pair.client.receive_data(raw_frame(TEXT, payload, rsv1=True))
    error = _ended(events).error
    assert isinstance(error, ResponseTooLargeError) and "1048576" in str(error)
    (close,) = pair.to_server()
    assert isinstance(close, CloseConnection) and close.code == 1009


def test_the_decompression_budget_is_per_message() -> None:
    pair = Pair(max_message=1 << 30, max_decompressed=50_000)
    pair.accept()
    for _ in range(5):  # 5 x 40 kB through one compression context
        doc = "z" * 40_000
        assert pair.client.receive_data(pair.server.send(TextMessage(data=doc))) == [WsMessage(doc)]


# ------------------------------------------------------------------ control frames


def test_ping_is_answered_with_pong() -> None:
    pair = Pair()
    pair.accept()
    assert pair.client.receive_data(pair.server.send(Ping(payload=b"hb"))) == []
    assert pair.to_server() == [Pong(payload=b"hb")]


def test_our_ping_and_the_servers_pong() -> None:
    pair = Pair()
    assert pair.client.ping(b"x") == b""  # not open yet
    pair.accept()
    pair.server.receive_data(pair.client.ping(b"ka"))
    (ping,) = list(pair.server.events())
    assert isinstance(ping, Ping)
    assert pair.client.receive_data(pair.server.send(ping.response())) == [WsPong(b"ka")]


def test_a_ping_flood_gets_one_pong_per_read() -> None:
    pair = Pair(deflate=False)
    pair.accept()
    flood = b"".join(raw_frame(PING, b"%d" % i) for i in range(5000))
    assert pair.client.receive_data(flood) == []
    out = pair.client.data_to_send()
    assert len(out) < 20  # one Pong frame (masked: 6 + payload bytes)
    pair.server.receive_data(out)
    assert list(pair.server.events()) == [Pong(payload=b"4999")]


def test_pings_between_fragments_do_not_break_the_message() -> None:
    pair = Pair(deflate=False)
    pair.accept()
    wire = raw_frame(TEXT, b'{"a"', fin=False) + raw_frame(PING, b"") + raw_frame(CONT, b":1}")
    assert pair.client.receive_data(wire) == [WsMessage('{"a":1}')]


# ------------------------------------------------------------------ faults


def test_a_binary_frame_ends_with_1003() -> None:
    pair = Pair(deflate=False)
    pair.accept()
    error = _ended(pair.client.receive_data(raw_frame(BINARY, b'{"a":1}'))).error
    assert isinstance(error, WebSocketProtocolError) and error.code == 1003
    assert "binary" in str(error)
    (close,) = pair.to_server()
    assert isinstance(close, CloseConnection) and close.code == 1003


def test_invalid_utf8_ends_with_1007() -> None:
    pair = Pair(deflate=False)
    pair.accept()
    events = pair.client.receive_data(raw_frame(TEXT, b'{"a":"\xff\xfe"}'))
    error = _ended(events).error
    assert isinstance(error, WebSocketProtocolError) and error.code == 1007
    assert "UTF-8" in str(error)
    (close,) = pair.to_server()
    assert isinstance(close, CloseConnection) and close.code == 1007


def test_a_malformed_frame_ends_with_1002() -> None:
    pair = Pair(deflate=False)
    pair.accept()
    # A masked frame from the server (RFC 6455 § 5.1: the server MUST NOT mask).
    error = _ended(pair.client.receive_data(b"\x81\x81abcdX")).error
    assert isinstance(error, WebSocketProtocolError) and error.code == 1002


def test_the_messages_before_a_fault_are_delivered_first() -> None:
    pair = Pair(deflate=False)
    pair.accept()
    events = pair.client.receive_data(raw_frame(TEXT, b"[1]") + raw_frame(BINARY, b"x"))
    assert events[0] == WsMessage("[1]") and isinstance(_ended(events).error, Exception)


def test_the_servers_close_is_answered_and_named() -> None:
    pair = Pair()
    pair.accept()
    data = pair.server.send(CloseConnection(code=1011, reason="boom\nforged"))
    error = _ended(pair.client.receive_data(data)).error
    assert isinstance(error, WebSocketClosedError)
    assert error.code == 1011 and error.reason == "boom\nforged"
    assert "1011 internal error" in str(error) and "\n" not in str(error)
    (answer,) = pair.to_server()
    assert isinstance(answer, CloseConnection) and answer.code == 1011


def test_a_close_mid_message_says_so() -> None:
    pair = Pair(deflate=False)
    pair.accept()
    pair.client.receive_data(raw_frame(TEXT, b'{"a', fin=False))
    error = _ended(pair.client.receive_data(raw_frame(CLOSE, b"\x03\xe8"))).error
    assert isinstance(error, WebSocketClosedError) and "middle of a message" in str(error)


def test_eof_without_a_close_frame_is_1006() -> None:
    pair = Pair(deflate=False)
    pair.accept()
    pair.client.receive_data(raw_frame(TEXT, b'{"a', fin=False))
    error = _ended(pair.client.receive_data(b"")).error
    assert isinstance(error, WebSocketClosedError) and error.code == 1006
    assert "middle of a message" in str(error)


def test_nothing_after_the_end() -> None:
    pair = Pair(deflate=False)
    pair.accept()
    pair.client.receive_data(raw_frame(BINARY, b""))
    assert pair.client.receive_data(raw_frame(TEXT, b"[1]")) == []
    assert pair.client.receive_data(b"") == []


# ------------------------------------------------------------------ closing


def test_our_close_then_the_servers_answer() -> None:
    pair = Pair()
    pair.accept()
    data = pair.client.close(1000)
    pair.server.receive_data(data)
    (close,) = list(pair.server.events())
    assert isinstance(close, CloseConnection) and close.code == 1000
    events = pair.client.receive_data(pair.server.send(close.response()))
    assert isinstance(_ended(events).error, WebSocketClosedError)
    assert pair.client.close() == b""  # once


def test_close_before_open_sends_nothing() -> None:
    assert Pair().client.close() == b""


# ------------------------------------------------------------------ URLs


@pytest.mark.parametrize(
    ("url", "parsed"),
    [
        ("ws://h/mcp", (False, "h", 80, "h", "/mcp")),
        ("wss://h:8443/a?b=1", (True, "h", 8443, "h:8443", "/a?b=1")),
        ("WS://[::1]:9/", (False, "::1", 9, "[::1]:9", "/")),
        ("ws://h", (False, "h", 80, "h", "/")),
    ],
)
def test_parse_ws_url(url: str, parsed: tuple[object, ...]) -> None:
    assert parse_ws_url(url) == parsed


@pytest.mark.parametrize("url", ["http://h/mcp", "ws:///mcp", "ws://h:99999/"])
def test_parse_ws_url_refuses(url: str) -> None:
    with pytest.raises(ValueError):
        parse_ws_url(url)


def test_constructor_refuses_a_bad_url() -> None:
    with pytest.raises(ValueError):
        WebSocketClient("https://h/mcp", max_message=1, max_decompressed=1)
