"""``mcp_proto.schema``: the API, unusable-versus-invalid, identifiers, the cache."""

from __future__ import annotations

import copy
import json
from types import MappingProxyType
from typing import Any

import pytest

from mcp_proto import schema
from mcp_proto.errors import SchemaError, ValidationError

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 1},
        "temp": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}},
    },
    "required": ["city", "temp"],
    "additionalProperties": False,
}


# ------------------------------------------------------------------ results


def test_valid_and_invalid() -> None:
    validator = schema.compile(WEATHER)
    assert validator.is_valid({"city": "Oslo", "temp": -3.5, "tags": ["cold"]})
    assert validator.violations({"city": "Oslo", "temp": 1}) == []
    validator.validate({"city": "Oslo", "temp": 1})
    assert not validator.is_valid({"city": "Oslo"})


def test_violation_paths_and_reasons() -> None:
    validator = schema.compile(WEATHER)
    bad = {"city": "", "temp": "warm", "tags": ["ok", "NOT"], "wind": 3}
    found = {(v.path, v.keyword): v for v in validator.violations(bad, limit=10)}
    assert set(found) == {
        ("/city", "minLength"),
        ("/temp", "type"),
        ("/tags/1", "pattern"),
        ("", "additionalProperties"),
    }
    assert found["/temp", "type"].reason == "expected number, got string"
    assert found["/tags/1", "pattern"].reason == "does not match the pattern '^[a-z]+$'"
    assert found["", "additionalProperties"].reason == "unexpected property 'wind'"
    assert found["/tags/1", "pattern"].schema_path == "/properties/tags/items/pattern"
    assert str(found["/temp", "type"]) == "at /temp: expected number, got string"
    missing = validator.violations({"temp": 1})
    assert [str(v) for v in missing] == ["at (root): missing required property 'city'"]


def test_validate_raises_a_validation_error_with_path_and_reason() -> None:
    validator = schema.compile(WEATHER)
    with pytest.raises(ValidationError) as info:
        validator.validate({"city": "Oslo", "temp": None})
    error = info.value
    assert isinstance(error, schema.SchemaViolation)
    assert not isinstance(error, SchemaError)  # invalid data, not an unusable schema
    assert error.path == "/temp"
    assert error.reason == "expected number, got null"
    assert str(error) == "at /temp: expected number, got null"
    assert error.violations[0].keyword == "type"


def test_json_pointer_escaping_in_paths() -> None:
    validator = schema.compile({"properties": {"a/b": {"properties": {"c~d": {"type": "null"}}}}})
    (violation,) = validator.violations({"a/b": {"c~d": 1}})
    assert violation.path == "/a~1b/c~0d"


def test_limit() -> None:
    validator = schema.compile({"type": "array", "items": {"type": "integer"}})
    assert len(validator.violations(["x"] * 50, limit=3)) == 3
    assert len(schema.errors_for({"type": "array", "items": {"type": "integer"}}, ["x"] * 9)) == 5
    assert len(schema.errors_for({"items": {"type": "integer"}}, ["x"] * 9, limit=1)) == 1


def test_reasons_do_not_echo_peer_data() -> None:
    secret = "s3cr3t-" + "x" * 100_000
    validator = schema.compile({"type": "object", "properties": {"a": {"type": "integer"}}})
    (violation,) = validator.violations({"a": secret})
    assert "s3cr3t" not in violation.reason
    for reason in schema.errors_for({"enum": [1, 2]}, secret) + schema.errors_for(
        {"not": {"type": "string"}}, secret
    ):
        assert "s3cr3t" not in reason
        assert len(reason) < 400


def test_errors_for_keeps_its_contract() -> None:
    assert schema.errors_for(WEATHER, {"city": "x", "temp": 0}) == []
    assert schema.errors_for({"type": "string"}, 5) == ["at (root): expected string, got integer"]
    with pytest.raises(SchemaError):
        schema.errors_for({"type": 5}, 5)


@pytest.mark.parametrize(
    "instance",
    [
        {1, 2},
        object(),
        {1: "non-string key"},
        "lone \ud800 surrogate",
        [float("nan")],
    ],
    ids=["set", "object", "int-key", "lone-surrogate", "nan"],
)
def test_non_json_instances_do_not_crash(instance: Any) -> None:
    validator = schema.compile({"type": ["array", "object", "string"], "minItems": 1})
    assert validator.is_valid(instance) in (True, False)
    if not validator.is_valid(instance):
        assert validator.violations(instance)


def test_any_mapping_is_a_schema() -> None:
    frozen = MappingProxyType(
        {
            "type": "object",
            "properties": MappingProxyType({"a": MappingProxyType({"type": "integer"})}),
        }
    )
    validator = schema.compile(frozen)
    assert validator.is_valid({"a": 1})
    assert not validator.is_valid({"a": "1"})
    assert schema.errors_for(frozen, {"a": "1"}) == ["at /a: expected integer, got string"]


def test_big_numbers() -> None:
    validator = schema.compile({"type": "integer", "maximum": 10})
    assert not validator.is_valid(10**40)
    assert schema.compile({"type": "integer"}).is_valid(10**40)


def test_boolean_schemas() -> None:
    assert schema.compile(True).is_valid({"anything": [1]})
    assert not schema.compile(False).is_valid(None)
    assert schema.errors_for(False, 1) != []


# ------------------------------------------------------------------ unusable schemas


@pytest.mark.parametrize(
    "bad",
    [
        {"type": 5},
        {"type": "strin"},
        {"minLength": "3"},
        {"required": "name"},
        {"properties": {"a": 5}},
        {"title": 3},  # metadata keywords too (SCH-13)
        {"description": ["x"]},
        {"$defs": {"a": {"type": "integer"}}, "$ref": "#/$defs/missing"},
        {"$ref": "#nowhere"},
        {"pattern": 5},
    ],
)
def test_unusable_schema_is_a_schema_error(bad: Any) -> None:
    with pytest.raises(SchemaError) as info:
        schema.compile(bad)
    assert "unusable JSON Schema" in str(info.value)


@pytest.mark.parametrize("bad", [5, "string", None, [], 1.5])
def test_a_schema_is_an_object_or_a_boolean(bad: Any) -> None:
    with pytest.raises(SchemaError, match="object or a boolean"):
        schema.compile(bad)


def test_not_json_schema_data() -> None:
    with pytest.raises(SchemaError, match="not JSON"):
        schema.compile({"const": {1, 2}})
    with pytest.raises(SchemaError, match="not JSON"):
        schema.compile({"minimum": float("nan")})


DUPLICATES = [
    {"$defs": {"a": {"$id": "urn:x"}, "b": {"$id": "urn:x"}}},
    {"$id": "https://example.com/root.json", "$defs": {"a": {"$id": "root.json"}}},
    {
        "$id": "https://example.com/dir/",
        "$defs": {"a": {"$id": "x.json"}, "b": {"$id": "https://example.com/dir/x.json"}},
    },
    {"$defs": {"a": {"$anchor": "here"}, "b": {"$anchor": "here"}}},
    {"$defs": {"a": {"$anchor": "here"}, "b": {"$dynamicAnchor": "here"}}},
    {"$schema": schema.DIALECT_DRAFT_07, "definitions": {"a": {"$id": "#x"}, "b": {"$id": "#x"}}},
    {
        "$schema": schema.DIALECT_2019_09,
        "$defs": {"a": {"$anchor": "n"}, "b": {"$anchor": "n"}},
    },
]


@pytest.mark.parametrize("bad", DUPLICATES)
def test_colliding_identifiers_make_the_schema_unusable(bad: Any) -> None:
    with pytest.raises(SchemaError, match=r"already declares|declared twice"):
        schema.compile(bad)


def test_identifiers_that_do_not_collide() -> None:
    fine = [
        # the same anchor in two resources
        {"$defs": {"a": {"$id": "urn:a", "$anchor": "n"}, "b": {"$id": "urn:b", "$anchor": "n"}}},
        # an "$id" inside data is not an identifier
        {"$id": "urn:root", "enum": [{"$id": "urn:root"}], "const": {"$id": "urn:root"}},
        {
            "$defs": {"a": {"$id": "urn:x"}},
            "examples": [{"$id": "urn:x"}],
            "default": {"$id": "urn:x"},
        },
        # an unknown keyword's content is not a subschema
        {"$defs": {"a": {"$id": "urn:x"}}, "x-vendor": {"$id": "urn:x"}},
        # draft-07 ignores an $id beside $ref
        {
            "$schema": schema.DIALECT_DRAFT_07,
            "definitions": {"a": {"$id": "urn:x"}},
            "allOf": [{"$id": "urn:x", "$ref": "#/definitions/a"}],
        },
        # the same anchor and dynamic anchor on one subschema
        {"$defs": {"a": {"$anchor": "n", "$dynamicAnchor": "n"}}},
    ]
    for ok in fine:
        schema.compile(ok)


def test_unusable_and_invalid_are_reported_apart() -> None:
    with pytest.raises(SchemaError):
        schema.compile({"type": "objekt"})
    with pytest.raises(ValidationError) as info:
        schema.compile({"type": "object"}).validate([])
    assert not isinstance(info.value, SchemaError)


# ------------------------------------------------------------------ pass-through


def test_compile_never_changes_the_schema() -> None:
    original = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "patternProperties": {"^\\d+$": {"pattern": "\\bx.$"}},
        "properties": {"a": {"$ref": ""}},
        "definitions": {"d": {"pattern": "\\w"}},
    }
    snapshot = copy.deepcopy(original)
    schema.compile(original)
    assert original == snapshot
    assert json.dumps(original, sort_keys=True) == json.dumps(snapshot, sort_keys=True)


def test_unevaluated_keywords_are_reported() -> None:
    assert schema.compile(WEATHER).unevaluated == frozenset()
    partial = schema.compile(
        {
            "properties": {
                "when": {"type": "string", "format": "date-time"},
                "doc": {
                    "contentMediaType": "application/json",
                    "contentSchema": {"type": "object"},
                },
            }
        }
    )
    assert partial.unevaluated == {"format", "contentSchema"}
    assert partial.is_valid({"when": "not a date"})  # format is an annotation


@pytest.mark.parametrize(
    ("document", "valid", "invalid"),
    [
        # Read as a match, the format made `not` reject every string.
        ({"not": {"format": "email"}}, ["a@b.example", "not an email", 3], []),
        ({"not": {"not": {"format": "email"}}}, ["x", 3], []),
        # What does not rest on the format is still evaluated.
        ({"not": {"type": "string"}, "properties": {"a": {"format": "email"}}}, [3], ["x"]),
        # A oneOf branch holding only a format matched whatever else did.
        ({"oneOf": [{"format": "email"}, {"type": "string"}]}, ["x", "a@b.example"], []),
        ({"oneOf": [{"format": "email"}, {"type": "integer"}]}, ["x", 3], []),
        (
            {"oneOf": [{"format": "email"}, {"type": "integer"}, {"minimum": 0}]},
            ["x", -3],
            [3],  # two untainted branches match: certain, still refused
        ),
        ({"oneOf": [{"format": "email"}, {"format": "uri"}], "type": "string"}, ["x"], [3]),
        # if: which branch applies is not known; one of them must hold.
        (
            {"if": {"format": "email"}, "then": {"minLength": 5}, "else": {"type": "integer"}},
            ["abcdef", 3],
            ["x"],
        ),
        ({"if": {"format": "email"}, "then": {"minLength": 5}}, ["x", "abcdef"], []),
        # Matches of a format-only `contains` cannot be counted.
        ({"contains": {"format": "email"}, "maxContains": 1}, [["a", "b"]], []),
        # A reference: its target is not followed, so it is not trusted either.
        ({"$defs": {"e": {"format": "email"}}, "not": {"$ref": "#/$defs/e"}}, ["x"], []),
    ],
)
def test_an_unevaluated_keyword_is_never_read_as_a_match(
    document: dict[str, Any], valid: list[Any], invalid: list[Any]
) -> None:
    # SCH-7: validation is partial (the validator says so), never wrong the other way.
    validator = schema.compile(document)
    assert validator.unevaluated == {"format"}
    assert [v for v in valid if not validator.is_valid(v)] == []
    assert [v for v in invalid if validator.is_valid(v)] == []


def test_composition_without_unevaluated_keywords_is_unchanged() -> None:
    validator = schema.compile({"not": {"type": "string"}, "oneOf": [{"minimum": 0}, {}]})
    assert validator.unevaluated == frozenset()
    assert not validator.is_valid("x")
    assert not validator.is_valid(3)  # both oneOf branches match


# ------------------------------------------------------------------ cache


def test_built_once_per_canonical_schema() -> None:
    one = schema.compile({"type": "object", "required": ["a"], "title": "t"})
    two = schema.compile({"title": "t", "required": ["a"], "type": "object"})
    assert one is two
    other = schema.compile(
        {"title": "t", "required": ["a"], "type": "object"}, default_dialect=schema.DIALECT_DRAFT_07
    )
    assert other is not one


def test_unusable_schemas_are_remembered_too() -> None:
    bad = {"type": "objekt", "x": "remembered"}
    with pytest.raises(SchemaError) as first:
        schema.compile(bad)
    with pytest.raises(SchemaError) as second:
        schema.compile(copy.deepcopy(bad))
    assert type(first.value) is type(second.value)
    assert str(first.value) == str(second.value)
    assert first.value is not second.value


def test_cache_is_bounded_in_entries() -> None:
    limit = schema._CACHE.max_entries
    for i in range(limit + 50):
        schema.compile({"type": "object", "title": f"bounded {i}"})
        assert len(schema._CACHE) <= limit
    assert len(schema._CACHE) == limit
    newest = schema.compile({"type": "object", "title": f"bounded {limit + 49}"})
    assert newest is schema.compile({"type": "object", "title": f"bounded {limit + 49}"})
    first = schema.compile({"type": "object", "title": "bounded 0"})  # evicted, rebuilt
    assert first.is_valid({})


def test_cache_is_bounded_in_size() -> None:
    cache = schema._Cache(max_entries=100, max_chars=1000)
    validator = schema.compile(True)
    for i in range(20):
        cache.put(f"{i:04d}" + "x" * 96, validator)  # 100 characters each
        assert cache.chars <= 1000
    assert len(cache) == 10
    assert cache.get("0000" + "x" * 96) is None  # the oldest went first
    assert cache.get("0019" + "x" * 96) is validator
    cache.put("y" * 5000, validator)  # larger than the whole cache: not kept
    assert cache.get("y" * 5000) is None
    assert len(cache) == 10


def test_huge_schema_is_not_cached_but_still_works() -> None:
    huge = {"enum": ["v" * 1000] * 20_000, "title": "huge"}
    before = len(schema._CACHE)
    validator = schema.compile(huge)
    assert validator.is_valid("v" * 1000)
    assert len(schema._CACHE) <= max(before, 1) + 1
    assert all(len(key) <= schema._CACHE.max_chars for key in schema._CACHE.entries)


def test_resources_are_test_only_and_not_cached() -> None:
    remote = {"$id": "http://localhost:1234/int.json", "type": "integer"}
    with pytest.raises(schema.ExternalReferenceError):
        schema.compile({"$ref": "http://localhost:1234/int.json"})
    validator = schema.compile(
        {"$ref": "http://localhost:1234/int.json"},
        resources={"http://localhost:1234/int.json": remote},
    )
    assert validator.is_valid(1) and not validator.is_valid("1")
    again = schema.compile(
        {"$ref": "http://localhost:1234/int.json"},
        resources={"http://localhost:1234/int.json": remote},
    )
    assert again is not validator
