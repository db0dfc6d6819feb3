"""From a ``connect`` target to plans, the command-lookup error and the fallback error.

Issue 8 items 3 and 7, the pure half: the shells' behaviour is in
tests/shells/test_targets.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_proto import errors
from mcp_proto.config import detect_transport, stdio_config, streamable_http_config
from mcp_proto.http import error_for_response, unauthorized_error
from mcp_proto.targets import (
    CommandStatus,
    Plan,
    TargetOptions,
    command_not_found,
    fallback_error,
    plan_targets,
)


def _urls(target: str, **options: Any) -> list[tuple[str, str | None]]:
    (plan,) = plan_targets(target, options=TargetOptions(**options))
    return [(c.type, c.endpoint_url) for c in plan.configs]


@pytest.mark.parametrize("base", ["http://127.0.0.1:8000", "http://127.0.0.1:8000/"])
def test_a_url_at_the_root_is_used_as_given(base: str) -> None:
    # Issue 8 item 3: not "/rpc". SSE GETs the URL exactly as written.
    assert _urls(base) == [
        ("streamable_http", "http://127.0.0.1:8000/"),
        ("sse", base),
        ("http", "http://127.0.0.1:8000/"),
    ]


def test_a_url_path_is_used_as_given() -> None:
    assert _urls("https://h/api/v1/") == [
        ("streamable_http", "https://h/api/v1/"),
        ("sse", "https://h/api/v1/"),
        ("http", "https://h/api/v1/"),
    ]
    assert _urls("https://h/mcp/") == [("streamable_http", "https://h/mcp/")]
    assert _urls("https://h/x?key=1") == [
        ("streamable_http", "https://h/x?key=1"),
        ("sse", "https://h/x?key=1"),
        ("http", "https://h/x?key=1"),
    ]


def test_endpoint_option_still_wins() -> None:
    assert _urls("https://h", endpoint="/rpc") == [
        ("streamable_http", "https://h/rpc"),
        ("sse", "https://h"),
        ("http", "https://h/rpc"),
    ]


def test_forced_plain_http_spellings() -> None:
    for spelling in ("http", "plain_http", "plain-http"):
        (plan,) = plan_targets("https://h", transport=spelling)
        assert [(c.type, c.endpoint_url) for c in plan.configs] == [("http", "https://h/")]


@pytest.mark.parametrize(
    ("target", "argv"),
    [
        ("mcp-server-time", ("mcp-server-time",)),
        ("mcp-server-git --repository .", ("mcp-server-git", "--repository", ".")),
        ("bash server.sh", ("bash", "server.sh")),
        ("env K=V cmd --x", ("env", "K=V", "cmd", "--x")),
        ("stdio://mcp-server-time", ("mcp-server-time",)),
    ],
)
def test_a_non_url_target_is_one_command_line(target: str, argv: tuple[str, ...]) -> None:
    (plan,) = plan_targets(target)
    assert [(c.type, c.command) for c in plan.configs] == [("stdio", argv)]


@pytest.mark.parametrize("target", ["localhost:8000/mcp", "127.0.0.1:3000"])
def test_host_and_port_without_a_scheme_is_named(target: str) -> None:
    with pytest.raises(errors.TransportDetectionError, match=f"write http://{target}"):
        detect_transport(target)


@pytest.mark.parametrize("target", ["''", '""', "python 'unclosed"])
def test_empty_or_unparseable_command(target: str) -> None:
    with pytest.raises(errors.TransportDetectionError):
        detect_transport(target)


# ---------------------------------------------------------------- command_not_found

CASES: list[tuple[str, CommandStatus, str | None, str]] = [
    # (command line, status, cwd, expected message)
    (
        "mcp-server-time",
        "missing",
        None,
        "cannot start 'mcp-server-time': not found on PATH; install the server or give "
        "the full path of its executable",
    ),
    (
        "./server.py --x",
        "not_executable",
        "/srv",
        "cannot start './server.py': not executable (working directory /srv); make it "
        "executable or name its interpreter first, e.g. 'python ./server.py'",
    ),
    (
        "dist/index.js",
        "not_executable",
        None,
        "cannot start 'dist/index.js': not executable; make it executable or name its "
        "interpreter first, e.g. 'node dist/index.js'",
    ),
    (
        "server.sh",
        "not_on_path",
        None,
        "cannot start 'server.sh': not on PATH; to run the file of that name in the "
        "working directory write './server.sh' or 'bash server.sh'",
    ),
    (
        "/opt/srv/run",
        "missing",
        "/tmp",
        "cannot start '/opt/srv/run': no such file (working directory /tmp)",
    ),
    (
        "example.com/mcp",
        "missing",
        None,
        "cannot start 'example.com/mcp': no such file; if it is a URL, write "
        "https://example.com/mcp or http://example.com/mcp",
    ),
]


@pytest.mark.parametrize(("line", "status", "cwd", "expected"), CASES)
def test_command_not_found_messages(
    line: str, status: CommandStatus, cwd: str | None, expected: str
) -> None:
    config = stdio_config(line, cwd=cwd)
    error = command_not_found(config, status)
    assert isinstance(error, errors.CommandNotFoundError)
    assert str(error) == expected
    assert error.command == config.command[0]


def test_command_found_or_not_stdio_is_no_error() -> None:
    assert command_not_found(stdio_config("mcp-server-time"), "found") is None
    assert command_not_found(streamable_http_config("https://h/mcp"), "missing") is None


# -------------------------------------------------------------------- fallback_error


def test_fallback_error_names_each_transport_and_url() -> None:
    (plan,) = plan_targets("http://127.0.0.1:9")
    failures = [
        (config, errors.ServerError(f"refused {i}", code=None))
        for i, config in enumerate(plan.configs)
    ]
    error = fallback_error(plan, failures)
    assert isinstance(error, errors.AllTransportsFailedError)
    assert isinstance(error, errors.ConnectionError)
    assert str(error) == (
        "could not connect to http://127.0.0.1:9; tried all transports: "
        "streamable_http: POST http://127.0.0.1:9/: refused 0; "
        "sse: GET http://127.0.0.1:9: refused 1; "
        "http: POST http://127.0.0.1:9/: refused 2"
    )
    assert [(kind, url) for kind, url, _ in error.attempts] == [
        ("streamable_http", "http://127.0.0.1:9/"),
        ("sse", "http://127.0.0.1:9"),
        ("http", "http://127.0.0.1:9/"),
    ]
    assert [str(exc) for _, _, exc in error.attempts] == ["refused 0", "refused 1", "refused 2"]


def _http_error(status: int) -> errors.MCPError:
    return error_for_response(status, b"", method="initialize")


@pytest.mark.parametrize(
    ("target", "statuses", "hinted"),
    [
        ("http://h:8000", (404, 404, 404), True),
        ("http://h:8000/", (404, 404, 404), True),
        ("https://h/", (404, 404, 404), True),
        ("http://h:8000/api", (404, 404, 404), False),  # a path of its own: no guess
        ("http://h:8000/", (404, 405, 404), False),  # something answers there
        ("http://h:8000/", (404, 500, 404), False),
    ],
)
def test_a_site_root_that_answers_404_to_everything_names_the_usual_paths(
    target: str, statuses: tuple[int, ...], hinted: bool
) -> None:
    (plan,) = plan_targets(target)
    failures = [
        (config, _http_error(status))
        for config, status in zip(plan.configs, statuses, strict=True)
    ]
    message = str(fallback_error(plan, failures))
    root = target.rstrip("/")
    hint = (
        "; nothing answers at the root: MCP servers are usually at /mcp (Streamable HTTP)"
        f" or /sse (HTTP+SSE), e.g. {root}/mcp"
    )
    assert message.endswith(hint) is hinted, message


def test_http_errors_carry_their_status() -> None:
    assert [_http_error(s).http_status for s in (401, 403, 404, 405, 500, 503)] == [
        401,
        403,
        404,
        405,
        500,
        503,
    ]
    jsonrpc_in_a_4xx = b'{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"no"}}'
    error = error_for_response(400, jsonrpc_in_a_4xx, method="tools/call")
    assert isinstance(error, errors.ServerError) and error.code == -32602
    assert error.http_status == 400
    assert errors.ServerError("a JSON-RPC error").http_status is None
    # A 401/403 however it is built (the legacy SSE stream builds its own).
    assert unauthorized_error(401, None).http_status == 401


def test_plan_describe_of_an_argv() -> None:
    assert Plan(("python", "s.py"), ()).describe() == "python s.py"


def test_nul_in_a_target_is_a_detection_error() -> None:
    with pytest.raises(errors.TransportDetectionError, match="NUL"):
        plan_targets("python s.py\x00")


def test_fallback_error_is_one_line_whatever_the_reasons_say() -> None:
    (plan,) = plan_targets("http://h")
    failures = [(config, errors.TransportError("bad\n  body\r\nline")) for config in plan.configs]
    message = str(fallback_error(plan, failures))
    assert "\n" not in message and "\r" not in message
    assert message.count("bad body line") == 3
