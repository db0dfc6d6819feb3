"""OS plumbing shared by both shells' stdio transports: pipe tuning (Linux only; a
no-op elsewhere), the server's process group (POSIX), stopping a server process
(:func:`stop_steps`: the escalation both shells run, blocking or awaited), and the
groups of the servers still running (ended at once on demand, asked to terminate at
exit)."""

from __future__ import annotations

import atexit
import os
import signal
import sys
from collections.abc import Callable, Generator
from typing import Any, Final

import attrs

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Windows
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "BIG_PIPE",
    "KILL",
    "SHUTDOWN_GRACE",
    "TERMINATE",
    "StopStep",
    "ended",
    "enlarge_pipes",
    "group_alive",
    "kill_started",
    "server_group",
    "shutdown_signals",
    "signal_group",
    "signal_server",
    "started",
    "stop_steps",
]

# Linux lets a pipe's buffer grow from 64 KiB to /proc/sys/fs/pipe-max-size (1 MiB by
# default). A 1 MiB message then crosses in a few writes and reads instead of sixteen,
# each a wake-up of the peer. The kernel charges the capacity to the user's pipe quota
# (pipe-user-pages-soft), so the shells grow a server's pipes only once it actually
# moves a large message; failure (quota, other systems) leaves them as they were.
BIG_PIPE = 1 << 20
_F_SETPIPE_SZ: int | None = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl else None


def enlarge_pipes(*pipes: Any) -> None:
    """Best effort: give each pipe (an fd or an object with ``fileno()``) BIG_PIPE."""
    if _F_SETPIPE_SZ is None:
        return
    for pipe in pipes:
        if pipe is None:
            continue
        try:
            fd = pipe if isinstance(pipe, int) else pipe.fileno()
            fcntl.fcntl(fd, _F_SETPIPE_SZ, BIG_PIPE)
        except (OSError, ValueError):
            pass


# ---------------------------------------------------------------- process groups
#
# A server is often started through a launcher (``npx``, ``sh -c``, ``uv run``): the
# process that actually serves is a grandchild. Closing must end every process the
# server started, and nothing else (issue 8, item 6; STDIO-6). Both shells start the
# server with ``start_new_session=True``, so it leads a new session and process group
# (pgid == its pid) that its descendants inherit; closing signals that group. A
# descendant that moves itself to another group or session (a daemon that calls
# setsid) has left on purpose and is out of reach, as with any process-group kill.


def server_group(pid: int) -> int | None:
    """The process group to signal for a server started with ``start_new_session=True``
    as ``pid`` (it is that group's leader), or ``None`` where there are no process
    groups or where it would be the caller's own group: never signal ourselves."""
    if not hasattr(os, "killpg"):  # pragma: no cover - Windows
        return None
    try:
        if pid <= 0 or pid == os.getpgrp():
            return None
    except OSError:  # pragma: no cover - getpgrp cannot fail on POSIX
        return None
    return pid


def signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to every process of the group. False once the group is empty (or
    nothing in it may be signalled by us)."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def signal_server(pgid: int | None, process: Any, sig: int) -> None:
    """Send ``sig`` to a server process's group (``pgid``), or to the child alone if it
    has no group of its own and still runs (``process``: a ``subprocess.Popen`` or a
    ``trio.Process``)."""
    if pgid is not None and signal_group(pgid, sig):
        return
    if process.poll() is None:
        try:
            process.send_signal(sig)
        except OSError:
            pass


def shutdown_signals(graceful: bool) -> tuple[int | None, ...]:
    """Stopping a server process (STDIO-6): after its stdin is closed, each step sends
    this signal (``None``: none, the wait for a clean exit) to its whole group and waits
    a grace period for the group to be gone. Signals go to the group and every wait is
    for the whole group, so a server started through a launcher (``npx``, ``sh -c``)
    ends with everything it started (issue 8, item 6). Not ``graceful`` (its output
    ended or lost the framing): no wait for a clean exit before SIGTERM."""
    return (None, TERMINATE, KILL) if graceful else (TERMINATE, KILL)


def group_alive(pgid: int) -> bool:
    """Whether any process of the group is still running (zombies do not count: an
    orphaned zombie waits for init to reap it and holds nothing open)."""
    if not signal_group(pgid, 0):
        return False
    if not sys.platform.startswith("linux"):
        return True
    # killpg(0) also succeeds for zombies. Orphans are reaped by init, which in a
    # container may be slow at it; waiting for that would stretch every close.
    try:
        entries = os.scandir("/proc")
    except OSError:  # pragma: no cover - /proc not mounted
        return True
    with entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue  # gone meanwhile
            # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
            fields = stat[stat.rfind(b")") + 2 :].split()
            if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
                return True
    return False


#: Signals of the escalation (close stdin first, then these, each followed by a grace).
TERMINATE: Any = signal.SIGTERM
KILL: Any = getattr(signal, "SIGKILL", signal.SIGTERM)

#: How long each step of stopping a server (close stdin, SIGTERM, SIGKILL) may take.
#: The shells pass it to :func:`stop_steps` from their own module (a test lengthens it
#: there).
SHUTDOWN_GRACE = 2.0

# Descendants left in the group once the leader is gone are polled (they are not our
# children: there is nothing to wait() on), from this pause doubling up to the next.
_FIRST_POLL: Final = 0.002
_LAST_POLL: Final = 0.05


@attrs.frozen
class StopStep:
    """A wait :func:`stop_steps` asks of the shell: until ``until`` (on the clock it was
    given) at the latest, for the server process to exit and be reaped (``exit``), or
    plainly (a pause between two looks at the group). The shell sends nothing back: the
    flow looks at the process and the group itself."""

    until: float
    exit: bool


def stop_steps(
    pgid: int | None,
    process: Any,
    graceful: bool,
    now: Callable[[], float],
    grace: float,
) -> Generator[StopStep, None, None]:
    """Stop a server process whose stdin the shell has just closed (STDIO-6): each step
    of :func:`shutdown_signals` (its signal, if any, to the whole group) is followed by
    a wait of up to ``grace`` for the process to exit and its group to be empty; the
    first step that sees them gone ends the flow. ``process`` is a ``subprocess.Popen``
    or a ``trio.Process`` (both have ``poll()``, which reaps), ``now`` the shell's
    clock. The group is forgotten (:func:`ended`) however the flow ends, closed early
    included: a shell runs it under ``contextlib.closing``."""
    try:
        for sig in shutdown_signals(graceful):
            if sig is not None:
                signal_server(pgid, process, sig)
            deadline = now() + grace
            yield StopStep(deadline, exit=True)
            if process.poll() is None:
                continue
            if pgid is None:
                return
            pause = _FIRST_POLL
            while group_alive(pgid):
                moment = now()
                if moment >= deadline:
                    break
                yield StopStep(min(moment + pause, deadline), exit=False)
                pause = min(pause * 2, _LAST_POLL)
            else:
                return
    finally:
        ended(pgid)


# ---------------------------------------------------------------- servers still running
#
# A server runs in its own session, so the terminal's Ctrl-C never reaches it: only
# this process can end it. Each shell notes the group of a server it started
# (``started``) and forgets it once closing is over (``ended``). What is still noted
# can be ended at once (``kill_started``: the command line's second Ctrl-C, which
# exits without waiting for the graceful close), and is asked to terminate when the
# interpreter exits (a client that was never closed): no server outlives its host.
# Entries carry the pid that started them, so a forked child never signals its
# parent's servers.

_STARTED: dict[int, int] = {}  # pgid -> os.getpid() of the process that started it
_AT_EXIT = False


def started(pgid: int | None) -> None:
    """Note the process group of a server this process just started."""
    global _AT_EXIT
    if pgid is None:
        return
    _STARTED[pgid] = os.getpid()
    if not _AT_EXIT:
        _AT_EXIT = True
        atexit.register(kill_started, TERMINATE)


def ended(pgid: int | None) -> None:
    """The server's close is over (its group is empty, or signalled to the end)."""
    if pgid is not None:
        _STARTED.pop(pgid, None)


def kill_started(sig: int = KILL) -> int:
    """Send ``sig`` to the group of every server this process started and did not
    finish closing; returns how many groups were signalled. Never waits (callable
    from a signal handler, or at exit)."""
    me = os.getpid()
    count = 0
    for pgid, owner in list(_STARTED.items()):
        if owner == me and signal_group(pgid, sig):
            count += 1
    return count
