"""mcp_proto stays sans-IO: no sockets, threads, clocks, randomness, logging or environment.

Checked on the source with ``ast`` (every import statement, including ones inside
functions), so a lazy ``import time`` in some rarely-run branch is caught too.
"""

from __future__ import annotations

import ast
import importlib.util
import pkgutil
from pathlib import Path

import pytest

import mcp_proto

#: Modules that would mean I/O, threads, clocks, randomness or ambient state.
FORBIDDEN_MODULES = frozenset(
    {
        "socket",
        "ssl",
        "select",
        "selectors",
        "threading",
        "_thread",
        "multiprocessing",
        "concurrent",
        "subprocess",
        "signal",
        "time",
        "asyncio",
        "trio",
        "anyio",
        "httpcore",
        "httpx",
        "h11",
        "h2",
        "random",
        "secrets",
        "uuid",
        "logging",
        "os",
        "shutil",
        "tempfile",
        "io",
        "pathlib",
        "sys",
        "importlib",
        "datetime",
        "urllib.request",
        "http.client",
        "http.server",
    }
)

#: Builtins that do I/O or defeat the import check.
FORBIDDEN_NAMES = frozenset({"open", "print", "input", "__import__", "eval", "exec", "breakpoint"})

#: Attributes that reach the environment or a clock whatever the module is called.
FORBIDDEN_ATTRIBUTES = frozenset(
    {"environ", "getenv", "putenv", "urandom", "monotonic", "perf_counter", "utcnow", "today"}
)


def module_files() -> list[tuple[str, Path]]:
    out = [("mcp_proto", Path(mcp_proto.__file__))]
    for info in pkgutil.walk_packages(mcp_proto.__path__, prefix="mcp_proto."):
        spec = importlib.util.find_spec(info.name)
        assert spec is not None and spec.origin is not None
        out.append((info.name, Path(spec.origin)))
    return out


MODULES = module_files()


def imported_modules(tree: ast.AST, package: str) -> set[str]:
    """Absolute names of everything a module imports, at any nesting level."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: inside mcp_proto
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                names.add(f"{base}.{node.module}" if node.module else base)
                continue
            assert node.module is not None
            names.add(node.module)
            # ``from urllib import request`` imports urllib.request.
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def is_forbidden(name: str) -> bool:
    parts = name.split(".")
    return any(".".join(parts[:i]) in FORBIDDEN_MODULES for i in range(1, len(parts) + 1))


def test_every_module_found() -> None:
    names = {name for name, _ in MODULES}
    for expected in (
        "mcp_proto.jsonrpc",
        "mcp_proto.stdio",
        "mcp_proto.session",
        "mcp_proto.handlers",
        "mcp_proto.pagination",
        "mcp_proto.client",
        "mcp_proto.errors",
        "mcp_proto._util",
        "mcp_proto.limits",
        "mcp_proto.versions",
        "mcp_proto.schema",
    ):
        assert expected in names


@pytest.mark.parametrize(("name", "path"), MODULES, ids=[n for n, _ in MODULES])
def test_no_io_imports(name: str, path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    bad = sorted(n for n in imported_modules(tree, package) if is_forbidden(n))
    assert bad == [], f"{name} imports {bad}"


@pytest.mark.parametrize(("name", "path"), MODULES, ids=[n for n, _ in MODULES])
def test_no_io_builtins_or_environment(name: str, path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            bad.append(f"line {node.lineno}: {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_ATTRIBUTES:
            bad.append(f"line {node.lineno}: .{node.attr}")
    assert bad == [], f"{name} uses {bad}"


# ---- the checker itself catches what it should (so a green run means something)


@pytest.mark.parametrize(
    "source",
    [
        "import socket",
        "import os.path",
        "from os import environ",
        "from urllib import request",
        "import urllib.request as r",
        "from http import client",
        "def f():\n    import time\n    return time.monotonic()",
        "class C:\n    def m(self):\n        from trio import sleep",
        "try:\n    import anyio\nexcept ImportError:\n    pass",
        "import logging.handlers",
    ],
)
def test_checker_catches_forbidden_imports(source: str) -> None:
    names = imported_modules(ast.parse(source), "mcp_proto")
    assert any(is_forbidden(n) for n in names)


@pytest.mark.parametrize(
    "source",
    [
        "import json",
        "from urllib.parse import urlsplit",
        "from . import jsonrpc",
        "from .errors import MCPError",
        "import http",  # the package alone: HTTPStatus and friends are pure
        "from typing import Any",
    ],
)
def test_checker_allows_pure_imports(source: str) -> None:
    names = imported_modules(ast.parse(source), "mcp_proto")
    assert not any(is_forbidden(n) for n in names)
