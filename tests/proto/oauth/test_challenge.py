"""The ``WWW-Authenticate`` parser (AUTH-14): multi-challenge headers, quoted strings."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_proto.oauth import bearer_challenge, parse_www_authenticate
from mcp_proto.oauth._challenge import MAX_CHALLENGE_LENGTH

CASES = [
    (
        'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource",'
        ' scope="files:read"',
        {
            "resource_metadata": "https://mcp.example.com/.well-known/oauth-protected-resource",
            "scope": "files:read",
        },
    ),
    ('Basic realm="a, scope=x", Bearer scope=files:read', {"scope": "files:read"}),
    (
        'Bearer error=insufficient_scope scope="a b"',
        {"error": "insufficient_scope", "scope": "a b"},
    ),
    ('Negotiate abc==, Bearer realm="r"', {"realm": "r"}),
    (
        'DPoP algs="ES256", Bearer error_description="a \\"quoted\\" word"',
        {"error_description": 'a "quoted" word'},
    ),
    (
        "bearer RESOURCE_METADATA=https://a.example/prm",
        {"resource_metadata": "https://a.example/prm"},
    ),
    ('Bearer resource="https://a.example/prm"', {"resource_metadata": "https://a.example/prm"}),
    ('Bearer scope="a", scope="b"', {"scope": None}),  # ambiguous: dropped
    ('Basic scope="not-bearer"', None),
    ("", None),
]


@pytest.mark.parametrize(("header", "expected"), CASES)
def test_bearer_parameters(header: str, expected: dict[str, str | None] | None) -> None:
    challenge = bearer_challenge(header)
    if expected is None:
        assert challenge is None
        return
    assert challenge is not None
    for name, value in expected.items():
        assert getattr(challenge, name) == value


def test_only_the_bearer_challenge_counts() -> None:
    challenges = parse_www_authenticate('Basic realm="x", Bearer scope="s", Digest nonce="n"')
    assert [c.scheme for c in challenges] == ["basic", "bearer", "digest"]
    assert challenges[2].params == {"nonce": "n"}


def test_an_overlong_header_is_not_parsed() -> None:
    assert parse_www_authenticate("Bearer scope=" + "a" * MAX_CHALLENGE_LENGTH) == ()


def test_insufficient_scope_is_exact() -> None:
    ch = bearer_challenge('Bearer error="insufficient_scope_x"')
    assert ch is not None and not ch.insufficient_scope
    ch = bearer_challenge('Bearer error="insufficient_scope", scope="a b a"')
    assert ch is not None and ch.insufficient_scope and ch.scopes == ("a", "b")


TOKEN = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_-", min_size=1, max_size=8)
QUOTED = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20)


def quote(value: str) -> str:
    return '"' + re.sub(r'(["\\])', r"\\\1", value) + '"'


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["Basic", "Digest", "DPoP", "Bearer", "Negotiate"]),
            st.dictionaries(TOKEN, QUOTED, max_size=4),
        ),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from([", ", ",", " ,  "]),
)
def test_multi_challenge_headers_round_trip(
    challenges: list[tuple[str, dict[str, str]]], sep: str
) -> None:
    header = sep.join(
        scheme + (" " + ", ".join(f"{k}={quote(v)}" for k, v in params.items()) if params else "")
        for scheme, params in challenges
    )
    parsed = parse_www_authenticate(header)
    assert [c.scheme for c in parsed] == [s.lower() for s, _ in challenges]
    for got, (_, params) in zip(parsed, challenges, strict=True):
        assert dict(got.params) == params
    first_bearer = next((p for s, p in challenges if s == "Bearer"), None)
    bearer = bearer_challenge(header)
    if first_bearer is None:
        assert bearer is None
    else:
        assert bearer is not None and bearer.scope == first_bearer.get("scope")


@given(st.text(max_size=200))
def test_any_text_parses_or_stops_without_raising(text: str) -> None:
    parse_www_authenticate(text)
    bearer_challenge(text)
