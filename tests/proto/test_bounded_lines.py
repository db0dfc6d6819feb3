"""Both shells' stderr readers cut the child's output with ``mcp_io_common.lines``
(STDIO-5): whole lines out of arbitrary chunks, each at most ``cap`` bytes, bounded
memory, and an unterminated last line at the end of the stream."""

from __future__ import annotations

from mcp_io_common.lines import BoundedLines


def test_lines_come_whole_whatever_the_chunks() -> None:
    lines = BoundedLines(100)
    assert lines.feed(b"one\ntw") == [b"one"]
    assert lines.feed(b"o") == []
    assert lines.feed(b"\n\nthree\n") == [b"two", b"", b"three"]
    assert lines.end() == []


def test_a_long_line_is_cut_and_the_rest_skipped_to_its_end() -> None:
    lines = BoundedLines(4)
    assert lines.feed(b"abcdefgh") == [b"abcd"]  # over the cap without a newline yet
    assert lines.feed(b"ijkl" * 10_000) == []  # still the same line: skipped
    assert len(lines._buf) <= 4  # what is held stays under the cap
    assert lines.feed(b"mn\nok\nlonger-line\n") == [b"ok", b"long"]
    assert lines.end() == []


def test_the_unterminated_last_line_counts_at_the_end() -> None:
    lines = BoundedLines(4)
    assert lines.feed(b"x\nlast words") == [b"x", b"last"]
    assert lines.end() == []  # already cut: its rest was being skipped
    lines = BoundedLines(100)
    assert lines.feed(bytearray(b"x\nbye")) == [b"x"]
    assert lines.end() == [b"bye"]
    assert lines.end() == []
