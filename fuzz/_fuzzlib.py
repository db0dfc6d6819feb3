"""What every fuzz target shares: the target record, the drivers, structure-aware input.

A target is a function ``check(data: bytes) -> None`` that feeds ``data`` to one entry
point of the core and asserts that entry point's contract (only documented results and
typed errors). Anything that escapes ``check`` is a crash.

Three drivers run a target:

* ``run_corpus``: every file of ``fuzz/corpus/<target>/`` (the pytest suite does this);
* ``run_hypothesis``: hypothesis as a byte-stream generator (``st.binary()``), with a fixed
  seed for reproducible runs; it shrinks a failing input before reporting it. The
  fallback when atheris is not installed, and what ``make test`` uses;
* ``run_atheris``: coverage-guided libFuzzer through atheris, when it is installed.

Structure-aware input: :class:`Reader` turns bytes into choices, and :func:`json_value`
into JSON documents drawn from a target's vocabulary of keys and values, so random bytes
become plausible server requests, schemas or configs. An input that already *is* JSON
(a corpus file, written by hand) is used as it is: see :func:`json_input`.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_proto.effects import CallHost, Log

FUZZ_DIR = Path(__file__).resolve().parent
CORPUS_DIR = FUZZ_DIR / "corpus"
WORK_DIR = FUZZ_DIR / ".work"  # libFuzzer's growing corpus (not committed)
CRASH_DIR = FUZZ_DIR / "crashes"  # reproducers of broken contracts (not committed)


@dataclass(frozen=True)
class Target:
    """One fuzz target: ``check`` raises only when the contract is broken."""

    name: str
    check: Callable[[bytes], None]
    seeds: Sequence[bytes] = ()
    max_len: int = 4096
    description: str = ""
    # libFuzzer options that suit the target (e.g. a dictionary of tokens).
    extra_args: Sequence[str] = field(default_factory=tuple)


# ---------------------------------------------------------------- structure-aware input


class Reader:
    """Consumes fuzz bytes as choices; past the end every choice is 0 (deterministic)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            return 0
        value = self.data[self.pos]
        self.pos += 1
        return value

    def below(self, n: int) -> int:
        """A number in ``range(n)`` (one byte, two when ``n`` > 256)."""
        if n <= 1:
            return 0
        value = self.byte()
        if n > 256:
            value = value << 8 | self.byte()
        return value % n

    def choice(self, options: Sequence[Any]) -> Any:
        return options[self.below(len(options))]

    def flag(self) -> bool:
        return self.byte() & 1 == 1

    def take(self, n: int) -> bytes:
        chunk = self.data[self.pos : self.pos + n]
        self.pos += len(chunk)
        return chunk

    def text(self, max_len: int = 32) -> str:
        raw = self.take(self.below(max_len + 1))
        return raw.decode("utf-8", "surrogateescape").encode("utf-8", "replace").decode()

    def rest(self) -> bytes:
        chunk = self.data[self.pos :]
        self.pos = len(self.data)
        return chunk

    @property
    def exhausted(self) -> bool:
        return self.pos >= len(self.data)


# Values worth trying anywhere: the boundaries that broke things before (issue 11).
SCALARS: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    1,
    -1,
    2,
    5,
    2**31,
    2**53 + 1,
    2**64,
    -(2**63),
    10**400,
    0.5,
    -1.5,
    1e308,
    "",
    "a",
    "x" * 300,
    "\u00b2",
    "\ud800",
    "\x00",
    "a\nb",
    "\u2603",
)


def json_value(
    reader: Reader,
    keys: Sequence[str],
    strings: Sequence[Any] = (),
    depth: int = 0,
    max_depth: int = 5,
) -> Any:
    """A JSON value built from ``reader``'s choices: objects use ``keys``; scalars come
    from ``strings`` (the target's vocabulary) and :data:`SCALARS`."""
    kind = reader.below(10) if depth < max_depth else reader.below(5)
    if kind <= 2 and strings:
        return reader.choice(strings)
    if kind <= 4:
        if reader.below(8) == 0:
            return reader.text()
        return reader.choice(SCALARS)
    if kind <= 6:
        return [
            json_value(reader, keys, strings, depth + 1, max_depth) for _ in range(reader.below(4))
        ]
    out: dict[str, Any] = {}
    for _ in range(reader.below(6)):
        key = reader.choice(keys) if reader.below(8) else reader.text(8)
        out[key] = json_value(reader, keys, strings, depth + 1, max_depth)
    return out


def json_input(data: bytes, build: Callable[[Reader], Any]) -> Any:
    """``data`` parsed as JSON when it is JSON text (hand-written corpus files, and their
    mutations that stay JSON), else the document ``build`` makes from its bytes."""
    if data[:1] in (b"{", b"["):
        try:
            return json.loads(data)
        except (ValueError, RecursionError):
            pass
    return build(Reader(data))


def drive_host_op(op: Generator[Any, Any, Any]) -> Any:
    """Run a core operation that only asks the host (``serve_request``) as a shell would:
    a ``CallHost`` runs here, its exception thrown back into the operation; a ``Log``
    must carry a known level. Returns the operation's result."""
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            effect = op.throw(error) if error is not None else op.send(value)
        except StopIteration as stop:
            return stop.value
        value, error = None, None
        if isinstance(effect, CallHost):
            try:
                value = effect.fn(*effect.args)
            except Exception as exc:  # host code: thrown back, as the shells do
                error = exc
        else:
            assert isinstance(effect, Log), effect
            assert effect.level in ("DEBUG", "INFO", "WARNING", "ERROR"), effect


# ---------------------------------------------------------------- drivers


def corpus_files(name: str) -> list[Path]:
    directory = CORPUS_DIR / name
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.is_file() and not p.name.startswith("."))


def run_corpus(target: Target) -> int:
    """Every corpus file and seed through ``check``; returns how many ran."""
    count = 0
    for i, seed in enumerate(target.seeds):
        _checked(target, seed, origin=f"seed {i} of fuzz/fuzz_{target.name}.py")
        count += 1
    for path in corpus_files(target.name):
        _checked(target, path.read_bytes(), origin=str(path))
        count += 1
    return count


def _checked(target: Target, data: bytes, origin: str | None = None) -> None:
    try:
        target.check(data)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        where = origin or save_crash(target, data)
        raise AssertionError(
            f"fuzz target {target.name!r}: contract broken by {where}: {exc!r}"
        ) from exc


def save_crash(target: Target, data: bytes) -> str:
    """Write a reproducer to fuzz/crashes/<target>-<sha1> (returns its path)."""
    CRASH_DIR.mkdir(exist_ok=True)
    path = CRASH_DIR / f"{target.name}-{hashlib.sha1(data).hexdigest()[:16]}"
    path.write_bytes(data)
    return str(path)


def run_hypothesis(target: Target, examples: int, seed: int) -> int:
    """``examples`` inputs from hypothesis' byte generator, reproducible by ``seed``.

    A failure is shrunk by hypothesis, saved under fuzz/crashes/ and re-raised."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as fixed_seed
    from hypothesis import strategies as st

    count = 0

    @fixed_seed(seed)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.binary(max_size=target.max_len))
    def run(data: bytes) -> None:
        nonlocal count
        count += 1
        try:
            target.check(data)
        except Exception:
            save_crash(target, data)
            raise

    run()
    return count


def run_for(target: Target, seconds: float, seed: int = 0) -> int:
    """The hypothesis driver in batches until ``seconds`` have passed; returns inputs run."""
    total = 0
    stop = time.monotonic() + seconds
    batch = seed
    while time.monotonic() < stop:
        total += run_hypothesis(target, examples=2000, seed=batch)
        batch += 1
    return total


def run_atheris(
    target: Target,
    libfuzzer_args: Sequence[str],
    dirs: Sequence[Path] | None = None,
    *,
    child: bool = False,
) -> None:
    """Coverage-guided fuzzing (does not return: libFuzzer exits the process).

    The growing corpus goes to fuzz/.work/<target>/ (the committed corpus is read, never
    written); a crash is written to fuzz/crashes/<target>-crash-<sha1>. libFuzzer re-runs
    its own argv[0] for ``-merge``: that is a small script calling ``run.py`` again with
    this interpreter (``child``: the arguments are then libFuzzer's own)."""
    import atheris  # type: ignore[import-not-found]

    work = WORK_DIR / target.name
    work.mkdir(parents=True, exist_ok=True)
    CRASH_DIR.mkdir(exist_ok=True)
    again = WORK_DIR / f"{target.name}.sh"
    again.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" "{FUZZ_DIR / "run.py"}" {target.name}'
        ' --atheris-child -- "$@"\n'
    )
    again.chmod(0o755)
    if child:
        argv = [str(again), *libfuzzer_args]
    else:
        for i, seed in enumerate(target.seeds):
            (work / f"seed-{i}").write_bytes(seed)
        committed = CORPUS_DIR / target.name
        if dirs is None:
            dirs = [work, *([committed] if committed.is_dir() else [])]
        argv = [
            str(again),
            *(str(d) for d in dirs),
            f"-artifact_prefix={CRASH_DIR}{os.sep}{target.name}-",
            f"-max_len={target.max_len}",
            *target.extra_args,
            *libfuzzer_args,
        ]
    atheris.instrument_all()
    atheris.Setup(argv, target.check)
    atheris.Fuzz()


def have_atheris() -> bool:
    try:
        import atheris  # noqa: F401
    except ImportError:
        return False
    return True
