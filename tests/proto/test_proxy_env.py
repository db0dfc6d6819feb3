"""Which proxy the environment names for a URL (mcp_proto/proxy_env.py): httpx's
``trust_env`` rules, with the environment as a mapping."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_proto.proxy_env import proxy_for_url, proxy_variables


def _proxy(url: str, **environ: str) -> str | None:
    found = proxy_for_url(url, environ)
    return None if found is None else found.url


def test_the_scheme_picks_the_variable_then_all_proxy() -> None:
    env = {"HTTP_PROXY": "http://p1:1", "HTTPS_PROXY": "http://p2:2"}
    assert _proxy("http://h/mcp", **env) == "http://p1:1"
    assert _proxy("https://h/mcp", **env) == "http://p2:2"
    assert _proxy("ws://h/ws", **env) == "http://p1:1"
    assert _proxy("wss://h/ws", **env) == "http://p2:2"
    assert _proxy("https://h/mcp", HTTP_PROXY="http://p1:1") is None
    assert _proxy("https://h/mcp", ALL_PROXY="socks5://s:1080") == "socks5://s:1080"
    assert _proxy("https://h/mcp", ALL_PROXY="http://a:1", HTTPS_PROXY="http://p:2") == "http://p:2"
    assert _proxy("https://h/mcp") is None
    assert _proxy("https://h/mcp", HTTPS_PROXY="  ") is None  # empty: unset


def test_lower_case_wins_and_the_variable_is_named() -> None:
    found = proxy_for_url("https://h", {"HTTPS_PROXY": "http://up:1", "https_proxy": "http://lo:2"})
    assert found is not None and found.url == "http://lo:2" and found.variable == "https_proxy"
    found = proxy_for_url("https://h", {"HTTPS_PROXY": "http://u:secret@up:1"})
    assert found is not None and found.variable == "HTTPS_PROXY"
    assert "secret" not in repr(found)


def test_a_value_without_scheme_is_an_http_proxy() -> None:
    assert _proxy("http://h", HTTP_PROXY="proxy.corp:3128") == "http://proxy.corp:3128"


def test_httpoxy_upper_case_http_proxy_is_ignored_in_a_cgi_request() -> None:
    assert _proxy("http://h", HTTP_PROXY="http://evil:1", REQUEST_METHOD="GET") is None
    assert _proxy("http://h", http_proxy="http://ok:1", REQUEST_METHOD="GET") == "http://ok:1"
    assert _proxy("https://h", HTTPS_PROXY="http://ok:1", REQUEST_METHOD="GET") == "http://ok:1"


@pytest.mark.parametrize(
    ("url", "no_proxy", "bypassed"),
    [
        ("https://api.example.com/mcp", "example.com", True),
        ("https://example.com/mcp", "example.com", True),
        ("https://notexample.com/mcp", "example.com", False),
        ("https://api.example.com/mcp", ".example.com", True),
        ("https://example.com/mcp", ".example.com", False),
        ("https://example.com/mcp", "*.example.com", False),
        ("https://a.example.com/mcp", "*.example.com", True),
        ("https://EXAMPLE.com/mcp", "Example.COM", True),
        ("http://localhost:8000/mcp", "localhost", True),
        ("http://127.0.0.1:8000/mcp", "localhost", False),  # no loopback special case
        ("http://127.0.0.1:8000/mcp", "127.0.0.1", True),
        ("http://10.1.2.3/mcp", "10.0.0.0/8", True),
        ("http://11.1.2.3/mcp", "10.0.0.0/8", False),
        ("http://[::1]:8000/mcp", "::1", True),
        ("http://[::1]:8000/mcp", "[::1]:8000", True),
        ("http://[::1]:8001/mcp", "[::1]:8000", False),
        ("http://h:8080/mcp", "h:8080", True),
        ("http://h:8081/mcp", "h:8080", False),
        ("https://h/mcp", "h:443", True),
        ("http://internal/mcp", "http://internal", True),
        ("https://internal/mcp", "http://internal", False),
        ("https://anything/mcp", "*", True),
        ("https://h/mcp", " , ,other.org, h ", True),
        ("https://h/mcp", "", False),
    ],
)
def test_no_proxy(url: str, no_proxy: str, bypassed: bool) -> None:
    found = _proxy(url, HTTP_PROXY="http://p:1", HTTPS_PROXY="http://p:1", NO_PROXY=no_proxy)
    assert (found is None) is bypassed


def test_lower_case_no_proxy_wins() -> None:
    env = {"HTTPS_PROXY": "http://p:1", "NO_PROXY": "h", "no_proxy": "other"}
    assert _proxy("https://h/mcp", **env) == "http://p:1"


@pytest.mark.parametrize(
    "value", ["ftp://p:1", "http://:8080", "http://p:notaport", "socks4://p:1"]
)
def test_an_unusable_value_is_a_value_error_naming_the_variable(value: str) -> None:
    with pytest.raises(ValueError, match="HTTPS_PROXY is not a proxy URL") as info:
        proxy_for_url("https://h/mcp", {"HTTPS_PROXY": value})
    assert value not in str(info.value)


def test_other_schemes_and_unrelated_variables_are_left_alone() -> None:
    assert proxy_for_url("stdio://x", {"ALL_PROXY": "http://p:1"}) is None
    env: dict[str, Any] = {
        "PATH": "/bin",
        "HTTPS_PROXY": "x",
        "no_proxy": "y",
        "REQUEST_METHOD": "GET",
    }
    assert proxy_variables(env) == {"HTTPS_PROXY": "x", "no_proxy": "y", "REQUEST_METHOD": "GET"}
