"""Fuzz target: dynamic client registration responses
(``mcp_proto.oauth.parse_registration_response``, RFC 7591 § 3.2).

Feeds: a response body from the registration vocabulary (or raw bytes, or JSON text as
it is) and a status.

Contract: a ``ClientInfo`` with a non-empty ``client_id``, bound to the issuer it was
registered with, ``source == "dynamic"``, for a 2xx status only; else
``OAuthRegistrationError`` with a one-line message and no secret; ``repr`` carries no
client secret (unless the peer put the same text in a public field).
"""

from __future__ import annotations

from _fuzzlib import Reader, Target
from _oauth_vocab import check_error, document

from mcp_proto.oauth import ClientInfo, OAuthRegistrationError, parse_registration_response


def check(data: bytes) -> None:
    reader = Reader(data)
    status = reader.choice((201, 200, 400, 500))
    body = data if data[:1] == b"{" else document(reader)
    try:
        info = parse_registration_response(body, issuer="https://as", status=status)
    except OAuthRegistrationError as exc:
        check_error(exc)
        return
    assert isinstance(info, ClientInfo) and 200 <= status < 300
    assert info.client_id and info.issuer == "https://as" and info.source == "dynamic"
    assert all(isinstance(u, str) for u in info.redirect_uris)
    secret = info.client_secret
    public = repr(
        (info.client_id, info.issuer, info.redirect_uris, info.token_endpoint_auth_method)
    )
    if secret and secret not in public:
        assert secret not in repr(info)
    assert ClientInfo.from_dict(info.to_dict()) == info


TARGET = Target(
    name="oauth_registration",
    description="dynamic client registration responses",
    check=check,
    seeds=(
        b'{"client_id": "c", "client_secret": "SECRET-CLIENT-SECRET", "redirect_uris": []}',
        b'{"error": "invalid_redirect_uri"}',
        b"\x00\x01\x02" + bytes(range(50)),
    ),
    max_len=2048,
)

if __name__ == "__main__":
    from run import main

    main(["oauth_registration"])
