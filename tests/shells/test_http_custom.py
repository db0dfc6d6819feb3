"""HTTP customisation, in both shells (issue 24 item 8: CUST-1, CONN-15).

* A real forward proxy: PyPI ``proxy.py`` run as its console script ``proxy`` (the
  ``test`` extra), with ``--basic-auth``, in front of the SDK's Streamable HTTP server
  (tests/servers/sdk_server.py). What went through it is read from its access log.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_proto import errors

from ._http_support import PeerPool, http_peers, self_signed

# (_proxy_py and _target by these names: other modules import them from here.)
from ._proxy_support import PASSWORD, PROXY, SKIP_REASON, USER, Proxy, echo
from ._proxy_support import proxy_py as _proxy_py
from ._proxy_support import target as _target
from .conftest import Shell, text_of

if not PROXY.exists():
    pytest.skip(SKIP_REASON, allow_module_level=True)

pytestmark = pytest.mark.peer


@pytest.fixture(scope="module")
def peers() -> Iterator[PeerPool]:
    pool = PeerPool()
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture(scope="module")
def auth_proxy() -> Iterator[Proxy]:
    # proxy.py's --basic-auth is "user:pass" split at the first colon.
    with _proxy_py("--basic-auth", f"{USER}:{PASSWORD}") as peer:
        yield Proxy(peer)


# ---------------------------------------------------------------------- the proxy's userinfo


def test_http_through_an_authenticating_proxy(
    shell: Shell, peers: PeerPool, auth_proxy: Proxy
) -> None:
    """The proxy URL's user and password go as ``Proxy-Authorization: Basic`` (httpcore
    drops them from ``Proxy(url)``: the proxy answered 407)."""
    server = peers.sdk("streamable-http").url
    before = auth_proxy.requests_to(_target(server))
    proxy = auth_proxy.with_credentials(USER, PASSWORD)
    assert shell.run(echo, server, proxy=proxy) == "via proxy"
    assert auth_proxy.saw(_target(server), before)
    text = Path(auth_proxy.peer.log_path).read_text(errors="replace")
    assert "s3cr3t" not in "".join(shell.log.messages(0)) and "s3cr3t" not in text


def test_wrong_proxy_credentials_are_refused(
    shell: Shell, peers: PeerPool, auth_proxy: Proxy
) -> None:
    server = peers.sdk("streamable-http").url
    proxy = auth_proxy.with_credentials(USER, "wrong")
    with pytest.raises(errors.ProxyAuthenticationError) as info:
        shell.run(echo, server, proxy=proxy, read_timeout=5)
    assert info.value.http_status == 407
    assert "wrong" not in str(info.value) and "407" in str(info.value)


# ---------------------------------------------------------------------- configure_http


class Hook:
    """A ``configure_http`` hook recording the servers it was called for."""

    def __init__(self, **changes: Any) -> None:
        self.changes = changes
        self.calls: list[tuple[str, str]] = []

    def __call__(self, settings: Any) -> None:
        self.calls.append((settings.name, settings.url))
        for key, value in self.changes.items():
            setattr(settings, key, value)


def test_configure_http_sets_the_proxy_through_connect(
    shell: Shell, peers: PeerPool, auth_proxy: Proxy
) -> None:
    """The hook (CUST-1, CONN-15) is called once per server, after the options were
    applied, and the proxy it sets carries the traffic (the proxy's log)."""
    server = peers.sdk("streamable-http").url
    before = auth_proxy.requests_to(_target(server))
    hook = Hook(proxy=auth_proxy.with_credentials(USER, PASSWORD))
    assert shell.run(echo, server, configure_http=hook) == "via proxy"
    assert hook.calls == [(hook.calls[0][0], server)]
    assert auth_proxy.saw(_target(server), before)


def test_configure_http_per_server_through_client(
    shell: Shell, peers: PeerPool, auth_proxy: Proxy
) -> None:
    """Through ``Client`` (``create_client``): the client's hook is called once for each
    HTTP server; a server's own ``configure_http`` (the builders') wins over it."""
    from mcp_proto.config import streamable_http_config

    server = peers.sdk("streamable-http").url
    before = auth_proxy.requests_to(_target(server))
    own = Hook(proxy=auth_proxy.with_credentials(USER, PASSWORD))
    client_hook = Hook()
    configs = [
        streamable_http_config(server, name="direct"),
        streamable_http_config(server, name="proxied", configure_http=own),
    ]

    async def scenario(c: Any) -> list[str]:
        return [
            text_of(await c.call_tool("echo", {"text": name}, server=name))
            for name in ("direct", "proxied")
        ]

    assert shell.run_client(scenario, configs, configure_http=client_hook) == ["direct", "proxied"]
    assert client_hook.calls == [("direct", server)]
    assert own.calls == [("proxied", server)]
    assert auth_proxy.saw(_target(server), before)


def test_request_headers_are_computed_per_request(shell: Shell) -> None:
    """``request_headers`` is called for each request to the server; its value is seen
    on the wire and changes; a header the protocol owns or the request already carries
    keeps the protocol's value."""
    from ._http_support import hostile_http_server

    counter = iter(range(1, 1000))

    def request_headers() -> dict[str, str]:
        return {
            "X-Request-No": str(next(counter)),
            "Mcp-Session-Id": "forged",
            "Authorization": "Bearer forged",
        }

    def hook(settings: Any) -> None:
        settings.headers["Authorization"] = "Bearer configured"
        settings.request_headers = request_headers

    async def scenario(c: Any) -> int:
        await c.list_tools()
        await c.ping()
        return 0

    with hostile_http_server("ok") as peer:
        shell.run(scenario, peer.url, configure_http=hook, protocol="legacy")
        requests = [r for r in peer.recorder.requests if r.method == "POST"]
    numbers = [r.header_values("x-request-no") for r in requests]
    assert len(requests) >= 3 and all(len(n) == 1 for n in numbers)
    values = [int(n[0]) for n in numbers]
    assert values == sorted(set(values))  # a fresh value for each request
    for r in requests:
        assert r.header_values("authorization") == ["Bearer configured"]
        assert "forged" not in r.header_values("mcp-session-id")


def test_configure_http_refuses_protocol_headers(shell: Shell) -> None:
    def hook(settings: Any) -> None:
        settings.headers["Mcp-Session-Id"] = "mine"

    with pytest.raises(ValueError, match="Mcp-Session-Id"):
        shell.run_client(
            echo,
            [{"type": "streamable_http", "url": "http://127.0.0.1:9/mcp"}],
            configure_http=hook,
        )


# ---------------------------------------------------------------------- a private CA


@pytest.fixture(scope="module")
def sdk_tls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The SDK's Streamable HTTP server over HTTPS with its own CA: (url, cert)."""
    from ._http_support import SERVERS

    certfile, keyfile = self_signed(tmp_path_factory.mktemp("https"))
    with http_peers._process_peer(
        lambda port: [
            sys.executable,
            str(SERVERS / "sdk_server.py"),
            "--transport",
            "streamable-http",
            "--port",
            str(port),
            "--ssl-certfile",
            certfile,
            "--ssl-keyfile",
            keyfile,
        ],
        path="/mcp",
        kind="sdk-https",
        mode="streamable-http",
        timeout=http_peers.SDK_STARTUP_TIMEOUT,
    ) as peer:
        yield f"https://127.0.0.1:{peer.port}/mcp", Path(certfile)


def _trusting(cert: Path) -> Hook:
    import ssl

    return Hook(ssl_context=ssl.create_default_context(cafile=str(cert)))


def test_a_private_ca_through_configure_http_with_connect(
    shell: Shell, sdk_tls: tuple[str, Path]
) -> None:
    url, cert = sdk_tls
    # Verification stays on by default. (The Trio shell's message names only
    # ConnectError, not the certificate failure the blocking shell quotes.)
    with pytest.raises(errors.MCPError, match="ConnectError"):
        shell.run(echo, url, read_timeout=5)
    hook = _trusting(cert)
    assert shell.run(echo, url, configure_http=hook) == "via proxy"
    assert [u for _, u in hook.calls] == [url]


def test_a_private_ca_through_configure_http_with_client(
    shell: Shell, sdk_tls: tuple[str, Path]
) -> None:
    from mcp_proto.config import streamable_http_config

    url, cert = sdk_tls
    hook = _trusting(cert)
    configs = [streamable_http_config(url, name="tls", configure_http=hook)]
    assert shell.run_client(echo, configs) == "via proxy"
    assert hook.calls == [("tls", url)]


def test_the_docs_example_runs(
    sdk_tls: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/http.md's configure_http example (the blocking shell's), with this
    server's URL and CA file."""
    import re

    text = (Path(__file__).parents[2] / "docs" / "http.md").read_text()
    block = re.search(r"<!-- configure_http example.*?```python\n(.*?)```", text, re.S)
    assert block is not None
    url, cert = sdk_tls
    code = block.group(1).replace("https://127.0.0.1:8443/mcp", url)
    code = code.replace("/etc/my-ca.pem", str(cert))
    exec(compile(code, "docs/http.md", "exec"), {})
    assert "echo" in capsys.readouterr().out


def test_a_failing_request_headers_callable_fails_the_request(shell: Shell) -> None:
    from ._http_support import hostile_http_server

    def hook(settings: Any) -> None:
        settings.request_headers = lambda: {"X-Token": None}  # not a string

    with hostile_http_server("ok") as peer:
        with pytest.raises(errors.MCPError, match="RequestHeadersError") as info:
            shell.run(echo, peer.url, configure_http=hook, protocol="legacy", read_timeout=5)
        assert not [r for r in peer.recorder.requests if r.method == "POST"]
    assert "request_headers returned bad headers" in str(info.value)
