"""The stdio newline framer (STDIO-2; Transports § stdio), tested the h11 way.

Every input is fed whole, byte by byte, and with trailing bytes that must stay buffered
(h11 tests/test_io.py ``tr()``); limits are tested as attacks; hypothesis checks that
any split of any byte string gives the same lines as a reference model.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto import NEED_DATA
from mcp_proto import stdio as stdio_module
from mcp_proto.errors import LineTooLongError, TransportError
from mcp_proto.stdio import EOF, LineFramer, frame

BIG = 1 << 30


def drain(framer: LineFramer, out: list[Any] | None = None) -> list[Any]:
    """Every line available now (stops at NEED_DATA or EOF), appended to ``out``.

    Appending as it goes keeps the lines returned before a ``LineTooLongError``.
    """
    out = [] if out is None else out
    while True:
        item = framer.next_line()
        if item is NEED_DATA or isinstance(item, EOF):
            return out
        assert isinstance(item, (bytes, str))
        out.append(item)  # (str from a decoding framer)


def feed_all(chunks: list[bytes], *, max_line_size: int = BIG, eof: bool = True) -> list[bytes]:
    framer = LineFramer(max_line_size)
    lines: list[bytes] = []
    for chunk in chunks:
        framer.receive_data(chunk)
        lines += drain(framer)
    if eof:
        framer.receive_data(b"")
        lines += drain(framer)
        assert isinstance(framer.next_line(), EOF)
        assert isinstance(framer.next_line(), EOF)  # EOF is sticky
        assert framer.buffered == 0
    return lines


def three_ways(data: bytes, expected: list[bytes], *, max_line_size: int = BIG) -> None:
    """h11's tr(): whole, byte by byte, and with trailing bytes left buffered."""
    assert feed_all([data], max_line_size=max_line_size) == expected
    assert feed_all([data[i : i + 1] for i in range(len(data))], max_line_size=max_line_size) == (
        expected
    )
    # Trailing bytes without a newline: the same lines come out, the tail stays
    # buffered (it is the start of the next message, not garbage to drop).
    tail = b'{"jsonrpc":"2.0","id":9,"res'
    if data.endswith(b"\n") and max_line_size > len(tail) + 9:
        framer = LineFramer(max_line_size)
        framer.receive_data(data + tail)
        assert drain(framer) == expected
        assert framer.next_line() is NEED_DATA
        assert framer.buffered == len(tail)
        framer.receive_data(b'ult":{}}\n')
        assert framer.next_line() == b'{"jsonrpc":"2.0","id":9,"result":{}}'


MSG = b'{"jsonrpc":"2.0","id":1,"result":{}}'
NOTE = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}'


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", []),
        (MSG + b"\n", [MSG]),
        (MSG + b"\n" + NOTE + b"\n", [MSG, NOTE]),
        # CRLF: the CR is part of the terminator, not of the message.
        (MSG + b"\r\n" + NOTE + b"\r\n", [MSG, NOTE]),
        # Mixed terminators.
        (MSG + b"\r\n" + NOTE + b"\n", [MSG, NOTE]),
        # Blank and whitespace-only lines are skipped.
        (b"\n\n" + MSG + b"\n\r\n \t\n" + NOTE + b"\n\n", [MSG, NOTE]),
        # Only one CR is a terminator; a second one is content (harmless JSON space).
        (MSG + b"\r\r\n", [MSG + b"\r"]),
        # Interior CRs and spaces are content.
        (b" a\rb \n", [b" a\rb "]),
        # Garbage lines are still lines: dropping them is the session's job.
        (b"not json\n\xff\xfe\n" + MSG + b"\n", [b"not json", b"\xff\xfe", MSG]),
        # Final line without a newline at EOF.
        (MSG, [MSG]),
        (MSG + b"\n" + NOTE, [MSG, NOTE]),
        (MSG + b"\r", [MSG]),
        (MSG + b"\r\r", [MSG + b"\r"]),
        # A whitespace-only tail at EOF is nothing.
        (MSG + b"\n  ", [MSG]),
        (MSG + b"\n\r", [MSG]),
        (b" \t\r", []),
    ],
)
def test_lines(data: bytes, expected: list[bytes]) -> None:
    three_ways(data, expected)


def test_frame() -> None:
    assert frame(MSG) == MSG + b"\n"
    assert feed_all([frame(MSG) + frame(NOTE)]) == [MSG, NOTE]


def test_need_data_until_newline_and_buffered_count() -> None:
    framer = LineFramer(BIG)
    assert framer.next_line() is NEED_DATA
    framer.receive_data(b'{"a":')
    assert framer.next_line() is NEED_DATA
    assert framer.buffered == 5
    framer.receive_data(b"1}")
    assert framer.next_line() is NEED_DATA
    framer.receive_data(b"\n{")
    assert framer.next_line() == b'{"a":1}'
    assert framer.next_line() is NEED_DATA
    assert framer.buffered == 1


def test_data_after_eof_is_a_caller_error() -> None:
    framer = LineFramer(BIG)
    framer.receive_data(b"")
    framer.receive_data(b"")  # a second EOF is fine
    with pytest.raises(RuntimeError):
        framer.receive_data(b"x")


# ---------------------------------------------------------------- limits as attacks


def test_max_line_size_boundary_exact_fits() -> None:
    line = b"x" * 10
    three_ways(line + b"\n", [line], max_line_size=10)
    three_ways(line, [line], max_line_size=10)


def test_overflow_when_newline_never_comes() -> None:
    framer = LineFramer(10)
    framer.receive_data(b"Q" * 10)
    assert framer.next_line() is NEED_DATA  # exactly at the bound: still waiting
    framer.receive_data(b"Q")
    with pytest.raises(LineTooLongError) as info:
        framer.next_line()
    assert isinstance(info.value, TransportError)
    assert "10" in str(info.value)
    assert "Q" not in str(info.value)  # HYG-1: the payload is never quoted
    # The framing is lost: the framer stays failed and holds no data.
    assert framer.buffered == 0
    with pytest.raises(LineTooLongError):
        framer.next_line()


def test_overflow_byte_by_byte_never_buffers_past_the_bound() -> None:
    framer = LineFramer(100)
    with pytest.raises(LineTooLongError):
        for _ in range(10_000):
            framer.receive_data(b"z")
            assert framer.next_line() is NEED_DATA
            assert framer.buffered <= 100
    assert framer.buffered == 0


def test_overflow_when_newline_arrives_in_the_same_chunk() -> None:
    framer = LineFramer(10)
    framer.receive_data(b"ok\n" + b"y" * 11 + b"\n" + b"later\n")
    assert framer.next_line() == b"ok"  # lines before the long one still come out
    with pytest.raises(LineTooLongError):
        framer.next_line()
    with pytest.raises(LineTooLongError):
        framer.next_line()


def test_overflow_counts_the_cr() -> None:
    # The bound is on the raw line: a trailing CR counts (documented: "grows past").
    framer = LineFramer(10)
    framer.receive_data(b"y" * 10 + b"\r\n")
    with pytest.raises(LineTooLongError):
        framer.next_line()


def test_overflow_of_final_line_at_eof() -> None:
    framer = LineFramer(10)
    framer.receive_data(b"y" * 11)
    framer.receive_data(b"")
    with pytest.raises(LineTooLongError):
        framer.next_line()


def test_huge_line_in_small_chunks_is_linear() -> None:
    """A 5 MB line in 64-byte chunks: every byte is searched for a newline O(1) times.

    White-box, and no clock: the buffer's ``find`` is wrapped to count the bytes it
    scans. A rescanning framer would scan ~n²/128 bytes (~2·10¹¹ here).
    """

    class CountingBuffer(bytearray):
        scanned = 0

        def find(self, sub: Any, start: Any = 0, *args: Any) -> int:
            CountingBuffer.scanned += len(self) - start
            return super().find(sub, start, *args)

    CountingBuffer.scanned = 0
    size = 5 * 1024 * 1024
    framer = LineFramer(size + 1)
    framer._buf = CountingBuffer()
    chunk = b"a" * 64
    for _ in range(size // 64):
        framer.receive_data(chunk)
        assert framer.next_line() is NEED_DATA
        # The scan offset has advanced over everything buffered so far.
        assert framer._scanned == framer.buffered
    framer.receive_data(b"\n")
    line = framer.next_line()
    assert isinstance(line, bytes) and len(line) == size
    assert isinstance(framer._buf, CountingBuffer)  # the wrapper was in use throughout
    assert CountingBuffer.scanned <= 2 * size


def test_many_lines_do_not_grow_the_buffer() -> None:
    """Consumed lines are compacted away: memory stays bounded on an endless stream."""
    framer = LineFramer(BIG)
    peak = 0
    for i in range(20_000):
        framer.receive_data(b'{"i":%d}\n' % i)
        assert drain(framer) == [b'{"i":%d}' % i]
        peak = max(peak, len(framer._buf))
    assert peak < 64


def test_a_consumed_buffer_is_reused_for_the_next_large_message() -> None:
    """The memory of a large message is reused for the next one (no new allocation and
    its page faults), up to _KEEP; a larger buffer is released once consumed."""
    framer = LineFramer(BIG)
    big = b"x" * (1 << 20)
    for _ in range(3):
        for i in range(0, len(big), 65536):
            feed(framer, big[i : i + 65536], True)
        feed(framer, b"\n", True)
        assert framer.next_line() == big
        assert framer.next_line() is NEED_DATA
    kept = framer._buf
    assert len(kept) >= len(big)
    feed(framer, big + b"\n", True)
    assert framer._buf is kept and framer.next_line() == big

    huge = b"y" * (stdio_module._KEEP + 1)
    framer.receive_data(huge + b"\n")
    assert framer.next_line() == huge
    framer.receive_data(MSG + b"\n")  # the next input starts a small buffer
    assert len(framer._buf) < 1024
    assert framer.next_line() == MSG


def test_a_partial_line_is_moved_to_the_front_once() -> None:
    framer = LineFramer(BIG)
    framer.receive_data(MSG + b"\n" + b"abc")
    assert framer.next_line() == MSG
    with framer.get_buffer(4096) as view:  # no room behind: the tail moves to the front
        view[:4] = b"def\n"
    framer.buffer_updated(4)
    assert framer._start == 0
    assert framer.next_line() == b"abcdef"


def test_decode_mode_returns_text_and_leaves_bad_utf8_as_bytes() -> None:
    framer = LineFramer(BIG, decode=True)
    framer.receive_data(
        b'{"t":"caf\xc3\xa9"}\r\n'  # UTF-8, CRLF
        b"\xef\xbb\xbf{}\n"  # a BOM is dropped, as utf-8-sig decoding does
        b"\xef\xbb\xbf\n"  # a line holding only a BOM is blank
        b"\xff\xfe{}\n"  # not UTF-8: handed on as bytes, for decode() to report
        b"  \n"
        b'{"last":1}'
    )
    framer.receive_data(b"")
    assert drain_any(framer) == ['{"t":"café"}', "{}", b"\xff\xfe{}", '{"last":1}']


def drain_any(framer: LineFramer) -> list[bytes | str]:
    out: list[bytes | str] = []
    while True:
        item = framer.next_line()
        if item is NEED_DATA or isinstance(item, EOF):
            return out
        assert isinstance(item, (bytes, str))
        out.append(item)


def test_buffer_misuse_is_a_caller_error() -> None:
    framer = LineFramer(BIG)
    with framer.get_buffer(8) as view:
        size = len(view)
    with pytest.raises(ValueError, match="exceeds"):
        framer.buffer_updated(size + 1)
    with pytest.raises(ValueError, match="exceeds"):
        framer.buffer_updated(-1)
    framer.buffer_updated(0)  # end of input
    with pytest.raises(RuntimeError, match="after EOF"):
        framer.get_buffer(8)


# ---------------------------------------------------------------- properties


def reference(data: bytes, max_line_size: int) -> tuple[list[bytes], bool]:
    """What the framer must produce: (lines, whether it ends in LineTooLongError)."""
    *terminated, last = data.split(b"\n")
    out = []
    for raw in terminated:
        if len(raw) > max_line_size:
            return out, True
        line = raw[:-1] if raw.endswith(b"\r") else raw
        if line and not line.isspace():
            out.append(line)
    if len(last) > max_line_size:
        return out, True
    line = last[:-1] if last.endswith(b"\r") else last
    if line and not line.isspace():
        out.append(line)
    return out, False


def feed(framer: LineFramer, chunk: bytes, via_buffer: bool, spare: int = 0) -> None:
    """receive_data, or the zero-copy path: read into get_buffer, then buffer_updated."""
    if not via_buffer:
        framer.receive_data(chunk)
        return
    with framer.get_buffer(len(chunk) + spare) as view:
        assert len(view) >= len(chunk) + spare
        view[: len(chunk)] = chunk
    framer.buffer_updated(len(chunk))


def run_chunks(
    chunks: list[bytes],
    max_line_size: int,
    via_buffer: bool = False,
    spare: int = 0,
    decode: bool = False,
    only_first: bool = False,
) -> tuple[list[Any], bool]:
    """``only_first``: after each read, ``only_line`` before ``next_line`` (as the stdio
    connection reads into ``get_buffer``)."""
    framer = LineFramer(max_line_size, decode=decode)
    lines: list[Any] = []
    try:
        for chunk in chunks:
            feed(framer, chunk, via_buffer, spare)
            if only_first:
                line = framer.only_line()
                if line is not None:
                    if line:
                        lines.append(line)
                    continue
            drain(framer, lines)
        if via_buffer:
            framer.buffer_updated(0)
        else:
            framer.receive_data(b"")
        drain(framer, lines)
    except LineTooLongError:
        return lines, True
    return lines, False


def splits(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points) if b > a]


line_bytes = st.lists(
    st.sampled_from([b"\n", b"\r", b"\r\n", b" ", b"\t", b"{}", b"x", b"\xff", b"\x00", b"ab"]),
    max_size=40,
).map(b"".join)


@settings(deadline=None)
@given(
    data=st.binary(max_size=300) | line_bytes,
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=20),
    max_line_size=st.integers(min_value=1, max_value=40) | st.just(BIG),
)
def test_any_split_matches_whole_and_reference(
    data: bytes, cuts: list[int], max_line_size: int
) -> None:
    expected = reference(data, max_line_size)
    assert run_chunks([data] if data else [], max_line_size) == expected
    assert run_chunks(splits(data, cuts), max_line_size) == expected


@settings(deadline=None)
@given(
    data=st.binary(max_size=300) | line_bytes,
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=20),
    max_line_size=st.integers(min_value=1, max_value=40) | st.just(BIG),
    spare=st.integers(min_value=0, max_value=70),
)
def test_reading_into_get_buffer_matches_receive_data(
    data: bytes, cuts: list[int], max_line_size: int, spare: int
) -> None:
    """The zero-copy input path gives exactly what receive_data gives, whatever the
    chunking and however much more room the reader asked for than it filled."""
    expected = reference(data, max_line_size)
    assert run_chunks(splits(data, cuts), max_line_size, True, spare) == expected


@pytest.mark.parametrize(
    ("reads", "expected"),
    [
        ([b'{"a":1}\n'], ['{"a":1}']),
        ([b"{}\r\n"], ["{}"]),  # CRLF: the CR dropped
        ([b"\xef\xbb\xbf{}\n"], ["{}"]),  # a leading BOM dropped
        ([b" \n", b"{}\n"], ["{}"]),  # blank: nothing to deliver
        ([b"\xff\n"], [b"\xff"]),  # not UTF-8: bytes, for the decoder to report
    ],
)
def test_only_line_cases(reads: list[bytes], expected: list[Any]) -> None:
    framer = LineFramer(BIG, decode=True)
    got: list[Any] = []
    for read in reads:
        feed(framer, read, True)
        line = framer.only_line()
        assert line is not None
        if line:
            got.append(line)
        assert framer.buffered == 0  # consumed
    assert got == expected


def test_only_line_leaves_other_input_to_next_line() -> None:
    framer = LineFramer(4)
    feed(framer, b"ab\ncd\n", True)
    assert framer.only_line() is None  # two lines
    assert drain(framer) == [b"ab", b"cd"]
    feed(framer, b"ab", True)
    assert framer.only_line() is None  # no newline yet
    assert framer.next_line() is NEED_DATA
    feed(framer, b"c\n", True)
    assert framer.only_line() is None  # scanning began: next_line's
    assert drain(framer) == [b"abc"]
    feed(framer, b"12345\n", True)
    assert framer.only_line() is None  # too long: next_line raises
    with pytest.raises(LineTooLongError):
        framer.next_line()
    assert framer.only_line() is None  # the framer failed


@settings(deadline=None)
@given(data=st.binary(max_size=120) | line_bytes)
def test_byte_by_byte_matches_whole(data: bytes) -> None:
    whole = run_chunks([data] if data else [], 16)
    assert run_chunks([data[i : i + 1] for i in range(len(data))], 16) == whole


@settings(deadline=None)
@given(st.lists(st.binary(max_size=30).filter(lambda b: b"\n" not in b), max_size=10))
def test_framed_messages_come_back(messages: list[bytes]) -> None:
    """frame() then the framer is the identity on non-blank messages without newlines."""
    data = b"".join(frame(m) for m in messages)
    expected = [
        m[:-1] if m.endswith(b"\r") else m
        for m in messages
        if (m[:-1] if m.endswith(b"\r") else m).strip(b" \t\r\x0b\x0c")
    ]
    assert run_chunks([data] if data else [], BIG) == (expected, False)


def run_whole_first(
    chunks: list[bytes], max_line_size: int, decode: bool = False
) -> tuple[list[bytes | str], bool]:
    """As the stdio connection feeds the framer: a chunk that is one whole line goes
    through ``whole_line`` (no buffer), whole lines through ``whole_lines`` (split at
    once), anything else through ``receive_data``."""
    framer = LineFramer(max_line_size, decode=decode)
    lines: list[bytes | str] = []
    try:
        for chunk in chunks:
            line = framer.whole_line(chunk)
            if line is not None:
                if line:
                    lines.append(line)
                continue
            several = framer.whole_lines(chunk)
            if several is not None:
                lines += several
                continue
            framer.receive_data(chunk)
            drain(framer, lines)
        framer.receive_data(b"")
        drain(framer, lines)
    except LineTooLongError:
        return lines, True
    return lines, False


text_line_bytes = st.lists(
    st.sampled_from(
        [
            *(b"\n", b"\r", b"\r\n", b" ", b"{}", b"x", b"\xff", b"\xef\xbb\xbf", b"\xc3\xa9"),
            *(b"\xe2\x80\xa8", b"\x1c", b"\xc2\x85", b"\xc2\xa0"),  # Unicode line end, spaces
        ]
    ),
    max_size=40,
).map(b"".join)


@settings(deadline=None)
@given(
    data=text_line_bytes,
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=20),
    max_line_size=st.integers(min_value=1, max_value=40) | st.just(BIG),
)
def test_whole_lines_decode_as_the_buffered_path(
    data: bytes, cuts: list[int], max_line_size: int
) -> None:
    """Split at once, a read's lines are what next_line gives one by one: CRs and BOMs
    dropped, text unless not UTF-8, blank (Unicode-space) lines left out, the same
    lines before a line that is too long."""
    chunks = splits(data, cuts)
    assert run_whole_first(chunks, max_line_size, True) == run_chunks(
        chunks, max_line_size, decode=True
    )
    assert run_whole_first([data], max_line_size, True) == run_chunks(
        [data], max_line_size, decode=True
    )


@settings(deadline=None)
@given(
    data=st.binary(max_size=300) | text_line_bytes,
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=20),
    max_line_size=st.integers(min_value=1, max_value=40) | st.just(BIG),
    decode=st.booleans(),
    per_line=st.booleans(),
)
def test_only_line_then_next_line_matches_next_line(
    data: bytes, cuts: list[int], max_line_size: int, decode: bool, per_line: bool
) -> None:
    """only_line (a read holding exactly one line, taken without scanning) changes no
    line: with any chunking, or one read per line (the case it serves), the lines and
    the too-long verdict are next_line's."""
    if per_line:
        chunks = [part + b"\n" for part in data.split(b"\n")[:-1]]
        tail = data.split(b"\n")[-1]
        chunks += [tail] if tail else []
    else:
        chunks = splits(data, cuts)
    expected = run_chunks(chunks, max_line_size, True, decode=decode)
    assert run_chunks(chunks, max_line_size, True, decode=decode, only_first=True) == expected


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'{"a":1}\n{"b":2}\n', ['{"a":1}', '{"b":2}']),
        (b"{}\r\n\xef\xbb\xbf{}\n \n\n[]\n", ["{}", "{}", "[]"]),
        (b"{}\n\xff{}\n\xc3\xa9\n", ["{}", b"\xff{}", "\xe9"]),  # one line not UTF-8
        (b"{}\n\xc2\xa0\n{}\n", ["{}", "{}"]),  # a no-break space is blank, as str
        (b"{}\n", ["{}"]),  # (one line is whole_line's first, but works here too)
        (b"{}\n{}", None),  # the last line is not whole: the buffered path
    ],
)
def test_whole_lines_cases(data: bytes, expected: list[bytes | str] | None) -> None:
    framer = LineFramer(BIG, decode=True)
    assert framer.whole_lines(data) == expected
    if expected is not None:
        assert run_chunks([data], BIG, decode=True) == (expected, False)


def test_whole_lines_leave_long_lines_large_reads_and_buffered_input_alone() -> None:
    framer = LineFramer(4, decode=True)
    assert framer.whole_lines(b"ab\n12345\n") is None  # too long: next_line raises
    assert framer.whole_lines(b"ab\n1234\n") == ["ab", "1234"]
    big = b"{}\n" * 30_000  # beyond one pipe read: through the buffer
    assert LineFramer(BIG).whole_lines(big) is None
    framer = LineFramer(BIG)
    framer.receive_data(b"ab")
    assert framer.whole_lines(b"cd\nef\n") is None  # "ab" waits for its newline
    assert framer.whole_lines(bytearray(b"x\ny\n")) is None  # bytes only
    framer.receive_data(b"cd\n")
    assert framer.next_line() == b"abcd"
    assert framer.whole_lines(b"ef\ngh\n") == [b"ef", b"gh"]
    framer.receive_data(b"")
    assert framer.whole_lines(b"ij\nkl\n") is None  # after EOF: receive_data reports it


@settings(deadline=None)
@given(
    data=st.binary(max_size=300) | line_bytes,
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=20),
    max_line_size=st.integers(min_value=1, max_value=40) | st.just(BIG),
)
def test_whole_line_reads_match_the_buffered_path(
    data: bytes, cuts: list[int], max_line_size: int
) -> None:
    expected = reference(data, max_line_size)
    assert run_whole_first(splits(data, cuts), max_line_size) == expected
    # Every line read on its own, as a server answering one request at a time is read.
    per_line = [line + b"\n" for line in data.split(b"\n")[:-1]]
    tail = data.split(b"\n")[-1:]
    assert run_whole_first(per_line + [t for t in tail if t], max_line_size) == expected


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'{"t":"caf\xc3\xa9"}\r\n', '{"t":"café"}'),
        (b"\xef\xbb\xbf{}\n", "{}"),
        (b"\xef\xbb\xbf\n", ""),
        (b"\xff\xfe{}\n", b"\xff\xfe{}"),
        (b"  \r\n", ""),
        (b"\n", ""),
        (b"{}\n{}\n", None),  # two lines: the buffered path
        (b"{}", None),  # no newline yet
        (b"{}\n ", None),  # more after the newline
    ],
)
def test_whole_line_decodes_as_next_line(data: bytes, expected: bytes | str | None) -> None:
    framer = LineFramer(BIG, decode=True)
    assert framer.whole_line(data) == expected
    if expected is not None:
        buffered = LineFramer(BIG, decode=True)
        buffered.receive_data(data)
        assert drain_any(buffered) == ([expected] if expected else [])


def test_whole_line_leaves_buffered_input_and_limits_to_receive_data() -> None:
    framer = LineFramer(4)
    assert framer.whole_line(b"12345\n") is None  # too long: receive_data raises
    with pytest.raises(LineTooLongError):
        framer.receive_data(b"12345\n")
        framer.next_line()
    framer = LineFramer(BIG)
    framer.receive_data(b"ab")
    assert framer.whole_line(b"cd\n") is None  # "ab" waits for its newline
    assert framer.whole_line(bytearray(b"x\n")) is None  # bytes only
    framer.receive_data(b"cd\n")
    assert framer.next_line() == b"abcd"
    assert framer.whole_line(b"ef\n") == b"ef"
    framer.receive_data(b"")
    assert framer.whole_line(b"gh\n") is None  # after EOF: receive_data reports it
