"""One behavioural suite for both shells: the ``shell`` fixture.

Every test is written once, as an ``async def scenario(client)`` that ``await``s the
client's methods. The fixture runs it against

* ``mcp_io_trio``: inside ``trio.run``, in ``async with connect(...)`` (or
  ``create_client(...)``), under ``trio.fail_after``;
* ``mcp_io_sync``: through a thin proxy whose methods (those that are ``async`` in the
  Trio client) return an already-completed awaitable, so the scenario coroutine never
  suspends and is driven with a single ``send(None)``. A blocking call that raises
  raises inside the scenario exactly where the ``await`` is, so ``pytest.raises``
  works the same in both shells.

Callbacks handed to the client (notification callbacks, handlers) may be plain
functions (both shells accept them). A callback that must use the client goes
through ``shell.callback(async_fn)``: the Trio shell gets the ``async def`` itself,
the blocking shell a plain function that drives it the same way as a scenario.
"""

from __future__ import annotations

import inspect
import logging
import os
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

import mcp_io_sync
import mcp_io_trio

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / "tests" / "servers"
SDK_SERVER: list[str] = [sys.executable, str(SERVERS / "sdk_server.py")]
PEERS_NODE_MODULES = ROOT / "tests" / "peers" / "node_modules"
EVERYTHING_BIN = PEERS_NODE_MODULES / ".bin" / "mcp-server-everything"
EVERYTHING: list[str] = ["node", str(EVERYTHING_BIN), "stdio"]

#: Every request of a test client is bounded by this (the blocking shell has no
#: cancellation, so this is what keeps a broken test from hanging forever).
DEFAULT_READ_TIMEOUT = 20.0
#: Whole-scenario bound for the Trio shell.
DEFAULT_DEADLINE = 90.0


def hostile(mode: str, arg: str | None = None) -> list[str]:
    """argv of the scripted misbehaving stdio server in ``mode``."""
    argv = [sys.executable, str(SERVERS / "hostile_stdio.py"), mode]
    if arg is not None:
        argv.append(arg)
    return argv


# Names of the methods that are coroutine functions in the Trio client: exactly the
# ones the sync proxy turns into awaitables, so the two APIs stay in lock-step.
ASYNC_METHODS: frozenset[str] = frozenset(
    name
    for name, value in vars(mcp_io_trio.Client).items()
    if inspect.iscoroutinefunction(value) and not name.startswith("_")
)


class _Done:
    """An awaitable that is already complete (``await _Done(v)`` is ``v``)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __await__(self) -> Any:
        return self.value
        yield  # pragma: no cover - makes this a generator


async def _await(thunk: Callable[[], Awaitable[Any]]) -> Any:
    return await thunk()


def _drive(coro: Any) -> Any:
    """Run a coroutine that must complete without suspending (the sync shell)."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise RuntimeError("a scenario suspended under the blocking shell (awaited a real awaitable)")


class SyncProxy:
    """The blocking client seen through the Trio client's signatures."""

    def __init__(self, client: mcp_io_sync.Client) -> None:
        self.raw = client

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.raw, name)
        if name in ASYNC_METHODS and callable(value):

            def call(*args: Any, **kwargs: Any) -> _Done:
                return _Done(value(*args, **kwargs))

            return call
        return value


class Recorder(logging.Handler):
    """Collects log records (thread-safe enough: list.append is atomic)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def messages(self, level: int = logging.DEBUG, name_prefix: str | None = None) -> list[str]:
        return [
            r.getMessage()
            for r in list(self.records)
            if r.levelno >= level and (name_prefix is None or r.name.startswith(name_prefix))
        ]


_logger_seq = 0


def make_logger() -> tuple[logging.Logger, Recorder]:
    global _logger_seq
    _logger_seq += 1
    logger = logging.getLogger(f"tests.shells.client{_logger_seq}")
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    recorder = Recorder()
    logger.handlers[:] = [recorder]
    return logger, recorder


class Shell:
    """Adapter running a scenario against one shell (see the module docstring)."""

    def __init__(self, kind: str, protocol: str | None = None) -> None:
        self.kind = kind
        self.mod: Any = mcp_io_sync if kind == "sync" else mcp_io_trio
        self.logger, self.log = make_logger()
        #: The era a test module pins (its ``PROTOCOL``): handshake-era suites set
        #: "legacy", because ``protocol="auto"`` probes with server/discover and the
        #: dual-era SDK server then answers as a 2026-07-28 one (issue 10). Applied
        #: where a test gives no ``protocol`` of its own.
        self.protocol = protocol

    def __repr__(self) -> str:
        return f"<Shell {self.kind}>"

    @property
    def is_trio(self) -> bool:
        return self.kind == "trio"

    def _own_logger(self) -> None:
        # pytest attaches its capture handler to non-propagating loggers too; keep the
        # client's (sometimes 100k-record) logs in the recorder only.
        self.logger.handlers[:] = [self.log]

    # ------------------------------------------------------------------ running

    def run(
        self,
        scenario: Callable[[Any], Awaitable[Any]],
        target: str | Sequence[str],
        *,
        deadline: float = DEFAULT_DEADLINE,
        **kwargs: Any,
    ) -> Any:
        """``scenario(client)`` with ``client`` from ``connect(target, **kwargs)``."""
        kwargs.setdefault("read_timeout", DEFAULT_READ_TIMEOUT)
        kwargs.setdefault("logger", self.logger)
        if self.protocol is not None:
            kwargs.setdefault("protocol", self.protocol)
        self._own_logger()
        if not self.is_trio:
            with mcp_io_sync.connect(target, **kwargs) as client:
                return _drive(scenario(SyncProxy(client)))

        async def main() -> Any:
            with trio.fail_after(deadline):
                async with mcp_io_trio.connect(target, **kwargs) as client:
                    return await scenario(client)

        return trio.run(main)

    def run_client(
        self,
        scenario: Callable[[Any], Awaitable[Any]],
        configs: Iterable[Any] = (),
        *,
        deadline: float = DEFAULT_DEADLINE,
        **kwargs: Any,
    ) -> Any:
        """``scenario(client)`` with ``client`` from ``create_client(configs, **kwargs)``
        (servers connect lazily)."""
        kwargs.setdefault("logger", self.logger)
        self._own_logger()
        configs = [self._pinned(c) for c in configs]
        if not self.is_trio:
            with mcp_io_sync.create_client(configs, **kwargs) as client:
                return _drive(scenario(SyncProxy(client)))

        async def main() -> Any:
            with trio.fail_after(deadline):
                async with mcp_io_trio.create_client(configs, **kwargs) as client:
                    return await scenario(client)

        return trio.run(main)

    def _pinned(self, config: Any) -> Any:
        """``config`` in the module's pinned era, unless it names one (or is HTTP+SSE,
        which has no era to choose)."""
        from mcp_proto.config import ServerConfig

        if self.protocol is None:
            return config
        if isinstance(config, ServerConfig):
            if config.protocol != "auto" or config.type == "sse":
                return config
            return attrs.evolve(config, protocol=self.protocol)
        if isinstance(config, dict) and "protocol" not in config and config.get("type") != "sse":
            return {**config, "protocol": self.protocol}
        return config

    def run_plain(self, scenario: Callable[[], Awaitable[Any]], *, deadline: float = 60) -> Any:
        """Run a scenario that builds its clients itself (``shell.mod``)."""
        if not self.is_trio:
            return _drive(scenario())

        async def main() -> Any:
            with trio.fail_after(deadline):
                return await scenario()

        return trio.run(main)

    # ------------------------------------------------------------------ helpers

    def sleep(self, seconds: float) -> Awaitable[None]:
        if self.is_trio:
            return trio.sleep(seconds)
        time.sleep(seconds)
        return _Done(None)

    def wait_for(
        self, predicate: Callable[[], bool], timeout: float = 10.0, interval: float = 0.02
    ) -> Awaitable[bool]:
        """Poll ``predicate`` until true (→ True) or ``timeout`` (→ False)."""
        if self.is_trio:

            async def poll() -> bool:
                with trio.move_on_after(timeout):
                    while not predicate():
                        await trio.sleep(interval)
                    return True
                return bool(predicate())

            return poll()
        end = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > end:
                return _Done(bool(predicate()))
            time.sleep(interval)
        return _Done(True)

    def gather(self, thunks: Sequence[Callable[[], Awaitable[Any]]]) -> Awaitable[list[Any]]:
        """Run ``thunk()``s concurrently (threads / a nursery); their results in order."""
        if self.is_trio:

            async def run_all() -> list[Any]:
                results: list[Any] = [None] * len(thunks)

                async def one(i: int) -> None:
                    results[i] = await thunks[i]()

                async with trio.open_nursery() as nursery:
                    for i in range(len(thunks)):
                        nursery.start_soon(one, i)
                return results

            return run_all()
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=len(thunks) or 1) as pool:
            futures = [pool.submit(lambda t=t: _drive(_await(t))) for t in thunks]
            return _Done([f.result() for f in futures])

    def callback(self, fn: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
        """An ``async def`` callback in the form the shell runs it."""
        if self.is_trio:
            return fn

        def plain(*args: Any) -> Any:
            return _drive(fn(*args))

        # Keep the signature: the handlers adapt to the callback's arity (SAMP-2, ELIC-3).
        plain.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
        return plain

    def client_class(self) -> Any:
        return self.mod.Client


@pytest.fixture(params=["sync", "trio"])
def shell(request: pytest.FixtureRequest) -> Shell:
    return Shell(request.param, getattr(request.module, "PROTOCOL", None))


# ---------------------------------------------------------------------- processes


def children_matching(needle: str) -> list[Any]:
    """Live child processes of this test process whose command line contains ``needle``."""
    import psutil

    out = []
    for proc in psutil.Process().children(recursive=True):
        try:
            if needle in " ".join(proc.cmdline()) and proc.status() != psutil.STATUS_ZOMBIE:
                out.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return out


def pid_gone(pid: int) -> bool:
    """True once ``pid`` no longer exists at all (reaped: no zombie left behind)."""
    import psutil

    try:
        proc = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return True
    try:
        # A reused pid belonging to an unrelated process is not ours.
        return proc.ppid() != os.getpid()
    except psutil.NoSuchProcess:
        return True


class RSSSampler:
    """Samples this process's RSS in a thread; ``peak`` is the highest seen."""

    def __init__(self, interval: float = 0.005) -> None:
        import psutil

        self._proc = psutil.Process()
        self.baseline = self._proc.memory_info().rss
        self.peak = self.baseline
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._proc.memory_info().rss)
            self._stop.wait(self._interval)

    def __enter__(self) -> RSSSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self.peak = max(self.peak, self._proc.memory_info().rss)

    @property
    def growth(self) -> int:
        return self.peak - self.baseline


def text_of(result: Mapping[str, Any]) -> str:
    """The text of a CallToolResult's first text block."""
    for block in result.get("content") or []:
        if isinstance(block, Mapping) and block.get("type") == "text":
            return str(block.get("text"))
    raise AssertionError(f"no text content in {result!r}")
