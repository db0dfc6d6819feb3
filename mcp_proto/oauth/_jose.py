"""JWTs the client signs: ``private_key_jwt`` client assertions (RFC 7523 § 2.2, RFC 7521
§ 4.2) and DPoP proofs (RFC 9449 § 4). The claims are built here, from the ``now`` and
random bytes the host injects; signing goes through a :class:`JWSSigner`, so key
material never has to live in the core (a host may sign with a hardware key).

:class:`JoseKey` is the ready-made signer, on joserfc (see docs/oauth.md for why
joserfc and not PyJWT). joserfc is the ``oauth`` extra and is imported only when a key
is made, so a client that never uses DPoP or ``private_key_jwt`` never loads it nor
``cryptography``. Signature nonces (ECDSA) come from OpenSSL inside ``cryptography``:
nothing protocol-visible depends on them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Final, Protocol, runtime_checkable
from urllib.parse import urlsplit, urlunsplit

from ._models import b64url

__all__ = [
    "CLIENT_ASSERTION_TYPE",
    "JWT_BEARER_GRANT",
    "JWSSigner",
    "JoseKey",
    "client_assertion",
    "dpop_htu",
    "dpop_proof",
]

CLIENT_ASSERTION_TYPE: Final = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
JWT_BEARER_GRANT: Final = "urn:ietf:params:oauth:grant-type:jwt-bearer"

#: How long a client assertion is valid (RFC 7523 § 3: "a reasonably short" time).
ASSERTION_LIFETIME: Final = 60


@runtime_checkable
class JWSSigner(Protocol):
    """A signing key: ``alg`` (a JWS algorithm such as ``"ES256"``), its public JWK
    (for DPoP's ``jwk`` header) and ``sign``, which returns a compact JWS of
    ``claims`` under ``header`` (``alg`` included by the caller)."""

    alg: str
    kid: str | None

    def public_jwk(self) -> dict[str, Any]: ...
    def sign(self, header: Mapping[str, Any], claims: Mapping[str, Any]) -> str: ...


class JoseKey:
    """A :class:`JWSSigner` over a joserfc key (EC, RSA or OKP).

    ``JoseKey.from_pem(pem, alg="ES256")`` for a ``private_key_jwt`` key the host
    registered; ``JoseKey.generate("ES256")`` for a DPoP key (RFC 9449 § 2: a fresh
    key pair per client is fine). The private part never appears in a ``repr``."""

    def __init__(self, key: Any, alg: str, kid: str | None = None) -> None:
        self._key = key
        self.alg = alg
        self.kid = kid

    def __repr__(self) -> str:
        return f"JoseKey(alg={self.alg!r}, kid={self.kid!r})"

    @classmethod
    def from_pem(cls, pem: str | bytes, alg: str = "ES256", kid: str | None = None) -> JoseKey:
        from joserfc.jwk import JWKRegistry

        key_type = {"E": "EC", "R": "RSA", "P": "RSA"}.get(alg[:1], "OKP")
        return cls(JWKRegistry.import_key(pem, key_type), alg, kid)

    @classmethod
    def from_jwk(cls, jwk: Mapping[str, Any], alg: str | None = None) -> JoseKey:
        from joserfc.jwk import JWKRegistry

        key = JWKRegistry.import_key(dict(jwk))
        chosen = alg or jwk.get("alg") or "ES256"
        return cls(key, str(chosen), jwk.get("kid"))

    @classmethod
    def generate(cls, alg: str = "ES256") -> JoseKey:
        from joserfc.jwk import ECKey, OKPKey, RSAKey

        curves = {"ES256": "P-256", "ES384": "P-384", "ES512": "P-521"}
        if alg in curves:
            return cls(ECKey.generate_key(curves[alg]), alg)
        if alg == "EdDSA":
            return cls(OKPKey.generate_key("Ed25519"), alg)
        return cls(RSAKey.generate_key(2048), alg)

    def public_jwk(self) -> dict[str, Any]:
        return dict(self._key.as_dict(private=False))

    def thumbprint(self) -> str:
        """RFC 7638 JWK SHA-256 thumbprint (DPoP's ``jkt``)."""
        return str(self._key.thumbprint())

    def sign(self, header: Mapping[str, Any], claims: Mapping[str, Any]) -> str:
        from joserfc import jwt

        return str(jwt.encode(dict(header), dict(claims), self._key, algorithms=[self.alg]))


def client_assertion(
    signer: JWSSigner, *, client_id: str, audience: str, now: float, jti: bytes
) -> str:
    """A ``private_key_jwt`` assertion (RFC 7523 § 3): ``iss`` = ``sub`` = the client id,
    ``aud`` the authorization server's issuer (the conformance suite, oidc-provider and
    draft-ietf-oauth-rfc7523bis all accept the issuer), short-lived, single-use ``jti``."""
    header: dict[str, Any] = {"alg": signer.alg, "typ": "JWT"}
    if signer.kid:
        header["kid"] = signer.kid
    issued = int(now)
    claims = {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": issued,
        "exp": issued + ASSERTION_LIFETIME,
        "jti": b64url(jti),
    }
    return signer.sign(header, claims)


def dpop_htu(url: str) -> str:
    """The ``htu`` of a request (RFC 9449 § 4.2): its URI without query and fragment."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def dpop_proof(
    signer: JWSSigner,
    *,
    method: str,
    url: str,
    now: float,
    jti: bytes,
    nonce: str | None = None,
    access_token: str | None = None,
) -> str:
    """A DPoP proof JWT (RFC 9449 § 4.2): ``typ`` ``dpop+jwt``, the public ``jwk`` in the
    header; ``jti``, ``htm``, ``htu``, ``iat``; the server's ``nonce`` when it gave one
    (§ 8, § 9); ``ath``, the access token's hash, on resource requests (§ 4.3)."""
    header = {"typ": "dpop+jwt", "alg": signer.alg, "jwk": signer.public_jwk()}
    claims: dict[str, Any] = {
        "jti": b64url(jti),
        "htm": method.upper(),
        "htu": dpop_htu(url),
        "iat": int(now),
    }
    if nonce is not None:
        claims["nonce"] = nonce
    if access_token is not None:
        claims["ath"] = b64url(hashlib.sha256(access_token.encode("ascii")).digest())
    return signer.sign(header, claims)
