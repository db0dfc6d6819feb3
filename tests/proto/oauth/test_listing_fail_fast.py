"""TOOL-1 / AUTH-31: listing across several servers fails fast on an authorization
failure (a 401/403, or an OAuth flow that failed on one) instead of logging it and
returning a shorter list: a host must not mistake "not authorized" for "no tools". Other
failures are still logged and skipped. Pure."""

from __future__ import annotations

from typing import Any

import pytest
from test_client_core import FakeDriver, tool, two_servers

from mcp_proto.effects import Connect, Effect
from mcp_proto.errors import InsufficientScopeError, TransportError, UnauthorizedError
from mcp_proto.http import unauthorized_error
from mcp_proto.oauth import OAuthDiscoveryError


def test_a_401_on_one_server_fails_the_listing() -> None:
    core, driver = two_servers()
    refusal = unauthorized_error(401, 'Bearer resource_metadata="https://a/prm"')
    driver.servers["beta"].script["tools/list"] = refusal
    with pytest.raises(UnauthorizedError) as info:
        driver.run(core.list_tools())
    assert info.value is refusal


def test_an_insufficient_scope_fails_the_listing() -> None:
    core, driver = two_servers()
    driver.servers["alpha"].script["tools/list"] = unauthorized_error(
        403, 'Bearer error="insufficient_scope", scope="x"'
    )
    with pytest.raises(InsufficientScopeError):
        driver.run(core.list_tools())
    assert driver.methods("beta") == []  # fast: the next server is not asked


class ConnectFails(FakeDriver):
    failures: dict[str, Exception]

    def perform(self, effect: Effect) -> Any:
        if isinstance(effect, Connect) and effect.server in self.failures:
            raise self.failures[effect.server]
        return super().perform(effect)


def test_an_oauth_flow_failing_on_connect_fails_the_listing() -> None:
    core, plain = two_servers()
    driver = ConnectFails(plain.servers)
    error = OAuthDiscoveryError("the PRM names another resource", reason="resource_mismatch")
    error.__cause__ = unauthorized_error(401, None)
    driver.failures = {"alpha": error}
    with pytest.raises(OAuthDiscoveryError) as info:
        driver.run(core.list_tools())
    assert info.value is error


def test_other_failures_are_still_skipped() -> None:
    core, driver = two_servers()
    driver.servers["alpha"].script["tools/list"] = TransportError("alpha is down")
    assert [t.name for t in driver.run(core.list_tools())] == ["b_only", "shared"]
    assert tool  # (the shared fixtures)
