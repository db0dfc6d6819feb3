"""Fuzz target: OAuth metadata documents (``mcp_proto.oauth``): protected resource
metadata (RFC 9728) and authorization server metadata (RFC 8414 / OIDC Discovery).

Feeds: a document built from the metadata vocabulary (or raw bytes, or JSON text as it
is), a max size, and the issuer the document was fetched for.

Contract: ``parse_resource_metadata`` returns a ``ResourceMetadata`` with a non-empty
``resource`` and at least one authorization server, or raises ``OAuthDiscoveryError``;
``parse_server_metadata`` returns ``ServerMetadata`` whose ``issuer`` is the expected
one (up to a trailing slash) and has a ``token_endpoint``, or raises
``OAuthDiscoveryError``; a document over the bound is refused unread; messages are one
line and hold no secret.
"""

from __future__ import annotations

from _fuzzlib import Reader, Target
from _oauth_vocab import STRINGS, check_error, document

from mcp_proto.oauth import (
    OAuthDiscoveryError,
    ResourceMetadata,
    ServerMetadata,
    parse_resource_metadata,
    parse_server_metadata,
)

ISSUERS = [s for s in STRINGS if isinstance(s, str) and s.startswith("http")]


def check(data: bytes) -> None:
    reader = Reader(data)
    max_bytes = reader.choice((16, 256, 64 * 1024))
    issuer = reader.choice(ISSUERS)
    body = data if data[:1] == b"{" else document(reader)
    try:
        prm = parse_resource_metadata(body, max_bytes=max_bytes)
    except OAuthDiscoveryError as exc:
        check_error(exc)
    else:
        assert isinstance(prm, ResourceMetadata) and len(body) <= max_bytes
        assert prm.resource and prm.authorization_servers
        assert all(isinstance(s, str) for s in prm.authorization_servers)
    try:
        md = parse_server_metadata(body, expected_issuer=issuer, max_bytes=max_bytes)
    except OAuthDiscoveryError as exc:
        check_error(exc)
    else:
        assert isinstance(md, ServerMetadata) and len(body) <= max_bytes
        assert md.issuer.rstrip("/") == issuer.rstrip("/") and md.token_endpoint
        assert isinstance(md.supports_s256, bool)
        assert ServerMetadata.from_dict(md.to_dict()) == md


TARGET = Target(
    name="oauth_metadata",
    description="protected resource and authorization server metadata documents",
    check=check,
    seeds=(
        b'{"resource": "https://mcp.example.com/mcp", "authorization_servers": ["https://as"]}',
        b'{"issuer": "https://as.example.com", "token_endpoint": "https://as.example.com/t"}',
        b"\x02\x00\x01\x05\x07" + bytes(range(40)),
    ),
    max_len=2048,
)

if __name__ == "__main__":
    from run import main

    main(["oauth_metadata"])
