"""The OAuth 2.1 flow of MCP authorization, once, as generators (sans-IO).

:class:`OAuthProvider` holds one MCP server's OAuth state (which authorization server
is current, what was requested) over a :class:`OAuthStorage`; its flows yield effects
(:mod:`._effects`) and never do I/O, read a clock or draw randomness themselves: the
host passes ``now`` and a ``random_bytes`` function.

The steps (2026-07-28 ``basic/authorization``; 2025-11-25 ``basic/authorization``):

1. 401 + ``WWW-Authenticate`` → protected resource metadata (RFC 9728): the challenge's
   ``resource_metadata``, else the path-aware then the root well-known URI;
2. authorization server metadata (RFC 8414 / OIDC, path-aware candidates; the
   2025-03-26 default endpoints when a server has no metadata at all);
3. the PRM ``resource`` must name this server (AUTH-6); every URL a peer advertised is
   checked before anything is fetched from it (AUTH-30);
4. a registration: pre-registered credentials for this issuer > a Client ID Metadata
   Document > dynamic registration (deprecated, with ``application_type``) (AUTH-19);
5. PKCE S256, refused when not advertised (AUTH-4); the authorization request with
   ``resource`` (RFC 8707), ``state``, each parameter once (AUTH-26);
6. the callback: no repeated parameter, the recorded ``state``, RFC 9207 ``iss``;
7. the code exchange; the token response checked (``token_type``, AUTH-27), bound to
   its issuer, kept one per authorization server (AUTH-20), discarded if that server
   stopped being current meanwhile (AUTH-23);
8. refresh; the original request retried with the new token, at most
   :data:`MAX_AUTHORIZATIONS` authorizations per request (step-up included).
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import Any, Final

from ..http import unauthorized_error
from ._base import _challenge_error
from ._challenge import BearerChallenge, bearer_challenge
from ._effects import AuthorizationResponse, Flow, HttpRequest, HttpResponse, OpenAuthorization
from ._errors import (
    OAuthCallbackError,
    OAuthDiscoveryError,
    OAuthError,
    OAuthRegistrationError,
    OAuthStorageError,
    safe_error_code,
)
from ._grants import EnterpriseIdP, GrantMixin
from ._jose import JWSSigner
from ._models import (
    MAX_DOCUMENT_BYTES,
    PKCE,
    AuthorizationRecord,
    ClientInfo,
    ResourceMetadata,
    ServerMetadata,
    Token,
    b64url,
    parse_token_response,
    token_type_ok,
)
from ._storage import MemoryStorage, OAuthStorage
from ._tokens import select_scopes
from ._urls import (
    authorization_url,
    callback_params,
    check_client_id_metadata_url,
    check_redirect_uri,
    is_loopback_url,
    normalize_server_url,
    origin_of,
)

__all__ = [
    "DEFAULT_REDIRECT_URI",
    "MAX_AUTHORIZATIONS",
    "EnterpriseIdP",
    "OAuthProvider",
    "select_scopes",
]


DEFAULT_REDIRECT_URI: Final = "http://localhost:8080/callback"


#: Authorizations one request may trigger (a 401, then step-ups on 403
#: ``insufficient_scope``): MCP "Step-Up Authorization Flow" asks for a retry limit; the
#: conformance suite's ``scope-retry-limit`` allows three.
MAX_AUTHORIZATIONS: Final = 3


class OAuthProvider(GrantMixin):
    """One MCP server's OAuth client (§E5 ``OAuthProvider``, the pure part).

    Args:
        server_url: the MCP server URL (normalised, AUTH-1).
        random_bytes: ``n -> n`` random bytes (``os.urandom`` in a shell): the source
            of PKCE verifiers and ``state`` values.
        redirect_uri: loopback HTTP, HTTPS or a private-use scheme (AUTH-28).
        scope: the configured scope (space-separated), requested when no challenge names
            one (AUTH-13).
        storage: where tokens, registrations and pending requests live (default:
            :class:`MemoryStorage`).
        client_metadata: extra RFC 7591 metadata for registration (``client_name``...).
        client_id_metadata_url: a Client ID Metadata Document URL (AUTH-11).
        client_info: pre-registered credentials; they must name their ``issuer``
            (AUTH-18) and are seeded under ``client_registration_key(issuer)``.
        want_refresh: request ``offline_access`` where offered (AUTH-36).
        max_document_bytes: the bound of every document a peer sends.
        grant: ``"authorization_code"`` (a user in a browser), ``"client_credentials"``
            (the client on its own behalf: SEP-1046, the ``oauth-client-credentials``
            extension) or ``"jwt_bearer"`` (RFC 7523 § 2.1 with an assertion the host
            supplies: workload identity federation, enterprise-managed authorization).
        client_key: the ``private_key_jwt`` signing key (RFC 7523 § 2.2).
        dpop_key: a DPoP key (RFC 9449): tokens are bound to it when the authorization
            server advertises one of its algorithms.
        enterprise: the identity provider of enterprise-managed authorization (grant
            ``"enterprise"``: the host's ID token is exchanged there for an identity
            assertion, then presented with the JWT bearer grant).
        handler: the host's answer to what a flow run by a connection needs from it
            (``OpenAuthorization`` → the redirect URL or an ``AuthorizationResponse``;
            ``ObtainAssertion`` → the JWT). Called by the I/O shell, away from the
            connection's lock or event loop; never by the core. ``None``: a connection
            that needs the user fails with ``UnauthorizedError`` (log in first).
        clock: wall-clock seconds (``time.time``) for a flow a connection runs: token
            expiry is stored across restarts and signed JWTs carry ``iat``. The shells
            set ``time.time`` when left ``None``; pure tests pass a number's lambda.
    """

    def __init__(
        self,
        server_url: str,
        *,
        random_bytes: Callable[[int], bytes],
        redirect_uri: str = DEFAULT_REDIRECT_URI,
        scope: str | None = None,
        storage: OAuthStorage | None = None,
        client_metadata: dict[str, Any] | None = None,
        client_id_metadata_url: str | None = None,
        client_info: ClientInfo | None = None,
        want_refresh: bool = True,
        max_document_bytes: int = MAX_DOCUMENT_BYTES,
        grant: str = "authorization_code",
        client_key: JWSSigner | None = None,
        dpop_key: JWSSigner | None = None,
        enterprise: EnterpriseIdP | None = None,
        handler: Callable[[Any], Any] | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.handler = handler
        self.clock = clock
        if grant not in ("authorization_code", "client_credentials", "jwt_bearer", "enterprise"):
            raise ValueError(f"unknown OAuth grant {grant!r}")
        if grant == "enterprise" and enterprise is None:
            raise ValueError("the enterprise grant needs an EnterpriseIdP")
        self.enterprise = enterprise
        self.grant = grant
        self.client_key = client_key
        self.dpop_key = dpop_key
        #: RFC 9449 § 8/§ 9: the last DPoP-Nonce each origin gave.
        self._dpop_nonces: dict[str, str] = {}
        self.server_url = normalize_server_url(server_url)
        self.redirect_uri = check_redirect_uri(redirect_uri)
        self.scope = scope
        self.storage: OAuthStorage = storage if storage is not None else MemoryStorage()
        self.client_metadata = dict(client_metadata or {})
        self.client_id_metadata_url = (
            check_client_id_metadata_url(client_id_metadata_url)
            if client_id_metadata_url is not None
            else None
        )
        self.want_refresh = want_refresh
        self.max_document_bytes = max_document_bytes
        self._random_bytes = random_bytes
        #: AUTH-30: plain HTTP to loopback peers only when this server itself is local.
        self.loopback_allowed = is_loopback_url(self.server_url)
        self._unbound_client = False
        if client_info is not None:
            if client_info.issuer is None:
                self._unbound_client = True  # AUTH-18: refused when a flow starts
            else:
                self.storage.set_client_info(
                    self.client_registration_key(client_info.issuer), client_info
                )
        self._issuer: str | None = None
        self._metadata: ServerMetadata | None = None
        self._resource_metadata: ResourceMetadata | None = None
        self._resource: str | None = None
        self._requested: dict[str, tuple[str, ...]] = {}
        self._now = 0.0

    def current_token(self) -> Token | None:
        """This server's token from the current authorization server, if one is kept
        and its type is one the client understands (AUTH-27: checked on read too)."""
        issuer = self.issuer
        if issuer is None:
            return None
        token = self.storage.get_token(self.token_key(issuer))
        if token is None or token.issuer != issuer:
            return None
        if not token_type_ok(token.token_type, dpop=False) and not (
            self.dpop_key is not None and token_type_ok(token.token_type, dpop=True)
        ):
            self.storage.delete_token(self.token_key(issuer))
            return None
        return token

    def authorization_header(self, now: float) -> str | None:
        """``Authorization`` for the next request (SHTTP-10), or ``None`` when there is
        no unexpired token (run :meth:`prepare` first to refresh one)."""
        token = self.current_token()
        if token is None or token.is_expired(now):
            return None
        return token.authorization_header()

    def prepare(self, now: float) -> Flow[Token | None]:
        """The token to present, refreshed first when it expires soon (AUTH-9)."""
        self._now = now
        token = self.current_token()
        if token is None:
            return None
        if token.expires_soon(now) and token.refresh_token and self._metadata is not None:
            return (yield from self.refresh(token, now))
        return None if token.is_expired(now) else token

    def auth_flow(self, request: HttpRequest, now: float) -> Flow[HttpResponse]:
        """Send ``request`` with the current token; on a 401 (or a 403
        ``insufficient_scope``) authorize and send it again, at most
        :data:`MAX_AUTHORIZATIONS` times. Returns the last response; raises the
        ``UnauthorizedError``/``InsufficientScopeError`` of the last refusal when the
        limit is reached, or an ``OAuthError`` (chained to it) when authorization
        fails."""
        token = yield from self.prepare(now)
        authorizations = 0
        nonce_retried = False
        while True:
            sent = self.present(request, token)
            response: HttpResponse = yield sent
            now = self._tick(response.now)
            if token is not None and token.token_type.lower() == "dpop":
                nonce = response.header("DPoP-Nonce")
                if nonce:
                    self._dpop_nonces[origin_of(request.url)] = nonce
                # RFC 9449 § 9: a resource server asking for a nonce is answered once
                # with a fresh proof; it is not a refusal of the token.
                if response.status == 401 and nonce and not nonce_retried:
                    dpop = _challenge_error(response.header("WWW-Authenticate"), "dpop")
                    if dpop == "use_dpop_nonce":
                        nonce_retried = True
                        continue
            challenge = bearer_challenge(response.header("WWW-Authenticate"))
            if response.status == 403 and (challenge is None or not challenge.insufficient_scope):
                return response  # a plain 403 is a refusal no token fixes
            if response.status not in (401, 403):
                return response
            refusal = unauthorized_error(response.status, response.header("WWW-Authenticate"))
            if authorizations >= MAX_AUTHORIZATIONS:
                raise refusal
            try:
                token = yield from self.authorize(
                    challenge, now, status=response.status, presented=token
                )
            except OAuthError as exc:
                exc.http_status = response.status
                raise exc from refusal
            authorizations += 1

    def authorize(
        self,
        challenge: BearerChallenge | None,
        now: float,
        *,
        status: int = 401,
        presented: Token | None = None,
    ) -> Flow[Token]:
        """The whole dance after a refusal: discovery, refresh where it can help,
        registration, the authorization request through the host, the code exchange."""
        self._now = now
        if self.grant != "authorization_code":
            return (yield from self.token_grant(challenge, now, status=status, presented=presented))
        url, state = yield from self.start_authorization_flow(
            challenge, now, status=status, presented=presented
        )
        if url is None:  # a refresh answered the 401
            assert isinstance(state, Token)
            return state
        reply = yield OpenAuthorization(url, self.redirect_uri)
        if isinstance(reply, AuthorizationResponse):
            redirect, arrived = reply.redirect, reply.now
        elif isinstance(reply, str):
            redirect, arrived = reply, None
        else:
            raise OAuthCallbackError("the host returned no authorization response")
        self._tick(arrived)
        assert isinstance(state, str)
        return (yield from self.complete_authorization_flow(redirect, expected_state=state))

    def start_authorization_flow(
        self,
        challenge: BearerChallenge | None = None,
        now: float | None = None,
        *,
        status: int = 401,
        presented: Token | None = None,
    ) -> Flow[tuple[str | None, str | Token]]:
        """Discovery and registration, then the authorization request: returns
        ``(url, state)`` for the host to open (its record is stored under ``state``),
        or ``(None, token)`` when a refresh answered a 401 instead."""
        if now is not None:
            self._now = now
        if self._unbound_client:
            raise OAuthRegistrationError(
                "pre-registered OAuth client credentials must name their issuer "
                "(ClientInfo.issuer or client_registration_key(issuer)); nothing was sent",
                reason="no_issuer",
            )
        metadata = yield from self.discover(challenge)
        issuer = metadata.issuer
        if presented is not None and status == 401:
            if presented.issuer == issuer and presented.refresh_token:
                refreshed = yield from self.refresh(presented, self._now)
                if refreshed is not None and refreshed.access_token != presented.access_token:
                    return None, refreshed
            self._retire(presented)
        if not metadata.supports_s256:
            raise OAuthDiscoveryError(
                "the authorization server does not advertise PKCE S256 "
                "(code_challenge_methods_supported); authorization refused",
                reason="pkce_unsupported",
            )
        if metadata.authorization_endpoint is None:
            raise OAuthDiscoveryError(
                "the authorization server metadata has no authorization_endpoint",
                reason="malformed",
            )
        endpoint = self._peer(metadata.authorization_endpoint, "authorization endpoint")
        client = yield from self._client_for(metadata)
        scopes = self._scopes_for(challenge, metadata)
        pkce = PKCE.from_random(self._random(32))
        state = b64url(self._random(24))
        scope = " ".join(scopes) or None
        record = AuthorizationRecord(
            state=state,
            code_verifier=pkce.verifier,
            issuer=issuer,
            iss_required=metadata.authorization_response_iss_parameter_supported,
            client_id=client.client_id,
            redirect_uri=self.redirect_uri,
            resource=self.resource,
            scope=scope,
            token_endpoint=metadata.token_endpoint,
            server_url=self.server_url,
            created_at=self._now,
        )
        try:
            self.storage.set_authorization(state, record)
        except Exception as exc:  # the host's backend: any failure means no callback
            raise OAuthStorageError(
                "the OAuth storage could not keep the authorization request"
            ) from exc
        self._requested[issuer] = scopes
        params = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": self.redirect_uri,
            "state": state,
            "code_challenge": pkce.challenge,
            "code_challenge_method": "S256",
            "resource": self.resource,
        }
        if scope:
            params["scope"] = scope
        return authorization_url(endpoint, params), state

    def complete_authorization_flow(
        self,
        redirect: str,
        *,
        expected_state: str | None = None,
        now: float | None = None,
    ) -> Flow[Token]:
        """Check the authorization response (``redirect``: the URL the browser came
        back to, or its query) and exchange its code (§E5
        ``complete_authorization_flow``). Every check happens before the code leaves."""
        if now is not None:
            self._now = now
        params = callback_params(redirect)
        state = params.get("state")
        if state is None:
            raise OAuthCallbackError("the authorization response has no state", reason="state")
        if expected_state is not None and not hmac.compare_digest(
            state.encode(), expected_state.encode()
        ):
            raise OAuthCallbackError(
                "the authorization response's state is not this request's", reason="state"
            )
        record = self.storage.get_authorization(state)
        if record is None or record.server_url != self.server_url:
            raise OAuthCallbackError(
                "the authorization response's state names no pending request", reason="state"
            )
        # One use per record: a replayed or late callback finds nothing. Only this
        # request's record goes (AUTH-23: another flow's pending request stays).
        self.storage.delete_authorization(state)
        iss = params.get("iss")
        # RFC 9207 § 2.4 and MCP "Authorization Response Validation": a present iss is
        # compared to the recorded issuer as plain strings (no normalisation); an
        # absent one is refused when the metadata advertised it. On a mismatch the
        # response's error fields are not acted on nor shown.
        if iss is not None and not hmac.compare_digest(iss.encode(), record.issuer.encode()):
            raise OAuthCallbackError(
                "the authorization response comes from another issuer (RFC 9207 iss "
                "mismatch); the code was not used",
                reason="iss_mismatch",
            )
        if iss is None and record.iss_required:
            raise OAuthCallbackError(
                "the authorization response lacks the iss its server advertises (RFC 9207); "
                "the code was not used",
                reason="iss_missing",
            )
        if "error" in params:
            code = safe_error_code(params["error"])
            raise OAuthCallbackError(
                "the authorization server refused the authorization"
                + (f" ({code})" if code else ""),
                reason="denied",
                error=code,
                error_description=params.get("error_description"),
            )
        code = params.get("code")
        if not code:
            raise OAuthCallbackError("the authorization response has no code", reason="no_code")
        self.issuer  # noqa: B018 (loads the stored metadata after a restart)
        metadata = self._metadata
        client = self._registration(record.issuer, record.client_id)
        form: dict[str, str | None] = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": record.redirect_uri,
            "code_verifier": record.code_verifier,
            "resource": record.resource,
        }
        endpoint = self._peer(record.token_endpoint, "token endpoint")
        if metadata is None or metadata.issuer != record.issuer:
            metadata = ServerMetadata(record.issuer, None, record.token_endpoint)
        response = yield from self._post_token(endpoint, form, client, metadata, "token")
        token = parse_token_response(
            response.body,
            status=response.status,
            now=self._now,
            issuer=record.issuer,
            resource=record.resource,
            requested_scope=record.scope,
            dpop=self._dpop_active(metadata),
            max_bytes=self.max_document_bytes,
        )
        return (yield from self._keep(token))
