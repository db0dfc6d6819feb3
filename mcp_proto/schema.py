"""JSON Schema validation: a thin, always-offline adapter over jsonschema-rs.

``compile(schema)`` gives a :class:`Validator` (``is_valid``, ``validate``,
``violations``). What this module adds to the engine:

* **Dialect, never guessed.** ``$schema`` picks 2020-12, 2019-09 or draft-07 (draft-04 and
  draft-06 are read as draft-07); no ``$schema`` means 2020-12, MCP's default. Any other
  value — in the root or in an embedded resource — raises :class:`UnsupportedDialectError`.
* **Offline.** No network fetch and no file read, ever: references resolve inside the
  document (embedded ``$id``s included); a reference to anything else raises
  :class:`ExternalReferenceError`.
* **Unusable is not invalid.** A schema the engine cannot honour (bad keyword value,
  colliding ``$id``s or anchors, external ``$ref``, a ``pattern`` that is not ECMA-262)
  raises :class:`~mcp_proto.errors.SchemaError`; data that breaks a usable schema raises
  :class:`SchemaViolation`. Both are :class:`~mcp_proto.errors.ValidationError`\\ s, so
  catch ``SchemaError`` first.
* **ECMA-262 patterns.** Every ``pattern`` and ``patternProperties`` key is parsed as
  ECMA-262 and handed to the engine translated (:mod:`mcp_proto._ecma_regex`); what the
  engine cannot reproduce makes the schema unusable. See ``docs/json-schema.md``.
* **Bounded time.** Patterns without lookaround or back-references run on a linear-time
  engine. The others run on a backtracking engine whose step limit is set, per
  validation, from the instance's size so the whole validation stays within a fixed
  work budget; running out fails the validation, it never passes it.
* **Built once.** Validators are cached per canonical schema, with a bound.

Pure code: no I/O, no clock, no threads.
"""

from __future__ import annotations

import copy
import json
import re
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Final

import attrs
import jsonschema_rs

from ._ecma_regex import PatternError, translate
from .errors import SchemaError, ValidationError

__all__ = [
    "DEFAULT_DIALECT",
    "DIALECT_2019_09",
    "DIALECT_2020_12",
    "DIALECT_DRAFT_07",
    "SUPPORTED_DIALECTS",
    "ExternalReferenceError",
    "SchemaError",
    "SchemaViolation",
    "UnsupportedDialectError",
    "UnusablePatternError",
    "ValidationError",
    "Validator",
    "Violation",
    "compile",
    "dialect_of",
    "errors_for",
]

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

_ENGINE_CLASSES: Final[dict[str, Any]] = {
    DIALECT_2020_12: jsonschema_rs.Draft202012Validator,
    DIALECT_2019_09: jsonschema_rs.Draft201909Validator,
    DIALECT_DRAFT_07: jsonschema_rs.Draft7Validator,
}
_ENGINE_DRAFTS: Final[dict[str, int]] = {
    DIALECT_2020_12: jsonschema_rs.Draft202012,
    DIALECT_2019_09: jsonschema_rs.Draft201909,
    DIALECT_DRAFT_07: jsonschema_rs.Draft7,
}
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

# --- the backtracking budget --------------------------------------------------------------
# A lookaround or back-reference pattern runs on fancy-regex's backtracking VM. Its step
# limit bounds one match; one step can cost up to the length of the string. The limit is
# chosen per validation so that (steps) x (characters) over every match stays within
# _WORK_BUDGET (about a third of a second on a 2024 laptop), between the two bounds below.
_WORK_BUDGET: Final = 200_000_000
_STEP_OVERHEAD: Final = 16  # a step on a short string costs about 16 characters' worth
_MAX_STEPS: Final = 1_000_000  # fancy-regex's own default
_MIN_STEPS: Final = 100
_STEP_TIERS: Final = (1_000_000, 300_000, 100_000, 30_000, 10_000, 3_000, 1_000, 300, 100)

# Compiling patterns costs time too (a Unicode class repeated 40 times takes the engine
# about 10 ms); a schema whose patterns together exceed this estimate (about half a
# second of engine work) is unusable rather than a way to stall the client.
_PATTERN_COST_BUDGET: Final = 2_000_000

# --- the cache ----------------------------------------------------------------------------
_CACHE_MAX_ENTRIES: Final = 256
_CACHE_MAX_CHARS: Final = 16 * 1024 * 1024  # of canonical schema text, all entries together

_REASON_LIMIT: Final = 300  # characters of one violation's reason
_MASK: Final = "value"  # the engine writes this instead of the (peer-sent) instance


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


@attrs.frozen
class Violation:
    """One way an instance breaks a schema."""

    path: str
    """JSON Pointer to the offending value in the instance (``""``: the instance)."""
    keyword: str
    """The schema keyword that failed (``type``, ``required``, ``pattern``…)."""
    reason: str
    """Readable explanation; never repeats the (peer-sent) value itself."""
    schema_path: str = ""
    """JSON Pointer to the failing keyword in the schema."""

    def __str__(self) -> str:
        return f"at {self.path or '(root)'}: {self.reason}"


class SchemaViolation(ValidationError):
    """An instance does not match a (usable) schema."""

    def __init__(self, violations: tuple[Violation, ...] | list[Violation]) -> None:
        self.violations = tuple(violations)
        first = self.violations[0] if self.violations else Violation("", "", "invalid")
        self.path = first.path
        self.reason = first.reason
        text = "; ".join(str(v) for v in self.violations) or "the value does not match"
        super().__init__(text)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.violations,))


# ------------------------------------------------------------------------------ URIs

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

    def run(self) -> _Prepared:
        root = self.root
        dialect = self.default_dialect
        if isinstance(root, dict) and "$schema" in root:
            dialect = self._dialect(root["$schema"], "")
        self.stack.append((root, _DEFAULT_BASE, _DEFAULT_BASE, dialect, ""))
        self.resources[_DEFAULT_BASE] = (root, dialect)
        self._drain()
        self._follow_references()
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
                return out
            if isinstance(value, list):
                return [copy_of(item) for item in value]
            return value

        return copy_of(node)


# ------------------------------------------------------------------------------ validator


class Validator:
    """A compiled schema. Thread-compatible; reuse it for many instances."""

    def __init__(
        self,
        prepared: _Prepared,
        build: Any,
    ) -> None:
        self.dialect: str = prepared.dialect
        """The dialect the schema is read under (one of :data:`SUPPORTED_DIALECTS`)."""
        self.unevaluated: frozenset[str] = prepared.unevaluated
        """Keywords present in the schema that are not evaluated (``format``,
        ``contentSchema``): validation is partial when this is not empty."""
        self.backtracking_patterns: int = prepared.backtracking
        self._sources = prepared.sources
        self._document = prepared.document
        self._build = build
        self._engines: dict[int | None, Any] = {}
        default = None if prepared.backtracking == 0 else _MAX_STEPS
        self._engines[default] = build(default)

    def __repr__(self) -> str:
        return f"<mcp_proto.schema.Validator {self.dialect}>"

    def _engine(self, instance: Any) -> Any:
        if self.backtracking_patterns == 0:
            return self._engines[None]
        work = _string_work(instance) * self.backtracking_patterns
        allowed = max(_MIN_STEPS, min(_MAX_STEPS, _WORK_BUDGET // max(work, 1)))
        steps = next(t for t in _STEP_TIERS if t <= allowed)
        engine = self._engines.get(steps)
        if engine is None:
            engine = self._engines[steps] = self._build(steps)
        return engine

    def is_valid(self, instance: Any) -> bool:
        """Whether ``instance`` matches. Data that is not JSON does not match."""
        try:
            return bool(self._engine(instance).is_valid(instance))
        except (ValueError, TypeError, OverflowError, UnicodeError, RecursionError):
            return False

    def violations(self, instance: Any, limit: int = 5) -> list[Violation]:
        """Up to ``limit`` ways ``instance`` breaks the schema (empty: it matches)."""
        engine = self._engine(instance)
        try:
            if engine.is_valid(instance):
                return []
            out: list[Violation] = []
            for error in engine.iter_errors(instance):
                out.append(self._violation(error))
                if len(out) >= limit:
                    break
        except (ValueError, TypeError, OverflowError, UnicodeError, RecursionError) as exc:
            return [Violation("", "", f"the value is not JSON data ({_short(str(exc))})")]
        return out or [Violation("", "", "the value does not match the schema")]

    def validate(self, instance: Any) -> None:
        """Raise :class:`SchemaViolation` (a ``ValidationError``) if ``instance`` does not
        match; its message names the path and the reason of each violation found."""
        if self.is_valid(instance):
            return
        raise SchemaViolation(self.violations(instance))

    def _violation(self, error: Any) -> Violation:
        kind = error.kind
        kind_name = type(kind).__name__
        schema_path = list(error.schema_path)
        keyword = str(schema_path[-1]) if schema_path else ""
        path = _pointer(error.instance_path)
        if kind_name == "Pattern":
            reason = f"does not match the pattern {self._source(kind.pattern)!r}"
        elif kind_name == "BacktrackLimitExceeded":
            pattern = self._pattern_at(schema_path)
            reason = (
                f"matching the pattern {pattern!r} ran out of its work budget; the value is"
                " treated as not matching"
                if pattern is not None
                else "pattern matching ran out of its work budget; the value is treated as"
                " not matching"
            )
        elif kind_name == "Type":
            reason = f"expected {' or '.join(kind.types)}, got {_json_type(error.instance)}"
        elif kind_name == "Required":
            reason = f"missing required property {kind.property!r}"
        elif kind_name in ("AdditionalProperties", "UnevaluatedProperties"):
            names = ", ".join(repr(n) for n in kind.unexpected)
            reason = f"unexpected propert{'y' if len(kind.unexpected) == 1 else 'ies'} {names}"
        else:
            reason = str(error.message)
        return Violation(path, keyword, _short(reason), _pointer(schema_path))

    def _source(self, target: str) -> str:
        return self._sources.get(target, target)

    def _pattern_at(self, schema_path: list[str | int]) -> str | None:
        node = self._document
        for part in schema_path:
            if isinstance(node, dict) and part in node:  # noqa: SIM114
                node = node[part]
            elif isinstance(node, list) and isinstance(part, int) and part < len(node):
                node = node[part]
            else:
                return None
        if isinstance(node, str):
            return self._source(node)
        return None


def _string_work(instance: Any) -> int:
    """Characters in every string and key of ``instance``, plus an overhead per string."""
    total = 0
    stack = [instance]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            total += len(value) + _STEP_OVERHEAD
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str):
                    total += len(key) + _STEP_OVERHEAD
                stack.append(item)
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
    return total


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


# ------------------------------------------------------------------------------ compile

_EXTERNAL = re.compile(r"Resource '([^']*)' is not present in a registry")


def _engine_error(exc: BaseException, prepared: _Prepared) -> SchemaError:
    """Turn an engine complaint about a schema into the right ``SchemaError``."""
    message = str(exc).split("\n\n", 1)[0].strip()
    external = _EXTERNAL.search(message)
    if external is not None:
        reference = external.group(1)
        return ExternalReferenceError(
            f"unusable JSON Schema: the reference {reference!r} points outside the schema;"
            " references resolve inside the document only and are never fetched",
            reference,
        )
    if message.startswith("Unknown meta-schema"):
        return UnsupportedDialectError(f"unusable JSON Schema: {message}")
    where = ""
    if isinstance(exc, jsonschema_rs.ValidationError):
        instance = exc.instance
        if isinstance(instance, str) and instance in prepared.sources:
            source = prepared.sources[instance]
            return UnusablePatternError(
                f"unusable JSON Schema: the regex engine cannot compile the pattern {source!r}",
                source,
            )
        where = _pointer(exc.instance_path)
    return SchemaError(f"unusable JSON Schema: {_short(message)}{_at(where)}")


def _compile(
    schema: Any,
    default_dialect: str,
    registry: Any = None,
    metaschemas: Mapping[str, Any] | None = None,
) -> Validator:
    if not isinstance(schema, (dict, bool)):
        raise SchemaError(
            f"unusable JSON Schema: a schema is an object or a boolean, not {_json_type(schema)}"
        )
    try:
        prepared = _Preparer(schema, _default_dialect(default_dialect), metaschemas).run()
    except RecursionError:
        raise SchemaError("unusable JSON Schema: it is nested too deeply") from None
    engine_class = (
        jsonschema_rs.validator_for
        if prepared.custom_metaschema
        else _ENGINE_CLASSES[prepared.dialect]
    )
    document = prepared.document

    def build(steps: int | None) -> Any:
        options: Any = (
            jsonschema_rs.RegexOptions()
            if steps is None
            else jsonschema_rs.FancyRegexOptions(backtrack_limit=steps)
        )
        extra: dict[str, Any] = {} if registry is None else {"registry": registry}
        return engine_class(
            document,
            validate_formats=False,
            offline=True,
            mask=_MASK,
            pattern_options=options,
            **extra,
        )

    try:
        return Validator(prepared, build)
    except SchemaError:
        raise
    except (ValueError, TypeError, OverflowError, UnicodeError, RecursionError) as exc:
        raise _engine_error(exc, prepared) from None
    except jsonschema_rs.ReferencingError as exc:
        raise _engine_error(exc, prepared) from None


class _Cache:
    """LRU of compiled validators (and of unusable-schema errors), bounded in entries and
    in the size of the schemas it keys on."""

    def __init__(self, max_entries: int, max_chars: int) -> None:
        self.max_entries = max_entries
        self.max_chars = max_chars
        self.entries: OrderedDict[str, Validator | SchemaError] = OrderedDict()
        self.chars = 0

    def get(self, key: str) -> Validator | SchemaError | None:
        try:
            value = self.entries[key]
            self.entries.move_to_end(key)
        except KeyError:
            return None
        return value

    def put(self, key: str, value: Validator | SchemaError) -> None:
        if len(key) > self.max_chars or key in self.entries:
            return
        self.entries[key] = value
        self.chars += len(key)
        while len(self.entries) > self.max_entries or self.chars > self.max_chars:
            try:
                old, _ = self.entries.popitem(last=False)
            except KeyError:
                break
            self.chars -= len(old)

    def clear(self) -> None:
        self.entries.clear()
        self.chars = 0

    def __len__(self) -> int:
        return len(self.entries)


_CACHE: Final = _Cache(_CACHE_MAX_ENTRIES, _CACHE_MAX_CHARS)


class _Plain:
    """``json.dumps`` hook: other mappings are written as objects (and remembered, so the
    engine is then handed plain dicts)."""

    def __init__(self) -> None:
        self.used = False

    def __call__(self, value: Any) -> Any:
        if isinstance(value, Mapping):
            self.used = True
            return dict(value)
        raise TypeError(f"{type(value).__name__} is not JSON data")


def _canonical(schema: Any) -> tuple[str, bool]:
    """The canonical JSON text of ``schema``, and whether it held non-dict mappings."""
    plain = _Plain()
    try:
        text = json.dumps(
            schema,
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,
            default=plain,
        )
    except (TypeError, ValueError, RecursionError) as exc:
        raise SchemaError(
            f"unusable JSON Schema: it is not JSON data ({_short(str(exc))})"
        ) from None
    return text, plain.used


def compile(
    schema: Any,
    *,
    default_dialect: str = DEFAULT_DIALECT,
    resources: Mapping[str, Any] | None = None,
) -> Validator:
    """Build (or reuse) the validator of ``schema``.

    ``default_dialect`` is the dialect of a schema without ``$schema`` (MCP says 2020-12).
    ``resources`` maps URIs to documents the caller already holds; references may then
    resolve into them (they are never fetched either). The client never passes any: the
    test-suite runner uses it to serve the JSON-Schema-Test-Suite's ``remotes/``.
    Validators built with ``resources`` are not cached.

    Raises:
        UnsupportedDialectError: ``$schema`` names a dialect this client does not implement.
        ExternalReferenceError: a reference needs a document outside the schema.
        UnusablePatternError: a ``pattern`` that is not ECMA-262 or cannot be honoured.
        SchemaError: any other reason the schema cannot be used.
    """
    text, converted = _canonical(schema)
    if converted:  # a Mapping that is not a dict somewhere: hand the engine plain JSON
        schema = json.loads(text)
    if resources is not None:
        registry = _registry(resources, _default_dialect(default_dialect))
        return _compile(schema, default_dialect, registry, resources)
    key = default_dialect + "\n" + text
    cached = _CACHE.get(key)
    if isinstance(cached, Validator):
        return cached
    if cached is not None:
        raise copy.copy(cached)
    try:
        validator = _compile(schema, default_dialect, None)
    except SchemaError as exc:
        _CACHE.put(key, exc)
        raise
    _CACHE.put(key, validator)
    return validator


def _registry(resources: Mapping[str, Any], default_dialect: str) -> Any:
    try:
        return jsonschema_rs.Registry(
            list(resources.items()), draft=_ENGINE_DRAFTS[default_dialect]
        )
    except (ValueError, jsonschema_rs.ReferencingError) as exc:
        raise SchemaError(f"unusable JSON Schema resources: {_short(str(exc))}") from None


def errors_for(schema: Any, instance: Any, *, limit: int = 5) -> list[str]:
    """Up to ``limit`` readable violations of ``schema`` by ``instance`` (empty: valid).

    Raises:
        SchemaError: the schema is unusable (see :func:`compile`).
    """
    return [str(v) for v in compile(schema).violations(instance, limit)]
