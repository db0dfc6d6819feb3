"""Tokens: scope selection, token requests with client authentication (AUTH-35) and
DPoP (RFC 9449), refresh (AUTH-9), and keeping one token per authorization server
(AUTH-20, AUTH-23).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Final
from urllib.parse import quote

from ._base import _FORM, _JSON_ACCEPT, _body_error, _form
from ._challenge import BearerChallenge
from ._effects import Flow, HttpRequest, HttpResponse, Notice
from ._errors import OAuthError, OAuthStorageError, OAuthTokenError
from ._jose import CLIENT_ASSERTION_TYPE, client_assertion, dpop_proof
from ._models import ClientInfo, ServerMetadata, Token, parse_token_response
from ._registration import RegistrationMixin
from ._urls import origin_of

__all__ = ["OFFLINE_ACCESS", "TokenMixin", "select_scopes"]


OFFLINE_ACCESS: Final = "offline_access"


def select_scopes(
    *,
    challenge: Iterable[str] = (),
    configured: Iterable[str] = (),
    resource_scopes: Iterable[str] | None = None,
    previous: Iterable[str] = (),
    server_scopes: Iterable[str] | None = None,
    want_refresh: bool = True,
) -> tuple[str, ...]:
    """The scopes of an authorization request (AUTH-13, AUTH-25, AUTH-36).

    The base is the challenge's scopes, else the configured ones, else the PRM's
    ``scopes_supported``, else nothing (the ``scope`` parameter is then omitted). What
    was already requested or granted with this authorization server (``previous``:
    the configured scope, the token in hand's grant, earlier requests) is kept
    alongside, so a step-up for ``files:write`` does not drop ``files:read``.
    ``offline_access`` is added when the authorization server lists it and the client
    wants refresh tokens, and removed when it does not list it (SEP-2207: a client MUST
    NOT request it then)."""
    challenge, configured = tuple(challenge), tuple(configured)
    base = challenge or configured or tuple(resource_scopes or ())
    scopes = list(dict.fromkeys([*previous, *base]))
    offered = set(server_scopes or ())
    if OFFLINE_ACCESS in scopes and OFFLINE_ACCESS not in offered:
        scopes.remove(OFFLINE_ACCESS)
    if scopes and want_refresh and OFFLINE_ACCESS in offered and OFFLINE_ACCESS not in scopes:
        scopes.append(OFFLINE_ACCESS)
    return tuple(scopes)


class TokenMixin(RegistrationMixin):
    """Obtaining, presenting, refreshing and keeping tokens."""

    def refresh(self, token: Token, now: float) -> Flow[Token | None]:
        """Exchange ``token``'s refresh token (RFC 6749 § 6, with ``resource``). On a
        refusal the token is dropped and ``None`` returned (re-authorization follows)."""
        self._now = now
        issuer = token.issuer
        self.issuer  # noqa: B018 (loads the stored metadata after a restart)
        metadata = self._metadata
        if not token.refresh_token or issuer is None or metadata is None:
            return None
        if metadata.issuer != issuer:
            return None  # never present a token to another AS than its issuer (AUTH-20)
        client = self._registration(issuer, None)
        if client is None:
            return None
        form: dict[str, str | None] = {
            "grant_type": "refresh_token",
            "refresh_token": token.refresh_token,
            "resource": token.resource or self.resource,
        }
        endpoint = self._peer(metadata.token_endpoint, "token endpoint")
        response = yield from self._post_token(endpoint, form, client, metadata, "refresh")
        try:
            fresh = parse_token_response(
                response.body,
                status=response.status,
                now=self._now,
                issuer=issuer,
                resource=token.resource,
                requested_scope=token.requested_scope,
                previous_refresh_token=token.refresh_token,
                dpop=self._dpop_active(metadata),
                max_bytes=self.max_document_bytes,
            )
        except OAuthTokenError as exc:
            self.storage.delete_token(self.token_key(issuer))
            yield Notice("refresh_failed", f"the token refresh was refused ({exc.reason})")
            return None
        if fresh.scope is None:
            fresh = fresh.with_(scope=token.scope)
        try:
            return (yield from self._keep(fresh))
        except OAuthError:
            return None

    def _post_token(
        self,
        endpoint: str,
        form: dict[str, str | None],
        client: ClientInfo | None,
        metadata: ServerMetadata,
        purpose: str,
    ) -> Flow[HttpResponse]:
        """Send a token request, with a DPoP proof when DPoP is in use; a
        ``use_dpop_nonce`` refusal (RFC 9449 § 8) is answered once with the nonce."""
        dpop = self._dpop_active(metadata)
        origin = origin_of(endpoint)
        for attempt in (1, 2):
            request = self._token_request(endpoint, form, client, metadata, purpose)
            if dpop:
                assert self.dpop_key is not None
                proof = dpop_proof(
                    self.dpop_key,
                    method="POST",
                    url=endpoint,
                    now=self._now,
                    jti=self._random(16),
                    nonce=self._dpop_nonces.get(origin),
                )
                request = request.with_header("DPoP", proof)
            response: HttpResponse = yield request
            self._tick(response.now)
            nonce = response.header("DPoP-Nonce")
            if dpop and nonce:
                self._dpop_nonces[origin] = nonce
                if (
                    attempt == 1
                    and response.status == 400
                    and _body_error(response.body) == ("use_dpop_nonce")
                ):
                    continue
            return response
        raise AssertionError("unreachable")  # pragma: no cover

    def _dpop_active(self, metadata: ServerMetadata) -> bool:
        """DPoP binds this AS's tokens when the client has a key and the AS advertises
        its algorithm (RFC 9449 § 5.1: ``dpop_signing_alg_values_supported``)."""
        key = self.dpop_key
        return key is not None and key.alg in (metadata.dpop_signing_alg_values_supported or ())

    def present(self, request: HttpRequest, token: Token | None) -> HttpRequest:
        """``request`` carrying ``token`` (SHTTP-10): ``Authorization: Bearer``, or
        ``Authorization: DPoP`` with a proof bound to the request and the token
        (RFC 9449 § 7)."""
        if token is None:
            return request.with_header("Authorization", None)
        sent = request.with_header("Authorization", token.authorization_header())
        if token.token_type.lower() == "dpop" and self.dpop_key is not None:
            proof = dpop_proof(
                self.dpop_key,
                method=request.method,
                url=request.url,
                now=self._now,
                jti=self._random(16),
                nonce=self._dpop_nonces.get(origin_of(request.url)),
                access_token=token.access_token,
            )
            sent = sent.with_header("DPoP", proof)
        return sent

    def _token_request(
        self,
        endpoint: str,
        form: dict[str, str | None],
        client: ClientInfo | None,
        metadata: ServerMetadata,
        purpose: str = "token",
    ) -> HttpRequest:
        """A token endpoint request with the client's authentication (AUTH-35):
        ``none``, ``client_secret_basic``, ``client_secret_post`` or
        ``private_key_jwt``."""
        headers = [_FORM, _JSON_ACCEPT]
        if client is None:  # a JWT bearer grant whose assertion is the credential
            return HttpRequest(
                "POST", endpoint, tuple(headers), _form(form), purpose, self.max_document_bytes
            )
        supported = metadata.token_endpoint_auth_methods_supported
        method = client.token_endpoint_auth_method
        if method is None:
            offered = supported or ("client_secret_basic",)
            if self.client_key is not None and "private_key_jwt" in offered:
                method = "private_key_jwt"
            elif client.client_secret and "client_secret_basic" in offered:
                method = "client_secret_basic"
            elif client.client_secret and "client_secret_post" in offered:
                method = "client_secret_post"
            else:
                method = "client_secret_basic" if client.client_secret else "none"
        if method == "client_secret_basic" and client.client_secret:
            # RFC 6749 § 2.3.1: both halves form-encoded before base64.
            pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret, safe='')}"
            headers.append(("Authorization", "Basic " + base64.b64encode(pair.encode()).decode()))
        elif method == "client_secret_post" and client.client_secret:
            form = {**form, "client_id": client.client_id, "client_secret": client.client_secret}
        elif method == "private_key_jwt" and self.client_key is not None:
            assertion = client_assertion(
                self.client_key,
                client_id=client.client_id,
                audience=metadata.issuer,
                now=self._now,
                jti=self._random(16),
            )
            form = {
                **form,
                "client_id": client.client_id,
                "client_assertion_type": CLIENT_ASSERTION_TYPE,
                "client_assertion": assertion,
            }
        else:
            form = {**form, "client_id": client.client_id}
        return HttpRequest(
            "POST", endpoint, tuple(headers), _form(form), purpose, self.max_document_bytes
        )

    def _keep(self, token: Token) -> Flow[Token]:
        """Store ``token`` as its issuer's, unless that issuer stopped being this
        server's authorization server while the request was in flight (AUTH-23)."""
        if token.issuer != self.issuer:
            yield Notice(
                "token_discarded",
                "a token arrived from an authorization server that is no longer current; "
                "it was discarded",
            )
            raise OAuthTokenError(
                "the authorization server changed while the token request was in flight",
                reason="issuer_changed",
            )
        assert token.issuer is not None
        try:
            self.storage.set_token(self.token_key(token.issuer), token)
        except Exception as exc:
            raise OAuthStorageError("the OAuth storage could not keep the token") from exc
        return token

    def _retire(self, token: Token) -> None:
        """A token the server refused with a 401 is deleted wherever it is kept (AUTH-20)."""
        if token.issuer is None:
            return
        key = self.token_key(token.issuer)
        stored = self.storage.get_token(key)
        if stored is not None and stored.access_token == token.access_token:
            self.storage.delete_token(key)

    def _scopes_for(
        self,
        challenge: BearerChallenge | None,
        metadata: ServerMetadata,
        *,
        want_refresh: bool | None = None,
    ) -> tuple[str, ...]:
        issuer = metadata.issuer
        previous: list[str] = list(self._requested.get(issuer, ()))
        stored = self.storage.get_token(self.token_key(issuer))
        if stored is not None and stored.issuer == issuer:
            previous += stored.scopes
            previous += (stored.requested_scope or "").split()
        prm = self._resource_metadata
        return select_scopes(
            challenge=challenge.scopes if challenge else (),
            configured=(self.scope or "").split(),
            resource_scopes=prm.scopes_supported if prm else None,
            previous=[*(self.scope or "").split(), *previous],
            server_scopes=metadata.scopes_supported,
            want_refresh=self.want_refresh if want_refresh is None else want_refresh,
        )
