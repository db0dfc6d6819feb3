"""Count ``Any`` in the public signatures of the I/O shells (issue 22).

A public signature: a function or method whose name has no leading underscore (or is
``__init__``), in a module of ``mcp_io_sync/`` or ``mcp_io_trio/``, outside classes
whose name starts with an underscore. Each ``Any`` in a parameter or return
annotation counts once (``dict[str, Any]`` counts one). A method made from a core
operation (``name = blocking(ClientCore.name)``) has that operation's signature: it is
counted there (``self`` aside, ``Op[T]`` read as ``T``); so is a function behind
``@takes_connect_arguments`` (``connect``), with the parameters of
``mcp_io_common/connecting.py``'s ``connect_arguments``. The per-server objects'
methods (``client.servers[i].call_tool``, REQUIREMENTS §E3) are public signatures of
each shell too, though written once in ``mcp_proto/client/scoped.py``: each shell's
count includes the methods of ``ServerMethods`` and of the shell's class there
(``BlockingMethods`` / ``AwaitingMethods``). Run: ``python tools/public_any.py [-v]``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHELLS = ("mcp_io_sync", "mcp_io_trio")
SCOPED = ROOT / "mcp_proto" / "client" / "scoped.py"
#: The class of ``scoped.py`` each shell's server objects derive from, besides
#: ``ServerMethods``.
SCOPED_CLASS = {"mcp_io_sync": "BlockingMethods", "mcp_io_trio": "AwaitingMethods"}


def _anys(node: ast.expr | None) -> int:
    if node is None:
        return 0
    text = ast.unparse(node)
    return sum(1 for part in ast.walk(ast.parse(text, mode="eval")) if _is_any(part))


def _is_any(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "Any") or (
        isinstance(node, ast.Constant) and isinstance(node.value, str) and "Any" in node.value
    )


def _core_ops() -> dict[str, ast.FunctionDef]:
    """The core's operations by name (``mcp_proto/client``)."""
    ops: dict[str, ast.FunctionDef] = {}
    for module in ("tools", "prompts", "resources", "utilities", "router"):  # ClientCore's
        path = ROOT / "mcp_proto" / "client" / f"{module}.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef):
                ops.setdefault(node.name, node)
    return ops


def _connect_arguments() -> ast.FunctionDef:
    """``connect_arguments``, whose parameters ``@takes_connect_arguments`` gives."""
    tree = ast.parse((ROOT / "mcp_io_common" / "connecting.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "connect_arguments":
            return node
    raise LookupError("connect_arguments")


def _with_arguments(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
) -> ast.FunctionDef | ast.AsyncFunctionDef:
    """A function behind ``@takes_connect_arguments``: its parameters are
    ``connect_arguments``' (its return annotation stays its own)."""
    if not any(
        isinstance(d, ast.Name) and d.id == "takes_connect_arguments" for d in fn.decorator_list
    ):
        return fn
    borrowed = _connect_arguments()
    return ast.FunctionDef(
        name=fn.name, args=borrowed.args, body=fn.body, decorator_list=[], returns=fn.returns
    )


def _made_from(value: ast.expr) -> str | None:
    """``blocking(ClientCore.name)`` / ``awaiting(...)``: ``name``."""
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in ("blocking", "awaiting")
        and len(value.args) == 1
        and isinstance(value.args[0], ast.Attribute)
    ):
        return value.args[0].attr
    return None


def _functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    out: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    ops = _core_ops()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append((node.name, _with_arguments(node)))
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out.append((f"{node.name}.{item.name}", item))
                elif isinstance(item, ast.Assign) and len(item.targets) == 1:
                    target, op = item.targets[0], _made_from(item.value)
                    if isinstance(target, ast.Name) and op is not None and op in ops:
                        out.append((f"{node.name}.{target.id}", ops[op]))
    return out


def _scoped(package: str) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """The per-server methods a shell's server objects get from ``scoped.py``."""
    out: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    wanted = ("ServerMethods", SCOPED_CLASS[package])
    for node in ast.parse(SCOPED.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ClassDef) and node.name in wanted:
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out.append((f"{node.name}.{item.name}", item))
    return out


def count(package: str, verbose: bool = False) -> int:
    total = 0
    sources = [
        (path, _functions(ast.parse(path.read_text(encoding="utf-8"))))
        for path in sorted((ROOT / package).rglob("*.py"))
    ]
    sources.append((SCOPED, _scoped(package)))
    for path, functions in sources:
        for name, fn in functions:
            short = name.rsplit(".", 1)[-1]
            if short.startswith("_") and short != "__init__":
                continue
            args = fn.args
            params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
            params += [a for a in (args.vararg, args.kwarg) if a is not None]
            returns = fn.returns
            if (  # an operation's Op[T]: T is what the method returns
                isinstance(returns, ast.Subscript)
                and isinstance(returns.value, ast.Name)
                and returns.value.id == "Op"
            ):
                returns = returns.slice
            n = sum(_anys(a.annotation) for a in params) + _anys(returns)
            if n and verbose:
                print(f"  {path.relative_to(ROOT)}: {name}: {n}")
            total += n
    return total


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    for package in SHELLS:
        print(f"{package:12} {count(package, verbose)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
