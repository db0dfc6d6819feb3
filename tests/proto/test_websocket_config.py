"""ws:// and wss:// in detection, connect plans and definition files (issue 25)."""

from __future__ import annotations

import pytest

from mcp_proto.config import (
    config_from_dict,
    detect_transport,
    parse_server_definitions,
    split_targets,
    websocket_config,
)
from mcp_proto.errors import TransportDetectionError
from mcp_proto.targets import TargetOptions, plan_targets


@pytest.mark.parametrize("url", ["ws://h/mcp", "wss://h:8443/x", "WS://127.0.0.1:9"])
def test_ws_urls_select_websocket(url: str) -> None:
    assert detect_transport(url) == "websocket"
    assert detect_transport(url, protocol="modern") == "websocket"


@pytest.mark.parametrize("spelling", ["websocket", "ws", "WebSocket"])
def test_transport_can_be_forced(spelling: str) -> None:
    assert detect_transport("ws://h/x", transport=spelling) == "websocket"


def test_other_urls_are_unchanged() -> None:
    assert detect_transport("http://h/mcp") == "streamable_http"
    assert detect_transport("http://h/") == "http_auto"
    with pytest.raises(TransportDetectionError):
        detect_transport("ftp://h/")


def test_a_bad_ws_url_is_a_detection_error() -> None:
    with pytest.raises(TransportDetectionError):
        detect_transport("ws://")


def test_a_list_of_ws_urls_is_several_servers() -> None:
    assert split_targets(["ws://a/mcp", "wss://b/mcp"]) == ["ws://a/mcp", "wss://b/mcp"]


def test_plan_builds_one_websocket_config_with_the_options() -> None:
    (plan,) = plan_targets(
        "wss://h/mcp?k=1",
        options=TargetOptions(headers={"Authorization": "Bearer t"}, read_timeout=7.0),
    )
    (config,) = plan.configs
    assert config.type == "websocket" and config.url == "wss://h/mcp?k=1"
    assert config.endpoint_url == "wss://h/mcp?k=1"
    assert config.headers == {"Authorization": "Bearer t"} and config.read_timeout == 7.0


@pytest.mark.parametrize("spelling", ["websocket", "ws", "WebSocket"])
def test_definition_type_spellings(spelling: str) -> None:
    config = config_from_dict({"type": spelling, "url": "ws://h/mcp", "headers": {"A": "b"}})
    assert config.type == "websocket" and config.headers == {"A": "b"}


def test_a_ws_url_without_type_is_inferred() -> None:
    parsed = parse_server_definitions({"mcpServers": {"w": {"url": "wss://h/mcp"}}})
    (config,), warnings = parsed
    assert warnings == ["server 'w': no 'type' given; inferred 'websocket'"]
    assert config.name == "w" and config.type == "websocket"


def test_definition_options() -> None:
    config = config_from_dict(
        {
            "type": "ws",
            "url": "ws://h/mcp",
            "max_line_size": 1000,
            "max_decompressed_body_bytes": 2000,
            "protocol": "legacy",
            "ping": 15,
        }
    )
    assert config.ping == 15
    assert config.max_line_size == 1000 and config.max_decompressed_body_bytes == 2000
    assert config.protocol == "legacy"


def test_websocket_config_refuses_an_endpoint_and_http_urls() -> None:
    with pytest.raises(ValueError):
        config_from_dict({"type": "websocket", "url": "http://h/mcp"})
    config = websocket_config("ws://h/mcp")
    assert config.retries == 0 and config.protocol == "auto"
