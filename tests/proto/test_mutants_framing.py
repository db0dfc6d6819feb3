"""stdio framer and SSE parser behaviour a mutation run showed untested (issue 11).

Each test failed on a surviving mutant of ``mcp_proto/stdio.py`` or ``mcp_proto/sse.py``
and passes on the code. Edge cases that random hypothesis seeds found only now and then
are pinned here as explicit examples.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from mcp_proto import NEED_DATA
from mcp_proto.errors import LineTooLongError, ResponseTooLargeError
from mcp_proto.sse import SSEEvent, SSEParser
from mcp_proto.stdio import EOF, LineFramer

# ---------------------------------------------------------------- stdio framer


def lines(framer: LineFramer) -> list[object]:
    out: list[object] = []
    while True:
        line = framer.next_line()
        if line is NEED_DATA:
            return out
        out.append(line)
        if isinstance(line, EOF):
            return out


def test_buffer_stays_small_with_a_partial_line_at_every_chunk() -> None:
    """Every chunk completes one line and starts the next: the unread tail must be moved
    to the front, or the buffer grows with the whole stream (the mutant that disabled
    compaction reached 1 MB after 20,000 chunks; the code stays near one line)."""
    framer = LineFramer(1 << 20)
    message = b'{"jsonrpc":"2.0","method":"notifications/progress"}'  # 51 bytes
    framer.receive_data(message[:10])
    for _ in range(20_000):
        framer.receive_data(message[10:] + b"\n" + message[:10])
        assert lines(framer) == [message]
        assert len(framer._buf) <= 4 * len(message)  # capacity, not just unread bytes
    assert framer.buffered == 10


@pytest.mark.parametrize("decode", [False, True])
def test_a_line_ending_in_cr_waits_for_its_newline(decode: bool) -> None:
    """``b"\\nabc\\r"``: an empty line, then "abc" still unterminated. The CR check of
    the empty line must not look at the byte before it (mutant: ``end >= start``
    returned ``b"\\nabc"`` as a line at once)."""
    framer = LineFramer(1024, decode=decode)
    framer.receive_data(b"\nabc\r")
    assert lines(framer) == []
    framer.receive_data(b"\n")
    assert lines(framer) == (["abc"] if decode else [b"abc"])


def test_an_unterminated_line_ending_in_cr_at_eof() -> None:
    framer = LineFramer(1024)
    framer.receive_data(b"\nabc\r")
    framer.receive_data(b"")
    assert lines(framer)[:1] == [b"abc"]


def test_line_too_long_message() -> None:
    framer = LineFramer(8)
    framer.receive_data(b"123456789")
    with pytest.raises(LineTooLongError) as info:
        framer.next_line()
    assert str(info.value) == "a stdio message exceeded max_line_size (8 bytes)"
    with pytest.raises(LineTooLongError) as again:
        framer.next_line()
    assert str(again.value) == "stdio framing was lost after an oversized line"


def test_a_terminated_line_too_long_message() -> None:
    framer = LineFramer(8)
    framer.receive_data(b"123456789\n")
    with pytest.raises(LineTooLongError) as info:
        framer.next_line()
    assert str(info.value) == "a stdio message exceeded max_line_size (8 bytes)"


@pytest.mark.parametrize("zero_copy", [False, True])
def test_data_after_eof_is_refused_with_its_reason(zero_copy: bool) -> None:
    framer = LineFramer(8)
    framer.receive_data(b"")
    with pytest.raises(RuntimeError) as info:
        if zero_copy:
            framer.get_buffer(4)
        else:
            framer.receive_data(b"x")
    assert str(info.value) == "data received after EOF"


def test_a_buffer_of_exactly_the_kept_size_is_reused() -> None:
    """Once everything is read the buffer is kept for reuse up to 4 MiB (so a steady
    stream of large messages does not reallocate), and dropped above that."""
    keep = 4 << 20
    framer = LineFramer(8 << 20)
    framer.receive_data(b"x" * (keep - 1) + b"\n")
    assert len(framer.next_line()) == keep - 1  # type: ignore[arg-type]
    framer.receive_data(b"{}\n")
    assert len(framer._buf) == keep  # reused, not reallocated
    assert framer.next_line() == b"{}"
    framer.receive_data(b"y" * keep + b"\n")
    assert framer.next_line() == b"y" * keep
    framer.receive_data(b"{}\n")
    assert len(framer._buf) < keep  # over the kept size: a fresh buffer


def test_a_line_of_exactly_the_limit_passes() -> None:
    framer = LineFramer(8)
    framer.receive_data(b"12345678")  # unterminated, at the limit: still may end here
    assert framer.next_line() is NEED_DATA
    framer.receive_data(b"\n")
    assert framer.next_line() == b"12345678"
    framer.receive_data(b"12345678\n123456789\n")
    assert framer.next_line() == b"12345678"
    with pytest.raises(LineTooLongError):
        framer.next_line()


# ---------------------------------------------------------------- SSE


def parse(chunks: list[bytes], max_event_size: int = 1 << 20) -> list[SSEEvent]:
    parser = SSEParser(max_event_size)
    out: list[SSEEvent] = []
    for chunk in chunks:
        parser.receive_data(chunk)
        while (event := parser.next_event()) is not NEED_DATA:
            assert isinstance(event, SSEEvent)
            out.append(event)
    return out


def test_an_id_that_is_not_utf8_is_decoded_with_replacement() -> None:
    """Only ``data:`` was tested with bad UTF-8; a strict decoding of ``id`` would raise
    UnicodeDecodeError from a server's bytes."""
    parser = SSEParser()
    parser.receive_data(b"id: \xff\xfeok\ndata: x\n\n")
    (event,) = parse([b"id: \xff\xfeok\ndata: x\n\n"])
    assert event.id == "\ufffd\ufffdok"
    assert parser.last_event_id == "\ufffd\ufffdok"


def test_an_event_name_that_is_not_utf8_is_decoded_with_replacement() -> None:
    (event,) = parse([b"event: \xffx\ndata: y\n\n"])
    assert event.event == "\ufffdx"


@given(comments=st.integers(min_value=1, max_value=50))
@example(comments=1)
@example(comments=50)
def test_comments_do_not_count_toward_the_event_size(comments: int) -> None:
    """A keep-alive comment is not part of any event: a stream of them before a
    full-size event must not trip the bound."""
    limit = 16
    data = b"data:" + b"x" * (limit - 5)  # exactly the limit
    stream = b": keep-alive 123\n" * comments + data + b"\n\n"
    assert [e.data for e in parse([stream], limit)] == ["x" * (limit - 5)]


@given(events=st.integers(min_value=2, max_value=20))
@example(events=2)
def test_the_bound_is_the_same_for_every_event(events: int) -> None:
    """Each event may reach exactly ``max_event_size``: the size count restarts at 0 for
    each one (mutant: a bound one byte tighter after the first event)."""
    limit = 10
    line = b"data:" + b"y" * (limit - 5)  # exactly 10 bytes
    assert len(parse([(line + b"\n\n") * events], limit)) == events
    with pytest.raises(ResponseTooLargeError) as info:
        parse([(line + b"\n\n") * events + line + b"z\n\n"], limit)
    assert str(info.value) == "an SSE event exceeded max_event_size (10 bytes)"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (b"0", 0),
        (b"999999999999999", 999_999_999_999_999),  # 15 digits: kept as sent
        (b"1000000000000000", 10**15),  # 16 digits: clamped
        (b"0" * 5000 + b"42", 42),  # leading zeros are not digits of the value
        (b"9" * 5000, 10**15),
    ],
)
def test_retry_values_and_their_clamp(value: bytes, expected: int) -> None:
    parser = SSEParser()
    parser.receive_data(b"retry: " + value + b"\n\n")
    assert parser.retry == expected
    assert parser.next_event() == SSEEvent("", "", None, expected)


@pytest.mark.parametrize("value", [b"", b"1.5", b"-1", b"\xd9\xa1", b"1 "])
def test_retry_that_is_not_ascii_digits_is_ignored(value: bytes) -> None:
    parser = SSEParser()
    parser.receive_data(b"retry: " + value + b"\n\n")
    assert parser.retry is None and parser.next_event() is NEED_DATA


def test_an_unterminated_line_past_the_bound_names_the_bound() -> None:
    parser = SSEParser(10)
    with pytest.raises(ResponseTooLargeError) as info:
        parser.receive_data(b"data:" + b"x" * 20)  # no line end yet
    assert str(info.value) == "an SSE event exceeded max_event_size (10 bytes)"


def test_a_bound_below_a_bom_is_refused_with_its_reason() -> None:
    with pytest.raises(ValueError) as info:
        SSEParser(2)
    assert str(info.value) == "max_event_size must be at least 3 bytes"
