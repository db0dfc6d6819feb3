"""The OAuth values (§E5: ``Token``, ``ClientInfo``, ``ServerMetadata``,
``ResourceMetadata``, ``PKCE``, plus the per-request ``AuthorizationRecord``) and the
parsers of every document a peer sends (metadata, token and registration responses).

Each parser takes the response body as bytes, refuses more than ``max_bytes`` before
decoding (a 100 MB or endless document costs no more than the bound: the driver reads
at most ``max_bytes + 1``), and returns a value or raises a typed error; a peer's
garbage never escapes as ``KeyError``/``TypeError``. Secrets (access and refresh
tokens, client secrets, code verifiers) are left out of every ``repr``.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from ._errors import (
    OAuthDiscoveryError,
    OAuthError,
    OAuthRegistrationError,
    OAuthTokenError,
    safe_error_code,
)

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "PKCE",
    "AuthorizationRecord",
    "ClientInfo",
    "ResourceMetadata",
    "ServerMetadata",
    "Token",
    "b64url",
    "parse_registration_response",
    "parse_resource_metadata",
    "parse_server_metadata",
    "parse_token_response",
]

#: Default bound of any OAuth document a peer sends (the largest real OpenID
#: configurations are a few KiB).
MAX_DOCUMENT_BYTES: Final = 256 * 1024

#: A token expiring within this many seconds is refreshed before use (AUTH-9).
EXPIRY_MARGIN: Final = 60.0


def b64url(data: bytes) -> str:
    """Base64url without padding (RFC 7636 § 4.1, RFC 7515 § 2)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _document(body: bytes, max_bytes: int, what: str, error: type[OAuthError]) -> dict[str, Any]:
    """The JSON object of a peer document, bounded and typed."""
    if len(body) > max_bytes:
        raise error(f"the {what} is larger than {max_bytes} bytes", reason="too_large")
    try:
        obj = json.loads(body)
    except (ValueError, RecursionError):
        raise error(f"the {what} is not JSON", reason="malformed") from None
    if not isinstance(obj, dict):
        raise error(f"the {what} is not a JSON object", reason="malformed")
    return obj


def _str(obj: Mapping[str, Any], key: str) -> str | None:
    value = obj.get(key)
    return value if isinstance(value, str) and value else None


def _strs(obj: Mapping[str, Any], key: str) -> tuple[str, ...] | None:
    value = obj.get(key)
    if not isinstance(value, list):
        return None
    return tuple(v for v in value if isinstance(v, str))


# ---------------------------------------------------------------- PKCE (RFC 7636)


@dataclass(frozen=True)
class PKCE:
    """A PKCE pair (RFC 7636): ``verifier`` is 43 characters of base64url (32 random
    bytes, § 4.1), ``challenge`` its S256 transform (§ 4.2)."""

    verifier: str = field(repr=False)
    challenge: str
    method: Literal["S256"] = "S256"

    @classmethod
    def from_random(cls, random32: bytes) -> PKCE:
        if len(random32) < 32:
            raise ValueError("PKCE needs 32 random bytes")
        verifier = b64url(random32[:32])
        return cls(verifier, b64url(hashlib.sha256(verifier.encode("ascii")).digest()))


# ---------------------------------------------------------------- resource metadata


@dataclass(frozen=True)
class ResourceMetadata:
    """Protected resource metadata (RFC 9728 § 2); ``url``: where it was read."""

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None = None
    bearer_methods_supported: tuple[str, ...] | None = None
    url: str | None = None


def parse_resource_metadata(
    body: bytes, *, url: str | None = None, max_bytes: int = MAX_DOCUMENT_BYTES
) -> ResourceMetadata:
    """A PRM document. ``resource`` is REQUIRED (RFC 9728 § 2) and MCP requires at
    least one ``authorization_servers`` entry ("Authorization Server Location")."""
    obj = _document(body, max_bytes, "protected resource metadata", OAuthDiscoveryError)
    resource = _str(obj, "resource")
    if resource is None:
        raise OAuthDiscoveryError(
            "the protected resource metadata has no resource", reason="malformed", url=url
        )
    servers = _strs(obj, "authorization_servers")
    if not servers:
        raise OAuthDiscoveryError(
            "the protected resource metadata names no authorization server",
            reason="malformed",
            url=url,
        )
    return ResourceMetadata(
        resource=resource,
        authorization_servers=servers,
        scopes_supported=_strs(obj, "scopes_supported"),
        bearer_methods_supported=_strs(obj, "bearer_methods_supported"),
        url=url,
    )


# ---------------------------------------------------------------- AS metadata


@dataclass(frozen=True)
class ServerMetadata:
    """Authorization server metadata (RFC 8414 § 2, OpenID Connect Discovery § 3).
    ``source``: ``"oauth"`` or ``"oidc"`` (the well-known URI it came from), or
    ``"fallback"`` (the 2025-03-26 default endpoints, no document)."""

    issuer: str
    authorization_endpoint: str | None
    token_endpoint: str
    registration_endpoint: str | None = None
    scopes_supported: tuple[str, ...] | None = None
    response_types_supported: tuple[str, ...] | None = None
    grant_types_supported: tuple[str, ...] | None = None
    code_challenge_methods_supported: tuple[str, ...] | None = None
    token_endpoint_auth_methods_supported: tuple[str, ...] | None = None
    token_endpoint_auth_signing_alg_values_supported: tuple[str, ...] | None = None
    dpop_signing_alg_values_supported: tuple[str, ...] | None = None
    authorization_response_iss_parameter_supported: bool = False
    client_id_metadata_document_supported: bool = False
    source: str = "oauth"

    @property
    def supports_s256(self) -> bool:
        """PKCE S256 advertised (AUTH-4). The 2025-03-26 fallback has no document to
        advertise it; that revision made PKCE mandatory, so S256 is assumed there."""
        if self.source == "fallback":
            return True
        return "S256" in (self.code_challenge_methods_supported or ())

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.__dict__.items()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ServerMetadata:
        names = cls.__dataclass_fields__
        kw: dict[str, Any] = {
            k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in names
        }
        return cls(**kw)


def parse_server_metadata(
    body: bytes,
    *,
    expected_issuer: str,
    source: str = "oauth",
    url: str | None = None,
    max_bytes: int = MAX_DOCUMENT_BYTES,
) -> ServerMetadata:
    """An authorization server metadata document, accepted only when its ``issuer`` is
    identical to the issuer the well-known URL was built from (RFC 8414 § 3.3, OIDC
    Discovery § 4.3; MCP "Authorization Server Metadata Discovery"): a document served
    for one issuer naming another is refused, whatever it says. Compared as strings,
    but a trailing slash on either side is tolerated: RFC 8414 builds the well-known
    URL after removing it, so ``https://as/`` and ``https://as`` name one issuer."""
    obj = _document(body, max_bytes, "authorization server metadata", OAuthDiscoveryError)
    issuer = _str(obj, "issuer")
    if issuer is None or issuer.rstrip("/") != expected_issuer.rstrip("/"):
        raise OAuthDiscoveryError(
            "the authorization server metadata names another issuer than the one it "
            "was fetched for",
            reason="issuer_mismatch",
            url=url,
        )
    token_endpoint = _str(obj, "token_endpoint")
    if token_endpoint is None:
        raise OAuthDiscoveryError(
            "the authorization server metadata has no token_endpoint", reason="malformed", url=url
        )
    return ServerMetadata(
        issuer=issuer,
        authorization_endpoint=_str(obj, "authorization_endpoint"),
        token_endpoint=token_endpoint,
        registration_endpoint=_str(obj, "registration_endpoint"),
        scopes_supported=_strs(obj, "scopes_supported"),
        response_types_supported=_strs(obj, "response_types_supported"),
        grant_types_supported=_strs(obj, "grant_types_supported"),
        code_challenge_methods_supported=_strs(obj, "code_challenge_methods_supported"),
        token_endpoint_auth_methods_supported=_strs(obj, "token_endpoint_auth_methods_supported"),
        token_endpoint_auth_signing_alg_values_supported=_strs(
            obj, "token_endpoint_auth_signing_alg_values_supported"
        ),
        dpop_signing_alg_values_supported=_strs(obj, "dpop_signing_alg_values_supported"),
        authorization_response_iss_parameter_supported=(
            obj.get("authorization_response_iss_parameter_supported") is True
        ),
        client_id_metadata_document_supported=(
            obj.get("client_id_metadata_document_supported") is True
        ),
        source=source,
    )


# ---------------------------------------------------------------- client registration


@dataclass(frozen=True)
class ClientInfo:
    """A client registration with one authorization server (§E5 ``ClientInfo``).

    ``issuer``: the authorization server that issued it (AUTH-16..18); ``None`` only for
    a Client ID Metadata Document id, which is portable. ``source``: ``"pre-registered"``,
    ``"cimd"`` or ``"dynamic"``. ``private_key_pem``: the key of ``private_key_jwt``
    (PEM, never shown)."""

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    issuer: str | None = None
    token_endpoint_auth_method: str | None = None
    redirect_uris: tuple[str, ...] = ()
    client_secret_expires_at: float | None = None
    source: str = "pre-registered"
    private_key_pem: str | None = field(default=None, repr=False)
    signing_alg: str | None = None
    key_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.__dict__.items()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClientInfo:
        names = cls.__dataclass_fields__
        kw: dict[str, Any] = {
            k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in names
        }
        return cls(**kw)


def parse_registration_response(
    body: bytes, *, issuer: str, status: int = 201, max_bytes: int = MAX_DOCUMENT_BYTES
) -> ClientInfo:
    """A dynamic client registration response (RFC 7591 § 3.2.1; errors § 3.2.2),
    bound to the issuer it was registered with."""
    obj = _document(body, max_bytes, "registration response", OAuthRegistrationError)
    if not 200 <= status < 300 or "error" in obj:
        code = safe_error_code(obj.get("error"))
        raise OAuthRegistrationError(
            f"the authorization server refused the registration (HTTP {status}"
            + (f", {code})" if code else ")"),
            reason="refused",
            error=code,
            error_description=_str(obj, "error_description"),
        )
    client_id = _str(obj, "client_id")
    if client_id is None:
        raise OAuthRegistrationError(
            "the registration response has no client_id", reason="malformed"
        )
    secret = _str(obj, "client_secret")
    expires = obj.get("client_secret_expires_at")
    return ClientInfo(
        client_id=client_id,
        client_secret=secret,
        issuer=issuer,
        token_endpoint_auth_method=_str(obj, "token_endpoint_auth_method"),
        redirect_uris=_strs(obj, "redirect_uris") or (),
        client_secret_expires_at=(
            float(expires)
            if isinstance(expires, (int, float)) and not isinstance(expires, bool) and expires > 0
            else None
        ),
        source="dynamic",
    )


# ---------------------------------------------------------------- tokens


@dataclass(frozen=True)
class Token:
    """An access token (§E5 ``Token``, AUTH-34). ``expires_at``: the time (on the clock
    the host passes as ``now``) it expires, ``None`` when the server did not say;
    ``issuer``: the authorization server that issued it (one token per AS, AUTH-20);
    ``resource``: the RFC 8707 resource it was requested for; ``requested_scope``: what
    the client asked for (the step-up union survives a restart, AUTH-25)."""

    access_token: str = field(repr=False)
    token_type: str = "Bearer"
    expires_at: float | None = None
    scope: str | None = None
    refresh_token: str | None = field(default=None, repr=False)
    issuer: str | None = None
    resource: str | None = None
    requested_scope: str | None = None

    def is_expired(self, now: float) -> bool:
        return self.expires_at is not None and now >= self.expires_at

    def expires_soon(self, now: float, margin: float = EXPIRY_MARGIN) -> bool:
        return self.expires_at is not None and now >= self.expires_at - margin

    @property
    def scopes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.scope.split())) if self.scope else ()

    def authorization_header(self) -> str:
        """The ``Authorization`` value (RFC 6750 § 2.1; RFC 9449 § 7.1 for DPoP)."""
        scheme = "DPoP" if self.token_type.lower() == "dpop" else "Bearer"
        return f"{scheme} {self.access_token}"

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Token:
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in names})

    def with_(self, **changes: Any) -> Token:
        return replace(self, **changes)


#: Registered access token types (IANA "OAuth Access Token Types").
_TOKEN_TYPES: Final = frozenset({"bearer", "dpop", "mac", "n_a", "pop"})


def token_type_ok(token_type: object, *, dpop: bool) -> bool:
    """Only a type the client understands may be presented (RFC 6749 § 7.1, AUTH-27):
    ``Bearer`` (case-insensitive), or ``DPoP`` when the client bound the token with
    DPoP (RFC 9449 § 5). Read back from storage through the same check."""
    if not isinstance(token_type, str):
        return False
    wanted = "dpop" if dpop else "bearer"
    return token_type.lower() == wanted


def parse_token_response(
    body: bytes,
    *,
    status: int,
    now: float,
    issuer: str | None,
    resource: str | None,
    requested_scope: str | None = None,
    dpop: bool = False,
    previous_refresh_token: str | None = None,
    max_bytes: int = MAX_DOCUMENT_BYTES,
) -> Token:
    """A token endpoint response (RFC 6749 § 5.1; errors § 5.2).

    ``token_type`` is REQUIRED and has no default (§ 5.1): a response without one, or
    with one the client does not understand (``mac``...), is refused (AUTH-27). On a
    refresh that returns no new refresh token the old one is kept (RFC 6749 § 6)."""
    obj = _document(body, max_bytes, "token response", OAuthTokenError)
    if not 200 <= status < 300 or "error" in obj:
        code = safe_error_code(obj.get("error"))
        raise OAuthTokenError(
            f"the token endpoint refused the request (HTTP {status}"
            + (f", {code})" if code else ")"),
            reason="refused",
            error=code,
            error_description=_str(obj, "error_description"),
        )
    access = _str(obj, "access_token")
    if access is None:
        raise OAuthTokenError("the token response has no access_token", reason="malformed")
    token_type = obj.get("token_type")
    if not token_type_ok(token_type, dpop=dpop):
        # Only a registered type is named in the message (peer text never is).
        known = isinstance(token_type, str) and token_type.lower() in _TOKEN_TYPES
        shown = repr(token_type) if known else "(unrecognised)"
        raise OAuthTokenError(
            "the token response has no token_type"
            if token_type is None
            else f"the token response's token_type {shown} is not "
            + ("DPoP" if dpop else "Bearer"),
            reason="token_type",
        )
    expires_in = obj.get("expires_in")
    if isinstance(expires_in, str) and expires_in.isdigit():
        expires_in = int(expires_in)  # a common server mistake, harmless to accept
    expires_at = (
        now + float(expires_in)
        if isinstance(expires_in, (int, float))
        and not isinstance(expires_in, bool)
        and 0 <= expires_in < 10**10
        else None
    )
    scope = obj.get("scope")
    return Token(
        access_token=access,
        token_type="DPoP" if dpop else "Bearer",
        expires_at=expires_at,
        scope=scope if isinstance(scope, str) else requested_scope,
        refresh_token=_str(obj, "refresh_token") or previous_refresh_token,
        issuer=issuer,
        resource=resource,
        requested_scope=requested_scope,
    )


# ---------------------------------------------------------------- authorization requests


@dataclass(frozen=True)
class AuthorizationRecord:
    """Everything one authorization request needs at its callback, written together
    under its ``state`` (AUTH-24; MCP "Authorization Response Validation": the issuer
    is recorded in the same per-request record as the PKCE verifier). ``created_at``
    lets the host expire abandoned records."""

    state: str = field(repr=False)
    code_verifier: str = field(repr=False)
    issuer: str
    iss_required: bool
    client_id: str
    redirect_uri: str
    resource: str
    scope: str | None
    token_endpoint: str
    server_url: str
    created_at: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AuthorizationRecord:
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in names})
