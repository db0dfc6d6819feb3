"""Issue 9 item 7: no option is accepted and silently ignored.

``oauth_provider`` must be an ``mcp_proto.oauth.OAuthProvider`` (issue 21): every
entry point refuses anything else with one clear line naming the option: the config builders,
``ServerConfig`` itself, raw config dicts, ``connect``'s planning, and a definition file
(whose entry is skipped with a warning). Since issue 10 ``protocol`` ("auto", "modern",
"legacy") and ``discover_timeout`` are built (LIFE-7, LIFE-8): accepted and validated
everywhere, and refused only on HTTP+SSE, a handshake-era transport (SSE-8, CONN-13).
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

OAUTH = (
    "oauth_provider must be an mcp_proto.oauth.OAuthProvider, got object"
)

BUILDERS: dict[str, Callable[..., ServerConfig]] = {
    "stdio": lambda **kw: stdio_config("python server.py", **kw),
    "http": lambda **kw: http_config("https://h/rpc", **kw),
    "streamable_http": lambda **kw: streamable_http_config("https://h/mcp", **kw),
}
# (option, value, the exact message)
REFUSED: list[tuple[str, Any, str]] = [
    ("oauth_provider", object(), OAUTH),
]
SSE_ERA = (
    "protocol='modern' and discover_timeout do not apply to HTTP+SSE (a handshake-era "
    "transport): use Streamable HTTP for 2026-07-28"
)
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
@pytest.mark.parametrize("protocol", ["auto", "legacy", "modern"])
def test_every_protocol_is_accepted(kind: str, protocol: str) -> None:
    assert BUILDERS[kind](protocol=protocol).protocol == protocol


@pytest.mark.parametrize("kind", list(BUILDERS))
def test_discover_timeout_is_accepted(kind: str) -> None:
    assert BUILDERS[kind](discover_timeout=0.25).discover_timeout == 0.25


@pytest.mark.parametrize("kind", list(BUILDERS))
@pytest.mark.parametrize(
    ("option", "value", "needle"),
    [
        ("protocol", "stateless", "protocol must be"),
        ("discover_timeout", 0, "discover_timeout"),
        ("discover_timeout", -1.0, "discover_timeout"),
        ("discover_timeout", "5", "discover_timeout"),
    ],
)
def test_bad_era_options_are_refused(kind: str, option: str, value: Any, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        BUILDERS[kind](**{option: value})


@pytest.mark.parametrize(("option", "value"), [("protocol", "modern"), ("discover_timeout", 1.0)])
def test_sse_refuses_the_modern_options(option: str, value: Any) -> None:
    with pytest.raises(ValueError) as info:
        attrs.evolve(sse_config("https://h/sse"), **{option: value})
    assert str(info.value) == SSE_ERA
    with pytest.raises(ValueError, match="do not apply to sse"):
        config_from_dict({"type": "sse", "url": "https://h/sse", option: value})


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


def test_config_dicts_accept_the_era_options() -> None:
    for protocol in ("auto", "legacy", "modern"):
        config = config_from_dict({"command": "python s.py", "protocol": protocol})
        assert config.protocol == protocol
    config = config_from_dict({"url": "https://h/mcp", "discover_timeout": 2})
    assert config.discover_timeout == 2


def test_check_unbuilt_options_defaults_pass() -> None:
    check_unbuilt_options()
    for protocol in ("auto", "legacy", "modern"):
        check_unbuilt_options(protocol, None, None)
    check_unbuilt_options("auto", 0.5, None)


@pytest.mark.parametrize(
    ("options", "message"),
    [
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


def test_connect_planning_carries_modern_and_discover_timeout() -> None:
    options = TargetOptions(protocol="modern", discover_timeout=2.0)
    [plan] = plan_targets("http://h:8000/", options=options)
    # protocol="modern" never falls back to HTTP+SSE (a handshake-era transport).
    assert [(c.type, c.protocol, c.discover_timeout) for c in plan.configs] == [
        ("streamable_http", "modern", 2.0)
    ]
    [stdio] = plan_targets("python s.py", options=options).pop().configs
    assert (stdio.protocol, stdio.discover_timeout) == ("modern", 2.0)


def test_connect_planning_carries_auto_and_legacy() -> None:
    [plan] = plan_targets("http://h:8000/", options=TargetOptions(protocol="legacy"))
    assert [(c.type, c.protocol) for c in plan.configs] == [
        ("streamable_http", "legacy"),
        ("sse", "auto"),  # CONN-13: HTTP+SSE has no era; the option is dropped
        ("http", "legacy"),
    ]
    [stdio] = plan_targets("python s.py", options=TargetOptions(protocol="legacy"))
    assert stdio.configs[0].protocol == "legacy"


def test_definition_file_takes_the_era_options_and_skips_unbuilt_ones() -> None:
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
    assert [(c.name, c.protocol, c.discover_timeout) for c in configs] == [
        ("modern", "modern", None),
        ("probe", "auto", 3),
        ("fine", "legacy", None),
        ("plain", "auto", None),
    ]
    assert warnings == [
        "server 'oauth': skipped, invalid: oauth_provider must be an "
        "mcp_proto.oauth.OAuthProvider, got str",
        "server 'legacy_sse': skipped, invalid: 'protocol': 'modern' and 'discover_timeout' "
        "do not apply to sse",
    ]
