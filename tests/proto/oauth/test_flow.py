"""The whole OAuth flow, pure: a 401 → discovery → registration → authorization →
code exchange → the request retried, against the scripted world of ``_fake``."""

from __future__ import annotations

import json
from urllib.parse import parse_qsl, urlsplit

import pytest

from mcp_proto.errors import InsufficientScopeError, UnauthorizedError
from mcp_proto.oauth import (
    ClientInfo,
    HttpRequest,
    HttpResponse,
    MemoryStorage,
    OAuthCallbackError,
    OAuthDiscoveryError,
    OAuthProvider,
    OAuthRegistrationError,
    OAuthTokenError,
    UnsafeURLError,
)

from ._fake import FakeAS, World, counter_random, json_response

SERVER = "https://mcp.example.com/mcp"
AS = "https://auth.example.com"
MCP_REQUEST = HttpRequest("POST", SERVER, (("Content-Type", "application/json"),), b"{}")


def provider(**kw: object) -> OAuthProvider:
    return OAuthProvider(SERVER, random_bytes=counter_random(), **kw)  # type: ignore[arg-type]


def query(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query))


def form(req: HttpRequest) -> dict[str, str]:
    return dict(parse_qsl(req.body.decode()))


def test_a_401_runs_the_whole_flow_and_the_request_is_retried_with_the_token() -> None:
    world = World(SERVER, [FakeAS(AS, scopes_supported=["mcp"])], prm_scopes=["mcp"])
    p = provider()
    response = world.run(p.auth_flow(MCP_REQUEST, 1000.0))
    assert response.status == 200
    purposes = [r.purpose for r in world.wire]
    assert purposes == [
        "resource",
        "resource_metadata",
        "server_metadata",
        "registration",
        "token",
        "resource",
    ]
    assert world.wire[0].header("Authorization") is None
    assert world.wire[-1].header("Authorization") == f"Bearer at-1@{AS}"
    # RFC 8707 resource on both requests, the PRM's value; PKCE S256; state echoed.
    auth = query(world.authorize_urls[0])
    token_form = form(world.requests("token")[0])
    assert auth["resource"] == token_form["resource"] == SERVER
    assert auth["code_challenge_method"] == "S256" and auth["response_type"] == "code"
    assert auth["scope"] == "mcp"
    assert token_form["grant_type"] == "authorization_code" and token_form["code_verifier"]
    # DCR carried application_type and the deprecation notice was raised once.
    reg = json.loads(world.requests("registration")[0].body)
    assert reg["application_type"] == "native" and "refresh_token" in reg["grant_types"]
    assert [n.deprecation for n in world.notices if n.kind == "deprecation"] == ["oauth_dcr"]
    token = p.current_token()
    assert token is not None and token.issuer == AS and token.resource == SERVER
    assert token.expires_at == 1000.0 + 3600


def test_the_token_in_hand_is_sent_and_a_valid_one_needs_no_discovery() -> None:
    world = World(SERVER, [FakeAS(AS)])
    p = provider()
    world.run(p.auth_flow(MCP_REQUEST, 1000.0))
    world.wire.clear()
    assert world.run(p.auth_flow(MCP_REQUEST, 1001.0)).status == 200
    assert [r.purpose for r in world.wire] == ["resource"]
    assert p.authorization_header(1001.0) == f"Bearer at-1@{AS}"


def test_an_expiring_token_is_refreshed_before_use_with_resource() -> None:
    world = World(SERVER, [FakeAS(AS)])
    p = provider()
    world.run(p.auth_flow(MCP_REQUEST, 1000.0))
    world.wire.clear()
    world.now = 1000.0 + 3590
    assert world.run(p.auth_flow(MCP_REQUEST, world.now)).status == 200
    assert [r.purpose for r in world.wire] == ["refresh", "resource"]
    refresh = form(world.wire[0])
    assert refresh["grant_type"] == "refresh_token" and refresh["resource"] == SERVER
    assert refresh["refresh_token"] == "refresh-1"
    assert world.wire[-1].header("Authorization") == f"Bearer at-2@{AS}"


def test_an_expired_token_without_refresh_is_not_presented() -> None:
    world = World(SERVER, [FakeAS(AS, refresh=False)])
    p = provider()
    world.run(p.auth_flow(MCP_REQUEST, 1000.0))
    assert p.authorization_header(1000.0 + 3600) is None
    assert p.authorization_header(1000.0 + 3599) is not None


def test_a_refused_refresh_falls_back_to_authorization() -> None:
    world = World(SERVER, [FakeAS(AS)])
    p = provider()
    world.run(p.auth_flow(MCP_REQUEST, 1000.0))
    token = p.current_token()
    assert token is not None
    p.storage.set_token(p.token_key(AS), token.with_(refresh_token="bogus", expires_at=1001.0))
    world.wire.clear()
    world.now = 2000.0
    assert world.run(p.auth_flow(MCP_REQUEST, 2000.0)).status == 200
    assert [n.kind for n in world.notices if n.kind == "refresh_failed"] == ["refresh_failed"]
    assert len(world.authorize_urls) == 2


def test_scope_from_the_challenge_wins_over_prm_scopes_supported() -> None:
    world = World(SERVER, [FakeAS(AS)], prm_scopes=["a", "b"], challenge_scope="mcp:basic")
    world.run(provider().auth_flow(MCP_REQUEST, 1000.0))
    assert query(world.authorize_urls[0])["scope"] == "mcp:basic"


def test_scope_is_omitted_when_nothing_names_one() -> None:
    world = World(SERVER, [FakeAS(AS)])
    world.run(provider().auth_flow(MCP_REQUEST, 1000.0))
    assert "scope" not in query(world.authorize_urls[0])


def test_offline_access_is_requested_only_when_the_as_lists_it() -> None:
    world = World(
        SERVER,
        [FakeAS(AS, scopes_supported=["mcp:basic", "offline_access"])],
        prm_scopes=["mcp:basic"],
    )
    world.run(provider().auth_flow(MCP_REQUEST, 1000.0))
    assert query(world.authorize_urls[0])["scope"] == "mcp:basic offline_access"
    world = World(
        SERVER,
        [FakeAS(AS, scopes_supported=["mcp:basic"])],
        challenge_scope="mcp:basic offline_access",
    )
    world.run(provider().auth_flow(MCP_REQUEST, 1000.0))
    assert query(world.authorize_urls[0])["scope"] == "mcp:basic"


class StepUpWorld(World):
    """403 insufficient_scope until the token carries every required scope."""

    def resource(self, req: HttpRequest) -> HttpResponse:
        auth = req.header("Authorization")
        if not auth:
            return super().resource(req)
        token = auth.removeprefix("Bearer ")
        cur = self.current_as()
        granted = set()
        for code in cur.granted:
            if code[0] == token:
                granted = set(code[1].split())
        missing = self.required_scopes - granted
        if missing:
            scope = " ".join(sorted(missing))
            return HttpResponse(
                403,
                (
                    (
                        "WWW-Authenticate",
                        f'Bearer error="insufficient_scope", scope="{scope}", '
                        f'resource_metadata="{self.prm_url}"',
                    ),
                ),
            )
        return HttpResponse(200, (), b"ok")


class ScopedAS(FakeAS):
    def __init__(self, *a: object, **kw: object) -> None:
        super().__init__(*a, **kw)  # type: ignore[arg-type]
        self.granted: list[tuple[str, str]] = []

    def token(self, req: HttpRequest) -> HttpResponse:
        code = dict(parse_qsl(req.body.decode())).get("code", "")
        scope = self.codes.get(code, {}).get("scope", "")
        out = super().token(req)
        self.granted.append((json.loads(out.body)["access_token"], scope))
        return out


def test_step_up_on_403_requests_the_union_of_scopes() -> None:
    world = StepUpWorld(
        SERVER,
        [ScopedAS(AS)],
        challenge_scope="files:read",
        required_scopes={"files:read", "files:write"},
    )
    response = world.run(provider().auth_flow(MCP_REQUEST, 1000.0))
    assert response.status == 200
    scopes = [query(u).get("scope") for u in world.authorize_urls]
    assert scopes == ["files:read", "files:read files:write"]


class NeverEnough(World):
    """The conformance suite's scope-retry-limit server: 403 whatever the token."""

    def resource(self, req: HttpRequest) -> HttpResponse:
        if not req.header("Authorization"):
            return super().resource(req)
        challenge = (
            f'Bearer error="insufficient_scope", scope="mcp:admin", '
            f'resource_metadata="{self.prm_url}"'
        )
        return HttpResponse(403, (("WWW-Authenticate", challenge),))


def test_step_up_is_bounded_at_three_authorizations() -> None:
    world = NeverEnough(SERVER, [FakeAS(AS)], challenge_scope="mcp:admin")
    with pytest.raises(InsufficientScopeError) as info:
        world.run(provider().auth_flow(MCP_REQUEST, 1000.0))
    assert info.value.scope == "mcp:admin"
    assert len(world.authorize_urls) == 3


class AlwaysUnauthorized(World):
    def resource(self, req: HttpRequest) -> HttpResponse:
        return HttpResponse(
            401, (("WWW-Authenticate", f'Bearer resource_metadata="{self.prm_url}"'),)
        )


def test_a_401_loop_is_bounded_with_a_typed_error() -> None:
    world = AlwaysUnauthorized(SERVER, [FakeAS(AS, refresh=False)])
    with pytest.raises(UnauthorizedError) as info:
        world.run(provider().auth_flow(MCP_REQUEST, 1000.0))
    assert info.value.status == 401
    assert len(world.authorize_urls) == 3
    assert len(world.requests("resource")) == 4


def test_a_plain_403_is_returned_not_authorized_again() -> None:
    class Forbidden(World):
        def resource(self, req: HttpRequest) -> HttpResponse:
            return HttpResponse(403, (("WWW-Authenticate", 'Bearer error="invalid_token"'),))

    world = Forbidden(SERVER, [FakeAS(AS)])
    assert world.run(provider().auth_flow(MCP_REQUEST, 1000.0)).status == 403
    assert world.authorize_urls == []


# ---------------------------------------------------------------- discovery


def test_without_resource_metadata_in_the_challenge_path_aware_then_root() -> None:
    world = World(
        SERVER,
        [FakeAS(AS)],
        challenge_prm=False,
        prm_path="/.well-known/oauth-protected-resource",
        prm_resource="https://mcp.example.com",
    )
    world.run(provider().auth_flow(MCP_REQUEST, 1000.0))
    urls = [r.url for r in world.requests("resource_metadata")]
    assert urls == [
        "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
        "https://mcp.example.com/.well-known/oauth-protected-resource",
    ]
    # the resource sent is the PRM's, exactly as published
    assert query(world.authorize_urls[0])["resource"] == "https://mcp.example.com"


def test_path_issuer_metadata_candidates_in_order() -> None:
    issuer = "https://auth.example.com/tenant1"
    world = World(SERVER, [FakeAS(issuer)])
    world.extra["https://auth.example.com/.well-known/oauth-authorization-server/tenant1"] = (
        HttpResponse(404)
    )
    world.extra["https://auth.example.com/.well-known/openid-configuration/tenant1"] = HttpResponse(
        404
    )
    world.extra[f"{issuer}/.well-known/openid-configuration"] = json_response(
        FakeAS(issuer).metadata()
    )
    world.run(provider().auth_flow(MCP_REQUEST, 1000.0))
    assert [r.url for r in world.requests("server_metadata")] == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]


def test_2025_03_26_fallback_endpoints_at_the_server_origin() -> None:
    class Legacy(World):
        def respond(self, req: HttpRequest) -> HttpResponse:
            self.wire.append(req)
            if req.purpose == "resource":
                if req.header("Authorization") == "Bearer legacy-token":
                    return HttpResponse(200)
                return HttpResponse(401, (("WWW-Authenticate", "Bearer"),))
            if req.url == "https://mcp.example.com/register":
                return json_response({"client_id": "legacy-client"}, 201)
            if req.url == "https://mcp.example.com/token":
                return json_response({"access_token": "legacy-token", "token_type": "Bearer"})
            return HttpResponse(404)

        def authorize(self, url: str) -> str:
            q = query(url)
            assert url.startswith("https://mcp.example.com/authorize?")
            return f"{q['redirect_uri']}?code=c&state={q['state']}"

    world = Legacy(SERVER, [])
    assert world.run(provider().auth_flow(MCP_REQUEST, 1000.0)).status == 200
    assert query(world.authorize_urls[0])["resource"] == SERVER


def test_prm_naming_another_resource_is_refused_before_authorization() -> None:
    world = World(SERVER, [FakeAS(AS)], prm_resource="https://evil.example.com/mcp")
    with pytest.raises(OAuthDiscoveryError) as info:
        world.run(provider().auth_flow(MCP_REQUEST, 1000.0))
    assert info.value.reason == "resource_mismatch"
    assert world.authorize_urls == [] and not world.requests("server_metadata")
    assert isinstance(info.value.__cause__, UnauthorizedError)


@pytest.mark.parametrize(
    "entry",
    [
        "https://127.0.0.1",
        "https://169.254.169.254",
        "http://auth.example.com",
        "https://10.0.0.7/as",
    ],
)
def test_an_unsafe_authorization_server_entry_is_never_fetched(entry: str) -> None:
    world = World(SERVER, [FakeAS(AS)], prm_as=[entry])
    with pytest.raises(UnsafeURLError):
        world.run(provider().auth_flow(MCP_REQUEST, 1000.0))
    assert not world.requests("server_metadata")


def test_an_unsafe_resource_metadata_url_fails_closed() -> None:
    class Hostile(World):
        @property
        def prm_url(self) -> str:
            return "http://169.254.169.254/latest/meta-data"

    world = Hostile(SERVER, [FakeAS(AS)])
    with pytest.raises(UnsafeURLError):
        world.run(provider().auth_flow(MCP_REQUEST, 1000.0))
    assert [r.purpose for r in world.wire] == ["resource"]


def test_metadata_naming_another_issuer_is_not_used() -> None:
    world = World(SERVER, [FakeAS(AS, metadata_issuer="https://attacker.example.com")])
    with pytest.raises(OAuthDiscoveryError) as info:
        world.run(provider().auth_flow(MCP_REQUEST, 1000.0))
    assert info.value.reason == "issuer_mismatch"
    assert not world.requests("registration") and world.authorize_urls == []


def test_pkce_not_advertised_refuses_to_proceed() -> None:
    for pkce in (None, ["plain"]):
        world = World(SERVER, [FakeAS(AS, pkce=pkce)])
        with pytest.raises(OAuthDiscoveryError) as info:
            world.run(provider().auth_flow(MCP_REQUEST, 1000.0))
        assert info.value.reason == "pkce_unsupported"
        assert world.authorize_urls == [] and not world.requests("registration")


def test_a_100_mb_metadata_document_is_bounded() -> None:
    world = World(SERVER, [FakeAS(AS)])
    world.extra[world.prm_url] = HttpResponse(200, (), b"{" + b" " * (100 * 1024 * 1024))
    p = provider()
    with pytest.raises(OAuthDiscoveryError) as info:
        world.run(p.auth_flow(MCP_REQUEST, 1000.0))
    assert info.value.reason == "too_large"
    assert world.requests("resource_metadata")[0].max_response_bytes == p.max_document_bytes


def test_http_endpoints_are_refused_for_a_remote_server() -> None:
    world = World(SERVER, [FakeAS(AS, authorization_endpoint="http://auth.example.com/authorize")])
    with pytest.raises(UnsafeURLError):
        world.run(provider().auth_flow(MCP_REQUEST, 1000.0))


# ---------------------------------------------------------------- callback


@pytest.mark.parametrize(
    ("mode", "supported", "ok"),
    [
        ("correct", True, True),
        ("omit", True, False),
        ("omit", False, True),
        ("wrong", True, False),
        ("wrong", False, False),
        ("normalized", True, False),
    ],
)
def test_rfc_9207_iss_table(mode: str, supported: bool, ok: bool) -> None:
    world = World(SERVER, [FakeAS(AS, iss_mode=mode, iss_supported=supported)])
    if ok:
        assert world.run(provider().auth_flow(MCP_REQUEST, 1000.0)).status == 200
    else:
        with pytest.raises(OAuthCallbackError):
            world.run(provider().auth_flow(MCP_REQUEST, 1000.0))
        assert not world.requests("token")


def test_a_callback_with_a_repeated_code_is_refused() -> None:
    world = World(SERVER, [FakeAS(AS)])
    world.callback = lambda url: world.authorize(url) + "&code=other"
    with pytest.raises(OAuthCallbackError) as info:
        world.run(provider().auth_flow(MCP_REQUEST, 1000.0))
    assert info.value.reason == "repeated_parameter" and not world.requests("token")


def test_a_callback_with_another_state_is_refused() -> None:
    world = World(SERVER, [FakeAS(AS)])
    world.callback = lambda url: world.authorize(url).replace("state=", "state=x")
    with pytest.raises(OAuthCallbackError):
        world.run(provider().auth_flow(MCP_REQUEST, 1000.0))
    assert not world.requests("token")


def test_an_error_callback_after_a_matching_iss_is_reported() -> None:
    world = World(SERVER, [FakeAS(AS)])
    world.callback = lambda url: (
        f"http://localhost:8080/callback?error=access_denied&state={query(url)['state']}&iss={AS}"
    )
    with pytest.raises(OAuthCallbackError) as info:
        world.run(provider().auth_flow(MCP_REQUEST, 1000.0))
    assert info.value.error == "access_denied"


@pytest.mark.parametrize("token_type", ["mac", None, "DPoP"])
def test_token_type_other_than_bearer_is_refused(token_type: str | None) -> None:
    world = World(SERVER, [FakeAS(AS, token_type=token_type)])
    p = provider()
    with pytest.raises(OAuthTokenError) as info:
        world.run(p.auth_flow(MCP_REQUEST, 1000.0))
    assert info.value.reason == "token_type"
    assert p.current_token() is None


@pytest.mark.parametrize("token_type", ["mac", "DPoP"])
def test_a_stored_token_of_another_type_is_not_presented(token_type: str) -> None:
    # AUTH-27: the type is checked where the token is read back from storage too (a
    # storage another program wrote, or one from before a DPoP key was dropped).
    world = World(SERVER, [FakeAS(AS)])
    p = provider()
    world.run(p.auth_flow(MCP_REQUEST, 1000.0))
    token = p.current_token()
    assert token is not None
    p.storage.set_token(p.token_key(AS), token.with_(token_type=token_type))
    assert p.current_token() is None and p.authorization_header(1001.0) is None
    assert p.storage.get_token(p.token_key(AS)) is None


def test_the_authorization_url_keeps_the_endpoint_query_and_sets_each_parameter_once() -> None:
    world = World(
        SERVER,
        [FakeAS(AS, authorization_endpoint=f"{AS}/authorize?scope=openid&tenant=x&state=zz")],
        prm_scopes=["mcp"],
    )
    world.run(provider().auth_flow(MCP_REQUEST, 1000.0))
    pairs = parse_qsl(urlsplit(world.authorize_urls[0]).query)
    names = [k for k, _ in pairs]
    assert len(names) == len(set(names))
    assert dict(pairs)["tenant"] == "x" and dict(pairs)["scope"] == "mcp"


# ---------------------------------------------------------------- registration


def test_pre_registered_credentials_without_issuer_send_nothing() -> None:
    world = World(SERVER, [FakeAS(AS)])
    p = provider(client_info=ClientInfo("pre", "secret"))
    with pytest.raises(OAuthRegistrationError) as info:
        world.run(p.auth_flow(MCP_REQUEST, 1000.0))
    assert info.value.reason == "no_issuer"
    assert [r.purpose for r in world.wire] == ["resource"]


def test_pre_registered_credentials_use_basic_auth_and_skip_registration() -> None:
    world = World(SERVER, [FakeAS(AS, registration=False, auth_methods=["client_secret_basic"])])
    p = provider(
        client_info=ClientInfo("pre-registered-client", "pre-registered-secret", issuer=AS)
    )
    assert world.run(p.auth_flow(MCP_REQUEST, 1000.0)).status == 200
    token_req = world.requests("token")[0]
    assert (token_req.header("Authorization") or "").startswith("Basic ")
    assert "client_secret" not in form(token_req)
    assert query(world.authorize_urls[0])["client_id"] == "pre-registered-client"


def test_client_secret_post_puts_the_secret_in_the_body() -> None:
    world = World(SERVER, [FakeAS(AS, auth_methods=["client_secret_post"], client_secret="s3cret")])
    world.run(provider().auth_flow(MCP_REQUEST, 1000.0))
    token_req = world.requests("token")[0]
    assert (
        form(token_req)["client_secret"] == "s3cret" and token_req.header("Authorization") is None
    )


def test_cimd_is_used_when_supported_and_dcr_is_skipped() -> None:
    url = "https://app.example.com/oauth/client.json"
    world = World(SERVER, [FakeAS(AS, cimd=True)])
    world.run(provider(client_id_metadata_url=url).auth_flow(MCP_REQUEST, 1000.0))
    assert query(world.authorize_urls[0])["client_id"] == url
    assert not world.requests("registration")
    assert form(world.requests("token")[0])["client_id"] == url


def test_pre_registered_outranks_cimd() -> None:
    world = World(SERVER, [FakeAS(AS, cimd=True)])
    p = provider(
        client_id_metadata_url="https://app.example.com/c.json",
        client_info=ClientInfo("pre", issuer=AS),
    )
    world.run(p.auth_flow(MCP_REQUEST, 1000.0))
    assert query(world.authorize_urls[0])["client_id"] == "pre"


def test_no_registration_mechanism_is_a_typed_error() -> None:
    world = World(SERVER, [FakeAS(AS, registration=False)])
    with pytest.raises(OAuthRegistrationError) as info:
        world.run(provider().auth_flow(MCP_REQUEST, 1000.0))
    assert info.value.reason == "no_registration"


def test_a_registration_response_registering_an_http_redirect_is_refused() -> None:
    world = World(SERVER, [FakeAS(AS)])
    world.extra[f"{AS}/register"] = json_response(
        {"client_id": "c", "redirect_uris": ["http://app.example.com/cb"]}, 201
    )
    with pytest.raises(UnsafeURLError):
        world.run(provider().auth_flow(MCP_REQUEST, 1000.0))


def test_a_storage_that_cannot_keep_the_registration_fails_before_the_authorization_url() -> None:
    class Broken(MemoryStorage):
        def set_client_info(self, key: str, info: ClientInfo) -> None:
            raise OSError("disk full")

    world = World(SERVER, [FakeAS(AS)])
    from mcp_proto.oauth import OAuthStorageError

    with pytest.raises(OAuthStorageError):
        world.run(provider(storage=Broken()).auth_flow(MCP_REQUEST, 1000.0))
    assert world.authorize_urls == []
