#!/usr/bin/env python3
"""Run every example that can run on this machine; print PASS/FAIL/SKIP with a reason.

    python examples/run_all.py                 # everything runnable here
    RUN_AI=0 python examples/run_all.py        # never call a paid LLM API (what `make test` does)
    TIMEOUT=180 LOG_DIR=/tmp/logs python examples/run_all.py

Knobs (environment): ``RUN_AI`` (default 1: the LLM examples also run against the real
API when their key is set), ``RUN_NPX=1`` (also run an npm server through ``npx``, which
may download it; default off), ``PYTHON`` (interpreter, default this one), ``TIMEOUT``
(seconds per example, default 120; a timeout is a FAIL), ``LOG_DIR`` (per-example logs,
default a fresh temporary directory), ``IGNORE_XMARK=1`` (a ❌ in the output is not a
FAIL). Servers of your own: ``MCP_SERVER_URL`` (+ ``MCP_SERVER_TOKEN``) and
``ZAPIER_MCP_URL`` (+ ``ZAPIER_MCP_TOKEN``) have their tools listed; Vertex AI:
``VERTEX_CREDENTIALS_FILE`` (a service-account JSON) runs the Gemini example online
through Vertex. ``examples/secrets.env`` (gitignored; template ``secrets.env.example``)
is read when present: each ``KEY=value`` line is exported unless already set.

Not here, and why (EX-2, EX-4 name them for the Ruby original): ``RUN_OAUTH`` (there is
no interactive OAuth example: OAuth is issue 21's), and the preflight's ruby, bundle,
curl and lsof, flask (the Ruby harness started Flask and Python servers over HTTP and
waited on their ports; every server here is started by the example itself, over
stdio).

Each LLM example runs twice: offline (keys removed from its environment, a scripted model
answers through the SDK's own HTTP client) and, with ``RUN_AI=1`` and its key, online.

Verdict: FAIL on a nonzero exit, a timeout, a hard-error signature in the output (a
traceback, ``Connection refused``...), a ❌ mark, or a missing success marker; else PASS.
A missing SDK or key is a SKIP with its reason. The exit status is 1 iff something FAILed.
"""

from __future__ import annotations

import importlib.util
import json
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
KEYS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "VERTEX_CREDENTIALS_FILE",
    "GOOGLE_GENAI_USE_VERTEXAI",
)


@dataclass(frozen=True)
class Example:
    script: str
    marker: str  # the success marker the example prints
    modules: tuple[str, ...] = ()  # importable modules it needs
    keys: tuple[str, ...] = ()  # any one of these enables the online run
    args: tuple[str, ...] = ()  # "{python}" is the PYTHON knob's interpreter
    skip: str = ""  # always skipped, with this reason
    xmark_ok: bool = False
    online: bool = False
    label: str = ""  # tells apart runs of one script
    gate: str = ""  # a knob that must be 1 (RUN_NPX)
    needs: tuple[str, ...] = ()  # programs on PATH
    target_env: str = ""  # the variable holding the server URL (its argument); unset: SKIP
    token_env: str = ""  # the variable holding its bearer token (MCP_BEARER_TOKEN)

    @property
    def name(self) -> str:
        label = f" ({self.label})" if self.label else ""
        return self.script + label + (" (online)" if self.online else "")


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
        ("GEMINI_API_KEY", "GOOGLE_API_KEY", "VERTEX_CREDENTIALS_FILE"),
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
    Example(
        "server_tools.py",
        "✅ server-tools:",
        ("mcp",),
        args=("{python}", "examples/demo_server.py"),
    ),
    Example(
        "server_tools.py",
        "✅ server-tools:",
        label="npx server-everything",
        args=("npx", "-y", "@modelcontextprotocol/server-everything"),
        gate="RUN_NPX",
        needs=("npx",),
    ),
    Example(
        "server_tools.py",
        "✅ server-tools:",
        label="MCP_SERVER_URL",
        target_env="MCP_SERVER_URL",
        token_env="MCP_SERVER_TOKEN",
    ),
    Example(
        "server_tools.py",
        "✅ server-tools:",
        label="Zapier",
        target_env="ZAPIER_MCP_URL",
        token_env="ZAPIER_MCP_TOKEN",
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
    try:
        return subprocess.run([python, "-c", probe], capture_output=True).returncode == 0
    except OSError:  # no such interpreter: the preflight said so
        return False


def vertex_env(env: Mapping[str, str], child: dict[str, str]) -> None:
    """``VERTEX_CREDENTIALS_FILE`` as google-genai reads Vertex AI settings: the
    service account's file, its project (unless ``GOOGLE_CLOUD_PROJECT`` is set) and a
    location (``GOOGLE_CLOUD_LOCATION``, default us-central1)."""
    path = env.get("VERTEX_CREDENTIALS_FILE")
    if not path or env.get("GEMINI_API_KEY") or env.get("GOOGLE_API_KEY"):
        return
    child["GOOGLE_APPLICATION_CREDENTIALS"] = path
    child["GOOGLE_GENAI_USE_VERTEXAI"] = "true"
    child.setdefault("GOOGLE_CLOUD_LOCATION", "us-central1")
    if not child.get("GOOGLE_CLOUD_PROJECT"):
        try:
            project = json.loads(Path(path).read_text()).get("project_id")
        except (OSError, ValueError, AttributeError):
            project = None
        if isinstance(project, str) and project:
            child["GOOGLE_CLOUD_PROJECT"] = project


def gated(example: Example, env: Mapping[str, str]) -> str | None:
    """Why ``example`` does not run here (a SKIP's reason), or None."""
    if example.skip:
        return example.skip
    if example.gate and env.get(example.gate) != "1":
        return f"{example.gate}=1 not set"
    missing = [p for p in example.needs if shutil.which(p, path=env.get("PATH")) is None]
    if missing:
        return f"not on PATH: {', '.join(missing)}"
    if example.target_env and not env.get(example.target_env):
        return f"{example.target_env} not set"
    return None


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
    name = example.name
    reason = gated(example, env)
    if reason is not None:
        return Verdict(name, "SKIP", reason)
    missing = [m for m in example.modules if not has_module(python, m)]
    if missing:
        return Verdict(name, "SKIP", f"not importable: {', '.join(missing)}")
    child = dict(env)
    if example.online:
        if env.get("RUN_AI", "1") == "0":
            return Verdict(name, "SKIP", "RUN_AI=0 (would call a paid API)")
        if not any(env.get(k) for k in example.keys):
            return Verdict(name, "SKIP", f"{' or '.join(example.keys)} not set")
        vertex_env(env, child)
    else:
        for key in KEYS:  # the offline run never reaches a provider
            child.pop(key, None)
    args = [python if a == "{python}" else a for a in example.args]
    if example.target_env:
        args.append(env[example.target_env])
        child.pop("MCP_BEARER_TOKEN", None)
        if env.get(example.token_env):
            child["MCP_BEARER_TOKEN"] = env[example.token_env]
    child["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    log = log_dir / (name.replace(" ", "_").replace("(", "").replace(")", "") + ".log")
    command = [python, str(HERE / example.script), *args]
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
    except OSError as exc:  # the interpreter could not be started
        code, output = 127, f"cannot run {python}: {exc}"
    log.write_text(output)
    status, reason = judge(example, code, output, env.get("IGNORE_XMARK") == "1")
    return Verdict(name, status, reason, log)


def preflight(python: str, env: Mapping[str, str]) -> list[str]:
    """EX-4: warn (never abort) about what the examples need; the warnings."""
    warnings: list[str] = []
    path = env.get("PATH")
    if shutil.which(python, path=path) is None and not Path(python).exists():
        warnings.append(f"interpreter {python} (PYTHON) not found; every example is skipped")
    for program in ("python3", "python"):
        if shutil.which(program, path=path) is None:
            warnings.append(
                f"no {program!r} on PATH (the examples' docs run them as `{program} ...`)"
            )
    for module in ("mcp", "trio", "openai", "anthropic", "google.genai", "agents"):
        if not has_module(python, module):
            warnings.append(f"{module} is not importable; its examples are skipped")
    if env.get("RUN_NPX") == "1" and shutil.which("npx", path=path) is None:
        warnings.append("RUN_NPX=1 but npx is not on PATH; its example is skipped")
    for line in warnings:
        print(f"warning: {line}", file=sys.stderr)
    return warnings


def main() -> int:
    env = dict(os.environ)
    read_secrets(HERE / "secrets.env", env)
    python = env.get("PYTHON", sys.executable)
    timeout = float(env.get("TIMEOUT", "120"))
    log_dir = Path(env.get("LOG_DIR") or tempfile.mkdtemp(prefix="mcp-proto-examples-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    preflight(python, env)
    print(f"logs: {log_dir}")
    verdicts = []
    for example in EXAMPLES:
        verdict = run_one(example, env, python, timeout, log_dir)
        verdicts.append(verdict)
        print(f"{verdict.status:4}  {verdict.name:44} {verdict.reason}", flush=True)
    counts = {s: sum(v.status == s for v in verdicts) for s in ("PASS", "FAIL", "SKIP")}
    print(f"{counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
