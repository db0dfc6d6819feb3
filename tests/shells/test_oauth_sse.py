"""OAuth over the deprecated HTTP+SSE transport in both shells (issue 21), end to end
against the REAL authorization server of tests/shells/test_oauth_shells.py
(oidc-provider), whose resource also speaks HTTP+SSE: ``GET /sse`` and the POSTs to the
endpoint it announces answer 401 without a token issued for that resource.

``connect(url, transport="sse", oauth_provider=...)`` meets the 401 on the event
stream, discovers, registers, runs the browser step, opens the stream again with the
token and completes the handshake over it; the tool call shows the token the resource
accepted. Before, the provider was dropped for an SSE target and the connect failed
with the 401.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpcore
import pytest

from mcp_proto.oauth import MemoryStorage, OAuthProvider, OpenAuthorization

from .conftest import Shell
from .test_oauth_shells import Browser, free_port, in_background, peer, whoami

__all__ = ["peer"]  # the module-scoped oidc-provider fixture, shared

pytestmark = pytest.mark.peer


def test_connect_over_http_sse_authorizes_through_a_real_authorization_server(
    shell: Shell, peer: dict[str, str]
) -> None:
    sse, issuer = peer["sseResource"], peer["issuer"]
    browser = Browser()
    storage = MemoryStorage()
    provider = OAuthProvider(sse, random_bytes=os.urandom, storage=storage, handler=browser.handle)
    facts = shell.run(whoami, sse, transport="sse", oauth_provider=provider)
    # RFC 8707: the token the resource accepted (on the POST of tools/call) is its own.
    assert facts["aud"] == [sse]
    assert len(browser.opened) == 1
    token = provider.current_token()
    assert token is not None and token.issuer == issuer

    # A second connection over the same storage presents the stored token: no browser.
    again = OAuthProvider(sse, random_bytes=os.urandom, storage=storage, handler=browser.handle)
    assert shell.run(whoami, sse, transport="sse", oauth_provider=again)["aud"] == [sse]
    assert len(browser.opened) == 1


def test_without_a_handler_the_sse_connect_fails_saying_how_to_authorize(
    shell: Shell, peer: dict[str, str]
) -> None:
    from mcp_proto.errors import UnauthorizedError

    provider = OAuthProvider(peer["sseResource"], random_bytes=os.urandom)

    async def never(client: Any) -> None:
        raise AssertionError("connected without authorization")

    with pytest.raises(UnauthorizedError) as info:
        shell.run(never, peer["sseResource"], transport="sse", oauth_provider=provider)
    assert "handler" in str(info.value)


def test_a_definition_file_names_the_oauth_client_of_an_sse_server(
    shell: Shell, peer: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import webbrowser

    sse = peer["sseResource"]
    port = free_port()
    browser = Browser()

    def user(url: str) -> None:
        landing = browser.handle(OpenAuthorization(url, f"http://localhost:{port}/callback"))
        httpcore.request("GET", landing.replace("localhost", "127.0.0.1"))

    monkeypatch.setattr(webbrowser, "open", in_background(user))
    doc = {
        "mcpServers": {
            "legacy": {
                "type": "sse",
                "url": sse,
                "oauth": {"callbackPort": port, "scopes": ["mcp:read"]},
            }
        }
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(doc))
    facts = shell.run_client(whoami, server_definition_file=str(path))
    assert facts["aud"] == [sse]
    assert facts["scope"].split() == ["mcp:read"]  # the entry's scope was asked for
    assert len(browser.opened) == 1
