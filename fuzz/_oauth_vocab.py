"""Vocabulary shared by the OAuth fuzz targets (fuzz_oauth_*.py): the keys and values
of metadata, token and registration documents, secrets to look for in messages, and
the one contract every OAuth parser has (a value, or an ``OAuthError`` whose message is
one line and carries no secret)."""

from __future__ import annotations

import json
from typing import Any

from _fuzzlib import Reader, json_value

from mcp_proto.oauth import OAuthError

SECRETS = ("SECRET-ACCESS-TOKEN", "SECRET-REFRESH-TOKEN", "SECRET-CLIENT-SECRET")

KEYS = (
    "issuer",
    "resource",
    "authorization_servers",
    "scopes_supported",
    "bearer_methods_supported",
    "authorization_endpoint",
    "token_endpoint",
    "registration_endpoint",
    "code_challenge_methods_supported",
    "token_endpoint_auth_methods_supported",
    "authorization_response_iss_parameter_supported",
    "client_id_metadata_document_supported",
    "dpop_signing_alg_values_supported",
    "grant_types_supported",
    "access_token",
    "token_type",
    "expires_in",
    "refresh_token",
    "scope",
    "error",
    "error_description",
    "client_id",
    "client_secret",
    "client_secret_expires_at",
    "redirect_uris",
    "token_endpoint_auth_method",
)
STRINGS = (
    "https://as.example.com",
    "https://as.example.com/",
    "https://as.example.com/tenant1",
    "https://mcp.example.com/mcp",
    "http://127.0.0.1/x",
    "https://169.254.169.254/",
    "Bearer",
    "bearer",
    "DPoP",
    "mac",
    "S256",
    "plain",
    "none",
    "client_secret_basic",
    "invalid_grant",
    "a\nb",
    "3600",
    "-1",
    10**30,
    -5,
    True,
    *SECRETS,
)


def document(reader: Reader) -> bytes:
    """A document's bytes: usually a JSON object from the vocabulary, sometimes raw."""
    shape = reader.below(8)
    if shape == 0:
        return reader.rest()
    obj: Any = json_value(reader, KEYS, STRINGS)
    if shape <= 5 or not isinstance(obj, dict):
        obj = {reader.choice(KEYS): reader.choice(STRINGS) for _ in range(reader.below(8))} | (
            obj if isinstance(obj, dict) else {}
        )
    return json.dumps(obj).encode()


def check_error(exc: OAuthError) -> None:
    message = str(exc)
    assert message and "\n" not in message and "\r" not in message
    for secret in SECRETS:
        assert secret not in message and secret not in repr(exc)
