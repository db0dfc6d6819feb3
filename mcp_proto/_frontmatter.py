"""The YAML frontmatter of a ``SKILL.md``, read by a small, strict YAML subset parser.

SEP-2640 § Integrity and verification: after fetching a ``SKILL.md`` the host "MUST
parse its YAML frontmatter and compare it field-by-field against the entry's
``frontmatter``"; any discrepancy means the skill is not loaded. Agent Skills
frontmatter is a flat mapping of short scalars with an optional ``metadata`` mapping
(agentskills.io/specification), so a full YAML engine is not needed, and not wanted on
peer input (no dependency, no tags, no aliases, bounded work).

What is read: block mappings nested by indentation (spaces), block sequences, flow
sequences and mappings of scalars (``[a, b]``, ``{k: v}``), plain scalars (multi-line
ones folded), single- and double-quoted scalars with their escapes, literal (``|``) and
folded (``>``) block scalars with ``-`` / ``+`` chomping, comments. Plain scalars are
resolved by the YAML 1.2 core schema (``null``/``~``/empty, ``true``/``false``,
integers, floats); everything else is a string. Anything outside this (anchors,
aliases, tags, complex keys, tab indentation, duplicate keys, a second document, a
plain scalar YAML 1.1 reads as text and 1.2 as a number: ``1e5``, ``0o17``) is a
:class:`FrontmatterError`: the skill is then not loaded, since its frontmatter cannot
be shown to match.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

__all__ = ["FrontmatterError", "parse_frontmatter", "split_frontmatter"]

#: The frontmatter block: ``---`` line, body, ``---`` line (the form hosts and the
#: conformance harness read; a BOM before it is allowed).
_BLOCK: Final = re.compile(r"^---\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.DOTALL)
#: YAML's white space: space and tab only (str.strip() would also take U+00A0 & co.).
_WS: Final = " \t"
_MAX_CHARS: Final = 64 * 1024
_MAX_DEPTH: Final = 16
_INT: Final = re.compile(r"[-+]?[0-9]+")
_OCT: Final = re.compile(r"0o[0-7]+")
_HEX: Final = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT: Final = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
#: The floats YAML 1.1 reads as floats too: a point, and a signed exponent if any.
_FLOAT_11: Final = re.compile(r"[-+]?(\.[0-9]+|[0-9]+\.[0-9]*)([eE][-+][0-9]+)?")
_KEY: Final = re.compile(
    r"""([^\s#'"\[\]{},&*!|>%@`?:-][^:#]*?|"(?:[^"\\]|\\.)*"|'(?:[^']|'')*')[ \t]*:(?:[ \t]+|$)"""
)
_FORBIDDEN_START: Final = tuple("&*!%@`?")
_ESCAPES: Final = {
    "0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v",
    "f": "\f", "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\",
    "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029",
}  # fmt: skip


class FrontmatterError(ValueError):
    """The frontmatter is missing or uses YAML this reader does not accept."""


def split_frontmatter(text: str) -> str:
    """The YAML text between the leading ``---`` lines of ``text``."""
    if text.startswith("\ufeff"):
        text = text[1:]
    match = _BLOCK.match(text)
    if match is None:
        raise FrontmatterError("the file does not begin with a --- delimited frontmatter block")
    return match.group(1)


def parse_frontmatter(text: str) -> dict[str, Any]:
    """The frontmatter of a ``SKILL.md`` as a JSON-like mapping."""
    body = split_frontmatter(text)
    if len(body) > _MAX_CHARS:
        raise FrontmatterError(f"the frontmatter is longer than {_MAX_CHARS} characters")
    lines = [_Line(i, raw) for i, raw in enumerate(body.split("\n"), 1)]
    lines = [ln for ln in lines if not ln.blank]
    if not lines:
        return {}
    parser = _Parser(lines, body.split("\n"))
    value = parser.block(0, 0)
    if parser.pos != len(parser.lines):
        raise FrontmatterError(f"line {parser.lines[parser.pos].number}: unexpected indentation")
    if not isinstance(value, dict):
        raise FrontmatterError("the frontmatter is not a mapping")
    return value


class _Line:
    __slots__ = ("blank", "indent", "number", "text")

    def __init__(self, number: int, raw: str) -> None:
        raw = raw.rstrip("\r")
        self.number = number
        stripped = raw.lstrip(" ")
        if stripped.startswith("\t"):
            raise FrontmatterError(f"line {number}: tab indentation")
        self.indent = len(raw) - len(stripped)
        self.blank = not stripped.strip(_WS) or stripped.startswith("#")
        self.text = stripped.rstrip(_WS)
        if stripped.startswith(("---", "...")) and self.indent == 0 and not self.blank:
            raise FrontmatterError(f"line {number}: a second YAML document")


class _Parser:
    def __init__(self, lines: list[_Line], raw: list[str]) -> None:
        self.lines = lines
        self.raw = raw  # every line of the body, for block scalars (blank lines count)
        self.pos = 0

    def block(self, indent: int, depth: int) -> Any:
        if depth > _MAX_DEPTH:
            raise FrontmatterError("the frontmatter nests too deeply")
        first = self.lines[self.pos]
        if first.indent != indent:
            raise FrontmatterError(f"line {first.number}: unexpected indentation")
        if first.text == "-" or first.text.startswith("- "):
            return self.sequence(indent, depth)
        return self.mapping(indent, depth)

    def sequence(self, indent: int, depth: int) -> list[Any]:
        out: list[Any] = []
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            if line.indent != indent or not (line.text == "-" or line.text.startswith("- ")):
                break
            rest = line.text[1:].strip(_WS)
            self.pos += 1
            if rest:
                if _KEY.match(rest):
                    raise FrontmatterError(f"line {line.number}: a mapping inside a sequence item")
                out.append(self.inline(rest, line, indent))
            else:
                out.append(self.nested(indent, line, depth))
        return out

    def mapping(self, indent: int, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            if line.indent < indent:
                break
            if line.indent > indent:
                raise FrontmatterError(f"line {line.number}: unexpected indentation")
            match = _KEY.match(line.text)
            if match is None:
                raise FrontmatterError(f"line {line.number}: not a 'key: value' line")
            key = match.group(1)
            if key[0] in "\"'":
                key = _quoted(key, line.number)
            key = key.strip(_WS)
            if key in out:
                raise FrontmatterError(f"line {line.number}: duplicate key {key!r}")
            rest = line.text[match.end() :]
            self.pos += 1
            if rest.strip(_WS) and not rest.lstrip(_WS).startswith("#"):
                out[key] = self.inline(rest.strip(_WS), line, indent)
            else:
                out[key] = self.nested(indent, line, depth)
        return out

    def nested(self, indent: int, line: _Line, depth: int) -> Any:
        """The value under a ``key:`` (or a bare ``-``): a deeper block, else null. A
        sequence may sit at the key's own indentation (compact YAML)."""
        if self.pos < len(self.lines):
            nxt = self.lines[self.pos]
            if nxt.indent > indent:
                return self.block(nxt.indent, depth + 1)
            if nxt.indent == indent and line.text != "-" and nxt.text.startswith("- "):
                return self.sequence(indent, depth + 1)
        return None

    def inline(self, text: str, line: _Line, indent: int) -> Any:
        if text.startswith(_FORBIDDEN_START):
            raise FrontmatterError(f"line {line.number}: anchors, aliases and tags are not read")
        if text[0] in "|>":
            return self.block_scalar(text, line, indent)
        if text[0] in "\"'":
            end = _quote_end(text, line.number)
            tail = text[end:].strip(_WS)
            if tail and not tail.startswith("#"):
                raise FrontmatterError(f"line {line.number}: text after a quoted scalar")
            return _quoted(text[:end], line.number)
        if text[0] in "[{":
            return _flow(text, line.number)
        # A plain scalar, maybe continued on more-indented lines (folded by spaces).
        parts = [_strip_comment(text)]
        while self.pos < len(self.lines) and self.lines[self.pos].indent > indent:
            more = self.lines[self.pos]
            if _KEY.match(more.text) or more.text.startswith("- "):
                raise FrontmatterError(f"line {more.number}: unexpected indentation")
            parts.append(_strip_comment(more.text))
            self.pos += 1
        return _resolve(" ".join(p for p in parts if p))

    def block_scalar(self, header: str, line: _Line, indent: int) -> str:
        header = _strip_comment(header)
        style, chomp = header[0], header[1:]
        if chomp not in ("", "-", "+"):
            raise FrontmatterError(f"line {line.number}: unsupported block scalar header")
        body: list[str] = []
        width: int | None = None
        index = line.number  # raw lines are 1-based: the next raw line is raw[index]
        while index < len(self.raw):
            raw = self.raw[index].rstrip("\r")
            stripped = raw.lstrip(" ")
            if stripped:
                own = len(raw) - len(stripped)
                if own <= indent:
                    break
                width = own if width is None else width
                if own < width:
                    raise FrontmatterError(f"line {index + 1}: block scalar indentation")
                body.append(raw[width:])
            else:
                body.append("")
            index += 1
        while self.pos < len(self.lines) and self.lines[self.pos].number <= index:
            self.pos += 1
        trailing = 0
        while body and body[-1] == "":
            body.pop()
            trailing += 1
        text = "\n".join(body) if style == "|" else _fold(body)
        if not body:
            return ""
        if chomp == "-":
            return text
        if chomp == "+":
            return text + "\n" * (trailing + 1)
        return text + "\n"


def _fold(lines: list[str]) -> str:
    out = ""
    for i, ln in enumerate(lines):
        if i == 0:
            out = ln
        elif ln == "":
            out += "\n"
        elif lines[i - 1] == "" or ln.startswith(" ") or lines[i - 1].startswith(" "):
            out += ("" if lines[i - 1] == "" else "\n") + ln
        else:
            out += " " + ln
    return out


def _strip_comment(text: str) -> str:
    for i, ch in enumerate(text):
        if ch == "#" and (i == 0 or text[i - 1] in " \t"):
            return text[:i].rstrip(_WS)
    return text


def _quote_end(text: str, number: int) -> int:
    quote = text[0]
    i = 1
    while i < len(text):
        ch = text[i]
        if quote == '"' and ch == "\\":
            i += 2
            continue
        if ch == quote:
            if quote == "'" and text[i + 1 : i + 2] == "'":
                i += 2
                continue
            return i + 1
        i += 1
    raise FrontmatterError(f"line {number}: unterminated quoted scalar (multi-line not read)")


def _quoted(text: str, number: int) -> str:
    inner = text[1:-1]
    if text[0] == "'":
        return inner.replace("''", "'")
    out: list[str] = []
    i = 0
    while i < len(inner):
        ch = inner[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        code = inner[i + 1 : i + 2]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            i += 2
        elif code in ("x", "u", "U"):
            size = {"x": 2, "u": 4, "U": 8}[code]
            digits = inner[i + 2 : i + 2 + size]
            if len(digits) != size or not re.fullmatch(r"[0-9a-fA-F]+", digits):
                raise FrontmatterError(f"line {number}: bad escape")
            point = int(digits, 16)
            if point > 0x10FFFF:
                raise FrontmatterError(f"line {number}: bad escape")
            out.append(chr(point))
            i += 2 + size
        else:
            raise FrontmatterError(f"line {number}: bad escape")
    return "".join(out)


def _flow(text: str, number: int) -> Any:
    """``[a, b]`` / ``{k: v}`` of scalars, one line."""
    text = _strip_comment(text)
    opener, closer = text[0], {"[": "]", "{": "}"}[text[0]]
    if not text.endswith(closer):
        raise FrontmatterError(f"line {number}: a flow collection must close on its line")
    inner = text[1:-1].strip(_WS)
    items: list[str] = []
    current = ""
    quote = ""
    for ch in inner:
        if quote:
            current += ch
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
            current += ch
        elif ch in "[]{}":
            raise FrontmatterError(f"line {number}: nested flow collections are not read")
        elif ch == ",":
            items.append(current.strip(_WS))
            current = ""
        else:
            current += ch
    if current.strip(_WS):
        items.append(current.strip(_WS))
    if opener == "[":
        return [_flow_scalar(item, number) for item in items]
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition(":")
        if not sep:
            raise FrontmatterError(f"line {number}: a flow mapping entry without ':'")
        name = _flow_scalar(key.strip(_WS), number)
        out[str(name)] = _flow_scalar(value.strip(_WS), number)
    return out


def _flow_scalar(text: str, number: int) -> Any:
    if not text:
        return None
    if text[0] in "\"'":
        if _quote_end(text, number) != len(text):
            raise FrontmatterError(f"line {number}: text after a quoted scalar")
        return _quoted(text, number)
    if text.startswith(_FORBIDDEN_START):
        raise FrontmatterError(f"line {number}: anchors, aliases and tags are not read")
    return _resolve(text)


def _resolve(text: str) -> Any:
    """A plain scalar by the YAML 1.2 core schema."""
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if len(text) > 64 and _FLOAT.fullmatch(text):
        # (int() of a 5000-digit string raises; no frontmatter field is such a number)
        raise FrontmatterError("a number too long to read")
    if _INT.fullmatch(text):
        return int(text)
    if _OCT.fullmatch(text) or (_FLOAT.fullmatch(text) and not _FLOAT_11.fullmatch(text)):
        # A number by YAML 1.2 and a string by YAML 1.1 (``1e5``, ``0o17``): a server
        # writing SKILL.md with a 1.1 library (PyYAML) leaves such a string unquoted,
        # so whichever we chose could disagree with the entry's frontmatter. Refused,
        # never misread.
        raise FrontmatterError(f"{text!r} is a number in YAML 1.2 and text in YAML 1.1")
    if _HEX.fullmatch(text):
        return int(text[2:], 16)
    if _FLOAT.fullmatch(text):
        value = float(text)
        return value if json.dumps(value) not in ("Infinity", "-Infinity") else text
    return text
