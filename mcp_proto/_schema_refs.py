"""JSON Schema references, without a network: resolving a URI reference against a base
(RFC 3986 § 5.2, dot segments removed) and reading JSON Pointer fragments (RFC 6901),
percent-decoded, with array indices bounded. Used to prepare a schema
(:mod:`mcp_proto._schema_prepare`) and to name places in violations."""

from __future__ import annotations

import re
from typing import Any, Final

_URI = re.compile(r"^(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$", re.S)


def _remove_dot_segments(path: str) -> str:
    out: list[str] = []
    segments = path.split("/")
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == ".":
            if last:
                out.append("")
        elif segment == "..":
            if len(out) > 1 or (out and out[0] != ""):
                out.pop()
            if last:
                out.append("")
        else:
            out.append(segment)
    result = "/".join(out)
    if path.startswith("/") and not result.startswith("/"):
        result = "/" + result
    return result


def _resolve(base: str, reference: str) -> str:
    """RFC 3986 section 5.2 reference resolution (strict)."""
    m = _URI.match(reference)
    b = _URI.match(base)
    assert m is not None and b is not None  # the expression matches every string
    r_scheme, r_auth, r_path, r_query, r_frag = m.groups()
    b_scheme, b_auth, b_path, b_query, _ = b.groups()
    if r_scheme is not None:
        scheme, auth, path, query = r_scheme, r_auth, _remove_dot_segments(r_path), r_query
    else:
        scheme = b_scheme
        if r_auth is not None:
            auth, path, query = r_auth, _remove_dot_segments(r_path), r_query
        else:
            auth = b_auth
            if r_path == "":
                path = b_path
                query = r_query if r_query is not None else b_query
            else:
                if r_path.startswith("/"):
                    path = _remove_dot_segments(r_path)
                else:
                    if b_auth is not None and b_path == "":
                        merged = "/" + r_path
                    else:
                        merged = b_path[: b_path.rfind("/") + 1] + r_path
                    path = _remove_dot_segments(merged)
                query = r_query
    text = ""
    if scheme is not None:
        text += scheme.lower() + ":"
    if auth is not None:
        text += "//" + auth
    text += path
    if query is not None:
        text += "?" + query
    if r_frag is not None:
        text += "#" + r_frag
    return text


def _split_fragment(uri: str) -> tuple[str, str]:
    document, _, fragment = uri.partition("#")
    return document, fragment


def _unquote(text: str) -> str:
    """Percent-decoding for a URI fragment (a JSON Pointer or an anchor name)."""
    if "%" not in text:
        return text
    raw = bytearray()
    i = 0
    data = text.encode("utf-8")
    while i < len(data):
        if data[i] == 0x25 and _is_hex_pair(data[i + 1 : i + 3]):
            raw.append(int(data[i + 1 : i + 3], 16))
            i += 3
        else:
            raw.append(data[i])
            i += 1
    return raw.decode("utf-8", errors="replace")


def _is_hex_pair(pair: bytes) -> bool:
    return len(pair) == 2 and all(c in b"0123456789abcdefABCDEF" for c in pair)


def _pointer_tokens(fragment: str) -> list[str] | None:
    if fragment == "":
        return []
    if not fragment.startswith("/"):
        return None
    return [t.replace("~1", "/").replace("~0", "~") for t in fragment[1:].split("/")]


# An array index in a JSON Pointer, read as the engine reads it (Rust's usize parser:
# ASCII digits, optionally "+" and leading zeros, looser than RFC 6901 §4), so that every
# subschema the engine can reach is walked and its patterns translated. Never
# str.isdigit(), which accepts "²" (issue 11, case 3), nor int() on any length.
_ARRAY_INDEX: Final = re.compile(r"\+?0*([0-9]+)")


def _array_index(token: str, length: int) -> int:
    """The index ``token`` names in an array of ``length`` items, or -1 if none."""
    match = _ARRAY_INDEX.fullmatch(token)
    if match is None or len(match[1]) > len(str(length)):
        return -1
    index = int(match[1])
    return index if index < length else -1


def _pointer(parts: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)
