"""Reading an httpcore response body under Trio, to its end or up to a stop.

httpcore's body is a chain of async generators. Leaving ``async for`` over it early
leaves them unfinished, and trio warns about each one it later collects. So a *stop*
cancels a scope around the loop: the ``Cancelled`` is raised inside httpcore's read and
unwinds every generator (the connection is then closed, not reused).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import trio

__all__ = ["read_chunks"]


async def read_chunks(chunks: AsyncIterator[bytes], on_chunk: Callable[[bytes], bool]) -> bool:
    """Feed ``chunks`` to ``on_chunk`` until it returns False (stop) or the body ends.
    True if the body ended, False if it was stopped (and unwound). An exception raised
    by ``on_chunk`` is re-raised after the body has been unwound like a stop."""
    error: BaseException | None = None
    with trio.CancelScope() as scope:
        async for chunk in chunks:
            try:
                go_on = on_chunk(chunk)
            except Exception as exc:
                error, go_on = exc, False
            if not go_on:
                scope.cancel()
    if error is not None:
        raise error
    return not scope.cancel_called
