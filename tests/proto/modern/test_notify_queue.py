"""Listen subscriptions, pure parts: the bounded notification queue (SUB-7..12, with a
hypothesis model against a reference implementation), the frozen filter (SUB-13), the
acknowledgment (SUB-3), closing responses (SUB-15), demultiplexing (SUB-31) and the
stdio restart policy (SUB-21..24)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto.modern.notify_queue import (
    SUBSCRIPTION_ID_KEY,
    Closing,
    Demux,
    ListenFilter,
    NotificationQueue,
    Queued,
    RestartPolicy,
    classify_closing,
    judge_acknowledgment,
    notification_charge,
    subscription_id,
    thing_of,
)

UPDATED = "notifications/resources/updated"


def updated(uri: str, pad: int = 0) -> dict[str, Any]:
    return {"uri": uri, "pad": "x" * pad}


def methods_and_uris(q: NotificationQueue) -> list[tuple[str, Any]]:
    return [(e.method, (e.params or {}).get("uri")) for e in q.entries()]


# ---------------------------------------------------------------- the queue: examples


def test_defaults_are_the_documented_bounds() -> None:
    q = NotificationQueue()
    assert q.max_count == NotificationQueue.MAX_PENDING_NOTIFICATIONS
    assert q.max_bytes == NotificationQueue.MAX_PENDING_NOTIFICATION_BYTES
    with pytest.raises(ValueError):
        NotificationQueue(max_count=0)
    with pytest.raises(ValueError):
        NotificationQueue(max_bytes=0)


def test_thing_is_method_plus_uri_or_task_id() -> None:
    assert thing_of(UPDATED, {"uri": "a"}) == (UPDATED, "uri", "a")
    assert thing_of("notifications/tasks/status", {"taskId": "t1"}) == (
        "notifications/tasks/status",
        "taskId",
        "t1",
    )
    assert thing_of("notifications/tools/list_changed", {}) == ("notifications/tools/list_changed",)
    assert thing_of("notifications/tools/list_changed", None) == (
        "notifications/tools/list_changed",
    )
    assert thing_of(UPDATED, {"uri": ["not", "hashable"]}) == (UPDATED,)


def test_count_bound_gives_up_a_repeat_of_the_same_thing() -> None:
    q = NotificationQueue(max_count=3)
    q.push(UPDATED, updated("a"))
    q.push(UPDATED, updated("b"))
    q.push(UPDATED, updated("a"))
    [evicted] = q.push(UPDATED, updated("a"))
    assert (evicted.method, evicted.params) == (UPDATED, updated("a"))
    assert evicted.seq == 1  # the oldest about "a"
    assert methods_and_uris(q) == [(UPDATED, "b"), (UPDATED, "a"), (UPDATED, "a")]
    assert (q.pending, q.dropped) == (3, 1)


def test_a_quiet_resource_keeps_its_only_update_against_a_busy_one() -> None:
    # SUB-9: the arrival is about a third thing: the busiest thing pays.
    q = NotificationQueue(max_count=4)
    q.push(UPDATED, updated("quiet"))
    for _ in range(3):
        q.push(UPDATED, updated("busy"))
    for _ in range(50):
        q.push(UPDATED, updated("other"))
        q.push(UPDATED, updated("busy"))
    uris = [u for _, u in methods_and_uris(q)]
    assert "quiet" in uris and "busy" in uris and "other" in uris
    assert len(uris) == 4


def test_every_distinct_thing_once_loses_the_oldest() -> None:
    q = NotificationQueue(max_count=2)
    q.push(UPDATED, updated("a"))
    q.push(UPDATED, updated("b"))
    [evicted] = q.push(UPDATED, updated("c"))
    assert evicted.params == updated("a")


def test_bytes_charge_the_method_name_too() -> None:
    # SUB-8: a {} payload under a huge method name is charged for the name.
    name = "notifications/" + "m" * 5000
    assert notification_charge(name, {}) == len(name) + 2
    assert notification_charge("x", None) == 1
    assert notification_charge("é", {"k": "é"}) == len("é".encode()) + len('{"k":"é"}'.encode())
    q = NotificationQueue(max_bytes=12_000)
    q.push(name, {})
    q.push(name, {})
    evicted = q.push(name, {})
    assert len(evicted) == 1
    assert q.charged_bytes <= 12_000 and q.pending == 2


def test_byte_bound_evicts_until_the_arrival_fits() -> None:
    q = NotificationQueue(max_bytes=1000)
    for i in range(5):
        q.push(UPDATED, updated(f"r{i}", pad=100))
    big = updated("r9", pad=700)
    evicted = q.push(UPDATED, big)
    assert len(evicted) >= 1
    assert q.charged_bytes <= 1000
    assert q.entries()[-1].params is big


def test_oversized_notification_takes_the_single_slot() -> None:
    # SUB-11: not lost for being large, unable to displace the others.
    q = NotificationQueue(max_count=10, max_bytes=500)
    for i in range(3):
        q.push(UPDATED, updated(f"r{i}", pad=100))
    before = q.charged_bytes
    assert q.push(UPDATED, updated("huge", pad=10_000)) == []
    assert q.pending == 4
    assert q.charged_bytes == before  # not charged against the budget
    assert q.pending_bytes == before + notification_charge(UPDATED, updated("huge", pad=10_000))
    # A second oversized one replaces the first; nobody else pays.
    [gone] = q.push(UPDATED, updated("huge2", pad=20_000))
    assert gone.params == updated("huge", pad=10_000)
    assert q.pending == 4 and q.dropped == 1
    # Retention stays within the budget plus one peer-sized payload.
    assert q.pending_bytes <= q.max_bytes + notification_charge(
        UPDATED, updated("huge2", pad=20_000)
    )


def test_pop_is_fifo_and_metrics_follow() -> None:
    q = NotificationQueue()
    q.push("notifications/tools/list_changed", {})
    q.push(UPDATED, updated("a"))
    assert q.pending == 2 and q.pending_bytes == q.charged_bytes > 0
    first = q.pop()
    assert first is not None and first.method == "notifications/tools/list_changed"
    second = q.pop()
    assert second is not None and second.params == updated("a")
    assert q.pop() is None
    assert (q.pending, q.pending_bytes, q.dropped) == (0, 0, 0)
    q.push(UPDATED, updated("a"))
    q.clear()
    assert len(q) == 0


def test_explicit_size_overrides_the_charge() -> None:
    q = NotificationQueue(max_bytes=100)
    q.push(UPDATED, updated("a"), size=60)
    assert q.charged_bytes == 60
    q.push(UPDATED, updated("b"), size=0)  # charged nothing, counted
    assert q.pending == 2 and q.charged_bytes == 60


# ---------------------------------------------------------------- the queue: model


@attrs.frozen
class Ref:
    seq: int
    thing: Any
    size: int
    oversized: bool

    @property
    def charged(self) -> bool:
        return not self.oversized and self.size > 0


def ref_victim(candidates: list[Ref], thing: Any) -> Ref:
    """SUB-9 written the obvious way."""
    same = [e for e in candidates if e.thing == thing]
    if same:
        return same[0]
    counts = Counter(e.thing for e in candidates)
    top = max(counts.values())
    return next(e for e in candidates if counts[e.thing] == top)


def ref_push(model: list[Ref], new: Ref, max_count: int, max_bytes: int) -> list[Ref]:
    evicted: list[Ref] = []

    def drop(e: Ref) -> None:
        model.remove(e)
        evicted.append(e)

    if new.oversized:
        for e in [e for e in model if e.oversized]:
            drop(e)
    while len(model) >= max_count:
        drop(ref_victim(model, new.thing))
    if not new.oversized:
        while sum(e.size for e in model if e.charged) + new.size > max_bytes:
            victim = ref_victim([e for e in model if e.charged], new.thing)
            assert victim.charged  # SUB-10: byte pressure only gives up charged entries
            drop(victim)
    model.append(new)
    return evicted


ops = st.lists(
    st.one_of(
        st.tuples(
            st.just("push"),
            st.sampled_from(
                [UPDATED, "notifications/tasks/status", "notifications/tools/list_changed"]
            ),
            st.sampled_from(["a", "b", "c", "d", None]),
            st.integers(min_value=0, max_value=400),
        ),
        st.tuples(st.just("pop"), st.none(), st.none(), st.none()),
    ),
    max_size=120,
)


@settings(max_examples=300, deadline=None)
@given(ops, st.integers(min_value=1, max_value=8), st.integers(min_value=1, max_value=600))
def test_queue_matches_the_reference_model(ops: Any, max_count: int, max_bytes: int) -> None:
    q = NotificationQueue(max_count=max_count, max_bytes=max_bytes)
    model: list[Ref] = []
    pushed = popped = 0
    newest: dict[Any, tuple[int, bool]] = {}
    for op, method, key, pad in ops:
        if op == "pop":
            got = q.pop()
            if model:
                assert got is not None and got.seq == model.pop(0).seq
                popped += 1
            else:
                assert got is None
            continue
        field = "taskId" if method == "notifications/tasks/status" else "uri"
        params: dict[str, Any] = {} if key is None else {field: key}
        params["pad"] = "p" * pad
        size = notification_charge(method, params)
        thing = thing_of(method, params)
        evicted = q.push(method, params)
        pushed += 1
        new = Ref(q.entries()[-1].seq, thing, size, size > max_bytes)
        expected = ref_push(model, new, max_count, max_bytes)
        newest[thing] = (new.seq, new.oversized)
        assert [e.seq for e in evicted] == [e.seq for e in expected]
        assert [e.seq for e in q.entries()] == [e.seq for e in model]
        # Bounds (SUB-7, SUB-11): count, charged bytes, one oversized slot.
        assert q.pending <= max_count
        assert q.charged_bytes <= max_bytes
        oversized = [e for e in q.entries() if e.oversized]
        assert len(oversized) <= 1
        assert q.pending_bytes <= max_bytes + sum(e.size for e in oversized)
        # Every entry is charged exactly what it retains (SUB-10).
        assert q.charged_bytes == sum(
            notification_charge(e.method, e.params) for e in q.entries() if not e.oversized
        )
        # Overflow always makes progress: the arrival is always kept.
        assert q.entries()[-1].seq == new.seq
        # Conservation and lag metrics (SUB-12).
        assert pushed == q.pending + popped + q.dropped
        # Each thing still queued keeps its newest entry (SUB-10), except through the
        # single oversized slot: a newest entry that was oversized can be replaced there
        # by a newer oversized one, and an older oversized entry is out of reach of the
        # byte pressure that may take a newer charged one.
        by_thing: dict[Any, list[Queued]] = {}
        for e in q.entries():
            by_thing.setdefault(e.thing, []).append(e)
        for t, entries in by_thing.items():
            seq, was_oversized = newest[t]
            assert entries[-1].seq == seq or was_oversized or all(e.oversized for e in entries)


def test_a_flood_stays_bounded() -> None:
    # A listen flood of distinct and repeated things: memory is the bound, not the flood.
    q = NotificationQueue(max_count=64, max_bytes=4096)
    for i in range(20_000):
        q.push(UPDATED, updated(f"r{i % 300}", pad=i % 50))
        assert q.pending <= 64 and q.charged_bytes <= 4096
    assert q.dropped == 20_000 - q.pending


# ---------------------------------------------------------------- filter and ack


def test_filter_is_copied_and_frozen_at_creation() -> None:
    # SUB-13: mutating the list passed in cannot change the request or a reconnect.
    uris = ["file:///a"]
    f = ListenFilter.coerce({"tools_list_changed": True, "resource_subscriptions": uris})
    uris.append("file:///b")
    assert f.resource_subscriptions == ("file:///a",)
    params = f.to_params()
    assert params == {"toolsListChanged": True, "resourceSubscriptions": ["file:///a"]}
    params["resourceSubscriptions"].append("file:///c")
    assert f.to_params() == {"toolsListChanged": True, "resourceSubscriptions": ["file:///a"]}
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        f.tools_list_changed = False  # type: ignore[misc]


def test_filter_accepts_wire_names_and_refuses_bad_input() -> None:
    f = ListenFilter.coerce({"promptsListChanged": True, "resourceSubscriptions": ("u",)})
    assert f == ListenFilter(prompts_list_changed=True, resource_subscriptions=("u",))
    assert ListenFilter.coerce(f) is f
    assert ListenFilter().to_params() == {}
    with pytest.raises(ValueError, match="unknown notification filter field"):
        ListenFilter.coerce({"everything": True})
    with pytest.raises(TypeError, match="must be a bool"):
        ListenFilter.coerce({"tools_list_changed": "yes"})
    with pytest.raises(TypeError, match="sequence of URI strings"):
        ListenFilter.coerce({"resource_subscriptions": "file:///a"})
    with pytest.raises(TypeError, match="URI strings only"):
        ListenFilter.coerce({"resource_subscriptions": [1]})
    with pytest.raises(TypeError):
        ListenFilter.coerce(["toolsListChanged"])  # type: ignore[arg-type]


def test_acknowledgment_judged_from_values() -> None:
    # SUB-3: a flag acknowledged false, or URIs echoed without any requested one.
    requested = ListenFilter(
        tools_list_changed=True,
        prompts_list_changed=True,
        resource_subscriptions=("file:///a", "file:///b"),
    )
    ack = judge_acknowledgment(
        requested,
        {
            "_meta": {SUBSCRIPTION_ID_KEY: 1},
            "notifications": {
                "toolsListChanged": True,
                "promptsListChanged": False,
                "resourceSubscriptions": ["file:///zzz"],
            },
        },
    )
    assert ack.unsupported == ("promptsListChanged", "resourceSubscriptions")
    assert ack.missing_uris == ("file:///a", "file:///b")
    # A partial grant: supported, the missing URI named.
    partial = judge_acknowledgment(
        requested,
        {
            "notifications": {
                "toolsListChanged": True,
                "promptsListChanged": True,
                "resourceSubscriptions": ["file:///a"],
            }
        },
    )
    assert partial.unsupported == () and partial.missing_uris == ("file:///b",)
    # Omitted types are unsupported; a malformed ack grants nothing.
    assert judge_acknowledgment(requested, {"notifications": {}}).unsupported == (
        "toolsListChanged",
        "promptsListChanged",
        "resourceSubscriptions",
    )
    assert judge_acknowledgment(requested, {"notifications": "all"}).acknowledged == {}
    assert judge_acknowledgment(requested, None).unsupported != ()
    # Granted extras the client did not ask for are not "unsupported".
    assert (
        judge_acknowledgment(
            ListenFilter(), {"notifications": {"toolsListChanged": True}}
        ).unsupported
        == ()
    )


def test_acknowledged_is_a_deep_frozen_copy() -> None:
    params = {"notifications": {"toolsListChanged": True, "resourceSubscriptions": ["file:///a"]}}
    ack = judge_acknowledgment(ListenFilter(resource_subscriptions=("file:///a",)), params)
    # Host code editing the notification it was handed cannot rewrite the record.
    params["notifications"]["resourceSubscriptions"].append("file:///evil")  # type: ignore[index]
    params["notifications"]["toolsListChanged"] = False
    assert ack.acknowledged["resourceSubscriptions"] == ("file:///a",)
    assert ack.acknowledged["toolsListChanged"] is True
    with pytest.raises(TypeError):
        ack.acknowledged["toolsListChanged"] = False  # type: ignore[index]


@pytest.mark.parametrize(
    ("result", "closing"),
    [
        ({"resultType": "complete", "_meta": {SUBSCRIPTION_ID_KEY: 1}}, Closing(True)),
        ({}, Closing(True)),  # absent resultType means complete
        (
            {"resultType": "input_required"},
            Closing(False, "the server answered the listen request with input_required"),
        ),
        (
            {"resultType": "partial"},
            Closing(False, "the listen response has an unrecognised resultType"),
        ),
        ({"resultType": 3}, Closing(False, "the listen response has an unrecognised resultType")),
        (None, Closing(False, "the listen response carried no result object")),
        (42, Closing(False, "the listen response carried no result object")),
        ([], Closing(False, "the listen response carried no result object")),
    ],
)
def test_closing_response_classification(result: Any, closing: Closing) -> None:
    # SUB-15.
    assert classify_closing(result) == closing


# ---------------------------------------------------------------- demux


def test_subscription_id_from_meta() -> None:
    assert subscription_id({"_meta": {SUBSCRIPTION_ID_KEY: 7}}) == 7
    assert subscription_id({"_meta": {SUBSCRIPTION_ID_KEY: "s-1"}}) == "s-1"
    assert subscription_id({"_meta": {SUBSCRIPTION_ID_KEY: True}}) is None
    assert subscription_id({"_meta": {SUBSCRIPTION_ID_KEY: None}}) is None
    assert subscription_id({"_meta": "x"}) is None
    assert subscription_id({}) is None
    assert subscription_id(None) is None


def test_demux_routes_by_listen_id_only_to_open_streams() -> None:
    # SUB-31: on stdio several streams share one channel.
    d = Demux()
    d.open(1)
    d.open("two")
    assert d.route({"_meta": {SUBSCRIPTION_ID_KEY: 1}, "uri": "a"}) == 1
    assert d.route({"_meta": {SUBSCRIPTION_ID_KEY: "two"}}) == "two"
    assert d.route({"_meta": {SUBSCRIPTION_ID_KEY: "1"}}) is None  # "1" is not 1
    assert d.route({"uri": "a"}) is None
    d.close(1)
    assert d.route({"_meta": {SUBSCRIPTION_ID_KEY: 1}}) is None
    assert d.streams == {"two"}


# ---------------------------------------------------------------- restart policy


def test_crash_soon_after_receiving_ends_the_subscriptions() -> None:
    # SUB-21: a crash-looping child is not respawned for ever.
    policy = RestartPolicy(min_interval=5.0)
    p1 = policy.new_process()
    policy.handed_over(p1, now=10.0)
    policy.exited(p1, now=12.0, requested=False)
    assert policy.may_hand_over() is False


def test_crash_after_the_interval_allows_a_resend() -> None:
    policy = RestartPolicy(min_interval=5.0)
    p1 = policy.new_process()
    policy.handed_over(p1, now=10.0)
    policy.exited(p1, now=15.0, requested=False)
    assert policy.may_hand_over() is True
    assert RestartPolicy().min_interval == RestartPolicy.SUBSCRIPTION_RESTART_MIN_INTERVAL


def test_requested_teardown_never_counts() -> None:
    # SUB-22: cleanup-then-reconnect keeps subscriptions however quickly it happens.
    policy = RestartPolicy(min_interval=5.0)
    for n in range(10):
        p = policy.new_process()
        policy.handed_over(p, now=float(n))
        policy.exited(p, now=n + 0.1, requested=True)
        assert policy.may_hand_over() is True


def test_interval_runs_from_receipt_not_from_the_restart_attempt() -> None:
    # SUB-24: a slow start-up is not credited with its own handshake.
    policy = RestartPolicy(min_interval=5.0)
    p = policy.new_process()  # spawned at t=0, slow handshake
    policy.handed_over(p, now=8.0)  # received the subscriptions at t=8
    policy.exited(p, now=9.0, requested=False)  # 9 s after spawn, 1 s after receipt
    assert policy.may_hand_over() is False


def test_the_crash_record_is_spent_by_asking() -> None:
    # SUB-23: a subscription opened directly on the replacement is judged on its own.
    policy = RestartPolicy(min_interval=5.0)
    p1 = policy.new_process()
    policy.handed_over(p1, now=0.0)
    policy.exited(p1, now=1.0, requested=False)
    assert policy.may_hand_over() is False
    assert policy.may_hand_over() is True  # spent
    p2 = policy.new_process()
    policy.handed_over(p2, now=2.0)
    policy.exited(p2, now=20.0, requested=False)
    assert policy.may_hand_over() is True


def test_a_late_exit_report_of_an_older_process_is_its_own() -> None:
    policy = RestartPolicy(min_interval=5.0)
    old, new = policy.new_process(), policy.new_process()
    policy.handed_over(old, now=0.0)
    policy.handed_over(new, now=100.0)  # the subscriptions moved on
    policy.exited(old, now=1.0, requested=False)  # the old one's exit, reported late
    policy.exited(new, now=200.0, requested=False)
    assert policy.may_hand_over() is True


events = st.lists(
    st.tuples(st.sampled_from(["handover", "exit", "exit_requested", "ask"]), st.floats(0, 3)),
    max_size=40,
)


@given(events)
def test_policy_interleavings(evs: list[tuple[str, float]]) -> None:
    """SUB-24: whatever the order of host requests and reader restarts, the answer is
    "refuse" exactly when the last receiver crashed (unrequested) within the interval
    of receiving, and asking spends it."""
    policy = RestartPolicy(min_interval=2.0)
    now = 0.0
    current = policy.new_process()
    last: dict[str, Any] | None = None  # the model's view of the last receiver
    for ev, dt in evs:
        now += dt
        if ev == "handover":
            policy.handed_over(current, now)
            last = {"proc": current}
        elif ev in ("exit", "exit_requested"):
            policy.exited(current, now, requested=ev == "exit_requested")
            current = policy.new_process()
        else:
            p = last["proc"] if last else None
            expected = not (
                p is not None
                and p.exited_at is not None
                and not p.requested
                and p.exited_at - p.received_at < 2.0
            )
            assert policy.may_hand_over() is expected
            last = None


def test_charge_matches_the_json_size() -> None:
    params = {"uri": "file:///ü", "n": [1, 2, {"x": None}]}
    text = json.dumps(params, separators=(",", ":"), ensure_ascii=False)
    assert notification_charge(UPDATED, params) == len(UPDATED) + len(text.encode())


def test_filter_wants_what_it_asked_for() -> None:
    """HDR-5: a notification the client emits itself goes to the subscriptions whose
    filter asked for it (there is no listen stream to demultiplex it from)."""
    tools = ListenFilter(tools_list_changed=True, resource_subscriptions=["demo://a"])
    assert tools.wants("notifications/tools/list_changed")
    assert not tools.wants("notifications/prompts/list_changed")
    assert not ListenFilter(prompts_list_changed=True).wants("notifications/tools/list_changed")
    assert ListenFilter(resources_list_changed=True).wants("notifications/resources/list_changed")
    assert tools.wants("notifications/resources/updated", {"uri": "demo://a"})
    assert not tools.wants("notifications/resources/updated", {"uri": "demo://b"})
    assert not tools.wants("notifications/resources/updated", None)
    assert not tools.wants("notifications/message", {})
