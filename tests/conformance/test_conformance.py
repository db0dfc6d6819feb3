"""The official MCP conformance suite, client legs 2025-11-25, 2026-07-28 and extensions (see
docs/conformance.md).

Runs tests/conformance/run.sh, which installs Node 24 and the pinned harness into
.cache/conformance/ on first use (network needed once), then runs every client scenario
of one revision against tests/conformance/client.py. Every scenario must pass, the
auth/* ones included (issue 21; the expected-failures files list nothing). A scenario
passes strictly: at least one check
succeeded, none failed or warned, and the client reported success.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def run_leg(spec_version: str, *extra: str) -> tuple[list[str], str]:
    """run.sh for one leg (``extra``: more run.sh arguments): (stdout lines, a report
    for assertion messages)."""
    # The client runs under this interpreter, so the leg tests the code pytest imports.
    env = dict(os.environ, PYTHON=sys.executable)
    env.pop("CONFORMANCE_SPEC_VERSION", None)
    env.pop("MCP_CONFORMANCE_CLIENT_PROTOCOL", None)
    env.pop("MCP_CONFORMANCE_SHELL", None)
    proc = subprocess.run(
        ["bash", str(HERE / "run.sh"), "--spec-version", spec_version, *extra],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=15 * 60,
    )
    lines = proc.stdout.strip().splitlines()
    report = proc.stdout + "\n--- run.sh stderr (tail) ---\n" + proc.stderr[-4000:]
    assert proc.returncode == 0, report
    assert lines and lines[-1].endswith(" failed"), report
    return lines, report


def passed_scenarios(lines: list[str]) -> set[str]:
    """The scenarios run.sh marked PASS (one "  <name>  PASS  [...]" row each)."""
    rows = (line.split() for line in lines if line.startswith("  "))
    return {row[0] for row in rows if len(row) >= 2 and row[1] == "PASS"}


def test_conformance_2025_11_25_leg() -> None:
    lines, report = run_leg("2025-11-25")
    # 5 non-authorization and 14 auth/* scenarios in the pinned harness (0.2.0-alpha.12),
    # every one a strict PASS (issue 21: nothing is expected to fail).
    assert lines[-1] == "19 passed, 0 failed", report
    assert passed_scenarios(lines) >= {
        "initialize",
        "tools_call",
        "elicitation-sep1034-client-defaults",
        "sse-retry",
        "json-schema-2020-12-preservation",
    }, report


# The 8 client scenarios of the 2026-07-28 leg that are not about authorization, as
# `run.sh --spec-version 2026-07-28 --list` shows them for harness 0.2.0-alpha.12 (the
# other 25 are auth/*: tests/conformance/test_baselines.py names them).
MODERN_LEG = {
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
    "tools_call",
    "json-schema-2020-12-preservation",
}


def test_conformance_2026_07_28_leg() -> None:
    lines, report = run_leg("2026-07-28")
    # Every scenario a strict PASS, the 25 auth/* ones included (issue 21); the 8 others
    # by name too (not merely "not failed").
    assert passed_scenarios(lines) >= MODERN_LEG, report
    assert lines[-1] == "33 passed, 0 failed", report


def test_conformance_extensions_leg() -> None:
    # No --spec-version: the only leg that reaches the extension scenarios (client
    # credentials, enterprise-managed authorization, DPoP with and without nonces,
    # workload identity federation, the skills of SEP-2640) and the 2025-03-26 OAuth
    # back-compat ones: all 48 a strict PASS (issue 21).
    lines, report = run_leg("extensions")
    assert lines[-1] == "48 passed, 0 failed", report


# The extension and back-compat auth scenarios of the extensions leg: the grants and
# proofs the Trio shell runs through its own handler path (a sync handler on a worker
# thread, the flow's exchanges on the event loop's pool).
TRIO_EXTENSION_SUBSET = (
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/wif-jwt-bearer",
    "auth/enterprise-managed-authorization",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
)


def test_conformance_auth_through_the_trio_shell() -> None:
    # The 2025-11-25 leg with every auth/* scenario run through mcp_io_trio (run.sh
    # --shell trio; the other legs run the same way by hand), strict, as above.
    lines, report = run_leg("2025-11-25", "--shell", "trio")
    assert lines[-1] == "19 passed, 0 failed", report
    auth = {name for name in passed_scenarios(lines) if name.startswith("auth/")}
    assert len(auth) == 14, report


def test_conformance_extension_grants_through_the_trio_shell() -> None:
    args = [a for name in TRIO_EXTENSION_SUBSET for a in ("-s", name)]
    lines, report = run_leg("extensions", "--shell", "trio", *args)
    assert passed_scenarios(lines) == set(TRIO_EXTENSION_SUBSET), report
    assert lines[-1] == f"{len(TRIO_EXTENSION_SUBSET)} passed, 0 failed", report
