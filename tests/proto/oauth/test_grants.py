"""Client authentication and the grants without a browser (AUTH-35, issue 21 item 4):
``private_key_jwt``, client credentials, DPoP with server nonces, the JWT bearer grant
(workload identity federation) and enterprise-managed authorization (token exchange +
JWT bearer). Signatures are verified with joserfc, as an authorization server would."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any
from urllib.parse import parse_qsl

import pytest
from joserfc import jwt
from joserfc.jwk import JWKRegistry

from mcp_proto.oauth import (
    ClientInfo,
    EnterpriseIdP,
    HttpRequest,
    HttpResponse,
    JoseKey,
    Notice,
    OAuthProvider,
    OAuthTokenError,
    ObtainAssertion,
)

from ._fake import NOT_FOUND, counter_random, json_response

SERVER = "https://mcp.example.com/mcp"
AS = "https://auth.example.com"
IDP = "https://idp.example.com"
REQUEST = HttpRequest("POST", SERVER, (), b"{}")
PRM = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"


def form(req: HttpRequest) -> dict[str, str]:
    return dict(parse_qsl(req.body.decode()))


def verify(token: str, jwk: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    key = JWKRegistry.import_key(jwk)
    decoded = jwt.decode(token, key, algorithms=["ES256"])
    return dict(decoded.header), dict(decoded.claims)


class Server:
    """A resource and an authorization server without browser grants."""

    def __init__(self, **metadata: Any) -> None:
        self.metadata = {
            "issuer": AS,
            "token_endpoint": f"{AS}/token",
            "authorization_endpoint": f"{AS}/authorize",
            "code_challenge_methods_supported": ["S256"],
            **metadata,
        }
        self.wire: list[HttpRequest] = []
        self.issued: list[dict[str, Any]] = []
        self.token_type = "Bearer"
        self.as_nonce: str | None = None
        self.rs_nonce: str | None = None
        self.assertions: dict[str, str] = {}
        self.token_error: dict[str, Any] | None = None

    def respond(self, req: HttpRequest) -> HttpResponse:
        self.wire.append(req)
        if req.purpose == "resource":
            return self.resource(req)
        if req.url == PRM:
            return json_response({"resource": SERVER, "authorization_servers": [AS]})
        if req.url == f"{AS}/.well-known/oauth-authorization-server":
            return json_response(self.metadata)
        if req.url == f"{AS}/token":
            return self.token(req)
        if req.url == f"{IDP}/token":
            f = form(req)
            if f.get("subject_token") != "the-id-token":
                return json_response({"error": "invalid_grant"}, 400)
            return json_response(
                {
                    "access_token": "the-id-jag",
                    "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                    "token_type": "N_A",
                }
            )
        return NOT_FOUND

    def token(self, req: HttpRequest) -> HttpResponse:
        if self.token_error is not None:
            return json_response(self.token_error, 400)
        proof = req.header("DPoP")
        if self.as_nonce is not None and proof is not None:
            header = json.loads(base64.urlsafe_b64decode(proof.split(".")[0] + "=="))
            _, claims = verify(proof, header["jwk"])
            if claims.get("nonce") != self.as_nonce:
                return json_response(
                    {"error": "use_dpop_nonce"}, 400, (("DPoP-Nonce", self.as_nonce),)
                )
        token = f"token-{len(self.issued) + 1}"
        self.issued.append({"token": token, "form": form(req), "dpop": proof})
        return json_response(
            {"access_token": token, "token_type": self.token_type, "expires_in": 60}
        )

    def resource(self, req: HttpRequest) -> HttpResponse:
        auth = req.header("Authorization") or ""
        challenge = (("WWW-Authenticate", f'Bearer resource_metadata="{PRM}"'),)
        if not any(auth.endswith(" " + i["token"]) for i in self.issued):
            return HttpResponse(401, challenge)
        if auth.startswith("DPoP "):
            proof = req.header("DPoP")
            assert proof is not None
            header = json.loads(base64.urlsafe_b64decode(proof.split(".")[0] + "=="))
            _, claims = verify(proof, header["jwk"])
            if self.rs_nonce is not None and claims.get("nonce") != self.rs_nonce:
                return HttpResponse(
                    401,
                    (
                        ("WWW-Authenticate", 'DPoP error="use_dpop_nonce"'),
                        ("DPoP-Nonce", self.rs_nonce),
                    ),
                )
            ath = base64.urlsafe_b64encode(hashlib.sha256(auth[5:].encode()).digest())
            assert claims["ath"] == ath.rstrip(b"=").decode()
            assert claims["htm"] == "POST" and claims["htu"] == SERVER
        return HttpResponse(200, (), b"ok")

    def run(self, flow: Any, answers: dict[str, str] | None = None) -> Any:
        reply: Any = None
        while True:
            try:
                effect = flow.send(reply)
            except StopIteration as stop:
                return stop.value
            if isinstance(effect, HttpRequest):
                r = self.respond(effect)
                reply = HttpResponse(r.status, r.headers, r.body, 1000.0)
            elif isinstance(effect, ObtainAssertion):
                reply = (answers or {})[effect.kind]
            else:
                assert isinstance(effect, Notice)
                reply = None


def provider(**kw: Any) -> OAuthProvider:
    return OAuthProvider(SERVER, random_bytes=counter_random(), **kw)


def test_client_credentials_with_client_secret_basic() -> None:
    server = Server(
        grant_types_supported=["client_credentials"],
        token_endpoint_auth_methods_supported=["client_secret_basic"],
    )
    p = provider(grant="client_credentials", client_info=ClientInfo("svc", "s3cret", issuer=AS))
    assert server.run(p.auth_flow(REQUEST, 1000.0)).status == 200
    token_req = next(r for r in server.wire if r.url == f"{AS}/token")
    f = form(token_req)
    assert f["grant_type"] == "client_credentials" and f["resource"] == SERVER
    assert "client_secret" not in f
    assert token_req.header("Authorization") == "Basic " + base64.b64encode(b"svc:s3cret").decode()
    assert not [r for r in server.wire if "authorize" in r.url]


def test_client_credentials_without_credentials_for_the_issuer_is_refused() -> None:
    from mcp_proto.oauth import OAuthRegistrationError

    server = Server()
    p = provider(
        grant="client_credentials",
        client_info=ClientInfo("svc", "s", issuer="https://other.example"),
    )
    with pytest.raises(OAuthRegistrationError):
        server.run(p.auth_flow(REQUEST, 1000.0))
    assert not [r for r in server.wire if r.url.endswith("/token")]


def test_private_key_jwt_assertion_is_signed_and_names_the_client() -> None:
    key = JoseKey.generate("ES256")
    server = Server(
        token_endpoint_auth_methods_supported=["private_key_jwt"],
        token_endpoint_auth_signing_alg_values_supported=["ES256"],
    )
    p = provider(
        grant="client_credentials", client_key=key, client_info=ClientInfo("svc", issuer=AS)
    )
    assert server.run(p.auth_flow(REQUEST, 1000.0)).status == 200
    f = server.issued[0]["form"]
    assert f["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    header, claims = verify(f["client_assertion"], key.public_jwk())
    assert header["alg"] == "ES256"
    assert claims["iss"] == claims["sub"] == "svc" and claims["aud"] == AS
    assert claims["iat"] == 1000 and claims["exp"] == 1060 and claims["jti"]
    private = key._key.as_dict(private=True)["d"]
    assert "d" not in key.public_jwk() and private not in repr(key)


def test_private_key_jwt_from_a_pem_key() -> None:
    generated = JoseKey.generate("ES256")
    pem = generated._key.as_pem(private=True)
    key = JoseKey.from_pem(pem, "ES256", kid="k1")
    server = Server(token_endpoint_auth_methods_supported=["private_key_jwt"])
    p = provider(
        grant="client_credentials", client_key=key, client_info=ClientInfo("svc", issuer=AS)
    )
    server.run(p.auth_flow(REQUEST, 1000.0))
    header, _ = verify(server.issued[0]["form"]["client_assertion"], generated.public_jwk())
    assert header["kid"] == "k1"


def dpop_provider(**kw: Any) -> tuple[OAuthProvider, JoseKey]:
    key = JoseKey.generate("ES256")
    p = provider(
        grant="client_credentials",
        dpop_key=key,
        client_info=ClientInfo("svc", "s", issuer=AS),
        **kw,
    )
    return p, key


def test_dpop_binds_the_token_and_proves_each_request() -> None:
    server = Server(dpop_signing_alg_values_supported=["ES256"])
    server.token_type = "DPoP"
    p, key = dpop_provider()
    assert server.run(p.auth_flow(REQUEST, 1000.0)).status == 200
    header, claims = verify(server.issued[0]["dpop"], key.public_jwk())
    assert header["typ"] == "dpop+jwt" and header["jwk"] == key.public_jwk()
    assert claims["htm"] == "POST" and claims["htu"] == f"{AS}/token" and "ath" not in claims
    last = server.wire[-1]
    assert last.header("Authorization") == "DPoP token-1" and last.header("DPoP")
    assert p.current_token() is not None and p.current_token().token_type == "DPoP"  # type: ignore[union-attr]


def test_dpop_nonces_from_the_as_and_the_resource_are_honoured_once() -> None:
    server = Server(dpop_signing_alg_values_supported=["ES256"])
    server.token_type = "DPoP"
    server.as_nonce, server.rs_nonce = "as-nonce", "rs-nonce"
    p, key = dpop_provider()
    assert server.run(p.auth_flow(REQUEST, 1000.0)).status == 200
    token_posts = [r for r in server.wire if r.url == f"{AS}/token"]
    assert len(token_posts) == 2  # the first refused with use_dpop_nonce
    _, claims = verify(token_posts[1].header("DPoP") or "", key.public_jwk())
    assert claims["nonce"] == "as-nonce"
    resources = [r for r in server.wire if r.purpose == "resource"]
    assert len(resources) == 3  # no token, a proof without nonce, a proof with it
    _, claims = verify(resources[-1].header("DPoP") or "", key.public_jwk())
    assert claims["nonce"] == "rs-nonce"
    jtis = {
        verify(r.header("DPoP") or "", key.public_jwk())[1]["jti"]
        for r in [*token_posts, *resources[1:]]
    }
    assert len(jtis) == 4  # a fresh jti per proof


def test_a_bearer_token_under_dpop_is_refused() -> None:
    server = Server(dpop_signing_alg_values_supported=["ES256"])
    server.token_type = "Bearer"
    p, _ = dpop_provider()
    with pytest.raises(OAuthTokenError) as info:
        server.run(p.auth_flow(REQUEST, 1000.0))
    assert info.value.reason == "token_type"


@pytest.mark.parametrize("algs", [None, [], ["none"], ["RS256"]])
def test_dpop_is_not_used_when_the_as_does_not_offer_the_keys_algorithm(
    algs: list[str] | None,
) -> None:
    server = Server(**({"dpop_signing_alg_values_supported": algs} if algs is not None else {}))
    p, _ = dpop_provider()
    assert server.run(p.auth_flow(REQUEST, 1000.0)).status == 200
    assert server.issued[0]["dpop"] is None
    assert server.wire[-1].header("Authorization") == "Bearer token-1"


def test_jwt_bearer_grant_presents_the_hosts_assertion() -> None:
    server = Server(grant_types_supported=["urn:ietf:params:oauth:grant-type:jwt-bearer"])
    p = provider(grant="jwt_bearer")
    flow = p.auth_flow(REQUEST, 1000.0)
    assert server.run(flow, {"jwt": "workload.jwt.value"}).status == 200
    f = server.issued[0]["form"]
    assert f["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert f["assertion"] == "workload.jwt.value" and f["resource"] == SERVER


def test_jwt_bearer_errors_surface_without_retrying() -> None:
    server = Server()
    server.token_error = {"error": "invalid_grant"}
    p = provider(grant="jwt_bearer")
    with pytest.raises(OAuthTokenError) as info:
        server.run(p.auth_flow(REQUEST, 1000.0), {"jwt": "expired.jwt"})
    assert info.value.error == "invalid_grant"
    assert len([r for r in server.wire if r.url.endswith("/token")]) == 1


def test_enterprise_managed_authorization_exchanges_then_presents_the_id_jag() -> None:
    server = Server(token_endpoint_auth_methods_supported=["client_secret_basic"])
    idp = EnterpriseIdP(IDP, f"{IDP}/token", "idp-client", "idp-secret")
    p = provider(
        grant="enterprise",
        enterprise=idp,
        client_info=ClientInfo("mcp-client", "mcp-secret", issuer=AS),
    )
    assert server.run(p.auth_flow(REQUEST, 1000.0), {"id_token": "the-id-token"}).status == 200
    exchange = next(r for r in server.wire if r.url == f"{IDP}/token")
    f = form(exchange)
    assert f["grant_type"] == "urn:ietf:params:oauth:grant-type:token-exchange"
    assert f["requested_token_type"] == "urn:ietf:params:oauth:token-type:id-jag"
    assert f["subject_token_type"] == "urn:ietf:params:oauth:token-type:id_token"
    assert f["audience"] == AS and f["resource"] == SERVER
    assert (
        exchange.header("Authorization")
        == "Basic " + base64.b64encode(b"idp-client:idp-secret").decode()
    )
    grant = server.issued[0]["form"]
    assert (
        grant["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
        and grant["assertion"] == "the-id-jag"
    )
    as_req = next(r for r in server.wire if r.url == f"{AS}/token")
    assert (
        as_req.header("Authorization")
        == "Basic " + base64.b64encode(b"mcp-client:mcp-secret").decode()
    )
