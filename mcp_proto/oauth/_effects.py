"""What an OAuth flow asks its driver to do, and what the driver sends back.

A flow is a generator (httpx's ``Auth.auth_flow`` is the precedent): it yields one of

- :class:`HttpRequest` → the driver performs it and sends an :class:`HttpResponse`
  (reading at most ``max_response_bytes + 1`` bytes of the body, so an endless or huge
  document costs a bounded read; the flow refuses what exceeds the bound);
- :class:`OpenAuthorization` → the host opens ``url`` in a browser and sends an
  :class:`AuthorizationResponse` with what arrived at ``redirect_uri``;
- :class:`ObtainAssertion` → the host sends the JWT for a JWT bearer grant;
- :class:`Notice` → the driver logs it (a deprecation is announced once through
  :mod:`mcp_proto.deprecations`) and sends ``None``;

and returns its result (a token, the final response) or raises an ``OAuthError``.
Nothing here holds a secret in its ``repr``: request bodies (codes, verifiers,
secrets, refresh tokens), ``Authorization`` values and callback URLs are hidden.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any, TypeVar, Union

__all__ = [
    "AuthorizationResponse",
    "Flow",
    "HttpRequest",
    "HttpResponse",
    "Notice",
    "OAuthEffect",
    "ObtainAssertion",
    "OpenAuthorization",
]

T = TypeVar("T")

_SECRET_HEADERS = frozenset({"authorization", "dpop", "cookie"})


def _shown_headers(headers: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    return tuple((k, "***" if k.lower() in _SECRET_HEADERS else v) for k, v in headers)


@dataclass(frozen=True)
class HttpRequest:
    """An HTTP exchange the flow needs. ``purpose`` says which step it serves
    (``"resource"`` for the MCP request itself, ``"resource_metadata"``,
    ``"server_metadata"``, ``"registration"``, ``"token"``, ``"refresh"``);
    ``max_response_bytes`` is ``None`` only for the MCP request (its body is the
    connection machine's to read)."""

    method: str
    url: str
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = field(default=b"", repr=False)
    purpose: str = "resource"
    max_response_bytes: int | None = None

    def __repr__(self) -> str:
        return (
            f"HttpRequest({self.method} {self.url!r}, purpose={self.purpose!r}, "
            f"headers={_shown_headers(self.headers)!r}, body=<{len(self.body)} bytes>)"
        )

    def header(self, name: str) -> str | None:
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), None)

    def with_header(self, name: str, value: str | None) -> HttpRequest:
        """A copy with ``name`` set to ``value`` (removed when ``None``)."""
        lower = name.lower()
        kept = tuple((k, v) for k, v in self.headers if k.lower() != lower)
        headers = kept if value is None else (*kept, (name, value))
        return HttpRequest(
            self.method, self.url, headers, self.body, self.purpose, self.max_response_bytes
        )


@dataclass(frozen=True)
class HttpResponse:
    """What came back: status, headers and the body (at most the request's bound + 1
    bytes). ``now``: the host's clock when it arrived (``None``: the flow keeps the
    last time it was given)."""

    status: int
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = field(default=b"", repr=False)
    now: float | None = None

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (case-insensitive), or ``None``."""
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), None)


@dataclass(frozen=True)
class OpenAuthorization:
    """Send the user to ``url`` (the authorization request) and wait for the redirect
    to ``redirect_uri``. ``url`` carries ``state`` and the PKCE challenge: shown to the
    user, never logged by the core."""

    url: str = field(repr=False)
    redirect_uri: str


@dataclass(frozen=True)
class AuthorizationResponse:
    """What reached the redirect URI: the full URL (or its query string alone), so the
    flow sees every parameter, repeated ones included (AUTH-29)."""

    redirect: str = field(repr=False)
    now: float | None = None


@dataclass(frozen=True)
class ObtainAssertion:
    """The host supplies a JWT for the RFC 7523 JWT bearer grant: a workload identity
    token (workload identity federation), or an identity assertion its identity
    provider issued (enterprise-managed authorization). ``audience``: the authorization
    server's issuer, for which the assertion must be minted. The reply is the JWT as a
    string."""

    audience: str
    resource: str
    scope: str | None = None
    #: ``"jwt"``: the assertion itself; ``"id_token"``: the user's ID token from the
    #: enterprise identity provider (``audience`` is then that IdP's issuer).
    kind: str = "jwt"


@dataclass(frozen=True)
class Notice:
    """Something the host should log. ``kind``: ``"deprecation"`` (``deprecation`` is
    the :mod:`mcp_proto.deprecations` key), ``"migration"``, ``"token_discarded"``,
    ``"refresh_failed"``... ``message`` never holds a secret."""

    kind: str
    message: str
    deprecation: str | None = None


OAuthEffect = Union[HttpRequest, OpenAuthorization, ObtainAssertion, Notice]
Flow = Generator[OAuthEffect, Any, T]
