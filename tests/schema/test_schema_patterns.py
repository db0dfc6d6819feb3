"""``pattern``: ECMA-262 semantics, refusal of what cannot be honoured, bounded time.

SCH-9, SCH-10, UT-9. The corpus in ``ecma_regex_corpus.json`` was produced with V8 (the
ECMA-262 engine of Node.js); the hand-written cases below pin the differences between
ECMA-262 and the Rust regex dialect that a naive pass-through would get wrong.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_proto import _ecma_regex, schema
from mcp_proto.errors import SchemaError, ValidationError

CORPUS = json.loads(Path(__file__).with_name("ecma_regex_corpus.json").read_text("utf-8"))


def matches(pattern: str, text: str) -> bool:
    return schema.compile({"type": "string", "pattern": pattern}).is_valid(text)


# ------------------------------------------------------------------ ECMA-262 semantics

SEMANTICS: list[tuple[str, str, bool]] = [
    # "." excludes every ECMA-262 line terminator, and matches one code point
    (".", "\r", False),
    (".", "\u2028", False),
    (".", "\u2029", False),
    ("^.$", "\U0001f600", True),
    ("^.$", "\x85", True),
    # "$" is the end of input only, "^" its start
    ("^abc$", "abc\n", False),
    ("^b", "a\nb", False),
    # ASCII \d \w \b; ECMA-262 white space for \s
    ("\\d", "\u0660", False),
    ("\\D", "\u0660", True),
    ("\\w", "\xe9", False),
    ("\\W", "\xe9", True),
    ("[\\w]", "\xe9", False),
    ("[^\\W]", "a", True),
    ("\\bcole", "\xe9cole", True),  # é is not a word character: a boundary before c
    ("a\\b", "a\xe9", True),
    ("\\B\xe9", "a\xe9", False),
    ("^\\s$", "\u1680", True),
    ("^\\s$", "\u202f", True),
    ("^\\s$", "\ufeff", True),
    ("^\\s$", "\x85", False),
    ("^\\s$", "\u180e", False),
    ("^\\s$", "\u200b", False),
    ("^[\\S]$", "\u3000", False),
    # escapes
    ("^\\cJ$", "\n", True),
    ("^\\0$", "\x00", True),
    ("^\\x41$", "A", True),
    ("^\\u00e9$", "\xe9", True),
    ("^\\u{1F600}$", "\U0001f600", True),
    ("^\\uD83D\\uDE00$", "\U0001f600", True),  # a surrogate pair is one code point
    ("^[\\b]$", "\b", True),
    ("^\\/$", "/", True),
    ("^[\\-a]+$", "-a", True),
    # classes
    ("^[]$", "a", False),  # the empty class matches nothing
    ("^[^]$", "\n", True),  # and its negation everything
    ("^[[a]$", "[", True),  # "[" is an ordinary character inside a class
    ("^[a&&b]+$", "&&", True),  # no class intersection in ECMA-262
    ("^[a-z--b]+$", "-", True),
    ("^[\\d-]+$", "-", True),
    # property escapes, exact ECMA-262 names
    ("^\\p{Letter}+$", "\xe9t\xe9", True),
    ("^\\p{L}$", "1", False),
    ("^\\p{digit}+$", "\u09ea\u09e8", True),
    ("^\\p{Nd}$", "x", False),
    ("^\\p{sc=Greek}$", "\u03b1", True),
    ("^\\p{Script_Extensions=Latin}$", "a", True),
    ("^\\P{ASCII}$", "\xe9", True),
    ("^\\p{Cs}$", "a", False),  # no scalar value is a surrogate
    ("^\\P{Cs}$", "a", True),
    # groups and back-references that surely took part
    ("^(a+)-\\1$", "aa-aa", True),
    ("^(a+)-\\1$", "aa-a", False),
    ("^(?<word>[a-z]+) \\k<word>$", "hey hey", True),
    ("^\\1(a)$", "a", True),  # a forward reference is the empty string
    ("^(a\\1)$", "a", True),  # so is one inside its own group
    ("^(?:(a)|b\\1)$", "b", True),  # and one to another alternative
    ("^(?!(a))\\1b$", "b", True),  # and one into a negative lookahead
    # lookaround, including variable-length lookbehind
    ("^(?=.*\\d)(?=.*[a-z]).{6,}$", "abc123", True),
    ("^(?=.*\\d)(?=.*[a-z]).{6,}$", "abcdef", False),
    ("(?<=\\$)\\d+", "cost $42", True),
    ("(?<=^a+)b", "aaab", True),
    ("(?<!a)b", "ab", False),
    # quantifiers
    ("^a{2,3}$", "aaaa", False),
    ("^(?:a|)+$", "", True),
    ("^(?:)*x$", "x", True),
    ("^a+?b??c*?$", "aac", True),
]


@pytest.mark.parametrize(("pattern", "text", "expected"), SEMANTICS)
def test_ecma_semantics(pattern: str, text: str, expected: bool) -> None:
    assert matches(pattern, text) is expected


# Shapes fancy-regex 0.19's optimizer rewrites into something more permissive, and
# jsonschema-rs's own translation left alone: the translator spells them so it cannot.
ENGINE_PITFALLS: list[tuple[str, str, bool]] = [
    ("^a+b?a+$", "a", False),
    ("^\\w+\\.?\\w+$", "a", False),
    ("^(?:a+b?a*)+$", "abb", False),
    ("^x+y*x+$", "x", False),
    ("^$|^(?=a)a+b?a+$", "a", False),  # the same on the backtracking engine
    ("^(?:a+(?:ba*)?)+$", "abb", False),
    ("^a+b?a+$", "aa", True),
]


@pytest.mark.parametrize(("pattern", "text", "expected"), ENGINE_PITFALLS)
def test_engine_optimizer_pitfalls(pattern: str, text: str, expected: bool) -> None:
    assert matches(pattern, text) is expected


def test_pattern_properties_and_property_names_use_ecma_semantics() -> None:
    validator = schema.compile(
        {
            "type": "object",
            "patternProperties": {"^\\d+$": {"type": "integer"}, "^[0-9]+$": {"minimum": 0}},
            "propertyNames": {"pattern": "^[\\w]+$"},
            "additionalProperties": False,
        }
    )
    assert validator.is_valid({"12": 3})
    assert not validator.is_valid({"12": -3})  # both equivalent patterns still apply
    assert not validator.is_valid({"12": "x"})
    assert not validator.is_valid({"\u0661\u0662": 3})  # Arabic-Indic digits are not \d
    assert not validator.is_valid({"caf\xe9": 1})


def test_pattern_reached_only_through_a_reference_is_translated() -> None:
    validator = schema.compile(
        {"$ref": "#/x-library/line", "x-library": {"line": {"pattern": "^.+$"}}}
    )
    assert validator.is_valid("abc")
    assert not validator.is_valid("a\rb")  # ECMA-262 ".", not the engine's


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [tuple(item) for entry in CORPUS["matches"] for item in ([entry[0], *t] for t in entry[1])],
)
def test_v8_corpus(pattern: str, text: str, expected: bool) -> None:
    assert matches(pattern, text) is expected


# ------------------------------------------------------------------ refusals


@pytest.mark.parametrize("pattern", CORPUS["syntax_errors"])
def test_v8_syntax_errors_are_refused(pattern: str) -> None:
    with pytest.raises(schema.UnusablePatternError, match="not an ECMA-262 regular expression"):
        schema.compile({"pattern": pattern})


@pytest.mark.parametrize("pattern", CORPUS["unsupported"])
def test_constructs_the_engine_cannot_reproduce_are_refused(pattern: str) -> None:
    with pytest.raises(schema.UnusablePatternError, match="cannot reproduce"):
        schema.compile({"pattern": pattern})


NOT_ECMA = [
    "(?i)abc",  # inline flags
    "(?i:abc)",  # modifiers (ES2025) are not supported either
    "(?P<name>a)",  # Python / PCRE named group
    "(?>a)",  # atomic group
    "(?#comment)",
    "a++",  # possessive
    "a*+",
    "a{2}{3}",
    "\\Aabc\\z",
    "abc\\Z",
    "\\h",
    "\\e",
    "\\a",
    "\\Qa.b\\E",
    "\\R",
    "\\K",
    "\\-",  # identity escapes of non-syntax characters are errors with Unicode semantics
    "\\_",
    "\\:",
    "[[:alpha:]]",
    "a}",
    "]",
    "{",
    "x{,3}",
    "\\p{letter}",  # property names are exact
    "\\p{Greek}",  # a script needs sc= / scx=
    "\\pL",
    "\\p{Basic_Emoji}",  # a property of strings needs the v flag
    "\\c1",
    "\\00",
    "\\8",
    "(a)\\2",
    "\\k<nope>(?<yes>a)",
    "(?<n>a)(?<n>b)",
    "[z-a]",
    "[\\d-z]",
    "(",
    "a)",
    "[a",
    "\\",
    "(?=a)*",
    "(?<=a)+",
    "\\u{110000}",
]


@pytest.mark.parametrize("pattern", NOT_ECMA)
def test_non_ecma_syntax_makes_the_schema_unusable(pattern: str) -> None:
    for where in ({"pattern": pattern}, {"patternProperties": {pattern: True}}):
        with pytest.raises(schema.UnusablePatternError) as info:
            schema.compile(where)
        assert info.value.pattern == pattern
        assert "not an ECMA-262 regular expression" in str(info.value)
        assert isinstance(info.value, SchemaError)


CANNOT_REPRODUCE = [
    "(a)?\\1",  # the group may not have taken part: ECMA-262 matches "", the engine fails
    "(?:(a)|b)\\1",
    "(?:(a)b)*\\1",
    "(?=(a))\\1",
    "(?<=\\1(a))b",  # back-reference inside a lookbehind (matched right to left)
    "(?<=(?=a)a)b",  # lookaround inside a lookbehind
    "(?<=\\ba)b",
    "\\p{CWKCF}",  # valid ECMA-262, no table in the engine
    "\\p{sc=Unknown}",
    "\\uD800",  # a lone surrogate
    "a{1000000}",
    "x" * (_ecma_regex.MAX_PATTERN_LENGTH + 1),
]


@pytest.mark.parametrize("pattern", CANNOT_REPRODUCE)
def test_unreproducible_ecma_makes_the_schema_unusable(pattern: str) -> None:
    with pytest.raises(schema.UnusablePatternError, match="cannot reproduce") as info:
        schema.compile({"pattern": pattern})
    assert info.value.pattern == pattern


def test_a_lone_surrogate_in_the_pattern_text_is_refused() -> None:
    with pytest.raises(schema.UnusablePatternError):
        schema.compile({"pattern": "a\ud800"})


def test_unusable_pattern_is_not_invalid_data() -> None:
    with pytest.raises(SchemaError):
        schema.errors_for({"properties": {"a": {"pattern": "(?i)x"}}}, {"a": "X"})


# ------------------------------------------------------------------ bounded time

CATASTROPHIC = "a" * 40 + "!"


def test_catastrophic_pattern_returns_and_fails() -> None:
    validator = schema.compile({"type": "string", "pattern": "^(a+)+$"})
    assert validator.is_valid(CATASTROPHIC) is False
    with pytest.raises(ValidationError, match="does not match the pattern '\\^\\(a\\+\\)\\+\\$'"):
        validator.validate(CATASTROPHIC)
    many = schema.compile({"type": "array", "items": {"pattern": "^(a+)+$"}})
    assert many.is_valid([CATASTROPHIC] * 2000) is False
    assert many.violations([CATASTROPHIC] * 2000, limit=3)


BACKTRACKING = "^(?:a+(?!b))+$"  # lookahead: runs on the backtracking engine


def test_catastrophic_backtracking_pattern_hits_the_budget_and_fails() -> None:
    validator = schema.compile({"type": "string", "pattern": BACKTRACKING})
    assert validator.backtracking_patterns == 1
    assert validator.is_valid("aaaa")
    assert validator.is_valid(CATASTROPHIC) is False
    (violation,) = validator.violations(CATASTROPHIC)
    assert "work budget" in violation.reason
    assert BACKTRACKING in violation.reason
    many = schema.compile({"type": "array", "items": {"pattern": BACKTRACKING}})
    assert many.is_valid(["a" * 30 + "!"] * 2000) is False


# Matches "a"*n + "?" through its second alternative, but only after the first one
# has backtracked exponentially: the budget runs out before the right answer is known.
SLOW_MATCH = "^(?:a+(?!b))+(?<=a)x|^a*\\?"
SLOW_TEXT = "a" * 40 + "?"


@pytest.mark.parametrize(
    "wrapper",
    [
        lambda p: {"pattern": p},
        lambda p: {"not": {"pattern": p}},
        lambda p: {"oneOf": [{"pattern": p}, {"type": "string"}]},
        lambda p: {"if": {"pattern": p}, "then": False},
        lambda p: {"if": {"pattern": p}, "else": False},
        lambda p: {"anyOf": [{"not": {"pattern": p}}, {"type": "number"}]},
        lambda p: {"not": {"not": {"pattern": p}}},
        lambda p: {"type": "array", "contains": {"pattern": p}},
        lambda p: {"type": "object", "propertyNames": {"not": {"pattern": p}}},
        lambda p: {"type": "object", "patternProperties": {p: False}},
        lambda p: {"type": "object", "patternProperties": {p: True}, "additionalProperties": False},
    ],
)
def test_a_budget_overrun_never_passes_validation(wrapper: Any) -> None:
    validator = schema.compile(wrapper(SLOW_MATCH))
    instance: Any = SLOW_TEXT
    if "contains" in wrapper("x"):
        instance = [SLOW_TEXT]
    elif wrapper("x").get("type") == "object":
        instance = {SLOW_TEXT: 1}
    assert validator.is_valid(instance) is False


def test_budget_is_shared_by_the_whole_instance() -> None:
    """A match that fits the budget alone fails when the instance is huge (SCH-10)."""
    quadratic = "(?=[^!]*!)b"  # each step re-scans the rest of the string
    validator = schema.compile({"type": "object", "properties": {"s": {"pattern": quadratic}}})
    text = "a" * 5000 + "b!"
    assert validator.is_valid({"s": text})
    padded = {"s": text, "padding": ["x" * 100] * 10_000}  # about 1 MB more to look at
    assert validator.is_valid(padded) is False
    (violation,) = validator.violations(padded)
    assert violation.path == "/s"
    assert "work budget" in violation.reason


def test_compiling_patterns_is_bounded_too() -> None:
    """Hundreds of large Unicode patterns would take the engine seconds to compile: the
    schema is unusable instead (refused from an estimate, before the engine runs)."""
    heavy = "[\\p{L}\\p{N}]{40}"
    many = {"properties": {f"p{i}": {"pattern": heavy + str(i)} for i in range(300)}}
    with pytest.raises(schema.UnusablePatternError, match="too large to compile"):
        schema.compile(many)
    few = {"properties": {f"p{i}": {"pattern": heavy + str(i)} for i in range(3)}}
    assert schema.compile(few).is_valid({"p0": "a" * 40 + "0"})


def test_linear_patterns_have_no_budget() -> None:
    validator = schema.compile({"type": "array", "items": {"pattern": "^(a|aa)+$"}})
    assert validator.backtracking_patterns == 0
    assert validator.is_valid(["a" * 100_000] * 10)
