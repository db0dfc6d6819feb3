"""docs/oauth.md states what the code does and does not (UT-13 asks for a doc test of
its known limit): the textual URL check, what is wired (connect, BrowserOAuth, the CLI)
and what is not built yet."""

from __future__ import annotations

from pathlib import Path

DOC = (Path(__file__).resolve().parents[1] / "docs" / "oauth.md").read_text()


def test_the_known_limit_of_the_url_check_is_documented() -> None:
    assert "Known limit (UT-13)" in DOC
    assert "public hostname whose DNS points into" in DOC


def test_the_doc_says_plainly_what_is_wired_and_what_is_not() -> None:
    text = DOC.replace("\n", " ")
    assert "`connect(url, oauth_provider=OAuthProvider(...))`" in text
    assert "`streamable_http_config`/`http_config`/`sse_config`) authorizes" in text
    assert "`http`/`streamable_http`/`sse` entry of an `mcpServers` file" in text


def test_every_public_name_of_the_core_is_documented() -> None:
    import mcp_proto.oauth as oauth

    for name in (
        "OAuthProvider",
        "OAuthStorage",
        "MemoryStorage",
        "JoseKey",
        "EnterpriseIdP",
        "ObtainAssertion",
        "OpenAuthorization",
        "UnsafeURLError",
        "OAuthStorageError",
    ):
        assert name in oauth.__all__ and name in DOC, name
