"""The decision tables, pure: scope selection and union (AUTH-13, AUTH-25, AUTH-36),
registration priority (AUTH-19), token expiry (AUTH-9, AUTH-34), PKCE (RFC 7636)."""

from __future__ import annotations

import base64
import hashlib

import pytest

from mcp_proto.oauth import PKCE, ClientInfo, MemoryStorage, OAuthProvider, Token, select_scopes
from mcp_proto.oauth._models import ServerMetadata

from ._fake import counter_random

# (challenge, configured, prm scopes_supported, previous, AS scopes_supported) -> scope
SCOPE_TABLE = [
    ("a", "", ["x", "y"], "", None, "a"),
    ("", "c", ["x", "y"], "", None, "c"),
    ("", "", ["x", "y"], "", None, "x y"),
    ("", "", None, "", None, ""),
    ("", "", [], "", None, ""),
    ("files:write", "", None, "files:read", None, "files:read files:write"),
    ("files:read", "", None, "files:read", None, "files:read"),
    ("b a", "", None, "a c", None, "a c b"),
    ("mcp", "", None, "", ["mcp", "offline_access"], "mcp offline_access"),
    ("", "", None, "", ["offline_access"], ""),  # nothing requested: no lone offline_access
    ("mcp offline_access", "", None, "", ["mcp"], "mcp"),  # not offered: removed
    ("mcp", "", None, "offline_access", None, "mcp"),
]


@pytest.mark.parametrize(
    ("challenge", "configured", "prm", "previous", "offered", "want"), SCOPE_TABLE
)
def test_scope_table(
    challenge: str,
    configured: str,
    prm: list[str] | None,
    previous: str,
    offered: list[str] | None,
    want: str,
) -> None:
    got = select_scopes(
        challenge=challenge.split(),
        configured=configured.split(),
        resource_scopes=prm,
        previous=previous.split(),
        server_scopes=offered,
    )
    assert " ".join(got) == want


def test_no_offline_access_when_refresh_is_not_wanted() -> None:
    assert select_scopes(
        challenge=["mcp"], server_scopes=["offline_access"], want_refresh=False
    ) == ("mcp",)


AS = "https://as.example.com"
CIMD = "https://app.example.com/client.json"


def md(*, cimd: bool = False, registration: bool = True) -> ServerMetadata:
    return ServerMetadata(
        AS,
        f"{AS}/authorize",
        f"{AS}/token",
        registration_endpoint=f"{AS}/register" if registration else None,
        client_id_metadata_document_supported=cimd,
        code_challenge_methods_supported=("S256",),
    )


# (pre-registered for this AS, earlier dynamic registration, cimd configured,
#  AS supports cimd) -> the registration used
PRIORITY = [
    (True, True, True, True, "pre-registered"),
    (True, False, False, False, "pre-registered"),
    (False, True, True, True, "cimd"),
    (False, False, True, True, "cimd"),
    (False, True, True, False, "dynamic"),
    (False, True, False, True, "dynamic"),
    (False, False, True, False, "register"),
    (False, False, False, False, "register"),
]


@pytest.mark.parametrize(("pre", "dynamic", "cimd", "supported", "want"), PRIORITY)
def test_registration_priority(
    pre: bool, dynamic: bool, cimd: bool, supported: bool, want: str
) -> None:
    storage = MemoryStorage()
    p = OAuthProvider(
        "https://mcp.example.com/mcp",
        random_bytes=counter_random(),
        storage=storage,
        client_id_metadata_url=CIMD if cimd else None,
        client_info=ClientInfo("pre", "s", issuer=AS) if pre else None,
    )
    if dynamic:
        storage.set_client_info(p.server_url, ClientInfo("dyn", issuer=AS, source="dynamic"))
    flow = p._client_for(md(cimd=supported))
    try:
        effect = flow.send(None)
    except StopIteration as stop:
        assert stop.value.source == want
        return
    assert want == "register" and effect.kind == "deprecation"  # DCR: notice, then POST
    assert flow.send(None).purpose == "registration"


def test_a_registration_for_another_issuer_is_not_reused() -> None:
    storage = MemoryStorage()
    p = OAuthProvider("https://mcp.example.com/mcp", random_bytes=counter_random(), storage=storage)
    storage.set_client_info(
        p.server_url, ClientInfo("old", issuer="https://old-as.example.com", source="dynamic")
    )
    flow = p._client_for(md())
    assert flow.send(None).kind == "deprecation"  # a new registration, not "old"


@pytest.mark.parametrize(
    ("expires_at", "now", "expired", "soon"),
    [
        (None, 10**9, False, False),
        (1000.0, 939.0, False, False),
        (1000.0, 940.0, False, True),
        (1000.0, 999.9, False, True),
        (1000.0, 1000.0, True, True),
    ],
)
def test_token_expiry(expires_at: float | None, now: float, expired: bool, soon: bool) -> None:
    token = Token("at", expires_at=expires_at)
    assert token.is_expired(now) is expired and token.expires_soon(now) is soon


def test_token_round_trip_and_header() -> None:
    token = Token("at", scope="a b a", refresh_token="rt", issuer=AS)
    assert Token.from_dict(token.to_dict()) == token
    assert token.scopes == ("a", "b") and token.authorization_header() == "Bearer at"
    assert Token("at", token_type="DPoP").authorization_header() == "DPoP at"
    shown = repr(Token("secret-at", refresh_token="secret-rt"))
    assert "secret-at" not in shown and "secret-rt" not in shown


def test_pkce_s256_matches_rfc_7636_appendix_b() -> None:
    octets = bytes(
        [116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186,
         22, 212, 37, 77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121]
    )  # fmt: skip
    pkce = PKCE.from_random(octets)
    assert pkce.verifier == "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    assert pkce.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    digest = hashlib.sha256(pkce.verifier.encode()).digest()
    assert base64.urlsafe_b64encode(digest).rstrip(b"=").decode() == pkce.challenge


def test_the_client_id_metadata_document_names_itself() -> None:
    p = OAuthProvider(
        "https://mcp.example.com/mcp",
        random_bytes=counter_random(),
        client_id_metadata_url=CIMD,
        client_metadata={"client_name": "My App", "client_id": "ignored"},
    )
    doc = p.client_id_metadata_document()
    assert doc["client_id"] == CIMD and doc["client_name"] == "My App"
    assert doc["redirect_uris"] == ["http://localhost:8080/callback"]
    assert "refresh_token" in doc["grant_types"] and doc["token_endpoint_auth_method"] == "none"
    with pytest.raises(ValueError):
        OAuthProvider(
            "https://mcp.example.com/mcp", random_bytes=counter_random()
        ).client_id_metadata_document()
