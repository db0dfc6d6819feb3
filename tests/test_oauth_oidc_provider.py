"""The pure OAuth flow against a REAL authorization server: oidc-provider (npm,
OpenID-certified), run by ``tests/peers/oidc_provider.mjs`` on 127.0.0.1 with PKCE,
dynamic registration, RFC 8707 resource indicators, RFC 9207 ``iss`` and refresh-token
rotation, in front of a protected resource that accepts only tokens whose audience is
its own URL.

A minimal test-side driver performs the flow's effects with httpcore and plays the
browser: it follows the authorization redirects (the provider's interaction route logs
the test user in and consents) until the redirect URI, and hands that URL back.

The loopback exception of AUTH-30 is what lets this run at all: the configured server
is on 127.0.0.1, so the flow may follow the PRM to a plain-HTTP authorization server on
127.0.0.1 — and only there (``provider.loopback_allowed``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urljoin, urlsplit

import httpcore
import pytest

from mcp_proto.oauth import (
    AuthorizationResponse,
    ClientInfo,
    HttpRequest,
    HttpResponse,
    JoseKey,
    MemoryStorage,
    Notice,
    OAuthProvider,
    OpenAuthorization,
    UnsafeURLError,
)

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "peers" / "oidc_provider.mjs"
NODE = shutil.which("node")

# A real peer (`make peers` installs it): missing, the tests fail rather than skip.
pytestmark = pytest.mark.peer


@pytest.fixture(scope="module")
def client_key() -> JoseKey:
    """The private_key_jwt key of the pre-registered client ``cc-jwt``."""
    return JoseKey.generate("ES256")


@pytest.fixture(scope="module")
def peer(client_key: JoseKey) -> Iterator[dict[str, str]]:
    assert NODE is not None, "node is needed for the oidc-provider peer"
    assert (ROOT / "tests/peers/node_modules/oidc-provider").is_dir(), "run `make peers`"
    env = {**os.environ, "MCP_TEST_CLIENT_JWK": json.dumps(client_key.public_jwk())}
    proc = subprocess.Popen(
        [NODE, str(SCRIPT)],
        cwd=SCRIPT.parent,
        env=env,
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


class Driver:
    """Performs a flow's effects over real HTTP and plays the user's browser."""

    def __init__(self) -> None:
        self.pool = httpcore.ConnectionPool()
        self.cookies: dict[str, str] = {}
        self.wire: list[HttpRequest] = []
        self.received: list[int] = []  # body bytes read, per exchange
        self.notices: list[Notice] = []
        # The wall clock: the authorization server checks the iat/exp of the JWTs the
        # flow signs (client assertions, DPoP proofs) against its own.
        self.now = time.time()

    def http(self, req: HttpRequest) -> HttpResponse:
        self.wire.append(req)
        try:
            return self._http(req)
        except (httpcore.ReadError, httpcore.WriteError, httpcore.RemoteProtocolError):
            # A kept-alive connection the server closed while idle (Node closes them
            # after 5 s; a busy machine gets there): the request never arrived, send
            # it again on a new connection, as an HTTP client does.
            return self._http(req)

    def _http(self, req: HttpRequest) -> HttpResponse:
        limit = req.max_response_bytes
        with self.pool.stream(
            req.method.encode(), req.url, headers=list(req.headers), content=req.body
        ) as response:
            body = b""
            for chunk in response.iter_stream():
                body += chunk
                if limit is not None and len(body) > limit:
                    break  # the flow refuses it: reading more would be unbounded
            headers = tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers)
            self.received.append(len(body))
            return HttpResponse(response.status, headers, body, self.now)

    def browse(self, url: str, redirect_uri: str) -> str:
        """GET ``url`` and follow redirects (keeping cookies) until ``redirect_uri``."""
        for _ in range(20):
            if url.startswith(redirect_uri):
                return url
            headers = [("Cookie", "; ".join(f"{k}={v}" for k, v in self.cookies.items()))]
            response = self.pool.request("GET", url, headers=headers if self.cookies else [])
            for name, value in response.headers:
                if name.lower() == b"set-cookie":
                    jar: SimpleCookie = SimpleCookie()
                    jar.load(value.decode("latin-1"))
                    for key, morsel in jar.items():
                        self.cookies[key] = morsel.value
            location = next((v for k, v in response.headers if k.lower() == b"location"), None)
            assert response.status in (302, 303) and location, (
                response.status,
                response.content[:300],
            )
            url = urljoin(url, location.decode("latin-1"))
        raise AssertionError("too many redirects")

    def run(self, flow: Any) -> Any:
        reply: Any = None
        while True:
            try:
                effect = flow.send(reply)
            except StopIteration as stop:
                return stop.value
            if isinstance(effect, HttpRequest):
                reply = self.http(effect)
            elif isinstance(effect, OpenAuthorization):
                reply = AuthorizationResponse(
                    self.browse(effect.url, effect.redirect_uri), self.now
                )
            else:
                assert isinstance(effect, Notice)
                self.notices.append(effect)
                reply = None


@pytest.fixture
def driver() -> Iterator[Driver]:
    d = Driver()
    try:
        yield d
    finally:
        d.pool.close()


def test_authorization_code_flow_ends_with_a_token_bound_to_the_resource(
    peer: dict[str, str], driver: Driver
) -> None:
    resource, issuer = peer["resource"], peer["issuer"]
    provider = OAuthProvider(resource, random_bytes=os.urandom, storage=MemoryStorage())
    assert provider.loopback_allowed  # the configured server is on 127.0.0.1
    request = HttpRequest("POST", resource, (("Content-Type", "application/json"),), b"{}")
    response = driver.run(provider.auth_flow(request, driver.now))
    assert response.status == 200, response
    facts = json.loads(response.body)
    assert facts["aud"] == [resource]  # RFC 8707: the token's audience is the resource
    assert set(facts["scope"].split()) == {"mcp:read", "mcp:write"}
    token = provider.current_token()
    assert token is not None and token.issuer == issuer and token.resource == resource
    assert token.refresh_token and token.token_type == "Bearer"
    purposes = [r.purpose for r in driver.wire]
    assert purposes[0] == "resource" and purposes[-1] == "resource"
    assert purposes[1:-1] == [
        "resource_metadata",
        "server_metadata",  # RFC 8414 well-known (oidc-provider serves it too)
        "registration",
        "token",
    ]
    registration = json.loads(driver.wire[purposes.index("registration")].body)
    assert registration["application_type"] == "native"
    assert [n.deprecation for n in driver.notices if n.kind == "deprecation"] == ["oauth_dcr"]

    # Refresh-token rotation: the refresh is accepted, a new refresh token replaces
    # the old one, and the new access token still works at the resource.
    driver.wire.clear()
    driver.now += 3600 - 30  # inside the expiry margin
    response = driver.run(provider.auth_flow(request, driver.now))
    assert response.status == 200
    assert [r.purpose for r in driver.wire] == ["refresh", "resource"]
    refresh_form = dict(parse_qsl(driver.wire[0].body.decode()))
    assert refresh_form["resource"] == resource
    rotated = provider.current_token()
    assert rotated is not None and rotated.refresh_token != token.refresh_token
    assert rotated.access_token != token.access_token
    assert json.loads(response.body)["aud"] == [resource]


def test_the_old_refresh_token_is_refused_after_rotation(
    peer: dict[str, str], driver: Driver
) -> None:
    resource = peer["resource"]
    provider = OAuthProvider(resource, random_bytes=os.urandom)
    request = HttpRequest("POST", resource, (), b"{}")
    driver.run(provider.auth_flow(request, driver.now))
    first = provider.current_token()
    assert first is not None
    assert driver.run(provider.refresh(first, driver.now)) is not None
    # replaying the rotated-out refresh token: refused, dropped, re-authorization needed
    assert driver.run(provider.refresh(first, driver.now)) is None
    assert [n.kind for n in driver.notices].count("refresh_failed") == 1


def test_an_issuer_on_loopback_is_refused_for_a_remote_server(peer: dict[str, str]) -> None:
    """The local-stack exception is the configured server's, not the peer's: a server
    configured at a public name may not send the client to the loopback AS."""
    provider = OAuthProvider("https://mcp.example.com/mcp", random_bytes=os.urandom)
    assert not provider.loopback_allowed
    with pytest.raises(UnsafeURLError):
        provider._peer(peer["issuer"], "authorization server")
    assert urlsplit(peer["issuer"]).hostname == "127.0.0.1"


def test_client_credentials_with_client_secret_basic(peer: dict[str, str], driver: Driver) -> None:
    resource, issuer = peer["resource"], peer["issuer"]
    provider = OAuthProvider(
        resource,
        random_bytes=os.urandom,
        grant="client_credentials",
        client_info=ClientInfo("cc-basic", "cc-basic-secret", issuer=issuer),
    )
    request = HttpRequest("POST", resource, (), b"{}")
    response = driver.run(provider.auth_flow(request, driver.now))
    assert response.status == 200, response
    facts = json.loads(response.body)
    assert facts["aud"] == [resource] and facts["clientId"] == "cc-basic"
    token_request = next(r for r in driver.wire if r.purpose == "token")
    assert (token_request.header("Authorization") or "").startswith("Basic ")


def test_client_credentials_with_private_key_jwt(
    peer: dict[str, str], driver: Driver, client_key: JoseKey
) -> None:
    resource, issuer = peer["resource"], peer["issuer"]
    provider = OAuthProvider(
        resource,
        random_bytes=os.urandom,
        grant="client_credentials",
        client_key=client_key,
        client_info=ClientInfo("cc-jwt", issuer=issuer),
    )
    request = HttpRequest("POST", resource, (), b"{}")
    response = driver.run(provider.auth_flow(request, driver.now))
    assert response.status == 200, response
    assert json.loads(response.body)["clientId"] == "cc-jwt"
    form = dict(parse_qsl(next(r for r in driver.wire if r.purpose == "token").body.decode()))
    assert form["client_assertion_type"].endswith(":jwt-bearer") and "client_secret" not in form


def test_dpop_bound_token_with_server_nonces(
    peer: dict[str, str], driver: Driver, client_key: JoseKey
) -> None:
    """oidc-provider requires a DPoP nonce: the first token request is refused with
    use_dpop_nonce and answered once; the token is DPoP-bound (cnf.jkt), and the
    resource accepts it only with a proof from the same key for that request."""
    resource, issuer = peer["resource"], peer["issuer"]
    provider = OAuthProvider(
        resource,
        random_bytes=os.urandom,
        grant="client_credentials",
        client_key=client_key,
        client_info=ClientInfo("cc-jwt", issuer=issuer),
        dpop_key=JoseKey.generate("ES256"),
    )
    request = HttpRequest("POST", resource, (), b"{}")
    response = driver.run(provider.auth_flow(request, driver.now))
    assert response.status == 200, response
    facts = json.loads(response.body)
    assert facts["dpop"] is True and facts["aud"] == [resource]
    token = provider.current_token()
    assert token is not None and token.token_type == "DPoP"
    token_requests = [r for r in driver.wire if r.purpose == "token"]
    assert len(token_requests) == 2 and all(r.header("DPoP") for r in token_requests)
    last = driver.wire[-1]
    assert (last.header("Authorization") or "").startswith("DPoP ") and last.header("DPoP")
