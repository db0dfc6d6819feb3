"""Fuzz target: ``WWW-Authenticate`` values (``mcp_proto.oauth.parse_www_authenticate``
and ``bearer_challenge``, RFC 9110 § 11.6.1, RFC 6750 § 3) and the authorization
response's query (``callback_params``).

Feeds: a header built from challenge fragments (schemes, parameters, quoted strings
with escapes and commas, token68) or raw text.

Contract: ``parse_www_authenticate`` returns challenges with lower-case token schemes
and string parameters, never raises; ``bearer_challenge`` agrees with the first Bearer
challenge; ``callback_params`` returns a dict of strings or raises
``OAuthCallbackError`` (a repeated parameter among them); the loopback listener's
``callback_query`` (``mcp_io_common.oauth_callback``, the browser's request head) returns
the query of a ``GET /callback?...`` line verbatim (no space, CR or LF in it) or
``None``, never raises.
"""

from __future__ import annotations

import re

from _fuzzlib import Reader, Target

from mcp_io_common.oauth_callback import callback_query
from mcp_proto.oauth import (
    OAuthCallbackError,
    bearer_challenge,
    callback_params,
    parse_www_authenticate,
)

PARTS = (
    "Bearer",
    "bearer",
    "Basic",
    "DPoP",
    "Negotiate",
    " ",
    ", ",
    ",",
    "=",
    '"',
    '\\"',
    "\\",
    "realm=",
    "scope=",
    'scope="a b"',
    "resource_metadata=",
    '"https://mcp.example.com/.well-known/oauth-protected-resource"',
    'error="insufficient_scope"',
    "error_description=",
    '"with, comma"',
    "abc==",
    "files:read",
    "\t",
)
QUERY_PARTS = ("code=", "state=", "iss=", "a", "&", "=", "%", "%2", "%26", "code=a&code=b", "?")

HEAD_PARTS = (
    b"GET ",
    b"POST ",
    b"/callback",
    b"/favicon.ico",
    b"?",
    b"code=a&state=b",
    b"code=a&code=b",
    b" HTTP/1.1",
    b"\r\n",
    b"Host: x\r\n\r\n",
    b" ",
    b"\xff",
)

_SCHEME = re.compile(r"[!#$%&'*+.^_`|~0-9a-z-]+")


def check(data: bytes) -> None:
    reader = Reader(data)
    if reader.below(4) == 0:
        header = reader.rest().decode("utf-8", "replace")
    else:
        header = "".join(reader.choice(PARTS) for _ in range(reader.below(24)))
    challenges = parse_www_authenticate(header)
    for challenge in challenges:
        assert _SCHEME.fullmatch(challenge.scheme)
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in challenge.params.items())
    bearer = bearer_challenge(header)
    first = next((c for c in challenges if c.scheme == "bearer"), None)
    assert (bearer is None) == (first is None)
    if bearer is not None and first is not None:
        assert bearer.scope == first.params.get("scope")
    query = "".join(reader.choice(QUERY_PARTS) for _ in range(reader.below(12)))
    try:
        params = callback_params("http://localhost/cb?" + query)
    except OAuthCallbackError as exc:
        assert str(exc) and "\n" not in str(exc)
    else:
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in params.items())
    head = b"".join(reader.choice(HEAD_PARTS) for _ in range(reader.below(10)))
    got = callback_query(head, "/callback")
    if got is not None:
        assert not set(got) & {" ", "\r", "\n"}
        assert head.startswith(b"GET /callback?" + got.encode("ascii") + b" ")


TARGET = Target(
    name="oauth_challenge",
    description="WWW-Authenticate challenges and authorization callbacks",
    check=check,
    seeds=(
        b"\x01\x06\x00\x01\x08\x02\x09" + bytes(range(30)),
        b"\x00" + b'Basic realm="x, scope=y", Bearer scope="files:read"',
        # GET /callback?code=a&state=b HTTP/1.1 on the loopback listener
        b"\x01\x00\x00\x05\x00\x02\x04\x05\x07",
    ),
    max_len=1024,
)

if __name__ == "__main__":
    from run import main

    main(["oauth_challenge"])
