"""Server configuration: builders, raw dicts, definition files, detection, redaction.

Rows CONN-2..11, CONN-13, CONN-16..20, HTTP-5/6, SIZE-2, SSE-8, HYG-2.
"""

from __future__ import annotations

import copy
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_proto.config import (
    DEFAULT_MAX_DECOMPRESSED_BODY_BYTES,
    REDACTED,
    TYPE_SPELLINGS,
    ServerConfig,
    config_from_dict,
    detect_transport,
    http_config,
    parse_server_definitions,
    redact_config,
    split_targets,
    sse_config,
    stdio_argv,
    stdio_config,
    streamable_http_config,
)
from mcp_proto.errors import TransportDetectionError

# ------------------------------------------------------------------ builder defaults

DEFAULTS_TABLE = [
    # (config, type, read_timeout, retries, retry_backoff, ping)
    (lambda: stdio_config("python server.py"), "stdio", 15.0, 0, 1.0, None),
    (lambda: sse_config("http://h/sse"), "sse", 30.0, 0, 1.0, 10.0),
    (lambda: http_config("http://h"), "http", 30.0, 3, 1.0, None),
    (lambda: streamable_http_config("http://h/mcp"), "streamable_http", 30.0, 3, 1.0, None),
]


@pytest.mark.parametrize(
    ("make", "kind", "read_timeout", "retries", "retry_backoff", "ping"), DEFAULTS_TABLE
)
def test_builder_defaults(
    make: Any, kind: str, read_timeout: float, retries: int, retry_backoff: float, ping: Any
) -> None:
    config = make()
    assert config.type == kind
    assert config.read_timeout == read_timeout
    assert config.retries == retries
    assert config.retry_backoff == retry_backoff
    assert config.ping == ping
    assert config.protocol == "auto"
    assert config.discover_timeout is None
    assert config.name is None
    assert config.max_decompressed_body_bytes == 64 * 2**20 == DEFAULT_MAX_DECOMPRESSED_BODY_BYTES


def test_stdio_config_string_and_argv() -> None:
    config = stdio_config("npx -y '@scope/server fs' /home", args=["--verbose"])
    assert config.command == ("npx", "-y", "@scope/server fs", "/home", "--verbose")
    assert config.url is None and config.endpoint is None and config.headers == {}
    assert config.endpoint_url is None
    argv = stdio_config(["python", "my server.py"], args=("--a",))
    assert argv.command == ("python", "my server.py", "--a")
    assert stdio_config("stdio://node s.js").command == ("node", "s.js")


def test_stdio_config_options() -> None:
    config = stdio_config(
        "python s.py",
        name="local",
        env={"KEY": "v"},
        cwd="/tmp",
        read_timeout=5,
        retries=2,
        retry_backoff=0.5,
        protocol="legacy",
        max_line_size=1024,
    )
    assert config.name == "local"
    assert config.env == {"KEY": "v"}
    assert config.cwd == "/tmp"
    assert config.read_timeout == 5
    assert config.retries == 2
    assert config.retry_backoff == 0.5
    assert config.protocol == "legacy"
    assert config.discover_timeout is None
    assert config.max_line_size == 1024


def test_config_copies_mappings() -> None:
    env = {"A": "1"}
    headers = {"X": "1"}
    s = stdio_config("python s.py", env=env)
    h = streamable_http_config("http://h/mcp", headers=headers)
    env["A"] = "2"
    headers["X"] = "2"
    assert s.env == {"A": "1"}
    assert h.headers == {"X": "1"}


@pytest.mark.parametrize(
    "kwargs",
    [
        {"command": ""},
        {"command": "   "},
        {"command": []},
        {"command": [""]},
        {"command": "python 'unclosed"},
        {"command": ["python", 3]},
        {"command": "python", "args": "x"},
        {"command": "python", "args": [1]},
        {"command": "python", "read_timeout": 0},
        {"command": "python", "read_timeout": -1},
        {"command": "python", "read_timeout": True},
        {"command": "python", "read_timeout": float("nan")},
        {"command": "python", "read_timeout": float("inf")},
        {"command": "python", "read_timeout": "15"},
        {"command": "python", "retries": -1},
        {"command": "python", "retries": 1.5},
        {"command": "python", "retry_backoff": -0.1},
        {"command": "python", "protocol": "newest"},
        {"command": "python", "discover_timeout": 0},
        {"command": "python", "max_line_size": 0},
        {"command": "python", "max_line_size": 1.0},
        {"command": "python", "env": {"A": None}},
        {"command": "python", "env": ["A=1"]},
        {"command": "python", "env": {"": "x"}},
        {"command": "python", "name": ""},
        {"command": "python", "cwd": ""},
    ],
)
def test_stdio_config_invalid(kwargs: dict[str, Any]) -> None:
    command = kwargs.pop("command")
    with pytest.raises(ValueError):
        stdio_config(command, **kwargs)


def test_sse_config() -> None:
    config = sse_config(
        "https://api.example.com/sse",
        headers={"Authorization": "Bearer t"},
        read_timeout=60,
        ping=5,
        retries=1,
        retry_backoff=2,
        name="legacy",
    )
    assert config.url == "https://api.example.com/sse"
    assert config.endpoint is None
    assert config.endpoint_url == "https://api.example.com/sse"
    assert config.headers == {"Authorization": "Bearer t"}
    assert (config.read_timeout, config.ping, config.retries, config.retry_backoff) == (
        60,
        5,
        1,
        2,
    )
    assert sse_config("http://h/sse", ping=None).ping is None


def test_sse_has_no_era() -> None:
    # SSE-8 / CONN-13: the legacy-only transport refuses modern-era options (today every
    # transport does: issue 9 item 7).
    base = sse_config("http://h/sse")
    with pytest.raises(ValueError, match="modern"):
        attrs.evolve(base, protocol="modern")
    with pytest.raises(ValueError, match="discover_timeout"):
        attrs.evolve(base, discover_timeout=1.0)
    with pytest.raises(ValueError, match="endpoint"):
        attrs.evolve(base, endpoint="/messages")
    assert attrs.evolve(base, protocol="legacy").protocol == "legacy"


def test_http_config_defaults_and_options() -> None:
    # Issue 8 item 3: the URL is used as given; a bare origin posts to "/", not "/rpc".
    config = http_config("https://api.example.com")
    assert config.url == "https://api.example.com"
    assert config.endpoint == "/"
    assert config.endpoint_url == "https://api.example.com/"
    assert http_config("https://api.example.com", endpoint="/rpc").endpoint == "/rpc"
    custom = http_config(
        "https://api.example.com",
        endpoint="/v1/jsonrpc",
        headers={"X-Key": "k"},
        read_timeout=10,
        retries=0,
        retry_backoff=0,
        name="api",
        protocol="legacy",
    )
    assert custom.endpoint_url == "https://api.example.com/v1/jsonrpc"
    assert custom.protocol == "legacy"
    assert custom.retry_backoff == 0


def test_streamable_http_config_options() -> None:
    config = streamable_http_config(
        "https://api.example.com/mcp",
        max_decompressed_body_bytes=256 * 2**20,
        protocol="legacy",
    )
    assert config.max_decompressed_body_bytes == 256 * 2**20
    assert config.protocol == "legacy"
    assert config.oauth_provider is None


@pytest.mark.parametrize("limit", [0, -1, 1.5, "64", True, None])
def test_max_decompressed_body_bytes_invalid(limit: Any) -> None:
    # SIZE-2: non-positive or non-integer limits are rejected.
    with pytest.raises(ValueError, match="max_decompressed_body_bytes"):
        streamable_http_config("http://h/mcp", max_decompressed_body_bytes=limit)


# HTTP-5: a base URL with a path supplies the endpoint when it is left at default. Issue 8
# item 3: the URL is used as given (trailing "/" kept; no path is "/", never "/rpc").
URL_TABLE = [
    # (builder, base_url, endpoint kwarg, expected url, expected endpoint)
    (streamable_http_config, "https://h/mcp", None, "https://h", "/mcp"),
    (streamable_http_config, "https://h/mcp/", None, "https://h", "/mcp/"),
    (streamable_http_config, "https://h", None, "https://h", "/"),
    (streamable_http_config, "https://h/", None, "https://h", "/"),
    (streamable_http_config, "http://127.0.0.1:8000", None, "http://127.0.0.1:8000", "/"),
    (streamable_http_config, "https://h:8443/a/b", None, "https://h:8443", "/a/b"),
    (streamable_http_config, "https://h/mcp?key=1", None, "https://h", "/mcp?key=1"),
    (streamable_http_config, "https://h?key=1", None, "https://h", "/?key=1"),
    (streamable_http_config, "HTTPS://H.example/mcp", None, "https://H.example", "/mcp"),
    (streamable_http_config, "https://h/mcp", "/other", "https://h", "/other"),
    (streamable_http_config, "https://h/mcp", "/rpc", "https://h", "/rpc"),
    (streamable_http_config, "http://[::1]:8000/mcp", None, "http://[::1]:8000", "/mcp"),
    (http_config, "https://h/api", None, "https://h", "/api"),
    (http_config, "https://h/api", "/rpc", "https://h", "/rpc"),
    (http_config, "https://h", None, "https://h", "/"),
    (http_config, "https://h/", None, "https://h", "/"),
    (http_config, "https://h", "/rpc", "https://h", "/rpc"),
    (http_config, "https://h/api", "/v2", "https://h", "/v2"),
]


@pytest.mark.parametrize(("builder", "base_url", "endpoint", "url", "expected"), URL_TABLE)
def test_url_normalisation(
    builder: Any, base_url: str, endpoint: str | None, url: str, expected: str
) -> None:
    config = builder(base_url) if endpoint is None else builder(base_url, endpoint=endpoint)
    assert (config.url, config.endpoint) == (url, expected)
    assert config.endpoint_url == url + expected


@pytest.mark.parametrize(
    "url",
    [
        "ftp://h/mcp",
        "ws://h/mcp",
        "file:///tmp/x",
        "h/mcp",
        "localhost:8000/mcp",
        "http://",
        "http:///path",
        "https://h:notaport/mcp",
        "https://h/m cp",
        "https://h/\nmcp",
        "",
    ],
)
@pytest.mark.parametrize("builder", [sse_config, http_config, streamable_http_config])
def test_url_validation(builder: Any, url: str) -> None:
    # HTTP-6: only http/https URLs with a host.
    with pytest.raises(ValueError):
        builder(url)


@pytest.mark.parametrize("url", [None, 5, ["http://h"]])
def test_url_wrong_type(url: Any) -> None:
    with pytest.raises(ValueError):
        streamable_http_config(url)


@pytest.mark.parametrize("endpoint", ["rpc", "//evil.example/x", "/a b", "", "/x\r\n"])
def test_endpoint_validation(endpoint: str) -> None:
    with pytest.raises(ValueError, match="endpoint"):
        streamable_http_config("https://h", endpoint=endpoint)


@pytest.mark.parametrize(
    "headers",
    [
        {"X": "a\r\nInjected: 1"},
        {"X\n": "a"},
        {"X": None},
        {"X": ["a"]},
        {1: "a"},
        "Authorization: x",
    ],
)
def test_header_validation(headers: Any) -> None:
    with pytest.raises(ValueError):
        streamable_http_config("https://h/mcp", headers=headers)


def test_0000_warning() -> None:
    # HTTP-6: 0.0.0.0 is accepted but noted.
    config = streamable_http_config("http://0.0.0.0:8000/mcp")
    assert config.warnings and "0.0.0.0" in config.warnings[0]
    assert streamable_http_config("http://127.0.0.1:8000/mcp").warnings == ()
    assert stdio_config("python s.py").warnings == ()


def test_server_config_direct_construction_checks_consistency() -> None:
    with pytest.raises(ValueError, match="type"):
        ServerConfig(type="carrier-pigeon", url="http://h", endpoint="/")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="command"):
        ServerConfig(type="stdio")
    with pytest.raises(ValueError, match="command"):
        ServerConfig(type="stdio", command="python s.py")
    with pytest.raises(ValueError, match="url"):
        ServerConfig(type="stdio", command=("python",), url="http://h")
    with pytest.raises(ValueError, match="headers"):
        ServerConfig(type="stdio", command=("python",), headers={"a": "b"})
    with pytest.raises(ValueError, match="url"):
        ServerConfig(type="streamable_http", endpoint="/mcp")
    with pytest.raises(ValueError, match="endpoint"):
        ServerConfig(type="streamable_http", url="http://h")
    with pytest.raises(ValueError, match="command"):
        ServerConfig(type="http", url="http://h", endpoint="/", command=("x",))
    with pytest.raises(ValueError, match="env"):
        ServerConfig(type="http", url="http://h", endpoint="/", env={"A": "1"})
    with pytest.raises(ValueError, match="cwd"):
        ServerConfig(type="sse", url="http://h/sse", cwd="/tmp")
    ok = ServerConfig(type="http", url="http://h", endpoint="/rpc")
    assert ok.endpoint_url == "http://h/rpc"


def test_server_config_frozen_unhashable_and_equal() -> None:
    a = streamable_http_config("http://h/mcp", name="x")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        a.name = "y"  # type: ignore[misc]
    with pytest.raises(TypeError):
        hash(a)
    assert a == streamable_http_config("http://h/mcp", name="x")
    assert "Authorization" not in repr(
        streamable_http_config("http://h/mcp", headers={"Authorization": "secret"})
    )


# ------------------------------------------------------------------ config_from_dict


def test_config_from_dict_streamable_with_url_alias() -> None:
    config = config_from_dict({"type": "streamable_http", "base_url": "https://h/mcp"})
    assert config.type == "streamable_http"
    assert config.endpoint_url == "https://h/mcp"
    assert config_from_dict(
        {"type": "streamable_http", "url": "https://h/mcp"}
    ) == config_from_dict({"type": "streamable_http", "base_url": "https://h/mcp"})


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("streamable_http", "streamable_http"),
        ("streamableHttp", "streamable_http"),
        ("streamable-http", "streamable_http"),
        ("StreamableHTTP", "streamable_http"),
        # Issue 8 item 2: "http" is what Claude Code, VS Code and Cursor write for a
        # Streamable HTTP server; plain JSON-RPC over HTTP has its own spelling.
        ("http", "streamable_http"),
        ("HTTP", "streamable_http"),
        ("plain_http", "http"),
        ("plain-http", "http"),
        ("plainHttp", "http"),
        ("sse", "sse"),
        ("SSE", "sse"),
    ],
)
def test_config_from_dict_type_spellings(raw: str, expected: str) -> None:
    url = "https://h/sse" if expected == "sse" else "https://h/mcp"
    assert config_from_dict({"type": raw, "url": url}).type == expected


def test_config_from_dict_stdio() -> None:
    config = config_from_dict(
        {
            "type": "stdio",
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home"],
            "env": {"DEBUG": "1", "PORT": 8080},
            "cwd": "/srv",
            "read_timeout": 20,
            "protocol": "legacy",
            "max_line_size": 2048,
        },
        name="fs",
    )
    assert config.name == "fs"
    assert config.command == ("npx", "-y", "@modelcontextprotocol/server-filesystem", "/home")
    assert config.env == {"DEBUG": "1", "PORT": "8080"}
    assert config.cwd == "/srv"
    assert config.read_timeout == 20
    assert config.protocol == "legacy"
    assert config.max_line_size == 2048


def test_config_from_dict_command_conventions() -> None:
    # With args the command is the executable itself (its path may hold spaces) ...
    spaced = config_from_dict({"type": "stdio", "command": "/opt/My App/server", "args": []})
    assert spaced.command == ("/opt/My App/server",)
    # ... without args a command line is shell-split, like stdio_config().
    line = config_from_dict({"type": "stdio", "command": "python server.py --x"})
    assert line.command == ("python", "server.py", "--x")
    argv = config_from_dict({"type": "stdio", "command": ["python", "s.py"], "args": ["-v"]})
    assert argv.command == ("python", "s.py", "-v")


def test_config_from_dict_per_type_defaults_and_overrides() -> None:
    http = config_from_dict({"type": "http", "url": "https://h"})
    assert (http.type, http.endpoint, http.retries, http.read_timeout) == (
        "streamable_http",
        "/",
        3,
        30.0,
    )
    plain = config_from_dict({"type": "plain_http", "url": "https://h"})
    assert (plain.type, plain.endpoint, plain.retries) == ("http", "/", 3)
    sse = config_from_dict({"type": "sse", "url": "https://h/sse", "ping": 3, "retries": 2})
    assert (sse.ping, sse.retries) == (3, 2)
    stdio = config_from_dict({"type": "stdio", "command": "python s.py"})
    assert stdio.read_timeout == 15.0
    named = config_from_dict({"type": "stdio", "command": "python s.py", "name": "n"})
    assert named.name == "n"
    assert config_from_dict({"type": "stdio", "command": "x", "name": "n"}, name="m").name == "m"


def test_config_from_dict_ignores_keys_that_do_not_apply() -> None:
    config = config_from_dict(
        {"type": "sse", "url": "https://h/sse", "endpoint": "/x", "command": "y", "logger": 1}
    )
    assert config.endpoint is None and config.command == ()
    assert config_from_dict({"transport": "sse", "url": "https://h/sse"}).type == "sse"


def test_config_from_dict_infers_type() -> None:
    assert config_from_dict({"command": "python s.py"}).type == "stdio"
    assert config_from_dict({"url": "https://h/sse"}).type == "sse"
    assert config_from_dict({"url": "https://h/mcp"}).type == "streamable_http"


@pytest.mark.parametrize(
    "raw",
    [
        {"type": "websocket", "url": "https://h"},
        {"type": 3, "url": "https://h"},
        {"type": "stdio"},
        {"type": "stdio", "command": 5},
        {"type": "streamable_http"},
        {"type": "streamable_http", "url": "https://a/mcp", "base_url": "https://b/mcp"},
        {"type": "streamable_http", "url": "https://a/mcp", "serverUrl": "https://b/mcp"},
        {"httpUrl": "https://a/mcp", "serverUrl": "https://b/mcp"},
        {"type": "streamable_http", "url": "ftp://h"},
        {"type": "sse", "url": "https://h/sse", "protocol": "modern"},
        {"type": "http", "url": "https://h", "retries": "3"},
        {"name": "nothing to go on"},
    ],
)
def test_config_from_dict_invalid(raw: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        config_from_dict(raw)


def test_config_from_dict_not_a_mapping() -> None:
    with pytest.raises(ValueError):
        config_from_dict(["type", "stdio"])  # type: ignore[arg-type]


# ------------------------------------------------------- parse_server_definitions

SEED_FILE = {
    "mcpServers": {
        "filesystem": {
            "type": "stdio",
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home"],
        },
        "api": {
            "type": "streamable_http",
            "url": "https://api.example.com/mcp",
            "headers": {"Authorization": "Bearer TOKEN"},
        },
    }
}


# Issue 8 item 2: files exactly as the common hosts write them.
CLAUDE_CODE = {  # .mcp.json, from `claude mcp add --transport http|sse|stdio`
    "mcpServers": {
        "remote": {
            "type": "http",
            "url": "https://mcp.example.com/mcp",
            "headers": {"Authorization": "Bearer t"},
        },
        "legacy": {"type": "sse", "url": "https://mcp.example.com/sse"},
        "time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"], "env": {}},
    }
}
VS_CODE = {  # .vscode/mcp.json: "servers", plus "inputs" for prompted secrets
    "inputs": [{"type": "promptString", "id": "key", "description": "Key", "password": True}],
    "servers": {
        "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"},
        "fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"]},
    },
}
CURSOR = {  # ~/.cursor/mcp.json: "type" usually left out
    "mcpServers": {
        "remote": {"url": "http://localhost:3000/mcp"},
        "streaming": {"type": "streamable-http", "url": "http://localhost:3001/"},
        "camel": {"type": "streamableHttp", "url": "http://localhost:3002"},
        "local": {"command": "npx", "args": ["-y", "some-mcp-server"], "env": {"K": "v"}},
    }
}


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        (
            CLAUDE_CODE,
            [
                ("remote", "streamable_http", "https://mcp.example.com/mcp"),
                ("legacy", "sse", "https://mcp.example.com/sse"),
                ("time", "stdio", None),
            ],
        ),
        (
            VS_CODE,
            [
                ("github", "streamable_http", "https://api.githubcopilot.com/mcp/"),
                ("fetch", "stdio", None),
            ],
        ),
        (
            CURSOR,
            [
                ("remote", "streamable_http", "http://localhost:3000/mcp"),
                ("streaming", "streamable_http", "http://localhost:3001/"),
                ("camel", "streamable_http", "http://localhost:3002/"),
                ("local", "stdio", None),
            ],
        ),
    ],
    ids=["claude-code", "vs-code", "cursor"],
)
def test_parse_host_files(document: dict[str, Any], expected: list[Any]) -> None:
    configs, warnings = parse_server_definitions(document)
    assert [(c.name, c.type, c.endpoint_url) for c in configs] == expected
    assert all("skipped" not in w for w in warnings), warnings


def test_servers_key_of_one_server_object_is_not_a_table() -> None:
    # A single server object that happens to carry a "servers" key stays one server.
    configs, _ = parse_server_definitions({"command": "python s.py", "servers": 3})
    assert [c.command for c in configs] == [("python", "s.py")]


def test_unknown_type_lists_every_spelling() -> None:
    document = {"mcpServers": {"x": {"type": "grpc", "url": "x"}}}
    configs, warnings = parse_server_definitions(document)
    assert configs == []
    (warning,) = warnings
    for spelling in TYPE_SPELLINGS:
        assert spelling in warning


def test_parse_seed_file() -> None:
    configs, warnings = parse_server_definitions(SEED_FILE)
    assert warnings == []
    fs, api = configs
    assert (fs.name, fs.type) == ("filesystem", "stdio")
    assert fs.command == ("npx", "-y", "@modelcontextprotocol/server-filesystem", "/home")
    assert (api.name, api.type, api.endpoint_url) == (
        "api",
        "streamable_http",
        "https://api.example.com/mcp",
    )
    assert api.headers == {"Authorization": "Bearer TOKEN"}


def test_parse_every_type_with_endpoint() -> None:
    doc = {
        "mcpServers": {
            "a": {"type": "sse", "url": "https://h/sse", "headers": {"X": "1"}},
            "b": {"type": "plain_http", "url": "https://h", "endpoint": "/jsonrpc"},
            "c": {"type": "streamableHttp", "url": "https://h", "endpoint": "/mcp"},
            "d": {"type": "stdio", "command": "python", "args": ["s.py"], "env": {"K": "v"}},
        }
    }
    configs, warnings = parse_server_definitions(doc)
    assert warnings == []
    assert [c.type for c in configs] == ["sse", "http", "streamable_http", "stdio"]
    assert configs[1].endpoint_url == "https://h/jsonrpc"
    assert configs[2].endpoint_url == "https://h/mcp"
    assert configs[3].env == {"K": "v"}


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"command": "npx", "args": ["server"]}, "stdio"),
        ({"args": ["server"], "command": "node"}, "stdio"),
        ({"url": "https://h/sse"}, "sse"),
        ({"url": "https://h/mcp-sse"}, "sse"),
        ({"url": "https://sse.example.com/events"}, "sse"),
        ({"url": "https://h/mcp"}, "streamable_http"),
        ({"url": "https://assessment.example.com/mcp"}, "streamable_http"),
        ({"base_url": "https://h/v1"}, "streamable_http"),
        # Windsurf and Antigravity write serverUrl; Gemini CLI writes httpUrl for a
        # Streamable HTTP server (its "url" is SSE).
        ({"serverUrl": "https://h/mcp"}, "streamable_http"),
        ({"serverUrl": "https://h/sse"}, "sse"),
        ({"httpUrl": "https://h/mcp"}, "streamable_http"),
        ({"httpUrl": "https://h/sse-bridge"}, "streamable_http"),
    ],
)
def test_parse_infers_type_with_warning(entry: dict[str, Any], expected: str) -> None:
    configs, warnings = parse_server_definitions({"mcpServers": {"x": entry}})
    assert [c.type for c in configs] == [expected]
    assert len(warnings) == 1
    assert "'x'" in warnings[0] and "inferred" in warnings[0] and expected in warnings[0]


def test_parse_env_only_entry_infers_stdio_then_skips() -> None:
    configs, warnings = parse_server_definitions({"mcpServers": {"x": {"env": {"A": "1"}}}})
    assert configs == []
    assert any("inferred 'stdio'" in w for w in warnings)
    assert any("skipped" in w and "command" in w for w in warnings)


def test_parse_top_level_list_and_single_object() -> None:
    listed, warnings = parse_server_definitions(
        [
            {"type": "stdio", "command": "python a.py", "name": "a"},
            {"type": "sse", "url": "https://h/sse"},
        ]
    )
    assert warnings == []
    assert [c.name for c in listed] == ["a", None]
    single, warnings = parse_server_definitions({"type": "stdio", "command": "python a.py"})
    assert warnings == []
    assert [c.command for c in single] == [("python", "a.py")]
    as_list, _ = parse_server_definitions({"mcpServers": [{"command": "python a.py"}]})
    assert as_list[0].type == "stdio"


def test_parse_ignores_comment_and_description() -> None:
    doc = {
        "mcpServers": {
            "x": {
                "type": "stdio",
                "command": "python s.py",
                "comment": "for tests",
                "description": "a server",
            }
        }
    }
    configs, warnings = parse_server_definitions(doc)
    assert len(configs) == 1
    assert warnings == []


def test_parse_skips_invalid_entries_with_warnings() -> None:
    doc = {
        "mcpServers": {
            "good": {"type": "stdio", "command": "python s.py"},
            "number": 5,
            "badtype": {"type": "carrier-pigeon", "url": "https://h"},
            "nourl": {"type": "sse"},
            "badurl": {"type": "streamable_http", "url": "ftp://h"},
            "empty": {},
            "badtimeout": {"type": "stdio", "command": "x", "read_timeout": -1},
            "off": {"type": "stdio", "command": "x", "disabled": True},
        }
    }
    configs, warnings = parse_server_definitions(doc)
    assert [c.name for c in configs] == ["good"]
    skipped = {name for name in doc["mcpServers"] if name != "good"}
    for name in skipped:
        assert any(f"'{name}'" in w and "skipped" in w for w in warnings), name
    assert len(warnings) == len(skipped)


def test_parse_warns_on_unknown_keys_and_duplicates() -> None:
    configs, warnings = parse_server_definitions(
        [
            {"name": "a", "type": "stdio", "command": "x", "disabledTools": ["rm"]},
            {"name": "a", "type": "stdio", "command": "y"},
        ]
    )
    assert [c.command for c in configs] == [("x",)]
    assert any("disabledTools" in w for w in warnings)
    assert any("duplicate" in w for w in warnings)


def test_a_cline_file_is_read_as_cline_writes_it() -> None:
    """Cline spells the transport ``transportType`` and keeps its approval settings
    (``autoApprove``, ``disabledReason``) in the entries, as Roo Code does
    (``alwaysAllow``) and Gemini CLI (``trust``): the transport is honoured, the
    approval settings pass without a warning (they were one warning per entry per
    run); a host's ``timeout`` is still reported as ignored."""
    doc = {
        "mcpServers": {
            "files": {
                "command": "npx",
                "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
                "transportType": "stdio",
                "autoApprove": ["read_file"],
                "disabled": False,
            },
            "events": {
                "url": "https://example.com/mcp/events",
                "transportType": "sse",
                "autoApprove": [],
                "disabledReason": "",
            },
            "api": {"url": "https://example.com/api", "transportType": "streamable-http"},
            "roo": {"command": "x", "alwaysAllow": ["a"], "trust": True, "timeout": 60},
        }
    }
    configs, warnings = parse_server_definitions(doc)
    assert [(c.name, c.type) for c in configs] == [
        ("files", "stdio"),
        ("events", "sse"),
        ("api", "streamable_http"),
        ("roo", "stdio"),
    ]
    noted = [w for w in warnings if "no 'type' given; inferred" not in w]
    assert noted == ["server 'roo': ignored keys that do not apply to stdio: timeout"]


def test_parse_reports_0000() -> None:
    _, warnings = parse_server_definitions(
        {"mcpServers": {"x": {"type": "sse", "url": "http://0.0.0.0/sse"}}}
    )
    assert any("0.0.0.0" in w for w in warnings)


@pytest.mark.parametrize(
    "doc", [5, "servers", None, True, 1.5, {"mcpServers": 5}, {"mcpServers": "x"}]
)
def test_parse_wrong_shapes_raise(doc: Any) -> None:
    with pytest.raises(ValueError):
        parse_server_definitions(doc)


def test_parse_does_not_mutate_input() -> None:
    doc = copy.deepcopy(SEED_FILE)
    doc["mcpServers"]["x"] = {"url": "https://h/sse", "comment": "c"}
    before = copy.deepcopy(doc)
    parse_server_definitions(doc)
    assert doc == before


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                ["type", "command", "args", "env", "url", "headers", "endpoint", "read_timeout"]
            )
            | st.text(max_size=4),
            inner,
            max_size=5,
        )
    ),
    max_leaves=15,
)


@given(doc=JSONISH)
def test_parse_only_raises_value_error(doc: Any) -> None:
    try:
        configs, warnings = parse_server_definitions(doc)
    except ValueError:
        return
    assert all(isinstance(c, ServerConfig) for c in configs)
    assert all(isinstance(w, str) for w in warnings)


@given(entries=st.dictionaries(st.text(min_size=1, max_size=5), JSONISH, max_size=4))
def test_parse_mcpservers_never_raises(entries: dict[str, Any]) -> None:
    configs, _ = parse_server_definitions({"mcpServers": entries})
    assert len(configs) <= len(entries)


@given(raw=JSONISH)
def test_config_from_dict_only_raises_value_error(raw: Any) -> None:
    try:
        config_from_dict(raw)
    except ValueError:
        pass


# ------------------------------------------------------------------------ detection

DETECTION_TABLE = [
    # CONN-2: /sse → SSE
    ("http://localhost:8000/sse", "sse"),
    ("https://api.example.com/v1/sse", "sse"),
    ("https://api.example.com/SSE", "sse"),
    ("https://api.example.com/sse/", "sse"),
    # CONN-3: /mcp → Streamable HTTP
    ("http://localhost:8000/mcp", "streamable_http"),
    ("https://api.example.com/mcp?key=1", "streamable_http"),
    # CONN-6: other http(s) → the fallback chain
    ("http://localhost:8000", "http_auto"),
    ("https://api.example.com/", "http_auto"),
    ("https://api.example.com/rpc", "http_auto"),
    ("https://api.example.com/mcp/tools", "http_auto"),
    ("https://sse.example.com/x", "http_auto"),
    # CONN-4: stdio:// and argv lists
    ("stdio://python server.py", "stdio"),
    ("STDIO://node s.js", "stdio"),
    (["npx", "-y", "@modelcontextprotocol/server-filesystem", "/home"], "stdio"),
    (("python", "server.py"), "stdio"),
    (["./my-server", "--port", "1"], "stdio"),
    # CONN-5: launchers
    ("npx -y @modelcontextprotocol/server-everything", "stdio"),
    ("node build/index.js", "stdio"),
    ("python server.py", "stdio"),
    ("python3 -m my_server", "stdio"),
    ("python3.11 server.py", "stdio"),
    ("uv run server.py", "stdio"),
    ("uvx mcp-server-fetch", "stdio"),
    ("deno run -A server.ts", "stdio"),
    ("bun run server.ts", "stdio"),
    ("docker run -i --rm mcp/server", "stdio"),
    ("ruby server.rb", "stdio"),
    ("php server.php", "stdio"),
    ("java -jar server.jar", "stdio"),
    ("cargo run --release", "stdio"),
    ("go run ./cmd/server", "stdio"),
    ("npx.cmd -y server", "stdio"),
    ("python.exe server.py", "stdio"),
    # path-looking executables and scripts
    ("/usr/local/bin/my-server --flag", "stdio"),
    ("./server", "stdio"),
    ("server.py", "stdio"),
    ("dist/index.js", "stdio"),
    ("'/opt/My App/server' --x", "stdio"),
    # Issue 8 item 7: any other non-URL string is a command line (the shell checks
    # that its first word exists).
    ("mcp-server-time", "stdio"),
    ("mcp-server-git --repository .", "stdio"),
    ("bash server.sh", "stdio"),
    ("env K=V cmd", "stdio"),
    ("my-server", "stdio"),
    ("go build", "stdio"),
    ("  python server.py  ", "stdio"),
]


@pytest.mark.parametrize(("target", "expected"), DETECTION_TABLE)
def test_detection_table(target: Any, expected: str) -> None:
    assert detect_transport(target) == expected


@pytest.mark.parametrize(
    "target",
    [
        "ftp://example.com/mcp",  # CONN-7: non-http URL
        "ws://",  # issue 25: ws URLs are WebSocket, an invalid one an error
        "file:///tmp/server",
        "http://",  # invalid URL
        "https://:80/mcp",
        "http://h:port/mcp",
        "stdio://",
        "",
        "   ",
        "localhost:8000/mcp",  # a URL without its scheme, not a path
        "python 'unclosed",
        [],
        ["http://a/mcp", "http://b/sse"],  # several servers: split first
        [1, 2],
        ["", "x"],
        5,
        None,
    ],
)
def test_detection_errors(target: Any) -> None:
    with pytest.raises(TransportDetectionError):
        detect_transport(target)


@pytest.mark.parametrize(
    ("forced", "expected"),
    [
        ("stdio", "stdio"),
        ("sse", "sse"),
        ("http", "http"),
        ("streamable_http", "streamable_http"),
        ("streamableHttp", "streamable_http"),
        ("streamable-http", "streamable_http"),
    ],
)
def test_forced_transport(forced: str, expected: str) -> None:
    # CONN-11: transport= wins over the URL's shape.
    assert detect_transport("http://h/sse", transport=forced) == expected


@pytest.mark.parametrize("forced", ["grpc", "", "auto", 3])
def test_forced_transport_unknown(forced: Any) -> None:
    with pytest.raises(TransportDetectionError):
        detect_transport("http://h/mcp", transport=forced)


def test_protocol_modern_detection() -> None:
    # CONN-13: modern needs Streamable HTTP; ambiguous URLs skip the legacy fallbacks.
    assert detect_transport("http://h", protocol="modern") == "streamable_http"
    assert detect_transport("http://h/mcp", protocol="modern") == "streamable_http"
    assert detect_transport("python s.py", protocol="modern") == "stdio"
    with pytest.raises(ValueError):
        detect_transport("http://h/sse", protocol="modern")
    with pytest.raises(ValueError):
        detect_transport("http://h/mcp", transport="sse", protocol="modern")
    assert detect_transport("http://h", protocol="legacy") == "http_auto"


SPLIT_TABLE = [
    ("python s.py", ["python s.py"]),
    (["http://a/mcp", "http://b/sse"], ["http://a/mcp", "http://b/sse"]),
    (["http://a/mcp"], ["http://a/mcp"]),
    (["npx", "-y", "server"], [("npx", "-y", "server")]),
    (["python", "s.py", "--url", "http://h/mcp"], [("python", "s.py", "--url", "http://h/mcp")]),
    (["go", "run", "."], [("go", "run", ".")]),
    (["./srv", "--x"], [("./srv", "--x")]),
    (["stdio://python a.py", "http://b/mcp"], ["stdio://python a.py", "http://b/mcp"]),
    (["my-server", "http://b/mcp"], ["my-server", "http://b/mcp"]),
    (("uvx", "tool"), [("uvx", "tool")]),
]


@pytest.mark.parametrize(("target", "expected"), SPLIT_TABLE)
def test_split_targets(target: Any, expected: list[Any]) -> None:
    # CONN-10: argv parts are one stdio command; URLs are several servers.
    assert split_targets(target) == expected


@pytest.mark.parametrize("target", [[], [1], ["a", None], 5, None, {"a": 1}])
def test_split_targets_errors(target: Any) -> None:
    with pytest.raises(TransportDetectionError):
        split_targets(target)


@pytest.mark.parametrize(
    ("target", "argv"),
    [
        ("stdio://python server.py --x", ("python", "server.py", "--x")),
        ("python 'my server.py'", ("python", "my server.py")),
        (["npx", "-y", "s"], ("npx", "-y", "s")),
        (("a b",), ("a b",)),
        ("  node  s.js ", ("node", "s.js")),
    ],
)
def test_stdio_argv(target: Any, argv: tuple[str, ...]) -> None:
    assert stdio_argv(target) == argv


@pytest.mark.parametrize("target", ["", "stdio://", "   ", [], [""], ["a", 1], "a 'b"])
def test_stdio_argv_errors(target: Any) -> None:
    with pytest.raises(ValueError):
        stdio_argv(target)


@given(target=st.text(max_size=30) | st.lists(st.text(max_size=8), max_size=4))
def test_detect_only_raises_detection_error(target: Any) -> None:
    try:
        result = detect_transport(target)
    except TransportDetectionError:
        return
    assert result in ("stdio", "sse", "streamable_http", "http_auto")


# ------------------------------------------------------------------------ redaction

SENSITIVE_KEYS = [
    "headers",
    "env",
    "token",
    "access_token",
    "api_key",
    "auth",
    "authorization",
    "password",
    "secret",
    "client_secret",
    "oauth_provider",
]


@pytest.mark.parametrize("key", SENSITIVE_KEYS)
def test_redact_each_key(key: str) -> None:
    out = redact_config({key: "s3cret", "name": "srv"})
    assert out == {key: REDACTED, "name": "srv"}
    assert REDACTED == "[REDACTED]"


@pytest.mark.parametrize("key", ["Authorization", "API_KEY", "Client-Secret", "apiKey", "TOKEN"])
def test_redact_is_case_and_separator_insensitive(key: str) -> None:
    assert redact_config({key: "s3cret"}) == {key: REDACTED}


def test_redact_nested_mapping_values_each() -> None:
    config = {
        "type": "streamable_http",
        "url": "https://h/mcp",
        "headers": {"Authorization": "Bearer t", "X-Trace": "1"},
        "env": {"API_KEY": "k", "DEBUG": "1"},
    }
    assert redact_config(config) == {
        "type": "streamable_http",
        "url": "https://h/mcp",
        "headers": {"Authorization": REDACTED, "X-Trace": REDACTED},
        "env": {"API_KEY": REDACTED, "DEBUG": REDACTED},
    }


def test_redact_recursive_through_lists_and_dicts_without_mutation() -> None:
    doc: dict[str, Any] = {
        "mcpServers": {
            "a": {"command": "npx", "args": ["-y", "s"], "env": {"TOKEN": "t"}},
            "b": {"url": "https://h", "headers": {"Authorization": "x"}},
        },
        "list": [{"password": "p", "keep": [1, {"secret": {"deep": "d"}}]}],
        "token": None,
    }
    before = copy.deepcopy(doc)
    out = redact_config(doc)
    assert doc == before
    assert out == {
        "mcpServers": {
            "a": {"command": "npx", "args": ["-y", "s"], "env": {"TOKEN": REDACTED}},
            "b": {"url": "https://h", "headers": {"Authorization": REDACTED}},
        },
        "list": [{"password": REDACTED, "keep": [1, {"secret": {"deep": REDACTED}}]}],
        "token": None,
    }
    # The result shares no containers with the input.
    out["mcpServers"]["a"]["args"].append("x")
    assert doc["mcpServers"]["a"]["args"] == ["-y", "s"]


def test_redact_server_config() -> None:
    config = streamable_http_config("https://h/mcp", headers={"Authorization": "Bearer t"})
    out = redact_config(config)
    assert out["headers"] == {"Authorization": REDACTED}
    assert out["oauth_provider"] is None
    # A raw config dict may still carry a provider (a ServerConfig refuses one today).
    assert redact_config({"oauth_provider": object()})["oauth_provider"] == REDACTED
    assert out["url"] == "https://h"
    assert out["type"] == "streamable_http"
    assert out["env"] is None
    stdio = redact_config(stdio_config("python s.py", env={"K": "v"}))
    assert stdio["env"] == {"K": REDACTED}
    assert stdio["command"] == ["python", "s.py"]
    assert config.headers == {"Authorization": "Bearer t"}


def test_redact_rejects_other_types() -> None:
    with pytest.raises(TypeError):
        redact_config(["headers"])  # type: ignore[arg-type]


def test_ignored_keys_warning_uses_the_file_spelling() -> None:
    # In a file "http" is Streamable HTTP, so a plain entry is named "plain_http".
    doc = {"mcpServers": {"p": {"type": "plain_http", "url": "https://h", "ping": 5}}}
    configs, warnings = parse_server_definitions(doc)
    assert [c.type for c in configs] == ["http"]
    assert warnings == ["server 'p': ignored keys that do not apply to plain_http: ping"]


def test_windsurf_and_gemini_url_keys_are_the_url() -> None:
    configs, warnings = parse_server_definitions(
        {
            "mcpServers": {
                "windsurf": {"serverUrl": "https://h/mcp", "headers": {"X": "1"}},
                "gemini": {"httpUrl": "https://g/mcp", "timeout": 30000},
                "same": {"url": "https://s/mcp", "serverUrl": "https://s/mcp"},
            }
        }
    )
    assert [(c.name, c.type, c.endpoint_url) for c in configs] == [
        ("windsurf", "streamable_http", "https://h/mcp"),
        ("gemini", "streamable_http", "https://g/mcp"),
        ("same", "streamable_http", "https://s/mcp"),
    ]
    assert configs[0].headers == {"X": "1"}
    # Gemini's timeout (milliseconds there, seconds in Cline) is not guessed at.
    assert "server 'gemini': ignored keys that do not apply to streamable_http: timeout" in warnings
    assert not any("serverUrl" in w or "httpUrl" in w for w in warnings)


def test_a_server_without_a_name_is_named_after_its_command_or_host() -> None:
    # Issue 24 E: "server_0" in every message said nothing about which server.
    from mcp_proto.config import stdio_config, streamable_http_config
    from mcp_proto.definitions import command_server_name, unique_server_names

    configs = [
        stdio_config(["python", "x/weather.py"]),
        stdio_config(["npx", "-y", "@scope/server-files@1.2", "/tmp"]),
        stdio_config(["python3", "-m", "pkg.server"]),
        streamable_http_config("http://127.0.0.1:8000/mcp"),
        streamable_http_config("https://api.example.com/mcp"),
        stdio_config(["python", "y/weather.py"]),
        stdio_config(["srv"], name="mine"),
    ]
    assert unique_server_names(configs) == [
        "weather",
        "server-files",
        "pkg.server",
        "127.0.0.1:8000",
        "api.example.com",
        "weather_2",
        "mine",
    ]
    assert command_server_name(["node", "/p/index.js"], lambda script: "server-memory") == (
        "server-memory"
    )
    assert command_server_name(["sh", "-c", "exec srv"]) == "sh"
