"""What the session keeps about output from the server that is not JSON-RPC (issue 8,
item 8).

A server that writes a banner, a stack trace or invalid UTF-8 to stdout would otherwise
leave the user with nothing but "initialize timed out": the lines are discarded (STDIO-2)
and only logged at DEBUG. So the session keeps the start of the *first* unusable line,
made safe to show (control characters escaped, capped), and the errors a timeout or a
failed handshake raise mention it. And a response that cannot be decoded fails its
request at once when its id can be recovered exactly, rather than after the timeout.

Quoting peer output goes against HYG-1's default (never quote what a server sent: it
may hold secrets); here the user needs to see it to understand the failure, so only the
first line's first ``NOTE_CAP`` characters are kept, and only in the error message.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from ._util import sanitize_peer_text
from .errors import ConnectionError, MCPError

__all__ = ["NOTE_CAP", "note_for", "quote_line", "recover_response_id", "with_note"]

#: Characters of the first unusable line kept (before escaping grows them).
NOTE_CAP: Final = 200


def quote_line(data: bytes | str) -> str:
    """The start of ``data``, safe to show: decoded leniently (an invalid byte becomes
    ``\\xNN``), control characters escaped, capped near ``NOTE_CAP`` characters, with
    ``...`` when the line goes on."""
    head = data[: NOTE_CAP * 4]  # enough for NOTE_CAP characters of any UTF-8 width
    if isinstance(head, (bytes, bytearray)):
        text = bytes(head).decode("utf-8", "backslashreplace")
    else:
        text = head
    more = len(text) > NOTE_CAP or len(data) > len(head)
    return sanitize_peer_text(text[:NOTE_CAP], cap=NOTE_CAP) + ("..." if more else "")


def note_for(quoted: str) -> str:
    """The sentence appended to a timeout or handshake error."""
    return f"; the server wrote output that is not JSON-RPC, first: [{quoted}]"


def with_note(error: MCPError, quoted: str | None) -> MCPError:
    """``error`` (a plain ``ConnectionError``: the server went away) saying what the
    server wrote that was not JSON-RPC, when it wrote something: a server that prints
    its usage line and exits is understood from that line (issue 24 C)."""
    if quoted is None or type(error) is not ConnectionError or _NOTE_START in str(error):
        return error
    noted = ConnectionError(f"{error}{note_for(quoted)}")
    noted.__cause__ = error
    return noted


_NOTE_START: Final = note_for("").partition(",")[0]

# JSON whitespace, then the "{" a response object starts with.
_OBJECT_START = re.compile(r"[ \t\n\r]*\{").match


def recover_response_id(data: bytes | str) -> Any:
    """The id of a would-be response that failed to decode, when it can be known
    exactly: the line parses as a JSON object (invalid UTF-8 decoded with replacement
    characters, which only change string contents) that has a top-level string or
    integer ``id`` and no ``method``. ``None`` otherwise: a guess from a line that is
    not JSON could fail the wrong request."""
    text = bytes(data).decode("utf-8", "replace") if isinstance(data, (bytes, bytearray)) else data
    text = text.removeprefix("\ufeff")
    if _OBJECT_START(text) is None:
        return None  # not an object: no second parse (a flood of garbage lines)
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict) or "method" in obj:
        return None
    rid = obj.get("id")
    if isinstance(rid, bool) or not isinstance(rid, (int, str)):
        return None
    return rid
