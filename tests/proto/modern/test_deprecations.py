"""The deprecations registry and its once-per-process notices (DEP-1..10, 12, 15, 16)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_proto import deprecations
from mcp_proto.errors import LocalProtocolError


@pytest.fixture(autouse=True)
def fresh_state() -> Iterator[None]:
    deprecations.reset()
    saved = deprecations.enabled
    yield
    deprecations.enabled = saved
    deprecations.reset()


AFTER_2027 = "the first revision published on or after 2027-07-28"


def test_registry_snapshot() -> None:
    # DEP-1..7: every deprecated feature with since / earliest removal / migration.
    snapshot = {
        key: (d.deprecated_since, d.earliest_removal, d.migration, d.source)
        for key, d in deprecations.registry().items()
    }
    assert snapshot == {
        "roots": (
            "2026-07-28",
            AFTER_2027,
            "Pass directories or files through tool parameters, resource URIs or the "
            "server's configuration.",
            "SEP-2577",
        ),
        "sampling": ("2026-07-28", AFTER_2027, "Call the LLM provider's API directly.", "SEP-2577"),
        "logging": (
            "2026-07-28",
            AFTER_2027,
            "Log to stderr (stdio) or use OpenTelemetry.",
            "SEP-2577",
        ),
        "http_sse": (
            "2025-03-26",
            "three months after SEP-2596 reaches Final",
            "Migrate the server to Streamable HTTP.",
            "SEP-2596 (reclassification)",
        ),
        "include_context": (
            "2025-11-25",
            "follows Sampling (SEP-2577)",
            'Servers omit the field or send "none".',
            "SEP-2596 (reclassification)",
        ),
        "oauth_dcr": (
            "2026-07-28",
            AFTER_2027,
            "Use Client ID Metadata Documents or pre-registered credentials.",
            "PR #2858",
        ),
    }
    assert all(d.triggers for d in deprecations.REGISTRY.values())
    with pytest.raises(TypeError):
        deprecations.registry()["roots"] = deprecations.REGISTRY["sampling"]  # type: ignore[index]


def test_notice_names_removal_and_migration() -> None:
    # DEP-9 (and the text the HTTP+SSE shell test looks for).
    notice = deprecations.REGISTRY["http_sse"].notice
    assert notice.startswith("The HTTP+SSE transport is deprecated (since MCP 2025-03-26)")
    assert "three months after SEP-2596 reaches Final" in notice
    assert "Migrate the server to Streamable HTTP." in notice
    assert AFTER_2027 in deprecations.REGISTRY["roots"].notice


def test_one_notice_per_feature_per_process() -> None:
    # DEP-9: two clients, two uses → one notice.
    written: list[str] = []
    assert deprecations.announce("sampling", written.append) is True
    assert deprecations.announce("sampling", written.append) is False
    assert deprecations.announce("roots", written.append) is True
    assert len(written) == 2
    assert deprecations.announced() == {"sampling", "roots"}
    assert deprecations.state("sampling") == "announced"
    assert deprecations.state("logging") == "due"


def test_disabled_silences_everything() -> None:
    # DEP-10.
    deprecations.enabled = False
    written: list[str] = []
    assert deprecations.announce("logging", written.append) is False
    assert deprecations.claim("logging") is None
    assert written == [] and deprecations.state("logging") == "due"


@pytest.mark.parametrize("failure", ["raises", "filtered"])
def test_a_failed_or_filtered_notice_stays_due(failure: str) -> None:
    # DEP-12: the feature keeps working; the notice comes with a later use.
    def bad(text: str) -> Any:
        if failure == "raises":
            raise OSError("closed device")
        return False  # the logger would not have written it

    assert deprecations.announce("roots", bad) is False  # never raises
    assert deprecations.state("roots") == "due"
    written: list[str] = []
    assert deprecations.announce("roots", written.append) is True
    assert written == [deprecations.REGISTRY["roots"].notice]


def test_reentrant_use_returns_immediately() -> None:
    # DEP-15: a formatter touching the same feature inside the notice does not recurse
    # or wait; another feature's notice is independent.
    inner: list[bool] = []
    written: list[str] = []

    def emit(text: str) -> None:
        inner.append(deprecations.announce("logging", written.append))
        inner.append(deprecations.announce("sampling", written.append))
        written.append(text)

    assert deprecations.announce("logging", emit) is True
    assert inner == [False, True]
    assert deprecations.announced() == {"logging", "sampling"}
    assert written == [
        deprecations.REGISTRY["sampling"].notice,
        deprecations.REGISTRY["logging"].notice,
    ]


def test_a_notice_in_flight_on_another_thread_is_not_waited_for() -> None:
    # DEP-15: the second caller returns at once; if the first cannot write, it is due.
    entered, go = threading.Event(), threading.Event()
    outcome: list[bool] = []

    def slow_then_fail(text: str) -> Any:
        entered.set()
        go.wait(timeout=30)  # a guard against a hang, not a timing assertion
        raise RuntimeError("logger broke")

    first = threading.Thread(
        target=lambda: outcome.append(deprecations.announce("oauth_dcr", slow_then_fail))
    )
    first.start()
    assert entered.wait(timeout=30)
    assert deprecations.state("oauth_dcr") == "in_flight"
    assert deprecations.announce("oauth_dcr", lambda text: None) is False  # no waiting
    go.set()
    first.join(timeout=30)
    assert outcome == [False]
    assert deprecations.state("oauth_dcr") == "due"  # released: the next use announces
    assert deprecations.announce("oauth_dcr", lambda text: None) is True


def test_concurrent_first_uses_announce_once() -> None:
    barrier = threading.Barrier(8)
    written: list[str] = []

    def use() -> None:
        barrier.wait(timeout=30)
        deprecations.announce("include_context", written.append)

    threads = [threading.Thread(target=use) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(written) == 1


def test_claim_confirm_release_state_machine() -> None:
    notice = deprecations.claim("http_sse")
    assert notice is deprecations.REGISTRY["http_sse"]
    assert deprecations.state("http_sse") == "in_flight"
    assert deprecations.claim("http_sse") is None
    deprecations.release("http_sse")
    assert deprecations.state("http_sse") == "due"
    assert deprecations.claim("http_sse") is not None
    deprecations.confirm("http_sse")
    assert deprecations.state("http_sse") == "announced"
    deprecations.release("http_sse")  # a late release cannot un-announce it
    assert deprecations.state("http_sse") == "announced"
    assert deprecations.claim("http_sse") is None
    deprecations.reset()
    assert deprecations.state("http_sse") == "due"


def test_unknown_feature_is_a_local_bug() -> None:
    with pytest.raises(LocalProtocolError):
        deprecations.claim("telepathy")
    with pytest.raises(LocalProtocolError):
        deprecations.announce("telepathy", print)


def test_roots_notice_only_for_an_answer_carrying_a_root() -> None:
    # DEP-16: the always-registered handler's empty answer exposes nothing.
    assert deprecations.roots_answer_exposes({"roots": [{"uri": "file:///w"}]})
    assert not deprecations.roots_answer_exposes({"roots": []})
    assert not deprecations.roots_answer_exposes({})
    assert not deprecations.roots_answer_exposes(None)


def test_trigger_helpers() -> None:
    # DEP-3, DEP-4, DEP-6.
    assert deprecations.features_in_meta({"io.modelcontextprotocol/logLevel": "debug"}) == (
        "logging",
    )
    assert deprecations.features_in_meta({"other": 1}) == ()
    assert deprecations.features_in_meta(None) == ()
    assert deprecations.features_in_sampling_request({"messages": []}) == ("sampling",)
    assert deprecations.features_in_sampling_request({"includeContext": "none"}) == ("sampling",)
    assert deprecations.features_in_sampling_request({"includeContext": "allServers"}) == (
        "sampling",
        "include_context",
    )
