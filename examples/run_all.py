#!/usr/bin/env python3
"""Run every example that can run on this machine; print PASS/FAIL/SKIP with a reason.

    python examples/run_all.py                 # everything runnable here
    RUN_AI=0 python examples/run_all.py        # never call a paid LLM API (what `make test` does)
    TIMEOUT=180 LOG_DIR=/tmp/logs python examples/run_all.py

Knobs (environment): ``RUN_AI`` (default 1: the LLM examples also run against the real
API when their key is set), ``PYTHON`` (interpreter, default this one), ``TIMEOUT``
(seconds per example, default 120; a timeout is a FAIL), ``LOG_DIR`` (per-example logs,
default a fresh temporary directory), ``IGNORE_XMARK=1`` (a ❌ in the output is not a
FAIL). ``examples/secrets.env`` (gitignored; template ``secrets.env.example``) is read
when present: each ``KEY=value`` line is exported unless already set.

Each LLM example runs twice: offline (keys removed from its environment, a scripted model
answers through the SDK's own HTTP client) and, with ``RUN_AI=1`` and its key, online.

Verdict: FAIL on a nonzero exit, a timeout, a hard-error signature in the output (a
traceback, ``Connection refused``...), a ❌ mark, or a missing success marker; else PASS.
A missing SDK or key is a SKIP with its reason. The exit status is 1 iff something FAILed.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
HARD_ERRORS = re.compile(
    r"Traceback \(most recent call last\)|Connection refused|ModuleNotFoundError|"
    r"command not found|Segmentation fault"
)
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


@dataclass(frozen=True)
class Example:
    script: str
    marker: str  # the success marker the example prints
    modules: tuple[str, ...] = ()  # importable modules it needs
    keys: tuple[str, ...] = ()  # any one of these enables the online run
    args: tuple[str, ...] = ()
    skip: str = ""  # always skipped, with this reason
    xmark_ok: bool = False
    online: bool = False


@dataclass
class Verdict:
    name: str
    status: str  # PASS / FAIL / SKIP
    reason: str
    log: Path | None = field(default=None)


_LLM = [
    Example("openai_tools.py", "✅ openai:", ("openai",), ("OPENAI_API_KEY",)),
    Example("anthropic_tools.py", "✅ anthropic:", ("anthropic",), ("ANTHROPIC_API_KEY",)),
    Example(
        "google_tools.py",
        "✅ google-genai:",
        ("google.genai",),
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    ),
    Example("openai_agents_tools.py", "✅ openai-agents:", ("agents",), ("OPENAI_API_KEY",)),
]

EXAMPLES = [
    Example("quickstart_sync.py", "countdown: Liftoff!", ("mcp",)),
    Example("quickstart_trio.py", "countdown: Liftoff!", ("mcp", "trio")),
    Example(
        "asyncio_client.py",
        "Liftoff!",
        ("mcp",),
        args=(f"{sys.executable} examples/demo_server.py", "countdown", '{"seconds": 1}'),
    ),
    # Tasks against server-everything (tests/peers, `make peers`) and streaming (EX-5).
    Example("tasks_example.py", "✅ tasks:", ("mcp",)),
    *_LLM,
    *(Example(e.script, e.marker, e.modules, e.keys, online=True) for e in _LLM),
]


def read_secrets(path: Path, env: dict[str, str]) -> None:
    if not path.is_file():
        return
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            env.setdefault(key.strip().removeprefix("export ").strip(), value.strip().strip("'\""))


def has_module(python: str, module: str) -> bool:
    if python == sys.executable:
        try:
            return importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            return False
    probe = f"import importlib.util as u, sys; sys.exit(u.find_spec({module!r}) is None)"
    return subprocess.run([python, "-c", probe], capture_output=True).returncode == 0


def judge(example: Example, returncode: int, output: str, ignore_xmark: bool) -> tuple[str, str]:
    """EX-3: the verdict from the exit status and a scan of the output."""
    if returncode == 124:
        return "FAIL", "timed out"
    if returncode != 0:
        return "FAIL", f"exit status {returncode}"
    hard = HARD_ERRORS.search(output)
    if hard:
        return "FAIL", f"hard error in output: {hard.group(0)}"
    if "❌" in output and not (ignore_xmark or example.xmark_ok):
        return "FAIL", "a ❌ mark in the output"
    if example.marker not in output:
        return "FAIL", f"success marker {example.marker!r} missing"
    return "PASS", "ok"


def run_one(
    example: Example, env: Mapping[str, str], python: str, timeout: float, log_dir: Path
) -> Verdict:
    name = example.script + (" (online)" if example.online else "")
    if example.skip:
        return Verdict(name, "SKIP", example.skip)
    missing = [m for m in example.modules if not has_module(python, m)]
    if missing:
        return Verdict(name, "SKIP", f"not importable: {', '.join(missing)}")
    child = dict(env)
    if example.online:
        if env.get("RUN_AI", "1") == "0":
            return Verdict(name, "SKIP", "RUN_AI=0 (would call a paid API)")
        if not any(env.get(k) for k in example.keys):
            return Verdict(name, "SKIP", f"{' or '.join(example.keys)} not set")
    else:
        for key in KEYS:  # the offline run never reaches a provider
            child.pop(key, None)
    child["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    log = log_dir / (name.replace(" ", "_").replace("(", "").replace(")", "") + ".log")
    command = [python, str(HERE / example.script), *example.args]
    try:
        proc = subprocess.run(
            command,
            cwd=ROOT,
            env=child,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        code, output = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout or b""
        code, output = 124, out.decode(errors="replace") if isinstance(out, bytes) else out
    log.write_text(output)
    status, reason = judge(example, code, output, env.get("IGNORE_XMARK") == "1")
    return Verdict(name, status, reason, log)


def preflight(python: str) -> None:
    """EX-4: warn (never abort) about what the examples need."""
    if shutil.which(python) is None and not Path(python).exists():
        print(f"warning: interpreter {python} not found", file=sys.stderr)
    for module in ("mcp", "openai", "anthropic", "google.genai", "agents"):
        if not has_module(python, module):
            print(f"warning: {module} is not importable; its examples are skipped", file=sys.stderr)


def main() -> int:
    env = dict(os.environ)
    read_secrets(HERE / "secrets.env", env)
    python = env.get("PYTHON", sys.executable)
    timeout = float(env.get("TIMEOUT", "120"))
    log_dir = Path(env.get("LOG_DIR") or tempfile.mkdtemp(prefix="mcp-proto-examples-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    preflight(python)
    print(f"logs: {log_dir}")
    verdicts = []
    for example in EXAMPLES:
        verdict = run_one(example, env, python, timeout, log_dir)
        verdicts.append(verdict)
        print(f"{verdict.status:4}  {verdict.name:36} {verdict.reason}", flush=True)
    counts = {s: sum(v.status == s for v in verdicts) for s in ("PASS", "FAIL", "SKIP")}
    print(f"{counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
