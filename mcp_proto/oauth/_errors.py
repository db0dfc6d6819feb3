"""The OAuth errors: each a ``ConnectionError`` (REQUIREMENTS.md §B: "authorization
failed", "pre-registered OAuth creds without issuer"), so ``except ConnectionError``
still catches every authorization failure.

Messages are one line, written here, and never carry a secret (token, code, verifier,
client secret, private key) nor peer text: what a peer said (an ``error_description``)
is kept in attributes for the host to show if it chooses. ``reason`` is a stable code
for programs; ``url`` the URL the error is about, when there is one (never a URL that
carries a secret: callbacks and authorization URLs are not kept).
"""

from __future__ import annotations

import re

from ..errors import ConnectionError

__all__ = [
    "OAuthCallbackError",
    "OAuthDiscoveryError",
    "OAuthError",
    "OAuthRegistrationError",
    "OAuthStorageError",
    "OAuthTokenError",
    "UnsafeURLError",
    "safe_error_code",
]

_ERROR_CODE = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


def safe_error_code(value: object) -> str | None:
    """An OAuth ``error`` code a peer sent, when it is a short token (RFC 6749 § 5.2:
    ``error`` is ASCII without quotes or backslashes); else ``None``. Only such a code
    may appear in a message."""
    if isinstance(value, str) and _ERROR_CODE.fullmatch(value):
        return value
    return None


class OAuthError(ConnectionError):
    """Base of the OAuth errors. ``reason``: a stable code (``"pkce_unsupported"``...)."""

    reason: str = "oauth"

    def __init__(
        self,
        message: str,
        *,
        reason: str | None = None,
        url: str | None = None,
        error: str | None = None,
        error_description: str | None = None,
    ) -> None:
        super().__init__(message)
        if reason is not None:
            self.reason = reason
        self.url = url
        #: The peer's OAuth ``error`` code and description, when it sent them.
        self.error = error
        self.error_description = error_description


class UnsafeURLError(OAuthError):
    """A URL a peer advertised (or one configured) breaks the URL rules (AUTH-7, AUTH-11,
    AUTH-28, AUTH-30): not HTTPS, a literal loopback/private/link-local host, userinfo...
    Nothing was fetched from it."""

    reason = "unsafe_url"


class OAuthDiscoveryError(OAuthError):
    """Protected-resource or authorization-server metadata could not be found, read or
    trusted (RFC 9728, RFC 8414): missing, malformed, too large, naming another
    resource or another issuer, or without PKCE S256."""

    reason = "discovery"


class OAuthRegistrationError(OAuthError):
    """No client registration is usable for the authorization server: pre-registered
    credentials that name no issuer (AUTH-18), no registration mechanism, or a
    registration response that is refused or malformed."""

    reason = "registration"


class OAuthCallbackError(OAuthError):
    """The authorization response (the redirect's parameters) was refused: a repeated
    parameter, an unknown ``state``, an ``iss`` that is not the recorded issuer
    (RFC 9207), no ``code``, or an ``error`` the authorization server reported."""

    reason = "callback"


class OAuthTokenError(OAuthError):
    """The token endpoint refused the request, or its response was refused (no
    ``access_token``, a ``token_type`` the client does not understand, too large)."""

    reason = "token"


class OAuthStorageError(OAuthError):
    """The storage backend could not keep what the flow needs (AUTH-21)."""

    reason = "storage"
