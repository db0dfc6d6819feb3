# ruff: noqa: F811 (the SDK server fixtures come from test_websocket)
"""WebSocket through an HTTP proxy (``CONNECT``), in both shells (issue 25).

* The real proxy: PyPI ``proxy.py`` run as its console script ``proxy`` (the ``test``
  extra), plain, with ``--basic-auth``, and over TLS (``--cert-file``: an ``https://``
  proxy); behind it the official SDK 1.x WebSocket server (tests/servers/ws_sdk1_server.py),
  ``ws://`` and ``wss://`` (its self-signed certificate for 127.0.0.1).
* The hostile proxy: tests/servers/proxy_hostile.py, raw sockets, one fault per mode.

What went through the proxy is read from its own access log (``CONNECT host:port``).
"""

from __future__ import annotations

import ssl
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_proto import errors

from . import _proxy_support
from ._http_support import http_peers
from ._proxy_support import PASSWORD, PROXY, SKIP_REASON, USER, echo, proxy_py
from ._proxy_support import target as _target
from .conftest import SERVERS, Shell, text_of
from .test_websocket import WS_PYTHON, run, sdk1, sdk1_tls  # noqa: F401 (fixtures)

AUTH = f"{USER}:{PASSWORD}"

if not WS_PYTHON.exists():  # pragma: no cover - test_websocket skips the same way
    pytest.skip("run `make ws-peer`", allow_module_level=True)
if not PROXY.exists():
    pytest.skip(SKIP_REASON, allow_module_level=True)

pytestmark = pytest.mark.peer


class Proxy(_proxy_support.Proxy):
    def saw(self, target: str, times: int = 1) -> bool:
        """Whether the access log names the tunnel to ``target`` at least ``times``
        times (this module counts tunnels made, not requests before)."""
        return super().saw(target, times - 1)


@pytest.fixture(scope="module")
def proxy() -> Iterator[Proxy]:
    with proxy_py() as peer:
        yield Proxy(peer)


@pytest.fixture(scope="module")
def auth_proxy() -> Iterator[Proxy]:
    # proxy.py's --basic-auth is "user:pass" split at the first colon.
    with proxy_py("--basic-auth", AUTH) as peer:
        yield Proxy(peer)


@pytest.fixture(scope="module")
def tls_proxy(sdk1_tls: tuple[str, Path]) -> Iterator[Proxy]:
    """``https://``: proxy.py serving TLS with the SDK server's certificate for 127.0.0.1."""
    cert = sdk1_tls[1]
    with proxy_py("--cert-file", str(cert), "--key-file", str(cert.parent / "key.pem")) as peer:
        yield Proxy(peer, "https")


def hostile(mode: str) -> Any:
    return http_peers._process_peer(
        lambda port: [sys.executable, str(SERVERS / "proxy_hostile.py"), mode, str(port)],
        path="",
        kind="proxy-hostile",
        mode=mode,
        timeout=http_peers.HOSTILE_STARTUP_TIMEOUT,
    )


async def never(c: Any) -> None:
    raise AssertionError("connected")  # pragma: no cover


# ---------------------------------------------------------------------- a real proxy


def test_ws_through_an_http_proxy(shell: Shell, sdk1: str, proxy: Proxy) -> None:
    before = proxy.connects().count(_target(sdk1))
    assert run(shell, sdk1, echo, proxy=proxy.url) == "via proxy"
    assert proxy.saw(_target(sdk1), before + 1)


def test_wss_through_an_http_proxy(
    shell: Shell,
    sdk1_tls: tuple[str, Path],
    proxy: Proxy,
) -> None:
    url, cert = sdk1_tls

    async def scenario(c: Any) -> int:
        return len(text_of(await c.call_tool("big", {"size": 1_000_000})))

    context = ssl.create_default_context(cafile=str(cert))
    before = proxy.connects().count(_target(url))
    assert run(shell, url, scenario, proxy=proxy.url, ssl_context=context) == 1_000_000
    assert proxy.saw(_target(url), before + 1)


def test_wss_through_a_proxy_still_verifies_the_server(
    shell: Shell,
    sdk1_tls: tuple[str, Path],
    proxy: Proxy,
) -> None:
    with pytest.raises(errors.ConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
        run(shell, sdk1_tls[0], never, proxy=proxy.url)


def test_proxy_credentials_from_the_url(shell: Shell, sdk1: str, auth_proxy: Proxy) -> None:
    url = auth_proxy.with_credentials(USER, PASSWORD)
    assert run(shell, sdk1, echo, proxy=url) == "via proxy"
    assert auth_proxy.saw(_target(sdk1))


def test_wss_through_an_authenticating_proxy(
    shell: Shell, sdk1_tls: tuple[str, Path], auth_proxy: Proxy
) -> None:
    url, cert = sdk1_tls
    context = ssl.create_default_context(cafile=str(cert))
    proxy = auth_proxy.with_credentials(USER, PASSWORD)
    assert run(shell, url, echo, proxy=proxy, ssl_context=context) == "via proxy"
    assert auth_proxy.saw(_target(url))


@pytest.mark.parametrize("given", [None, ("mcp-user", "wrong")])
def test_a_proxy_refusing_the_credentials_is_a_proxy_authentication_error(
    shell: Shell,
    sdk1: str,
    auth_proxy: Proxy,
    given: tuple[str, str] | None,
) -> None:
    url = auth_proxy.with_credentials(*given) if given else auth_proxy.url
    with pytest.raises(errors.ProxyAuthenticationError) as info:
        run(shell, sdk1, never, proxy=url)
    error = info.value
    assert error.http_status == 407 and error.proxy == auth_proxy.url
    assert auth_proxy.url in str(error) and "wrong" not in str(error)
    assert ("refused" if given else "carries no credentials") in str(error)
    assert "wrong" not in "".join(shell.log.messages())


def test_ws_through_an_https_proxy(
    shell: Shell, sdk1: str, tls_proxy: Proxy, sdk1_tls: tuple[str, Path]
) -> None:
    context = ssl.create_default_context(cafile=str(sdk1_tls[1]))
    assert run(shell, sdk1, echo, proxy=tls_proxy.url, ssl_context=context) == "via proxy"
    assert tls_proxy.saw(_target(sdk1))


def test_wss_through_an_https_proxy(
    shell: Shell,
    sdk1_tls: tuple[str, Path],
    tls_proxy: Proxy,
) -> None:
    url, cert = sdk1_tls

    async def scenario(c: Any) -> tuple[str, int]:
        # TLS inside TLS: a 1 MB answer crosses both layers in many records.
        big = len(text_of(await c.call_tool("big", {"size": 1_000_000})))
        return await echo(c), big

    context = ssl.create_default_context(cafile=str(cert))
    got = run(shell, url, scenario, proxy=tls_proxy.url, ssl_context=context)
    assert got == ("via proxy", 1_000_000)
    assert tls_proxy.saw(_target(url))


def test_an_https_proxy_is_verified_with_the_clients_ssl_context(
    shell: Shell, sdk1: str, tls_proxy: Proxy
) -> None:
    # No ssl_context: the system's trust store does not know the proxy's certificate.
    with pytest.raises(errors.ConnectionError, match="CERTIFICATE_VERIFY_FAILED") as info:
        run(shell, sdk1, never, proxy=tls_proxy.url)
    assert f"the proxy {tls_proxy.url}" in str(info.value)


# ---------------------------------------------------------------------- faults


def test_a_proxy_that_is_not_there(shell: Shell, sdk1: str) -> None:
    url = f"http://u:hidden@127.0.0.1:{http_peers.free_port()}"
    with pytest.raises(errors.ConnectionError, match="cannot connect to the proxy") as info:
        run(shell, sdk1, never, proxy=url, read_timeout=5.0)
    assert "hidden" not in str(info.value)


def test_a_socks_proxy_is_refused_by_name(shell: Shell, sdk1: str) -> None:
    with pytest.raises(errors.ConnectionError, match="not socks5://") as info:
        run(shell, sdk1, never, proxy="socks5://u:hidden@127.0.0.1:1080")
    assert "hidden" not in str(info.value)


@pytest.mark.parametrize(
    ("mode", "error", "words", "status"),
    [
        ("407", errors.ProxyAuthenticationError, "requires authentication", 407),
        ("502", errors.ProxyError, "refused the CONNECT .*HTTP 502 Bad Gateway", 502),
        ("garbage", errors.ProxyError, "not HTTP/1.1", None),
        ("silence", errors.ProxyError, "did not answer the CONNECT .* within 2 s", None),
        ("close_mid", errors.ProxyError, "closed the connection before finishing", None),
        ("huge_head", errors.ProxyError, "answer heads over 16384 bytes", None),
        ("data_after", errors.ProxyError, "sent data after its answer", None),
    ],
)
def test_hostile_proxies_fail_the_connect_with_a_typed_error(
    shell: Shell, mode: str, error: type[errors.ProxyError], words: str, status: int | None
) -> None:
    with hostile(mode) as peer:
        proxy = f"http://alice:hidden-pw@127.0.0.1:{peer.port}"
        with pytest.raises(error, match=words) as info:
            run(shell, "ws://mcp.invalid:8000/mcp", never, proxy=proxy, read_timeout=2.0)
        log = Path(peer.log_path).read_text()
    assert type(info.value) is error
    assert info.value.http_status == status
    assert info.value.proxy == f"http://127.0.0.1:{peer.port}"
    assert "hidden-pw" not in str(info.value)
    # The client did send the credentials, to the proxy only, in the CONNECT.
    assert "CONNECT mcp.invalid:8000 HTTP/1.1" in log and "Proxy-Authorization: Basic" in log


# ---------------------------------------------------------------------- the environment


def test_ws_through_the_environments_http_proxy(
    shell: Shell, sdk1: str, proxy: Proxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ws://`` reads ``HTTP_PROXY`` (``wss://`` reads ``HTTPS_PROXY``), as httpx's
    ``trust_env`` does for HTTP (mcp_proto/proxy_env.py); ``trust_env=False`` and
    ``NO_PROXY`` go direct (the proxy's log is unchanged by them: checked last)."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    before = proxy.connects().count(_target(sdk1))
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    assert run(shell, sdk1, echo) == "via proxy"
    assert proxy.saw(_target(sdk1), before + 1)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    assert run(shell, sdk1, echo, trust_env=False) == "via proxy"
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert run(shell, sdk1, echo) == "via proxy"


def test_ws_ignores_an_environment_socks_proxy_with_a_warning(
    shell: Shell, sdk1: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.setenv("ALL_PROXY", "socks5://127.0.0.1:9")
    assert run(shell, sdk1, echo) == "via proxy"
    assert any("ALL_PROXY names a proxy WebSocket cannot use" in m for m in shell.log.messages())
