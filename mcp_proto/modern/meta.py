"""Per-request ``_meta`` and ``resultType`` of the 2026-07-28 revision.

Rows LIFE-3, LIFE-10, LIFE-12, LIFE-13, LIFE-15, LIFE-19 and CACHE-8. Spec: 2026-07-28
basic/index.mdx § ``_meta`` ("Per-request protocol fields", "Reserved keys") and
§ ResultType; basic/versioning.mdx § Extension Negotiation; schema ``RequestMetaObject``.

There is no handshake in this revision: every request repeats the protocol version, the
client's identity and its capabilities in ``params._meta``. :func:`request_meta` builds
that object; :func:`with_meta` puts it into a request's params.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, Final

from .._util import shown
from ..errors import UnknownResultTypeError, ValidationError
from ..types import Implementation

__all__ = [
    "CLIENT_CAPABILITIES",
    "CLIENT_INFO",
    "LOG_LEVEL",
    "LOG_LEVELS",
    "PROTOCOL_VERSION",
    "SERVER_INFO",
    "CapabilitiesMemo",
    "HostMeta",
    "check_extensions",
    "config_request_meta",
    "merge_extensions",
    "merge_host_meta",
    "modern_capabilities",
    "request_meta",
    "result_type",
    "with_meta",
]

#: Reserved ``_meta`` keys (basic/index.mdx § Reserved keys), spelled as in the schema.
PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"

#: Schema ``LoggingLevel`` (RFC 5424 severities).
LOG_LEVELS: Final = frozenset(
    {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
)

#: What a host gives as ``request_meta=``: an object, or a callable returning one,
#: called once per request (LIFE-12).
HostMeta = Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None

#: Extensions as ``extensions=``: identifiers (each declared with empty settings), or a
#: mapping identifier → settings object (LIFE-13).
Extensions = Iterable[str] | Mapping[str, Mapping[str, Any]]

#: The keys the client owns: a host or caller value never replaces them, because the
#: header ``MCP-Protocol-Version`` must equal the body's version and the capabilities
#: must be what the client can really do (CAP rows).
_OWNED: Final = (PROTOCOL_VERSION, CLIENT_INFO, CLIENT_CAPABILITIES)
#: ``_meta`` key naming rules (basic/index.mdx § ``_meta``): an optional prefix of dot-
#: separated labels ending in ``/``, then a name. Extension identifiers need the prefix.
_LABEL: Final = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_NAME: Final = r"(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?"
_EXTENSION_ID: Final = re.compile(rf"{_LABEL}(?:\.{_LABEL})*/{_NAME}")
#: Host metadata is copied value by value; this bounds the nesting (and the recursion).
_MAX_DEPTH: Final = 64
#: The result types of the core protocol (basic/index.mdx § ResultType).
_CORE_RESULT_TYPES: Final = frozenset({"complete", "input_required"})


def _json_copy(value: Any, where: str, depth: int = 0) -> Any:
    """A deep copy of JSON data, refusing anything JSON cannot carry (CACHE-8).

    The copy is what makes "mutation after send has no effect" hold: the request keeps
    its own containers, not the host's.
    """
    if depth > _MAX_DEPTH:
        raise ValidationError(f"{where} is nested more than {_MAX_DEPTH} levels deep")
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValidationError(f"{where} holds {value!r}, which JSON cannot carry")
        return value
    if type(value) is dict or isinstance(value, Mapping):  # (a dict without the ABC check)
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValidationError(f"{where} has a non-string key {shown(key)}")
            out[key] = _json_copy(item, f"{where}[{key!r}]", depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [_json_copy(item, f"{where}[{i}]", depth + 1) for i, item in enumerate(value)]
    raise ValidationError(f"{where} holds {type(value).__name__}, which is not JSON data")


def check_extensions(extensions: Extensions) -> dict[str, dict[str, Any]]:
    """Validate ``extensions=`` and return the ``capabilities.extensions`` object.

    Identifiers "MUST follow the ``_meta`` key naming rules, with a mandatory prefix"
    (versioning.mdx § Extension Negotiation), e.g. ``io.modelcontextprotocol/tasks``.

    Raises:
        ValueError: a bad identifier, or settings that are not a JSON object (a
            :class:`~mcp_proto.errors.ValidationError`, which is a ``ValueError``).
    """
    if isinstance(extensions, str):
        # A bare string is iterable too: "io.x/y" would become nine one-letter names.
        raise ValidationError(
            "extensions must be a list of identifiers or a mapping, not the string "
            + shown(extensions)
        )
    items: Iterable[tuple[Any, Any]]
    if isinstance(extensions, Mapping):
        items = extensions.items()
    else:
        items = ((name, {}) for name in extensions)
    out: dict[str, dict[str, Any]] = {}
    for name, settings in items:
        if not isinstance(name, str) or not _EXTENSION_ID.fullmatch(name):
            raise ValidationError(
                f"extension identifier {shown(name)} must be 'prefix/name' with a reverse-DNS "
                "prefix, e.g. 'io.modelcontextprotocol/tasks'"
            )
        if not isinstance(settings, Mapping):
            raise ValidationError(
                f"settings of extension {name!r} must be an object, got {shown(settings)}"
            )
        out[name] = _json_copy(settings, f"settings of extension {name!r}")
    return out


def modern_capabilities(
    capabilities: Mapping[str, Any], extensions: Extensions = ()
) -> dict[str, Any]:
    """The ``clientCapabilities`` of a modern request (LIFE-10, LIFE-13).

    ``capabilities`` is what the handshake era would declare (derived from the
    registered handlers, :func:`mcp_proto.handlers.client_capabilities`). Two changes:
    ``roots`` loses ``listChanged`` (the 2026-07-28 ``ClientCapabilities.roots`` has no
    properties: there is no session to notify), and ``extensions`` are merged into
    ``capabilities.extensions``.
    """
    if not isinstance(capabilities, Mapping):
        raise ValidationError(f"client capabilities must be an object, got {shown(capabilities)}")
    caps: dict[str, Any] = _json_copy(capabilities, "client capabilities")
    # SEP-2663: the 2026-07-28 tasks extension has no client-hosted tasks.
    caps.pop("tasks", None)
    if isinstance(caps.get("roots"), dict):
        caps["roots"].pop("listChanged", None)
    declared = check_extensions(extensions)
    if declared:
        merged = caps.get("extensions")
        merged = dict(merged) if isinstance(merged, dict) else {}
        merged.update(declared)
        caps["extensions"] = merged
    return caps


# The last Implementation seen and its wire shape: every modern request carries the
# client's info (LIFE-10), and a client keeps one frozen Implementation. Shared by the
# requests built from it, as CapabilitiesMemo's result is: it goes straight into their
# ``_meta``, which is encoded when the request is sent and never changed.
_INFO_MEMO: list[tuple[Implementation, dict[str, Any]]] = []


def _client_info(client_info: Implementation | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(client_info, Implementation):
        memo = _INFO_MEMO
        if memo and memo[0][0] is client_info:
            return memo[0][1]
        shape = client_info.to_dict()
        memo[:] = [(client_info, shape)]
        return shape
    info = _json_copy(client_info, "client_info")
    # Schema Implementation: name and version are required (LIFE-3).
    if not isinstance(info.get("name"), str) or not isinstance(info.get("version"), str):
        raise ValidationError("client_info needs string 'name' and 'version'")
    return dict(info)


def request_meta(
    *,
    protocol_version: str,
    client_info: Implementation | Mapping[str, Any] | None,
    capabilities: Mapping[str, Any],
    extensions: Extensions = (),
    host_meta: HostMeta = None,
    log_level: str | None = None,
    own: Mapping[str, Any] | None = None,
    client_capabilities: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``_meta`` object of one modern request, freshly built.

    Layers, lowest first (a later layer wins on the same key):

    1. ``log_level`` as ``io.modelcontextprotocol/logLevel`` (LIFE-15: ``set_log_level``
       on a modern server; there is no ``logging/setLevel`` in this revision);
    2. the host's ``request_meta``: a mapping, or a callable called once, now (LIFE-12);
    3. ``own``: the caller's ``_meta`` for this request (e.g. ``progressToken``);
    4. the client-owned keys ``protocolVersion``, ``clientInfo`` (left out when
       ``client_info`` is ``None``: "unless specifically configured not to do so") and
       ``clientCapabilities`` with ``extensions`` merged in (LIFE-10, LIFE-13).

    Everything is deep-copied (CACHE-8): changing an object given to ``request_meta``
    after the request was built does not change it.

    ``client_capabilities``: :func:`modern_capabilities` of ``capabilities`` and
    ``extensions`` already computed (a connection keeps the last one while its inputs
    stay equal, :class:`CapabilitiesMemo`); used as it is.

    Raises:
        ValidationError: a bad ``log_level`` or ``client_info``, a host value that is
            not a JSON object (or holds non-JSON data), a bad extension.
        Exception: whatever the host's ``request_meta`` callable raises, unchanged.
    """
    meta: dict[str, Any] = {}
    if log_level is not None:
        if log_level not in LOG_LEVELS:
            raise ValidationError(
                f"log level {shown(log_level)} is not one of {', '.join(sorted(LOG_LEVELS))}"
            )
        meta[LOG_LEVEL] = log_level
    if host_meta is not None:
        supplied = host_meta() if callable(host_meta) else host_meta
        if type(supplied) is not dict and not isinstance(supplied, Mapping):
            raise ValidationError(f"request_meta must give an object, got {shown(supplied)}")
        if supplied:  # (most hosts give none: no copy of an empty one per request)
            meta.update(_json_copy(supplied, "request_meta"))
    if own is not None:
        if not isinstance(own, Mapping):
            raise ValidationError(f"params._meta must be an object, got {shown(own)}")
        meta.update(_json_copy(own, "params._meta"))
    for key in _OWNED:
        meta.pop(key, None)
    meta[PROTOCOL_VERSION] = protocol_version
    if client_info is not None:
        meta[CLIENT_INFO] = _client_info(client_info)
    if client_capabilities is None:
        client_capabilities = modern_capabilities(capabilities, extensions)
    meta[CLIENT_CAPABILITIES] = client_capabilities
    return meta


class CapabilitiesMemo:
    """The last :func:`modern_capabilities` of a connection, reused while its inputs
    are equal: every modern request carries them (LIFE-10), and copying and checking
    them again for each request is most of what building its ``_meta`` costs.

    The inputs are compared against a snapshot taken when the result was computed (a
    dict compare, in C), so a capabilities mapping changed in place is noticed. The
    result is shared by the requests built from it: it goes straight into their
    ``_meta``, which is encoded when the request is sent and never changed."""

    __slots__ = ("_extensions", "_result", "_snapshot")

    def __init__(self) -> None:
        self._snapshot: dict[str, Any] | None = None
        self._extensions: Extensions = ()
        self._result: dict[str, Any] = {}

    def get(self, capabilities: Mapping[str, Any], extensions: Extensions) -> dict[str, Any]:
        if (
            self._snapshot is not None
            and self._extensions == extensions
            and self._snapshot == capabilities
        ):
            return self._result
        result = modern_capabilities(capabilities, extensions)
        self._snapshot = _json_copy(capabilities, "client capabilities")
        self._extensions = extensions
        self._result = result
        return result


def config_request_meta(value: object) -> HostMeta:
    """Check a server's own ``request_meta=`` (a builder argument or an ``mcpServers``
    entry key): ``None``, a callable (called once per request), or a mapping of JSON
    data, deep-copied now so that the configuration does not change with the host's
    object (CACHE-8).

    Raises:
        ValidationError: anything else, or a mapping holding what JSON cannot carry.
    """
    if value is None or callable(value):
        return value  # a callable is the host's business (called per request)
    if not isinstance(value, Mapping):
        raise ValidationError(
            f"request_meta must be a mapping, a callable or None, got {shown(value)}"
        )
    copied: dict[str, Any] = _json_copy(value, "request_meta")
    return copied


def merge_host_meta(client: HostMeta, server: HostMeta) -> HostMeta:
    """The host metadata of one server's requests (LIFE-12, §E3 per-server options):
    the client's ``request_meta`` with the server's own laid over it (a key both give:
    the server's wins). Each callable is called once per request; without a server
    layer the client's is returned as it is."""
    if server is None:
        return client
    if client is None:
        return server

    def merged() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for layer in (client, server):
            supplied = layer() if callable(layer) else layer
            if not isinstance(supplied, Mapping):
                raise ValidationError(f"request_meta must give an object, got {shown(supplied)}")
            out.update(supplied)
        return out

    return merged


def merge_extensions(client: Extensions, server: Extensions) -> dict[str, dict[str, Any]]:
    """The extensions one server's requests declare (LIFE-13): the client's and the
    server's own (the server's settings win for an extension both name).

    Raises:
        ValidationError: a bad identifier or settings in either.
    """
    out = check_extensions(client)
    out.update(check_extensions(server))
    return out


def with_meta(params: Mapping[str, Any] | None, **meta_options: Any) -> dict[str, Any]:
    """A copy of ``params`` whose ``_meta`` is :func:`request_meta` (``own`` = its
    current ``_meta``). ``meta_options`` are :func:`request_meta`'s keywords.

    Only the top level of ``params`` is copied; ``_meta`` itself is built afresh.
    """
    out = dict(params) if params is not None else {}
    out["_meta"] = request_meta(own=out.get("_meta"), **meta_options)
    return out


def result_type(result: Any, *, method: str | None = None, extra: Collection[str] = ()) -> str:
    """The ``resultType`` of a result (LIFE-19, basic/index.mdx § ResultType).

    Absent means ``"complete"`` (servers of earlier revisions never send it);
    ``"complete"`` and ``"input_required"`` are the core values; ``extra`` adds the
    values of extensions the client advertised ("Extensions MAY add additional
    ResultType values").

    Raises:
        UnknownResultTypeError: any other value, or one that is not a string ("MUST be
            considered invalid"); also a result that is not an object.
    """
    if type(result) is not dict and not isinstance(result, Mapping):
        raise UnknownResultTypeError(
            f"{method or 'a request'} answered with {shown(result)}, not a result object",
            method=method,
        )
    if "resultType" not in result:
        return "complete"
    value = result["resultType"]
    if isinstance(value, str) and (value in _CORE_RESULT_TYPES or value in extra):
        return value
    raise UnknownResultTypeError(
        f"{method or 'a request'} answered with an unknown resultType {shown(value)}",
        result_type=value,
        method=method,
    )
