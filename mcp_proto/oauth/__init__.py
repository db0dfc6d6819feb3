"""OAuth 2.1 for MCP, the pure core (issue 21): discovery, registration, PKCE, the
authorization request and callback checks, tokens, refresh and step-up, as sans-IO
generators over a pluggable storage. See docs/oauth.md.

Not imported by ``mcp_proto`` itself: a client without OAuth never pays for it.
"""

from __future__ import annotations

from ._challenge import BearerChallenge as BearerChallenge
from ._challenge import Challenge as Challenge
from ._challenge import bearer_challenge as bearer_challenge
from ._challenge import parse_www_authenticate as parse_www_authenticate
from ._effects import AuthorizationResponse as AuthorizationResponse
from ._effects import Flow as Flow
from ._effects import HttpRequest as HttpRequest
from ._effects import HttpResponse as HttpResponse
from ._effects import Notice as Notice
from ._effects import OAuthEffect as OAuthEffect
from ._effects import ObtainAssertion as ObtainAssertion
from ._effects import OpenAuthorization as OpenAuthorization
from ._errors import OAuthCallbackError as OAuthCallbackError
from ._errors import OAuthCallbackPortInUseError as OAuthCallbackPortInUseError
from ._errors import OAuthCallbackTimeoutError as OAuthCallbackTimeoutError
from ._errors import OAuthDiscoveryError as OAuthDiscoveryError
from ._errors import OAuthError as OAuthError
from ._errors import OAuthRegistrationError as OAuthRegistrationError
from ._errors import OAuthStorageError as OAuthStorageError
from ._errors import OAuthTokenError as OAuthTokenError
from ._errors import UnsafeURLError as UnsafeURLError
from ._jose import JoseKey as JoseKey
from ._jose import JWSSigner as JWSSigner
from ._jose import client_assertion as client_assertion
from ._jose import dpop_proof as dpop_proof
from ._models import MAX_DOCUMENT_BYTES as MAX_DOCUMENT_BYTES
from ._models import PKCE as PKCE
from ._models import AuthorizationRecord as AuthorizationRecord
from ._models import ClientInfo as ClientInfo
from ._models import ResourceMetadata as ResourceMetadata
from ._models import ServerMetadata as ServerMetadata
from ._models import Token as Token
from ._models import parse_registration_response as parse_registration_response
from ._models import parse_resource_metadata as parse_resource_metadata
from ._models import parse_server_metadata as parse_server_metadata
from ._models import parse_token_response as parse_token_response
from ._provider import DEFAULT_REDIRECT_URI as DEFAULT_REDIRECT_URI
from ._provider import MAX_AUTHORIZATIONS as MAX_AUTHORIZATIONS
from ._provider import EnterpriseIdP as EnterpriseIdP
from ._provider import OAuthProvider as OAuthProvider
from ._provider import select_scopes as select_scopes
from ._storage import MemoryStorage as MemoryStorage
from ._storage import OAuthStorage as OAuthStorage
from ._urls import authorization_server_metadata_urls as authorization_server_metadata_urls
from ._urls import callback_params as callback_params
from ._urls import check_peer_url as check_peer_url
from ._urls import check_redirect_uri as check_redirect_uri
from ._urls import normalize_server_url as normalize_server_url
from ._urls import protected_resource_metadata_urls as protected_resource_metadata_urls
from ._urls import resource_matches as resource_matches

__all__ = [
    "DEFAULT_REDIRECT_URI",
    "MAX_AUTHORIZATIONS",
    "MAX_DOCUMENT_BYTES",
    "PKCE",
    "AuthorizationRecord",
    "AuthorizationResponse",
    "BearerChallenge",
    "Challenge",
    "ClientInfo",
    "EnterpriseIdP",
    "Flow",
    "HttpRequest",
    "HttpResponse",
    "JWSSigner",
    "JoseKey",
    "MemoryStorage",
    "Notice",
    "OAuthCallbackError",
    "OAuthCallbackPortInUseError",
    "OAuthCallbackTimeoutError",
    "OAuthDiscoveryError",
    "OAuthEffect",
    "OAuthError",
    "OAuthProvider",
    "OAuthRegistrationError",
    "OAuthStorage",
    "OAuthStorageError",
    "OAuthTokenError",
    "ObtainAssertion",
    "OpenAuthorization",
    "ResourceMetadata",
    "ServerMetadata",
    "Token",
    "UnsafeURLError",
    "authorization_server_metadata_urls",
    "bearer_challenge",
    "callback_params",
    "check_peer_url",
    "check_redirect_uri",
    "client_assertion",
    "dpop_proof",
    "normalize_server_url",
    "parse_registration_response",
    "parse_resource_metadata",
    "parse_server_metadata",
    "parse_token_response",
    "parse_www_authenticate",
    "protected_resource_metadata_urls",
    "resource_matches",
    "select_scopes",
]
