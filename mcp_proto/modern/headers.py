"""HTTP request headers of the 2026-07-28 revision (HDR-1..4, HDR-6, HDR-7, LIFE-11).

Pure computation for the Streamable HTTP and plain HTTP shells: which headers a modern
request carries, how a value is encoded, and which ``x-mcp-header`` annotations are
legal. Spec: 2026-07-28 basic/transports/streamable-http.mdx § Request Metadata,
§ Custom Headers from Tool Parameters, § Value Encoding; server/tools.mdx
§ x-mcp-header. Over stdio none of this applies (HDR-7: "Clients using other transports
(e.g., stdio) MAY ignore ``x-mcp-header`` annotations entirely").

Errors: an illegal annotation is a :class:`~mcp_proto.errors.HeaderAnnotationError`
naming the rule; an argument value that cannot be mirrored, or a method or name that
cannot be carried, is a :class:`~mcp_proto.errors.ValidationError`. Anything else
escaping is a bug.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, TypeVar, final

from .._util import sanitize_peer_text, shown
from ..errors import HeaderAnnotationError, LocalProtocolError, ValidationError
from ..types import Tool

__all__ = [
    "MCP_METHOD",
    "MCP_NAME",
    "MCP_PARAM_PREFIX",
    "MCP_PROTOCOL_VERSION",
    "NAMED_METHODS",
    "HeaderParams",
    "decode_header_value",
    "encode_header_value",
    "filter_tools",
    "header_params",
    "param_headers",
    "request_headers",
]

#: Header names (field names are case-insensitive, RFC 9110 § 5.1; these spellings are
#: the spec's own).
MCP_PROTOCOL_VERSION: Final = "MCP-Protocol-Version"
MCP_METHOD: Final = "Mcp-Method"
MCP_NAME: Final = "Mcp-Name"
MCP_PARAM_PREFIX: Final = "Mcp-Param-"

#: Methods whose ``Mcp-Name`` mirrors a params field (§ Standard Request Headers).
NAMED_METHODS: Final[Mapping[str, str]] = {
    "tools/call": "name",
    "resources/read": "uri",
    "prompts/get": "name",
    # SEP-2663 § Streamable HTTP: Routing Headers: the task's id, so intermediaries
    # route a task's requests to the instance holding its state.
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}

#: The annotation keyword (server/tools.mdx § x-mcp-header).
_ANNOTATION: Final = "x-mcp-header"
#: RFC 9110 § 5.6.2 ``token`` = 1*tchar: the only legal field-name characters. It
#: excludes space, ``:``, control characters and anything non-ASCII by construction.
_TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
#: A value that can go on the wire as is (§ Value Encoding): visible ASCII and inner
#: spaces, no leading/trailing whitespace. Tab is a control character and is always
#: encoded (RFC 9110 allows it inside a value, but the spec lists control characters
#: as unsafe and the conformance check ``sep-2243-client-base64-unsafe`` agrees).
_PLAIN: Final = re.compile(r"(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?")
_SENTINEL_PREFIX: Final = "=?base64?"
_SENTINEL_SUFFIX: Final = "?="
#: The primitive types an annotation may sit on ("Parameters with type ``number`` are
#: not permitted", server/tools.mdx).
_PRIMITIVES: Final = frozenset({"string", "integer", "boolean"})
#: "Integer values MUST be within the safe range ... (-2^53+1 to 2^53-1)".
_MAX_SAFE_INTEGER: Final = 2**53 - 1
#: Headers the client computes for a modern request; configured ones of these names are
#: dropped so the request never carries two disagreeing copies (HDR-6).
_OWNED: Final = frozenset({MCP_PROTOCOL_VERSION.lower(), MCP_METHOD.lower(), MCP_NAME.lower()})

# JSON Schema applicators (2020-12, 2019-09 and draft-07 spellings) whose values are
# schemas. Crossing any of them leaves the pure ``properties`` chain, so an annotation
# found below one is illegal ("statically reachable", § Schema Extension). Data
# keywords (``const``, ``enum``, ``default``, ``examples``) are not entered: a string
# "x-mcp-header" inside an example is data, not an annotation. ``$ref`` is never
# followed (the rule forbids passing through it; a target under ``$defs`` is reached
# through ``$defs`` and so is off the chain anyway).
_ONE_SCHEMA: Final = frozenset(
    {
        "additionalItems",
        "additionalProperties",
        "contains",
        "contentSchema",
        "else",
        "if",
        "items",
        "not",
        "propertyNames",
        "then",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
_SCHEMA_LIST: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
_SCHEMA_MAP: Final = frozenset(
    {"$defs", "definitions", "dependentSchemas", "dependencies", "patternProperties"}
)
#: A warning carries peer text (tool name, property names, annotation values): capped.
_WARNING_CAP: Final = 500

T = TypeVar("T")


# ------------------------------------------------------------------ value encoding


def encode_header_value(value: str) -> str:
    """Encode ``value`` for ``Mcp-Name`` / ``Mcp-Param-*`` (§ Value Encoding).

    Plain visible ASCII (inner spaces allowed) goes as is; anything with non-ASCII,
    control characters (tab, CR, LF included), leading or trailing whitespace, or that
    itself looks like the sentinel (starts with ``=?base64?`` and ends with ``?=``) is
    sent as ``=?base64?{Base64(UTF-8)}?=``. The empty string is plain.

    Raises:
        ValidationError: ``value`` holds a lone surrogate (it has no UTF-8 form).
    """
    looks_encoded = value.startswith(_SENTINEL_PREFIX) and value.endswith(_SENTINEL_SUFFIX)
    if _PLAIN.fullmatch(value) and not looks_encoded:
        return value
    try:
        raw = value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError("a header value holds a lone surrogate (no UTF-8 form)") from None
    return f"{_SENTINEL_PREFIX}{base64.b64encode(raw).decode('ascii')}{_SENTINEL_SUFFIX}"


def decode_header_value(value: str) -> str:
    """Inverse of :func:`encode_header_value` (what a server does before comparing).

    Raises:
        ValidationError: a sentinel whose payload is not canonical Base64 of UTF-8.
    """
    if not (
        len(value) >= len(_SENTINEL_PREFIX) + len(_SENTINEL_SUFFIX)
        and value.startswith(_SENTINEL_PREFIX)
        and value.endswith(_SENTINEL_SUFFIX)
    ):
        return value
    payload = value[len(_SENTINEL_PREFIX) : -len(_SENTINEL_SUFFIX)]
    try:
        raw = base64.b64decode(payload, validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise ValidationError(f"malformed base64 header value {shown(value)}") from None
    # ``validate=True`` still tolerates non-zero padding bits: only the canonical
    # spelling decodes, so one value has exactly one encoding.
    if base64.b64encode(raw).decode("ascii") != payload:
        raise ValidationError(f"non-canonical base64 header value {shown(value)}")
    return text


def _render(value: Any, path: tuple[str, ...]) -> str:
    """The string form of an argument value (§ Value Encoding, "Type conversion")."""
    where = shown(".".join(path))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValidationError(f"argument {where} is {value!r}, which JSON cannot carry")
        if not value.is_integer():
            return repr(value)  # shortest round-trip form; servers compare numerically
        # 42.0 is the integer 42 in JSON Schema.
        value = int(value)
    if isinstance(value, int):
        if abs(value) > _MAX_SAFE_INTEGER:
            raise ValidationError(
                f"argument {where} is mirrored into an x-mcp-header but {shown(value)} is "
                f"outside the safe integer range (±{_MAX_SAFE_INTEGER})"
            )
        return str(value)
    if isinstance(value, str):
        return value
    raise ValidationError(
        f"argument {where} is mirrored into an x-mcp-header but is "
        f"{type(value).__name__}; only strings, integers and booleans can be"
    )


# ------------------------------------------------------------- annotation checks


def _input_schema(tool_or_schema: Any) -> tuple[Any, str | None]:
    """(inputSchema, tool name) of a :class:`Tool`, a wire tool, or a bare schema."""
    if isinstance(tool_or_schema, Tool):
        return tool_or_schema.input_schema, tool_or_schema.name
    if isinstance(tool_or_schema, Mapping):
        name = tool_or_schema.get("name")
        if "inputSchema" in tool_or_schema:
            return tool_or_schema["inputSchema"], name if isinstance(name, str) else None
        if (
            isinstance(name, str)
            and "type" not in tool_or_schema
            and "properties" not in tool_or_schema
        ):
            # A tools/list entry without inputSchema: some servers use "schema" (TOOL-12).
            return tool_or_schema.get("schema"), name
    return tool_or_schema, None


def _annotations(schema: Any) -> Iterable[tuple[tuple[str, ...] | None, Mapping[str, Any]]]:
    """Every schema position holding ``x-mcp-header``, with its ``properties`` chain.

    The chain is ``None`` once any other applicator was crossed. Breadth first, so the
    problems come out top level first, in document order; iterative, and each
    container is visited once, so a huge, deep or even self-referencing (host-built)
    schema terminates.
    """
    queue: deque[tuple[tuple[str, ...] | None, Any]] = deque([((), schema)])
    seen: set[int] = set()
    while queue:
        path, node = queue.popleft()
        if not isinstance(node, Mapping) or id(node) in seen:
            continue
        seen.add(id(node))
        if _ANNOTATION in node:
            yield path, node
        for key, value in node.items():
            if key == "properties" and isinstance(value, Mapping):
                for name, sub in value.items():
                    queue.append(((*path, str(name)) if path is not None else None, sub))
            elif key in _ONE_SCHEMA and isinstance(value, Mapping):
                queue.append((None, value))
            elif key in _SCHEMA_LIST and isinstance(value, list):
                queue.extend((None, sub) for sub in value)
            elif key in _SCHEMA_MAP and isinstance(value, Mapping):
                queue.extend((None, sub) for sub in value.values())


#: One broken rule: (rule name, properties path, one-line problem).
_Problem = tuple[str, tuple[str, ...], str]


def _check(schema: Any) -> tuple[dict[tuple[str, ...], str], list[_Problem]]:
    """(path → annotation name for the legal ones, [(rule, path, problem)] for the rest)."""
    found: dict[tuple[str, ...], str] = {}
    problems: list[_Problem] = []
    taken: dict[str, str] = {}  # lower-cased name → where it was first used
    # Messages quote peer text through shown(): capped, so a megabyte-long property
    # or header name cannot blow up an error message or a log line.
    for path, node in _annotations(schema):
        name = node[_ANNOTATION]
        where = ".".join(path) if path else "<root>"
        if not path:
            # The root, or anything below items / anyOf / $defs / ...: "An x-mcp-header
            # annotation anywhere else makes the annotation — and thus the tool
            # definition — invalid."
            problems.append(
                (
                    "reachable",
                    path or (),
                    "x-mcp-header is only allowed on a property reached through "
                    "'properties' keys alone (not the root, items, anyOf, $defs, ...)",
                )
            )
            continue
        if not isinstance(name, str):
            problems.append(
                (
                    "charset",
                    path,
                    f"x-mcp-header of {shown(where)} is {type(name).__name__}, not a string",
                )
            )
            continue
        if name == "":
            problems.append(("not-empty", path, f"x-mcp-header of {shown(where)} is empty"))
            continue
        if not _TOKEN.fullmatch(name):
            problems.append(
                (
                    "charset",
                    path,
                    f"x-mcp-header {shown(name)} of {shown(where)} is not an HTTP field-name token "
                    "(RFC 9110 tchar: no spaces, colons, control or non-ASCII characters)",
                )
            )
            continue
        kind = node.get("type")
        if not isinstance(kind, str) or kind not in _PRIMITIVES:
            problems.append(
                (
                    "primitive-only",
                    path,
                    f"x-mcp-header {shown(name)} is on {shown(where)} of type {shown(kind)}; only "
                    "'string', 'integer' and 'boolean' properties may carry one",
                )
            )
            continue
        first = taken.get(name.lower())
        if first is not None:
            problems.append(
                (
                    "unique",
                    path,
                    f"x-mcp-header {shown(name)} of {shown(where)} repeats the one of "
                    f"{shown(first)} (names are compared case-insensitively)",
                )
            )
            continue
        taken[name.lower()] = where
        found[path] = name
    return found, problems


@final
class HeaderParams:
    """Validation and mapping of ``x-mcp-header`` annotations (HDR-4), public.

    Exported as the instance :data:`header_params`: call it on a tool or an input
    schema to get the mapping, or use the named methods (docs/requirements.md §E:
    ``header_params.validate_tool(tool)``, ``header_params.headers_for(tool, args)``).
    A tool is a :class:`~mcp_proto.Tool`, a ``tools/list`` entry (a mapping with
    ``inputSchema``), or the input schema itself.
    """

    def __repr__(self) -> str:
        return "mcp_proto.header_params"

    def __call__(self, tool_or_schema: Any) -> dict[tuple[str, ...], str]:
        """Map each annotated property to its header name.

        Returns:
            ``{("region",): "Mcp-Param-Region", ("a", "b"): "Mcp-Param-B"}``: the key is
            the chain of ``properties`` keys from the schema root (one element for a
            top-level parameter). Empty when nothing is annotated.

        Raises:
            HeaderAnnotationError: an annotation breaks a rule; ``rule`` names the
                first one, ``problems`` lists them all.
        """
        schema, name = _input_schema(tool_or_schema)
        found, problems = _check(schema)
        if problems:
            rule, path, first = problems[0]
            label = f"tool {name!r}: " if name is not None else ""
            raise HeaderAnnotationError(
                label + first,
                rule=rule,
                path=path,
                problems=tuple(p for _, _, p in problems),
                tool=name,
            )
        return {path: MCP_PARAM_PREFIX + header for path, header in found.items()}

    def validate_tool(self, tool_or_schema: Any) -> list[str]:
        """Every problem with the tool's annotations, one line each; ``[]`` when valid."""
        return [problem for _, _, problem in _check(_input_schema(tool_or_schema)[0])[1]]

    def headers_for(self, tool_or_schema: Any, arguments: Any) -> dict[str, str]:
        """The ``Mcp-Param-*`` headers a ``tools/call`` with ``arguments`` carries.

        Raises:
            HeaderAnnotationError: the tool's annotations are invalid.
            ValidationError: an annotated argument cannot be mirrored (see
                :func:`param_headers`).
        """
        return dict(param_headers(self(tool_or_schema), arguments))


#: The public validator (HDR-4); see :class:`HeaderParams`.
header_params: Final = HeaderParams()


def param_headers(mapping: Mapping[tuple[str, ...], str], arguments: Any) -> list[tuple[str, str]]:
    """``Mcp-Param-*`` headers from a precomputed :data:`header_params` mapping.

    The value is read at the exact property path; a path that is missing, or whose
    value is ``null``, gives no header ("Parameter value is null / not in arguments:
    Client MUST omit the header"). Values are converted (booleans ``true``/``false``,
    integers in decimal) and encoded with :func:`encode_header_value`.

    Raises:
        ValidationError: ``arguments`` is not an object; an annotated value is an
            object or array, a non-finite number, or an integer outside ±(2^53-1).
    """
    if arguments is None:
        return []
    if not isinstance(arguments, Mapping):
        raise ValidationError(f"tools/call arguments must be an object, got {shown(arguments)}")
    out: list[tuple[str, str]] = []
    for path, header in mapping.items():
        node: Any = arguments
        for key in path:
            node = node.get(key) if isinstance(node, Mapping) else None
        if node is None:
            continue
        out.append((header, encode_header_value(_render(node, path))))
    return out


# --------------------------------------------------------------- whole requests


def _configured(configured: Mapping[str, str] | Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    items = configured.items() if isinstance(configured, Mapping) else configured
    # HDR-6: in a modern session the client owns Mcp-Param-* (they mirror this call's
    # arguments) and the standard headers; a configured copy would contradict the body.
    return [
        (name, value)
        for name, value in items
        if not name.lower().startswith(MCP_PARAM_PREFIX.lower()) and name.lower() not in _OWNED
    ]


def request_headers(
    method: str,
    params: Mapping[str, Any] | None,
    *,
    protocol_version: str,
    tool: Any = None,
    configured: Mapping[str, str] | Iterable[tuple[str, str]] = (),
) -> list[tuple[str, str]]:
    """The headers of one modern HTTP POST carrying a request (LIFE-11, HDR-1, HDR-6).

    Args:
        method: the JSON-RPC method; sent as ``Mcp-Method``.
        params: the request's params (``Mcp-Name`` comes from ``name`` for
            ``tools/call`` / ``prompts/get`` and ``uri`` for ``resources/read``).
        protocol_version: sent as ``MCP-Protocol-Version``; must equal the
            ``io.modelcontextprotocol/protocolVersion`` of the body's ``_meta``.
        tool: for ``tools/call``, the called tool's definition (:class:`Tool`, wire
            dict or input schema); its ``x-mcp-header`` annotations become
            ``Mcp-Param-*``. ``None`` when the tool was never listed: no such headers.
        configured: the server's configured headers; ``Mcp-Param-*`` and the three
            standard names are dropped (the client computes them), the rest kept.

    Returns:
        ``[(name, value), ...]``: the computed headers, then the configured ones.

    Raises:
        ValidationError: the method, version or name cannot be carried, or an
            argument cannot be mirrored.
        HeaderAnnotationError: ``tool`` has invalid annotations (the pipeline drops
            such tools at listing time, :func:`filter_tools`).
        LocalProtocolError: ``tool`` names another tool than ``params["name"]``.
    """
    params = params if params is not None else {}
    if not isinstance(params, Mapping):
        raise ValidationError(f"{shown(method)} params must be an object, got {shown(params)}")
    # Mcp-Method and MCP-Protocol-Version have no encoded form: they must be plain.
    for label, value in (("method", method), ("protocol version", protocol_version)):
        if not isinstance(value, str) or not value or not _PLAIN.fullmatch(value):
            raise ValidationError(f"{label} {shown(value)} cannot be sent in an HTTP header")
    headers = [(MCP_PROTOCOL_VERSION, protocol_version), (MCP_METHOD, method)]
    field = NAMED_METHODS.get(method)
    if field is not None:
        named = params.get(field)
        if not isinstance(named, str):
            raise ValidationError(f"{method} needs a string params.{field}, got {shown(named)}")
        headers.append((MCP_NAME, encode_header_value(named)))
    if method == "tools/call" and tool is not None:
        name = tool.name if isinstance(tool, Tool) else None
        if isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
            name = tool["name"]
        if name is not None and name != params.get("name"):
            raise LocalProtocolError(
                f"headers for tool {name!r} requested for a call to {params.get('name')!r}"
            )
        headers.extend(param_headers(header_params(tool), params.get("arguments")))
    headers.extend(_configured(configured))
    return headers


def filter_tools(tools: Sequence[T], *, http: bool = True) -> tuple[list[T], list[str]]:
    """Drop the tools whose ``x-mcp-header`` annotations are invalid (HDR-3).

    "Clients using the Streamable HTTP transport MUST reject tool definitions where any
    x-mcp-header value violates these constraints ... exclude the invalid tool from the
    result of tools/list ... SHOULD log a warning ... including the tool name and the
    reason." ``tools`` are :class:`Tool` objects or ``tools/list`` entries; the kept
    ones come back unchanged, in order. Each warning is one line, peer text escaped.
    With ``http=False`` (stdio) every tool is kept and nothing is reported (HDR-7).
    """
    if not http:
        return list(tools), []
    kept: list[T] = []
    warnings: list[str] = []
    for tool in tools:
        schema, name = _input_schema(tool)
        problems = _check(schema)[1]
        if not problems:
            kept.append(tool)
            continue
        rule, _, reason = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        text = f"dropping tool {name!r}: invalid x-mcp-header ({rule}): {reason}{more}"
        warnings.append(sanitize_peer_text(text, cap=_WARNING_CAP))
    return kept, warnings
