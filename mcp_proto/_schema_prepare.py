"""Preparing a JSON Schema for the engine (:mod:`mcp_proto.schema`): the dialect of the
document and of every embedded resource (never guessed; an unsupported one raises
``UnsupportedDialectError``), every reference checked to resolve inside the document,
and every ``pattern`` parsed as ECMA-262 and translated (``UnusablePatternError`` when
the engine cannot reproduce it, or when the patterns together exceed the compile
budget). Pure code."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

import attrs

from ._ecma_regex import PatternError, translate
from ._schema_refs import (
    _array_index,
    _pointer,
    _pointer_tokens,
    _resolve,
    _split_fragment,
    _unquote,
)
from .errors import SchemaError

DIALECT_2020_12: Final = "https://json-schema.org/draft/2020-12/schema"
DIALECT_2019_09: Final = "https://json-schema.org/draft/2019-09/schema"
DIALECT_DRAFT_07: Final = "http://json-schema.org/draft-07/schema#"
DEFAULT_DIALECT: Final = DIALECT_2020_12
SUPPORTED_DIALECTS: Final = (DIALECT_2020_12, DIALECT_2019_09, DIALECT_DRAFT_07)

_DRAFT_04: Final = "http://json-schema.org/draft-04/schema#"
_DRAFT_06: Final = "http://json-schema.org/draft-06/schema#"

# Accepted ``$schema`` values (with or without the empty fragment) -> dialect used.
_DIALECTS: Final[dict[str, str]] = {}
for _uri, _dialect in (
    (DIALECT_2020_12, DIALECT_2020_12),
    (DIALECT_2019_09, DIALECT_2019_09),
    (DIALECT_DRAFT_07, DIALECT_DRAFT_07),
    (_DRAFT_06, DIALECT_DRAFT_07),
    (_DRAFT_04, DIALECT_DRAFT_07),
):
    _bare = _uri.rstrip("#")
    _DIALECTS[_bare] = _DIALECTS[_bare + "#"] = _dialect

_SUPPORTED_TEXT: Final = (
    ", ".join(SUPPORTED_DIALECTS) + "; draft-04 and draft-06 are read as draft-07"
)

# The base URI of a document without ``$id`` (the engine's default too).
_DEFAULT_BASE: Final = "json-schema:///"


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Where subschemas live, per dialect (keywords whose value is a schema, a list of
# schemas, or a map of schemas). Values under any other keyword are data.
_SINGLE: Final[dict[str, frozenset[str]]] = {
    DIALECT_DRAFT_07: _words(
        "additionalItems additionalProperties contains not if then else propertyNames items"
    ),
    DIALECT_2019_09: _words(
        "additionalItems additionalProperties contains not if then else propertyNames items"
        " unevaluatedItems unevaluatedProperties contentSchema"
    ),
    DIALECT_2020_12: _words(
        "additionalProperties contains not if then else propertyNames items"
        " unevaluatedItems unevaluatedProperties contentSchema"
    ),
}
_LIST: Final[dict[str, frozenset[str]]] = {
    DIALECT_DRAFT_07: frozenset({"allOf", "anyOf", "oneOf", "items"}),
    DIALECT_2019_09: frozenset({"allOf", "anyOf", "oneOf", "items"}),
    DIALECT_2020_12: frozenset({"allOf", "anyOf", "oneOf", "prefixItems"}),
}
_MAP: Final[dict[str, frozenset[str]]] = {
    DIALECT_DRAFT_07: frozenset({"properties", "patternProperties", "definitions", "dependencies"}),
    DIALECT_2019_09: frozenset(
        {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
    ),
    DIALECT_2020_12: frozenset(
        {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
    ),
}
_REFERENCE_KEYWORDS: Final = ("$ref", "$dynamicRef", "$recursiveRef")
# Keywords present in a schema but not evaluated (annotations only).
_UNEVALUATED: Final = frozenset({"format", "contentSchema"})
# Keywords that read a subschema's outcome the other way round (a match can reject):
# there a subschema whose outcome rests on an unevaluated keyword is never read as a
# match (SCH-7; see _Preparer._relax).
_NEGATING: Final = frozenset({"not", "oneOf", "if", "maxContains"})
#: maxContains where its contains cannot be counted: no bound (a JSON integer).
_UNBOUNDED: Final = 2**53

_REASON_LIMIT: Final = 300  # characters of one violation's reason

# Compiling patterns costs time too (a Unicode class repeated 40 times takes the engine
# about 10 ms); a schema whose patterns together exceed this estimate (about half a
# second of engine work) is unusable rather than a way to stall the client.
_PATTERN_COST_BUDGET: Final = 2_000_000


class UnsupportedDialectError(SchemaError):
    """The schema declares a ``$schema`` dialect this client does not implement."""

    def __init__(self, message: str, dialect: object = None, detail: str | None = None) -> None:
        super().__init__(message)
        self.dialect = dialect
        self.detail = detail if detail is not None else message
        """The message without its subject: ``declares the JSON Schema dialect "urn:x":
        that dialect is not supported (supported: …)``, for callers that name the schema
        themselves (``input schema …``)."""


class ExternalReferenceError(SchemaError):
    """A reference needs a document outside the schema; it is never fetched."""

    def __init__(self, message: str, reference: str | None = None) -> None:
        super().__init__(message)
        self.reference = reference


class UnusablePatternError(SchemaError):
    """A ``pattern`` is not ECMA-262, or uses what the engine cannot reproduce."""

    def __init__(self, message: str, pattern: str | None = None) -> None:
        super().__init__(message)
        self.pattern = pattern


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _REASON_LIMIT else text[: _REASON_LIMIT - 1] + "…"


# ------------------------------------------------------------------------------ preparing


@attrs.define
class _Prepared:
    document: Any
    dialect: str
    backtracking: int  # lookaround/back-reference pattern occurrences
    sources: dict[str, str]  # translated pattern -> pattern as written
    unevaluated: frozenset[str]
    custom_metaschema: bool = False


def dialect_of(schema: Any, *, default: str = DEFAULT_DIALECT) -> str:
    """The dialect ``schema`` is read under (one of :data:`SUPPORTED_DIALECTS`).

    Raises:
        UnsupportedDialectError: ``$schema`` names another dialect.
        SchemaError: ``$schema`` is not a string.
    """
    if isinstance(schema, dict) and "$schema" in schema:
        return _dialect_for(schema["$schema"], "")
    return _default_dialect(default)


def _default_dialect(default: str) -> str:
    dialect = _DIALECTS.get(default)
    if dialect is None:
        detail = (
            f"names the JSON Schema dialect {json.dumps(default)}: that dialect is not"
            f" supported (supported: {_SUPPORTED_TEXT})"
        )
        raise UnsupportedDialectError(f"default_dialect {detail}", default, detail)
    return dialect


def _dialect_for(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise SchemaError(
            f"unusable JSON Schema: $schema{_at(where)} must be a string, not {_json_type(value)}"
        )
    dialect = _DIALECTS.get(value)
    if dialect is None:
        detail = (
            f"declares the JSON Schema dialect {json.dumps(value)}{_at(where)}: that dialect"
            f" is not supported (supported: {_SUPPORTED_TEXT})"
        )
        raise UnsupportedDialectError(f"the schema {detail}", value, detail)
    return dialect


def _at(where: str) -> str:
    return f" (at {where})" if where else ""


class _Preparer:
    """One pass over the schema: dialects, identifiers, anchors, patterns, references."""

    def __init__(
        self, root: Any, default_dialect: str, metaschemas: Mapping[str, Any] | None = None
    ) -> None:
        self.root = root
        self.default_dialect = default_dialect
        # Meta-schemas the caller supplied (resources=): a $schema naming one of them is
        # read by the engine from that document's $vocabulary, not guessed.
        self.metaschemas = metaschemas or {}
        self.custom_metaschema = False
        self.resources: dict[str, tuple[Any, str]] = {}  # URI -> (node, dialect)
        self.anchors: dict[tuple[str, str], int] = {}  # (resource URI, name) -> node id
        self.visited: set[int] = set()
        self.references: list[tuple[str, str, str]] = []  # (base, reference, dialect)
        self.edits: dict[int, dict[str, Any]] = {}  # node id -> replaced keyword values
        self.backtracking = 0
        self.pattern_cost = 0
        self.sources: dict[str, str] = {}
        self.unevaluated: set[str] = set()
        self.stack: list[tuple[Any, str, str, str, str]] = []
        # Nodes using a keyword of _NEGATING, with their dialect (for _relax).
        self.negating: list[tuple[dict[str, Any], str]] = []
        self.tainted: dict[int, bool] = {}

    def run(self) -> _Prepared:
        root = self.root
        dialect = self.default_dialect
        if isinstance(root, dict) and "$schema" in root:
            dialect = self._dialect(root["$schema"], "")
        self.stack.append((root, _DEFAULT_BASE, _DEFAULT_BASE, dialect, ""))
        self.resources[_DEFAULT_BASE] = (root, dialect)
        self._drain()
        self._follow_references()
        if self.unevaluated:
            self._relax()
        return _Prepared(
            self._rewrite(root),
            dialect,
            self.backtracking,
            self.sources,
            frozenset(self.unevaluated),
            self.custom_metaschema,
        )

    def _drain(self) -> None:
        while self.stack:
            self._visit(*self.stack.pop())

    def _visit(self, node: Any, base: str, resource: str, dialect: str, where: str) -> None:
        if not isinstance(node, dict) or id(node) in self.visited:
            return
        self.visited.add(id(node))
        is_resource_root = node is self.root
        if "$schema" in node and not is_resource_root:
            # The dialect of an embedded resource; rejected as for the root if unknown.
            declared = self._dialect(node["$schema"], where)
            if isinstance(node.get("$id"), str):
                dialect = declared
        if node.get("$schema") in (_DRAFT_04, _DRAFT_06, _DRAFT_04[:-1], _DRAFT_06[:-1]):
            self._edit(node, "$schema", DIALECT_DRAFT_07)
        base, resource = self._identify(node, base, resource, dialect, where)
        for keyword in _REFERENCE_KEYWORDS:
            value = node.get(keyword)
            if isinstance(value, str):
                self.references.append((base, value, dialect))
        if node.get("$ref") == "":
            # The empty reference names the current resource; jsonschema-rs ignores it.
            self._edit(node, "$ref", "#")
        recursive = node.get("$recursiveRef")
        if dialect == DIALECT_2019_09 and recursive is not None and recursive != "#":
            raise SchemaError(
                f"unusable JSON Schema: $recursiveRef at {where or '(root)'} must be '#',"
                f" not {_short(json.dumps(recursive))}"
            )
        for keyword in _UNEVALUATED & node.keys():
            self.unevaluated.add(keyword)
        if not _NEGATING.isdisjoint(node.keys()):
            self.negating.append((node, dialect))
        pattern = node.get("pattern")
        if isinstance(pattern, str):
            target = self._translate(pattern, f"{where}/pattern")
            if target != pattern:
                self._edit(node, "pattern", target)
        properties = node.get("patternProperties")
        if isinstance(properties, dict):
            self._pattern_properties(node, properties, f"{where}/patternProperties")
        self._children(node, base, resource, dialect, where)

    def _dialect(self, value: object, where: str) -> str:
        seen: set[str] = set()
        while isinstance(value, str) and value not in _DIALECTS and value in self.metaschemas:
            if value in seen:
                break
            seen.add(value)
            self.custom_metaschema = True
            metaschema = self.metaschemas[value]
            value = metaschema.get("$schema") if isinstance(metaschema, dict) else None
        return _dialect_for(value, where)

    def _identify(
        self, node: dict[str, Any], base: str, resource: str, dialect: str, where: str
    ) -> tuple[str, str]:
        """Register ``$id`` and anchors; return the (base, resource) in force inside."""
        identifier = node.get("$id")
        if isinstance(identifier, str) and not (dialect == DIALECT_DRAFT_07 and "$ref" in node):
            if dialect == DIALECT_DRAFT_07 and identifier.startswith("#"):
                self._anchor(resource, identifier[1:], node, where)
            else:
                uri, fragment = _split_fragment(_resolve(base, identifier))
                if uri in self.resources and self.resources[uri][0] is not node:
                    raise SchemaError(
                        f"unusable JSON Schema: $id {identifier!r} at {where or '(root)'}"
                        f" resolves to {uri!r}, which another subschema already declares"
                    )
                self.resources[uri] = (node, dialect)
                base = resource = uri
                if fragment and dialect == DIALECT_DRAFT_07:
                    self._anchor(resource, fragment, node, where)
        for keyword in ("$anchor", "$dynamicAnchor"):
            name = node.get(keyword)
            if isinstance(name, str) and dialect != DIALECT_DRAFT_07:
                if keyword == "$dynamicAnchor" and dialect != DIALECT_2020_12:
                    continue
                self._anchor(resource, name, node, where)
        return base, resource

    def _anchor(self, resource: str, name: str, node: Any, where: str) -> None:
        key = (resource, name)
        if key in self.anchors and self.anchors[key] != id(node):
            raise SchemaError(
                f"unusable JSON Schema: the anchor {name!r} at {where or '(root)'} is declared"
                f" twice in the resource {resource!r}"
            )
        self.anchors[key] = id(node)

    def _children(
        self, node: dict[str, Any], base: str, resource: str, dialect: str, where: str
    ) -> None:
        push = self.stack.append
        for keyword, value in node.items():
            here = f"{where}/{_pointer([keyword])[1:]}"
            if keyword in _SINGLE[dialect] and isinstance(value, dict):
                push((value, base, resource, dialect, here))
            elif keyword in _LIST[dialect] and isinstance(value, list):
                for i, item in enumerate(value):
                    push((item, base, resource, dialect, f"{here}/{i}"))
            elif keyword in _MAP[dialect] and isinstance(value, dict):
                for name, item in value.items():
                    push((item, base, resource, dialect, f"{here}/{_pointer([name])[1:]}"))

    def _translate(self, pattern: str, where: str) -> str:
        try:
            translation = translate(pattern)
        except PatternError as exc:
            kind = (
                "uses a construct the regex engine cannot reproduce exactly"
                if exc.unsupported
                else "is not an ECMA-262 regular expression"
            )
            raise UnusablePatternError(
                f"unusable JSON Schema: the pattern {pattern!r} at {where} {kind}: {exc}",
                pattern,
            ) from None
        if translation.backtracking:
            self.backtracking += 1
        self.pattern_cost += translation.cost
        if self.pattern_cost > _PATTERN_COST_BUDGET:
            raise UnusablePatternError(
                f"unusable JSON Schema: its patterns are too large to compile (at {where}:"
                " more engine work than the compile budget allows)",
                pattern,
            )
        self.sources.setdefault(translation.target, pattern)
        return translation.target

    def _pattern_properties(
        self, node: dict[str, Any], properties: dict[str, Any], where: str
    ) -> None:
        rewritten: dict[str, Any] = {}
        changed = False
        for key, subschema in properties.items():
            target = (
                self._translate(key, f"{where}/{_pointer([key])[1:]}")
                if isinstance(key, str)
                else key
            )
            changed = changed or target != key
            if target in rewritten:
                # Two patterns that mean the same: both subschemas apply, as before.
                rewritten[target] = {"allOf": [rewritten[target], subschema]}
                changed = True
            else:
                rewritten[target] = subschema
        if changed:
            self._edit(node, "patternProperties", rewritten)

    # ---------------------------------------------------------------- SCH-7

    def _relax(self) -> None:
        """An unevaluated keyword (``format``) is never read as a match (SCH-7).

        The engine reads ``format`` as an annotation that always matches. Where a match
        can only let data through (``allOf``, ``anyOf``, ``properties``...) that is what
        partial validation means. Where a match can reject, it would reject valid data:
        ``{"not": {"format": "email"}}`` every string, a ``oneOf`` branch holding only a
        ``format`` whatever else matches. There a subschema whose outcome may rest on an
        unevaluated keyword (``tainted``) is read as "maybe": the keyword keeps only
        what is certain, so validation stays partial and never rejects valid data:

        * ``not: S`` → ``not: false`` (S may not match: nothing to reject);
        * ``oneOf: [B...]`` → some branch may match, and no two untainted ones do;
        * ``if: S, then: T, else: E`` → ``(S and T) or E`` (which branch applies is
          not known);
        * ``maxContains`` over a tainted ``contains`` → no bound (matches are not
          counted for certain).
        """
        for node, dialect in self.negating:
            edits: dict[str, Any] = {}
            sub = node.get("not")
            if isinstance(sub, (dict, bool)) and self._is_tainted(sub, dialect):
                edits["not"] = False
            branches = node.get("oneOf")
            if isinstance(branches, list) and any(self._is_tainted(b, dialect) for b in branches):
                exact = [b for b in branches if not self._is_tainted(b, dialect)]
                relaxed: dict[str, Any] = {"anyOf": branches}
                if len(exact) > 1:  # at most one of them: exactly one of them-or-none
                    relaxed = {"allOf": [relaxed, {"oneOf": [*exact, {"not": {"anyOf": exact}}]}]}
                edits["oneOf"] = [relaxed]
            condition = node.get("if")
            if isinstance(condition, (dict, bool)) and self._is_tainted(condition, dialect):
                then = node.get("then", True)
                otherwise = node.get("else", True)
                edits["if"] = True
                edits["then"] = {"anyOf": [{"allOf": [condition, then]}, otherwise]}
            contains = node.get("contains")
            if "maxContains" in node and self._is_tainted(contains, dialect):
                edits["maxContains"] = _UNBOUNDED
            for keyword, value in edits.items():
                self._edit(node, keyword, value)

    def _is_tainted(self, node: Any, dialect: str) -> bool:
        """Whether ``node``'s outcome may rest on an unevaluated keyword: one in its
        subschemas, or a reference (its target is not followed here; only called when
        the document uses an unevaluated keyword somewhere)."""
        if not isinstance(node, dict):
            return False
        known = self.tainted.get(id(node))
        if known is not None:
            return known
        self.tainted[id(node)] = False  # (a cycle adds nothing)
        found = not _UNEVALUATED.isdisjoint(node.keys()) or any(
            keyword in node for keyword in _REFERENCE_KEYWORDS
        )
        if not found:
            for keyword, value in node.items():
                if keyword in _SINGLE[dialect]:
                    found = self._is_tainted(value, dialect)
                elif keyword in _LIST[dialect] and isinstance(value, list):
                    found = any(self._is_tainted(v, dialect) for v in value)
                elif keyword in _MAP[dialect] and isinstance(value, dict):
                    found = any(self._is_tainted(v, dialect) for v in value.values())
                if found:
                    break
        self.tainted[id(node)] = found
        return found

    def _edit(self, node: dict[str, Any], keyword: str, value: Any) -> None:
        self.edits.setdefault(id(node), {})[keyword] = value

    def _follow_references(self) -> None:
        """Subschemas reached only through a JSON Pointer (say, under an unknown keyword)
        are schemas too: walk them like the rest."""
        done = 0
        while done < len(self.references):
            base, reference, dialect = self.references[done]
            done += 1
            uri, fragment = _split_fragment(_resolve(base, reference))
            tokens = _pointer_tokens(_unquote(fragment))
            if uri not in self.resources or not tokens:
                continue
            node, dialect = self.resources[uri]
            resource = uri
            for token in tokens:
                if isinstance(node, dict) and token in node:
                    node = node[token]
                elif isinstance(node, list) and (index := _array_index(token, len(node))) >= 0:
                    node = node[index]
                else:
                    node = None
                    break
                if isinstance(node, dict) and isinstance(node.get("$id"), str):
                    resource = _split_fragment(_resolve(resource, node["$id"]))[0]
            if isinstance(node, dict) and id(node) not in self.visited:
                self.stack.append((node, resource, resource, dialect, f"{uri}#{fragment}"))
                self._drain()

    def _rewrite(self, node: Any) -> Any:
        """A copy of the document with the edits applied (the original is never changed)."""
        if not self.edits:
            return node
        memo: dict[int, Any] = {}

        def copy_of(value: Any) -> Any:
            if isinstance(value, dict):
                if id(value) in memo:
                    return memo[id(value)]
                edits = self.edits.get(id(value), {})
                out: dict[str, Any] = {}
                memo[id(value)] = out
                for key, item in value.items():
                    out[key] = copy_of(edits.get(key, item))
                for key in edits.keys() - value.keys():  # (added: an absent `then`)
                    out[key] = copy_of(edits[key])
                return out
            if isinstance(value, list):
                return [copy_of(item) for item in value]
            return value

        return copy_of(node)
