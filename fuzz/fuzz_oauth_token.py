"""Fuzz target: token endpoint responses (``mcp_proto.oauth.parse_token_response``).

Feeds: a response body from the token vocabulary (or raw bytes, or JSON text as it is),
a status, ``now`` and whether the token is DPoP-bound.

Contract: a ``Token`` with a non-empty ``access_token``, ``token_type`` exactly
``Bearer`` (``DPoP`` when bound), an ``expires_at`` that is ``None`` or not before
``now``, for a 2xx status only; else ``OAuthTokenError`` whose message is one line and
carries no secret; ``repr`` of the token carries no secret either.
"""

from __future__ import annotations

from _fuzzlib import Reader, Target
from _oauth_vocab import check_error, document

from mcp_proto.oauth import OAuthTokenError, Token, parse_token_response


def check(data: bytes) -> None:
    reader = Reader(data)
    status = reader.choice((200, 201, 400, 401, 500))
    dpop = reader.flag()
    now = reader.choice((0.0, 1000.5, 1e12))
    body = data if data[:1] == b"{" else document(reader)
    try:
        token = parse_token_response(
            body, status=status, now=now, issuer="https://as", resource="https://mcp", dpop=dpop
        )
    except OAuthTokenError as exc:
        check_error(exc)
        return
    assert isinstance(token, Token) and 200 <= status < 300
    assert token.access_token and token.token_type == ("DPoP" if dpop else "Bearer")
    assert token.expires_at is None or token.expires_at >= now
    public = repr((token.scope, token.issuer, token.resource, token.token_type))
    for secret in (token.access_token, token.refresh_token):
        if secret and secret not in public and secret not in repr(token.expires_at):
            assert secret not in repr(token)
    assert Token.from_dict(token.to_dict()) == token


TARGET = Target(
    name="oauth_token",
    description="token endpoint responses",
    check=check,
    seeds=(
        b'{"access_token": "SECRET-ACCESS-TOKEN", "token_type": "Bearer", "expires_in": 60}',
        b'{"access_token": "SECRET-ACCESS-TOKEN", "token_type": "mac"}',
        b'{"error": "invalid_grant", "error_description": "SECRET-REFRESH-TOKEN"}',
        b"\x00\x01\x01\x03" + bytes(range(60)),
    ),
    max_len=2048,
)

if __name__ == "__main__":
    from run import main

    main(["oauth_token"])
