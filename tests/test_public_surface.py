"""The public surface (issue 22 item 6): every public module of ``mcp_proto``,
``mcp_io_sync``, ``mcp_io_trio`` and ``mcp_io_common`` declares ``__all__``, sorted
the way ruff's RUF022 sorts it; every name in it imports; every class and function the
module defines without a leading underscore is in it; and no star export shadows a
builtin (``ConnectionError`` is ``MCPConnectionError`` there)."""

from __future__ import annotations

import builtins
import importlib
import inspect
import pkgutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

PACKAGES = ("mcp_proto", "mcp_io_common", "mcp_io_sync", "mcp_io_trio")


def _public_modules() -> list[str]:
    names = []
    for package in PACKAGES:
        names.append(package)
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
            parts = info.name.split(".")
            if any(part.startswith("_") for part in parts[1:]):
                continue  # private (``_record``, ``cli._args``, ``cli.__main__``...)
            names.append(info.name)
    return sorted(names)


MODULES = _public_modules()
#: Defined, and deliberately not star-exported: the builtin's name (exported as
#: ``MCPConnectionError``; ``errors.ConnectionError`` is the same class).
# ProxyError and ProxyAuthenticationError (the WebSocket proxy tunnel) join __all__ and
# the shells' exports once the shells' export lists are restructured (helper h2-dup).
KEPT_OUT = {"mcp_proto.errors": {"ConnectionError"}}


def _isort_key(name: str) -> tuple[int, str]:
    """RUF022's "isort-style" order: CONSTANTS, then Classes, then the rest."""
    if name.isupper() and len(name) > 1:
        return 0, name
    if name[:1].isupper():
        return 1, name
    return 2, name


def test_the_public_modules_are_found() -> None:
    for expected in ("mcp_proto", "mcp_proto.results", "mcp_proto.connection", "mcp_io_sync.cli"):
        assert expected in MODULES
    assert not any(".cli._" in name or name.endswith("__main__") for name in MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_all_is_declared_sorted_and_importable(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__dict__.get("__all__")
    assert isinstance(exported, list), f"{name} has no __all__"
    assert len(set(exported)) == len(exported), f"{name}.__all__ repeats a name"
    assert exported == sorted(exported, key=_isort_key), f"{name}.__all__ is not sorted"
    for attr in exported:
        assert getattr(module, attr) is not None or attr.isupper(), f"{name}.{attr}"


@pytest.mark.parametrize("name", MODULES)
def test_all_lists_every_public_definition(name: str) -> None:
    module = importlib.import_module(name)
    defined = _defined_here(module)
    missing = sorted(defined - set(module.__all__) - KEPT_OUT.get(name, set()))
    assert missing == [], f"{name} defines public names left out of __all__: {missing}"


def _defined_here(module: ModuleType) -> set[str]:
    out = set()
    for attr, value in vars(module).items():
        if attr.startswith("_") or not (inspect.isclass(value) or inspect.isfunction(value)):
            continue
        if getattr(value, "__module__", None) == module.__name__:
            out.add(attr)
    return out


@pytest.mark.parametrize("package", ["mcp_proto", "mcp_io_sync", "mcp_io_trio"])
def test_star_imports_shadow_no_builtin(package: str) -> None:
    module = importlib.import_module(package)
    shadowing = sorted(set(module.__all__) & set(dir(builtins)))
    assert shadowing == []
    assert "MCPConnectionError" in module.__all__


def test_the_top_level_is_a_deliberate_list() -> None:
    import mcp_proto

    exported = set(mcp_proto.__all__)
    # The machine, its frames and events; the client layer; the typed results.
    for name in ("Connection", "Write", "StartExchange", "CallSucceeded", "ClientCore"):
        assert name in exported
    for name in ("ToolResult", "PromptResult", "CompletionResult", "ResourcePage"):
        assert name in exported
    # The session inside the machine and its own events are not the API.
    for name in ("Session", "State", "ResponseReceived", "RequestFailed", "ProgressReceived"):
        assert name not in exported and not hasattr(mcp_proto, name)
    # No helpers leaking from the module's own imports.
    for name in ("Any", "TYPE_CHECKING", "annotations"):
        assert name not in exported


def test_star_import_of_each_package_works_in_a_fresh_interpreter() -> None:
    code = (
        "from mcp_proto import *\n"
        "from mcp_io_sync import *\n"
        "from mcp_io_trio import *\n"
        "assert ConnectionError is __builtins__.ConnectionError\n"
        "assert issubclass(MCPConnectionError, MCPError)\n"
        "assert ToolResult and Connection and header_params\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.parametrize("package", ["mcp_proto", "mcp_io_sync", "mcp_io_trio"])
def test_every_package_exports_every_error_class(package: str) -> None:
    from mcp_proto import errors

    module = importlib.import_module(package)
    classes = {n for n in errors.__all__ if isinstance(getattr(errors, n), type)}
    assert sorted(classes - set(module.__all__)) == []


def test_a_type_checker_sees_every_exported_name(tmp_path: Path) -> None:
    # The shared names come from ``mcp_proto.exports`` by star import and an ``__all__``
    # built on the imported one: mypy must still see each of them as exported (under
    # --strict, a name a module does not export is an error), and no more.
    from mypy import api

    lines = []
    for package in ("mcp_proto", "mcp_io_sync", "mcp_io_trio"):
        for name in importlib.import_module(package).__all__:
            lines.append(f"from {package} import {name} as {package}_{name}")
    lines.append("from mcp_io_sync import server_error_from")  # not API: must be an error
    probe = tmp_path / "probe.py"
    probe.write_text("\n".join(lines) + "\n")
    out, _err, status = api.run(
        ["--strict", "--follow-imports=silent", "--no-error-summary", str(probe)]
    )
    assert status == 1
    # (the path as mypy's cache may remember it from an earlier run: compared from the name)
    assert [line.split("probe.py", 1)[-1] for line in out.splitlines()] == [
        f':{len(lines)}: error: Module "mcp_io_sync" has no attribute'
        ' "server_error_from"  [attr-defined]'
    ]


def test_the_per_server_methods_are_typed_for_each_shell(tmp_path: Path) -> None:
    # ServerMethods is written once for both shells (mcp_proto/client/scoped.py); a
    # type checker still sees a blocking shell's server return the value and the Trio
    # shell's a coroutine of it, and refuses a ``server=`` (the object is the server).
    from mypy import api

    probe = tmp_path / "probe_scoped.py"
    probe.write_text(
        "import mcp_io_sync, mcp_io_trio\n"
        "def f(c: mcp_io_sync.Client) -> None:\n"
        "    s = c.servers[0]\n"
        "    reveal_type(s.call_tool('x', {'a': 1}))\n"
        "    reveal_type(s.list_tools())\n"
        "    reveal_type(s.subscribe_resource('u'))\n"
        "    reveal_type(s.terminate_session())\n"
        "    s.call_tool('x', server='y')\n"
        "async def g(c: mcp_io_trio.Client) -> None:\n"
        "    s = c.servers[0]\n"
        "    reveal_type(await s.call_tool('x', {'a': 1}, timeout=1.0))\n"
        "    reveal_type(s.read_resource)\n"
    )
    out, _err, _status = api.run(
        ["--strict", "--follow-imports=silent", "--no-error-summary", str(probe)]
    )
    lines = [line.split("probe_scoped.py", 1)[-1] for line in out.splitlines()]
    assert lines == [
        ':4: note: Revealed type is "mcp_proto.results.ToolResult"',
        ':5: note: Revealed type is "list[mcp_proto.types.Tool]"',
        ':6: note: Revealed type is "bool"',
        ':7: note: Revealed type is "None"',
        ':8: error: Unexpected keyword argument "server"  [call-arg]',
        ':11: note: Revealed type is "mcp_proto.results.ToolResult"',
        ':12: note: Revealed type is "def (uri: str, *, timeout: float | None =, progress: '
        "(def (float, float | None, str | None) -> Any) | None =) -> typing."
        'Coroutine[Any, Any, list[mcp_proto._resource_types.ResourceContent]]"',
    ], out
