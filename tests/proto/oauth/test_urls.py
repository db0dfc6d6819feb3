"""The URL rules: normalisation, discovery candidates, resource match, peer-advertised
URL validation (AUTH-30, UT-6), redirect URIs (AUTH-28), CIMD URLs (AUTH-11),
authorization URL (AUTH-26), callbacks (AUTH-29)."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_proto.oauth import (
    OAuthCallbackError,
    UnsafeURLError,
    authorization_server_metadata_urls,
    callback_params,
    check_peer_url,
    check_redirect_uri,
    normalize_server_url,
    protected_resource_metadata_urls,
    resource_matches,
)
from mcp_proto.oauth._urls import authorization_url, check_client_id_metadata_url


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("HTTPS://Example.COM:443/mcp/", "https://example.com/mcp"),
        ("http://LOCALHOST:80/mcp#frag", "http://localhost/mcp"),
        ("https://example.com:8443", "https://example.com:8443"),
        ("https://example.com/", "https://example.com"),
        ("https://example.com/mcp?tenant=a", "https://example.com/mcp?tenant=a"),
    ],
)
def test_server_url_normalisation(url: str, normal: str) -> None:
    assert normalize_server_url(url) == normal


@pytest.mark.parametrize("url", ["mcp.example.com", "ftp://x/y", "https://u:p@x/y", "https:///x"])
def test_unusable_server_urls(url: str) -> None:
    with pytest.raises(UnsafeURLError):
        normalize_server_url(url)


def test_prm_candidates() -> None:
    assert protected_resource_metadata_urls("https://example.com/public/mcp") == (
        "https://example.com/.well-known/oauth-protected-resource/public/mcp",
        "https://example.com/.well-known/oauth-protected-resource",
    )
    assert protected_resource_metadata_urls("https://example.com") == (
        "https://example.com/.well-known/oauth-protected-resource",
    )


def test_as_metadata_candidates() -> None:
    assert authorization_server_metadata_urls("https://auth.example.com") == (
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration",
    )
    assert authorization_server_metadata_urls("https://auth.example.com/tenant1/") == (
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    )


@pytest.mark.parametrize(
    ("resource", "server", "ok"),
    [
        ("https://mcp.example.com/mcp", "https://mcp.example.com/mcp", True),
        ("https://MCP.example.com:443/mcp/", "https://mcp.example.com/mcp", True),
        ("https://mcp.example.com", "https://mcp.example.com/mcp", True),
        ("https://mcp.example.com/mc", "https://mcp.example.com/mcp", False),
        ("https://mcp.example.com/mcp/x", "https://mcp.example.com/mcp", False),
        ("https://evil.example.com/mcp", "https://mcp.example.com/mcp", False),
        ("http://mcp.example.com/mcp", "https://mcp.example.com/mcp", False),
        ("https://mcp.example.com:8443/mcp", "https://mcp.example.com/mcp", False),
        ("not a url", "https://mcp.example.com/mcp", False),
    ],
)
def test_resource_match_table(resource: str, server: str, ok: bool) -> None:
    assert resource_matches(resource, server) is ok


# (configured server is loopback, advertised URL, accepted)
PEER_TABLE = [
    (False, "https://auth.example.com", True),
    (False, "http://auth.example.com", False),
    (False, "https://127.0.0.1", False),
    (False, "https://127.8.9.1/x", False),
    (False, "https://localhost/x", False),
    (False, "https://app.localhost/x", False),
    (False, "https://[::1]/x", False),
    (False, "https://10.1.2.3/x", False),
    (False, "https://192.168.1.1/x", False),
    (False, "https://172.16.0.1/x", False),
    (False, "https://169.254.169.254/latest", False),
    (False, "https://[fe80::1]/x", False),
    (False, "https://[fd00::1]/x", False),
    (False, "https://[::ffff:127.0.0.1]/x", False),
    (False, "https://0.0.0.0/x", False),
    (False, "https://2130706433/x", False),
    (False, "https://0x7f.1/x", False),
    (False, "https://0177.0.0.1/x", False),
    (False, "https://user:pw@auth.example.com/x", False),
    (False, "https://auth.example.com/x#frag", False),
    (False, "javascript:alert(1)", False),
    (True, "http://localhost:9000/as", True),
    (True, "http://127.0.0.1:9000/as", True),
    (True, "http://[::1]:9000/as", True),
    (True, "https://auth.example.com", True),
    (True, "http://auth.example.com", False),
    (True, "http://169.254.169.254/latest", False),
    (True, "https://169.254.169.254/latest", False),
    (True, "http://10.0.0.1/x", False),
    (True, "https://192.168.1.1/x", False),
]


@pytest.mark.parametrize(("loopback", "url", "ok"), PEER_TABLE)
def test_peer_advertised_url_table(loopback: bool, url: str, ok: bool) -> None:
    if ok:
        assert check_peer_url(url, what="URL", loopback_allowed=loopback) == url
    else:
        with pytest.raises(UnsafeURLError):
            check_peer_url(url, what="URL", loopback_allowed=loopback)


@pytest.mark.parametrize(
    ("uri", "ok"),
    [
        ("http://localhost:8080/callback", True),
        ("http://127.0.0.1:3000/cb", True),
        ("http://[::1]/cb", True),
        ("https://app.example.com/cb", True),
        ("com.example.app:/cb", True),
        ("http://app.example.com/callback", False),
        ("https://app.example.com/cb#x", False),
        ("javascript:alert(1)", False),
        ("", False),
    ],
)
def test_redirect_uri_rules(uri: str, ok: bool) -> None:
    if ok:
        assert check_redirect_uri(uri) == uri
    else:
        with pytest.raises(UnsafeURLError):
            check_redirect_uri(uri)


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://app.example.com/oauth/client.json", True),
        ("http://app.example.com/client.json", False),
        ("https://app.example.com", False),
        ("https://app.example.com/", False),
        ("https://u@app.example.com/c.json", False),
        ("https://app.example.com/c.json#f", False),
        ("https://app.example.com/a/../c.json", False),
        ("https://app.example.com/./c.json", False),
    ],
)
def test_client_id_metadata_url_rules(url: str, ok: bool) -> None:
    if ok:
        assert check_client_id_metadata_url(url) == url
    else:
        with pytest.raises(UnsafeURLError):
            check_client_id_metadata_url(url)


def test_authorization_url_keeps_the_endpoint_query_without_duplicates() -> None:
    url = authorization_url(
        "https://as.example/authorize?scope=openid&tenant=x&brand=b&state=old",
        {"scope": "mcp", "state": "s", "client_id": "c"},
    )
    assert url == "https://as.example/authorize?tenant=x&brand=b&scope=mcp&state=s&client_id=c"


def test_callback_params() -> None:
    assert callback_params("http://localhost/cb?code=a&state=b&iss=https%3A%2F%2Fas") == {
        "code": "a",
        "state": "b",
        "iss": "https://as",
    }
    assert callback_params("code=a&state=b") == {"code": "a", "state": "b"}
    for repeated in ("?code=a&code=b", "?state=a&code=c&state=a", "?iss=x&iss=x"):
        with pytest.raises(OAuthCallbackError):
            callback_params("http://localhost/cb" + repeated)


NON_PUBLIC = st.one_of(
    st.ip_addresses(network="10.0.0.0/8"),
    st.ip_addresses(network="172.16.0.0/12"),
    st.ip_addresses(network="192.168.0.0/16"),
    st.ip_addresses(network="169.254.0.0/16"),
    st.ip_addresses(network="127.0.0.0/8"),
    st.ip_addresses(network="fe80::/10"),
    st.ip_addresses(network="fc00::/7"),
    st.just(ipaddress.ip_address("::1")),
)


@given(NON_PUBLIC, st.booleans(), st.sampled_from(["http", "https"]))
def test_no_literal_non_public_address_passes_except_loopback_for_a_local_server(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address, local: bool, scheme: str
) -> None:
    host = f"[{address}]" if address.version == 6 else str(address)
    url = f"{scheme}://{host}/x"
    for spelling in (
        {url, url.replace(host, f"[::ffff:{address}]")} if address.version == 4 else {url}
    ):
        if local and address.is_loopback:
            assert check_peer_url(spelling, what="URL", loopback_allowed=True) == spelling
        else:
            with pytest.raises(UnsafeURLError):
                check_peer_url(spelling, what="URL", loopback_allowed=local)


@given(st.ip_addresses(v=4).filter(lambda a: a.is_loopback or a.is_private or a.is_link_local))
def test_integer_spellings_of_non_public_ipv4_are_refused(address: ipaddress.IPv4Address) -> None:
    for host in (str(int(address)), hex(int(address))):
        with pytest.raises(UnsafeURLError):
            check_peer_url(f"https://{host}/x", what="URL", loopback_allowed=False)
