"""``mcp_io_trio._chunks.read_chunks``: a stop or an error unwinds the whole chain of
async generators (as httpcore's body is), a pause leaves it open for another reader.
An unfinished generator would be reported by trio when collected (an error under
``-W error``), so each test also checks that every generator ran its ``finally``."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator

import pytest
import trio

from mcp_io_trio._chunks import Next, read_chunks


def chain(parts: list[bytes], closed: list[str], *, buffered: int = 0) -> AsyncIterator[bytes]:
    """Two nested generators like httpcore's: the inner one checkpoints before each
    part (a socket read) except for the first ``buffered`` parts after the first."""

    async def inner() -> AsyncIterator[bytes]:
        try:
            for i, part in enumerate(parts):
                if not 1 <= i <= buffered:
                    await trio.lowlevel.checkpoint()
                yield part
        finally:
            closed.append("inner")

    async def outer() -> AsyncIterator[bytes]:
        try:
            async for part in inner():
                yield part
        finally:
            closed.append("outer")

    return outer()


def run(fn: object) -> None:
    trio.run(fn)  # type: ignore[arg-type]
    gc.collect()


@pytest.mark.parametrize("buffered", [0, 2])
def test_a_stop_unwinds_every_generator_and_feeds_nothing_more(buffered: int) -> None:
    closed: list[str] = []
    fed: list[bytes] = []

    async def main() -> None:
        def on_chunk(chunk: bytes) -> Next:
            fed.append(chunk)
            return Next.STOP

        body = chain([b"a", b"b", b"c", b"d"], closed, buffered=buffered)
        assert await read_chunks(body, on_chunk) is Next.STOP
        assert closed == ["inner", "outer"]
        await trio.lowlevel.checkpoint()  # the caller's scope is not left cancelled

    run(main)
    assert fed == [b"a"]


def test_an_error_in_on_chunk_is_raised_after_the_unwinding() -> None:
    closed: list[str] = []

    async def main() -> None:
        def on_chunk(chunk: bytes) -> Next:
            raise ValueError("bad chunk")

        with pytest.raises(ValueError, match="bad chunk"):
            await read_chunks(chain([b"a", b"b"], closed), on_chunk)
        assert closed == ["inner", "outer"]

    run(main)


def test_a_pause_leaves_the_body_open_for_the_next_reader() -> None:
    closed: list[str] = []
    fed: list[bytes] = []

    async def main() -> None:
        body = chain([b"a", b"b", b"c"], closed)

        def first(chunk: bytes) -> Next:
            fed.append(chunk)
            return Next.PAUSE

        def rest(chunk: bytes) -> Next:
            fed.append(chunk)
            return Next.GO

        assert await read_chunks(body, first) is Next.PAUSE
        assert closed == []
        async with trio.open_nursery() as nursery:
            # Read on from another task, as the shell's _read_rest does.
            async def read_on() -> None:
                assert await read_chunks(body, rest) is Next.GO

            nursery.start_soon(read_on)
        assert closed == ["inner", "outer"]

    run(main)
    assert fed == [b"a", b"b", b"c"]


def test_a_stop_in_a_cancelled_caller_still_unwinds() -> None:
    closed: list[str] = []

    async def main() -> None:
        with trio.CancelScope() as outer:
            outer.cancel()
            await read_chunks(chain([b"a"], closed), lambda chunk: Next.GO)
        assert outer.cancelled_caught
        assert closed == ["inner", "outer"]

    run(main)
