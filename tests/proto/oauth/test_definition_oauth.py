"""A definition file's ``"oauth"`` entry (issue 21): checked and normalised in the core
(``check_oauth_settings``), kept on the server's config (never in its repr), refused
with one line when wrong. Pure."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_proto.definitions import parse_server_definitions
from mcp_proto.server_config import check_oauth_settings


def test_host_spellings_are_normalised() -> None:
    assert check_oauth_settings(
        {
            "clientId": "app",
            "clientSecret": "s3cret-value",
            "issuer": "https://as.example.com",
            "scopes": ["files:read", "files:write"],
            "callbackPort": 8765,
            "clientMetadataUrl": "https://app.example.com/client.json",
        }
    ) == {
        "client_id": "app",
        "client_secret": "s3cret-value",
        "issuer": "https://as.example.com",
        "scope": "files:read files:write",
        "callback_port": 8765,
        "client_id_metadata_url": "https://app.example.com/client.json",
    }


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("github", "'oauth' must be an object"),
        ({"clientid": "x"}, "unknown key 'clientid'"),
        ({"clientId": "app"}, "must name its authorization server"),
        ({"clientSecret": "s3cret-value"}, "clientSecret without clientId"),
        ({"callbackPort": 0}, "callbackPort must be a port number"),
        ({"callbackPort": True}, "callbackPort must be a port number"),
        ({"scope": ""}, "scope must be a non-empty string"),
        ({"clientId": 5, "issuer": "https://as"}, "clientId must be a non-empty string"),
    ],
)
def test_bad_entries_are_refused_in_one_line(value: Any, message: str) -> None:
    with pytest.raises(ValueError) as info:
        check_oauth_settings(value)
    assert message in str(info.value)
    assert "s3cret-value" not in str(info.value)


def test_a_file_entry_carries_it_and_a_bad_one_is_skipped() -> None:
    doc = {
        "mcpServers": {
            "good": {
                "url": "https://mcp.example.com/mcp",
                "oauth": {
                    "clientId": "app",
                    "clientSecret": "s3cret-value",
                    "issuer": "https://as",
                },
            },
            "bad": {"url": "https://other.example.com/mcp", "oauth": {"clientId": "app"}},
            "sse": {"type": "sse", "url": "https://h/sse", "oauth": {"scope": "x"}},
        }
    }
    configs, warnings = parse_server_definitions(doc)
    good, sse = configs
    assert (good.name, sse.name) == ("good", "sse")
    assert sse.oauth == {"scope": "x"}  # HTTP+SSE is authorized too (its event stream's URL)
    assert good.oauth == {
        "client_id": "app",
        "client_secret": "s3cret-value",
        "issuer": "https://as",
    }
    assert "s3cret-value" not in repr(good)
    assert any("'bad'" in w and "issuer" in w for w in warnings)
    assert not any("'sse'" in w for w in warnings)
    assert not any("s3cret-value" in w for w in warnings)
