"""Fuzz target: JSON Schema compilation and validation (``mcp_proto.schema``).

Feeds, structure-aware: a schema (a tool's ``inputSchema``/``outputSchema`` as a server
sends it) built from JSON Schema's vocabulary (every applicator, ``$ref``/``$id``/
``$anchor``/``$dynamicRef`` with in-document, external and malformed targets, ``pattern``
with ECMA-262 tokens, numbers at the boundaries that broke things before), a default
dialect, and an instance to validate. JSON text is used as the schema directly.

Contract: ``compile`` returns a ``Validator`` or raises ``SchemaError`` (issue 11, cases
2 and 3); ``is_valid`` returns a bool; ``violations`` a list of ``Violation``; ``validate``
raises ``SchemaViolation`` exactly when ``is_valid`` is false; ``errors_for`` agrees.
"""

from __future__ import annotations

from typing import Any

from _fuzzlib import Reader, Target, json_input, json_value

from mcp_proto import schema
from mcp_proto.errors import SchemaError

KEYS = (
    "type",
    "properties",
    "required",
    "items",
    "prefixItems",
    "additionalProperties",
    "additionalItems",
    "patternProperties",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependentRequired",
    "dependencies",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "$ref",
    "$defs",
    "definitions",
    "$id",
    "id",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "$schema",
    "$vocabulary",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
    "a",
    "0",
)
STRINGS = (
    "object",
    "string",
    "integer",
    "number",
    "array",
    "boolean",
    "null",
    "#",
    "#/$defs/a",
    "#/definitions/a",
    "#/properties/a",
    "#/items/0",
    "#/allOf/1",
    "#/a/\u00b2",
    "#/a/01",
    "#/a/+1",
    "#/a/" + "1" * 30,
    "#a",
    "#/%24defs/a",
    "#/a~1b",
    "a.json",
    "a.json#/x",
    "urn:x",
    "urn:x#a",
    "http://127.0.0.1:9/s.json",
    "file:///etc/passwd",
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2019-09/schema",
    "http://json-schema.org/draft-07/schema#",
    "http://json-schema.org/draft-04/schema#",
    "urn:unknown-dialect",
    "date-time",
    "email",
    "^a+$",
    "(a)\\1",
    "(?<n>a)\\k<n>",
    "\\p{L}+",
    "[\\d-z]",
    "(?=a)a",
    "a{" + "1" * 4301 + "}",
    "\\" + "1" * 4301,
    "a{2,1}",
    "(?i)a",
    "\\u{10FFFF}",
    "^(a+)+$",
)


def _schema(reader: Reader) -> Any:
    if reader.below(16) == 0:
        return reader.choice((True, False, {}, [], None, 1))
    return json_value(reader, KEYS, STRINGS, max_depth=6)


def check(data: bytes) -> None:
    reader = Reader(data[:2])
    dialect = reader.choice(schema.SUPPORTED_DIALECTS)
    instance = json_value(reader, ("a", "b", "0", ""), ("a", "aa", "x" * 40 + "!"), max_depth=3)
    document = json_input(data[2:], _schema)
    try:
        validator = schema.compile(document, default_dialect=dialect)
    except SchemaError as exc:
        assert str(exc)
        return
    valid = validator.is_valid(instance)
    assert isinstance(valid, bool)
    violations = validator.violations(instance, limit=3)
    assert isinstance(violations, list) and len(violations) <= 3
    assert all(isinstance(v, schema.Violation) for v in violations)
    assert (violations == []) == valid, "violations() and is_valid() disagree"
    try:
        validator.validate(instance)
    except schema.SchemaViolation:
        assert not valid
    else:
        assert valid
    if dialect == schema.DEFAULT_DIALECT:
        assert (schema.errors_for(document, instance, limit=3) == []) == valid


TARGET = Target(
    name="schema",
    description="JSON Schema + dialect + instance -> compile, validate",
    check=check,
    seeds=(
        b"\x00\x00"
        + b'{"type":"object","properties":{"a":{"type":"string","pattern":"a{'
        + b"1" * 4301
        + b'}"}}}',
        b"\x00\x00" + b'{"pattern":"\\\\' + b"1" * 4301 + b'"}',
        b"\x00\x00" + b'{"$ref":"#/a/\xc2\xb2","a":[]}',
        b"\x01\x05" + b'{"$ref":"#/x-list/01","x-list":[{},{"pattern":"^.$"}]}',
        b"\x02\x07" + b'{"$id":"urn:x","$defs":{"a":{"$anchor":"a"}},"$ref":"urn:x#a"}',
        b"\x00\x09" + b'{"$ref":"http://127.0.0.1:9/s.json"}',
        b"\x00\x03" + b'{"$schema":"urn:unknown-dialect"}',
        b"\x00\x01" + b'{"type":"string","pattern":"^(a+)+$"}',
    ),
    max_len=8192,
)

if __name__ == "__main__":
    from run import main

    main(["schema"])
