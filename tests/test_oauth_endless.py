"""A metadata document that never ends, over a real socket: the flow's exchange carries
its bound (``max_response_bytes``), the driver stops reading there, and the flow refuses
the document with a typed error — bounded memory, no hang. A scripted peer, since no
real server sends an endless document."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator

import pytest

from mcp_proto.oauth import HttpRequest, OAuthDiscoveryError, OAuthProvider
from tests.test_oauth_oidc_provider import Driver


@pytest.fixture
def endless_server() -> Iterator[str]:
    """401 to POST /mcp naming /prm; GET /prm streams chunks until the client leaves.
    Yields the server URL."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                data += chunk
            if data.startswith(b"POST"):
                challenge = f'Bearer resource_metadata="http://127.0.0.1:{port}/prm"'
                conn.sendall(
                    b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n"
                    + f"WWW-Authenticate: {challenge}\r\n\r\n".encode()
                )
                return
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
            conn.sendall(b"Transfer-Encoding: chunked\r\n\r\n")
            total, piece = 0, b"[" * 65536
            frame = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
            try:
                while not stop.is_set() and total < 1 << 30:
                    conn.sendall(frame)
                    total += len(piece)
            except OSError:
                pass  # the client stopped reading and closed: what we want

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop.set()
        listener.close()
        thread.join(timeout=5)


def test_an_endless_metadata_document_is_read_bounded(endless_server: str) -> None:
    url = endless_server
    driver = Driver()
    provider = OAuthProvider(url, random_bytes=os.urandom, max_document_bytes=256 * 1024)
    try:
        with pytest.raises(OAuthDiscoveryError) as info:
            driver.run(provider.auth_flow(HttpRequest("POST", url, (), b"{}"), driver.now))
    finally:
        driver.pool.close()
    assert info.value.reason == "too_large"
    prm = [r for r in driver.wire if r.purpose == "resource_metadata"]
    assert len(prm) == 1 and prm[0].max_response_bytes == 256 * 1024
    # read up to the bound and one more chunk, never the endless rest
    assert 256 * 1024 < driver.received[driver.wire.index(prm[0])] <= (256 + 128) * 1024
