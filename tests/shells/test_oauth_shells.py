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
    assert shell.log.messages(logging.WARNING)  # (the DCR deprecation is logged)


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
