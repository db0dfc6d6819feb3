"""``examples/run_all.py``'s knobs and preflight (EX-2, EX-4).

EX-2: ``RUN_NPX``, the remote servers of ``MCP_SERVER_URL`` / ``ZAPIER_MCP_URL`` with
their bearer tokens, Vertex AI from ``VERTEX_CREDENTIALS_FILE``, ``examples/secrets.env``
gitignored. EX-4: the preflight warns and never aborts, even when the interpreter it is
given does not exist. The remote-server run is proven against the real SDK server over
Streamable HTTP, through the recording tap (the token on the wire).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "tests" / "servers"
if str(SERVERS) not in sys.path:
    sys.path.insert(0, str(SERVERS))

from http_peers import sdk_http_server  # noqa: E402
from http_tap import http_tap  # noqa: E402


@pytest.fixture(scope="module")
def run_all() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "run_all_harness", ROOT / "examples" / "run_all.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["run_all_harness"] = module
    spec.loader.exec_module(module)
    return module


def by_label(run_all: ModuleType, label: str) -> object:
    [example] = [e for e in run_all.EXAMPLES if e.label == label]
    return example


def test_the_preflight_warns_and_does_not_abort(tmp_path: Path) -> None:
    """EX-4: an interpreter that does not exist, no python3/python on PATH, RUN_NPX=1
    without npx: each a warning on stderr; every example is then a SKIP, none FAILs."""
    env = {
        "PATH": str(tmp_path),  # nothing there
        "PYTHON": str(tmp_path / "no-such-python"),
        "RUN_AI": "0",
        "RUN_NPX": "1",
        "LOG_DIR": str(tmp_path / "logs"),
        "HOME": str(tmp_path),
    }
    proc = subprocess.run(
        [sys.executable, "examples/run_all.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    warnings = proc.stderr.splitlines()
    assert (
        f"warning: interpreter {env['PYTHON']} (PYTHON) not found; every example is skipped"
        in warnings
    )
    assert "warning: no 'python' on PATH (the examples' docs run them as `python ...`)" in warnings
    assert "warning: RUN_NPX=1 but npx is not on PATH; its example is skipped" in warnings
    verdicts = [line for line in proc.stdout.splitlines() if line[:4] in ("PASS", "FAIL", "SKIP")]
    assert verdicts and all(line.startswith("SKIP") for line in verdicts), proc.stdout
    assert "Traceback" not in proc.stderr


def test_the_knobs_gate_their_examples(run_all: ModuleType, tmp_path: Path) -> None:
    npx = by_label(run_all, "npx server-everything")
    path = {"PATH": os.environ["PATH"]}
    assert run_all.gated(npx, path) == "RUN_NPX=1 not set"
    assert run_all.gated(npx, {"RUN_NPX": "1", "PATH": str(tmp_path)}) == "not on PATH: npx"
    remote = by_label(run_all, "MCP_SERVER_URL")
    assert run_all.gated(remote, {}) == "MCP_SERVER_URL not set"
    assert run_all.gated(remote, {"MCP_SERVER_URL": ""}) == "MCP_SERVER_URL not set"
    assert run_all.gated(by_label(run_all, "Zapier"), {}) == "ZAPIER_MCP_URL not set"
    verdict = run_all.run_one(npx, {}, sys.executable, 5, tmp_path)
    assert (verdict.status, verdict.name) == ("SKIP", "server_tools.py (npx server-everything)")


def test_a_remote_server_is_listed_with_its_token(run_all: ModuleType, tmp_path: Path) -> None:
    remote = by_label(run_all, "MCP_SERVER_URL")
    with sdk_http_server("streamable-http") as peer, http_tap(peer) as tap:
        env = {**os.environ, "MCP_SERVER_URL": tap.url, "MCP_SERVER_TOKEN": "tok-123"}
        verdict = run_all.run_one(remote, env, sys.executable, 120, tmp_path)
        assert verdict.status == "PASS", verdict.log.read_text() if verdict.log else verdict
        posts = tap.recorder.posts()  # every request, whichever era the server chose
    assert posts and all(p.header("authorization") == "Bearer tok-123" for p in posts)
    assert "✅ server-tools:" in verdict.log.read_text()
    # The other remote knob passes its own token, never this one.
    zapier = by_label(run_all, "Zapier")
    assert zapier.token_env == "ZAPIER_MCP_TOKEN"


def test_vertex_credentials_become_google_genai_settings(
    run_all: ModuleType, tmp_path: Path
) -> None:
    creds = tmp_path / "sa.json"
    creds.write_text(json.dumps({"type": "service_account", "project_id": "proj-1"}))
    child: dict[str, str] = {}
    run_all.vertex_env({"VERTEX_CREDENTIALS_FILE": str(creds)}, child)
    assert child == {
        "GOOGLE_APPLICATION_CREDENTIALS": str(creds),
        "GOOGLE_GENAI_USE_VERTEXAI": "true",
        "GOOGLE_CLOUD_LOCATION": "us-central1",
        "GOOGLE_CLOUD_PROJECT": "proj-1",
    }
    kept = {"GOOGLE_CLOUD_PROJECT": "mine"}
    run_all.vertex_env({"VERTEX_CREDENTIALS_FILE": str(creds)}, kept)
    assert kept["GOOGLE_CLOUD_PROJECT"] == "mine"
    keyed: dict[str, str] = {}
    run_all.vertex_env({"VERTEX_CREDENTIALS_FILE": str(creds), "GEMINI_API_KEY": "k"}, keyed)
    assert keyed == {}  # a Gemini key wins
    google = [e for e in run_all.EXAMPLES if e.script == "google_tools.py" and e.online]
    assert google and "VERTEX_CREDENTIALS_FILE" in google[0].keys


def test_secrets_env_is_gitignored_and_its_template_lists_every_key(run_all: ModuleType) -> None:
    proc = subprocess.run(
        ["git", "check-ignore", "-q", "examples/secrets.env"], cwd=ROOT, capture_output=True
    )
    assert proc.returncode == 0, "examples/secrets.env is not gitignored"
    template = (ROOT / "examples" / "secrets.env.example").read_text()
    for key in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "VERTEX_CREDENTIALS_FILE",
        "MCP_SERVER_URL",
        "MCP_SERVER_TOKEN",
        "ZAPIER_MCP_URL",
        "ZAPIER_MCP_TOKEN",
    ):
        assert f"\n{key}=" in template, key
