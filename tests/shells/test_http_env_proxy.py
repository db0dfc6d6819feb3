"""Proxies from the environment (``HTTP_PROXY``/``HTTPS_PROXY``/``NO_PROXY``, httpx's
``trust_env`` rules: mcp_proto/proxy_env.py), in both shells, through a real forward
proxy (PyPI ``proxy.py``, as in test_http_custom.py) in front of the SDK's Streamable
HTTP server. What went through the proxy is read from its access log; what must not,
is sent to a proxy address where nothing listens (it would fail)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mcp_proto import errors

from ._http_support import PeerPool
from .conftest import Shell, text_of
from .test_http_custom import Proxy, _proxy_py, _target

pytestmark = pytest.mark.peer

#: Nothing listens here: a request sent through it fails.
DEAD_PROXY = "http://127.0.0.1:9"
_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "REQUEST_METHOD")


@pytest.fixture(scope="module")
def peers() -> Iterator[PeerPool]:
    pool = PeerPool()
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture(scope="module")
def proxy() -> Iterator[Proxy]:
    with _proxy_py() as peer:
        yield Proxy(peer)


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """A clean proxy environment (the machine's own variables set aside)."""
    for name in _VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    return monkeypatch


async def echo(c: Any) -> str:
    return text_of(await c.call_tool("echo", {"text": "via env"}))


def test_http_proxy_from_the_environment_carries_connect(
    shell: Shell, peers: PeerPool, proxy: Proxy, env: pytest.MonkeyPatch
) -> None:
    server = peers.sdk("streamable-http").url
    before = proxy.requests_to(_target(server))
    env.setenv("HTTP_PROXY", proxy.url)
    assert shell.run(echo, server) == "via env"
    assert proxy.saw(_target(server), before)


def test_the_environment_proxy_through_client_reaches_configure_http(
    shell: Shell, peers: PeerPool, proxy: Proxy, env: pytest.MonkeyPatch
) -> None:
    """Through ``Client``: the hook sees the environment's proxy in its settings."""
    server = peers.sdk("streamable-http").url
    before = proxy.requests_to(_target(server))
    env.setenv("http_proxy", proxy.url)
    seen: list[Any] = []
    configs = [{"name": "s", "type": "streamable_http", "url": server}]
    hook = lambda settings: seen.append(settings.proxy)  # noqa: E731
    assert shell.run_client(echo, configs, configure_http=hook) == "via env"
    assert seen == [proxy.url]
    assert proxy.saw(_target(server), before)


def test_a_dead_environment_proxy_is_really_used(
    shell: Shell, peers: PeerPool, env: pytest.MonkeyPatch
) -> None:
    server = peers.sdk("streamable-http").url
    env.setenv("HTTP_PROXY", DEAD_PROXY)
    with pytest.raises(errors.MCPError):
        shell.run(echo, server, read_timeout=5)


def test_no_proxy_trust_env_false_and_proxy_option_go_around_it(
    shell: Shell, peers: PeerPool, proxy: Proxy, env: pytest.MonkeyPatch
) -> None:
    """``NO_PROXY`` naming the host, ``trust_env=False`` and an explicit ``proxy=``
    each keep the (dead) environment proxy out of the way."""
    server = peers.sdk("streamable-http").url
    env.setenv("HTTP_PROXY", DEAD_PROXY)
    assert shell.run(echo, server, trust_env=False) == "via env"
    before = proxy.requests_to(_target(server))
    assert shell.run(echo, server, proxy=proxy.url) == "via env"
    assert proxy.saw(_target(server), before)
    env.setenv("NO_PROXY", "localhost,127.0.0.1")
    assert shell.run(echo, server) == "via env"


def test_an_unusable_environment_proxy_is_a_value_error_naming_it(
    shell: Shell, env: pytest.MonkeyPatch
) -> None:
    env.setenv("HTTPS_PROXY", "ftp://user:secret@p:21")
    with pytest.raises(ValueError, match="HTTPS_PROXY is not a proxy URL") as info:
        shell.run_client(echo, [{"type": "streamable_http", "url": "https://h.example/mcp"}])
    assert "secret" not in str(info.value)
