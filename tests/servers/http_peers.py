"""Start real HTTP MCP peers on 127.0.0.1 for tests, and tear them down cleanly.

Three context managers, each yielding a :class:`Peer` - a ``str`` equal to the base URL
``"http://127.0.0.1:PORT"`` - whose ``.url`` is the endpoint a client connects to::

    with sdk_http_server("streamable-http") as peer:        # peer.url == peer + "/mcp"
        connect(peer.url)
    with sdk_http_server("streamable-http", stateless=True, json_response=True): ...
    with sdk_http_server("streamable-http+stateless+json"): ...   # the same, as one string
    with sdk_http_server("sse") as peer: ...                       # peer.url == peer + "/sse"
    with everything_http_server("streamableHttp") as peer: ...     # /mcp
    with everything_http_server("sse") as peer: ...                # /sse (posts to /message)
    with hostile_http_server("flaky_5xx", fail_count=3) as peer:   # in-process, on threads
        ...; peer.recorder.posts("tools/list")
    with hostile_http_server("slow", subprocess=True) as peer: ... # `python hostile_http.py`

Every peer listens on a free port found by binding 127.0.0.1:0 (a subprocess that loses the
race for it is restarted on another port, up to 3 times); start-up waits, bounded, until a TCP
connect to 127.0.0.1:PORT succeeds. Subprocess output (stdout+stderr) goes to a temporary file,
``peer.output()`` returns it (e.g. the SDK server's ``SLOW CANCELLED`` lines) and start-up errors
quote its tail. Teardown: SIGTERM to the peer's own process group, SIGKILL after a grace period,
then the log file is removed.

Only 127.0.0.1 is ever used. The npm server listens on all interfaces (``*:PORT``) - it has no
host option - but tests connect to 127.0.0.1 only.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SDK_SERVER = HERE / "sdk_server.py"
HOSTILE_HTTP = HERE / "hostile_http.py"
EVERYTHING_BIN = ROOT / "tests" / "peers" / "node_modules" / ".bin" / "mcp-server-everything"
HOST = "127.0.0.1"

if str(HERE) not in sys.path:  # hostile_http is a sibling module, not in a package
    sys.path.insert(0, str(HERE))

import hostile_http  # noqa: E402

#: Bounds (seconds). Node start-up is the slowest (~1 s here, more on a loaded machine).
SDK_STARTUP_TIMEOUT = 30.0
EVERYTHING_STARTUP_TIMEOUT = 60.0
HOSTILE_STARTUP_TIMEOUT = 15.0
TERMINATE_GRACE = 3.0
PORT_ATTEMPTS = 3


class PeerUnavailable(RuntimeError):
    """A peer cannot run here at all (node or the npm package missing)."""


class PeerStartError(RuntimeError):
    """A peer did not come up (exited, or did not accept connections in time)."""


class Peer(str):
    """The peer's base URL ("http://127.0.0.1:PORT"), with details as attributes.

    url       the endpoint to connect to (base + "/mcp" or "/sse")
    port      the TCP port
    kind      "sdk", "everything" or "hostile"; mode: the mode it was started in
    recorder  hostile peers: the hostile_http.Recorder (subprocess hostile peers: a recorder
              reading the server's --log file - requests and statuses; bodies decoded as
              UTF-8 with replacement; notes/counters/sessions are empty there)
    process   the subprocess.Popen, or None for an in-process hostile server
    server    in-process hostile peers: the hostile_http.HostileHTTPServer
    """

    url: str
    port: int
    kind: str
    mode: str
    recorder: Any
    process: subprocess.Popen[bytes] | None
    server: Any
    log_path: str | None

    def __new__(cls, base: str, **attrs: Any) -> Peer:
        self = super().__new__(cls, base)
        self.__dict__.update(
            {"recorder": None, "process": None, "server": None, "log_path": None, **attrs}
        )
        return self

    @property
    def base(self) -> str:
        return str(self)

    def output(self) -> str:
        """Everything the peer process wrote to stdout and stderr so far ("" in-process)."""
        if not self.log_path:
            return ""
        try:
            return Path(self.log_path).read_text("utf-8", "replace")
        except OSError:
            return ""


# ------------------------------------------------------------------------------------- helpers


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (the OS's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def port_accepts(port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=timeout):
            return True
    except OSError:
        return False


def wait_for_port(
    port: int,
    timeout: float,
    process: subprocess.Popen[bytes] | None = None,
    log_path: str | None = None,
) -> None:
    """Poll until 127.0.0.1:port accepts a TCP connection; PeerStartError otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        if process is not None and process.poll() is not None:
            raise PeerStartError(
                f"peer exited with status {process.returncode} before listening on {port}"
                + _tail(log_path)
            )
        if port_accepts(port):
            return
        if time.monotonic() >= deadline:
            raise PeerStartError(
                f"peer did not accept connections on {HOST}:{port} within {timeout}s"
                + _tail(log_path)
            )
        time.sleep(0.05)


def _tail(log_path: str | None, limit: int = 4000) -> str:
    if not log_path:
        return ""
    try:
        text = Path(log_path).read_text("utf-8", "replace")
    except OSError:
        return ""
    return "\n--- peer output (tail) ---\n" + text[-limit:]


def _stop_process(process: subprocess.Popen[bytes], grace: float = TERMINATE_GRACE) -> None:
    """SIGTERM the process group we created for `process`, SIGKILL it after `grace`."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            pass
    # SIGKILL whatever is left of the group (the leader, or children it left behind).
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(5.0)
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def _spawn(
    argv: list[str], env_extra: dict[str, str] | None, log_path: str, stdout_pipe: bool = False
) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env.update(env_extra or {})
    env.setdefault("PYTHONUNBUFFERED", "1")
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if stdout_pipe else log,
            stderr=log,
            env=env,
            cwd=str(ROOT),
            start_new_session=True,  # its own process group: teardown signals only it
        )


@contextlib.contextmanager
def _process_peer(
    make_argv: Any,
    *,
    path: str,
    kind: str,
    mode: str,
    timeout: float,
    port_env: bool = False,
) -> Iterator[Peer]:
    """Run make_argv(port) on a free port until it accepts connections; yield; tear down."""
    fd, log_path = tempfile.mkstemp(prefix=f"mcp-peer-{kind}-", suffix=".log")
    os.close(fd)
    process: subprocess.Popen[bytes] | None = None
    try:
        last_error: Exception | None = None
        for _ in range(PORT_ATTEMPTS):
            port = free_port()
            env = {"PORT": str(port)} if port_env else None
            process = _spawn(make_argv(port), env, log_path)
            try:
                wait_for_port(port, timeout, process, log_path)
                time.sleep(0.05)  # lost a port race? the loser exits right away
                if process.poll() is not None:
                    raise PeerStartError(
                        f"peer exited with status {process.returncode} right after start"
                        + _tail(log_path)
                    )
            except PeerStartError as exc:
                last_error = exc
                _stop_process(process)
                process = None
                if "within" in str(exc):  # a timeout is not a port race: do not retry
                    raise
                continue
            base = f"http://{HOST}:{port}"
            yield Peer(
                base,
                url=base + path,
                port=port,
                kind=kind,
                mode=mode,
                process=process,
                log_path=log_path,
            )
            return
        raise PeerStartError(f"{kind} peer failed to start {PORT_ATTEMPTS} times") from last_error
    finally:
        if process is not None:
            _stop_process(process)
        with contextlib.suppress(OSError):
            os.unlink(log_path)


# ------------------------------------------------------------------------------ the three peers

SDK_MODES = ("streamable-http", "sse")


def _parse_sdk_mode(mode: str, stateless: bool, json_response: bool) -> tuple[str, bool, bool]:
    base, *flags = mode.split("+")
    base = {"streamable": "streamable-http", "shttp": "streamable-http"}.get(base, base)
    if base not in SDK_MODES:
        raise ValueError(f"unknown SDK server mode {mode!r}; use one of {SDK_MODES}")
    for flag in flags:
        if flag == "stateless":
            stateless = True
        elif flag in ("json", "json-response", "json_response"):
            json_response = True
        else:
            raise ValueError(f"unknown SDK server mode flag {flag!r} (stateless, json)")
    if base == "sse" and (stateless or json_response):
        raise ValueError("stateless / json_response only apply to streamable-http")
    return base, stateless, json_response


@contextlib.contextmanager
def sdk_http_server(
    mode: str = "streamable-http",
    *,
    stateless: bool = False,
    json_response: bool = False,
    path: str | None = None,
    mount: str | None = None,
    startup_timeout: float = SDK_STARTUP_TIMEOUT,
) -> Iterator[Peer]:
    """tests/servers/sdk_server.py (official SDK mcp==2.3.0, uvicorn) on 127.0.0.1.

    mode "streamable-http" (url = base + "/mcp"; flags "+stateless", "+json" or the keyword
    arguments; ``path="/"`` mounts it at the root instead, url = base + "/") or "sse"
    (url = base + "/sse"; it announces ``/messages/?session_id=<hex>``). ``mount``:
    served under a Starlette ``Mount`` at that prefix, url = base + prefix (which the
    server redirects to prefix + "/").
    """
    base, stateless, json_response = _parse_sdk_mode(mode, stateless, json_response)

    def argv(port: int) -> list[str]:
        args = [sys.executable, str(SDK_SERVER), "--transport", base, "--port", str(port)]
        args += ["--host", HOST]
        if stateless:
            args.append("--stateless")
        if json_response:
            args.append("--json-response")
        if path is not None:
            args += ["--path", path]
        if mount is not None:
            args += ["--mount", mount]
        return args

    if path is not None and base == "sse":
        raise ValueError("path= applies to streamable-http only")
    label = base + ("+stateless" if stateless else "") + ("+json" if json_response else "")
    # ``mount``: the URL a user pastes, the prefix itself (it answers 307 to prefix/).
    endpoint = mount or path or ("/sse" if base == "sse" else "/mcp")
    with _process_peer(
        argv, path=endpoint, kind="sdk", mode=label, timeout=startup_timeout
    ) as peer:
        yield peer


EVERYTHING_MODES = ("streamableHttp", "sse")


@contextlib.contextmanager
def everything_http_server(
    mode: str = "streamableHttp", *, startup_timeout: float = EVERYTHING_STARTUP_TIMEOUT
) -> Iterator[Peer]:
    """@modelcontextprotocol/server-everything (npm, tests/peers) over HTTP.

    mode "streamableHttp" (url = base + "/mcp") or "sse" (url = base + "/sse"; it announces
    ``/message?sessionId=<uuid>``). It listens on all interfaces (``PORT`` env); tests connect
    to 127.0.0.1 only.
    """
    mode = {"streamable-http": "streamableHttp", "streamable": "streamableHttp"}.get(mode, mode)
    if mode not in EVERYTHING_MODES:
        raise ValueError(f"unknown server-everything mode {mode!r}; use one of {EVERYTHING_MODES}")
    if not EVERYTHING_BIN.exists():
        raise PeerUnavailable(f"{EVERYTHING_BIN} missing: run `make peers`")
    node = "node"
    if not any((Path(d) / node).exists() for d in os.environ.get("PATH", "").split(os.pathsep)):
        raise PeerUnavailable("node is not on PATH")

    def argv(port: int) -> list[str]:
        return [node, str(EVERYTHING_BIN), mode]

    path = "/sse" if mode == "sse" else "/mcp"
    with _process_peer(
        argv, path=path, kind="everything", mode=mode, timeout=startup_timeout, port_env=True
    ) as peer:
        yield peer


class _LogFileRecorder(hostile_http.Recorder):
    """A Recorder whose requests are read back from a hostile_http --log file."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self._path = path

    @property
    def requests(self) -> list[hostile_http.RecordedRequest]:
        out: list[hostile_http.RecordedRequest] = []
        try:
            lines = Path(self._path).read_text("utf-8", "replace").splitlines()
        except OSError:
            return out
        by_seq: dict[int, hostile_http.RecordedRequest] = {}
        for line in lines:
            try:
                d = json.loads(line)
            except ValueError:
                continue  # a line being written right now
            if "method" not in d:  # {"seq", "status"}: the answer to an earlier request
                if d.get("seq") in by_seq:
                    by_seq[d["seq"]].status = d["status"]
                continue
            req = hostile_http.RecordedRequest(
                t=d["t"],
                listener=d["listener"],
                method=d["method"],
                target=d["target"],
                headers=[(k, v) for k, v in d["headers"]],
                body=d["body"].encode("utf-8"),
                status=d["status"],
                seq=d["seq"],
            )
            by_seq[req.seq] = req
            out.append(req)
        return out


@contextlib.contextmanager
def hostile_http_server(
    mode: str,
    *,
    subprocess: bool = False,
    startup_timeout: float = HOSTILE_STARTUP_TIMEOUT,
    **options: Any,
) -> Iterator[Peer]:
    """The scripted misbehaving server (tests/servers/hostile_http.py) in `mode`.

    In-process by default (threads; ``peer.recorder`` is live, ``peer.server`` is the server,
    e.g. ``peer.server.other_port``). ``subprocess=True`` runs ``python hostile_http.py MODE
    --port 0 --opt K=V... --log FILE`` instead and reads ``PORT <n>`` from its stdout; the
    recorder then reads the request log (requests and statuses; no notes/counters/sessions).
    """
    base_mode = mode.partition("+")[0]
    path = "/sse" if base_mode in hostile_http.LEGACY_MODES else "/mcp"
    if not subprocess:
        server = hostile_http.HostileHTTPServer(mode, **options).start()
        try:
            yield Peer(
                server.url_base,
                url=server.url_base + path,
                port=server.port,
                kind="hostile",
                mode=mode,
                recorder=server.recorder,
                server=server,
            )
        finally:
            server.stop()
        return

    hostile_http.HostileHTTPServer(mode, **options)  # validate mode and options up front
    fd, log_path = tempfile.mkstemp(prefix="mcp-peer-hostile-", suffix=".log")
    os.close(fd)
    fd, req_log = tempfile.mkstemp(prefix="mcp-peer-hostile-requests-", suffix=".jsonl")
    os.close(fd)
    argv = [sys.executable, str(HOSTILE_HTTP), mode, "--port", "0", "--log", req_log]
    for key, value in options.items():
        argv += ["--opt", f"{key}={value}"]
    process = _spawn(argv, None, log_path, stdout_pipe=True)
    try:
        port = _read_port_line(process, startup_timeout, log_path)
        wait_for_port(port, startup_timeout, process, log_path)
        base = f"http://{HOST}:{port}"
        yield Peer(
            base,
            url=base + path,
            port=port,
            kind="hostile",
            mode=mode,
            recorder=_LogFileRecorder(req_log),
            process=process,
            log_path=log_path,
        )
    finally:
        _stop_process(process)
        for leftover in (log_path, req_log):
            with contextlib.suppress(OSError):
                os.unlink(leftover)


def _read_port_line(process: subprocess.Popen[bytes], timeout: float, log_path: str) -> int:
    """The n of the first stdout line "PORT <n>" of a hostile_http subprocess."""
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    buf = b""
    fd = process.stdout.fileno()
    while b"\n" not in buf:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise PeerStartError("hostile_http printed no PORT line in time" + _tail(log_path))
        ready, _, _ = select.select([fd], [], [], min(remaining, 0.2))
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                raise PeerStartError(
                    f"hostile_http exited ({process.wait()}) before printing PORT" + _tail(log_path)
                )
            buf += chunk
    line = buf.split(b"\n", 1)[0].decode("ascii", "replace").strip()
    word, _, number = line.partition(" ")
    if word != "PORT" or not number.isdigit():
        raise PeerStartError(f"hostile_http's first line is {line!r}, not 'PORT <n>'")
    return int(number)
