"""Text rendering for the ``mcp-proto`` command line: tables, results, the progress bar.

Everything a server sends is untrusted text. Whatever goes to a terminal passes through
:func:`clean` first, so a server cannot move the cursor, retitle the window or hide
output with escape sequences; output to a pipe or file is left as the server sent it
(except in tables, whose cells are always single-line).
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import threading
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

from mcp_proto.results import PromptResult, ToolResult
from mcp_proto.types import (
    AudioContent,
    ContentItem,
    EmbeddedResource,
    ImageContent,
    ResourceContent,
    ResourceLink,
    TextContent,
)

__all__ = [
    "ProgressReporter",
    "StatusAwareHandler",
    "clean",
    "first_line",
    "format_size",
    "one_line",
    "render_call_result",
    "render_prompt_result",
    "table",
]

# C0 and C1 control characters, DEL, and the bidi overrides/isolates that can make text
# display differently from what it is (CVE-2021-42574 style). Tab and newline are
# handled by the callers.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def clean(text: str, *, multiline: bool = True) -> str:
    """``text`` made safe for a terminal: control characters become visible escapes.

    Newlines and tabs survive when ``multiline``; otherwise every run of whitespace
    (newlines included) becomes a single space.
    """
    if not multiline:
        text = " ".join(text.split())
    return _CONTROL.sub(_escape, text)


def one_line(text: str, limit: int = 500) -> str:
    """A single clean line of at most ``limit`` characters (for error messages)."""
    text = clean(text, multiline=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def first_line(text: str | None) -> str:
    """The first non-empty line of ``text``, stripped (``""`` for nothing)."""
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()
    return ""


def format_size(size: int) -> str:
    """``512 B``, ``1.5 KB``, ``2.0 MB`` (powers of 1024)."""
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def _base64_size(data: object) -> str:
    if not isinstance(data, str):
        return "?"
    stripped = data.rstrip("=")
    return format_size(len(stripped) * 3 // 4)


def _width(text: str) -> int:
    """Display width: East Asian wide/full-width characters take two cells."""
    return sum(
        0
        if unicodedata.combining(ch)
        else 2
        if unicodedata.east_asian_width(ch) in ("W", "F")
        else 1
        for ch in text
    )


def _truncate(text: str, width: int, ellipsis: str) -> str:
    if _width(text) <= width:
        return text
    out, used = [], 0
    limit = max(0, width - _width(ellipsis))
    for ch in text:
        w = _width(ch)
        if used + w > limit:
            break
        out.append(ch)
        used += w
    return "".join(out) + ellipsis


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - _width(text))


def _supports(stream: TextIO, text: str) -> bool:
    encoding = getattr(stream, "encoding", None) or "ascii"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    width: int | None = None,
    bold: bool = False,
    ellipsis: str = "...",
    expendable: Sequence[str] = (),
) -> str:
    """An aligned text table, two spaces between columns, no trailing spaces.

    Cells are cleaned to one line. With ``width`` (the terminal's), columns are cut
    with ``ellipsis`` so that no line wraps: the last one first (down to
    ``_COMFORTABLE`` cells), then the ``expendable`` columns are left out (``HINTS``:
    the description says more; issue 24 G), then the last one again (down to 12
    cells), then the widest of the middle ones (down to 8 cells or their header). The
    first column (the name to type) is never cut.
    """
    cells = [[clean(str(cell), multiline=False) for cell in row] for row in rows]
    heads = list(headers)
    widths = [_width(h) for h in heads]
    for row in cells:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], _width(cell))
    if width is not None and cells and expendable:
        last = len(widths) - 1
        comfortable = max(_COMFORTABLE, _width(heads[last]))
        over = sum(widths) + 2 * last - (width - 1)
        if over > 0 and widths[last] - over < comfortable:
            keep = [i for i, h in enumerate(heads) if h not in expendable or i in (0, last)]
            if len(keep) < len(heads):
                heads = [heads[i] for i in keep]
                widths = [widths[i] for i in keep]
                cells = [[row[i] for i in keep] for row in cells]
    if width is not None and cells:
        limits = _fit(widths, heads, width - 1)
        if limits != widths:
            widths = limits
            cells = [
                [_truncate(cell, w, ellipsis) for cell, w in zip(row, widths, strict=True)]
                for row in cells
            ]
    lines = []
    head = "  ".join(_pad(h, w) for h, w in zip(heads, widths, strict=True)).rstrip()
    lines.append(f"\x1b[1m{head}\x1b[0m" if bold else head)
    for row in cells:
        lines.append("  ".join(_pad(c, w) for c, w in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines)


#: What the last column (a description) keeps before expendable columns are left out.
_COMFORTABLE = 40


def _fit(widths: Sequence[int], heads: Sequence[str], room: int) -> list[int]:
    """Column widths whose total (two spaces between columns) fits ``room`` when it can.
    Only cutting the last column is not enough when a middle one is wide (a long
    argument list): that table wrapped on a 110-column terminal (issue 8 item 9)."""
    out = list(widths)
    over = sum(out) + 2 * (len(out) - 1) - room
    if over <= 0:
        return out
    last = len(out) - 1
    floor = max(12, _width(heads[last]))
    if last > 0 and out[last] > floor:
        cut = min(over, out[last] - floor)
        out[last] -= cut
        over -= cut
    while over > 0:
        middle = [i for i in range(1, last) if out[i] > max(8, _width(heads[i]))]
        if not middle:
            break
        widest = max(middle, key=lambda i: out[i])
        others = [out[i] for i in middle if i != widest]
        # Down to the next widest column (so the cut is shared), at least by one.
        target = max(max(others, default=0), max(8, _width(heads[widest])), out[widest] - over)
        cut = max(1, out[widest] - target)
        out[widest] -= cut
        over -= cut
    return out


# ------------------------------------------------------------------ tool results


def _json_text(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)


def _same_json(text: object, value: object) -> bool:
    """``text`` is ``value`` written as JSON (any spacing), or ``value`` itself when it
    is a string (FastMCP's text copy of a string result is the string, not its JSON)."""
    if not isinstance(text, str):
        return False
    if isinstance(value, str) and text == value:
        return True
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False


def _wrapped(structured: object) -> tuple[bool, object]:
    """``(True, value)`` for a structured result that wraps one value in a one-key
    object: FastMCP's ``{"result": 3}`` for a scalar return (MCP 2025-06-18, Tools:
    structured content is an object), server-filesystem's ``{"content": text}``,
    server-memory's ``{"entities": [...]}``."""
    if isinstance(structured, Mapping) and len(structured) == 1:
        return True, next(iter(structured.values()))
    return False, None


def _resource_note(resource: ResourceContent) -> tuple[str, str | None]:
    """The one-line note for an embedded resource and its text (if it has text)."""
    details = [resource.mime_type] if resource.mime_type is not None else []
    if resource.blob is not None:
        details.append(f"{_base64_size(resource.blob)} binary")
    suffix = f" ({', '.join(details)})" if details else ""
    return f"[resource: {resource.uri}{suffix}]", resource.text


def _render_item(item: ContentItem) -> str:
    """One content item as text: text as is, the rest noted."""
    if isinstance(item, TextContent):
        return item.text
    if isinstance(item, (ImageContent, AudioContent)):
        kind = "image" if isinstance(item, ImageContent) else "audio"
        return f"[{kind}: {item.mime_type}, {_base64_size(item.data)}]"
    if isinstance(item, ResourceLink):
        details = [item.mime_type] if item.mime_type is not None else []
        if item.size is not None:
            details.append(format_size(item.size))
        title = item.title or item.name
        label = f" {title}" if title else ""
        suffix = f" ({', '.join(details)})" if details else ""
        return f"[resource link: {item.uri}{label}{suffix}]"
    if isinstance(item, EmbeddedResource):
        note, text = _resource_note(item.resource)
        return note if text is None else f"{note}\n{text}"
    return f"[{item.get('type')} content]"  # a type this client does not know


def render_content(items: Sequence[ContentItem]) -> list[str]:
    """Blocks of text for typed content items (tool results, prompt messages)."""
    return [_render_item(item) for item in items]


def render_call_result(result: ToolResult | Mapping[str, Any]) -> str:
    """A tool's result as text: content, then structured content as pretty JSON.

    A text item that merely repeats ``structuredContent`` as JSON (the SDKs' backwards
    compatible copy) is shown once, pretty-printed. (A plain mapping is typed first:
    ``RemoteProtocolError`` if malformed.)
    """
    if not isinstance(result, ToolResult):
        result = ToolResult.from_wire(result)
    structured = result.structured_content
    items: Sequence[ContentItem] = result.content
    texts = [item.text for item in items if isinstance(item, TextContent)]
    wrapped, value = _wrapped(structured)
    if wrapped and texts and all(_same_json(text, value) for text in texts):
        # ``{"result": 3}`` with the text "3": the text already is the value (issue 8
        # item 9). Shown once, as the server's text (what it wrote for people).
        structured = None
    if structured is not None:
        items = [
            item
            for item in items
            if not (isinstance(item, TextContent) and _same_json(item.text, structured))
        ]
    blocks = render_content(items)
    if structured is not None:
        blocks.append(_json_text(structured))
    return "\n".join(blocks)


def render_prompt_result(result: PromptResult | Mapping[str, Any]) -> str:
    """A prompt: each message as ``[role]`` followed by its content."""
    if not isinstance(result, PromptResult):
        result = PromptResult.from_wire(result)
    out: list[str] = []
    for message in result.messages:
        out.append(f"[{message.role}]")
        out.append(_render_item(message.content))
    return "\n".join(out)


# ------------------------------------------------------------------ progress


class ProgressReporter:
    """Shows a tool call's progress on ``stream`` (stderr).

    On a terminal: one live line (bar, percent, ``progress/total``, message) redrawn in
    place and ended with a newline by :meth:`finish`. Elsewhere: one plain line per
    update. Thread-safe; updates after :meth:`finish` are ignored.
    """

    def __init__(self, stream: TextIO, *, tty: bool, label: str = "") -> None:
        self.stream = stream
        self.tty = tty
        self.label = label
        self.lock = threading.RLock()
        self.updates = 0
        self._line = ""  # what is on the live line now ("" = nothing)
        self._finished = False
        fancy = _supports(stream, "█░…")
        self._full, self._empty = ("█", "░") if fancy else ("#", "-")
        self._ellipsis = "…" if fancy else "..."

    @staticmethod
    def _number(value: float) -> str:
        return str(int(value)) if float(value).is_integer() else f"{value:g}"

    def _columns(self) -> int:
        return terminal_columns(self.stream)

    def update(self, progress: float, total: float | None, message: str | None) -> None:
        with self.lock:
            if self._finished:
                return
            self.updates += 1
            msg = clean(message, multiline=False) if message else ""
            count = self._number(progress)
            fraction: float | None = None
            of_total = ""
            if total is not None and total > 0:
                fraction = min(max(progress / total, 0.0), 1.0)
                of_total = f"/{self._number(total)}"
            if not self.tty:
                text = f"progress {count}{of_total}"
                if fraction is not None:
                    text += f" ({fraction:.0%})"
                if msg:
                    text += f": {msg}"
                prefix = f"{self.label}: " if self.label else ""
                self.stream.write(f"{prefix}{text}\n")
                self.stream.flush()
                return
            columns = self._columns()
            if fraction is not None:
                size = max(10, min(30, columns // 4))
                filled = round(fraction * size)
                bar = self._full * filled + self._empty * (size - filled)
                line = f"{bar} {fraction:4.0%}  {count}{of_total}"
            else:
                line = f"{self.label or 'progress'}: {count}"
            if msg:
                line += f"  {msg}"
            self._draw(_truncate(line, columns - 1, self._ellipsis))

    def _draw(self, line: str) -> None:
        self.stream.write("\r" + line + "\x1b[K")
        self.stream.flush()
        self._line = line

    def _erase(self) -> None:
        if self._line:
            self.stream.write("\r\x1b[K")
            self.stream.flush()

    @contextmanager
    def suspended(self) -> Iterator[None]:
        """Clear the live line while something else writes to the stream, then redraw."""
        with self.lock:
            if not self.tty or not self._line or self._finished:
                yield
                return
            self._erase()
            try:
                yield
            finally:
                self._draw(self._line)

    def finish(self) -> None:
        """End the live line (keeping its last state) with a newline. Idempotent."""
        with self.lock:
            if self._finished:
                return
            self._finished = True
            if self.tty and self._line:
                self.stream.write("\n")
                self.stream.flush()
            self._line = ""


class StatusAwareHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A stderr log handler that steps around the live progress line."""

    reporter: ProgressReporter | None = None

    def emit(self, record: logging.LogRecord) -> None:
        reporter = self.reporter
        if reporter is None:
            super().emit(record)
            return
        with reporter.suspended():
            super().emit(record)


def terminal_columns(stream: TextIO) -> int:
    """The terminal's width: ``COLUMNS`` if set, else the terminal's (80 if unknown)."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(stream.fileno()).columns
        except (OSError, ValueError, AttributeError):
            columns = 0
    return columns if columns > 0 else 80


def stream_is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def color_ok(stream: TextIO) -> bool:
    """Bold headers only on a terminal, and never with ``NO_COLOR`` or ``TERM=dumb``."""
    return (
        stream_is_tty(stream)
        and not os.environ.get("NO_COLOR")
        and os.environ.get("TERM", "") != "dumb"
        and sys.platform != "win32"
    )
