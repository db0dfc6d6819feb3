"""OAuth through ``connect(url, oauth_provider=...)`` in both shells, end to end against
a REAL authorization server (issue 21): oidc-provider (npm, OpenID-certified) run by
``tests/peers/oidc_provider.mjs`` in front of a small protected MCP resource that
accepts only tokens issued for its own URL (RFC 8707 audience).

The connection machine meets the 401 on ``initialize``, discovers, registers, hands
the authorization URL to the provider's ``handler`` (here a browser stand-in that
follows the provider's login/consent redirects) and sends ``initialize`` again with the
token; the tool call then shows the token the resource accepted. Nothing secret reaches
the client's log.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import httpcore
import pytest

from mcp_proto.oauth import MemoryStorage, OAuthProvider, OpenAuthorization

from .conftest import Shell

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "peers" / "oidc_provider.mjs"
NODE = shutil.which("node")

pytestmark = pytest.mark.peer


@pytest.fixture(scope="module")
def peer() -> Iterator[dict[str, str]]:
    assert NODE is not None, "node is needed for the oidc-provider peer"
    assert (ROOT / "tests/peers/node_modules/oidc-provider").is_dir(), "run `make peers`"
    proc = subprocess.Popen(
        [NODE, str(SCRIPT)],
        cwd=SCRIPT.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, "oidc_provider.mjs exited before listening"
        yield json.loads(line)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


class Browser:
    """The user's browser, automated: follows the authorization redirects (the
    provider's interaction route logs the test user in and consents), keeping cookies,
    until the redirect URI, whose URL goes back to the flow."""

    def __init__(self) -> None:
        self.cookies: dict[str, str] = {}
        self.opened: list[str] = []
        self.threads: set[str] = set()

    def handle(self, effect: Any) -> str:
        assert isinstance(effect, OpenAuthorization)
        self.threads.add(threading.current_thread().name)
        self.opened.append(effect.url)
        url = effect.url
        with httpcore.ConnectionPool() as pool:
            for _ in range(20):
                if url.startswith(effect.redirect_uri):
                    return url
                cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
                response = pool.request("GET", url, headers=[("Cookie", cookie)] if cookie else [])
                for name, value in response.headers:
                    if name.lower() == b"set-cookie":
                        jar: SimpleCookie = SimpleCookie()
                        jar.load(value.decode("latin-1"))
                        for key, morsel in jar.items():
                            self.cookies[key] = morsel.value
                location = next((v for k, v in response.headers if k.lower() == b"location"), None)
                assert response.status in (302, 303) and location, response.status
                url = urljoin(url, location.decode("latin-1"))
        raise AssertionError("too many redirects")


async def whoami(client: Any) -> dict[str, Any]:
    tools = await client.list_tools()
    assert [t.name for t in tools] == ["whoami"]
    result = await client.call_tool("whoami", {})
    facts: dict[str, Any] = json.loads(result["content"][0]["text"])
    return facts


def test_connect_authorizes_through_a_real_authorization_server(
    shell: Shell, peer: dict[str, str]
) -> None:
    from mcp_proto import deprecations

    deprecations.reset()  # (DEP-7's notice is once per process: this test checks it)
    resource, issuer = peer["resource"], peer["issuer"]
    browser = Browser()
    storage = MemoryStorage()
    provider = OAuthProvider(
        resource, random_bytes=os.urandom, storage=storage, handler=browser.handle
    )
    facts = shell.run(whoami, resource, oauth_provider=provider, protocol="legacy")
    # RFC 8707: the token the resource accepted was issued for it.
    assert facts["aud"] == [resource]
    assert set(facts["scope"].split()) == {"mcp:read", "mcp:write"}
    assert len(browser.opened) == 1
    # The handler ran away from the caller's thread / the event loop.
    assert threading.main_thread().name not in browser.threads
    token = provider.current_token()
    assert token is not None and token.issuer == issuer and token.refresh_token

    # A second connection over the same storage presents the stored token: no browser.
    again = OAuthProvider(
        resource, random_bytes=os.urandom, storage=storage, handler=browser.handle
    )
    assert shell.run(whoami, resource, oauth_provider=again, protocol="legacy")["aud"] == [resource]
    assert len(browser.opened) == 1

    # Nothing secret in the client's log, DEBUG included.
    secrets = [token.access_token, token.refresh_token]
    for record in shell.log.records:
        text = record.getMessage() + repr(record.args)
        assert not [s for s in secrets if s and s in text], record.getMessage()
    # The DCR deprecation (DEP-7), through the registry: its text, once.
    notice = deprecations.REGISTRY["oauth_dcr"].notice
    assert shell.log.messages(logging.WARNING).count(notice) == 1
    assert deprecations.state("oauth_dcr") == "announced"


def test_without_a_handler_the_connect_fails_saying_how_to_authorize(
    shell: Shell, peer: dict[str, str]
) -> None:
    from mcp_proto.errors import UnauthorizedError

    provider = OAuthProvider(peer["resource"], random_bytes=os.urandom)

    async def never(client: Any) -> None:
        raise AssertionError("connected without authorization")

    with pytest.raises(UnauthorizedError) as info:
        shell.run(never, peer["resource"], oauth_provider=provider, protocol="legacy")
    assert "handler" in str(info.value)


# ---------------------------------------------------------------- BrowserOAuth


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def in_background(fn: Any) -> Any:
    """An opener that returns at once, as ``webbrowser.open`` does."""

    def opener(url: str) -> bool:
        threading.Thread(target=fn, args=(url,), daemon=True).start()
        return True

    return opener


def test_browser_oauth_receives_the_redirect_on_its_loopback_listener(
    shell: Shell, peer: dict[str, str]
) -> None:
    resource = peer["resource"]
    redirect = f"http://127.0.0.1:{free_port()}/callback"
    provider = OAuthProvider(resource, random_bytes=os.urandom, redirect_uri=redirect)
    browser = Browser()
    seen: list[int] = []

    def user(url: str) -> None:
        # The browser: asks for a favicon first (404, waited past), then follows the
        # authorization server's redirects and lands on the listener.
        stray = httpcore.request("GET", redirect.replace("/callback", "/favicon.ico"))
        seen.append(stray.status)
        landing = browser.handle(OpenAuthorization(url, redirect))
        seen.append(httpcore.request("GET", landing).status)

    shell.mod.BrowserOAuth(provider, opener=in_background(user), timeout=60)
    assert provider.handler is not None
    facts = shell.run(whoami, resource, oauth_provider=provider, protocol="legacy")
    assert facts["aud"] == [resource]
    # (The browser reads the listener's page after the flow took the redirect: wait for
    # its thread rather than race it.)
    import time

    end = time.monotonic() + 30
    while len(seen) < 2 and time.monotonic() < end:
        time.sleep(0.01)
    assert seen == [404, 200]


def test_browser_oauth_refuses_a_repeated_parameter(shell: Shell, peer: dict[str, str]) -> None:
    from mcp_proto.oauth import OAuthCallbackError

    resource = peer["resource"]
    redirect = f"http://127.0.0.1:{free_port()}/callback"
    provider = OAuthProvider(resource, random_bytes=os.urandom, redirect_uri=redirect)

    def attacker(url: str) -> None:
        # A redirect carrying two codes (AUTH-29): the listener passes it on verbatim,
        # the core refuses it before any code is used.
        from urllib.parse import parse_qs, urlsplit

        state = parse_qs(urlsplit(url).query)["state"][0]
        httpcore.request("GET", f"{redirect}?code=a&code=b&state={state}")

    shell.mod.BrowserOAuth(provider, opener=in_background(attacker), timeout=60)

    async def never(client: Any) -> None:
        raise AssertionError("connected")

    with pytest.raises(OAuthCallbackError) as info:
        shell.run(never, resource, oauth_provider=provider, protocol="legacy")
    assert info.value.reason == "repeated_parameter"


def test_browser_oauth_times_out_cleanly(shell: Shell, peer: dict[str, str]) -> None:
    from mcp_proto.oauth import OAuthCallbackError

    resource = peer["resource"]
    redirect = f"http://127.0.0.1:{free_port()}/callback"
    provider = OAuthProvider(resource, random_bytes=os.urandom, redirect_uri=redirect)
    shell.mod.BrowserOAuth(provider, opener=lambda url: True, timeout=0.5)

    async def never(client: Any) -> None:
        raise AssertionError("connected")

    with pytest.raises(OAuthCallbackError) as info:
        shell.run(never, resource, oauth_provider=provider, protocol="legacy")
    assert info.value.reason == "timeout"
    # The listener is closed: the port is free again.
    import socket

    with socket.create_server(("127.0.0.1", int(redirect.split(":")[2].split("/")[0]))):
        pass


def test_browser_oauth_listens_on_loopback_redirects_only(shell: Shell) -> None:
    provider = OAuthProvider(
        "https://mcp.example.com/mcp",
        random_bytes=os.urandom,
        redirect_uri="https://app.example.com/cb",
    )
    with pytest.raises(ValueError, match="loopback"):
        shell.mod.BrowserOAuth(provider)
    # A callback port of its own is the callback server's: the redirect URI follows
    # it (AUTH-2; tests/shells/test_oauth_authenticate.py), never a non-loopback one.
    with pytest.raises(ValueError, match="loopback"):
        shell.mod.BrowserOAuth(provider, callback_port=9999)


def test_a_definition_file_names_the_oauth_client(
    shell: Shell, peer: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import webbrowser

    resource = peer["resource"]
    port = free_port()
    browser = Browser()

    def user(url: str) -> None:
        landing = browser.handle(OpenAuthorization(url, f"http://localhost:{port}/callback"))
        httpcore.request("GET", landing.replace("localhost", "127.0.0.1"))

    monkeypatch.setattr(webbrowser, "open", in_background(user))
    doc = {
        "mcpServers": {
            "protected": {
                "type": "streamable_http",
                "url": resource,
                "protocol": "legacy",
                "oauth": {"callbackPort": port, "scopes": ["mcp:read"]},
            }
        }
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(doc))
    facts = shell.run_client(whoami, server_definition_file=str(path))
    assert facts["aud"] == [resource]
    assert facts["scope"].split() == ["mcp:read"]  # the entry's scope was asked for
    assert len(browser.opened) == 1
