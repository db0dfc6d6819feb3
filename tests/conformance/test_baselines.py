"""The expected-failures files of the conformance legs (see docs/conformance.md).

Issue 10: "Only auth/* may be listed as expected failures, until the OAuth issue";
issue 21 made the auth/* scenarios pass through the real client, so nothing is listed
any more and every scenario of each leg is scored. Checked against the pinned
harness's own scenario list (``run.sh --spec-version <leg> --list``), so a harness
upgrade that adds or renames a scenario shows up here, not as a silent gap.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

#: The non-authorization client scenarios of each leg (harness 0.2.0-alpha.12).
NON_AUTH = {
    "2025-11-25": {
        "initialize",
        "tools_call",
        "elicitation-sep1034-client-defaults",
        "sse-retry",
        "json-schema-2020-12-preservation",
    },
    "2026-07-28": {
        "request-metadata",
        "sep-2322-client-request-state",
        "http-standard-headers",
        "http-custom-headers",
        "http-invalid-tool-headers",
        "json-schema-ref-no-deref",
        "tools_call",
        "json-schema-2020-12-preservation",
    },
}


_AUTH_2025 = {
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
}
#: The authorization scenarios of each leg (harness 0.2.0-alpha.12).
AUTH = {
    "2025-11-25": _AUTH_2025,
    "2026-07-28": _AUTH_2025
    | {
        "auth/resource-mismatch",
        "auth/offline-access-scope",
        "auth/offline-access-not-supported",
        "auth/authorization-server-migration",
        "auth/iss-supported",
        "auth/iss-not-advertised",
        "auth/iss-supported-missing",
        "auth/iss-wrong-issuer",
        "auth/iss-unexpected",
        "auth/iss-normalized",
        "auth/metadata-issuer-mismatch",
    },
}
#: The extensions leg (no --spec-version): every scenario of both legs, the four skills
#: scenarios (SEP-2640), the 2025-03-26 back-compat and the extension auth ones.
NON_AUTH["extensions"] = (
    NON_AUTH["2025-11-25"]
    | NON_AUTH["2026-07-28"]
    | {
        "sep-2640-client-no-prefetch",
        "sep-2640-client-verify-digest",
        "sep-2640-client-verify-size",
        "sep-2640-client-verify-frontmatter",
    }
)
AUTH["extensions"] = AUTH["2026-07-28"] | {
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/enterprise-managed-authorization",
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/wif-jwt-bearer",
}


def baseline(leg: str) -> list[str]:
    """The ``client:`` entries of expected-failures-<leg>.yml (the format run.sh reads)."""
    entries, section = [], None
    for raw in (HERE / f"expected-failures-{leg}.yml").read_text("utf-8").splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line:
            continue
        if not line.startswith((" ", "-")):
            section = line.rstrip(":").strip()
        elif section == "client" and line.lstrip().startswith("- "):
            entries.append(line.lstrip()[2:].strip().strip("'\""))
    return entries


def harness_list(leg: str) -> set[str]:
    env = dict(os.environ, PYTHON=sys.executable)
    proc = subprocess.run(
        ["bash", str(HERE / "run.sh"), "--spec-version", leg, "--list"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=10 * 60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return set(re.findall(r"^\s+- (\S+) \[", proc.stdout, flags=re.M))


@pytest.mark.parametrize("leg", sorted(NON_AUTH))
def test_no_scenario_is_expected_to_fail(leg: str) -> None:
    assert baseline(leg) == []


@pytest.mark.parametrize("leg", sorted(NON_AUTH))
def test_the_harness_runs_exactly_the_scored_scenarios(leg: str) -> None:
    # Every scenario of the leg is one client.py must pass, named here: a new or renamed
    # scenario in a harness upgrade shows up as a difference.
    scenarios = harness_list(leg)
    assert scenarios == NON_AUTH[leg] | AUTH[leg]


def test_run_sh_refuses_an_unknown_leg() -> None:
    proc = subprocess.run(
        ["bash", str(HERE / "run.sh"), "--spec-version", "2099-01-01"],
        cwd=ROOT,
        env=dict(os.environ, PYTHON=sys.executable),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "unknown spec version '2099-01-01'" in proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "0 passed, 0 failed"
