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

import base64
import hmac
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import quote, urlencode

from ..errors import ConnectionError
from ..http import unauthorized_error
from ._challenge import BearerChallenge, bearer_challenge, parse_www_authenticate
from ._effects import (
    AuthorizationResponse,
    Flow,
    HttpRequest,
    HttpResponse,
    Notice,
    ObtainAssertion,
    OpenAuthorization,
)
from ._errors import (
    OAuthCallbackError,
    OAuthDiscoveryError,
    OAuthError,
    OAuthRegistrationError,
    OAuthStorageError,
    OAuthTokenError,
    safe_error_code,
)
from ._jose import CLIENT_ASSERTION_TYPE, JWT_BEARER_GRANT, JWSSigner, client_assertion, dpop_proof
from ._models import (
    MAX_DOCUMENT_BYTES,
    PKCE,
    AuthorizationRecord,
    ClientInfo,
    ResourceMetadata,
    ServerMetadata,
    Token,
    b64url,
    parse_registration_response,
    parse_resource_metadata,
    parse_server_metadata,
    parse_token_response,
    token_type_ok,
)
from ._storage import MemoryStorage, OAuthStorage
from ._urls import (
    authorization_server_metadata_urls,
    authorization_url,
    callback_params,
    check_client_id_metadata_url,
    check_peer_url,
    check_redirect_uri,
    is_loopback_url,
    legacy_endpoints,
    normalize_server_url,
    origin_of,
    protected_resource_metadata_urls,
    resource_matches,
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

_JSON_ACCEPT: Final = ("Accept", "application/json")
_FORM: Final = ("Content-Type", "application/x-www-form-urlencoded")

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


#: RFC 8693 and draft-ietf-oauth-identity-assertion-authz-grant identifiers.
TOKEN_EXCHANGE_GRANT: Final = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG_TOKEN_TYPE: Final = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN_TYPE: Final = "urn:ietf:params:oauth:token-type:id_token"


@dataclass(frozen=True)
class EnterpriseIdP:
    """The identity provider of enterprise-managed authorization: its issuer, token
    endpoint and this client's registration there (``auth_method``:
    ``client_secret_basic``, ``client_secret_post`` or ``none``)."""

    issuer: str
    token_endpoint: str
    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    auth_method: str | None = None


def _assertion(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise OAuthTokenError("the host supplied no assertion", reason="no_assertion")
    return value


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


class OAuthProvider:
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
    ) -> None:
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

    def __repr__(self) -> str:
        return f"OAuthProvider({self.server_url!r}, issuer={self._issuer!r})"

    # ------------------------------------------------------------ keys and state

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

    # ------------------------------------------------------------ the request flow

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

    # ------------------------------------------------------------ authorization

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

    # ------------------------------------------------------------ refresh

    def refresh(self, token: Token, now: float) -> Flow[Token | None]:
        """Exchange ``token``'s refresh token (RFC 6749 § 6, with ``resource``). On a
        refusal the token is dropped and ``None`` returned (re-authorization follows)."""
        self._now = now
        issuer = token.issuer
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

    # ------------------------------------------------------------ grants without a user

    def token_grant(
        self,
        challenge: BearerChallenge | None,
        now: float,
        *,
        status: int = 401,
        presented: Token | None = None,
    ) -> Flow[Token]:
        """A token without a browser: the client credentials grant (RFC 6749 § 4.4; the
        MCP ``oauth-client-credentials`` extension) or the JWT bearer grant (RFC 7523
        § 2.1; workload identity federation and enterprise-managed authorization), with
        ``resource`` and the selected scopes. Needs credentials registered for the
        authorization server's issuer (no dynamic registration for these grants)."""
        self._now = now
        metadata = yield from self.discover(challenge)
        if presented is not None and status == 401:
            self._retire(presented)
        client = self._registration(metadata.issuer, None, allow_cimd=False)
        if client is None and self.grant == "client_credentials":
            raise OAuthRegistrationError(
                f"the {self.grant} grant needs credentials registered for the authorization "
                "server's issuer (client_registration_key(issuer))",
                reason="no_registration",
            )
        if client is not None:
            self._use(client)
        scopes = self._scopes_for(challenge, metadata, want_refresh=False)
        scope = " ".join(scopes) or None
        form: dict[str, str | None] = {"grant_type": "client_credentials"}
        if self.grant == "jwt_bearer":
            assertion = yield ObtainAssertion(metadata.issuer, self.resource, scope)
            form = {"grant_type": JWT_BEARER_GRANT, "assertion": _assertion(assertion)}
        elif self.grant == "enterprise":
            assertion = yield from self._identity_assertion(metadata, scope)
            form = {"grant_type": JWT_BEARER_GRANT, "assertion": assertion}
        form |= {"scope": scope, "resource": self.resource}
        endpoint = self._peer(metadata.token_endpoint, "token endpoint")
        response = yield from self._post_token(endpoint, form, client, metadata, "token")
        token = parse_token_response(
            response.body,
            status=response.status,
            now=self._now,
            issuer=metadata.issuer,
            resource=self.resource,
            requested_scope=scope,
            dpop=self._dpop_active(metadata),
            max_bytes=self.max_document_bytes,
        )
        self._requested[metadata.issuer] = scopes
        return (yield from self._keep(token))

    def _identity_assertion(self, metadata: ServerMetadata, scope: str | None) -> Flow[str]:
        """Enterprise-managed authorization (SEP-990; the MCP extension
        ``enterprise-managed-authorization``): the host's ID token from its identity
        provider is exchanged there (RFC 8693 token exchange) for an Identity Assertion
        JWT Authorization Grant naming this authorization server and resource."""
        idp = self.enterprise
        assert idp is not None
        id_token = yield ObtainAssertion(idp.issuer, self.resource, scope, kind="id_token")
        endpoint = self._peer(idp.token_endpoint, "identity provider token endpoint")
        form: dict[str, str | None] = {
            "grant_type": TOKEN_EXCHANGE_GRANT,
            "requested_token_type": ID_JAG_TOKEN_TYPE,
            "subject_token": _assertion(id_token),
            "subject_token_type": ID_TOKEN_TYPE,
            "audience": metadata.issuer,
            "resource": self.resource,
            "scope": scope,
        }
        client = ClientInfo(
            idp.client_id,
            idp.client_secret,
            issuer=idp.issuer,
            token_endpoint_auth_method=idp.auth_method,
        )
        idp_metadata = ServerMetadata(idp.issuer, None, endpoint)
        request = self._token_request(endpoint, form, client, idp_metadata, "token_exchange")
        response: HttpResponse = yield request
        self._tick(response.now)
        obj = _json_object(response.body, self.max_document_bytes)
        if not 200 <= response.status < 300 or obj is None or "error" in obj:
            code = safe_error_code(obj.get("error")) if obj else None
            raise OAuthTokenError(
                f"the identity provider refused the token exchange (HTTP {response.status}"
                + (f", {code})" if code else ")"),
                reason="refused",
                error=code,
            )
        jag = obj.get("access_token")
        if obj.get("issued_token_type") != ID_JAG_TOKEN_TYPE or not isinstance(jag, str) or not jag:
            raise OAuthTokenError(
                "the identity provider did not issue an identity assertion grant",
                reason="malformed",
            )
        return jag

    # ------------------------------------------------------------ discovery

    def discover(self, challenge: BearerChallenge | None = None) -> Flow[ServerMetadata]:
        """Protected resource metadata, then the authorization server's metadata."""
        prm = yield from self._resource_metadata_for(challenge)
        if prm is not None:
            issuer = self._choose_issuer(prm)
            metadata = yield from self._server_metadata(issuer, legacy=False)
            self._resource = prm.resource
        else:
            # 2025-03-26 servers: no PRM; the authorization server is the MCP server's
            # origin ("Authorization Base URL"), its metadata optional.
            issuer = origin_of(self.server_url)
            metadata = yield from self._server_metadata(issuer, legacy=True)
            self._resource = None
        for what, url in (
            ("token endpoint", metadata.token_endpoint),
            ("authorization endpoint", metadata.authorization_endpoint),
        ):
            if url is not None:
                self._peer(url, what)
        previous = self.issuer
        if previous is not None and previous != metadata.issuer:
            yield Notice(
                "migration",
                "the server now names another authorization server; its credentials and "
                "tokens are kept apart and a new registration is used",
            )
        self._issuer, self._metadata, self._resource_metadata = metadata.issuer, metadata, prm
        try:
            self.storage.set_server_metadata(
                self.server_url, {"server": metadata.to_dict(), "resource": self._resource}
            )
        except Exception:  # a cache: best effort
            yield Notice("storage", "the OAuth storage could not cache the server metadata")
        return metadata

    def _resource_metadata_for(
        self, challenge: BearerChallenge | None
    ) -> Flow[ResourceMetadata | None]:
        if challenge is not None and challenge.resource_metadata is not None:
            # The challenge's URL is authoritative, and a refused one fails closed
            # (AUTH-30): no fallback to well-known URIs or cached metadata.
            url = self._peer(challenge.resource_metadata, "resource_metadata URL")
            response = yield self._get(url, "resource_metadata")
            if response.status != 200:
                raise OAuthDiscoveryError(
                    f"the protected resource metadata answered HTTP {response.status}",
                    reason="not_found",
                    url=url,
                )
            prm = parse_resource_metadata(response.body, url=url, max_bytes=self.max_document_bytes)
        else:
            found: ResourceMetadata | None = None
            for url in protected_resource_metadata_urls(self.server_url):
                response = yield self._get(url, "resource_metadata")
                if response.status == 200:
                    found = parse_resource_metadata(
                        response.body, url=url, max_bytes=self.max_document_bytes
                    )
                    break
            if found is None:
                return None
            prm = found
        if not resource_matches(prm.resource, self.server_url):
            raise OAuthDiscoveryError(
                "the protected resource metadata names another resource than this server",
                reason="resource_mismatch",
                url=prm.url,
            )
        return prm

    def _choose_issuer(self, prm: ResourceMetadata) -> str:
        """The authorization server to use (RFC 9728 § 7.6 leaves the choice to the
        client): the current one while it is still listed, else the first entry. It is
        checked before its metadata is fetched (AUTH-30)."""
        servers = prm.authorization_servers
        issuer = self._issuer if self._issuer in servers else servers[0]
        return self._peer(issuer, "authorization server")

    def _server_metadata(self, issuer: str, *, legacy: bool) -> Flow[ServerMetadata]:
        for url in authorization_server_metadata_urls(issuer):
            response = yield self._get(url, "server_metadata")
            if response.status == 200:
                source = "oidc" if "openid-configuration" in url else "oauth"
                return parse_server_metadata(
                    response.body,
                    expected_issuer=issuer,
                    source=source,
                    url=url,
                    max_bytes=self.max_document_bytes,
                )
        if not legacy:
            raise OAuthDiscoveryError(
                "no authorization server metadata was found for the issuer",
                reason="not_found",
                url=issuer,
            )
        authorize, token, register = legacy_endpoints(self.server_url)
        return ServerMetadata(
            issuer=issuer,
            authorization_endpoint=authorize,
            token_endpoint=token,
            registration_endpoint=register,
            source="fallback",
        )

    # ------------------------------------------------------------ registration

    def _client_for(self, metadata: ServerMetadata) -> Flow[ClientInfo]:
        """The registration to use with ``metadata.issuer`` (AUTH-19): pre-registered
        credentials for this issuer, else a Client ID Metadata Document id when the
        server supports it, else an earlier dynamic registration with this issuer, else
        a new dynamic registration (deprecated: DEP-7)."""
        issuer = metadata.issuer
        chosen = self._registration(issuer, None, allow_cimd=False)
        if chosen is not None and chosen.source == "pre-registered":
            return self._use(chosen)
        if self.client_id_metadata_url and metadata.client_id_metadata_document_supported:
            return self._use(
                ClientInfo(
                    client_id=self.client_id_metadata_url,
                    token_endpoint_auth_method="none",
                    redirect_uris=(self.redirect_uri,),
                    source="cimd",
                )
            )
        if chosen is not None:
            return self._use(chosen)
        if metadata.registration_endpoint is None:
            raise OAuthRegistrationError(
                "no client registration is possible with this authorization server "
                "(no pre-registered credentials for its issuer, no Client ID Metadata "
                "Document support, no registration endpoint)",
                reason="no_registration",
            )
        endpoint = self._peer(metadata.registration_endpoint, "registration endpoint")
        yield Notice(
            "deprecation",
            "registering with OAuth Dynamic Client Registration, deprecated by MCP "
            "2026-07-28: prefer a Client ID Metadata Document or pre-registered credentials",
            deprecation="oauth_dcr",
        )
        body = json.dumps(self._registration_metadata(metadata)).encode()
        response: HttpResponse = yield HttpRequest(
            "POST",
            endpoint,
            (("Content-Type", "application/json"), _JSON_ACCEPT),
            body,
            "registration",
            self.max_document_bytes,
        )
        self._tick(response.now)
        info = parse_registration_response(
            response.body, issuer=issuer, status=response.status, max_bytes=self.max_document_bytes
        )
        for uri in info.redirect_uris:
            check_redirect_uri(uri)  # AUTH-28: also what a registration response registers
        self._use(info)
        slot = self.client_registration_key(issuer)
        try:
            existing = self.storage.get_client_info(slot)
            if existing is None or existing.source != "pre-registered":
                self.storage.set_client_info(slot, info)  # per-AS copy: best effort
        except Exception:
            yield Notice("storage", "the OAuth storage could not keep the per-issuer registration")
        return info

    def client_id_metadata_document(self) -> dict[str, Any]:
        """The document to publish at ``client_id_metadata_url`` (draft-ietf-oauth-
        client-id-metadata-document § 4; MCP "Client ID Metadata Documents"): its
        ``client_id`` is the URL itself, with ``client_name`` and ``redirect_uris``
        (required), ``grant_types`` including ``refresh_token`` (SEP-2207) and
        ``token_endpoint_auth_method`` ``none``; ``client_metadata`` adds to it."""
        if self.client_id_metadata_url is None:
            raise ValueError("no client_id_metadata_url is configured")
        grant_types = ["authorization_code"] + (["refresh_token"] if self.want_refresh else [])
        document: dict[str, Any] = {
            "client_name": "mcp-proto",
            "redirect_uris": [self.redirect_uri],
            "grant_types": grant_types,
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        }
        document.update(self.client_metadata)
        document["client_id"] = self.client_id_metadata_url
        return document

    def _registration_metadata(self, metadata: ServerMetadata) -> dict[str, Any]:
        """RFC 7591 client metadata. ``application_type`` (OIDC Registration § 2): MCP
        requires it; ``native`` for loopback and private-use redirects."""
        native = is_loopback_url(self.redirect_uri) or not self.redirect_uri.lower().startswith(
            ("http:", "https:")
        )
        supported = metadata.token_endpoint_auth_methods_supported or ("client_secret_basic",)
        method = next(
            (m for m in ("none", "client_secret_basic", "client_secret_post") if m in supported),
            "none",
        )
        grant_types = (
            ["authorization_code", "refresh_token"] if self.want_refresh else ["authorization_code"]
        )
        out: dict[str, Any] = {
            "client_name": "mcp-proto",
            "redirect_uris": [self.redirect_uri],
            "grant_types": grant_types,
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "application_type": "native" if native else "web",
        }
        out.update(self.client_metadata)
        return out

    def _registration(
        self, issuer: str, client_id: str | None, *, allow_cimd: bool = True
    ) -> ClientInfo | None:
        """The stored registration for ``issuer`` (AUTH-22: the slot under the server
        URL, which a host may rotate, wins over the per-AS copy when both are the same
        client); ``client_id`` pins the one an authorization request used."""
        in_use = self.storage.get_client_info(self.server_url)
        per_as = self.storage.get_client_info(self.client_registration_key(issuer))
        candidates = []
        if in_use is not None and (
            in_use.issuer == issuer or (allow_cimd and in_use.source == "cimd")
        ):
            candidates.append(in_use)
        if per_as is not None and per_as.issuer == issuer:
            if per_as.source == "pre-registered" and (
                not candidates or candidates[0].client_id != per_as.client_id
            ):
                candidates.insert(0, per_as)  # pre-registered outranks a dynamic one
            else:
                candidates.append(per_as)
        for info in candidates:
            if client_id is None or info.client_id == client_id:
                return info
        if client_id is not None and client_id == self.client_id_metadata_url:
            return ClientInfo(client_id=client_id, token_endpoint_auth_method="none", source="cimd")
        return None

    def _use(self, info: ClientInfo) -> ClientInfo:
        """Record ``info`` as the registration in use; it must reach storage, or the
        callback could not find it (AUTH-21)."""
        try:
            current = self.storage.get_client_info(self.server_url)
            if current != info and not (
                current is not None
                and current.client_id == info.client_id
                and current.issuer == info.issuer
            ):
                self.storage.set_client_info(self.server_url, info)
        except Exception as exc:
            raise OAuthStorageError(
                "the OAuth storage could not keep the client registration in use"
            ) from exc
        return info

    # ------------------------------------------------------------ tokens

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
        if token.issuer != self._issuer:
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

    # ------------------------------------------------------------ helpers

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
