"""``configure_http``'s pool and transport factories, in both shells (issue 24 item 8:
CUST-1, CONN-15; mcp_io_common/custom_pool.py).

* ``pool_factory``: the SDK's Streamable HTTP server (tests/servers/sdk_server.py) served
  by uvicorn on a UNIX socket only, reached through ``httpcore.ConnectionPool(uds=...)``
  (``AsyncConnectionPool`` in the Trio shell): the URL's host and port have no server,
  so an answer proves the factory's pool carried the traffic.
* ``network_backend``: a backend that records each connection it opened, in front of
  the SDK server over TCP.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpcore
import pytest

from mcp_proto import errors

from ._http_support import SERVERS, PeerPool, http_peers
from .conftest import Shell, text_of

pytestmark = pytest.mark.peer

#: No server listens here: only the UNIX socket answers (the SDK's DNS-rebinding
#: check accepts a ``localhost:*`` Host).
URL = "http://localhost:9/mcp"


@pytest.fixture(scope="module")
def uds_server() -> Iterator[str]:
    """The SDK server listening on a UNIX socket only: the socket's path."""
    directory = tempfile.mkdtemp(prefix="mcp-uds-")  # short: a socket path is bounded
    path = str(Path(directory) / "sdk.sock")
    fd, log_path = tempfile.mkstemp(prefix="mcp-peer-uds-", suffix=".log")
    import os

    os.close(fd)
    argv = [sys.executable, str(SERVERS / "sdk_server.py"), "--transport", "streamable-http"]
    process = http_peers._spawn([*argv, "--uds", path], None, log_path)
    try:
        deadline = time.monotonic() + http_peers.SDK_STARTUP_TIMEOUT
        while True:
            assert process.poll() is None, Path(log_path).read_text(errors="replace")
            with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX) as probe:
                probe.connect(path)
                break
            assert time.monotonic() < deadline, "the UNIX-socket server did not start"
            time.sleep(0.05)
        yield path
    finally:
        http_peers._stop_process(process)
        shutil.rmtree(directory, ignore_errors=True)
        with contextlib.suppress(OSError):
            os.unlink(log_path)


@pytest.fixture(scope="module")
def peers() -> Iterator[PeerPool]:
    pool = PeerPool()
    try:
        yield pool
    finally:
        pool.close()


async def echo(c: Any) -> str:
    return text_of(await c.call_tool("echo", {"text": "via the factory"}))


class UdsFactory:
    """A ``pool_factory`` building httpcore's pool on a UNIX socket for the shell's kind,
    recording the settings it was given and whether each pool it built was closed."""

    def __init__(self, shell: Shell, path: str) -> None:
        self.trio = shell.is_trio
        self.path = path
        self.seen: list[tuple[str, str]] = []
        self.closed: list[bool] = []

    def __call__(self, settings: Any) -> Any:
        self.seen.append((settings.name, settings.url))
        closed = self.closed
        index = len(closed)
        closed.append(False)
        if self.trio:

            class AsyncPool(httpcore.AsyncConnectionPool):
                async def aclose(self) -> None:
                    closed[index] = True
                    await super().aclose()

            return AsyncPool(uds=self.path)

        class Pool(httpcore.ConnectionPool):
            def close(self) -> None:
                closed[index] = True
                super().close()

        return Pool(uds=self.path)

    def hook(self, settings: Any) -> None:
        settings.pool_factory = self


def test_a_pool_factory_carries_connect_to_a_unix_socket(shell: Shell, uds_server: str) -> None:
    factory = UdsFactory(shell, uds_server)
    assert shell.run(echo, URL, configure_http=factory.hook) == "via the factory"
    assert factory.seen and all(url == URL for _, url in factory.seen)
    # The client closed every pool it was given (the transport closed with the client).
    assert factory.closed and all(factory.closed)


def test_a_pool_factory_through_client_per_server(shell: Shell, uds_server: str) -> None:
    """Through ``Client``: a server's own ``configure_http`` (the builders') sets the
    factory; the client's hook, called for the other server, leaves the default pool,
    which finds nothing at the URL."""
    from mcp_proto.config import streamable_http_config

    factory = UdsFactory(shell, uds_server)
    configs = [streamable_http_config(URL, name="socket", configure_http=factory.hook)]
    assert shell.run_client(echo, configs) == "via the factory"
    assert factory.seen == [("socket", URL)]
    assert all(factory.closed)
    with pytest.raises(errors.MCPError):
        shell.run_client(echo, [streamable_http_config(URL, name="tcp", read_timeout=5)])


class Recorder:
    """A network backend (httpcore's own for the shell) recording what it opened."""

    @staticmethod
    def for_shell(shell: Shell) -> Any:
        opened: list[tuple[str, int]] = []
        if shell.is_trio:

            class AsyncRecording(httpcore.AsyncNetworkBackend):
                inner = httpcore.TrioBackend()

                async def connect_tcp(self, host: str, port: int, **kw: Any) -> Any:
                    opened.append((host, port))
                    return await self.inner.connect_tcp(host, port, **kw)

                async def sleep(self, seconds: float) -> None:
                    await self.inner.sleep(seconds)

            backend: Any = AsyncRecording()
        else:

            class Recording(httpcore.NetworkBackend):
                inner = httpcore.SyncBackend()

                def connect_tcp(self, host: str, port: int, **kw: Any) -> Any:
                    opened.append((host, port))
                    return self.inner.connect_tcp(host, port, **kw)

            backend = Recording()
        backend.opened = opened
        return backend


def test_a_network_backend_opens_the_connections(shell: Shell, peers: PeerPool) -> None:
    peer = peers.sdk("streamable-http")
    backend = Recorder.for_shell(shell)

    def hook(settings: Any) -> None:
        settings.network_backend = backend

    assert shell.run(echo, peer.url, configure_http=hook) == "via the factory"
    assert backend.opened and set(backend.opened) == {("127.0.0.1", peer.port)}


def test_a_network_backend_through_client(shell: Shell, peers: PeerPool) -> None:
    peer = peers.sdk("streamable-http")
    backend = Recorder.for_shell(shell)

    def hook(settings: Any) -> None:
        settings.network_backend = backend

    configs = [{"type": "streamable_http", "url": peer.url}]
    assert shell.run_client(echo, configs, configure_http=hook) == "via the factory"
    assert set(backend.opened) == {("127.0.0.1", peer.port)}


def test_the_other_shells_backend_is_refused_when_the_client_is_built(shell: Shell) -> None:
    other = httpcore.SyncBackend() if shell.is_trio else httpcore.TrioBackend()

    def hook(settings: Any) -> None:
        settings.network_backend = other

    wanted = "AsyncNetworkBackend" if shell.is_trio else "httpcore.NetworkBackend"
    with pytest.raises(ValueError, match=wanted):
        shell.run_client(echo, [{"type": "streamable_http", "url": URL}], configure_http=hook)


@pytest.mark.parametrize(
    ("factory", "detail"),
    [
        (lambda settings: 1 / 0, "pool_factory raised ZeroDivisionError"),
        (lambda settings: object(), "pool_factory returned object, not a pool"),
    ],
)
def test_a_failing_pool_factory_fails_each_request_clearly(
    shell: Shell, factory: Any, detail: str
) -> None:
    def hook(settings: Any) -> None:
        settings.pool_factory = factory

    with pytest.raises(errors.MCPError, match="PoolFactoryError") as info:
        shell.run(echo, URL, configure_http=hook, read_timeout=5)
    assert detail in str(info.value)


def test_the_docs_example_runs(uds_server: str, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/http.md's pool_factory example (the blocking shell's), on this socket."""
    import re

    text = (Path(__file__).parents[2] / "docs" / "http.md").read_text()
    block = re.search(r"<!-- pool_factory example.*?```python\n(.*?)```", text, re.S)
    assert block is not None
    code = block.group(1).replace("/run/mcp.sock", uds_server)
    exec(compile(code, "docs/http.md", "exec"), {})
    assert "echo" in capsys.readouterr().out
