"""Count ``Any`` in the public signatures of the I/O shells (issue 22).

A public signature: a function or method whose name has no leading underscore (or is
``__init__``), in a module of ``mcp_io_sync/`` or ``mcp_io_trio/``, outside classes
whose name starts with an underscore. Each ``Any`` in a parameter or return
annotation counts once (``dict[str, Any]`` counts one). A method made from a core
operation (``name = blocking(ClientCore.name)``) has that operation's signature: it is
counted there (``self`` aside, ``Op[T]`` read as ``T``). Run:
``python tools/public_any.py [-v]``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHELLS = ("mcp_io_sync", "mcp_io_trio")


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
            out.append((node.name, node))
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out.append((f"{node.name}.{item.name}", item))
                elif isinstance(item, ast.Assign) and len(item.targets) == 1:
                    target, op = item.targets[0], _made_from(item.value)
                    if isinstance(target, ast.Name) and op is not None and op in ops:
                        out.append((f"{node.name}.{target.id}", ops[op]))
    return out


def count(package: str, verbose: bool = False) -> int:
    total = 0
    for path in sorted((ROOT / package).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for name, fn in _functions(tree):
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
