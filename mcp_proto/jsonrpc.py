"""JSON-RPC 2.0 messages: typed values, decoding of peer bytes, encoding of ours.

Decoding never raises on peer input: anything that is not a well-formed JSON-RPC 2.0
message becomes an :class:`Invalid` value carrying a short reason (never the offending
bytes: they may hold secrets, see docs/requirements.md HYG-1).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from types import ModuleType
from typing import Any, Union

from ._record import Record

try:  # the optional "fast" extra: same messages, several times less CPU
    import orjson as _orjson_module
except ImportError:  # pragma: no cover - exercised by installs without the extra
    _orjson_module = None  # type: ignore[assignment]

_set = object.__setattr__  # (frozen: Record refuses setattr)

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "ErrorResponse",
    "Invalid",
    "Message",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "decode",
    "decode_all",
    "encode_error",
    "encode_notification",
    "encode_request",
    "encode_result",
    "json_backend",
    "set_json_backend",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

RequestId = Union[int, str]


class Request(Record):
    """A request from the peer (server-initiated: ping, sampling, elicitation, roots)."""

    __slots__ = ("id", "method", "params")
    id: RequestId
    method: str
    params: dict[str, Any] | None

    def __init__(self, id: RequestId, method: str, params: dict[str, Any] | None) -> None:
        _set(self, "id", id)
        _set(self, "method", method)
        _set(self, "params", params)


class Notification(Record):
    __slots__ = ("method", "params")
    method: str
    params: dict[str, Any] | None

    def __init__(self, method: str, params: dict[str, Any] | None) -> None:
        _set(self, "method", method)
        _set(self, "params", params)


class Response(Record):
    __slots__ = ("id", "result")
    id: RequestId
    result: Any

    def __init__(self, id: RequestId, result: Any) -> None:
        _set(self, "id", id)
        _set(self, "result", result)


class ErrorResponse(Record):
    """An error response. ``id`` is ``None`` when the peer could not tell which request."""

    __slots__ = ("error", "id")
    id: RequestId | None
    error: Any

    def __init__(self, id: RequestId | None, error: Any) -> None:
        _set(self, "id", id)
        _set(self, "error", error)


class Invalid(Record):
    """Input that is not a JSON-RPC 2.0 message. ``reason`` never quotes the input."""

    __slots__ = ("reason",)
    reason: str

    def __init__(self, reason: str) -> None:
        _set(self, "reason", reason)


Message = Union[Request, Notification, Response, ErrorResponse, Invalid]


def _valid_id(value: Any) -> bool:
    # JSON-RPC ids are strings or numbers; MCP forbids null and we never send floats, so
    # a float can't match a request of ours anyway. bool is an int subclass: exclude it.
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def _from_object(obj: Any) -> Message:
    if not isinstance(obj, dict):
        return Invalid(f"not a JSON object ({type(obj).__name__})")
    if obj.get("jsonrpc") != "2.0":
        return Invalid("missing or wrong 'jsonrpc' member")
    method = obj.get("method")
    if method is not None:
        if not isinstance(method, str):
            return Invalid("'method' is not a string")
        params = obj.get("params")
        if params is not None and not isinstance(params, dict):
            # MCP params are always objects; a positional array is not MCP.
            return Invalid("'params' is not an object")
        if "id" in obj:
            if not _valid_id(obj["id"]):
                return Invalid("request 'id' is not a string or integer")
            return Request(obj["id"], method, params)
        return Notification(method, params)
    if "result" in obj:
        rid: Any = obj.get("id")
        if type(rid) is not int and not _valid_id(rid):  # (an int: no call)
            return Invalid("response 'id' is not a string or integer")
        return Response(rid, obj["result"])
    if "error" in obj:
        rid = obj.get("id")
        if rid is not None and not _valid_id(rid):
            return Invalid("error response 'id' is not a string or integer")
        return ErrorResponse(rid, obj["error"])
    return Invalid("neither a request, a notification nor a response")


# The JSON library behind the encoders. orjson (the "fast" extra) is used when it is
# installed: it writes a message several times faster than json.dumps and without its
# intermediate copies (for a 1 MiB argument, ~1 ms of client CPU instead of ~3.5). The
# standard encoder stays the reference: whatever orjson refuses (integers beyond 64
# bits, lone surrogates, non-string keys, the subclasses and types below) is written by
# it. Decoding always uses the standard json module: orjson would turn integers beyond
# 64 bits into floats, and a peer's message must decode to exactly the values it sent.
_fast: ModuleType | None = _orjson_module
# Hand the encoder's special cases (str/int/dict/list subclasses, dates, dataclasses)
# to the standard encoder, which treats them as it always did.
_FAST_OPTIONS = (
    (
        _orjson_module.OPT_PASSTHROUGH_SUBCLASS
        | _orjson_module.OPT_PASSTHROUGH_DATETIME
        | _orjson_module.OPT_PASSTHROUGH_DATACLASS
    )
    if _orjson_module is not None
    else 0
)


def json_backend() -> str:
    """``"orjson"`` when messages are encoded with orjson, else ``"json"``."""
    return "orjson" if _fast is not None else "json"


def set_json_backend(name: str) -> None:
    """Choose the JSON encoder: ``"json"`` (the standard library) or ``"orjson"``
    (needs the ``fast`` extra). The default is orjson when it is installed. The values
    sent are the same either way, except non-finite floats: orjson writes ``null``
    where json.dumps writes ``NaN``/``Infinity``, which are not JSON."""
    global _fast
    if name == "json":
        _fast = None
    elif name == "orjson":
        if _orjson_module is None:
            raise ValueError("orjson is not installed (pip install 'mcp-proto[fast]')")
        _fast = _orjson_module
    else:
        raise ValueError(f"unknown JSON backend {name!r} (use 'json' or 'orjson')")


# ``json.loads`` without its two Python layers (``loads`` -> ``JSONDecoder.decode`` ->
# ``raw_decode``): the same C scanner with the same default decoder, the same errors.
_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # (set in __init__)
_SPACE = re.compile(r"[ \t\n\r]*").match
# The characters a JSON value can start with, as Python's decoder reads JSON (it also
# takes NaN and Infinity).
_VALUE_STARTS = frozenset('{["-0123456789tfnNI')


def _loads(text: str, start: int | None = None) -> Any:
    """``json.loads(text)``; ``start``: where the value starts (after the whitespace),
    when the caller knows it already."""
    if start is None:
        start = _SPACE(text, 0).end()  # type: ignore[union-attr]
    try:
        obj, end = _SCAN(text, start)
    except StopIteration as err:
        raise json.JSONDecodeError("Expecting value", text, err.value) from None
    if end != len(text):  # (the usual case: the value ends the text, no scan)
        end = _SPACE(text, end).end()  # type: ignore[union-attr]
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return obj


def decode(data: bytes | str) -> Iterator[Message]:
    """Decode one JSON text into the messages it holds (a batch array gives several).

    Batches were allowed by 2025-03-26 and removed later; a server may still send one,
    so each element is decoded on its own. Never raises.
    """
    return iter(decode_all(data))


def decode_all(data: bytes | str) -> list[Message]:
    """:func:`decode` as a list (no generator to resume on the hot path)."""
    if isinstance(data, (bytes, bytearray)):
        # MCP messages MUST be UTF-8 (2025-11-25, Transports). json.loads would also
        # sniff UTF-16/32 from bytes, so decode here; a leading BOM is tolerated as
        # json.loads always did.
        try:
            text = bytes(data).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            return [Invalid(f"invalid UTF-8 at byte {exc.start} in a {_size(data)} message")]
    else:
        text = data
    # A message starts with its object's brace, as a rule: no whitespace scan then.
    start = 0 if text[:1] == "{" else _SPACE(text, 0).end()  # type: ignore[union-attr]
    if start == len(text) or text[start] not in _VALUE_STARTS:
        # Cannot start a JSON value: the error json would raise, without raising it (a
        # server logging to stdout, or a flood of garbage lines, costs a check per line
        # instead of an exception each).
        return [Invalid(f"invalid JSON at character {start} in a {_size(data)} message")]
    try:
        obj = _loads(text, start)
    except (ValueError, RecursionError) as exc:
        # Report position and size only, never the token (HYG-1).
        pos = getattr(exc, "pos", None)
        where = f" at character {pos}" if pos is not None else ""
        return [Invalid(f"invalid JSON{where} in a {_size(data)} message")]
    if isinstance(obj, list):
        if not obj:
            return [Invalid("empty batch")]
        return [_from_object(item) for item in obj]
    return [_from_object(obj)]


def _size(data: bytes | str) -> str:
    unit = "byte" if isinstance(data, (bytes, bytearray)) else "character"
    return f"{len(data)}-{unit}"


# Long strings that need no escaping are spliced into the output as bytes instead of
# going through json.dumps, whose per-character escaping loop costs ~2 ms per MiB and
# whose intermediate copies cost as much again in page faults. Base64 blobs (images,
# audio, resource blobs) and large ASCII text are the common case; anything else takes
# the ordinary path. Below this length the walk is not worth it.
_SPLICE_MIN = 32768
# How deep the walk for long strings goes (json.dumps itself bounds the recursion).
_SPLICE_DEPTH = 16
# The characters JSON must escape inside a string (RFC 8259 §7).
_MUST_ESCAPE = (*(chr(c) for c in range(32)), '"', "\\")
# Stands in for a spliced string while the rest is encoded. It holds NULs, which the
# encoder escapes, so its JSON form is known; a payload that happens to contain the
# same text is caught by counting occurrences (then nothing is spliced).
_PLACEHOLDER = "\x00mcp-proto-splice\x00"
_PLACEHOLDER_JSON = json.dumps(_PLACEHOLDER)


def _plain(text: str) -> bool:
    """True when ``text`` encodes to JSON as itself in quotes (ASCII, nothing to
    escape). ``isascii`` is O(1) in CPython; each ``in`` is one memchr pass."""
    if not text.isascii():
        return False
    return all(ch not in text for ch in _MUST_ESCAPE)


def _has_long(value: Any, depth: int) -> bool:
    """Whether ``value`` (a dict or list) holds a string of ``_SPLICE_MIN`` or more
    characters within ``_SPLICE_DEPTH`` levels. The cheap gate for small messages (about
    0.5 µs for a typical ``tools/call``): most messages hold no long string at all."""
    if depth > _SPLICE_DEPTH:
        return False
    for item in value.values() if type(value) is dict else value:
        kind = type(item)
        if kind is str:
            if len(item) >= _SPLICE_MIN:
                return True
        elif (kind is dict or kind is list) and _has_long(item, depth + 1):
            return True
    return False


def _swap_long(value: Any, found: list[str], depth: int) -> Any:
    """``value`` with each long plain string replaced by the placeholder (appended to
    ``found`` in encoding order), or ``value`` itself when it holds none. Containers
    on the way to a replaced string are copied; the caller's objects are not touched."""
    kind = type(value)
    if depth > _SPLICE_DEPTH or (kind is not dict and kind is not list):
        return value
    pairs = value.items() if kind is dict else enumerate(value)
    copy: Any = None
    for key, item in pairs:
        item_kind = type(item)
        if item_kind is str:
            if len(item) < _SPLICE_MIN or not _plain(item):
                continue
            found.append(item)
            new: Any = _PLACEHOLDER
        elif item_kind is dict or item_kind is list:
            new = _swap_long(item, found, depth + 1)
            if new is item:
                continue
        else:
            continue
        if copy is None:
            copy = kind(value)
        copy[key] = new
    return value if copy is None else copy


def _dumps(msg: dict[str, Any], payload_key: str) -> bytes:
    """Encode ``msg``; long plain strings inside ``msg[payload_key]`` are spliced."""
    if _fast is not None:
        return _encode(msg)  # orjson escapes strings fast: nothing to splice
    payload = msg.get(payload_key)
    kind = type(payload)
    if (kind is not dict and kind is not list) or not _has_long(payload, 0):
        return _encode(msg)
    found: list[str] = []
    swapped = _swap_long(payload, found, 0)
    if not found:
        return _encode(msg)
    parts = _encode_text({**msg, payload_key: swapped}).split(_PLACEHOLDER_JSON)
    if len(parts) == len(found) + 1:
        try:
            pieces = [parts[0].encode("utf-8")]
            for long_text, after in zip(found, parts[1:], strict=True):
                pieces += (b'"', long_text.encode("ascii"), b'"', after.encode("utf-8"))
            return b"".join(pieces)
        except UnicodeEncodeError:
            pass  # a lone surrogate elsewhere: the ordinary path escapes it
    return _encode(msg)


def _encode_text(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _encode(obj: Any) -> bytes:
    fast = _fast
    if fast is not None:
        try:
            return fast.dumps(obj, option=_FAST_OPTIONS)  # type: ignore[no-any-return]
        except TypeError:  # orjson.JSONEncodeError: the standard encoder decides
            pass
    # Compact separators; ensure_ascii=False keeps non-ASCII text at its UTF-8 size.
    try:
        return _encode_text(obj).encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (e.g. a server's request id "\ud800", which json.loads
        # accepts) has no UTF-8 form; \u escapes carry it losslessly.
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def encode_request(request_id: RequestId, method: str, params: dict[str, Any] | None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        msg["params"] = params
    return _dumps(msg, "params")


def encode_notification(method: str, params: dict[str, Any] | None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return _dumps(msg, "params")


def encode_result(request_id: RequestId, result: Any) -> bytes:
    return _dumps({"jsonrpc": "2.0", "id": request_id, "result": result}, "result")


def encode_error(request_id: RequestId, code: int, message: str, data: Any = None) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return _encode({"jsonrpc": "2.0", "id": request_id, "error": error})
