"""Which transport a ``connect`` target needs, from its spelling alone (CONN-2..11).

Nothing is opened, resolved or executed here: whether a command exists is the shell's
question (see :mod:`mcp_proto.targets`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Final, Literal

from .errors import TransportDetectionError
from .server_config import (
    ProtocolMode,
    TransportType,
    _is_stdio_url,
    _parse_http_url,
    _parse_ws_url,
)

__all__ = ["DetectedTransport", "detect_transport", "split_targets"]

DetectedTransport = Literal["stdio", "sse", "http", "streamable_http", "http_auto", "websocket"]


# CONN-5, CONN-10: launchers; a list starting with one is a single argv even if a later
# element is a URL. Matched with a Windows ``.exe``/``.cmd``/``.bat`` suffix ignored;
# ``pythonX.Y`` counts as python.
_LAUNCHER: Final = re.compile(
    r"(?:npx|node|python(?:\d+(?:\.\d+)*)?|uvx?|deno|bun|docker|ruby|php|java|cargo)"
    r"(?:\.(?:exe|cmd|bat))?",
    re.IGNORECASE,
)
_SCHEME: Final = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_HOST_PORT: Final = re.compile(r"^[\w.-]+:\d+(?:/|$)")
_FORCED: Final[Mapping[str, TransportType]] = {
    "stdio": "stdio",
    "sse": "sse",
    "http": "http",
    "streamablehttp": "streamable_http",
    "plainhttp": "http",
    "websocket": "websocket",
    "ws": "websocket",
}


def _is_http_url(text: str) -> bool:
    match = _SCHEME.match(text.strip())
    # ws(s) URLs name servers too (issue 25): a list of them is several servers.
    return match is not None and match.group(1).lower() in ("http", "https", "ws", "wss")


def split_targets(target: str | Sequence[str]) -> list[str | tuple[str, ...]]:
    """Split a ``connect`` target into per-server targets (CONN-9, CONN-10).

    A string is one target. A list is one stdio argv when it looks like command parts
    (its first element is a launcher, or no element is an http(s) URL); otherwise —
    its first element is a URL or ``stdio://`` target, or it mixes URLs with commands —
    each element is a separate server. An argv comes back as a tuple.

    Raises:
        TransportDetectionError: an empty list or a non-string element.
    """
    if isinstance(target, str):
        return [target]
    if not isinstance(target, Sequence) or not target:
        raise TransportDetectionError(f"cannot use {target!r} as a connect target")
    parts = list(target)
    for part in parts:
        if not isinstance(part, str):
            raise TransportDetectionError(f"connect targets must be strings, got {part!r}")
    first = parts[0]
    if _is_http_url(first) or _is_stdio_url(first):
        return list(parts)
    if _LAUNCHER.fullmatch(first) or first.lower() == "go":
        return [tuple(parts)]
    if not any(_is_http_url(part) for part in parts):
        return [tuple(parts)]
    return list(parts)


def detect_transport(
    target: str | Sequence[str],
    *,
    transport: str | None = None,
    protocol: ProtocolMode = "auto",
) -> DetectedTransport:
    """Which transport a ``connect`` target needs (CONN-2..7, CONN-10, CONN-11, CONN-13).

    ===================================================  =====================
    target                                               result
    ===================================================  =====================
    http(s) URL whose path ends ``/sse``                 ``"sse"``
    http(s) URL whose path ends ``/mcp``                 ``"streamable_http"``
    any other http(s) URL (``http://h:8000/`` too)       ``"http_auto"`` — try
                                                         Streamable HTTP, then
                                                         SSE, then plain HTTP
    ws(s) URL                                            ``"websocket"``
    ``stdio://command``, an argv list/tuple              ``"stdio"``
    any other string: a command line                     ``"stdio"``
    (``mcp-server-time``, ``npx -y pkg``,
    ``bash server.sh``, ``env K=V cmd``)
    ===================================================  =====================

    Whether a command's first word exists is not decided here (no filesystem in the
    core): :func:`mcp_proto.targets.command_not_found` turns the shell's lookup into
    the error. A trailing ``/`` on the URL path is ignored for detection (the URL
    itself is used as given). ``transport=`` forces one of ``stdio``, ``sse``,
    ``http`` (plain JSON-RPC over HTTP; ``plain_http`` is accepted too),
    ``streamable_http``, ``websocket`` (``ws``) (CONN-11). With ``protocol="modern"``
    an ambiguous URL is ``"streamable_http"`` (the other fallbacks are legacy-only)
    and SSE is refused (CONN-13).

    Raises:
        TransportDetectionError: a non-http URL, an invalid URL, an unknown forced
            transport, an empty or unparseable command, or ``host:port/...`` without
            its scheme.
        ValueError: ``protocol="modern"`` with the SSE transport.
    """
    if transport is not None:
        forced = (
            _FORCED.get(transport.strip().lower().replace("_", "").replace("-", ""))
            if isinstance(transport, str)
            else None
        )
        if forced is None:
            raise TransportDetectionError(
                f"unknown transport {transport!r} "
                "(expected stdio, sse, http, plain_http, streamable_http, websocket)"
            )
        result: DetectedTransport = forced
    else:
        result = _detect(target)
    if protocol == "modern":
        if result == "sse":
            raise ValueError(
                "protocol='modern' needs Streamable HTTP; the SSE transport is legacy-only"
            )
        if result == "http_auto":
            return "streamable_http"
    return result


def _detect(target: str | Sequence[str]) -> DetectedTransport:
    if not isinstance(target, str):
        pieces = split_targets(target)
        if len(pieces) == 1 and isinstance(pieces[0], tuple):
            if not pieces[0][0].strip():
                raise TransportDetectionError(f"empty command in argv {target!r}")
            return "stdio"
        raise TransportDetectionError(
            "this list names several servers; split it with split_targets() first"
        )
    text = target.strip()
    if not text:
        raise TransportDetectionError("empty connect target")
    if "\x00" in text:
        raise TransportDetectionError(f"a connect target cannot contain NUL: {text!r}")
    if _is_stdio_url(text):
        if not text[8:].strip():
            raise TransportDetectionError("stdio:// target has no command")
        return "stdio"
    scheme = _SCHEME.match(text)
    if scheme is not None:
        if scheme.group(1).lower() in ("ws", "wss"):
            try:
                _parse_ws_url(text)
            except ValueError as exc:
                raise TransportDetectionError(f"invalid URL: {exc}") from None
            return "websocket"
        if scheme.group(1).lower() not in ("http", "https"):
            raise TransportDetectionError(
                f"cannot detect a transport for the non-HTTP URL {text!r}; "
                "pass transport= to choose one"
            )
        try:
            parts = _parse_http_url(text)
        except ValueError as exc:
            raise TransportDetectionError(f"invalid URL: {exc}") from None
        path = parts.path.lower().rstrip("/")
        if path.endswith("/sse"):
            return "sse"
        if path.endswith("/mcp"):
            return "streamable_http"
        return "http_auto"
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise TransportDetectionError(f"cannot parse command {text!r}: {exc}") from None
    if not words or not words[0]:
        raise TransportDetectionError(f"empty command in {text!r}")
    if len(words) == 1 and _HOST_PORT.match(words[0]):
        raise TransportDetectionError(
            f"{text!r} looks like a URL without its scheme; write http://{text} or https://{text}"
        )
    # Issue 8 item 7: anything else that is not a URL is a command line. Most PyPI and
    # npm servers are documented as a bare console script ("mcp-server-time"), and
    # "bash server.sh" or "env K=V cmd" are commands too. Whether the first word exists
    # is the shell's question (it knows PATH and the filesystem): see targets.py.
    return "stdio"
