"""Fuzz target: the WebSocket client codec (``mcp_proto.websocket.WebSocketClient``).

Feeds: a server's bytes after a valid opening handshake (with or without
``permessage-deflate``). The first byte picks the bounds and deflate, the second how
the rest is chunked; the rest is the frame stream.

Contract: ``receive_data`` never raises; messages come only before the one
``WsEnded``, which is last; no message exceeds ``max_message``; a compressed message
never inflates past the decompression bound (plus nothing: the overflow is refused);
the events (messages and the kind of ending) do not depend on chunking; what the client
writes back stays bounded by one Pong and one Close per read.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from _fuzzlib import Reader, Target
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, Request
from wsproto.extensions import PerMessageDeflate

from mcp_proto.websocket import WebSocketClient, WsEnded, WsMessage, WsOpened, WsPong

BOUNDS = ((16, 64), (64, 16), (1 << 16, 1 << 16), (1 << 20, 1 << 10))

# A fixed server answer cannot be used: the client's key is random; the handshake is
# made by a wsproto server each time (cheap next to the frames).


def _opened(max_message: int, max_decompressed: int, deflate: bool) -> WebSocketClient:
    client = WebSocketClient(
        "ws://127.0.0.1:1/mcp", max_message=max_message, max_decompressed=max_decompressed
    )
    server = WSConnection(ConnectionType.SERVER)
    server.receive_data(client.start())
    assert any(isinstance(e, Request) for e in server.events())
    extensions = [PerMessageDeflate()] if deflate else []
    answer = server.send(AcceptConnection(subprotocol="mcp", extensions=extensions))
    assert [type(e) for e in client.receive_data(answer)] == [WsOpened]
    return client


def _run(chunks: list[bytes], bounds: tuple[int, int], deflate: bool) -> list[Any]:
    client = _opened(*bounds, deflate)
    out: list[Any] = []
    for chunk in [*chunks, b""]:
        for event in client.receive_data(chunk):
            assert not out or out[-1] != "end", "an event after WsEnded"
            if isinstance(event, WsMessage):
                assert len(event.text) <= bounds[0], "a message past max_message"
                out.append(event.text)
            elif isinstance(event, WsPong):
                out.append(("pong", event.payload))
            else:
                assert isinstance(event, WsEnded), event
                out.append(type(event.error).__name__)
                out.append("end")
        written = client.data_to_send()
        assert len(written) <= 2 * (6 + 125 + 8), "more than a Pong and a Close per read"
        if out and out[-1] == "end":
            break
    assert out and out[-1] == "end", "the end of input did not end the connection"
    return out


def check(data: bytes) -> None:
    reader = Reader(data)
    head = reader.byte()
    bounds, deflate = BOUNDS[head % len(BOUNDS)], bool(head & 0x80)
    step = 1 + reader.below(32)
    stream = reader.rest()
    whole = _run([stream] if stream else [], bounds, deflate)
    pieces = [stream[i : i + step] for i in range(0, len(stream), step)]
    assert _run(pieces, bounds, deflate) == whole, "chunking changed the events"


TARGET = Target(
    name="websocket",
    description="server bytes after the handshake -> WebSocketClient -> messages / end",
    check=check,
    seeds=(
        b"\x02\x03" + b"\x81\x07[1,2,3]" + b"\x89\x02hi" + b"\x88\x02\x03\xe8",
        b"\x02\x01" + b"\x01\x02[1" + b"\x89\x00" + b"\x80\x01]",
        b"\x00\x05" + b"\x82\x01x",
        b"\x02\x02" + b"\x81\x02\xff\xfe",
        b"\x82\x04" + b"\xc1\x07" + b"\xaaV\xcaM-\x06\x00",  # deflated text (rsv1)
        b"\x02\x00" + b"\x81\x7f\x00\x00\x00\x00\x06\x40\x00\x00" + b"x" * 40,
        b"\x02\x04" + b"\x8a\x02ka" + b"\x81\x02[]",  # an unsolicited Pong
    ),
    max_len=2048,
)

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from run import main

    main(["websocket"])
