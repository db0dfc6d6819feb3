"""Reading an httpcore response body under Trio: to its end, up to a stop, or up to a
pause after which another task reads on.

An ``https://`` body (httpcore's) is a chain of async generators. Leaving ``async for``
over it early leaves them unfinished, and trio warns about each one it later collects.
(A plain ``http://`` body, ``_plain.PlainResponse``, is an iterator object: unwinding it
the same way is harmless, its first read raises ``Cancelled``.) So a *stop*
reads on in a cancelled scope: the ``Cancelled`` is raised inside httpcore's read and
unwinds every generator (the connection is then closed, not reused). A *pause* leaves
the chain suspended at its ``yield``, intact, for :func:`read_chunks` to be called again
on the same iterator, from another task: what the Trio shell does with the rest of a
response its caller read itself once the caller has its answer (issue 9, item 6).

The cancelled scope is entered only for a stop (rare: an abandoned or refused
exchange), not around every body: entering and leaving a trio cancel scope is about
twenty Python calls, on a round trip that makes a few hundred.
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
    async for chunk in chunks:
        try:
            what = on_chunk(chunk)
        except BaseException:
            await _unwind(chunks)
            raise
        if what is Next.GO:
            continue
        if what is Next.STOP:
            await _unwind(chunks)
        return what
    return Next.GO


async def _unwind(chunks: AsyncIterator[bytes]) -> None:
    """Abandon the rest of the body: read on in a cancelled scope until a read raises
    ``Cancelled`` inside httpcore (chunks already buffered come first, dropped), which
    closes every generator of the chain, or the body ends."""
    with trio.CancelScope() as scope:
        scope.cancel()
        try:
            while True:
                await chunks.__anext__()
        except StopAsyncIteration:
            pass
