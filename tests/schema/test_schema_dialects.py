"""Dialects come from ``$schema`` and are never guessed (SCH-11, SCH-12, SCH-16)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_proto import schema
from mcp_proto.errors import SchemaError

# A schema whose answers differ between the dialects: under 2020-12 "prefixItems" checks
# the first item and "items" the rest; under 2019-09 and draft-07 "items" is the tuple
# form and "prefixItems" means nothing.
TUPLE = {"prefixItems": [{"type": "string"}], "items": [{"type": "integer"}]}
TUPLE_2020 = {"prefixItems": [{"type": "string"}], "items": {"type": "integer"}}


@pytest.mark.parametrize(
    ("declared", "dialect"),
    [
        ("https://json-schema.org/draft/2020-12/schema", schema.DIALECT_2020_12),
        ("https://json-schema.org/draft/2020-12/schema#", schema.DIALECT_2020_12),
        ("https://json-schema.org/draft/2019-09/schema", schema.DIALECT_2019_09),
        ("https://json-schema.org/draft/2019-09/schema#", schema.DIALECT_2019_09),
        ("http://json-schema.org/draft-07/schema#", schema.DIALECT_DRAFT_07),
        ("http://json-schema.org/draft-07/schema", schema.DIALECT_DRAFT_07),
        ("http://json-schema.org/draft-06/schema#", schema.DIALECT_DRAFT_07),
        ("http://json-schema.org/draft-04/schema#", schema.DIALECT_DRAFT_07),
        ("http://json-schema.org/draft-04/schema", schema.DIALECT_DRAFT_07),
    ],
)
def test_supported_dialects(declared: str, dialect: str) -> None:
    assert schema.compile({"$schema": declared}).dialect == dialect
    assert schema.dialect_of({"$schema": declared}) == dialect


def test_no_schema_means_2020_12() -> None:
    validator = schema.compile(TUPLE_2020)
    assert validator.dialect == schema.DIALECT_2020_12
    assert validator.is_valid(["a", 1, 2])
    assert not validator.is_valid(["a", "b"])
    assert schema.dialect_of(True) == schema.DIALECT_2020_12


def test_the_dialect_changes_the_answer() -> None:
    d2019 = schema.compile({"$schema": schema.DIALECT_2019_09, **TUPLE})
    d7 = schema.compile({"$schema": schema.DIALECT_DRAFT_07, **TUPLE})
    for validator in (d2019, d7):
        assert validator.is_valid([1, "anything"])
        assert not validator.is_valid(["a"])
    with pytest.raises(SchemaError):  # "items" must be a schema in 2020-12
        schema.compile({"$schema": schema.DIALECT_2020_12, **TUPLE})


def test_default_dialect_parameter() -> None:
    validator = schema.compile(TUPLE, default_dialect=schema.DIALECT_DRAFT_07)
    assert validator.dialect == schema.DIALECT_DRAFT_07
    assert validator.is_valid([1])
    with pytest.raises(schema.UnsupportedDialectError):
        schema.compile({}, default_dialect="urn:unknown-dialect")


@pytest.mark.parametrize(
    "declared",
    [
        "urn:unknown-dialect",
        "https://json-schema.org/draft-07/schema#",  # https: not the draft-07 identifier
        "http://json-schema.org/draft/2020-12/schema",  # http: not the 2020-12 identifier
        "https://json-schema.org/draft/2020-12/schema#foo",
        "http://json-schema.org/draft-03/schema#",
        "http://json-schema.org/schema#",  # "the latest": a guess
        "https://json-schema.org/draft/next/schema",
        "https://example.com/my-meta-schema",
        "",
    ],
)
def test_unsupported_dialect_is_an_error(declared: str) -> None:
    with pytest.raises(schema.UnsupportedDialectError) as info:
        schema.compile({"$schema": declared, "type": "string"})
    assert info.value.dialect == declared
    message = str(info.value)
    assert message.startswith("the schema declares the JSON Schema dialect ")
    assert f"dialect {json.dumps(declared)}: that dialect is not supported (supported: " in message
    assert schema.DIALECT_2020_12 in message
    assert info.value.detail == message.removeprefix("the schema ")
    with pytest.raises(schema.UnsupportedDialectError):
        schema.dialect_of({"$schema": declared})
    with pytest.raises(schema.UnsupportedDialectError):  # also where the client looks
        schema.errors_for({"$schema": declared}, "x")


def test_unsupported_dialect_in_an_embedded_resource() -> None:
    with pytest.raises(schema.UnsupportedDialectError) as info:
        schema.compile({"$defs": {"inner": {"$id": "urn:inner", "$schema": "urn:unknown-dialect"}}})
    assert info.value.dialect == "urn:unknown-dialect"
    assert "/$defs/inner" in str(info.value)


@pytest.mark.parametrize("declared", [5, None, ["x"], {"$id": "x"}])
def test_malformed_schema_keyword_is_unusable_not_unsupported(declared: Any) -> None:
    with pytest.raises(SchemaError) as info:
        schema.compile({"$schema": declared})
    assert not isinstance(info.value, schema.UnsupportedDialectError)


def test_embedded_resource_in_another_supported_dialect() -> None:
    validator = schema.compile(
        {
            "$schema": schema.DIALECT_2020_12,
            "$ref": "urn:old",
            "$defs": {"old": {"$id": "urn:old", "$schema": schema.DIALECT_DRAFT_07, **TUPLE}},
        }
    )
    assert validator.is_valid([1, "x"])  # the embedded draft-07 tuple "items"
    assert not validator.is_valid(["x"])


def test_draft_04_and_06_are_read_as_draft_07() -> None:
    d6 = schema.compile(
        {
            "$schema": "http://json-schema.org/draft-06/schema#",
            "contains": {"const": 1},
            "if": {"minItems": 3},
            "then": {"maxItems": 3},
        }
    )
    assert d6.is_valid([1])
    assert not d6.is_valid([2])
    assert not d6.is_valid([1, 2, 3, 4])  # if/then: draft-07 keywords apply
    # draft-04's boolean exclusiveMaximum is not draft-07: the schema is unusable
    with pytest.raises(SchemaError):
        schema.compile(
            {
                "$schema": "http://json-schema.org/draft-04/schema#",
                "maximum": 3,
                "exclusiveMaximum": True,
            }
        )
    # draft-04's "id" is not an identifier under draft-07
    with pytest.raises(schema.ExternalReferenceError):
        schema.compile(
            {
                "$schema": "http://json-schema.org/draft-04/schema#",
                "definitions": {"a": {"id": "urn:a", "type": "integer"}},
                "$ref": "urn:a",
            }
        )


def test_draft_04_schema_keyword_is_left_as_written() -> None:
    original = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer"}
    snapshot = dict(original)
    schema.compile(original)
    assert original == snapshot


@pytest.mark.parametrize("dialect", [schema.DIALECT_2019_09, schema.DIALECT_2020_12])
def test_definitions_behave_like_defs(dialect: str) -> None:
    validator = schema.compile(
        {
            "$schema": dialect,
            "definitions": {
                "n": {"type": "integer"},
                "s": {"$id": "urn:example:s", "type": "string"},
                "p": {"pattern": "^\\d+$"},
            },
            "properties": {
                "n": {"$ref": "#/definitions/n"},
                "s": {"$ref": "urn:example:s"},
                "p": {"$ref": "#/definitions/p"},
            },
        }
    )
    assert validator.is_valid({"n": 1, "s": "x", "p": "12"})
    assert not validator.is_valid({"n": "1"})
    assert not validator.is_valid({"s": 1})
    assert not validator.is_valid({"p": "\u0661"})  # ECMA \d inside definitions too
