"""Fuzz target: the ECMA-262 pattern translator (``mcp_proto._ecma_regex``) and the
engine it feeds.

Feeds: a ``pattern`` as a server's schema carries it. Half the inputs are the bytes as
text (UTF-8, lone surrogates included); the other half are built from regex tokens
(groups, lookarounds, named groups and back-references, classes, ``\\p{..}``, quantifiers
with huge counts...), so most inputs reach deep into the parser.

Contract: ``translate`` returns a ``Translation`` or raises ``PatternError`` (issue 11,
case 2); a translated pattern is one the engine accepts: ``compile({"pattern": p})``
raises nothing but ``UnusablePatternError``; matching returns a bool.
"""

from __future__ import annotations

from _fuzzlib import Reader, Target

from mcp_proto import _ecma_regex, schema

TOKENS = (
    "a",
    "b",
    "é",
    "\U0001f600",
    ".",
    "^",
    "$",
    "|",
    "(",
    ")",
    "(?:",
    "(?=",
    "(?!",
    "(?<=",
    "(?<!",
    "(?<n>",
    "(?<m>",
    "\\k<n>",
    "\\1",
    "\\2",
    "\\10",
    "[",
    "]",
    "[^",
    "-",
    "\\d",
    "\\D",
    "\\w",
    "\\s",
    "\\b",
    "\\B",
    "\\p{L}",
    "\\P{Lu}",
    "\\p{Script=Greek}",
    "\\p{sc=Unknown}",
    "\\u0041",
    "\\uD83D\\uDE00",
    "\\uD800",
    "\\u{1F600}",
    "\\x41",
    "\\cA",
    "\\0",
    "\\/",
    "\\-",
    "*",
    "+",
    "?",
    "*?",
    "{2}",
    "{2,}",
    "{2,3}",
    "{3,2}",
    "{",
    "}",
    "{" + "1" * 20 + "}",
    "{0000000000000000000001}",
    "\\" + "1" * 12,
    "(?i)",
    "\\",
)


def _pattern(data: bytes) -> str:
    reader = Reader(data)
    if reader.flag():
        return reader.rest().decode("utf-8", "surrogatepass" if reader.flag() else "replace")
    return "".join(reader.choice(TOKENS) for _ in range(min(len(data), 40)))


def check(data: bytes) -> None:
    pattern = _pattern(data)
    try:
        translation = _ecma_regex.translate(pattern)
    except _ecma_regex.PatternError as exc:
        assert str(exc)
        translated = False
    else:
        assert isinstance(translation.target, str) and translation.cost >= 0
        translated = True
    try:
        validator = schema.compile({"type": "string", "pattern": pattern})
    except schema.UnusablePatternError:
        return
    assert translated, "the schema accepted a pattern the translator refused"
    for text in ("", "a", "ab\n", "\U0001f600", "é" * 10):
        assert isinstance(validator.is_valid(text), bool)


TARGET = Target(
    name="ecma_regex",
    description="ECMA-262 pattern text or tokens -> translate -> engine",
    check=check,
    seeds=(
        b"\x01a{" + b"1" * 4301 + b"}",
        b"\x01\\" + b"1" * 4301,
        b"\x01(?<n>a)\\k<n>\\p{L}[\\d-]",
        b"\x03a\xed\xa0\x80b",
        b"\x00\x12\x13\x08\x09\x24\x0a",
    ),
    max_len=2048,
)

if __name__ == "__main__":
    from run import main

    main(["ecma_regex"])
