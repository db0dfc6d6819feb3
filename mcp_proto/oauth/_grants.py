"""The grants without a browser: client credentials (SEP-1046), the JWT bearer grant
(RFC 7523; workload identity federation) and enterprise-managed authorization
(SEP-990: RFC 8693 token exchange, then JWT bearer).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from ._base import _json_object
from ._challenge import BearerChallenge
from ._effects import Flow, HttpResponse, ObtainAssertion
from ._errors import OAuthRegistrationError, OAuthTokenError, safe_error_code
from ._jose import JWT_BEARER_GRANT
from ._models import ClientInfo, ServerMetadata, Token, parse_token_response
from ._tokens import TokenMixin

__all__ = [
    "ID_JAG_TOKEN_TYPE",
    "ID_TOKEN_TYPE",
    "TOKEN_EXCHANGE_GRANT",
    "EnterpriseIdP",
    "GrantMixin",
]


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


class GrantMixin(TokenMixin):
    """Tokens the client obtains on its own behalf or with a host's assertion."""

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
