#!/usr/bin/env python3
"""Mutation testing of the pure core, one module at a time (``make mutate``; issue 11).

Each module is mutated by mutmut (3.x) and judged only by its own test files (the
``MODULES`` table), with ``CI=true`` so hypothesis runs its fixed examples: a mutant that
only random seeds would catch counts as surviving. The run happens in a scratch copy
(``$MUTATE_DIR``, default ``$TMPDIR/mcp-proto-mutate/<module>``), never in the working
tree, so the repository is never left mutated.

    python fuzz/mutate.py                 # every module in MODULES
    python fuzz/mutate.py sse stdio       # some
    python fuzz/mutate.py sse --show      # then list the survivors' diffs

Prints killed / total per module. Surviving mutants are listed with ``mutmut results``
in the scratch copy; docs/testing.md records the scores and the equivalent mutants.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: module -> the test files that judge it (its own, and the survivors' tests of issue 11).
MODULES: dict[str, list[str]] = {
    "sse": ["tests/proto/test_sse.py", "tests/proto/test_mutants_framing.py"],
    "stdio": ["tests/proto/test_stdio_framer.py", "tests/proto/test_mutants_framing.py"],
    "http": [
        "tests/proto/test_http.py",
        "tests/proto/test_mutants_http.py",
        "tests/proto/test_http_streams.py",
        "tests/proto/test_http_errors.py",
    ],
    "session": [
        "tests/proto/test_session.py",
        "tests/proto/test_mutants_session.py",
        "tests/proto/test_session_close.py",
        "tests/proto/test_unusable_output.py",
    ],
    "pagination": ["tests/proto/test_client_core.py", "tests/proto/test_mutants_http.py"],
    "compression": [
        "tests/proto/test_compression.py",
        "tests/proto/test_mutants_compression.py",
    ],
    "jsonrpc": [
        "tests/proto/test_jsonrpc.py",
        "tests/proto/test_jsonrpc_backends.py",
        "tests/proto/test_jsonrpc_splice.py",
    ],
    "handlers": ["tests/proto/test_handlers.py"],
    "llm": ["tests/proto/test_llm.py"],
    "_schema_plain": ["tests/proto/test_schema_plain.py"],
}

_PYPROJECT_EXTRA = """
[tool.mutmut]
source_paths = ["mcp_proto"]
only_mutate = ["mcp_proto/{module}.py"]
also_copy = ["tests", "fuzz", "_mutate_ids.py"]
pytest_add_cli_args = ["-p", "_mutate_ids", "-p", "no:cacheprovider", "-q", "-x", "-W", "error"]
pytest_add_cli_args_test_selection = {tests}
"""


# mutmut 3 re-selects each test by its node id, and pytest cannot select a node id whose
# parameter part holds escaped bytes (b'\\xd9'): it exits 4 and mutmut counts the mutant
# as killed. This plugin, loaded before the arguments are read, selects whole test
# functions instead (all their parameters: a superset, so no verdict gets easier).
_IDS_PLUGIN = """
def pytest_load_initial_conftests(early_config, parser, args):
    seen = set()
    out = []
    for arg in args:
        if "::" in arg:
            arg = arg.split("[", 1)[0]
            if arg in seen:
                continue
            seen.add(arg)
        out.append(arg)
    args[:] = out
"""


def _scratch(module: str) -> Path:
    base = Path(os.environ.get("MUTATE_DIR", Path(tempfile.gettempdir()) / "mcp-proto-mutate"))
    where = base / module
    if where.exists():
        shutil.rmtree(where)
    where.mkdir(parents=True)
    for name in ("mcp_proto", "tests", "fuzz"):
        shutil.copytree(
            ROOT / name,
            where / name,
            ignore=shutil.ignore_patterns("__pycache__", "node_modules", ".work", "crashes"),
        )
    (where / "_mutate_ids.py").write_text(_IDS_PLUGIN, "utf-8")
    tests = MODULES[module]
    text = (ROOT / "pyproject.toml").read_text("utf-8")
    selection = "[" + ", ".join(f'"{t}"' for t in tests) + "]"
    text += _PYPROJECT_EXTRA.format(module=module, tests=selection)
    (where / "pyproject.toml").write_text(text, "utf-8")
    return where


def run(module: str, *, show: bool) -> tuple[int, int]:
    """Mutate ``module``; return (killed, total). Timeouts count as killed."""
    where = _scratch(module)
    env = {**os.environ, "CI": "true"}
    mutmut = [sys.executable, "-m", "mutmut"]
    subprocess.run([*mutmut, "run", "--max-children", "1"], cwd=where, env=env, check=False)
    out = subprocess.run(
        [*mutmut, "results", "--all", "true"],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    statuses = re.findall(r"^\s*(\S+): (\w[\w ]*)$", out, re.MULTILINE)
    total = len(statuses)
    killed = sum(1 for _, status in statuses if status in ("killed", "timeout"))
    survivors = [name for name, status in statuses if status == "survived"]
    print(f"{module}: {killed} / {total} killed; survivors: {len(survivors)}")
    if show:
        for name in survivors:
            diff = subprocess.run(
                [*mutmut, "show", name], cwd=where, env=env, capture_output=True, text=True
            ).stdout
            print(diff)
    return killed, total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help=f"default: {' '.join(MODULES)}")
    parser.add_argument("--show", action="store_true", help="print each survivor's diff")
    args = parser.parse_args()
    unknown = [m for m in args.modules if m not in MODULES]
    if unknown:
        parser.error(f"unknown module(s) {unknown}; known: {', '.join(MODULES)}")
    for module in args.modules or MODULES:
        run(module, show=args.show)
    return 0


if __name__ == "__main__":
    sys.exit(main())
