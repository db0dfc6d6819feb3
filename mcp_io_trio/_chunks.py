"""Reading an httpcore response body under Trio: to its end, up to a stop, or up to a
pause after which another task reads on.

httpcore's body is a chain of async generators. Leaving ``async for`` over it early
leaves them unfinished, and trio warns about each one it later collects. So a *stop*
cancels a scope around the loop: the ``Cancelled`` is raised inside httpcore's read and
unwinds every generator (the connection is then closed, not reused). A *pause* leaves
the chain suspended at its ``yield``, intact, for :func:`read_chunks` to be called again
on the same iterator, from another task: what the Trio shell does with the rest of a
response its caller read itself once the caller has its answer (issue 9, item 6).
"""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator, Callable

import trio

__all__ = ["Next", "read_chunks"]


class Next(enum.Enum):
    """What ``on_chunk`` wants after a chunk (and what ``read_chunks`` did)."""

    GO = 0  # read on (returned: the body ended)
    STOP = 1  # abandon the body (the connection is closed)
    PAUSE = 2  # return now; the body is read on later by another call


async def read_chunks(chunks: AsyncIterator[bytes], on_chunk: Callable[[bytes], Next]) -> Next:
    """Feed ``chunks`` to ``on_chunk``. Returns GO (the body ended), STOP (stopped and
    unwound) or PAUSE (``chunks`` is still open and must be read on). An exception
    raised by ``on_chunk`` is re-raised after the body has been unwound like a stop."""
    error: BaseException | None = None
    with trio.CancelScope() as scope:
        async for chunk in chunks:
            try:
                what = on_chunk(chunk)
            except Exception as exc:
                error, what = exc, Next.STOP
            if what is Next.PAUSE:
                return what
            if what is Next.STOP:
                scope.cancel()
    if error is not None:
        raise error
    return Next.STOP if scope.cancel_called else Next.GO
