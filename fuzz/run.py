#!/usr/bin/env python3
"""Run fuzz targets: ``python fuzz/run.py [TARGET ...] [options] [-- libFuzzer args]``.

Without atheris (or with ``--plain``) each target runs under the hypothesis byte-stream
driver; with atheris, coverage-guided under libFuzzer. ``--seconds`` bounds each target.
``--corpus`` only replays the committed corpus (what ``make test`` does, via pytest).
Targets: see ``TARGETS`` below, or ``--list``. See docs/testing.md, "Fuzzing".
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
import time
from collections.abc import Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _fuzzlib import (
    CORPUS_DIR,
    FUZZ_DIR,
    WORK_DIR,
    Target,
    have_atheris,
    run_atheris,
    run_corpus,
    run_for,
)

#: target name -> module (fuzz/fuzz_<module>.py), in the order ``make fuzz`` runs them.
TARGETS: dict[str, str] = {
    "stdio": "fuzz_stdio",
    "sse": "fuzz_sse",
    "jsonrpc": "fuzz_jsonrpc",
    "gzip": "fuzz_gzip",
    "http": "fuzz_http",
    "serve_request": "fuzz_serve_request",
    "schema": "fuzz_schema",
    "ecma_regex": "fuzz_ecma_regex",
    "config": "fuzz_config",
    "session": "fuzz_session",
    "oauth_metadata": "fuzz_oauth_metadata",
    "oauth_token": "fuzz_oauth_token",
    "oauth_registration": "fuzz_oauth_registration",
    "oauth_challenge": "fuzz_oauth_challenge",
    "tasks": "fuzz_tasks",
    "skills": "fuzz_skills",
    "websocket": "fuzz_websocket",
    "proxy_tunnel": "fuzz_proxy_tunnel",
    "results": "fuzz_results",
    "connection": "fuzz_connection",
}


def load(name: str) -> Target:
    module = importlib.import_module(TARGETS[name])
    target = module.TARGET
    assert isinstance(target, Target) and target.name == name
    return target


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help="default: all")
    parser.add_argument("--seconds", type=float, default=float(os.environ.get("FUZZ_SECONDS", 60)))
    parser.add_argument("--plain", action="store_true", help="hypothesis driver even with atheris")
    parser.add_argument("--corpus", action="store_true", help="only replay the corpus")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--atheris-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--merge",
        action="store_true",
        help="(atheris) add the inputs of fuzz/.work/<target> that reach new coverage"
        " to fuzz/corpus/<target>",
    )
    argv = list(sys.argv[1:] if argv is None else argv)
    # Everything after "--" goes to libFuzzer untouched.
    rest = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    names = args.targets or list(TARGETS)
    if args.list:
        for name in TARGETS:
            print(f"{name:14} {load(name).description}")
        return 0
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        parser.error(f"unknown target(s) {', '.join(unknown)}; use --list")
    if args.corpus:
        for name in names:
            print(f"{name}: {run_corpus(load(name))} corpus inputs held the contract")
        return 0
    if args.merge:
        for name in names:
            (CORPUS_DIR / name).mkdir(parents=True, exist_ok=True)
            code = subprocess.call(
                [sys.executable, __file__, name, "--", "-merge=1", "-runs=0"], cwd=FUZZ_DIR
            )
            if code != 0:
                return code
        return 0
    if args.atheris_child:  # libFuzzer re-running itself (see run_atheris)
        run_atheris(load(names[0]), rest, child=True)
        return 0
    if have_atheris() and not args.plain:
        if len(names) == 1:
            if "-merge=1" in rest:
                target = load(names[0])
                run_atheris(target, rest, dirs=[CORPUS_DIR / target.name, WORK_DIR / target.name])
                return 0
            run_atheris(load(names[0]), [f"-max_total_time={int(args.seconds)}", *rest])
            return 0
        # libFuzzer exits the process when it is done: one process per target.
        for name in names:
            print(f"=== {name} (atheris, {int(args.seconds)} s)", flush=True)
            code = subprocess.call(
                [sys.executable, __file__, name, f"--seconds={args.seconds}", "--", *rest]
            )
            if code != 0:
                return code
        return 0
    if not have_atheris() and not args.plain:
        print("atheris is not installed: hypothesis byte-stream driver", file=sys.stderr)
    for name in names:
        target = load(name)
        start = time.monotonic()
        count = run_corpus(target) + run_for(target, args.seconds, args.seed)
        elapsed = time.monotonic() - start
        print(f"{name}: {count} inputs in {elapsed:.0f} s, contract held", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
