"""Hostile schemas from a server: compile raises SchemaError and nothing else.

Issue 11, cases 2 and 3: a fuzzing run found inputs where ``schema.compile`` let a bare
``ValueError`` out (int() of more than 4,300 digits; ``str.isdigit()`` accepting "²" in
a JSON Pointer). Each case is fed exactly as found, plus its near neighbours.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_proto import _ecma_regex, schema
from mcp_proto.errors import SchemaError

# Exactly the inputs of the issue.
HUGE_QUANTIFIER = "a{" + "1" * 4301 + "}"
HUGE_BACKREFERENCE = "\\" + "1" * 4301


def test_huge_repetition_count_is_an_unusable_pattern() -> None:
    with pytest.raises(schema.UnusablePatternError) as info:
        schema.compile({"type": "string", "pattern": HUGE_QUANTIFIER})
    assert info.value.pattern == HUGE_QUANTIFIER
    assert "a repetition count above 100000 is more than the engine can run" in str(info.value)


def test_huge_back_reference_is_an_unusable_pattern() -> None:
    with pytest.raises(schema.UnusablePatternError) as info:
        schema.compile({"type": "string", "pattern": HUGE_BACKREFERENCE})
    assert info.value.pattern == HUGE_BACKREFERENCE
    # The message quotes the start of the number, never the clamped value nor 4301 digits.
    assert "\\111111111111... names no capturing group" in str(info.value)


@pytest.mark.parametrize(
    "pattern",
    [
        "a{1," + "1" * 4301 + "}",
        "a{" + "1" * 4301 + ",}",
        "a{" + "2" * 4301 + "," + "1" * 4301 + "}",
        "(a)\\" + "1" * 4301,
        "[a]{" + "9" * 20 + "}",
    ],
)
def test_long_numbers_in_patterns_are_schema_errors(pattern: str) -> None:
    for where in ({"pattern": pattern}, {"patternProperties": {pattern: True}}):
        with pytest.raises(schema.UnusablePatternError):
            schema.compile(where)


def test_leading_zeros_do_not_make_a_count_large() -> None:
    # ECMA-262 reads {0000...01} as {1}; the clamp applies after the leading zeros.
    validator = schema.compile({"type": "string", "pattern": "^a{" + "0" * 5000 + "1}$"})
    assert validator.is_valid("a")
    assert not validator.is_valid("aa")


def test_out_of_order_counts_are_still_a_syntax_error() -> None:
    with pytest.raises(schema.UnusablePatternError, match="numbers out of order"):
        schema.compile({"pattern": "a{" + "9" * 30 + ",1}"})


def test_translator_alone_raises_pattern_error() -> None:
    for pattern in (HUGE_QUANTIFIER, HUGE_BACKREFERENCE):
        with pytest.raises(_ecma_regex.PatternError):
            _ecma_regex.translate(pattern)


# ---- JSON Pointer array indexes: ASCII digits only


@pytest.mark.parametrize(
    "document",
    [
        {"$ref": "#/a/\u00b2", "a": []},  # exactly the input
        {"$ref": "#/a/\u00b2", "a": [{}, {}, {}]},
        {"$ref": "#/a/\u0661", "a": [{}, {}]},  # ARABIC-INDIC DIGIT ONE
        {"$ref": "#/a/" + "1" * 5000, "a": [{}]},
        {"$ref": "#/a/-1", "a": [{}]},
    ],
)
def test_non_ascii_or_huge_array_index_is_a_schema_error(document: dict[str, Any]) -> None:
    with pytest.raises(SchemaError):
        schema.compile(document)


def test_an_array_index_in_a_reference_still_reaches_the_subschema() -> None:
    # The pointer walk must still find list items, so their patterns get translated.
    validator = schema.compile({"$ref": "#/x-list/1", "x-list": [{}, {"pattern": "^.$"}]})
    assert validator.is_valid("\U0001f600")  # ECMA-262 "." is one code point
    with pytest.raises(schema.UnusablePatternError, match="unterminated group"):
        schema.compile({"$ref": "#/x-list/1", "x-list": [{}, {"pattern": "("}]})


@pytest.mark.parametrize("index", ["01", "001", "+1"])
def test_the_walker_reads_indexes_as_the_engine_does(index: str) -> None:
    # jsonschema-rs resolves "01" and "+1" to item 1: the walker must reach it too, or
    # its pattern would reach the engine untranslated.
    with pytest.raises(schema.UnusablePatternError, match="unterminated group"):
        schema.compile({"$ref": f"#/x-list/{index}", "x-list": [{}, {"pattern": "("}]})
