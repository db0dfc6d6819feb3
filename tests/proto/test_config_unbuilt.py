"""Issue 9 item 7: no option is accepted and silently ignored.

``protocol="modern"``, ``discover_timeout`` and ``oauth_provider`` describe features not
built yet (the 2026-07-28 revision is issue 10; OAuth is on the roadmap). Until then
every entry point refuses them with one clear line naming the option: the config
builders, ``ServerConfig`` itself, raw config dicts, ``connect``'s planning, and a
definition file (whose entry is skipped with a warning). ``protocol="auto"`` and
``"legacy"`` are accepted: both are what the client does today.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import pytest

from mcp_proto.config import (
    ServerConfig,
    config_from_dict,
    http_config,
    parse_server_definitions,
    sse_config,
    stdio_config,
    streamable_http_config,
)
from mcp_proto.errors import TransportDetectionError
from mcp_proto.server_config import check_unbuilt_options
from mcp_proto.targets import TargetOptions, plan_targets

MODERN = (
    "protocol='modern' is not supported yet: this client speaks the handshake era only "
    "(2025-11-25 and earlier); the 2026-07-28 revision is issue 10"
)
DISCOVER = (
    "discover_timeout is not supported yet: it bounds the 2026-07-28 server/discover "
    "probe, which this client does not make (issue 10)"
)
OAUTH = (
    "oauth_provider is not supported yet: this client has no OAuth flow; send a token "
    "with headers={'Authorization': 'Bearer <token>'}"
)

BUILDERS: dict[str, Callable[..., ServerConfig]] = {
    "stdio": lambda **kw: stdio_config("python server.py", **kw),
    "http": lambda **kw: http_config("https://h/rpc", **kw),
    "streamable_http": lambda **kw: streamable_http_config("https://h/mcp", **kw),
}
# (option, value, the exact message)
REFUSED: list[tuple[str, Any, str]] = [
    ("protocol", "modern", MODERN),
    ("discover_timeout", 5.0, DISCOVER),
    ("discover_timeout", 0.001, DISCOVER),
    ("oauth_provider", object(), OAUTH),
]
# oauth_provider is a parameter of the HTTP builders only.
CASES = [
    (kind, option, value, message)
    for kind in BUILDERS
    for option, value, message in REFUSED
    if not (kind == "stdio" and option == "oauth_provider")
]


@pytest.mark.parametrize(("kind", "option", "value", "message"), CASES)
def test_builders_refuse_unbuilt_options(kind: str, option: str, value: Any, message: str) -> None:
    with pytest.raises(ValueError) as info:
        BUILDERS[kind](**{option: value})
    assert str(info.value) == message
    assert "\n" not in message


@pytest.mark.parametrize("kind", list(BUILDERS))
@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_auto_and_legacy_are_accepted(kind: str, protocol: str) -> None:
    assert BUILDERS[kind](protocol=protocol).protocol == protocol


@pytest.mark.parametrize(("option", "value", "message"), REFUSED)
@pytest.mark.parametrize("kind", ["stdio", "sse", "http", "streamable_http"])
def test_server_config_refuses_them_for_every_type(
    kind: str, option: str, value: Any, message: str
) -> None:
    base = {
        "stdio": stdio_config("python s.py"),
        "sse": sse_config("https://h/sse"),
        "http": http_config("https://h"),
        "streamable_http": streamable_http_config("https://h/mcp"),
    }[kind]
    with pytest.raises(ValueError) as info:
        attrs.evolve(base, **{option: value})
    assert str(info.value) == message


@pytest.mark.parametrize(("option", "value", "message"), REFUSED)
@pytest.mark.parametrize(
    "raw",
    [
        {"type": "stdio", "command": "python s.py"},
        {"type": "streamable_http", "url": "https://h/mcp"},
        {"type": "plain_http", "url": "https://h"},
        {"type": "sse", "url": "https://h/sse"},
        {"url": "https://h/mcp"},  # type inferred
    ],
)
def test_config_dicts_refuse_them(
    raw: dict[str, Any], option: str, value: Any, message: str
) -> None:
    with pytest.raises(ValueError) as info:
        config_from_dict({**raw, option: value})
    assert str(info.value) == message


def test_config_dicts_accept_auto_and_legacy() -> None:
    for protocol in ("auto", "legacy"):
        config = config_from_dict({"command": "python s.py", "protocol": protocol})
        assert config.protocol == protocol


def test_check_unbuilt_options_defaults_pass() -> None:
    check_unbuilt_options()
    check_unbuilt_options("auto", None, None)
    check_unbuilt_options("legacy", None, None)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (TargetOptions(protocol="modern"), MODERN),
        (TargetOptions(discover_timeout=2.0), DISCOVER),
        (TargetOptions(oauth_provider=object()), OAUTH),
    ],
)
@pytest.mark.parametrize(
    "target", ["python server.py", "http://127.0.0.1:9/", "http://h/sse", "ftp://nowhere"]
)
def test_connect_planning_refuses_them_before_detection(
    target: str, options: TargetOptions, message: str
) -> None:
    # Refused first: not a TransportDetectionError for ftp://, not the SSE contradiction.
    with pytest.raises(ValueError) as info:
        plan_targets(target, options=options)
    assert not isinstance(info.value, TransportDetectionError)
    assert str(info.value) == message


def test_connect_planning_carries_auto_and_legacy() -> None:
    [plan] = plan_targets("http://h:8000/", options=TargetOptions(protocol="legacy"))
    assert [(c.type, c.protocol) for c in plan.configs] == [
        ("streamable_http", "legacy"),
        ("sse", "auto"),  # CONN-13: HTTP+SSE has no era; the option is dropped
        ("http", "legacy"),
    ]
    [stdio] = plan_targets("python s.py", options=TargetOptions(protocol="legacy"))
    assert stdio.configs[0].protocol == "legacy"


def test_definition_file_skips_an_entry_with_an_unbuilt_option_naming_the_key() -> None:
    doc = {
        "mcpServers": {
            "modern": {"type": "stdio", "command": "python", "protocol": "modern"},
            "probe": {"type": "http", "url": "https://h/mcp", "discover_timeout": 3},
            "oauth": {"type": "http", "url": "https://h/mcp", "oauth_provider": "github"},
            "legacy_sse": {"type": "sse", "url": "https://h/sse", "discover_timeout": 3},
            "fine": {"type": "stdio", "command": "python", "protocol": "legacy"},
            "plain": {"type": "stdio", "command": "python"},
        }
    }
    configs, warnings = parse_server_definitions(doc)
    assert [(c.name, c.protocol) for c in configs] == [("fine", "legacy"), ("plain", "auto")]
    assert warnings == [
        f"server 'modern': skipped, invalid: {MODERN}",
        f"server 'probe': skipped, invalid: {DISCOVER}",
        f"server 'oauth': skipped, invalid: {OAUTH}",
        f"server 'legacy_sse': skipped, invalid: {DISCOVER}",
    ]
