#!/usr/bin/env python3
"""Client benchmark: mcp_io_sync / mcp_io_trio vs the official SDK client (mcp 2.3.0).

    .venv/bin/python bench/run.py            # full run (a few minutes)
    .venv/bin/python bench/run.py --quick    # short run (fewer iterations and repeats)
    .venv/bin/python bench/run.py --only seq,conc      # some workloads
    .venv/bin/python bench/run.py --only sync,sdk      # some clients (all workloads)

Clients: ``raw`` (no library: subprocess + hand-written JSON lines, the floor),
``sync`` (``mcp_io_sync``), ``trio`` (``mcp_io_trio``), ``sdk`` (``mcp.ClientSession`` over
``mcp.client.stdio.stdio_client``, asyncio). Workloads: ``cold``, ``seq``, ``mib``,
``conc``, ``rss``, ``import`` (see bench/README.md). Every measurement runs in its own
fresh Python process (``bench/_worker.py``) against ``bench/fast_server.py``; clients
are interleaved and every measurement is repeated, the table shows medians.

Prints a table with absolute numbers, ratios ours/SDK and PASS/MISS per target, and
writes everything (every sample) to ``bench/results/<timestamp>.json`` and
``bench/results/latest.json``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _revisions import PRODUCT, Revisions, base, compare_table

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "_worker.py")
RESULTS = os.path.join(HERE, "results")
PY = sys.executable
CPUS: set[int] | None = None  # --cpus: pin every measured process (and its server)
REVS = Revisions(())  # --at: the revisions measured (none: the working tree)


def _env(client: str) -> dict[str, str]:
    return REVS.env(client)


def _pin() -> None:
    if CPUS is not None:
        os.sched_setaffinity(0, CPUS)


CLIENTS = ("raw", "sync", "trio", "sdk")
WORKLOADS = ("cold", "seq", "mib", "conc", "rss", "import")
OURS = ("sync", "trio")

# What each client imports for the import-time row: "raw" is the floor (what a
# hand-written client needs), "sdk" is the module named by the target.
IMPORTS = {
    "raw": "import json, subprocess",
    "sync": "import mcp_io_sync",
    "trio": "import mcp_io_trio",
    "sdk": "import mcp.client.session",
}
# Informational: what an SDK stdio client actually needs.
SDK_STDIO_IMPORT = "from mcp import ClientSession; from mcp.client.stdio import stdio_client"


@dataclass(frozen=True)
class Settings:
    cold_samples: int
    reps: int
    seq_calls: int
    mib_calls: int
    conc_rounds: int
    rss_calls: int
    rss_rounds: int
    rss_reps: int
    import_samples: int


FULL = Settings(
    cold_samples=10,
    reps=7,
    seq_calls=2000,
    mib_calls=50,
    conc_rounds=20,
    rss_calls=1000,
    rss_rounds=5,
    rss_reps=3,
    import_samples=15,
)
QUICK = Settings(
    cold_samples=3,
    reps=2,
    seq_calls=300,
    mib_calls=10,
    conc_rounds=3,
    rss_calls=200,
    rss_rounds=2,
    rss_reps=1,
    import_samples=5,
)


@dataclass(frozen=True)
class Metric:
    key: str  # result key
    workload: str
    label: str
    unit: str
    higher_is_better: bool
    target: float | None  # ratio ours/SDK the issue asks for
    fmt: str = "{:.0f}"
    sdk_key: str | None = None  # compare with another metric's SDK value


METRICS = [
    Metric("cold_ms", "cold", "cold start: spawn+init+tools/list", "ms", False, None, "{:.1f}"),
    Metric(
        "first_call_ms", "cold", "  (info) then the first tools/call", "ms", False, None, "{:.1f}"
    ),
    Metric("calls_per_s", "seq", "sequential tools/call", "calls/s", True, 3.0),
    Metric("cpu_us_per_call", "seq", "  (info) client CPU per call", "us", False, None),
    Metric("payload_mib_per_s", "mib", "1 MiB echo round trips", "MiB/s", True, 2.0, "{:.1f}"),
    Metric("cpu_ms_per_call", "mib", "  (info) client CPU per call", "ms", False, None, "{:.2f}"),
    Metric("calls_per_s", "conc", "100 concurrent tools/call", "calls/s", True, 3.0),
    Metric("cpu_us_per_call", "conc", "  (info) client CPU per call", "us", False, None),
    Metric(
        "threads_calls_per_s",
        "conc",
        "  (info) sync, 100 threads",
        "calls/s",
        True,
        None,
        sdk_key="conc.calls_per_s",
    ),
    Metric("maxrss_mib", "rss", "peak RSS of the client process", "MiB", False, 0.5, "{:.1f}"),
    Metric("import_ms", "import", "import time, wall (see note)", "ms", False, 0.25, "{:.0f}"),
    Metric("import_cpu_ms", "import", "  (info) import CPU time", "ms", False, None, "{:.0f}"),
]


# ---------------------------------------------------------------------------- running


def _machine_busy_s() -> float:
    """CPU seconds spent busy by the whole machine (all CPUs) since boot."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()[1:]
    except OSError:
        return float("nan")
    ticks = [int(x) for x in fields]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
    return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _children_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


QUIET_WAIT = 2.0  # --quiet-wait: longest wait for the machine to calm down per sample
QUIET_SHARE = 0.25  # "quiet": other processes use less than this share of the machine


def wait_for_quiet() -> float:
    """Wait (bounded) until other processes leave the machine mostly idle; returns the
    seconds waited. On a shared 2-CPU box a neighbour's burst otherwise lands in the
    middle of a sample."""
    t0 = time.perf_counter()
    ncpu = os.cpu_count() or 1
    while time.perf_counter() - t0 < QUIET_WAIT:
        busy0, w0 = _machine_busy_s(), time.perf_counter()
        time.sleep(0.2)
        share = (_machine_busy_s() - busy0) / ((time.perf_counter() - w0) * ncpu)
        if not share >= QUIET_SHARE:  # also true for nan (no /proc/stat)
            break
    return time.perf_counter() - t0


def run_worker(client: str, workload: str, *extra: str) -> dict[str, Any]:
    """One sample; a failed worker is retried once (the tree may be mid-edit), then
    recorded as ``{"error": ...}`` and left out of the medians."""
    try:
        return _run_worker_once(client, workload, *extra)
    except RuntimeError as first:
        last = str(first).strip().splitlines()[-1]
        print(f"  {client}/{workload} failed ({last}); retrying once", file=sys.stderr)
        time.sleep(2)
        try:
            return _run_worker_once(client, workload, *extra)
        except RuntimeError as exc:
            return {"error": str(exc)[-2000:], "client": client, "workload": workload}


def _run_worker_once(client: str, workload: str, *extra: str) -> dict[str, Any]:
    cmd = [PY, WORKER, base(client), workload, *extra]
    waited = wait_for_quiet() if QUIET_WAIT > 0 else 0.0
    busy0, own0, t0 = _machine_busy_s(), _children_cpu_s(), time.perf_counter()
    proc = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=HERE,
        preexec_fn=_pin,
        env=_env(client),
    )
    wall = time.perf_counter() - t0
    foreign = (_machine_busy_s() - busy0) - (_children_cpu_s() - own0)
    for line in proc.stdout.splitlines():
        if line.startswith("BENCH_RESULT "):
            result: dict[str, Any] = json.loads(line[len("BENCH_RESULT ") :])
            # Other processes' CPU use while this sample ran, as a fraction of the
            # machine (1.0 = every CPU busy with someone else's work): noise indicator.
            result["foreign_load"] = max(0.0, foreign) / (wall * (os.cpu_count() or 1))
            result["waited_for_quiet_s"] = waited
            return result
    raise RuntimeError(
        f"{client}/{workload} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    )


def rotated(items: list[str], k: int) -> list[str]:
    k %= max(1, len(items))
    return items[k:] + items[:k]


def time_import(stmt: str, client: str = "raw") -> tuple[float, float]:
    """(wall seconds, CPU seconds) of ``python -c stmt`` in a fresh interpreter."""
    if QUIET_WAIT > 0:
        wait_for_quiet()
    cpu0 = _children_cpu_s()
    t0 = time.perf_counter()
    subprocess.run([PY, "-c", stmt], check=True, cwd=HERE, preexec_fn=_pin, env=_env(client))
    return time.perf_counter() - t0, _children_cpu_s() - cpu0


def measure_imports(clients: list[str], samples: int, log: Any) -> dict[str, Any]:
    stmts = {c: IMPORTS[base(c)] for c in clients}
    if "sdk" in clients:
        stmts["sdk_stdio"] = SDK_STDIO_IMPORT
    # Warm the bytecode caches first; the first import after an install compiles .pyc.
    for c, stmt in [("raw", "pass"), *stmts.items()]:
        time_import(stmt, c)
    bare: list[tuple[float, float]] = []
    raw: dict[str, list[tuple[float, float]]] = {c: [] for c in stmts}
    for i in range(samples):
        bare.append(time_import("pass"))
        for c in rotated(list(stmts), i):
            raw[c].append(time_import(stmts[c], c))
    bare_wall = statistics.median(w for w, _ in bare)
    bare_cpu = statistics.median(c for _, c in bare)
    out: dict[str, Any] = {
        "bare_interpreter_ms": bare_wall * 1e3,
        "bare_interpreter_cpu_ms": bare_cpu * 1e3,
        "statements": stmts,
    }
    for c, vals in raw.items():
        out[c] = {
            "import_ms": (statistics.median(w for w, _ in vals) - bare_wall) * 1e3,
            "import_cpu_ms": (statistics.median(u for _, u in vals) - bare_cpu) * 1e3,
            "samples_total_ms": [w * 1e3 for w, _ in vals],
            "samples_total_cpu_ms": [u * 1e3 for _, u in vals],
        }
    log(
        f"  import: bare interpreter {bare_wall * 1e3:.1f} ms; "
        + ", ".join(f"{c} {out[c]['import_ms']:.0f} ms" for c in stmts)
    )
    return out


def collect(only: set[str], st: Settings, log: Any) -> dict[str, Any]:
    clients = [c for c in CLIENTS if not (only & set(CLIENTS)) or c in only]
    clients = REVS.expand(clients, OURS)
    workloads = [w for w in WORKLOADS if not (only & set(WORKLOADS)) or w in only]
    samples: dict[str, dict[str, list[dict[str, Any]]]] = {}

    def add(workload: str, client: str, result: dict[str, Any]) -> None:
        samples.setdefault(workload, {}).setdefault(client, []).append(result)

    for workload in workloads:
        t0 = time.perf_counter()
        if workload == "import":
            samples["import"] = measure_imports(clients, st.import_samples, log)
            continue
        if workload == "cold":
            for i in range(st.cold_samples):
                for c in rotated(clients, i):
                    add("cold", c, run_worker(c, "cold"))
        elif workload == "seq":
            for i in range(st.reps):
                for c in rotated(clients, i):
                    add("seq", c, run_worker(c, "seq", "--n", str(st.seq_calls)))
        elif workload == "mib":
            for i in range(st.reps):
                for c in rotated(clients, i):
                    add("mib", c, run_worker(c, "mib", "--n", str(st.mib_calls)))
        elif workload == "conc":
            for i in range(st.reps):
                for c in rotated(clients, i):
                    add("conc", c, run_worker(c, "conc", "--rounds", str(st.conc_rounds)))
                    if base(c) == "sync":
                        r = run_worker(
                            c, "conc", "--rounds", str(st.conc_rounds), "--threads", "100"
                        )
                        add("conc_threads", c, r)
        elif workload == "rss":
            for i in range(st.rss_reps):
                for c in rotated(clients, i):
                    add(
                        "rss",
                        c,
                        run_worker(
                            c, "rss", "--n", str(st.rss_calls), "--rounds", str(st.rss_rounds)
                        ),
                    )
        log(f"  {workload}: done in {time.perf_counter() - t0:.1f} s")
    return {"clients": clients, "workloads": workloads, "samples": samples}


# ---------------------------------------------------------------------------- summary


def summarize(data: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """metric name -> client -> {median, min, max, n}."""
    s: dict[str, Any] = {
        w: ({c: [r for r in rs if "error" not in r] for c, rs in v.items()} if w != "import" else v)
        for w, v in data["samples"].items()
    }
    out: dict[str, dict[str, dict[str, Any]]] = {}

    def put(name: str, client: str, values: list[float]) -> None:
        if values:
            out.setdefault(name, {})[client] = {
                "median": statistics.median(values),
                "min": min(values),
                "max": max(values),
                "n": len(values),
                "values": values,  # in repeat order (the paired ratio of --at runs)
            }

    for c, rs in s.get("cold", {}).items():
        put("cold.cold_ms", c, [r["cold_ms"] for r in rs])
        put("cold.first_call_ms", c, [r["first_call_ms"] for r in rs if "first_call_ms" in r])
    for c, rs in s.get("seq", {}).items():
        put("seq.calls_per_s", c, [r["calls_per_s"] for r in rs])
        put("seq.cpu_us_per_call", c, [r["cpu_us_per_call"] for r in rs])
    for c, rs in s.get("mib", {}).items():
        put("mib.payload_mib_per_s", c, [r["payload_mib_per_s"] for r in rs])
        put("mib.cpu_ms_per_call", c, [r["cpu_us_per_call"] / 1e3 for r in rs])
        put("mib.maxrss_mib", c, [r["maxrss_kib"] / 1024 for r in rs])
    for c, rs in s.get("conc", {}).items():
        put("conc.calls_per_s", c, [r["calls_per_s"] for r in rs])
        put("conc.cpu_us_per_call", c, [r["cpu_us_per_call"] for r in rs])
    for c, rs in s.get("conc_threads", {}).items():
        put("conc.threads_calls_per_s", c, [r["calls_per_s"] for r in rs])
    for c, rs in s.get("rss", {}).items():
        put("rss.maxrss_mib", c, [r["maxrss_kib"] / 1024 for r in rs])
    imp = s.get("import")
    if imp:
        for c in data["clients"]:  # with --at OLD --at NEW: sync@OLD, sync@NEW, ...
            if c in imp:
                # One value (median of totals minus median bare); spread from the totals.
                for key, samples, bare_key in (
                    ("import_ms", "samples_total_ms", "bare_interpreter_ms"),
                    ("import_cpu_ms", "samples_total_cpu_ms", "bare_interpreter_cpu_ms"),
                ):
                    tot = imp[c][samples]
                    bare = imp[bare_key]
                    out.setdefault(f"import.{key}", {})[c] = {
                        "median": imp[c][key],
                        "min": min(tot) - bare,
                        "max": max(tot) - bare,
                        "n": len(tot),
                    }
    return out


def verdict(m: Metric, ratio: float | None) -> str:
    if m.target is None or ratio is None:
        return ""
    ok = ratio >= m.target if m.higher_is_better else ratio <= m.target
    return "PASS" if ok else "MISS"


def render(
    summary: dict[str, Any], data: dict[str, Any], st: Settings
) -> tuple[str, dict[str, Any]]:
    clients = data["clients"]
    rows: list[list[str]] = []
    verdicts: dict[str, Any] = {}
    header = ["metric", "unit", "better", *clients]
    ours = [c for c in clients if base(c) in OURS]
    header += [f"{c}/sdk" for c in ours] + ["target"] + [f"{c}" for c in ours]
    for m in METRICS:
        cells = summary.get(f"{m.workload}.{m.key}")
        if not cells:
            continue
        row = [m.label, m.unit, "higher" if m.higher_is_better else "lower"]
        for c in clients:
            row.append(m.fmt.format(cells[c]["median"]) if c in cells else "-")
        sdk_cells = summary.get(m.sdk_key, {}) if m.sdk_key else cells
        sdk = sdk_cells.get("sdk", {}).get("median")
        for c in ours:
            if c in cells and sdk:
                ratio = cells[c]["median"] / sdk
                row.append(f"{ratio:.2f}x")
            else:
                row.append("-")
        if m.target is None:
            row.append("")
        else:
            row.append(("≥" if m.higher_is_better else "≤") + f"{m.target:g}x")
        for c in ours:
            ratio = cells[c]["median"] / sdk if (c in cells and sdk) else None
            v = verdict(m, ratio)
            if m.key == "import_ms" and base(c) != "sync":
                v = f"({v})" if v else ""  # the import target names mcp_io_sync
            row.append(v)
            if v:
                verdicts[f"{m.workload}.{m.key}.{c}"] = {
                    "ratio": ratio,
                    "target": m.target,
                    "verdict": v.strip("()"),
                    "higher_is_better": m.higher_is_better,
                }
        rows.append(row)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(r: list[str]) -> str:
        return "  ".join(
            (cell.ljust(w) if i == 0 else cell.rjust(w))
            for i, (cell, w) in enumerate(zip(r, widths, strict=True))
        )

    out = [line(header), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    notes = [
        "",
        "ratios are ours/SDK of the medians; 'better' gives the direction. Targets from the",
        "issue; PASS/MISS per client (import: the target names mcp_io_sync; trio shown in ()).",
        f"runs: cold start {st.cold_samples} fresh processes per client; sequential "
        f"{st.seq_calls} calls, 1 MiB {st.mib_calls} calls, concurrent {st.conc_rounds} rounds "
        f"of 100, each x{st.reps} processes; RSS x{st.rss_reps}; import x{st.import_samples}.",
        "1 MiB: MiB of payload echoed per second (each call carries it both ways).",
        "client CPU per call: user+sys time of the client process (all its threads) / calls.",
        "100 concurrent: sync = call_tools(concurrent=True) on one thread (info row: 100",
        "threads each calling call_tool); trio = nursery; sdk = asyncio.gather; raw = 100",
        "pipelined requests in one write.",
        "import: median wall time of `python -c 'import X'` minus `python -c pass` (the CPU",
        "row: the same with the child's user+sys time, less sensitive to a busy machine);",
        "X = " + ", ".join(f"{c}: {IMPORTS[base(c)]!r}" for c in clients) + ".",
    ]
    imp = data["samples"].get("import")
    if imp and "sdk_stdio" in imp:
        notes.append(
            f"(an SDK stdio client's imports, {SDK_STDIO_IMPORT!r}: "
            f"{imp['sdk_stdio']['import_ms']:.0f} ms)"
        )
    rss_mib = summary.get("mib.maxrss_mib")
    if rss_mib:
        notes.append(
            "peak RSS during the 1 MiB run (info): "
            + ", ".join(f"{c} {v['median']:.1f} MiB" for c, v in rss_mib.items())
        )
    return "\n".join(out + notes), verdicts


def foreign_loads(data: dict[str, Any]) -> dict[str, float]:
    """Median share of the machine used by OTHER processes while each workload ran."""
    out = {}
    for workload, per_client in data["samples"].items():
        if workload == "import":
            continue
        vals = [r["foreign_load"] for rs in per_client.values() for r in rs if "foreign_load" in r]
        if vals:
            out[workload] = statistics.median(vals)
    return out


def render_spread(summary: dict[str, Any], data: dict[str, Any]) -> str:
    lines = ["spread of the samples (min..max, n):"]
    for m in METRICS:
        cells = summary.get(f"{m.workload}.{m.key}")
        if not cells:
            continue
        parts = [
            f"{c} {m.fmt.format(v['min'])}..{m.fmt.format(v['max'])} (n={v['n']})"
            for c, v in cells.items()
        ]
        lines.append(f"  {m.workload}: {m.label.strip()}: " + "; ".join(parts))
    loads = foreign_loads(data)
    if loads:
        lines.append(
            "machine share used by other processes during the samples (median): "
            + ", ".join(f"{w} {v:.0%}" for w, v in loads.items())
        )
    return "\n".join(lines)


# ---------------------------------------------------------------------------- main


def source_state() -> dict[str, Any]:
    """What was measured: git HEAD, uncommitted product files, a hash of the sources."""
    repo = os.path.dirname(HERE)
    # What the workers import: the exported revisions (--at), else the working tree.
    roots = [REVS.dirs[label] for label in REVS.labels] or [repo]
    digest = hashlib.sha256()
    for root in roots:
        for pkg in PRODUCT:
            for dirpath, dirnames, files in sorted(os.walk(os.path.join(root, pkg))):
                dirnames.sort()
                for name in sorted(files):
                    if name.endswith(".py"):
                        path = os.path.join(dirpath, name)
                        digest.update(os.path.relpath(path, root).encode())
                        with open(path, "rb") as f:
                            digest.update(f.read())

    def git(*args: str) -> str:
        try:
            r = subprocess.run(["git", *args], capture_output=True, text=True, cwd=repo)
            return r.stdout.strip()
        except OSError:
            return ""

    if REVS.labels:
        return {
            "git_head": "+".join(REVS.labels),
            "uncommitted": [],
            "sources_sha256": digest.hexdigest()[:16],
        }
    return {
        "git_head": git("rev-parse", "--short", "HEAD"),
        "uncommitted": git("status", "--porcelain", "--", *PRODUCT).splitlines(),
        "sources_sha256": digest.hexdigest()[:16],
    }


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for pkg in ("mcp-proto", "mcp", "anyio", "trio", "pydantic", "attrs"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "absent"
    return out


def main() -> None:
    global CPUS, QUIET_WAIT, REVS
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--quick", action="store_true", help="fewer iterations and repeats")
    p.add_argument(
        "--only",
        default="",
        help="comma-separated workloads ("
        + ",".join(WORKLOADS)
        + ") and/or clients ("
        + ",".join(CLIENTS)
        + ")",
    )
    p.add_argument("--reps", type=int, help="override the number of repeats")
    p.add_argument(
        "--quiet-wait",
        type=float,
        default=QUIET_WAIT,
        metavar="S",
        help="before each sample wait up to S seconds for other processes to use less than "
        f"{QUIET_SHARE * 100:.0f}%% of the machine (default %(default)s; 0 = never wait)",
    )
    p.add_argument(
        "--at",
        metavar="REV",
        action="append",
        default=[],
        help="measure the product as committed at REV (e.g. HEAD), exported with git archive "
        "to a temporary directory, instead of the working tree (which may be mid-edit); "
        "given twice (--at OLD --at NEW), both revisions are measured side by side in one "
        "run and compared",
    )
    p.add_argument(
        "--cpus",
        help="diagnostic: pin every measured process and its server to these CPUs "
        "(e.g. 0 or 0,1); the default is no pinning, as a user would run",
    )
    p.add_argument(
        "--json",
        choices=["orjson", "json"],
        help="our clients' JSON encoder (default: orjson when installed, as for a user with "
        "the 'fast' extra; 'json' measures an install without it)",
    )
    p.add_argument("--out", help="JSON output path (default bench/results/<timestamp>.json)")
    args = p.parse_args()
    if args.json:
        os.environ["MCP_PROTO_JSON"] = args.json  # read by bench/_worker.py

    only = {x.strip() for x in args.only.split(",") if x.strip()}
    unknown = only - set(CLIENTS) - set(WORKLOADS)
    if unknown:
        p.error(f"unknown --only name(s): {', '.join(sorted(unknown))}")
    QUIET_WAIT = args.quiet_wait
    REVS = Revisions(args.at)
    if args.cpus:
        CPUS = {int(x) for x in args.cpus.split(",")}
    st = QUICK if args.quick else FULL
    if args.reps:
        st = Settings(**{**st.__dict__, "reps": args.reps, "rss_reps": args.reps})

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    machine: dict[str, Any] = {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "loadavg_start": os.getloadavg(),
        "pinned_cpus": sorted(CPUS) if CPUS else None,
        "json_encoder": args.json or "default",
    }
    log(
        f"bench: python {machine['python']}, {machine['cpu_count']} CPUs, "
        f"load {machine['loadavg_start'][0]:.2f}; settings {st}"
    )
    before = source_state()
    log(
        f"measuring {before['git_head']} + {len(before['uncommitted'])} uncommitted product "
        f"file(s), sources {before['sources_sha256']}"
        + (f" (exported: {', '.join(REVS.labels)})" if REVS.labels else " (working tree)")
    )
    t0 = time.perf_counter()
    data = collect(only, st, log)
    after = source_state()
    machine["loadavg_end"] = os.getloadavg()
    summary = summarize(data)
    table, verdicts = render(summary, data, st)
    spread = render_spread(summary, data)
    print()
    print(table)
    print()
    print(spread)
    elapsed = time.perf_counter() - t0
    print(
        f"\n({'quick' if args.quick else 'full'} run, {elapsed:.0f} s, load average "
        f"{machine['loadavg_start'][0]:.2f} -> {machine['loadavg_end'][0]:.2f}; "
        f"product sources {before['sources_sha256']} at {before['git_head']}"
        f"{' + uncommitted changes' if before['uncommitted'] else ''}"
        f"{' (--at: exported commits)' if REVS.labels else ''})"
    )
    comparison: list[dict[str, Any]] = []
    if REVS.side_by_side:
        rows = [
            (m.label, m.unit, m.higher_is_better, summary.get(f"{m.workload}.{m.key}", {}))
            for m in METRICS
        ]
        ours = [c for c in OURS if any(base(x) == c for x in data["clients"])]
        text, comparison = compare_table(REVS, ours, rows)
        print()
        print(text)
    errors = [
        r["error"]
        for w, v in data["samples"].items()
        if w != "import"
        for rs in v.values()
        for r in rs
        if "error" in r
    ]
    if errors:
        print(f"WARNING: {len(errors)} sample(s) failed and were left out (see the JSON)")
    if after["sources_sha256"] != before["sources_sha256"]:
        print(
            "WARNING: the product sources changed during the run "
            f"({before['sources_sha256']} -> {after['sources_sha256']}): "
            "samples may mix versions; rerun on a quiet tree"
        )

    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    doc = {
        "timestamp": stamp,
        "quick": args.quick,
        "only": sorted(only),
        "settings": st.__dict__,
        "machine": machine,
        "versions": versions(),
        "source_before": before,
        "source_after": after,
        "summary": summary,
        "verdicts": verdicts,
        "table": table,
        "revisions": REVS.labels,
        "comparison": comparison,
        "foreign_load": foreign_loads(data),
        "raw": data,
        "elapsed_s": elapsed,
    }
    os.makedirs(RESULTS, exist_ok=True)
    path = args.out or os.path.join(RESULTS, f"{stamp}{'-quick' if args.quick else ''}.json")
    for target in (path, os.path.join(RESULTS, "latest.json")):
        with open(target, "w") as f:
            json.dump(doc, f, indent=1)
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
