"""Neither shell imports the other (issue 9, item 5), and a shell holds no protocol
(issue 22): what it may take from ``mcp_proto`` is an allowlist.

``mcp_io_sync`` (threads, subprocess) and ``mcp_io_trio`` (Trio) are peers: a Trio
program must not load the blocking shell, nor a blocking one Trio. What both need is
pure (``mcp_proto``) or OS/HTTP-library mechanics (``mcp_io_common``, which imports
neither shell nor any event loop). Checked on the source with ``ast``, every import
statement included (lazy ones inside functions too), and by importing each shell in a
fresh interpreter.

A shell's code (``mcp_io_sync``, ``mcp_io_trio``, ``mcp_io_common``; the CLI, an
application on the blocking shell, is not shell code) imports from ``mcp_proto`` only
what :data:`ALLOWED` lists (the machine, its frames and events, errors, config, value
types, ``BaseClient`` and its parts), and its code (docstrings and comments aside)
names no MCP method, no JSON-RPC error code and no MCP header.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: package -> top-level modules it must never import.
FORBIDDEN = {
    "mcp_io_sync": {"mcp_io_trio", "trio"},
    "mcp_io_trio": {"mcp_io_sync"},
    "mcp_io_common": {"mcp_io_sync", "mcp_io_trio", "trio", "asyncio", "anyio"},
}


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_never_imports_the_other_shell(package: str) -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: import {name}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for line, name in _imports(path)
        if name.split(".")[0] in FORBIDDEN[package]
    ]
    assert offenders == []


@pytest.mark.parametrize(
    ("shell", "absent"), [("mcp_io_sync", "mcp_io_trio"), ("mcp_io_trio", "mcp_io_sync")]
)
def test_importing_a_shell_does_not_load_the_other(shell: str, absent: str) -> None:
    code = f"import sys, {shell}; print({absent!r} in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "False"


def test_the_checker_sees_an_offending_import(tmp_path: Path) -> None:
    # The walk finds lazy imports inside functions, so the test above can fail.
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from mcp_io_sync._base import BaseServer\n")
    assert _imports(module) == [(2, "mcp_io_sync._base")]


# ---------------------------------------------------------------------- protocol vocabulary

#: Protocol vocabulary that has no place in a shell (issue 9, item 5): header names,
#: method names, retry and backoff decisions, response classification, SSE parsing.
#: All of it is the machine's (``mcp_proto.connection``); a shell only runs exchanges.
PROTOCOL_VOCABULARY = (
    '"Last-Event-ID"',
    '"Mcp-Session-Id"',
    '"WWW-Authenticate"',
    '"notifications/',
    '"initialize"',
    '"tools/call"',
    "backoff_delay",
    "is_retryable",
    "classify_response",
    "SSEParser",
)

#: Shells whose every module is checked (a shell joins once it drives the machine).
VOCABULARY_FREE_SHELLS = ["mcp_io_sync", "mcp_io_trio"]


def _vocabulary_in(path: Path) -> list[str]:
    """``file:line: word`` for each vocabulary word in the file (first occurrence)."""
    text = path.read_text(encoding="utf-8")
    return [
        f"{path.name}:{text.count(chr(10), 0, text.index(word)) + 1}: {word}"
        for word in PROTOCOL_VOCABULARY
        if word in text
    ]


@pytest.mark.parametrize("package", VOCABULARY_FREE_SHELLS)
def test_shell_source_has_no_protocol_vocabulary(package: str) -> None:
    offenders = [
        hit for path in sorted((ROOT / package).rglob("*.py")) for hit in _vocabulary_in(path)
    ]
    assert offenders == []


def test_the_vocabulary_check_sees_a_rule(tmp_path: Path) -> None:
    # The check can fail: a module naming a header or deciding a retry is found.
    module = tmp_path / "m.py"
    module.write_text('x = 1\nheaders = {"Mcp-Session-Id": sid}\nif is_retryable(m, e): pass\n')
    assert _vocabulary_in(module) == ['m.py:2: "Mcp-Session-Id"', "m.py:3: is_retryable"]


# ---------------------------------------------------------------------- the allowlist

#: What shell code may import from ``mcp_proto``: module -> the names (``None``: any).
ALLOWED: dict[str, frozenset[str] | None] = {
    # The per-server machine, its frames and events.
    "mcp_proto.connection": None,
    "mcp_proto.connection.events": None,
    "mcp_proto.connection.frames": None,
    "mcp_proto._util": frozenset({"NEED_DATA", "export_order"}),
    "mcp_proto.stdio": frozenset({"frame"}),  # one message as one stdio line
    # The client above it: BaseClient and what it hands a shell.
    "mcp_proto.client": frozenset({"ClientCore"}),
    "mcp_proto.client.base": None,
    "mcp_proto.client.routing": None,
    "mcp_proto.client.scoped": None,
    "mcp_proto.client.streaming": None,  # call_tool_streaming's chunk buffer
    "mcp_proto.client.subscription": None,
    "mcp_proto.client.router": frozenset({"ServerSelector"}),
    "mcp_proto.effects": None,
    "mcp_proto.handlers": frozenset({"BUSY", "FAILED", "Reply"}),
    "mcp_proto.targets": None,  # connect(): the plans of a target, run as an operation
    "mcp_proto.server_view": frozenset({"ServerView"}),
    "mcp_proto.session": frozenset({"ServerInfo"}),
    # Errors, configuration, limits, value types (the public API re-exports them).
    # (``__version__``: the distribution's one version, which the shells re-export.)
    "mcp_proto": frozenset({"__version__", "deprecations", "events", "exports", "llm"}),
    "mcp_proto.exports": None,  # what every package exports alike
    "mcp_proto.errors": None,
    "mcp_proto.config": None,
    "mcp_proto.limits": frozenset({"Limits"}),
    "mcp_proto.types": None,
    "mcp_proto.results": None,  # the typed results the client's methods return
    # The task handle, and which notifications announce a task's status (the CLI).
    "mcp_proto.tasks": frozenset({"STATUS_NOTIFICATIONS", "Task", "TaskPage", "TaskStatus"}),
    # Where a WebSocket server's socket goes (host, port, TLS) and how long its close waits
    # (RFC 6455 § 7.1.1), the OAuth value types a
    # file storage keeps, and what BrowserOAuth and a definition file's "oauth" entry
    # hand the provider (the browser step's effect and answer; issue 21).
    "mcp_proto.websocket": frozenset({"CLOSE_WAIT", "parse_ws_url"}),
    # What a server's configure_http settled (issue 24 item 8, CUST-1): the TLS context,
    # the proxy and the per-request headers the core computes; a shell only uses them.
    "mcp_proto.http_settings": frozenset({"HttpSettings", "RequestHeadersError"}),
    # A proxy's CONNECT tunnel: its rules are the core's, the shells move the bytes.
    "mcp_proto.proxy_tunnel": frozenset({"ProxyEndpoint", "ProxyTunnel", "parse_proxy_url"}),
    # Which of the environment's variables name proxies (the shells read os.environ,
    # the core decides which proxy a URL takes: trust_env).
    "mcp_proto.proxy_env": frozenset({"proxy_variables"}),
    "mcp_proto.oauth": frozenset(
        {
            "AuthorizationRecord",
            "AuthorizationResponse",
            "ClientInfo",
            "DEFAULT_REDIRECT_URI",
            "OAuthCallbackError",
            "OAuthCallbackPortInUseError",
            "OAuthCallbackTimeoutError",
            "OAuthProvider",
            "OpenAuthorization",
            "Token",
            # BrowserOAuth.authenticate runs the provider's flows outside a connection
            # (AUTH-2): it performs their exchanges and logs their notices, as the
            # connection machine's StartExchange frames are performed elsewhere.
            "Flow",
            "HttpRequest",
            "HttpResponse",
            "Notice",
            "check_redirect_uri",
            # oauth_client (§E5, AUTH-33): a configuration with a provider attached.
            "OAuthStorage",
        }
    ),
    # Definition files: the rule for ${workspaceFolder} is the core's, the shells give
    # it the file's path and the home folder.
    "mcp_proto.placeholders": frozenset({"workspace_folder"}),
    "mcp_proto.modern.meta": frozenset({"Extensions", "HostMeta"}),
    "mcp_proto.modern.discover": frozenset({"EraCache"}),
    "mcp_proto.modern.notify_queue": frozenset({"ListenFilter"}),
    "mcp_proto.modern.cache": frozenset({"CacheInfo", "CacheKind"}),
    "mcp_proto.modern.headers": frozenset({"header_params"}),
    "mcp_proto.modern.mrtr": frozenset({"InputRequiredWait"}),
}

SHELL_PACKAGES = ("mcp_io_sync", "mcp_io_trio", "mcp_io_common")


def _is_cli(path: Path) -> bool:
    """The CLI (``cli.py``, ``_cli_*.py``, a ``cli/`` package): an application."""
    return path.name == "cli.py" or path.name.startswith("_cli_") or "cli" in path.parts[:-1]


def shell_modules() -> list[Path]:
    return [
        path
        for package in SHELL_PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if not _is_cli(path.relative_to(ROOT))
    ]


def _core_imports(path: Path) -> list[tuple[int, str, str]]:
    """(line, module, name) for every name imported from ``mcp_proto``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: list[tuple[int, str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == "mcp_proto":
                found += [(node.lineno, node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            found += [
                (node.lineno, a.name, "*module*")
                for a in node.names
                if a.name.split(".")[0] == "mcp_proto"
            ]
    return found


def _lazy_imports(path: Path) -> list[tuple[int, str, str]]:
    """``"name": "mcp_proto.module"`` pairs of a lazy-attribute table."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [
        (key.lineno, value.value, key.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Dict)
        for key, value in zip(node.keys, node.values, strict=True)
        if isinstance(key, ast.Constant)
        and isinstance(value, ast.Constant)
        and isinstance(value.value, str)
        and value.value.startswith("mcp_proto.")
        and isinstance(key.value, str)
    ]


def _not_allowed(path: Path) -> list[str]:
    bad = []
    for line, module, name in sorted(_core_imports(path) + _lazy_imports(path)):
        if module not in ALLOWED:
            bad.append(f"{path.name}:{line}: {module}")
            continue
        names = ALLOWED[module]
        if names is not None and name not in names:
            bad.append(f"{path.name}:{line}: {module}.{name}")
    return bad


def test_shells_import_only_the_allowlist_from_the_core() -> None:
    offenders = [hit for path in shell_modules() for hit in _not_allowed(path)]
    assert offenders == []


def test_the_allowlist_check_sees_an_import_outside_it(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from mcp_proto.client.era import request\n"
        "def f():\n    from mcp_proto.handlers import serve_request, BUSY\n"
        "import mcp_proto.jsonrpc\n"
        'LAZY = {"Thing": "mcp_proto.modern.cache", "Other": "mcp_proto.jsonrpc"}\n'
    )
    assert _not_allowed(module) == [
        "m.py:1: mcp_proto.client.era",
        "m.py:3: mcp_proto.handlers.serve_request",
        "m.py:4: mcp_proto.jsonrpc",
        "m.py:5: mcp_proto.jsonrpc",
        "m.py:5: mcp_proto.modern.cache.Thing",
    ]


# ---------------------------------------------------------------------- no protocol words

#: MCP method names: ``initialize``, ``ping``, and ``<family>/<name>``.
_METHOD = re.compile(
    r"^(initialize|ping|(notifications|tools|resources|prompts|completion|logging|roots|"
    r"sampling|elicitation|subscriptions|server|tasks)/[A-Za-z/_]+)$"
)
#: MCP (and its HTTP transport's) header names, compared without case.
_HEADERS = frozenset(
    {
        "mcp-session-id",
        "mcp-protocol-version",
        "last-event-id",
        "authorization",
        "www-authenticate",
        "mcp-method",
        "mcp-name",
    }
)


def _docstring_nodes(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _protocol_words(path: Path) -> list[str]:
    """``file:line: word`` for each method name, JSON-RPC code or MCP header in the
    module's code (docstrings aside; comments are not in the tree)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    docs = _docstring_nodes(tree)
    hits = []
    for node in sorted(ast.walk(tree), key=lambda n: getattr(n, "lineno", 0)):
        if isinstance(node, ast.Constant) and id(node) not in docs:
            value = node.value
            if isinstance(value, str) and (
                _METHOD.match(value)
                or value.lower() in _HEADERS
                or value.lower().startswith("mcp-param-")
            ):
                hits.append(f"{path.name}:{node.lineno}: {value!r}")
            elif isinstance(value, int) and not isinstance(value, bool) and 32000 <= value <= 32768:
                hits.append(f"{path.name}:{node.lineno}: {value}")  # -32xxx: a JSON-RPC code
    return hits


def test_shell_code_names_no_method_code_or_header() -> None:
    offenders = [hit for path in shell_modules() for hit in _protocol_words(path)]
    assert offenders == []


def test_the_protocol_word_check_sees_them(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        '"""Sends notifications/cancelled (a docstring: fine)."""\n'
        'M = "notifications/cancelled"\n'
        "CODE = -32603\n"
        'H = {"Authorization": token}\n'
        'P = "Mcp-Param-Region"\n'
        'OK = "tools"\n'
    )
    assert _protocol_words(module) == [
        "m.py:2: 'notifications/cancelled'",
        "m.py:3: 32603",
        "m.py:4: 'Authorization'",
        "m.py:5: 'Mcp-Param-Region'",
    ]
