"""A WebSocket server end for the pure tests: wsproto's own server connection (real
library bytes) and raw frames for what no library would send."""

from __future__ import annotations

import struct

from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, Request
from wsproto.extensions import PerMessageDeflate

from mcp_proto.websocket import WebSocketClient, WsOutput

URL = "ws://127.0.0.1:8765/mcp"


def raw_frame(opcode: int, payload: bytes, *, fin: bool = True, rsv1: bool = False) -> bytes:
    """One unmasked frame as a server writes it (RFC 6455 § 5.2)."""
    head = bytes([(0x80 if fin else 0) | (0x40 if rsv1 else 0) | opcode])
    n = len(payload)
    if n < 126:
        head += bytes([n])
    elif n < 1 << 16:
        head += bytes([126]) + struct.pack("!H", n)
    else:
        head += bytes([127]) + struct.pack("!Q", n)
    return head + payload


def announce(opcode: int, length: int) -> bytes:
    """The header of a frame of ``length`` bytes, without its payload."""
    return bytes([0x80 | opcode, 127]) + struct.pack("!Q", length)


class Pair:
    """A client and a wsproto server over a fake link."""

    def __init__(
        self,
        *,
        max_message: int = 1 << 20,
        max_decompressed: int = 1 << 20,
        deflate: bool = True,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.client = WebSocketClient(
            URL, headers, max_message=max_message, max_decompressed=max_decompressed
        )
        self.server = WSConnection(ConnectionType.SERVER)
        self.request_bytes = self.client.start()
        self.server.receive_data(self.request_bytes)
        (self.request,) = [e for e in self.server.events() if isinstance(e, Request)]
        self.deflate = deflate

    def accept(self, subprotocol: str | None = "mcp") -> list[WsOutput]:
        extensions = [PerMessageDeflate()] if self.deflate else []
        data = self.server.send(AcceptConnection(subprotocol=subprotocol, extensions=extensions))
        return self.client.receive_data(data)

    def to_server(self) -> list[object]:
        self.server.receive_data(self.client.data_to_send())
        return list(self.server.events())
