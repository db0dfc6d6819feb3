"""``mcp-proto --proxy URL`` and the environment's proxies, through the CLI itself (a
subprocess), with a real forward proxy (PyPI ``proxy.py``, the ``test`` extra) in front
of the SDK's Streamable HTTP server. What went through the proxy is read from its
access log; what must not, is sent to a proxy address where nothing listens."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "tests" / "servers"
CLI = [sys.executable, "-m", "mcp_io_sync.cli"]
PROXY = Path(sys.executable).parent / "proxy"
DEAD_PROXY = "http://127.0.0.1:9"  # nothing listens: a request through it fails
LOG_WAIT = 20.0

sys.path.insert(0, str(SERVERS))
import http_peers  # noqa: E402

if not PROXY.exists():
    pytest.skip(f"{PROXY} is missing: `make install` (the test extra)", allow_module_level=True)

pytestmark = pytest.mark.peer


def _env(**proxies: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.lower().endswith("_proxy") and k != "REQUEST_METHOD"
    }
    return {**env, **proxies}


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=90,
        input="",
        env=env if env is not None else _env(),
    )


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with http_peers.sdk_http_server("streamable-http") as peer:
        yield peer.url


@pytest.fixture(scope="module")
def proxy() -> Iterator[http_peers.Peer]:
    with http_peers._process_peer(
        lambda port: [
            str(PROXY),
            "--hostname",
            "127.0.0.1",
            "--port",
            str(port),
            "--num-acceptors",
            "1",
            "--num-workers",
            "1",
            "--threaded",
        ],
        path="",
        kind="proxy.py",
        mode="proxy",
        timeout=http_peers.SDK_STARTUP_TIMEOUT,
    ) as peer:
        yield peer


def _through(proxy: http_peers.Peer, server: str) -> int:
    target = server.split("://", 1)[1].split("/", 1)[0]
    text = Path(proxy.log_path).read_text(errors="replace")
    return sum(1 for line in text.splitlines() if f" {target}/" in line)


def _saw(proxy: http_peers.Peer, server: str, more_than: int) -> bool:
    end = time.monotonic() + LOG_WAIT  # a line is written when its request ends
    while _through(proxy, server) <= more_than:
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


def test_the_proxy_option_carries_the_requests(server: str, proxy: http_peers.Peer) -> None:
    before = _through(proxy, server)
    url = f"http://127.0.0.1:{proxy.port}"
    proc = run("-c", server, "--proxy", url, "call", "echo", "text=proxied")
    assert proc.returncode == 0, proc.stderr
    assert "proxied" in proc.stdout
    assert _saw(proxy, server, before)


def test_the_proxy_option_wins_over_the_environment(server: str, proxy: http_peers.Peer) -> None:
    before = _through(proxy, server)
    url = f"http://127.0.0.1:{proxy.port}"
    proc = run("-c", server, "--proxy", url, "tools", env=_env(HTTP_PROXY=DEAD_PROXY))
    assert proc.returncode == 0, proc.stderr
    assert _saw(proxy, server, before)


def test_the_environment_proxy_applies_unless_no_proxy_names_the_host(server: str) -> None:
    failed = run("-c", server, "--timeout", "5", "tools", env=_env(HTTP_PROXY=DEAD_PROXY))
    assert failed.returncode != 0
    assert "Traceback" not in failed.stderr
    direct = run("-c", server, "tools", env=_env(HTTP_PROXY=DEAD_PROXY, NO_PROXY="127.0.0.1"))
    assert direct.returncode == 0, direct.stderr
    assert "echo" in direct.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--proxy", "http://p:1", "tools", "--", sys.executable, "server.py"],
            "--proxy applies to a URL server, not a command",
        ),
        (
            ["-c", "http://127.0.0.1:9/mcp", "--proxy", "ftp://user:hunter2@p:21", "tools"],
            "--proxy expects an http://, https:// or socks5:// URL with a host",
        ),
    ],
)
def test_a_misused_proxy_option_is_a_one_line_usage_error(args: list[str], message: str) -> None:
    proc = run(*args)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr
    assert "hunter2" not in proc.stderr
