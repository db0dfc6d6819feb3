"""The HTTP customisation hook's rules (CUST-1, CUST-3): mcp_proto.http_settings and
the core's cache gate. Pure: no I/O, time as a number."""

from __future__ import annotations

from typing import Any

import pytest
from _client_modern import Peer, make, tool
from _proto_support import drive

from mcp_proto.config import streamable_http_config
from mcp_proto.http_settings import HttpSettings, RequestHeadersError, apply_configure_http

URL = "https://mcp.example/mcp"
BUILT = (("Accept", "application/json"), ("Authorization", "Bearer configured"))


def settings(request_headers: Any) -> HttpSettings:
    s = HttpSettings("s", URL)
    s.request_headers = request_headers
    return s


def test_per_request_headers_are_computed_for_each_request_to_the_servers_origin() -> None:
    n = iter(range(10))
    s = settings(lambda: {"X-No": str(next(n))})
    assert s.headers_for(URL, BUILT)[-1] == ("X-No", "0")
    assert s.headers_for("https://mcp.example:443/other", BUILT)[-1] == ("X-No", "1")
    # Another origin (an OAuth authorization server): not called, nothing added.
    assert s.headers_for("https://auth.example/token", BUILT) == list(BUILT)
    assert s.headers_for("http://mcp.example/mcp", BUILT) == list(BUILT)
    assert next(n) == 2


def test_per_request_headers_never_replace_the_protocols() -> None:
    s = settings(
        lambda: {
            "accept": "*/*",
            "AUTHORIZATION": "Bearer other",
            "Mcp-Session-Id": "forged",
            "Mcp-Method": "x",
            "Mcp-Param-Region": "x",
            "X-Trace": "t",
        }
    )
    assert s.headers_for(URL, BUILT) == [*BUILT, ("X-Trace", "t")]


@pytest.mark.parametrize("bad", [lambda: 1 / 0, lambda: {"X": "a\r\nB: c"}, lambda: [1]])
def test_a_failing_or_bad_request_headers_callable_is_a_request_headers_error(bad: Any) -> None:
    with pytest.raises(RequestHeadersError):
        settings(bad).headers_for(URL, BUILT)


def test_the_hook_sees_the_options_and_its_headers_reach_the_config() -> None:
    config = streamable_http_config(URL, headers={"X-A": "1", "Accept": "dropped"})
    seen: list[Any] = []

    def hook(s: HttpSettings) -> None:
        seen.append((s.name, s.url, s.proxy, dict(s.headers)))
        s.headers["Authorization"] = "Bearer t"
        s.proxy = "http://proxy.example:3128"

    config, s = apply_configure_http(config, "s", URL, hook, None, "http://p:1")
    assert seen == [("s", URL, "http://p:1", {"X-A": "1"})]
    assert dict(config.headers) == {"X-A": "1", "Authorization": "Bearer t"}
    assert s.proxy == "http://proxy.example:3128" and "Bearer" not in repr(s)


def test_a_servers_own_hook_wins_and_owned_headers_are_refused() -> None:
    calls: list[str] = []
    config = streamable_http_config(URL, configure_http=lambda s: calls.append("own"))
    apply_configure_http(config, "s", URL, lambda s: calls.append("client"), None, None)
    assert calls == ["own"]

    def forge(s: HttpSettings) -> None:
        s.headers["MCP-Protocol-Version"] = "2099-01-01"

    with pytest.raises(ValueError, match="MCP-Protocol-Version"):
        apply_configure_http(streamable_http_config(URL), "s", URL, forge, None, None)
    with pytest.raises(ValueError, match="configure_http"):
        streamable_http_config(URL, configure_http="not callable")


class _Backend:
    """Shaped like an httpcore network backend (the core never imports httpcore)."""

    def connect_tcp(self, host: str, port: int) -> None:  # pragma: no cover - never called
        raise AssertionError


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"pool_factory": "not callable"}, "pool_factory must be a callable"),
        ({"network_backend": object()}, "network_backend must be an httpcore NetworkBackend"),
        (
            {"pool_factory": lambda s: None, "network_backend": _Backend()},
            "pool_factory or network_backend, not both",
        ),
    ],
)
def test_a_bad_pool_factory_or_network_backend_is_refused(
    changes: dict[str, Any], message: str
) -> None:
    """CUST-1's factories are checked when the hook returns, naming the field."""

    def hook(s: HttpSettings) -> None:
        for key, value in changes.items():
            setattr(s, key, value)

    with pytest.raises(ValueError, match=message):
        apply_configure_http(streamable_http_config(URL), "s", URL, hook, None, None)


def test_a_pool_factory_or_network_backend_is_kept() -> None:
    backend = _Backend()

    def factory(s: HttpSettings) -> object:
        return object()  # pragma: no cover - the shells call it

    def hook(s: HttpSettings) -> None:
        s.pool_factory = factory

    _, settings = apply_configure_http(streamable_http_config(URL), "s", URL, hook, None, None)
    assert settings.pool_factory is factory and settings.network_backend is None

    def hook2(s: HttpSettings) -> None:
        s.network_backend = backend

    _, settings = apply_configure_http(streamable_http_config(URL), "s", URL, hook2, None, None)
    assert settings.network_backend is backend and settings.pool_factory is None


def test_per_request_headers_disable_result_reuse() -> None:
    """CUST-3 / CACHE-9: what a request carries is unknown before it is sent, as with
    a request_meta callable: nothing of that server's results is reused."""
    page = {"tools": [tool("t")], "cacheScope": "public", "ttlMs": 60_000}
    for hook, sent in ((None, 1), (lambda: {"X": "1"}, 3)):
        core, d = make({"s": Peer(script={"tools/list": page})})
        core.http_configured("s", {}, hook)  # as Client does when it builds the server
        for _ in range(3):
            drive(core.list_tools(), d.perform)
        assert len(d.sent("tools/list")) == sent


def test_the_owned_names_match_the_modern_header_module() -> None:
    from mcp_proto.http_settings import _MCP_PARAM_PREFIX, OWNED
    from mcp_proto.modern.headers import MCP_METHOD, MCP_NAME, MCP_PARAM_PREFIX

    assert {MCP_METHOD.lower(), MCP_NAME.lower()} <= OWNED
    assert MCP_PARAM_PREFIX.lower() == _MCP_PARAM_PREFIX


def test_a_407_is_a_proxy_authentication_error() -> None:
    from mcp_proto.errors import ProxyAuthenticationError
    from mcp_proto.http import error_for_response

    error = error_for_response(407, b"denied", method="initialize")
    assert isinstance(error, ProxyAuthenticationError) and error.http_status == 407
