"""The core's connection machine against real servers, through a minimal reference
driver written here (a test helper, not a shell): it performs the machine's frames with
``subprocess`` / ``httpcore`` and feeds back what happened, as the shells and the
asyncio example do. It proves the machine's rules hold with real peers (the SDK
server over stdio, Streamable HTTP and legacy HTTP+SSE; the npm everything server),
independently of the shells.

The driver: one thread owns the machine; exchanges and the stdout reader run on helper
threads that only put inputs on a queue; the owner waits on that queue until the next
deadline, then calls ``handle_timeout``.
"""

from __future__ import annotations

import os
import queue
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpcore
import pytest

from mcp_proto import NEED_DATA
from mcp_proto.config import ServerConfig, sse_config, stdio_config, streamable_http_config
from mcp_proto.connection import (
    AbortExchange,
    CallFailed,
    CallProgress,
    CallSucceeded,
    Closed,
    CloseTransport,
    Connected,
    ConnectFailed,
    Connection,
    Disconnected,
    ExchangeFailure,
    OpenTransport,
    ServerRequest,
    StartExchange,
    Write,
)
from mcp_proto.errors import ConnectionError, RequestTimeoutError
from mcp_proto.types import Implementation

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "tests" / "servers"
sys.path.insert(0, str(SERVERS))

from http_peers import everything_http_server, sdk_http_server  # noqa: E402

SDK_STDIO = [sys.executable, str(SERVERS / "sdk_server.py")]


class Driver:
    """A blocking executor of one ``Connection`` (reference; tests only)."""

    def __init__(self, config: ServerConfig, capabilities: dict[str, Any] | None = None) -> None:
        self.conn = Connection(
            config,
            name="real",
            client_info=Implementation(name="machine-real", version="1"),
            capabilities=lambda: dict(capabilities or {}),
            random=random.Random(7).random,
        )
        self.inputs: queue.Queue[Callable[[float], None]] = queue.Queue()
        self.events: list[Any] = []
        self.proc: subprocess.Popen[bytes] | None = None
        self.pool: httpcore.ConnectionPool | None = None
        self.aborted: set[int] = set()
        self.on_request: Callable[[ServerRequest], Any] = lambda r: {}

    # ------------------------------------------------------------ the loop

    def run_until(self, done: Callable[[], bool], limit: float = 20.0) -> None:
        stop = time.monotonic() + limit
        while True:
            self._perform()
            if done():
                return
            now = time.monotonic()
            assert now < stop, f"nothing happened in {limit}s; events: {self.events}"
            deadline = self.conn.next_deadline()
            wait = min(stop, deadline if deadline is not None else stop) - now
            try:
                feed = self.inputs.get(timeout=max(0.0, wait))
            except queue.Empty:
                deadline = self.conn.next_deadline()
                if deadline is not None and time.monotonic() >= deadline:
                    self.conn.handle_timeout(time.monotonic())
                continue
            feed(time.monotonic())

    def _perform(self) -> None:
        conn = self.conn
        while True:
            frames = conn.frames_to_send()
            for frame in frames:
                self._do(frame)
            answered = False
            event = conn.next_event()
            while event is not NEED_DATA:
                self.events.append(event)
                if isinstance(event, ServerRequest):
                    conn.answer(event.request_id, self.on_request(event), now=time.monotonic())
                    answered = True
                event = conn.next_event()
            if not frames and not answered:
                return

    def _do(self, frame: Any) -> None:
        conn = self.conn
        if isinstance(frame, OpenTransport):
            config = conn.config
            if config.type == "stdio":
                self.proc = subprocess.Popen(
                    list(config.command),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
                threading.Thread(target=self._read_stdout, args=(self.proc,), daemon=True).start()
            else:
                self.pool = httpcore.ConnectionPool(max_connections=16)
            conn.transport_opened(time.monotonic())
        elif isinstance(frame, Write):
            assert self.proc is not None and self.proc.stdin is not None
            try:
                self.proc.stdin.write(b"".join(m + b"\n" for m in frame.messages))
                self.proc.stdin.flush()
            except OSError:
                pass  # the reader reports the end of the stream
        elif isinstance(frame, StartExchange):
            threading.Thread(target=self._exchange, args=(frame,), daemon=True).start()
        elif isinstance(frame, AbortExchange):
            self.aborted.add(frame.xid)
        elif isinstance(frame, CloseTransport):
            self._close_transport()
            conn.transport_closed(time.monotonic())

    def _close_transport(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            if proc.stdin is not None:
                try:
                    proc.stdin.close()  # flushes what a Write left buffered
                except OSError:
                    pass  # the process already exited (a broken pipe): nothing to tell
            try:
                proc.wait(2.0)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        pool, self.pool = self.pool, None
        if pool is not None:
            time.sleep(0.05)  # let a DELETE already started go out
            pool.close()

    # ------------------------------------------------------------ helper threads

    def _read_stdout(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b""
            if not data:
                code = proc.wait()
                self.inputs.put(lambda now, c=code: self.conn.receive_eof(now, f"exit status {c}"))
                return
            self.inputs.put(lambda now, d=data: self.conn.receive_data(d, now))

    def _exchange(self, x: StartExchange) -> None:
        pool = self.pool
        put, conn, xid = self.inputs.put, self.conn, x.xid
        if pool is None:
            put(lambda now: conn.exchange_failed(xid, ExchangeFailure("network", "closed"), now))
            return
        timeouts = {"connect": 10.0, "read": x.read_timeout, "write": 10.0, "pool": 10.0}
        try:
            with pool.stream(
                x.method.encode(),
                x.url,
                headers=[(k.encode(), v.encode()) for k, v in x.headers],
                content=x.body,
                extensions={"timeout": timeouts},
            ) as response:
                headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers]
                put(lambda now: conn.exchange_head(xid, response.status, headers, now))
                for chunk in response.iter_stream():
                    if xid in self.aborted:
                        return
                    put(lambda now, c=chunk: conn.exchange_data(xid, c, now))
            put(lambda now: conn.exchange_end(xid, now))
        except httpcore.ReadTimeout as exc:
            failure = ExchangeFailure("read_timeout", str(exc))
            put(lambda now: conn.exchange_failed(xid, failure, now))
        except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.TimeoutException) as exc:
            failure = ExchangeFailure("network", str(exc))
            put(lambda now: conn.exchange_failed(xid, failure, now))
        except RuntimeError:
            pass  # the pool was closed under us (teardown)

    # ------------------------------------------------------------ user side

    def call(self, method: str, params: dict[str, Any] | None = None, **kw: Any) -> Any:
        call_id = self.conn.start_call(method, params, now=time.monotonic(), **kw)
        self.run_until(lambda: self.outcome(call_id) is not None)
        outcome = self.outcome(call_id)
        assert outcome is not None
        return outcome

    def outcome(self, call_id: int) -> CallSucceeded | CallFailed | None:
        for event in self.events:
            if isinstance(event, (CallSucceeded, CallFailed)) and event.call_id == call_id:
                return event
        return None

    def close(self) -> None:
        self.conn.close(time.monotonic())
        self.run_until(lambda: any(isinstance(e, Closed) for e in self.events))


@pytest.fixture
def drivers() -> Iterator[list[Driver]]:
    made: list[Driver] = []
    yield made
    for d in made:
        if not any(isinstance(e, Closed) for e in d.events):
            d.close()


def _driver(drivers: list[Driver], config: ServerConfig, **kw: Any) -> Driver:
    d = Driver(config, **kw)
    drivers.append(d)
    return d


def _progress_call(d: Driver) -> None:
    done = d.call("tools/call", {"name": "progress", "arguments": {"steps": 4}}, progress=True)
    assert isinstance(done, CallSucceeded), done
    mine = [e for e in d.events if getattr(e, "call_id", None) == done.call_id]
    assert [type(e) for e in mine] == [CallProgress] * 4 + [CallSucceeded]
    assert [e.progress for e in mine[:4]] == [1.0, 2.0, 3.0, 4.0]


# ------------------------------------------------------------------ stdio


def test_stdio_sdk_server_calls_progress_and_server_requests(drivers: list[Driver]) -> None:
    # protocol="legacy": server requests exist only in the handshake era (the SDK server
    # speaks both; test_machine_real_modern.py covers its 2026-07-28 side).
    d = _driver(drivers, stdio_config(SDK_STDIO, protocol="legacy"), capabilities={"roots": {}})
    listed = d.call("tools/list")
    assert isinstance(listed, CallSucceeded)
    assert "echo" in {t["name"] for t in listed.result["tools"]}
    assert isinstance(d.events[0], Connected)
    _progress_call(d)
    d.on_request = lambda r: {"roots": [{"uri": "file:///tmp/x", "name": "x"}]}
    roots = d.call("tools/call", {"name": "list_roots", "arguments": {}})
    assert isinstance(roots, CallSucceeded)
    assert "file:///tmp/x" in roots.result["content"][0]["text"]
    d.close()
    assert d.conn.state.value == "closed"


def test_stdio_timeout_cancels_on_the_server(drivers: list[Driver]) -> None:
    d = _driver(drivers, stdio_config(SDK_STDIO))
    slow = d.call("tools/call", {"name": "slow", "arguments": {"seconds": 5}}, timeout=0.3)
    assert isinstance(slow, CallFailed) and isinstance(slow.error, RequestTimeoutError)

    def cancelled() -> bool:
        seen = d.call("tools/call", {"name": "events", "arguments": {}})
        return (
            isinstance(seen, CallSucceeded)
            and "slow:cancelled" in seen.result["content"][0]["text"]
        )

    stop = time.monotonic() + 10
    while not cancelled():
        assert time.monotonic() < stop, "the server never saw notifications/cancelled"


def test_stdio_process_exit_is_disconnected_and_the_next_call_restarts(
    drivers: list[Driver],
) -> None:
    d = _driver(drivers, stdio_config(SDK_STDIO))
    assert isinstance(d.call("ping"), CallSucceeded)
    first = d.proc
    assert first is not None
    first.kill()
    d.run_until(lambda: any(isinstance(e, Disconnected) for e in d.events))
    lost = next(e for e in d.events if isinstance(e, Disconnected))
    assert isinstance(lost.error, ConnectionError) and "exit status" in str(lost.error)
    assert isinstance(d.call("ping"), CallSucceeded)
    assert d.proc is not None and d.proc.pid != first.pid


def test_stdio_missing_command_is_connect_failed(drivers: list[Driver]) -> None:
    d = _driver(drivers, stdio_config([sys.executable, "-c", "import sys; sys.exit(3)"]))
    failed = d.call("ping")
    assert isinstance(failed, CallFailed)
    connect = next(e for e in d.events if isinstance(e, ConnectFailed))
    assert "exit status 3" in str(connect.error)


# ------------------------------------------------------------------ HTTP


@pytest.mark.parametrize("mode", ["streamable-http", "streamable-http+stateless+json"])
def test_streamable_http_sdk_server(drivers: list[Driver], mode: str) -> None:
    with sdk_http_server(mode) as peer:
        d = _driver(drivers, streamable_http_config(peer.url, read_timeout=10.0))
        listed = d.call("tools/list")
        assert isinstance(listed, CallSucceeded), listed
        if "json" not in mode:  # a JSON response has no room for progress notifications
            _progress_call(d)
        echoed = d.call("tools/call", {"name": "echo", "arguments": {"text": "hé"}})
        assert isinstance(echoed, CallSucceeded)
        assert echoed.result["content"][0]["text"] == "hé"
        d.close()


def test_streamable_http_list_changed_arrives(drivers: list[Driver]) -> None:
    with sdk_http_server("streamable-http") as peer:
        # The GET stream is a handshake-era feature (2026-07-28 uses subscriptions/listen).
        config = streamable_http_config(peer.url, read_timeout=10.0, protocol="legacy")
        d = _driver(drivers, config)
        changed = d.call("tools/call", {"name": "change_tools", "arguments": {}})
        assert isinstance(changed, CallSucceeded)
        d.run_until(
            lambda: any(
                getattr(e, "method", None) == "notifications/tools/list_changed" for e in d.events
            )
        )
        d.close()


def test_legacy_sse_sdk_server(drivers: list[Driver]) -> None:
    with sdk_http_server("sse") as peer:
        d = _driver(drivers, sse_config(peer.url, ping=None, read_timeout=10.0))
        listed = d.call("tools/list")
        assert isinstance(listed, CallSucceeded), listed
        _progress_call(d)
        d.close()


def test_everything_server_streamable_http(drivers: list[Driver]) -> None:
    with everything_http_server("streamableHttp") as peer:
        d = _driver(drivers, streamable_http_config(peer.url, read_timeout=10.0))
        listed = d.call("tools/list")
        assert isinstance(listed, CallSucceeded), listed
        assert len(listed.result["tools"]) > 3
        d.close()
