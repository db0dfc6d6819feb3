"""``server/discover``, the era probe and the era cache of the 2026-07-28 revision.

Rows LIFE-4..9, LIFE-14, LIFE-18, LIFE-20 and §B3. Spec: 2026-07-28 server/discover.mdx,
basic/versioning.mdx § Protocol Version Negotiation and § Backward Compatibility,
basic/transports/stdio.mdx § Backward Compatibility, streamable-http.mdx § Backward
Compatibility.

The probe is a ``server/discover`` request (first on stdio; over HTTP the first modern
request). Its outcome, described by the shell as one of the ``Probe*`` values, is
turned into a decision by :func:`classify_probe`:

==========================================  =========================================
outcome                                     decision
==========================================  =========================================
a ``DiscoverResult`` with a mutual version  :class:`Modern`
-32022 whose ``data.supported`` has one     :class:`RetryModern` (never fall back)
-32020, or -32021 with its data             :class:`RejectedModern` (modern; raise it)
a modern answer listing only legacy         :class:`Legacy` (the listed revision is
versions we speak                           reached through ``initialize``)
a modern answer listing nothing we speak    :class:`Incompatible`
any other error (-32601, -32602, ...),      :class:`Legacy` ("MUST NOT be keyed to one
an HTTP 4xx without a recognised modern     specific error code")
error body, a non-discover result, silence
HTTP 401/403 or 5xx                         :class:`Undecided` (says nothing of the era)
==========================================  =========================================
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import Any, Final, Literal, final
from urllib.parse import urlsplit

from .. import jsonrpc
from .._record import Record
from .._util import check_seconds, shown
from ..errors import (
    IncompatibleServerError,
    RemoteProtocolError,
    ServerError,
    ValidationError,
    server_error_from,
)
from ..types import Implementation
from ..versions import LEGACY_VERSIONS, MODERN_VERSIONS
from .meta import SERVER_INFO, request_meta, result_type

_set = object.__setattr__  # (frozen: Record refuses setattr)

__all__ = [
    "DEFAULT_ERA_CACHE_SIZE",
    "DISCOVER",
    "PROTOCOL_MODES",
    "Decision",
    "DiscoverInfo",
    "EraCache",
    "EraRecord",
    "Incompatible",
    "Legacy",
    "Modern",
    "ProbeAnswered",
    "ProbeFailed",
    "ProbeHttpStatus",
    "ProbeOutcome",
    "ProbeSilent",
    "ProtocolMode",
    "RejectedModern",
    "RetryModern",
    "Undecided",
    "check_discover_timeout",
    "check_protocol",
    "classify_probe",
    "discover_params",
    "origin_key",
    "parse_discover_result",
    "pick_version",
    "process_key",
]

DISCOVER: Final = "server/discover"
ProtocolMode = Literal["auto", "modern", "legacy"]
#: ``protocol=`` values (LIFE-8): probe, modern only, handshake only.
PROTOCOL_MODES: Final = ("auto", "modern", "legacy")
#: An era cache holds this many servers unless told otherwise (oldest dropped first).
DEFAULT_ERA_CACHE_SIZE: Final = 1024


# ------------------------------------------------------------------- options


def check_protocol(value: object) -> ProtocolMode:
    """Validate a ``protocol=`` option (LIFE-8).

    Raises:
        ValueError: anything but ``"auto"``, ``"modern"`` or ``"legacy"``.
    """
    if value == "auto" or value == "modern" or value == "legacy":
        return value
    raise ValueError(
        f"protocol must be 'auto', 'modern' or 'legacy', got {shown(value)}: 'auto' probes "
        "with server/discover, 'modern' speaks only 2026-07-28, 'legacy' only the handshake"
    )


def check_discover_timeout(value: object) -> float:
    """Validate ``discover_timeout=`` (LIFE-7): positive seconds.

    Raises:
        ValueError: not a positive, finite number of seconds.
    """
    return check_seconds(value, "discover_timeout")


# ------------------------------------------------------------ discover itself


def discover_params(**meta_options: Any) -> dict[str, Any]:
    """Params of ``server/discover``: only the per-request ``_meta`` (schema
    ``DiscoverRequest``). ``meta_options`` are :func:`~.meta.request_meta`'s keywords;
    ``protocol_version`` is the version being probed for."""
    return {"_meta": request_meta(**meta_options)}


def pick_version(supported: object, ours: Sequence[str] = MODERN_VERSIONS) -> str | None:
    """The first of ``ours`` (our preference order) that ``supported`` lists, or None.

    ``supported`` is peer data: anything that is not a list of strings counts only by its
    string entries.
    """
    if not isinstance(supported, (list, tuple)):
        return None
    listed = {v for v in supported if isinstance(v, str)}
    return next((v for v in ours if v in listed), None)


class DiscoverInfo(Record):
    """What a ``DiscoverResult`` says (LIFE-4, LIFE-20).

    ``protocol_version`` is the mutual modern version (None when there is none).
    ``ttl_ms`` is the freshness hint: absent, negative or malformed is ``0``, i.e.
    stale at once (LIFE-20). ``cache_scope`` is ``"public"`` or ``"private"``; a missing
    or unknown scope is ``"private"`` (CACHE rows).
    """

    __slots__ = (
        "cache_scope",
        "capabilities",
        "instructions",
        "protocol_version",
        "server_info",
        "supported_versions",
        "ttl_ms",
    )
    supported_versions: tuple[str, ...]
    protocol_version: str | None
    capabilities: dict[str, Any]
    server_info: Implementation | None
    instructions: str | None
    ttl_ms: int
    cache_scope: Literal["public", "private"]

    def __init__(
        self,
        supported_versions: tuple[str, ...],
        protocol_version: str | None,
        capabilities: dict[str, Any],
        server_info: Implementation | None = None,
        instructions: str | None = None,
        ttl_ms: int = 0,
        cache_scope: Literal["public", "private"] = "private",
    ) -> None:
        _set(self, "supported_versions", supported_versions)
        _set(self, "protocol_version", protocol_version)
        _set(self, "capabilities", capabilities)
        _set(self, "server_info", server_info)
        _set(self, "instructions", instructions)
        _set(self, "ttl_ms", ttl_ms)
        _set(self, "cache_scope", cache_scope)


def parse_discover_result(result: Any, *, ours: Sequence[str] = MODERN_VERSIONS) -> DiscoverInfo:
    """Read a ``server/discover`` result.

    Lenient where the spec only says SHOULD (``serverInfo``, ``instructions``, the
    cache hints), strict on what makes it a discovery answer at all.

    Raises:
        RemoteProtocolError: ``result`` is not an object, its ``resultType`` is not
            ``"complete"`` (absent counts as complete), ``supportedVersions`` is not a
            list of strings or ``capabilities`` is not an object.
    """
    kind = result_type(result, method=DISCOVER)
    if kind != "complete":
        raise RemoteProtocolError(f"server/discover answered with resultType {kind!r}")
    versions = result.get("supportedVersions")
    if not isinstance(versions, list) or not all(isinstance(v, str) for v in versions):
        raise RemoteProtocolError("server/discover result has no list of supportedVersions")
    capabilities = result.get("capabilities")
    if not isinstance(capabilities, dict):
        raise RemoteProtocolError("server/discover result has no capabilities object")
    meta = result.get("_meta")
    info_data = meta.get(SERVER_INFO) if isinstance(meta, dict) else None
    if info_data is None:
        # Some servers put it at the top level (the conformance mock does); accept it.
        info_data = result.get("serverInfo")
    server_info: Implementation | None
    try:
        server_info = Implementation.from_dict(info_data) if info_data is not None else None
    except ValidationError:
        server_info = None  # self-reported, display only (discover.mdx Note)
    instructions = result.get("instructions")
    # One rule for every cacheable result (LIFE-20 is CACHE-5 applied to discover).
    from .cache import parse_hints  # the cache rules load with the first modern answer

    hints = parse_hints(result)
    return DiscoverInfo(
        supported_versions=tuple(versions),
        protocol_version=pick_version(versions, ours),
        capabilities=capabilities,
        server_info=server_info,
        instructions=instructions if isinstance(instructions, str) else None,
        ttl_ms=hints.ttl_ms,
        cache_scope=hints.cache_scope,
    )


# ----------------------------------------------------------- probe outcomes


class ProbeAnswered(Record):
    """The probe got a JSON-RPC result (any transport)."""

    __slots__ = ("result",)
    result: Any

    def __init__(self, result: Any) -> None:
        _set(self, "result", result)


class ProbeFailed(Record):
    """The probe got a JSON-RPC error member (any transport; over HTTP with its status)."""

    __slots__ = ("error", "http_status")
    error: Any
    http_status: int | None

    def __init__(self, error: Any, http_status: int | None = None) -> None:
        _set(self, "error", error)
        _set(self, "http_status", http_status)


class ProbeHttpStatus(Record):
    """An HTTP response the shell did not read as JSON-RPC: its status and raw body.

    The body is inspected here (streamable-http.mdx § Backward Compatibility: "On 400
    Bad Request, the client SHOULD inspect the response body before falling back").
    Only a JSON body is understood; an SSE body is for the shell to parse first.
    """

    __slots__ = ("body", "status")
    status: int
    body: bytes

    def __init__(self, status: int, body: bytes = b"") -> None:
        _set(self, "status", status)
        _set(self, "body", body)


class ProbeSilent(Record):
    """No answer within ``discover_timeout`` (LIFE-7)."""

    __slots__ = ()


ProbeOutcome = ProbeAnswered | ProbeFailed | ProbeHttpStatus | ProbeSilent


class Modern(Record):
    """The server speaks the revision ``version``; ``info`` is its discovery answer."""

    __slots__ = ("info", "version")
    version: str
    info: DiscoverInfo

    def __init__(self, version: str, info: DiscoverInfo) -> None:
        _set(self, "version", version)
        _set(self, "info", info)


class RetryModern(Record):
    """-32022: a modern server that wants another version; re-probe with ``version``.

    ``version`` may equal the one just refused (a server may list it anyway); the
    pipeline bounds the retries.
    """

    __slots__ = ("supported", "version")
    version: str
    supported: tuple[str, ...]

    def __init__(self, version: str, supported: tuple[str, ...]) -> None:
        _set(self, "version", version)
        _set(self, "supported", supported)


class RejectedModern(Record):
    """A modern server refused the probe itself (-32020 or -32021): the era is modern,
    the request failed with ``error`` (a typed :class:`~mcp_proto.errors.ServerError`)."""

    __slots__ = ("error",)
    error: ServerError

    def __init__(self, error: ServerError) -> None:
        _set(self, "error", error)


class Legacy(Record):
    """Fall back to ``initialize``; ``reason`` says why (for a debug log line)."""

    __slots__ = ("reason",)
    reason: str

    def __init__(self, reason: str) -> None:
        _set(self, "reason", reason)


class Incompatible(Record):
    """The server is modern but lists no version this client speaks (LIFE-5: disconnect)."""

    __slots__ = ("reason", "supported")
    reason: str
    supported: tuple[str, ...]

    def __init__(self, reason: str, supported: tuple[str, ...]) -> None:
        _set(self, "reason", reason)
        _set(self, "supported", supported)

    def error(self) -> IncompatibleServerError:
        """The error to raise for it."""
        return IncompatibleServerError(self.reason)


class Undecided(Record):
    """The answer says nothing about the era (an authorization challenge, a 5xx): the
    shell reports it as it would for any request and caches no era."""

    __slots__ = ("reason", "status")
    reason: str
    status: int

    def __init__(self, reason: str, status: int) -> None:
        _set(self, "reason", reason)
        _set(self, "status", status)


Decision = Modern | RetryModern | RejectedModern | Legacy | Incompatible | Undecided


def _versions_only(
    supported: Iterable[Any], ours: Sequence[str], legacy: Sequence[str], what: str
) -> Decision:
    """A modern answer with no mutual modern version: a listed legacy revision is still
    usable through ``initialize``; otherwise nothing is."""
    listed = tuple(v for v in supported if isinstance(v, str))
    if pick_version(list(listed), legacy) is not None:
        return Legacy(f"{what} lists only handshake-era versions this client speaks")
    names = ", ".join(shown(v) for v in listed[:8]) or "none"
    return Incompatible(
        f"the server speaks protocol versions {names}; this client speaks "
        f"{', '.join((*ours, *legacy))}",
        listed,
    )


def _classify_error(
    error: Any, status: int | None, ours: Sequence[str], legacy: Sequence[str]
) -> Decision:
    where = f"HTTP {status} with " if status is not None else ""
    code = error.get("code") if isinstance(error, dict) else None
    data = error.get("data") if isinstance(error, dict) else None
    # Only a well-formed modern error counts as recognised (schema
    # UnsupportedProtocolVersionError / MissingRequiredClientCapabilityError /
    # HeaderMismatchError); anything else is "any other error" and means legacy.
    if code == -32022 and isinstance(data, dict) and isinstance(data.get("supported"), list):
        supported = tuple(v for v in data["supported"] if isinstance(v, str))
        version = pick_version(list(supported), ours)
        if version is not None:
            return RetryModern(version, supported)
        return _versions_only(supported, ours, legacy, "the -32022 error")
    if code == -32020 or (
        code == -32021
        and isinstance(data, dict)
        and isinstance(data.get("requiredCapabilities"), dict)
    ):
        return RejectedModern(server_error_from(error, method=DISCOVER))
    shown_code = code if isinstance(code, int) and not isinstance(code, bool) else "no"
    return Legacy(f"server/discover answered {where}error code {shown_code}")


def classify_probe(
    outcome: ProbeOutcome,
    *,
    ours: Sequence[str] = MODERN_VERSIONS,
    legacy: Sequence[str] = LEGACY_VERSIONS,
) -> Decision:
    """Decide the era from the probe's outcome (LIFE-5, LIFE-6, LIFE-7, §B3).

    ``ours`` are the modern versions this client speaks, preferred first; ``legacy``
    the handshake-era ones. Never raises on peer data.
    """
    if isinstance(outcome, ProbeSilent):
        return Legacy("no answer to server/discover within discover_timeout")
    if isinstance(outcome, ProbeFailed):
        return _classify_error(outcome.error, outcome.http_status, ours, legacy)
    if isinstance(outcome, ProbeHttpStatus):
        status = outcome.status
        if status in (401, 403):
            return Undecided(f"HTTP {status}: authorization required", status)
        if status >= 500:
            return Undecided(f"HTTP {status}: server failure", status)
        messages = list(jsonrpc.decode(outcome.body)) if outcome.body else []
        if len(messages) == 1 and isinstance(messages[0], jsonrpc.ErrorResponse):
            return _classify_error(messages[0].error, status, ours, legacy)
        if len(messages) == 1 and isinstance(messages[0], jsonrpc.Response) and status < 300:
            return classify_probe(ProbeAnswered(messages[0].result), ours=ours, legacy=legacy)
        return Legacy(f"HTTP {status} without a JSON-RPC error body")
    try:
        info = parse_discover_result(outcome.result, ours=ours)
    except RemoteProtocolError:
        # e.g. a legacy server answering unknown methods with {}: not a DiscoverResult.
        return Legacy("the server/discover answer is not a DiscoverResult")
    if info.protocol_version is not None:
        return Modern(info.protocol_version, info)
    return _versions_only(info.supported_versions, ours, legacy, "server/discover")


# --------------------------------------------------------------- era cache


def origin_key(url: str) -> tuple[str, str, int]:
    """The origin of an HTTP endpoint (RFC 6454: scheme, host, port), the era cache key
    over HTTP ("cache the result for the lifetime of ... origin (HTTP)", LIFE-18).

    Raises:
        ValueError: not an absolute http(s) URL.
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"not a usable URL {shown(url)}: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an absolute http(s) URL: {shown(url)}")
    return (scheme, parts.hostname.lower(), port or (443 if scheme == "https" else 80))


def process_key(pid: int, argv: Sequence[str] = ()) -> tuple[str, int, tuple[str, ...]]:
    """The era cache key of a stdio server process ("for the lifetime of the server
    process"): a restart gets a new pid, hence a new probe. ``argv`` guards against a
    reused pid."""
    return ("stdio", pid, tuple(argv))


class EraRecord(Record):
    """What the cache knows of one server: its era and the version in use."""

    __slots__ = ("era", "protocol_version")
    era: Literal["modern", "legacy"]
    protocol_version: str | None

    def __init__(
        self, era: Literal["modern", "legacy"], protocol_version: str | None = None
    ) -> None:
        _set(self, "era", era)
        _set(self, "protocol_version", protocol_version)


@final
class EraCache:
    """Era per process (stdio) / origin (HTTP), pure data (LIFE-18).

    ``remember`` after a probe decided; ``get`` before probing; ``forget`` when the
    cached assumption failed (e.g. a modern request rejected as if by a legacy server),
    so the next request probes again. Bounded: past ``max_entries`` the least recently
    remembered server is dropped. Not thread-safe by itself; the shell owning it
    serialises access.
    """

    __slots__ = ("_entries", "max_entries")

    def __init__(self, max_entries: int = DEFAULT_ERA_CACHE_SIZE) -> None:
        if isinstance(max_entries, bool) or not isinstance(max_entries, int):
            raise ValueError(f"max_entries must be an integer, got {shown(max_entries)}")
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, got {max_entries}")
        self.max_entries = max_entries
        self._entries: dict[Hashable, EraRecord] = {}

    def __repr__(self) -> str:
        return f"EraCache(max_entries={self.max_entries}, entries={len(self._entries)})"

    def get(self, key: Hashable) -> EraRecord | None:
        return self._entries.get(key)

    def remember(
        self, key: Hashable, era: Literal["modern", "legacy"], protocol_version: str | None = None
    ) -> EraRecord:
        if era not in ("modern", "legacy"):
            raise ValueError(f"era must be 'modern' or 'legacy', got {shown(era)}")
        record = EraRecord(era, protocol_version)
        self._entries.pop(key, None)  # re-inserting moves it to the young end
        self._entries[key] = record
        while len(self._entries) > self.max_entries:
            del self._entries[next(iter(self._entries))]
        return record

    def forget(self, key: Hashable) -> bool:
        """Drop ``key``; True when it was cached."""
        return self._entries.pop(key, None) is not None

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)
