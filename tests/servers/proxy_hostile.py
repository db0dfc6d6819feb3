"""A scripted misbehaving HTTP proxy, on raw sockets (the WebSocket tunnel's faults).

    python tests/servers/proxy_hostile.py MODE PORT

Listens on 127.0.0.1:PORT, reads one ``CONNECT`` head per connection, prints it (with
``Proxy-Authorization``, so the tests can see what the client sent) as ``HEAD <repr>``,
and answers it the mode's way. Every byte is written here (stdlib only): these are the
answers no published proxy gives on purpose.

=============  ==================================================================
``407``        407 with a Basic challenge and a body
``502``        502 Bad Gateway with a body
``garbage``    bytes that are not HTTP
``silence``    never answers (the connection stays open)
``close_mid``  the first half of a 200 head, then closes the connection
``huge_head``  a 200 status line, then header lines without end (64 KiB)
``data_after`` a complete 200 head followed by bytes the target cannot have sent
=============  ==================================================================
"""

from __future__ import annotations

import socket
import socketserver
import sys
import time


class Handler(socketserver.BaseRequestHandler):
    mode = "407"

    def handle(self) -> None:
        sock: socket.socket = self.request
        try:
            buf = b""
            while b"\r\n\r\n" not in buf:
                chunk = sock.recv(65536)
                if not chunk:
                    return
                buf += chunk
            head = buf.split(b"\r\n\r\n", 1)[0]
            print(f"HEAD {head!r}", flush=True)
            self.answer(sock)
        except OSError:
            pass

    def answer(self, sock: socket.socket) -> None:
        mode = self.mode
        if mode == "407":
            body = b"authenticate first"
            sock.sendall(
                b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                b'Proxy-Authenticate: Basic realm="hostile"\r\n'
                b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
            )
        elif mode == "502":
            body = b"upstream unreachable"
            sock.sendall(
                b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
            )
        elif mode == "garbage":
            sock.sendall(b"\x00\xffSSH-2.0-not-a-proxy\r\n\r\n")
        elif mode == "silence":
            self.drain(sock)
            return
        elif mode == "close_mid":
            sock.sendall(b"HTTP/1.1 200 Connection est")
        elif mode == "huge_head":
            sock.sendall(b"HTTP/1.1 200 OK\r\n")
            for i in range(1024):
                sock.sendall(b"X-Pad-%d: %s\r\n" % (i, b"a" * 54))
        elif mode == "data_after":
            sock.sendall(b"HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.1 101 early\r\n")
        sock.shutdown(socket.SHUT_WR)
        self.drain(sock)

    def drain(self, sock: socket.socket) -> None:
        """Read until the client goes (bounded), then close."""
        sock.settimeout(30)
        end = time.monotonic() + 30
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
