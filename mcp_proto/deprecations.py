"""Deprecated features and their one-time notices (DEP-1..10, 12, 15, 16 in
``docs/requirements.md``).

The core keeps the registry and the once-per-process state (one :class:`Ledger`,
:data:`LEDGER`, with a documented :func:`reset`); the shells write the notice to their
logger. Each feature's notice is in one of three states:

- *due*: not yet announced (or its last announcement failed);
- *in flight*: one caller holds it and is writing it;
- *announced*: written; never again in this process.

:func:`claim` moves due → in flight and hands the notice to exactly one caller;
:func:`confirm` moves in flight → announced; :func:`release` moves in flight → due, for
a logger that raised, filtered the warning or wrote nowhere (DEP-12). A caller finding
the notice in flight — another thread's first use, or re-entrancy from a formatter or
log handler touching a deprecated feature — returns at once instead of waiting (DEP-15):
waiting could deadlock on the logger's own lock, and gains nothing, since the holder
releases the notice if it could not write it. :func:`announce` runs the whole cycle
around an ``emit`` callable and never raises.

Claiming is one ``dict.setdefault`` of a fresh token: atomic under the GIL, so two
threads cannot both win it. "Earliest removal" names a revision, not a date (DEP-8).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final, Literal

from ._record import Record
from .errors import LocalProtocolError

__all__ = [
    "LEDGER",
    "REGISTRY",
    "Deprecation",
    "Ledger",
    "announce",
    "announced",
    "claim",
    "confirm",
    "enabled",
    "features_in_meta",
    "features_in_sampling_request",
    "registry",
    "release",
    "reset",
    "roots_answer_exposes",
    "state",
]

_AFTER_2027: Final = "the first revision published on or after 2027-07-28"


class Deprecation(Record):
    """One deprecated feature. ``source``: where the deprecation comes from (SEP or
    PR); ``triggers``: what counts as using the feature (the notice fires on the first
    of them)."""

    __slots__ = (
        "deprecated_since",
        "earliest_removal",
        "feature",
        "migration",
        "source",
        "triggers",
    )
    feature: str
    deprecated_since: str
    earliest_removal: str
    migration: str
    source: str
    triggers: str

    def __init__(
        self,
        feature: str,
        deprecated_since: str,
        earliest_removal: str,
        migration: str,
        source: str = "",
        triggers: str = "",
    ) -> None:
        _set = object.__setattr__  # (frozen: Record refuses setattr; made once each)
        _set(self, "feature", feature)
        _set(self, "deprecated_since", deprecated_since)
        _set(self, "earliest_removal", earliest_removal)
        _set(self, "migration", migration)
        _set(self, "source", source)
        _set(self, "triggers", triggers)

    @property
    def notice(self) -> str:
        return (
            f"{self.feature} is deprecated (since MCP {self.deprecated_since}); earliest "
            f"removal: {self.earliest_removal}. {self.migration}"
        )


#: Every feature the 2026-07-28 revision lists as deprecated (DEP-1..7), by key.
REGISTRY: Final[dict[str, Deprecation]] = {
    "roots": Deprecation(
        feature="Roots",
        deprecated_since="2026-07-28",
        earliest_removal=_AFTER_2027,
        migration=(
            "Pass directories or files through tool parameters, resource URIs or the "
            "server's configuration."
        ),
        source="SEP-2577",
        triggers="roots= given, set_roots(), or a roots/list answer carrying a root",
    ),
    "sampling": Deprecation(
        feature="Sampling",
        deprecated_since="2026-07-28",
        earliest_removal=_AFTER_2027,
        migration="Call the LLM provider's API directly.",
        source="SEP-2577",
        triggers="sampling_handler= given, or a sampling request served",
    ),
    "logging": Deprecation(
        feature="Logging",
        deprecated_since="2026-07-28",
        earliest_removal=_AFTER_2027,
        migration="Log to stderr (stdio) or use OpenTelemetry.",
        source="SEP-2577",
        triggers=(
            "set_log_level(), io.modelcontextprotocol/logLevel in request_meta or a "
            "call's _meta, or a notifications/message received"
        ),
    ),
    "http_sse": Deprecation(
        feature="The HTTP+SSE transport",
        deprecated_since="2025-03-26",
        earliest_removal="three months after SEP-2596 reaches Final",
        migration="Migrate the server to Streamable HTTP.",
        source="SEP-2596 (reclassification)",
        triggers="an HTTP+SSE server once connected",
    ),
    "include_context": Deprecation(
        feature='includeContext "thisServer" / "allServers" in sampling requests',
        deprecated_since="2025-11-25",
        earliest_removal="follows Sampling (SEP-2577)",
        migration='Servers omit the field or send "none".',
        source="SEP-2596 (reclassification)",
        triggers='a sampling request with includeContext "thisServer" or "allServers"',
    ),
    "oauth_dcr": Deprecation(
        feature="OAuth Dynamic Client Registration",
        deprecated_since="2026-07-28",
        earliest_removal=_AFTER_2027,
        migration="Use Client ID Metadata Documents or pre-registered credentials.",
        source="PR #2858",
        triggers="a client registered dynamically",
    ),
}

#: Set to False (before creating clients) to silence every notice (DEP-10).
enabled = True

_ANNOUNCED: Final = "announced"

State = Literal["due", "in_flight", "announced"]


def _check(key: str) -> None:
    if key not in REGISTRY:
        raise LocalProtocolError(f"unknown deprecated feature {key!r}")


class Ledger:
    """Which notices were announced: the state this module's functions act on.

    One ledger serves the whole process (:data:`LEDGER`): DEP-9 asks for each notice
    once per process, whatever the number of clients. It is the only state of the
    module; :meth:`reset` (the module's :func:`reset`) makes every notice due again,
    for tests (a property or fuzz run that depends on it resets it first, so results
    do not depend on which test ran before) and for a host that wants the notices
    again. A separate ``Ledger()`` keeps its own account (a test harness, an embedder
    with its own once-per-what rule)."""

    __slots__ = ("_state",)

    def __init__(self) -> None:
        #: key → _ANNOUNCED, or the token of the caller holding it in flight.
        self._state: dict[str, object] = {}

    def claim(self, key: str) -> Deprecation | None:
        """See the module's :func:`claim`."""
        _check(key)
        if not enabled:
            return None
        token = object()
        if self._state.setdefault(key, token) is not token:
            return None
        return REGISTRY[key]

    def confirm(self, key: str) -> None:
        _check(key)
        self._state[key] = _ANNOUNCED

    def release(self, key: str) -> None:
        _check(key)
        if self._state.get(key) is not _ANNOUNCED:
            self._state.pop(key, None)

    def state(self, key: str) -> State:
        _check(key)
        value = self._state.get(key)
        if value is None:
            return "due"
        return "announced" if value is _ANNOUNCED else "in_flight"

    def announced(self) -> frozenset[str]:
        return frozenset(k for k, v in list(self._state.items()) if v is _ANNOUNCED)

    def reset(self) -> None:
        """Make every notice due again (notices in flight too: their holders' later
        confirm or release still lands, as for any claim)."""
        self._state.clear()


#: The process's ledger (DEP-9: once per process).
LEDGER: Final = Ledger()


def claim(key: str) -> Deprecation | None:
    """The notice for ``key`` if it is due, now in flight for this caller; else
    ``None`` (announced, silenced, or in flight elsewhere: return at once, DEP-15).

    A caller that gets a notice must :func:`confirm` it once written or
    :func:`release` it if it could not be; one that does neither leaves it in flight,
    which only ever means "never again in this process"."""
    return LEDGER.claim(key)


def confirm(key: str) -> None:
    """The claimed notice was written: it is spent for this process (DEP-9)."""
    LEDGER.confirm(key)


def release(key: str) -> None:
    """The claimed notice could not be written (the logger raised, filtered it or
    writes nowhere): it is due again for a later use (DEP-12)."""
    LEDGER.release(key)


def announce(key: str, emit: Callable[[str], Any]) -> bool:
    """Write ``key``'s notice with ``emit`` if it is due. Never raises, never waits.

    ``emit`` receives the notice text; it returns ``False`` when the text went nowhere
    (a filtered or disabled logger), anything else when it was written. An ``emit`` that
    raises, or returns ``False``, leaves the notice due. Returns whether this call
    announced it."""
    notice = claim(key)
    if notice is None:
        return False
    try:
        written = emit(notice.notice) is not False
    except Exception:  # the feature keeps working whatever the logger does (DEP-12)
        written = False
    if written:
        confirm(key)
    else:
        release(key)
    return written


def state(key: str) -> State:
    """``"due"``, ``"in_flight"`` or ``"announced"`` in this process."""
    return LEDGER.state(key)


def registry() -> Mapping[str, Deprecation]:
    """Every deprecated feature, by key (DEP-1). A read-only view."""
    return MappingProxyType(REGISTRY)


def announced() -> frozenset[str]:
    """The keys whose notice was written in this process."""
    return LEDGER.announced()


def reset() -> None:
    """Make every notice due again: the process's :data:`LEDGER` forgets what it
    announced. Tests call it before a run that depends on the notices (so no result
    depends on test order); a long-lived host may call it to hear the notices again.
    ``enabled`` is not touched."""
    LEDGER.reset()


# ---------------------------------------------------------------- triggers (DEP-2..6, 16)

LOG_LEVEL_META_KEY: Final = "io.modelcontextprotocol/logLevel"


def roots_answer_exposes(result: Any) -> bool:
    """Whether a ``roots/list`` answer uses Roots: only one carrying a root (DEP-16).
    The always-registered handler answering an empty list exposes nothing."""
    roots = result.get("roots") if isinstance(result, Mapping) else None
    return isinstance(roots, list) and len(roots) > 0


def features_in_meta(meta: Any) -> tuple[str, ...]:
    """Deprecated features a request's ``_meta`` uses: a log level (DEP-4)."""
    return ("logging",) if isinstance(meta, Mapping) and LOG_LEVEL_META_KEY in meta else ()


def features_in_sampling_request(params: Any) -> tuple[str, ...]:
    """Deprecated features a served sampling request uses (DEP-3, DEP-6)."""
    ctx = params.get("includeContext") if isinstance(params, Mapping) else None
    return ("sampling", "include_context") if ctx in ("thisServer", "allServers") else ("sampling",)
