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

import builtins

from ..errors import ConnectionError

__all__ = [
    "OAuthCallbackError",
    "OAuthCallbackPortInUseError",
    "OAuthCallbackTimeoutError",
    "OAuthDiscoveryError",
    "OAuthError",
    "OAuthRegistrationError",
    "OAuthStorageError",
    "OAuthTokenError",
    "UnsafeURLError",
    "safe_error_code",
]

#: The registered OAuth error codes (RFC 6749 §§ 4.1.2.1, 5.2; RFC 6750 § 3.1; RFC 7591
#: § 3.2.2; RFC 8628 § 3.5; RFC 8707 § 2; RFC 9449 § 12; OIDC Core § 3.1.2.6).
KNOWN_ERROR_CODES = frozenset(
    {
        "invalid_request",
        "invalid_client",
        "invalid_grant",
        "unauthorized_client",
        "unsupported_grant_type",
        "invalid_scope",
        "access_denied",
        "unsupported_response_type",
        "server_error",
        "temporarily_unavailable",
        "invalid_token",
        "insufficient_scope",
        "invalid_redirect_uri",
        "invalid_client_metadata",
        "invalid_software_statement",
        "unapproved_software_statement",
        "authorization_pending",
        "slow_down",
        "expired_token",
        "invalid_target",
        "invalid_dpop_proof",
        "use_dpop_nonce",
        "interaction_required",
        "login_required",
        "account_selection_required",
        "consent_required",
        "invalid_request_uri",
        "invalid_request_object",
        "request_not_supported",
        "request_uri_not_supported",
        "registration_not_supported",
    }
)


def safe_error_code(value: object) -> str | None:
    """An OAuth ``error`` code a peer sent, when it is one of the registered codes;
    else ``None``. Only such a code may appear in a message: a peer could otherwise
    echo anything — a token it was sent, say — into the client's logs."""
    if isinstance(value, str) and value in KNOWN_ERROR_CODES:
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


class OAuthCallbackPortInUseError(OAuthCallbackError):
    """``BrowserOAuth`` could not listen on its callback port: another process holds
    it. Nothing was sent: the listener opens before discovery starts (AUTH-2)."""

    reason = "port_in_use"


class OAuthCallbackTimeoutError(OAuthCallbackError, builtins.TimeoutError):
    """``BrowserOAuth`` waited its ``timeout`` and no authorization response arrived
    (AUTH-2); its listener is closed. Also a builtin ``TimeoutError``, as
    ``RequestTimeoutError`` is."""

    reason = "timeout"


class OAuthTokenError(OAuthError):
    """The token endpoint refused the request, or its response was refused (no
    ``access_token``, a ``token_type`` the client does not understand, too large)."""

    reason = "token"


class OAuthStorageError(OAuthError):
    """The storage backend could not keep what the flow needs (AUTH-21)."""

    reason = "storage"
