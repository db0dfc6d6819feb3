"""Fuzz target: the stdio framer (``mcp_proto.stdio.LineFramer``).

Feeds: a server's stdout bytes. The first byte picks ``max_line_size`` and ``decode``, the
second how the rest is chunked; the rest is the stream.

Contract: only ``LineTooLongError`` escapes, and only from ``next_line``; the lines (and
whether and where the bound trips) do not depend on chunking, nor on ``receive_data``
versus ``get_buffer``/``buffer_updated`` versus the connection's fast paths
(``whole_line`` and ``whole_lines`` first, ``receive_data`` when they decline); no line
holds a newline or exceeds the bound; what stays buffered after ``NEED_DATA`` is within
the bound (issue 11: compaction).
"""

from __future__ import annotations

from typing import Any

from _fuzzlib import Reader, Target

from mcp_proto import NEED_DATA
from mcp_proto.errors import LineTooLongError
from mcp_proto.stdio import EOF, LineFramer

LIMITS = (1, 4, 16, 64, 1 << 20)


def _run(chunks: list[bytes], limit: int, decode: bool, mode: str) -> list[Any]:
    """``mode``: ``receive`` (receive_data), ``zero_copy`` (get_buffer), ``only_line``
    (get_buffer, then only_line before next_line: as the stdio connection reads in the
    blocking shell), ``whole`` (as it feeds the framer in Trio: whole_line, then
    whole_lines, then receive_data)."""
    framer = LineFramer(limit, decode=decode)
    out: list[Any] = []

    def put(line: Any) -> None:
        assert isinstance(line, (bytes, str)) and line and not line.isspace()
        raw = line.encode("utf-8") if isinstance(line, str) else line
        assert b"\n" not in raw and len(raw) <= limit
        out.append(line)

    def pump() -> bool:
        while True:
            line = framer.next_line()
            if line is NEED_DATA:
                assert framer.buffered <= limit, "unread input beyond the line bound"
                return True
            if isinstance(line, EOF):
                out.append("EOF")
                return False
            put(line)

    try:
        for chunk in [*chunks, b""]:
            if mode == "whole":
                one = framer.whole_line(chunk)
                if one is not None:
                    if one:
                        put(one)
                    continue
                several = framer.whole_lines(chunk)
                if several is not None:
                    for line in several:
                        put(line)
                    continue
            if mode in ("zero_copy", "only_line"):
                with framer.get_buffer(max(len(chunk), 1)) as view:
                    view[: len(chunk)] = chunk
                framer.buffer_updated(len(chunk))
                if mode == "only_line" and chunk:
                    one = framer.only_line()
                    if one is not None:
                        if one:
                            put(one)
                        continue
            else:
                framer.receive_data(chunk)
            if not pump():
                break
    except LineTooLongError:
        out.append("too long")
    return out


def check(data: bytes) -> None:
    reader = Reader(data)
    head = reader.byte()
    limit, decode = LIMITS[head % len(LIMITS)], bool(head & 0x80)
    step = 1 + reader.below(16)
    stream = reader.rest()
    whole = _run([stream] if stream else [], limit, decode, "receive")
    pieces = [stream[i : i + step] for i in range(0, len(stream), step)]
    assert _run(pieces, limit, decode, "receive") == whole, "chunking changed lines"
    assert _run(pieces, limit, decode, "zero_copy") == whole, "get_buffer changed lines"
    assert _run(pieces, limit, decode, "whole") == whole, "whole_lines changed lines"
    # Lines read one per chunk, as a server answering one request at a time is read.
    per_line = [line + b"\n" for line in stream.split(b"\n")[:-1]]
    tail = stream.split(b"\n")[-1]
    assert _run(per_line + ([tail] if tail else []), limit, decode, "whole") == whole, (
        "whole_line changed lines"
    )
    assert _run(pieces, limit, decode, "only_line") == whole, "only_line changed lines"
    assert _run(per_line + ([tail] if tail else []), limit, decode, "only_line") == whole, (
        "only_line changed lines read one per chunk"
    )


TARGET = Target(
    name="stdio",
    description="stdout bytes -> LineFramer (chunked, zero-copy) -> lines",
    check=check,
    seeds=(
        b"\x04\x03" + b'{"jsonrpc":"2.0","id":1,"result":{}}\n',
        b"\x84\x01" + b"\xef\xbb\xbf{}\r\n\n\r\n{}\r",
        b"\x02\x05" + b"\nabc\r\n" + b"x" * 20 + b"\n",
        b"\x03\x02" + b"12345678901234567\n1234\n",
        b"\x00\x00" + b"\xff\xfe\n \t \n",
    ),
    max_len=2048,
)

if __name__ == "__main__":
    from run import main

    main(["stdio"])
