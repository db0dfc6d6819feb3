"""The LLM SDK examples and their harness (LLM-5, LLM-6, EX-1..EX-4).

``examples/run_all.py`` runs every example with ``RUN_AI=0``: each LLM example builds the
SDK's real request objects from ``to_*_tools()`` and dispatches the tool call through
``call_tool``, offline, against a scripted model behind the SDK's own HTTP client. The SDKs
are in the ``test`` extra, so here they must PASS, not SKIP.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_run_all_offline_passes_every_llm_example(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(RUN_AI="0", LOG_DIR=str(tmp_path), TIMEOUT="240")
    proc = subprocess.run(
        [sys.executable, "examples/run_all.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not [line for line in lines if line.startswith("FAIL")]
    for script in ("openai_tools", "anthropic_tools", "google_tools", "openai_agents_tools"):
        assert any(line.split()[:2] == ["PASS", f"{script}.py"] for line in lines), lines
        log = (tmp_path / f"{script}.py.log").read_text()
        # The model's tool call reached the MCP server and its answer reached the model.
        assert "call_tool weather({'city': 'Lisbon'})" in log
        assert '"conditions":' in log and "Here is what the tool said" in log
    online = [line for line in lines if "(online)" in line]
    assert len(online) == 4 and all(line.startswith("SKIP") for line in online)
    assert all("RUN_AI=0" in line for line in online)


@pytest.fixture(scope="module")
def run_all() -> ModuleType:
    return _load("run_all")


def test_verdicts(run_all: ModuleType) -> None:
    """EX-3: exit status, timeout, hard errors, ❌ marks and the success marker."""
    example = run_all.Example("x.py", "✅ done")
    judge = run_all.judge
    assert judge(example, 0, "✅ done\n", False) == ("PASS", "ok")
    assert judge(example, 3, "✅ done\n", False)[0] == "FAIL"
    assert judge(example, 124, "", False) == ("FAIL", "timed out")
    crash = "✅ done\nTraceback (most recent call last):\n  ...\n"
    assert judge(example, 0, crash, False)[0] == "FAIL"
    assert judge(example, 0, "✅ done\nConnection refused\n", False)[0] == "FAIL"
    assert judge(example, 0, "❌ declined\n✅ done\n", False)[0] == "FAIL"
    assert judge(example, 0, "❌ declined\n✅ done\n", True) == ("PASS", "ok")
    assert judge(example, 0, "all good\n", False)[0] == "FAIL"


def test_skips_and_secrets(run_all: ModuleType, tmp_path: Path) -> None:
    """EX-1/EX-2: a missing module or key is a SKIP with its reason; secrets.env is read."""
    missing = run_all.Example("x.py", "ok", ("no_such_module_here",))
    verdict = run_all.run_one(missing, {}, sys.executable, 5, tmp_path)
    assert (verdict.status, verdict.reason) == ("SKIP", "not importable: no_such_module_here")
    online = run_all.Example("x.py", "ok", keys=("OPENAI_API_KEY",), online=True)
    assert run_all.run_one(online, {}, sys.executable, 5, tmp_path).reason == (
        "OPENAI_API_KEY not set"
    )
    off = run_all.run_one(
        online, {"RUN_AI": "0", "OPENAI_API_KEY": "k"}, sys.executable, 5, tmp_path
    )
    assert off.status == "SKIP" and "RUN_AI=0" in off.reason
    secrets = tmp_path / "secrets.env"
    secrets.write_text("# comment\nexport OPENAI_API_KEY='sk-file'\nANTHROPIC_API_KEY=a\n")
    env = {"ANTHROPIC_API_KEY": "from-env"}
    run_all.read_secrets(secrets, env)
    assert env == {"OPENAI_API_KEY": "sk-file", "ANTHROPIC_API_KEY": "from-env"}


def test_scripted_model_refuses_a_request_without_the_tool() -> None:
    """The offline check can fail: a request that does not offer the tool is refused (400)."""
    openai = pytest.importorskip("openai")
    sys.path.insert(0, str(EXAMPLES))
    try:
        offline = _load("_offline")
    finally:
        sys.path.remove(str(EXAMPLES))
    llm = openai.OpenAI(
        api_key="offline", http_client=offline.openai_chat("weather", {}), max_retries=0
    )
    with pytest.raises(openai.BadRequestError, match="offers no tool 'weather'"):
        llm.chat.completions.create(
            model="offline", messages=[{"role": "user", "content": "hi"}], tools=[]
        )
