"""Pipe tuning shared by both shells' stdio transports (Linux only; a no-op elsewhere)."""

from __future__ import annotations

from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["BIG_PIPE", "enlarge_pipes"]

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
