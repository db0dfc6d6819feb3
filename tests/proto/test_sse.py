"""The incremental SSE parser (WHATWG HTML § 9.2.6 "Interpreting an event stream").

Every stream is parsed three ways, as h11 tests its parsers: whole, one byte at a
time, and followed by trailing garbage. Hypothesis checks that any chunking
of any input gives what a whole-stream reference parser, written straight from the
standard, gives. Limits are tested as attacks; linearity is checked by counting the
bytes the line search examines, never by timing.
"""

from __future__ import annotations

import itertools
import re
import tracemalloc
from collections.abc import Iterable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcp_proto.sse as sse_module
from mcp_proto._util import NEED_DATA
from mcp_proto.errors import ResponseTooLargeError
from mcp_proto.sse import MAX_EVENT_ID_LENGTH, SSEEvent, SSEParser, is_retainable_event_id

BOM = b"\xef\xbb\xbf"
MiB = 1024 * 1024


# ---------------------------------------------------------------- drivers


def drain(parser: SSEParser) -> list[SSEEvent]:
    out = []
    while True:
        event = parser.next_event()
        if event is NEED_DATA:
            return out
        assert isinstance(event, SSEEvent)
        out.append(event)


def feed(
    chunks: Iterable[bytes], *, max_event_size: int = 32 * MiB
) -> tuple[list[SSEEvent], SSEParser]:
    """Feed chunks then EOF, draining after every call, as a shell does."""
    parser = SSEParser(max_event_size=max_event_size)
    events: list[SSEEvent] = []
    for chunk in chunks:
        parser.receive_data(chunk)
        events += drain(parser)
    parser.receive_data(b"")
    events += drain(parser)
    return events, parser


def bytewise(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


def split_at(data: bytes, cuts: Iterable[int]) -> list[bytes]:
    """``data`` cut at the given offsets; no empty chunks (``b""`` means EOF)."""
    bounds = [0, *sorted(cuts), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds) if b > a]


TRAILING_GARBAGE = (
    b"data: an event the stream never finishes",
    b"\x00\xff\xfe:junk id: 9 retry: 1",
    b"id: 99\ndata: cut off\nretry: 5",
)


def three_ways(stream: bytes, expected: list[SSEEvent], last_id: str | None = None) -> None:
    """Whole, byte by byte, and with trailing garbage (an unfinished event) appended:
    the same events and the same last event id every time (h11's ``tr()``)."""
    for chunks in ([stream], bytewise(stream)):
        events, parser = feed(chunks)
        assert events == expected
        assert parser.last_event_id == last_id
    for garbage in TRAILING_GARBAGE:
        for chunks in ([stream + garbage], bytewise(stream + garbage)):
            events, parser = feed(chunks)
            assert events == expected
            assert parser.last_event_id == last_id


def msg(
    data: str, id: str | None = None, *, event: str = "message", retry: int | None = None
) -> SSEEvent:
    return SSEEvent(event, data, id, retry)


# ---------------------------------------------------------------- the standard, case by case


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"], ids=["LF", "CRLF", "CR"])
def test_every_line_ending(eol: bytes) -> None:
    stream = (
        b"event: ping" + eol + b"data: 1" + eol + eol
        + b": a comment" + eol
        + b"id: 7" + eol + b"data: a" + eol + b"data: b" + eol + eol
    )  # fmt: skip
    three_ways(stream, [msg("1", event="ping"), msg("a\nb", "7")], "7")


def test_mixed_line_endings_in_one_stream() -> None:
    stream = b"data: a\rdata: b\ndata: c\r\n\rdata: d\r\n\n"
    three_ways(stream, [msg("a\nb\nc"), msg("d")])


def test_crlf_split_across_chunks_is_one_line_ending() -> None:
    # If the LF of a CRLF were read as a second (blank) line, "a" would be dispatched
    # alone and "b" would become an event of its own.
    stream = b"data: a\r\ndata: b\r\n\r\n"
    for cut in range(1, len(stream)):
        events, _ = feed(split_at(stream, [cut]))
        assert events == [msg("a\nb")], cut
    events, _ = feed([b"data: a\r", b"\n", b"data: b\r", b"\n\r", b"\n"])
    assert events == [msg("a\nb")]


def test_an_event_ending_in_cr_is_dispatched_at_once() -> None:
    # CR is a complete line ending: no need to wait for the next chunk to see whether an
    # LF follows (a server using bare CR would otherwise see every event delayed).
    parser = SSEParser()
    parser.receive_data(b"data: x\r\r")
    assert drain(parser) == [msg("x")]
    parser.receive_data(b"\ndata: y\r\r")  # the LF completes the CRLF: not a blank line
    assert drain(parser) == [msg("y")]


def test_a_leading_bom_is_stripped_once() -> None:
    three_ways(BOM + b"data: x\n\n", [msg("x")])
    # Only one: a second BOM becomes part of the first field name, an unknown field.
    three_ways(BOM + BOM + b"data: x\n\ndata: y\n\n", [msg("y")])
    # Only at the start of the stream.
    three_ways(b"data: x\n\n" + BOM + b"data: y\n\n", [msg("x")])


def test_a_bom_split_across_chunks() -> None:
    for chunks in ([b"\xef", b"\xbb", b"\xbfdata: x\n\n"], [b"\xef\xbb", b"\xbfdata: x\n\n"]):
        assert feed(chunks)[0] == [msg("x")]
    # A BOM prefix that turns out not to be one is data (here, a garbled field name).
    assert feed([b"\xef", b"data: x\n\ndata: y\n\n"])[0] == [msg("y")]
    # The stream ends inside a BOM prefix: nothing, and no error.
    assert feed([b"\xef\xbb"])[0] == []


def test_comments_are_ignored() -> None:
    three_ways(b": hello\n:\ndata: x\n: between\n\n:only a comment\n\n", [msg("x")])


def test_data_lines() -> None:
    three_ways(b"data: a\ndata: b\n\n", [msg("a\nb")])
    three_ways(b"data\n\n", [msg("")])  # no colon: the whole line is the field name
    three_ways(b"data:\n\n", [msg("")])  # an empty data field is still an event
    three_ways(b"data:\ndata:\n\n", [msg("\n")])
    three_ways(b"data:x\n\n", [msg("x")])  # the space after the colon is optional
    three_ways(b"data:  x \n\n", [msg(" x ")])  # only one space is removed
    three_ways(b"data: a:b: c\n\n", [msg("a:b: c")])  # only the first colon splits
    three_ways(b"data: \xe2\x82\xac\n\n", [msg("\u20ac")])


def test_no_data_means_no_event_and_resets_the_event_type() -> None:
    three_ways(b"event: foo\n\ndata: x\n\n", [msg("x")])
    three_ways(b"event: foo\nid: 3\n\n", [], "3")


def test_event_type() -> None:
    three_ways(
        b"event: endpoint\ndata: /messages\n\ndata: y\n\n",
        [msg("/messages", event="endpoint"), msg("y")],
    )
    three_ways(b"event\ndata: y\n\n", [msg("y")])  # an empty type is "message"
    three_ways(b"event: a\nevent: b\ndata: y\n\n", [msg("y", event="b")])


def test_field_names_are_case_sensitive_and_unknown_fields_ignored() -> None:
    three_ways(b"Data: x\nDATA: y\nfoo: bar\nid : 1\ndata: z\n\n", [msg("z")])


def test_id_persists_and_is_per_stream() -> None:
    three_ways(
        b"id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\n",
        [msg("a", "1"), msg("b", "1"), msg("c", "2")],
        "2",
    )


def test_id_with_nul_is_ignored() -> None:
    three_ways(b"id: 1\ndata: a\n\nid: x\x00y\ndata: b\n\n", [msg("a", "1"), msg("b", "1")], "1")


def test_empty_id_resets_the_last_event_id() -> None:
    three_ways(b"id: 1\ndata: a\n\nid\ndata: b\n\n", [msg("a", "1"), msg("b", "")], "")


def test_id_only_event_updates_last_event_id_without_an_event() -> None:
    # WHATWG "dispatch the event" step 1 runs before the empty-data check.
    three_ways(b"id: prime-1\n\n", [], "prime-1")
    # The priming event the 2025-11-25 transport recommends: an id and an empty data field.
    three_ways(b"id: prime-1\ndata:\n\n", [msg("", "prime-1")], "prime-1")


def test_the_id_of_an_event_cut_off_by_eof_is_not_reported() -> None:
    # Resuming with Last-Event-ID 2 would tell the server event 2 arrived: it did not.
    events, parser = feed([b"id: 1\ndata: a\n\nid: 2\ndata: par", b"tial"])
    assert events == [msg("a", "1")]
    assert parser.last_event_id == "1"


def test_retry() -> None:
    three_ways(b"retry: 1500\ndata: x\n\ndata: y\n\n", [msg("x", retry=1500), msg("y")])
    # A bare retry is reported on an empty event of its own.
    three_ways(b"retry: 0\n\n", [SSEEvent("", "", None, 0)])
    three_ways(b"id: 4\nretry: 10\n\n", [SSEEvent("", "", "4", 10)], "4")
    three_ways(b"retry: 007\n\n", [SSEEvent("", "", None, 7)])


@pytest.mark.parametrize(
    "value",
    [
        b"",
        b" 1",
        b"1 ",
        b"-1",
        b"+1",
        b"1.5",
        b"1e3",
        b"0x10",
        b"\xd9\xa1\xd9\xa2",
        b"\xef\xbc\x91",
    ],
    ids=repr,
)
def test_retry_that_is_not_ascii_digits_is_ignored(value: bytes) -> None:
    # b"retry:  1" keeps one leading space: not digits only. Arabic-Indic and fullwidth
    # digits are digits to str.isdigit but not ASCII digits.
    three_ways(b"retry: " + value + b"\ndata: x\n\n", [msg("x")])


def test_a_huge_retry_value_is_clamped_not_a_crash() -> None:
    # int() of a >4300-digit string raises ValueError on current Pythons.
    events, _ = feed([b"retry: " + b"9" * 100_000 + b"\n\n"])
    assert len(events) == 1
    assert events[0].retry is not None and events[0].retry >= 10**9
    # Leading zeros do not count towards the clamp.
    assert feed([b"retry: " + b"0" * 100_000 + b"250\n\n"])[0] == [SSEEvent("", "", None, 250)]


def test_retry_takes_effect_without_a_dispatch() -> None:
    # WHATWG sets the reconnection time as the field is parsed, even if the event is
    # never finished; the shell reads it from SSEParser.retry.
    parser = SSEParser()
    assert parser.retry is None
    parser.receive_data(b"retry: 3000\ndata: part")
    parser.receive_data(b"")
    assert drain(parser) == []
    assert parser.retry == 3000


def test_unterminated_event_is_discarded_at_eof() -> None:
    assert feed([b"data: x"])[0] == []
    assert feed([b"data: x\n"])[0] == []  # a line but no blank line
    assert feed([b"data: x\n\r"])[0] == [msg("x")]  # a CR at EOF does end the line
    assert feed([b"data: x\r"])[0] == []


def test_invalid_utf8_is_replaced_not_raised() -> None:
    three_ways(b"data: \xff\xfe\n\n", [msg("\ufffd\ufffd")])
    # A truncated sequence at a line end is replaced before the LF that ends the line.
    three_ways(b"data: \xe2\x82\ndata: y\n\n", [msg("\ufffd\ny")])
    three_ways(b"event: \xc0\ndata: y\n\n", [msg("y", event="\ufffd")])


def test_need_data_sentinel() -> None:
    parser = SSEParser()
    assert parser.next_event() is NEED_DATA
    parser.receive_data(b"data: x\n")
    assert type(parser.next_event()) is NEED_DATA
    parser.receive_data(b"\n")
    assert parser.next_event() == msg("x")
    assert parser.next_event() is NEED_DATA


def test_many_events_in_one_chunk_come_out_in_order() -> None:
    stream = b"".join(b"id: %d\ndata: %d\n\n" % (i, i) for i in range(5000))
    events, parser = feed([stream])
    assert [e.data for e in events] == [str(i) for i in range(5000)]
    assert parser.last_event_id == "4999"


@pytest.mark.parametrize(
    "stream", [b"data: a\r\ndata: b\r\n\r\n", BOM + b"data: a\r\r", b"id: 1\ndata: x\n\n"]
)
def test_empty_chunks_anywhere_are_harmless(stream: bytes) -> None:
    # The shells feed a gzip decoder's output straight in, and a decoder that has seen
    # only a gzip header returns b"": that must not end or corrupt the stream.
    whole, parser = feed([stream])
    for i in range(len(stream) + 1):
        events, other = feed([b"", stream[:i], b"", b"", stream[i:], b""])
        assert events == whole, i
        assert other.last_event_id == parser.last_event_id


def test_every_single_split_point() -> None:
    stream = BOM + b"retry: 5\r\nid: 1\r\nevent: e\rdata: a\r\n: c\n\rdata: b\n\n"
    whole, _ = feed([stream])
    assert whole == [SSEEvent("e", "a", "1", 5), msg("b", "1")]
    for i in range(len(stream) + 1):
        for j in range(i, len(stream) + 1):
            assert feed(split_at(stream, [i, j]))[0] == whole, (i, j)


# ---------------------------------------------------------------- is_retainable_event_id (UT-4)


@pytest.mark.parametrize(
    ("event_id", "ok"),
    [
        ("1", True),
        ("stream-7/42", True),
        ("a b", True),  # printable ASCII includes space
        ("~" * MAX_EVENT_ID_LENGTH, True),
        ("x" * (MAX_EVENT_ID_LENGTH + 1), False),
        ("x" * 2048, False),
        ("", False),
        ("a\r\nX-Evil: 1", False),
        ("a\nb", False),
        ("a\tb", False),
        ("a\x00b", False),
        ("a\x7fb", False),
        ("caf\u00e9", False),
        ("\ufffd", False),
    ],
)
def test_is_retainable_event_id(event_id: str, ok: bool) -> None:
    assert MAX_EVENT_ID_LENGTH == 1024
    assert is_retainable_event_id(event_id) is ok


# ---------------------------------------------------------------- limits, as attacks (UT-2, SSE-4)


def test_40_mib_unterminated_event_with_a_32_mib_cap() -> None:
    cap, chunk = 32 * MiB, b"x" * (64 * 1024)
    parser = SSEParser(max_event_size=cap)
    fed = 0
    tracemalloc.start()
    try:
        with pytest.raises(ResponseTooLargeError):
            parser.receive_data(b"data: ")
            fed = 6
            while fed < 40 * MiB:
                parser.receive_data(chunk)
                fed += len(chunk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert cap - len(chunk) < fed <= cap  # it stopped as soon as the event passed the cap
    # Never much more than the cap: the buffer (with bytearray's growth slack) and a chunk.
    assert peak < cap * 1.2 + 2 * len(chunk), peak


def test_an_event_of_many_data_lines_is_bounded_too() -> None:
    # 8-byte "data:x\n" lines: held as one buffer, not one object per line.
    cap = 512 * 1024
    parser = SSEParser(max_event_size=cap)
    lines = b"data:x\n" * 8192
    tracemalloc.start()
    try:
        with pytest.raises(ResponseTooLargeError):
            for _ in range(2 * cap // len(lines)):
                parser.receive_data(lines)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < cap * 1.5, peak


def test_cap_counts_the_whole_event_not_each_line() -> None:
    line = b"data: " + b"x" * 94 + b"\n"  # 100 bytes, counted without the line ending
    assert feed([line * 10 + b"\n"], max_event_size=1000)[0] == [msg("\n".join(["x" * 94] * 10))]
    with pytest.raises(ResponseTooLargeError):
        feed([line * 10 + b"d"], max_event_size=1000)  # one byte more, even unterminated
    with pytest.raises(ResponseTooLargeError):
        feed([line * 11 + b"\n"], max_event_size=1000)


def test_cap_resets_per_event() -> None:
    event = b"data: " + b"x" * 90 + b"\n\n"
    events, _ = feed([event * 1000], max_event_size=200)
    assert len(events) == 1000


def test_an_endless_comment_line_is_bounded() -> None:
    with pytest.raises(ResponseTooLargeError):
        feed([b":"] + [b"p" * 1000] * 20, max_event_size=10_000)


def test_a_full_event_then_its_blank_line_in_another_chunk() -> None:
    # Found by hypothesis: the event exactly at the cap must not trip the bound when
    # its terminating blank line arrives on its own.
    stream = b"data:\ndata\ndata\n\n"
    for chunks in ([stream], bytewise(stream)):
        assert feed(chunks, max_event_size=13)[0] == [msg("\n\n")]
    with pytest.raises(ResponseTooLargeError):
        feed([stream], max_event_size=12)


def test_events_before_the_overflow_are_still_delivered() -> None:
    parser = SSEParser(max_event_size=100)
    with pytest.raises(ResponseTooLargeError):
        parser.receive_data(b"data: ok\n\ndata: " + b"x" * 200)
    assert drain(parser) == [msg("ok")]


class _CountingLineEnd:
    """Stands in for the parser's compiled line-end pattern and counts the bytes each
    search examines (up to its match, or to the end of the buffer)."""

    def __init__(self, pattern: re.Pattern[bytes]) -> None:
        self.pattern = pattern
        self.examined = 0

    def search(self, buf: Any, pos: int) -> re.Match[bytes] | None:
        match = self.pattern.search(buf, pos)
        self.examined += (match.end() if match else len(buf)) - pos
        return match


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> _CountingLineEnd:
    counter = _CountingLineEnd(sse_module._LINE_END)
    monkeypatch.setattr(sse_module, "_LINE_END", counter)
    return counter


def test_a_long_line_in_tiny_chunks_is_scanned_once(counting: _CountingLineEnd) -> None:
    # A quadratic rescan would examine ~n²/2 = 5e9 bytes here.
    n = 100_000
    parser = SSEParser()
    parser.receive_data(b"data: ")
    for _ in range(n):
        parser.receive_data(b"x")
    parser.receive_data(b"\n\n")
    assert drain(parser) == [msg("x" * n)]
    assert counting.examined <= 2 * (n + 8)


def test_a_cr_at_every_chunk_end_is_not_rescanned(counting: _CountingLineEnd) -> None:
    n = 20_000
    parser = SSEParser()
    for _ in range(n):
        parser.receive_data(b"data: y\r")
        parser.receive_data(b"\n")
    parser.receive_data(b"\n")
    assert drain(parser) == [msg("\n".join(["y"] * n))]
    assert counting.examined <= 2 * n * 9


def test_slow_drip_up_to_the_cap_is_linear(counting: _CountingLineEnd) -> None:
    cap = 200_000
    parser = SSEParser(max_event_size=cap)
    parser.receive_data(b"data: ")
    with pytest.raises(ResponseTooLargeError):
        for _ in range(cap):
            parser.receive_data(b"zz")
    assert counting.examined <= 2 * cap


@settings(max_examples=50, deadline=None)
@given(
    lines=st.lists(st.integers(min_value=0, max_value=300), min_size=1, max_size=40),
    chunk=st.integers(min_value=1, max_value=7),
)
def test_search_work_is_linear_for_any_chunking(lines: list[int], chunk: int) -> None:
    counter = _CountingLineEnd(sse_module._LINE_END)
    original, sse_module._LINE_END = sse_module._LINE_END, counter  # type: ignore[assignment]
    try:
        stream = b"".join(b"data: " + b"q" * n + b"\r\n" for n in lines) + b"\r\n"
        events, _ = feed(split_at(stream, range(chunk, len(stream), chunk)))
    finally:
        sse_module._LINE_END = original
    assert events == [msg("\n".join("q" * n for n in lines))]
    assert counter.examined <= 2 * len(stream)


# ---------------------------------------------------------------- hypothesis: any chunking


def reference(
    data: bytes, max_event_size: int
) -> tuple[list[SSEEvent], str | None, int | None, bool]:
    """WHATWG § 9.2.6 over the whole stream at once: split into lines (CRLF, LF or CR),
    drop the unterminated tail, apply the field rules. Returns (events, last event id,
    reconnection time, whether the size bound tripped) with the parser's size rule: a
    line (or the unterminated tail) may not take the event's field lines past the cap."""
    if data.startswith(BOM):
        data = data[len(BOM) :]
    *lines, tail = re.split(rb"\r\n|\r|\n", data)
    events: list[SSEEvent] = []
    data_buf, event_type, id_buf, last_id = "", "", None, None
    retry: int | None = None
    reconnection: int | None = None
    size = 0
    for raw in lines:
        if raw == b"":
            last_id = id_buf
            if data_buf == "":
                if retry is not None:
                    events.append(SSEEvent("", "", last_id, retry))
            else:
                events.append(SSEEvent(event_type or "message", data_buf[:-1], last_id, retry))
            data_buf, event_type, retry, size = "", "", None, 0
            continue
        if size + len(raw) > max_event_size:
            return events, last_id, reconnection, True
        line = raw.decode("utf-8", "replace")
        if line.startswith(":"):
            continue
        size += len(raw)
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            data_buf += value + "\n"
        elif name == "event":
            event_type = value
        elif name == "id":
            if "\x00" not in value:
                id_buf = value
        elif name == "retry" and value and all(c in "0123456789" for c in value):
            digits = value.lstrip("0") or "0"
            retry = reconnection = int(digits) if len(digits) <= 15 else 10**15
    too_large = size + len(tail) > max_event_size
    return events, last_id, reconnection, too_large


def run(
    chunks: Iterable[bytes], max_event_size: int
) -> tuple[list[SSEEvent], str | None, int | None, bool]:
    parser = SSEParser(max_event_size=max_event_size)
    events: list[SSEEvent] = []
    try:
        for chunk in [*chunks, b""]:
            parser.receive_data(chunk)
            events += drain(parser)
    except ResponseTooLargeError:
        events += drain(parser)
        return events, parser.last_event_id, parser.retry, True
    return events, parser.last_event_id, parser.retry, False


_EOL = st.sampled_from([b"\n", b"\r\n", b"\r"])
_TEXT = st.text(
    st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=12
).map(lambda s: s.encode("utf-8"))


@st.composite
def sse_lines(draw: st.DrawFn) -> bytes:
    kind = draw(
        st.sampled_from(
            ["data", "data", "data", "event", "id", "retry", "comment", "other", "blank", "blank"]
        )
    )
    if kind == "blank":
        return b""
    if kind == "comment":
        return b":" + draw(_TEXT)
    if kind == "retry":
        value = draw(st.one_of(st.integers(0, 10**6).map(lambda n: str(n).encode()), _TEXT))
    else:
        value = draw(_TEXT)
    sep = draw(st.sampled_from([b": ", b":", b""]))
    return kind.encode() + sep + value if sep else kind.encode()


@st.composite
def sse_streams(draw: st.DrawFn) -> bytes:
    """Plausible streams: field lines, comments and blank lines, with any line ending
    per line (a CR then an LF-ended blank line reads as one CRLF, as it should)."""
    lines = draw(st.lists(sse_lines(), max_size=30))
    body = b"".join(line + draw(_EOL) for line in lines)
    prefix = draw(st.sampled_from([b"", BOM]))
    tail = draw(st.sampled_from([b"", b"data: unterminated", b"\r", b"id: 5"]))
    return prefix + body + tail


_INPUT = st.one_of(sse_streams(), st.binary(max_size=200))


@settings(max_examples=400, deadline=None)
@given(data=_INPUT, cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12))
def test_any_chunking_matches_the_whole_stream_reference(data: bytes, cuts: list[int]) -> None:
    expected = reference(data, 32 * MiB)
    assert run([data], 32 * MiB) == expected
    assert run(bytewise(data), 32 * MiB) == expected
    assert run(split_at(data, [c for c in cuts if c <= len(data)]), 32 * MiB) == expected


@settings(max_examples=300, deadline=None)
@given(
    data=_INPUT,
    cap=st.integers(min_value=3, max_value=64),
    step=st.integers(min_value=1, max_value=9),
)
def test_the_size_bound_does_not_depend_on_chunking(data: bytes, cap: int, step: int) -> None:
    # Fuzz invariant too: any input parses or raises ResponseTooLargeError, nothing else.
    expected = reference(data, cap)
    assert run([data], cap) == expected
    assert run(split_at(data, range(step, len(data), step)), cap) == expected


@settings(max_examples=200, deadline=None)
@given(stream=sse_streams(), garbage=st.binary(max_size=40))
def test_trailing_garbage_never_changes_the_events_before_it(stream: bytes, garbage: bytes) -> None:
    # The events of a stream that ends on a blank line are a prefix of the events of
    # that stream plus anything.
    complete = stream + b"\n\n"
    before, *_ = run([complete], 32 * MiB)
    after, *_ = run(bytewise(complete + garbage), 32 * MiB)
    assert after[: len(before)] == before
    # Garbage with no line ending at all adds nothing.
    no_eol = garbage.replace(b"\r", b"").replace(b"\n", b"")
    assert run([complete + no_eol], 32 * MiB)[0] == before
