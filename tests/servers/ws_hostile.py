"""A scripted misbehaving WebSocket MCP server, on raw sockets (issue 25).

    python tests/servers/ws_hostile.py MODE PORT

Listens on 127.0.0.1:PORT. Every byte is written here (stdlib only), so faults no
library would produce are exact. Unless the mode is about the handshake, it accepts
the upgrade with the subprotocol ``mcp`` (no extension), answers ``server/discover``
with -32601, ``initialize`` with a handshake-era result, and ``ping`` properly; the
first other request (``tools/list``, ``tools/call``) meets the fault:

=================  ==============================================================
``binary``         the answer in a binary frame
``huge``           a text frame announcing 100 MB, streamed until the client goes
``utf8``           a text frame with bytes that are not UTF-8
``ping_flood``     20,000 Pings, then the answer (the client must still get it)
``close_mid``      the first fragment of the answer, then Close 1011 "bye"
``eof_mid``        the first fragment of the answer, then the TCP connection ends
``no_handshake``   reads the upgrade and never answers it
``http200``        answers the upgrade with HTTP 200 and a JSON body
``no_subprotocol`` accepts the upgrade without selecting a subprotocol
``deflate_bomb``   accepts ``permessage-deflate``; the answer is one compressed text
                   frame that inflates to 256 MiB
=================  ==============================================================

Each connection prints ``SENT <n>`` lines for what the fault wrote (the tests read
the output for the size of ``huge``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import socketserver
import struct
import sys
import time
import zlib
from typing import Any

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
HUGE = 100 * 1024 * 1024


def frame(opcode: int, payload: bytes, *, fin: bool = True) -> bytes:
    head = bytes([(0x80 if fin else 0) | opcode])
    n = len(payload)
    if n < 126:
        head += bytes([n])
    elif n < 1 << 16:
        head += bytes([126]) + struct.pack("!H", n)
    else:
        head += bytes([127]) + struct.pack("!Q", n)
    return head + payload


class Conn:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = b""
        # The client's messages once permessage-deflate is accepted (context kept).
        self.inflate = zlib.decompressobj(-15)

    def read(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def head(self) -> bytes:
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError
            self.buf += chunk
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        return head

    def message(self) -> tuple[int, bytes]:
        """The next client message (masked frames, reassembled; Pings answered)."""
        parts: list[bytes] = []
        compressed = False
        while True:
            b0, b1 = self.read(2)
            compressed = compressed or bool(b0 & 0x40)
            opcode, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                (n,) = struct.unpack("!H", self.read(2))
            elif n == 127:
                (n,) = struct.unpack("!Q", self.read(8))
            mask = self.read(4) if b1 & 0x80 else b"\0\0\0\0"
            data = bytes(c ^ mask[i % 4] for i, c in enumerate(self.read(n)))
            if opcode == 0x9:
                self.sock.sendall(frame(0xA, data))
                continue
            if opcode in (0x8, 0xA):
                return opcode, data
            parts.append(data)
            if b0 & 0x80:
                whole = b"".join(parts)
                if compressed:
                    whole = self.inflate.decompress(whole + b"\x00\x00\xff\xff")
                return 1, whole


def _result(rid: Any, result: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()


class Handler(socketserver.BaseRequestHandler):
    mode = "binary"

    def handle(self) -> None:
        try:
            self._handle()
        except (EOFError, OSError):
            pass

    def _handle(self) -> None:
        sock: socket.socket = self.request
        conn = Conn(sock)
        head = conn.head().decode("latin-1")
        key = ""
        for line in head.split("\r\n")[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "sec-websocket-key":
                key = value.strip()
        mode = self.mode
        if mode == "no_handshake":
            while sock.recv(65536):
                pass
            return
        if mode == "http200":
            body = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"use POST"}}'
            sock.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body)
            )
            return
        accept = base64.b64encode(hashlib.sha1(key.encode() + GUID).digest()).decode()
        answer = (
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Accept: {accept}\r\n"
        )
        if mode != "no_subprotocol":
            answer += "Sec-WebSocket-Protocol: mcp\r\n"
        if mode == "deflate_bomb":
            answer += "Sec-WebSocket-Extensions: permessage-deflate\r\n"
        sock.sendall((answer + "\r\n").encode())
        while True:
            opcode, data = conn.message()
            if opcode == 0x8:
                sock.sendall(frame(0x8, data[:2]))
                return
            if opcode != 1:
                continue
            msg = json.loads(data)
            method, rid = msg.get("method"), msg.get("id")
            if rid is None or method is None:
                continue
            if method == "server/discover":
                error = {"code": -32601, "message": "Method not found"}
                reply = json.dumps({"jsonrpc": "2.0", "id": rid, "error": error}).encode()
                sock.sendall(frame(1, reply))
            elif method == "initialize":
                version = (msg.get("params") or {}).get("protocolVersion", "2025-11-25")
                info = {
                    "protocolVersion": version,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": f"ws-hostile-{mode}", "version": "1"},
                }
                sock.sendall(frame(1, _result(rid, info)))
            elif method == "ping":
                sock.sendall(frame(1, _result(rid, {})))
            else:
                self.fault(sock, rid)
                if mode != "ping_flood":
                    return self.drain(sock)

    def fault(self, sock: socket.socket, rid: Any) -> None:
        mode = self.mode
        answer = _result(rid, {"tools": [], "content": []})
        if mode == "binary":
            sock.sendall(frame(2, answer))
        elif mode == "utf8":
            sock.sendall(frame(1, b'{"jsonrpc":"2.0","id":%d,"result":{"x":"\xff\xfe"}}' % rid))
        elif mode == "huge":
            sock.sendall(bytes([0x81, 127]) + struct.pack("!Q", HUGE))
            chunk = b'{"jsonrpc":"2.0","id":1,"result":{"x":"' + b"x" * (1024 * 1024)
            sent = 0
            try:
                while sent < HUGE:
                    sock.sendall(chunk[: HUGE - sent])
                    sent += len(chunk)
            finally:
                print(f"SENT {sent}", flush=True)
        elif mode == "ping_flood":
            sock.sendall(b"".join(frame(9, b"%d" % i) for i in range(20000)))
            sock.sendall(frame(1, answer))
        elif mode == "close_mid":
            sock.sendall(frame(1, answer[:10], fin=False))
            sock.sendall(frame(8, struct.pack("!H", 1011) + b"bye"))
        elif mode == "deflate_bomb":
            # RFC 7692 § 7.2.1: raw deflate, the final empty block's 4 bytes removed.
            z = zlib.compressobj(1, zlib.DEFLATED, -15)
            block = b"a" * (1024 * 1024)
            payload = b"".join(z.compress(block) for _ in range(256))
            payload = (payload + z.flush(zlib.Z_SYNC_FLUSH))[:-4]
            sock.sendall(bytes([0xC1, 127]) + struct.pack("!Q", len(payload)) + payload)
            print(f"SENT {len(payload)}", flush=True)
        elif mode == "eof_mid":
            sock.sendall(frame(1, answer[:10], fin=False))
            sock.shutdown(socket.SHUT_WR)

    def drain(self, sock: socket.socket) -> None:
        """Read until the client goes (bounded), then close."""
        sock.settimeout(10)
        end = time.monotonic() + 10
        while time.monotonic() < end and sock.recv(65536):
            pass


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main() -> None:
    mode, port = sys.argv[1], int(sys.argv[2])
    Handler.mode = mode
    with Server(("127.0.0.1", port), Handler) as server:
        server.serve_forever()


if __name__ == "__main__":
    main()
