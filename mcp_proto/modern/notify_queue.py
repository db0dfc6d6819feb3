"""The pure parts of a ``subscriptions/listen`` subscription (2026-07-28).

Spec: ``basic/patterns/subscriptions.mdx``. docs/requirements.md SUB-3, SUB-7..13, SUB-15,
SUB-21..24 (the policy), SUB-31.

- :class:`NotificationQueue`: the bounded queue between a stream's reader and the
  subscription's listeners (SUB-7..12).
- :class:`ListenFilter`: the requested filter, copied and frozen at creation (SUB-13).
- :func:`judge_acknowledgment`: what the server granted, frozen, and what it did not
  (SUB-3).
- :func:`classify_closing`: a response to the listen request (SUB-15).
- :func:`subscription_id` / :class:`Demux`: which subscription a message is on (SUB-31).
- :class:`RestartPolicy`: may subscriptions be re-sent to a restarted stdio process
  (SUB-21..24)?
"""

from __future__ import annotations

import json
from collections import OrderedDict, deque
from collections.abc import Hashable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, Final

import attrs

from ..jsonrpc import RequestId
from . import SUBSCRIPTION_RESTART_MIN_INTERVAL

__all__ = [
    "SUBSCRIPTION_ID_KEY",
    "Acknowledgment",
    "Closing",
    "Demux",
    "ListenFilter",
    "NotificationQueue",
    "ProcessRecord",
    "Queued",
    "RestartPolicy",
    "classify_closing",
    "deep_freeze",
    "judge_acknowledgment",
    "notification_charge",
    "subscription_id",
    "thing_of",
]

# ---------------------------------------------------------------- the queue

Thing = tuple[Hashable, ...]


def thing_of(method: str, params: Mapping[str, Any] | None) -> Thing:
    """What a notification is about (SUB-9): its method plus its ``uri`` or
    ``taskId`` when it names one. Two notifications about the same thing are repeats:
    every MCP notification is a "look again" signal, so the later one says all the
    earlier one did."""
    if isinstance(params, Mapping):
        for field in ("uri", "taskId"):
            value = params.get(field)
            if isinstance(value, (str, int)) and not isinstance(value, bool):
                return (method, field, value)
    return (method,)


def notification_charge(method: str, params: Mapping[str, Any] | None) -> int:
    """The bytes a queued notification retains (SUB-8): its method name *and* its
    params, as UTF-8 JSON. A ``{}`` payload under a multi-megabyte method name is
    charged for the name."""
    size = len(method.encode("utf-8", "surrogatepass"))
    if params is not None:
        text = json.dumps(params, separators=(",", ":"), ensure_ascii=False, default=repr)
        size += len(text.encode("utf-8", "surrogatepass"))
    return size


@attrs.frozen
class Queued:
    """One queued notification. ``charge`` is 0 for the oversized slot's occupant,
    which is not counted against the byte budget (SUB-11)."""

    seq: int
    method: str
    params: dict[str, Any] | None
    thing: Thing
    size: int
    oversized: bool

    @property
    def charge(self) -> int:
        return 0 if self.oversized else self.size

    @property
    def charged(self) -> bool:
        """Whether byte pressure can be relieved by giving this entry up (SUB-10)."""
        return self.charge > 0


class _Index:
    """Entries grouped by thing, for one kind of pressure: oldest entry per thing,
    things by multiplicity, and the oldest entry overall (``order``)."""

    def __init__(self) -> None:
        self.order: OrderedDict[int, Queued] = OrderedDict()
        self.by_thing: dict[Thing, deque[int]] = {}
        self.buckets: dict[int, dict[Thing, None]] = {}
        self.top = 0

    def __len__(self) -> int:
        return len(self.order)

    def _move(self, thing: Thing, old: int, new: int) -> None:
        if old:
            bucket = self.buckets[old]
            del bucket[thing]
            if not bucket:
                del self.buckets[old]
        if new:
            self.buckets.setdefault(new, {})[thing] = None
        if new > self.top:
            self.top = new
        while self.top and self.top not in self.buckets:
            self.top -= 1

    def add(self, entry: Queued) -> None:
        self.order[entry.seq] = entry
        seqs = self.by_thing.setdefault(entry.thing, deque())
        seqs.append(entry.seq)
        self._move(entry.thing, len(seqs) - 1, len(seqs))

    def remove(self, entry: Queued) -> None:
        del self.order[entry.seq]
        seqs = self.by_thing[entry.thing]
        if seqs[0] == entry.seq:
            seqs.popleft()
        else:  # an entry of this thing older than it stays (only across indexes)
            seqs.remove(entry.seq)
        self._move(entry.thing, len(seqs) + 1, len(seqs))
        if not seqs:
            del self.by_thing[entry.thing]

    def victim(self, arriving: Thing) -> Queued:
        """The entry to give up for an arrival about ``arriving`` (SUB-9): the oldest
        about the same thing; else the oldest of the thing with the most entries here
        (ties: the thing whose oldest entry is oldest)."""
        same = self.by_thing.get(arriving)
        if same:
            return self.order[same[0]]
        if self.top <= 1:  # every thing has one entry: the oldest of all of them
            return next(iter(self.order.values()))
        oldest = min(self.by_thing[t][0] for t in self.buckets[self.top])
        return self.order[oldest]


class NotificationQueue:
    """The notifications waiting for a subscription's listeners, bounded in count and
    in retained bytes (SUB-7).

    When an arrival would breach a bound, the queue gives up the oldest notification
    about the same thing, else the oldest of the thing with the most queued: a listener
    that falls behind loses repeats, not signals (SUB-9). Count pressure considers every
    entry; byte pressure only entries charged against the byte budget, so every eviction
    relieves the pressure that caused it (SUB-10). A notification larger than the whole
    byte budget takes the single oversized slot, uncharged: it is neither lost for its
    size nor able to displace anything (a newer oversized one replaces it), so retention
    stays within the budget plus one peer-sized payload (SUB-11).
    """

    MAX_PENDING_NOTIFICATIONS: Final = 1024
    MAX_PENDING_NOTIFICATION_BYTES: Final = 8 * 1024 * 1024

    def __init__(self, max_count: int | None = None, max_bytes: int | None = None) -> None:
        self.max_count = self.MAX_PENDING_NOTIFICATIONS if max_count is None else max_count
        self.max_bytes = self.MAX_PENDING_NOTIFICATION_BYTES if max_bytes is None else max_bytes
        if self.max_count < 1 or self.max_bytes < 1:
            raise ValueError("a notification queue needs room for at least one entry and byte")
        self._all = _Index()
        self._charged = _Index()
        self._oversized: Queued | None = None
        self._bytes = 0
        self._seq = 0
        #: Notifications given up to make room (SUB-12).
        self.dropped = 0

    # Lag metrics (SUB-12).
    @property
    def pending(self) -> int:
        return len(self._all)

    @property
    def pending_bytes(self) -> int:
        """Bytes retained by every queued notification, the oversized one included."""
        extra = self._oversized.size if self._oversized is not None else 0
        return self._bytes + extra

    @property
    def charged_bytes(self) -> int:
        """Bytes charged against the budget (always ``<= max_bytes``)."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._all)

    def entries(self) -> list[Queued]:
        """The queued entries, oldest first (a copy)."""
        return list(self._all.order.values())

    def push(
        self, method: str, params: dict[str, Any] | None, *, size: int | None = None
    ) -> list[Queued]:
        """Queue a notification; returns what was evicted to make room. ``size``
        overrides :func:`notification_charge` (e.g. the frame's length)."""
        if size is None:
            size = notification_charge(method, params)
        self._seq += 1
        entry = Queued(
            self._seq, method, params, thing_of(method, params), size, size > self.max_bytes
        )
        evicted: list[Queued] = []
        if entry.oversized and self._oversized is not None:
            evicted.append(self._evict(self._oversized))  # one slot only
        while len(self._all) >= self.max_count:
            evicted.append(self._evict(self._all.victim(entry.thing)))
        if not entry.oversized:
            while self._bytes + entry.size > self.max_bytes:
                evicted.append(self._evict(self._charged.victim(entry.thing)))
        self._all.add(entry)
        if entry.oversized:
            self._oversized = entry
        elif entry.charged:
            self._charged.add(entry)
            self._bytes += entry.size
        return evicted

    def pop(self) -> Queued | None:
        """The oldest queued notification, or ``None`` when empty."""
        if not self._all:
            return None
        entry = next(iter(self._all.order.values()))
        self._remove(entry)
        return entry

    def clear(self) -> None:
        while self.pop() is not None:
            pass

    def _evict(self, entry: Queued) -> Queued:
        self._remove(entry)
        self.dropped += 1
        return entry

    def _remove(self, entry: Queued) -> None:
        self._all.remove(entry)
        if entry.oversized:
            self._oversized = None
        elif entry.charged:
            self._charged.remove(entry)
            self._bytes -= entry.size


# ---------------------------------------------------------------- filter and acknowledgment

#: API name → wire name of each filter field (spec: Subscriptions § Notification Filter).
FILTER_FIELDS: Final[Mapping[str, str]] = {
    "tools_list_changed": "toolsListChanged",
    "prompts_list_changed": "promptsListChanged",
    "resources_list_changed": "resourcesListChanged",
    "resource_subscriptions": "resourceSubscriptions",
}
_FLAGS: Final = ("toolsListChanged", "promptsListChanged", "resourcesListChanged")
_FLAG_OF_METHOD: Final[Mapping[str, str]] = {
    "notifications/tools/list_changed": "tools_list_changed",
    "notifications/prompts/list_changed": "prompts_list_changed",
    "notifications/resources/list_changed": "resources_list_changed",
}


def _uris(value: Any) -> tuple[str, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError("resource_subscriptions must be a sequence of URI strings")
    uris = tuple(value)
    if not all(isinstance(u, str) for u in uris):
        raise TypeError("resource_subscriptions must hold URI strings only")
    return uris


@attrs.frozen
class ListenFilter:
    """The ``notifications`` filter of a listen request, frozen (SUB-13): the URIs are
    copied into a tuple when it is built, so a caller mutating the list it passed
    cannot change the request that goes out or what a reconnect asks for."""

    tools_list_changed: bool = False
    prompts_list_changed: bool = False
    resources_list_changed: bool = False
    resource_subscriptions: tuple[str, ...] = attrs.field(default=(), converter=_uris)

    @classmethod
    def coerce(cls, value: ListenFilter | Mapping[str, Any]) -> ListenFilter:
        """From a :class:`ListenFilter`, or a mapping with API (snake_case) or wire
        (camelCase) keys. Unknown keys and non-boolean flags are refused."""
        if isinstance(value, ListenFilter):
            return value
        if not isinstance(value, Mapping):
            raise TypeError("notifications must be a ListenFilter or a mapping")
        wire_to_api = {w: a for a, w in FILTER_FIELDS.items()}
        kwargs: dict[str, Any] = {}
        for key, item in value.items():
            name = key if key in FILTER_FIELDS else wire_to_api.get(key)
            if name is None:
                raise ValueError(f"unknown notification filter field {key!r}")
            if name != "resource_subscriptions" and not isinstance(item, bool):
                raise TypeError(f"notification filter field {key!r} must be a bool")
            kwargs[name] = item
        return cls(**kwargs)

    def wants(self, method: str, params: Mapping[str, Any] | None = None) -> bool:
        """Whether a subscription with this filter asked for ``method`` (``params``:
        its ``uri`` for ``notifications/resources/updated``). Used for a notification
        the client emits itself (HDR-5: a synthetic ``tools/list_changed``), which has
        no listen stream to arrive on."""
        flag = _FLAG_OF_METHOD.get(method)
        if flag is not None:
            return bool(getattr(self, flag))
        if method == "notifications/resources/updated":
            uri = (params or {}).get("uri")
            return isinstance(uri, str) and uri in self.resource_subscriptions
        return False

    def to_params(self) -> dict[str, Any]:
        """A fresh ``notifications`` object for the request (only requested fields)."""
        out: dict[str, Any] = {}
        for api, wire in FILTER_FIELDS.items():
            value = getattr(self, api)
            if value:
                out[wire] = list(value) if api == "resource_subscriptions" else True
        return out


def deep_freeze(value: Any) -> Any:
    """A read-only deep copy: mappings become ``MappingProxyType``, lists tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: deep_freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(deep_freeze(v) for v in value)
    return value


@attrs.frozen
class Acknowledgment:
    """What a subscription's acknowledgment granted (SUB-3).

    ``acknowledged`` is a deep-frozen copy of the granted filter: the notification it
    came in is handed to host code afterwards, and editing it must not rewrite this.
    ``unsupported`` names (wire names) the requested fields not really granted, judged
    from values: a flag acknowledged other than ``true``, or ``resourceSubscriptions``
    echoed with none of the requested URIs. ``missing_uris`` are requested URIs the
    acknowledgment does not list."""

    acknowledged: Mapping[str, Any]
    unsupported: tuple[str, ...]
    missing_uris: tuple[str, ...]


def judge_acknowledgment(requested: ListenFilter, params: Any) -> Acknowledgment:
    """Judge ``notifications/subscriptions/acknowledged`` params against the request."""
    granted = params.get("notifications") if isinstance(params, Mapping) else None
    if not isinstance(granted, Mapping):
        granted = {}
    frozen = deep_freeze(granted)
    unsupported: list[str] = []
    for api, wire in FILTER_FIELDS.items():
        if (
            api != "resource_subscriptions"
            and getattr(requested, api)
            and frozen.get(wire) is not True
        ):
            unsupported.append(wire)
    echoed = frozen.get("resourceSubscriptions")
    echoed_uris = {u for u in echoed if isinstance(u, str)} if isinstance(echoed, tuple) else set()
    missing = tuple(u for u in requested.resource_subscriptions if u not in echoed_uris)
    if requested.resource_subscriptions and len(missing) == len(requested.resource_subscriptions):
        unsupported.append("resourceSubscriptions")
    return Acknowledgment(frozen, tuple(unsupported), missing)


@attrs.frozen
class Closing:
    """How a response to the listen request ends the subscription (SUB-15):
    ``graceful`` (the server closed it cleanly) or a failure with ``reason``."""

    graceful: bool
    reason: str | None = None


def classify_closing(result: Any) -> Closing:
    """A listen request's response: a recognised completion closes gracefully; an
    unknown ``resultType``, a missing or scalar ``result`` fails the subscription, and
    so does ``input_required`` (valid only on tools/call, resources/read, prompts/get;
    spec: Multi Round-Trip Requests § Supported Requests)."""
    if not isinstance(result, Mapping):
        return Closing(False, "the listen response carried no result object")
    kind = result.get("resultType", "complete")
    if kind == "complete":
        return Closing(True)
    if kind == "input_required":
        return Closing(False, "the server answered the listen request with input_required")
    return Closing(False, "the listen response has an unrecognised resultType")


# ---------------------------------------------------------------- demultiplexing

SUBSCRIPTION_ID_KEY: Final = "io.modelcontextprotocol/subscriptionId"


def subscription_id(params: Any) -> RequestId | None:
    """The listen request id a message belongs to (SUB-31: ``_meta`` key
    ``io.modelcontextprotocol/subscriptionId``), or ``None``."""
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    value = meta.get(SUBSCRIPTION_ID_KEY) if isinstance(meta, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return None
    return value


class Demux:
    """Routes notifications to the listen stream they belong to (SUB-31). On stdio all
    streams share one channel, so the ``_meta`` id is the only correlation."""

    def __init__(self) -> None:
        self._open: set[RequestId] = set()

    def open(self, listen_id: RequestId) -> None:
        self._open.add(listen_id)

    def close(self, listen_id: RequestId) -> None:
        self._open.discard(listen_id)

    @property
    def streams(self) -> frozenset[RequestId]:
        return frozenset(self._open)

    def route(self, params: Any) -> RequestId | None:
        """The open stream a notification is for, or ``None`` (not on a stream, or a
        stream already closed: then it is not delivered to any subscription)."""
        sid = subscription_id(params)
        return sid if sid is not None and sid in self._open else None


# ---------------------------------------------------------------- stdio restart policy


@attrs.define(eq=False)
class ProcessRecord:
    """One stdio server process, as the restart policy sees it (SUB-24)."""

    #: When this process received the subscriptions (``now`` of the hand-over).
    received_at: float | None = None
    #: When it exited, and whether the client asked for that.
    exited_at: float | None = None
    requested: bool = False


class RestartPolicy:
    """May open subscriptions be re-sent to a restarted stdio process (SUB-21..24)?

    A process that died on its own less than ``min_interval`` seconds after receiving
    the subscriptions is a crash loop: the subscriptions end instead of being re-sent
    for ever (SUB-21). A teardown the client asked for never counts (SUB-22). The
    interval runs from when that process received them, not from the restart attempt
    (SUB-24). The question is asked once, at the hand-over, and asking spends the record
    (SUB-23): a subscription opened directly on the replacement is judged on its own
    process's uptime.
    """

    SUBSCRIPTION_RESTART_MIN_INTERVAL: Final = SUBSCRIPTION_RESTART_MIN_INTERVAL

    def __init__(self, min_interval: float | None = None) -> None:
        self.min_interval = (
            self.SUBSCRIPTION_RESTART_MIN_INTERVAL if min_interval is None else min_interval
        )
        self._last_receiver: ProcessRecord | None = None

    def new_process(self) -> ProcessRecord:
        return ProcessRecord()

    def handed_over(self, process: ProcessRecord, now: float) -> None:
        """Subscriptions were (re)sent to ``process`` at ``now``."""
        if process.received_at is None:
            process.received_at = now
        self._last_receiver = process

    def exited(self, process: ProcessRecord, now: float, *, requested: bool) -> None:
        """``process`` ended at ``now`` (``requested``: the client tore it down)."""
        if process.exited_at is None:
            process.exited_at = now
            process.requested = requested

    def may_hand_over(self) -> bool:
        """Asked once, at the single hand-over point, before re-sending: ``False`` when
        the process they were last sent to crashed within ``min_interval`` of receiving
        them. Spends the record either way."""
        last, self._last_receiver = self._last_receiver, None
        if last is None or last.received_at is None or last.exited_at is None or last.requested:
            return True
        return last.exited_at - last.received_at >= self.min_interval
