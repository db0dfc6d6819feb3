"""The state every part of :class:`OAuthProvider` shares, its storage keys, and the
small helpers of its flows (URL checks, GET requests, randomness, time).

The provider is one class assembled from mixins, one per concern: discovery
(``_discovery``), registration (``_registration``), tokens and client authentication
(``_tokens``), the grants without a browser (``_grants``) and the authorization code
flow itself (``_provider``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote, urlencode

from ..errors import ConnectionError
from ._challenge import parse_www_authenticate
from ._effects import HttpRequest
from ._jose import JWSSigner
from ._models import ResourceMetadata, ServerMetadata
from ._storage import OAuthStorage
from ._urls import check_peer_url

if TYPE_CHECKING:
    from ._grants import EnterpriseIdP

__all__ = ["ProviderCore"]


_JSON_ACCEPT: Final = ("Accept", "application/json")


_FORM: Final = ("Content-Type", "application/x-www-form-urlencoded")


def _json_object(body: bytes, max_bytes: int) -> dict[str, Any] | None:
    if len(body) > max_bytes:
        return None
    try:
        obj = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def _body_error(body: bytes) -> str | None:
    """The ``error`` of a JSON error body, or ``None``."""
    try:
        obj = json.loads(body)
    except (ValueError, RecursionError):
        return None
    error = obj.get("error") if isinstance(obj, dict) else None
    return error if isinstance(error, str) else None


def _challenge_error(www_authenticate: str | None, scheme: str) -> str | None:
    """The ``error`` parameter of the ``scheme`` challenge, or ``None``."""
    for challenge in parse_www_authenticate(www_authenticate):
        if challenge.scheme == scheme:
            return challenge.params.get("error")
    return None


def _form(params: dict[str, str | None]) -> bytes:
    return urlencode({k: v for k, v in params.items() if v is not None}, quote_via=quote).encode()


class ProviderCore:
    """Attributes and helpers shared by the provider's mixins."""

    server_url: str
    redirect_uri: str
    scope: str | None
    storage: OAuthStorage
    client_metadata: dict[str, Any]
    client_id_metadata_url: str | None
    want_refresh: bool
    max_document_bytes: int
    grant: str
    client_key: JWSSigner | None
    dpop_key: JWSSigner | None
    enterprise: EnterpriseIdP | None
    loopback_allowed: bool
    _unbound_client: bool
    _random_bytes: Callable[[int], bytes]
    _issuer: str | None
    _metadata: ServerMetadata | None
    _resource_metadata: ResourceMetadata | None
    _resource: str | None
    _requested: dict[str, tuple[str, ...]]
    _now: float
    _dpop_nonces: dict[str, str]

    def __repr__(self) -> str:
        return f"OAuthProvider({self.server_url!r}, issuer={self._issuer!r})"

    def client_registration_key(self, issuer: str) -> str:
        """The storage key of the registration with ``issuer`` (AUTH-17)."""
        return f"oauth-client:{issuer}"

    def token_key(self, issuer: str) -> str:
        """The storage key of this server's token from ``issuer`` (one per AS)."""
        return f"oauth-token:{self.server_url} {issuer}"

    @property
    def issuer(self) -> str | None:
        """The authorization server currently in use for this server, if known."""
        if self._issuer is None:
            self._load_metadata()
        return self._issuer

    @property
    def resource(self) -> str:
        """The RFC 8707 ``resource`` value: the PRM's ``resource`` exactly as published
        (the conformance suite checks it byte for byte), else the server URL."""
        return self._resource or self.server_url

    def _load_metadata(self) -> None:
        try:
            stored = self.storage.get_server_metadata(self.server_url)
            if stored and isinstance(stored.get("server"), dict):
                self._metadata = ServerMetadata.from_dict(stored["server"])
                self._issuer = self._metadata.issuer
                resource = stored.get("resource")
                self._resource = resource if isinstance(resource, str) else None
        except (TypeError, ValueError, AttributeError):
            self._metadata = None  # unreadable cache: discovery runs again

    def _peer(self, url: str, what: str) -> str:
        return check_peer_url(url, what=what, loopback_allowed=self.loopback_allowed)

    def _get(self, url: str, purpose: str) -> HttpRequest:
        return HttpRequest("GET", url, (_JSON_ACCEPT,), b"", purpose, self.max_document_bytes)

    def _random(self, n: int) -> bytes:
        data = self._random_bytes(n)
        if not isinstance(data, bytes) or len(data) < n:
            raise ConnectionError("the random source returned too few bytes")
        return data[:n]

    def _tick(self, now: float | None) -> float:
        if now is not None:
            self._now = now
        return self._now
