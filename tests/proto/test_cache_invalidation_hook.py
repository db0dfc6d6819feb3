"""Per-server ``on_cache_invalidation`` (REQUIREMENTS §E3, NOTIF-3/NOTIF-4), pure:
which notifications run it, and where it stands among the host callbacks (ahead of
every ``on_notification`` callback, after the hooks registered before it). The client's
routing (caches dropped first, then the callbacks queued in list order) is shown over
both shells in tests/shells/test_server_objects.py."""

from __future__ import annotations

from typing import Any

from mcp_proto.client.scoped import CACHE_INVALIDATING, ServerMethods, invalidates_cache


class _Owner:
    """What a server object asks of its client here: the callback list."""

    def __init__(self) -> None:
        self._callbacks: list[Any] = []


class _Server(ServerMethods):
    def __init__(self, name: str, owner: _Owner) -> None:
        self.name = name
        self._client = owner  # type: ignore[assignment]


def _notify(owner: _Owner, server: _Server, method: str) -> None:
    """What a shell's ``_notify_callbacks`` does: every callback, in list order."""
    for callback in list(owner._callbacks):
        callback(server, method, {})


def test_the_notifications_that_invalidate_a_cache() -> None:
    assert {
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/updated",
    } == CACHE_INVALIDATING
    assert invalidates_cache("notifications/resources/updated")
    assert not invalidates_cache("notifications/message")
    assert not invalidates_cache("notifications/progress")
    assert not invalidates_cache("notifications/roots/list_changed")  # the client's own list


def test_hooks_run_for_their_server_only_and_ahead_of_the_notification_callbacks() -> None:
    owner = _Owner()
    a, b = _Server("a", owner), _Server("b", owner)
    seen: list[tuple[str, str, str]] = []
    owner._callbacks.append(lambda s, m, p: seen.append(("host", s.name, m)))
    first = a.on_cache_invalidation(lambda s, m, p: seen.append(("hook 1", s.name, m)))
    a.on_cache_invalidation(lambda s, m, p: seen.append(("hook 2", s.name, m)))
    owner._callbacks.append(lambda s, m, p: seen.append(("late host", s.name, m)))

    _notify(owner, a, "notifications/tools/list_changed")
    _notify(owner, b, "notifications/tools/list_changed")  # another server's: no hook
    _notify(owner, a, "notifications/message")  # invalidates nothing: no hook

    assert seen == [
        ("hook 1", "a", "notifications/tools/list_changed"),
        ("hook 2", "a", "notifications/tools/list_changed"),
        ("host", "a", "notifications/tools/list_changed"),
        ("late host", "a", "notifications/tools/list_changed"),
        ("host", "b", "notifications/tools/list_changed"),
        ("late host", "b", "notifications/tools/list_changed"),
        ("host", "a", "notifications/message"),
        ("late host", "a", "notifications/message"),
    ]
    # Usable as a decorator: the function itself comes back.
    assert callable(first) and owner._callbacks[0].__wrapped__ is first
