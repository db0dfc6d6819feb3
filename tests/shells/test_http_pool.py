"""The shells' own httpcore connection pools (mcp_io_sync._pool, mcp_io_trio._pool),
against a real keep-alive HTTP/1.1 server on 127.0.0.1: reuse, the bound on
connections, the pool timeout, discarding connections the server closed or whose body
was abandoned, read timeouts of the lean sync stream, and close()."""

from __future__ import annotations

import contextlib
import http.server
import socketserver
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpcore
import pytest
import trio

from mcp_io_sync._pool import ConnectionPool
from mcp_io_trio._pool import AsyncConnectionPool

from ._http_support import self_signed


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.peers: set[Any] = set()  # one client address per TCP connection
        self.active = 0
        self.max_active = 0
        self.hosts: list[str] = []

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # failed TLS handshakes (the verification tests) are expected


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, *args: Any) -> None:
        pass

    def _body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def do_POST(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        srv = self.server
        body = self._body()
        with srv.lock:
            srv.peers.add(self.client_address)
            srv.hosts.append(self.headers.get("Host", ""))
            srv.active += 1
            srv.max_active = max(srv.max_active, srv.active)
        try:
            if self.path == "/slow":
                time.sleep(0.3)
            if self.path == "/hang":
                time.sleep(1.5)
            if self.path == "/stream":
                self.send_response(200)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for _ in range(3):
                    self.wfile.write(b"5\r\nchunk\r\n")
                    self.wfile.flush()
                time.sleep(0.5)
                self.wfile.write(b"0\r\n\r\n")
                return
            reply = b"echo:" + body if body else b"ok"
            self.send_response(200)
            self.send_header("Content-Length", str(len(reply)))
            if self.path == "/close":
                self.send_header("Connection", "close")
            if self.path in ("/close", "/drop"):
                self.close_connection = True
            self.end_headers()
            self.wfile.write(reply)
        finally:
            with srv.lock:
                srv.active -= 1


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


def _url(srv: _Server, path: str = "/ok") -> str:
    return f"http://127.0.0.1:{srv.server_address[1]}{path}"


def _timeouts(read: float = 5.0, pool: float = 5.0) -> dict[str, Any]:
    return {"timeout": {"connect": 5.0, "write": 5.0, "read": read, "pool": pool}}


# ---------------------------------------------------------------- blocking


def test_sync_reuses_one_connection_and_sends_host(server: _Server) -> None:
    with ConnectionPool(max_connections=4) as pool:
        for i in range(5):
            r = pool.request(b"POST", _url(server), headers=[], content=b"%d" % i)
            assert (r.status, r.content) == (200, b"echo:%d" % i)
        assert pool.connections == 1 and pool.idle == 1
    assert len(server.peers) == 1
    assert server.hosts == [f"127.0.0.1:{server.server_address[1]}"] * 5
    assert pool.connections == 0  # closed


def test_sync_does_not_reuse_a_connection_idle_past_the_keepalive_expiry(server: _Server) -> None:
    # (expiry 0: every idle connection is past it, whatever the machine's speed)
    with ConnectionPool(keepalive_expiry=0.0) as pool:
        for _ in range(3):
            assert pool.request(b"GET", _url(server), headers=[]).content == b"ok"
        assert pool.connections == 1  # the stale ones were closed, not kept
    assert len(server.peers) == 3


def test_sync_bounds_connections_and_times_out_waiting(server: _Server) -> None:
    with ConnectionPool(max_connections=2) as pool:

        def one(_: int) -> bytes:
            return pool.request(b"GET", _url(server, "/slow"), headers=[]).content

        with ThreadPoolExecutor(6) as ex:
            assert list(ex.map(one, range(6))) == [b"ok"] * 6
        assert server.max_active <= 2
        assert len(server.peers) <= 2 and pool.connections <= 2

        # Both slots busy: a request with a short pool timeout gives up.
        with ThreadPoolExecutor(2) as ex:
            busy = [ex.submit(one, i) for i in range(2)]
            time.sleep(0.1)
            with pytest.raises(httpcore.PoolTimeout):
                pool.request(b"GET", _url(server), headers=[], extensions=_timeouts(pool=0.05))
            assert [f.result() for f in busy] == [b"ok", b"ok"]
        # ... and the slots were given back.
        assert pool.request(b"GET", _url(server), headers=[]).status == 200


def test_sync_discards_a_connection_the_server_closed(server: _Server) -> None:
    with ConnectionPool() as pool:
        assert pool.request(b"GET", _url(server, "/close"), headers=[]).content == b"ok"
        time.sleep(0.05)
        assert pool.request(b"GET", _url(server), headers=[]).content == b"ok"
        assert pool.connections == 1
    assert len(server.peers) == 2


def test_sync_discards_an_idle_connection_closed_meanwhile(server: _Server) -> None:
    """The server closes a keep-alive connection while it sits idle (no ``Connection:
    close`` announced): has_expired sees the readable socket, and the next request goes
    out on a new connection instead of failing."""
    with ConnectionPool() as pool:
        assert pool.request(b"GET", _url(server, "/drop"), headers=[]).content == b"ok"
        assert pool.idle == 1
        time.sleep(0.1)  # the server's FIN arrives
        for _ in range(3):
            assert pool.request(b"GET", _url(server), headers=[]).content == b"ok"
        assert pool.connections == 1
    assert len(server.peers) == 2


def test_sync_abandoned_body_closes_the_connection(server: _Server) -> None:
    with ConnectionPool() as pool:
        with pool.stream(b"GET", _url(server, "/stream"), headers=[]) as r:
            first = next(iter(r.iter_stream()))
            assert first
        assert pool.connections == 0  # not reusable: closed, not pooled
        assert pool.request(b"GET", _url(server), headers=[]).status == 200
    assert len(server.peers) == 2


def test_sync_read_timeout_and_recovery(server: _Server) -> None:
    with ConnectionPool() as pool:
        # /hang answers after 1.5 s: a ReadTimeout is the 0.2 s limit firing first.
        with pytest.raises(httpcore.ReadTimeout):
            pool.request(b"GET", _url(server, "/hang"), headers=[], extensions=_timeouts(read=0.2))
        assert pool.connections == 0
        assert pool.request(b"GET", _url(server), headers=[]).status == 200


def test_sync_connect_error_gives_the_slot_back() -> None:
    with socketsocket_closed_port() as port, ConnectionPool(max_connections=1) as pool:
        for _ in range(3):
            with pytest.raises(httpcore.ConnectError):
                pool.request(b"GET", f"http://127.0.0.1:{port}/", headers=[])
        assert pool.connections == 0


def test_sync_concurrent_requests_corked_and_correct(server: _Server) -> None:
    """Many requests in flight (writes held back until the read): every reply matches."""
    with ConnectionPool(max_connections=8) as pool:

        def one(i: int) -> bytes:
            return pool.request(b"POST", _url(server), headers=[], content=b"x%d" % i).content

        with ThreadPoolExecutor(16) as ex:
            assert list(ex.map(one, range(200))) == [b"echo:x%d" % i for i in range(200)]
        assert pool.connections <= 8


def test_sync_close_closes_connections_in_use(server: _Server) -> None:
    pool = ConnectionPool()
    errors: list[BaseException] = []

    def hang() -> None:
        try:
            pool.request(b"GET", _url(server, "/hang"), headers=[])
        except BaseException as exc:
            errors.append(exc)

    t = threading.Thread(target=hang)
    t.start()
    time.sleep(0.2)
    pool.close()
    t.join(5)
    assert pool.connections == 0 and pool.idle == 0
    # A request still running after close() ends on its own and is not pooled.
    assert not t.is_alive()


@contextlib.contextmanager
def socketsocket_closed_port() -> Iterator[int]:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    yield port


# ---------------------------------------------------------------- trio


@pytest.mark.trio
async def test_trio_reuses_one_connection(server: _Server) -> None:
    async with AsyncConnectionPool(max_connections=4) as pool:
        for i in range(5):
            r = await pool.request(b"POST", _url(server), headers=[], content=b"%d" % i)
            assert (r.status, r.content) == (200, b"echo:%d" % i)
        assert pool.connections == 1 and pool.idle == 1
    assert len(server.peers) == 1
    assert pool.connections == 0


@pytest.mark.trio
async def test_trio_does_not_reuse_a_connection_idle_past_the_keepalive_expiry(
    server: _Server,
) -> None:
    async with AsyncConnectionPool(keepalive_expiry=0.0) as pool:
        for _ in range(3):
            assert (await pool.request(b"GET", _url(server), headers=[])).content == b"ok"
        assert pool.connections == 1
    assert len(server.peers) == 3


@pytest.mark.trio
async def test_trio_bounds_connections_and_times_out_waiting(server: _Server) -> None:
    async with AsyncConnectionPool(max_connections=2) as pool:
        out: list[bytes] = []

        async def one() -> None:
            out.append((await pool.request(b"GET", _url(server, "/slow"), headers=[])).content)

        async with trio.open_nursery() as nursery:
            for _ in range(6):
                nursery.start_soon(one)
        assert out == [b"ok"] * 6
        assert server.max_active <= 2 and pool.connections <= 2

        async with trio.open_nursery() as nursery:
            nursery.start_soon(one)
            nursery.start_soon(one)
            await trio.sleep(0.1)
            with pytest.raises(httpcore.PoolTimeout):
                await pool.request(
                    b"GET", _url(server), headers=[], extensions=_timeouts(pool=0.05)
                )
        assert (await pool.request(b"GET", _url(server), headers=[])).status == 200


@pytest.mark.trio
async def test_trio_discards_closed_and_abandoned_connections(server: _Server) -> None:
    async with AsyncConnectionPool() as pool:
        assert (await pool.request(b"GET", _url(server, "/close"), headers=[])).content == b"ok"
        await trio.sleep(0.05)
        assert (await pool.request(b"GET", _url(server), headers=[])).content == b"ok"
        assert pool.connections == 1
        with trio.CancelScope() as scope:
            async with pool.stream(b"GET", _url(server, "/stream"), headers=[]) as r:
                async for _chunk in r.aiter_stream():
                    scope.cancel()  # leave the body early (as the shell does)
        assert pool.connections == 0  # it reused the idle connection, then closed it
        assert (await pool.request(b"GET", _url(server), headers=[])).status == 200
    assert len(server.peers) == 3


@pytest.mark.trio
async def test_trio_cancelled_while_waiting_for_a_slot(server: _Server) -> None:
    async with AsyncConnectionPool(max_connections=1) as pool:

        async def slow() -> None:
            await pool.request(b"GET", _url(server, "/slow"), headers=[])

        async with trio.open_nursery() as nursery:
            nursery.start_soon(slow)
            await trio.sleep(0.05)
            with trio.move_on_after(0.05):
                await pool.request(b"GET", _url(server), headers=[])
        assert (await pool.request(b"GET", _url(server), headers=[])).status == 200


# ---------------------------------------------------------------- TLS


@pytest.fixture
def tls_server(tmp_path: Any) -> Iterator[tuple[_Server, str]]:
    import ssl

    pytest.importorskip("cryptography")
    cert, key = self_signed(tmp_path)
    srv = _Server()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv, cert
    finally:
        srv.shutdown()
        srv.server_close()


def _https(srv: _Server) -> str:
    return f"https://127.0.0.1:{srv.server_address[1]}/ok"


def test_sync_tls_verifies_by_default_and_reuses(tls_server: tuple[_Server, str]) -> None:
    import ssl

    srv, cert = tls_server
    with ConnectionPool() as pool, pytest.raises(httpcore.ConnectError):
        pool.request(b"GET", _https(srv), headers=[], extensions=_timeouts())
    with ConnectionPool(ssl_context=ssl.create_default_context(cafile=cert)) as pool:
        for _ in range(3):
            assert pool.request(b"GET", _https(srv), headers=[]).content == b"ok"
        assert pool.connections == 1


@pytest.mark.trio
async def test_trio_tls_verifies_by_default_and_reuses(tls_server: tuple[_Server, str]) -> None:
    import ssl

    srv, cert = tls_server
    async with AsyncConnectionPool() as pool:
        with pytest.raises(httpcore.ConnectError):
            await pool.request(b"GET", _https(srv), headers=[], extensions=_timeouts())
    async with AsyncConnectionPool(ssl_context=ssl.create_default_context(cafile=cert)) as pool:
        for _ in range(3):
            assert (await pool.request(b"GET", _https(srv), headers=[])).content == b"ok"
        assert pool.connections == 1


# ---------------------------------------------------------------- trio: the lean stream


class _RawServer:
    """A bare TCP server on 127.0.0.1: ``handler(conn)`` runs in a thread per connection
    (for peers that misbehave on purpose: never read, close mid-response...)."""

    def __init__(self, handler: Any) -> None:
        import socket

        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.sock.getsockname()[1]
        self.handler = handler
        self.stop = threading.Event()
        self.conns: list[Any] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            threading.Thread(target=self.handler, args=(conn, self.stop), daemon=True).start()

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        self.stop.set()
        self.sock.close()
        for conn in self.conns:
            with contextlib.suppress(OSError):
                conn.close()


@contextlib.contextmanager
def _raw_server(handler: Any) -> Iterator[_RawServer]:
    srv = _RawServer(handler)
    try:
        yield srv
    finally:
        srv.close()


def _read_request(conn: Any, buf: bytearray) -> bool:
    """Read one request with a Content-Length body (or none) from ``buf`` + ``conn``."""
    while b"\r\n\r\n" not in buf:
        data = conn.recv(65536)
        if not data:
            return False
        buf += data
    head, _, rest = bytes(buf).partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        data = conn.recv(65536)
        if not data:
            return False
        rest += data
    buf[:] = rest[length:]
    return True


def _keep_alive_one_send(conn: Any, stop: threading.Event) -> None:
    """Answers every request with ``ok`` in one ``send`` (head and body together)."""
    buf = bytearray()
    with conn:
        while _read_request(conn, buf):
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")


def _never_reads(conn: Any, stop: threading.Event) -> None:
    import socket

    conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stop.wait(10)


def _closes_mid_response(conn: Any, stop: threading.Event) -> None:
    with conn:
        if _read_request(conn, bytearray()):
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
            time.sleep(0.1)


class _Steps(trio.abc.Instrument):
    def __init__(self) -> None:
        self.steps = 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self.steps += 1


@pytest.mark.trio
async def test_trio_plain_http_uses_the_lean_stream_one_scheduler_pass_per_request() -> None:
    """A request on a kept-alive plain-TCP connection goes through trio's scheduler once
    (httpcore's pool and stream: six times), and the socket is a plain non-blocking one."""
    import socket

    with _raw_server(_keep_alive_one_send) as srv:
        async with AsyncConnectionPool() as pool:
            async with pool.stream(b"POST", srv.url(), headers=[], content=b"x") as r:
                sock = r.extensions["network_stream"].get_extra_info("socket")
                assert type(sock) is socket.socket and sock.getblocking() is False
                await r.aread()
            counter = _Steps()
            trio.lowlevel.add_instrument(counter)
            try:
                for _ in range(50):
                    r = await pool.request(b"POST", srv.url(), headers=[], content=b"x" * 100)
                    assert r.content == b"ok"
            finally:
                trio.lowlevel.remove_instrument(counter)
            assert pool.connections == 1
    assert 50 <= counter.steps <= 55  # one per request (a checkpoint: never zero)


@pytest.mark.trio
async def test_trio_request_in_a_cancelled_scope_sends_nothing(server: _Server) -> None:
    async with AsyncConnectionPool() as pool:
        assert (await pool.request(b"GET", _url(server), headers=[])).status == 200
        with trio.CancelScope() as scope:
            scope.cancel()
            await pool.request(b"POST", _url(server), headers=[], content=b"no")
        assert scope.cancelled_caught
        await trio.sleep(0.1)
        assert len(server.hosts) == 1  # the second request never went out
        assert (await pool.request(b"GET", _url(server), headers=[])).status == 200


@pytest.mark.trio
async def test_trio_cancelled_while_blocked_in_a_read(server: _Server) -> None:
    async with AsyncConnectionPool(max_connections=1) as pool:
        assert (await pool.request(b"GET", _url(server), headers=[])).status == 200
        with trio.move_on_after(0.2) as scope:
            await pool.request(b"GET", _url(server, "/hang"), headers=[])
        assert scope.cancelled_caught
        # The half-read connection was closed: a read the cancellation could not stop
        # would have ended with /hang's answer (1.5 s) and pooled the connection.
        assert pool.connections == 0
        # ... and its slot given back (max_connections=1).
        assert (await pool.request(b"GET", _url(server), headers=[])).status == 200


@pytest.mark.trio
async def test_trio_read_timeout(server: _Server) -> None:
    async with AsyncConnectionPool() as pool:
        # /hang answers after 1.5 s: a ReadTimeout is the 0.2 s limit firing first.
        with pytest.raises(httpcore.ReadTimeout):
            await pool.request(
                b"GET", _url(server, "/hang"), headers=[], extensions=_timeouts(read=0.2)
            )
        assert pool.connections == 0
        assert (await pool.request(b"GET", _url(server), headers=[])).status == 200


@pytest.mark.trio
async def test_trio_cancelled_while_blocked_in_a_write() -> None:
    """The peer never reads: the request body fills the socket buffers and the write
    waits (wait_writable); cancelling it ends the request at once."""
    big = b"x" * (64 * 1024 * 1024)
    with _raw_server(_never_reads) as srv:
        async with AsyncConnectionPool(max_connections=1) as pool:
            # The peer never reads: the write ends only by the cancellation or the
            # write limit, whatever the machine's load (no clock needed).
            with trio.move_on_after(0.3) as scope:
                await pool.request(b"POST", srv.url(), headers=[], content=big)
            assert scope.cancelled_caught
            assert pool.connections == 0
            with pytest.raises(httpcore.WriteTimeout):
                await pool.request(
                    b"POST",
                    srv.url(),
                    headers=[],
                    content=big,
                    extensions={"timeout": {"write": 0.3, "read": 5.0, "pool": 1.0}},
                )
            assert pool.connections == 0


@pytest.mark.trio
async def test_trio_peer_closes_mid_response() -> None:
    with _raw_server(_closes_mid_response) as srv:
        async with AsyncConnectionPool() as pool:
            with pytest.raises((httpcore.RemoteProtocolError, httpcore.ReadError)):
                await pool.request(b"GET", srv.url(), headers=[])
            assert pool.connections == 0
            # Reading the streamed body: the same error surfaces from the body.
            with pytest.raises((httpcore.RemoteProtocolError, httpcore.ReadError)):
                async with pool.stream(b"GET", srv.url(), headers=[]) as r:
                    assert r.status == 200
                    async for _ in r.aiter_stream():
                        pass
            assert pool.connections == 0


@pytest.mark.trio
async def test_trio_discards_an_idle_connection_closed_meanwhile(server: _Server) -> None:
    """The lean stream's ``is_readable`` sees the server's FIN on an idle connection."""
    async with AsyncConnectionPool() as pool:
        assert (await pool.request(b"GET", _url(server, "/drop"), headers=[])).content == b"ok"
        assert pool.idle == 1
        await trio.sleep(0.1)
        for _ in range(3):
            assert (await pool.request(b"GET", _url(server), headers=[])).content == b"ok"
        assert pool.connections == 1
    assert len(server.peers) == 2


@pytest.mark.trio
async def test_trio_aclose_wakes_a_request_blocked_in_a_read(server: _Server) -> None:
    pool = AsyncConnectionPool()
    errors: list[BaseException] = []

    async def hang() -> None:
        try:
            await pool.request(b"GET", _url(server, "/hang"), headers=[])
        except httpcore.ReadError as exc:
            errors.append(exc)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(hang)
        await trio.sleep(0.2)
        await pool.aclose()
    # Woken by the close (a ReadError), not by /hang's answer after 1.5 s.
    assert len(errors) == 1 and pool.connections == 0


@pytest.mark.trio
async def test_trio_concurrent_requests_on_the_lean_stream(server: _Server) -> None:
    async with AsyncConnectionPool(max_connections=8) as pool:
        out: dict[int, bytes] = {}

        async def one(i: int) -> None:
            r = await pool.request(b"POST", _url(server), headers=[], content=b"x%d" % i)
            out[i] = r.content

        async with trio.open_nursery() as nursery:
            for i in range(100):
                nursery.start_soon(one, i)
        assert out == {i: b"echo:x%d" % i for i in range(100)}
        assert pool.connections <= 8


@pytest.mark.trio
async def test_trio_https_keeps_httpcores_stream_and_lean_start_tls_verifies(
    tls_server: tuple[_Server, str],
) -> None:
    import ssl

    from mcp_io_trio._pool import FastBackend

    srv, cert = tls_server
    ctx = ssl.create_default_context(cafile=cert)
    async with (
        AsyncConnectionPool(ssl_context=ctx) as pool,
        pool.stream(b"GET", _https(srv), headers=[]) as r,
    ):
        sock = r.extensions["network_stream"].get_extra_info("socket")
        assert isinstance(sock, trio.socket.SocketType)  # trio's SSLStream underneath
        await r.aread()
    # start_tls on the lean stream hands over to httpcore's trio TLS stream: verified.
    port = srv.server_address[1]
    plain = await FastBackend().connect_tcp("127.0.0.1", port, timeout=5.0)
    with pytest.raises(httpcore.ConnectError):
        await plain.start_tls(ssl.create_default_context(), "127.0.0.1", timeout=5.0)
    plain = await FastBackend().connect_tcp("127.0.0.1", port, timeout=5.0)
    tls = await plain.start_tls(ctx, "127.0.0.1", timeout=5.0)
    try:
        await tls.write(b"GET /ok HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
        reply = b""
        while not reply.endswith(b"ok"):
            chunk = await tls.read(65536, timeout=5.0)
            assert chunk
            reply += chunk
        assert reply.startswith(b"HTTP/1.1 200")
    finally:
        await tls.aclose()
