"""``BaseClient`` without I/O: the effect table, the event routing order, and the
client-level rules moved out of the shells (issue 22, items 1 and 2).

A tiny shell is written here the way ``docs/embedding.md`` describes one: its server
objects answer from a script (no process, no socket) and record what they were asked;
its ``_run`` performs each effect through :data:`~mcp_proto.client.base.EFFECTS`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from mcp_proto import events as ev
from mcp_proto.client.base import EFFECTS, BaseClient
from mcp_proto.client.routing import CONNECTION_ENDED, ProgressDue, RequestDue, SettleDue
from mcp_proto.config import ServerConfig, stdio_config, streamable_http_config
from mcp_proto.connection.events import (
    CallProgress,
    ListenAcknowledged,
    ListenEnded,
    ListenNotification,
)
from mcp_proto.effects import Call, Effect, Op, SetHeader
from mcp_proto.errors import MCPError, ResourceReadError
from mcp_proto.handlers import BUSY, FAILED, Reply
from mcp_proto.session import ServerInfo

T = TypeVar("T")
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
CAPS = {"tools": {}, "resources": {"subscribe": True}}


class Recorder:
    """A logger (the ``HostLogger`` protocol) keeping what it was given."""

    def __init__(self) -> None:
        self.lines: list[tuple[int, str]] = []

    def log(self, level: int, msg: str, *args: Any) -> None:
        self.lines.append((level, msg % args))

    def debug(self, msg: str, *args: Any) -> None:
        self.log(10, msg, *args)

    def warning(self, msg: str, *args: Any) -> None:
        self.log(30, msg, *args)

    def exception(self, msg: str, *args: Any) -> None:
        self.log(40, msg, *args)

    def isEnabledFor(self, level: int) -> bool:
        return True


class FakeSub:
    """A subscription handle: ``granted`` is what its acknowledgment gives (or the
    error its wait raises); ``live`` what a wait for it to be live again gives."""

    def __init__(self, server: FakeServer, granted: dict[str, Any] | MCPError) -> None:
        self.server = server
        self.granted = granted
        self.closed = False
        self.active = False
        self.acknowledged: dict[str, Any] | None = None
        self.error: MCPError | None = None
        self.live: dict[str, Any] | MCPError = {}
        self.live_waits: list[float | None] = []
        self.sub_id = 1
        self.applied: list[Any] = []

    def wait_acknowledged(self) -> Any:
        if isinstance(self.granted, MCPError):
            raise self.granted
        self.acknowledged, self.active = self.granted, True
        return self.granted

    def _wait_live(self, timeout: float | None) -> Any:
        self.live_waits.append(timeout)
        if isinstance(self.live, MCPError):
            raise self.live
        self.acknowledged, self.active = self.live, True
        return self.live

    def close(self) -> None:
        self.closed = True

    def _apply(self, event: Any) -> None:
        self.applied.append(event)


class FakeServer:
    """A server object: scripted answers, a record of every request and header."""

    def __init__(self, config: ServerConfig, *, name: str, **options: Any) -> None:
        self.config = config
        self.name = name
        self.options = options
        self.version = LEGACY
        self.connected = False
        self.requests: list[tuple[str, Any]] = []
        self.headers: list[tuple[str, str | None]] = []
        self.replies: list[tuple[Any, Any, Reply]] = []
        self.granted: dict[str, Any] | MCPError = {}
        self.listens: list[Any] = []
        self._subscriptions: dict[int, Any] = {}
        self.script: dict[str, Any] = {}

    @property
    def info(self) -> ServerInfo:
        return ServerInfo(self.version, CAPS, None, None)

    @property
    def protocol_era(self) -> str | None:
        return self.info.protocol_era if self.connected else None

    def ensure_connected(self) -> ServerInfo:
        self.connected = True
        return self.info

    def request(self, method: str, params: Any, **_: Any) -> Any:
        self.requests.append((method, params))
        return self.script.get(method, {})

    def notify(self, method: str, params: Any, *, only_if_connected: bool = False) -> None:
        self.requests.append((method, params))

    def listen(self, notifications: Any) -> FakeSub:
        self.listens.append(notifications)
        return FakeSub(self, self.granted)

    def set_header(self, name: str, value: str | None) -> None:
        if self.config.type == "stdio":
            raise ValueError("a stdio server has no headers")
        self.headers.append((name, value))

    def set_era_log_level(self, level: str | None) -> None:
        pass

    def reply(self, generation: Any, request_id: Any, reply: Reply) -> None:
        self.replies.append((generation, request_id, reply))

    def _listen_event(self, event: Any) -> Any:
        return self._subscriptions.get(event.sub_id)


class TinyClient(BaseClient[FakeServer]):
    """A shell in a few lines: it waits for nothing, so its loop performs every
    effect at once; its host callbacks run when ``drain`` is called."""

    def _default_logger(self) -> Recorder:
        return Recorder()

    def _clock(self) -> float:
        return 0.0

    def _sleep(self, seconds: float) -> None:
        pass

    def _init_io(self) -> None:
        self.jobs: list[Callable[[], Any]] = []
        self.performed: list[Effect] = []
        self.busy = False

    def _server_class(self, kind: str) -> type[FakeServer]:
        return FakeServer

    def _run(self, op: Op[T]) -> T:
        value: Any = None
        error: MCPError | None = None
        while True:
            try:
                effect = op.throw(error) if error is not None else op.send(value)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            self.performed.append(effect)
            try:
                value, error = getattr(self, EFFECTS[type(effect)][0])(effect), None
            except MCPError as exc:
                value, error = None, exc

    def _submit(self, job: Callable[[], Any]) -> bool:
        self.jobs.append(job)
        return True

    def _start_op(self, op: Op[Any], what: str) -> None:
        self._run(op)  # as the blocking shell

    def _settle_after_callbacks(self, waiter: Any) -> None:
        waiter.settled = True

    def _serve(self, server: FakeServer, generation: Any, request: ev.ServerRequest) -> None:
        if self.busy:
            server.reply(generation, request.request_id, BUSY)
            return
        server.reply(
            generation, request.request_id, self._run(self._answer_op(server.name, request))
        )

    def _notify_callbacks(self, server: FakeServer, method: str, params: dict[str, Any]) -> None:
        for callback in self._callbacks:
            callback(server, method, params)

    def drain(self) -> None:
        jobs, self.jobs = self.jobs, []
        for job in jobs:
            job()


def client(*configs: ServerConfig, **options: Any) -> TinyClient:
    return TinyClient(configs or [stdio_config("true", name="srv")], **options)


def test_every_effect_has_one_performer() -> None:
    # The table covers every effect class (the Effect union), and each method exists.
    import typing

    from mcp_proto import effects

    union = typing.get_args(effects.Effect)
    assert set(union) == set(EFFECTS)
    for name, _waits in EFFECTS.values():
        assert callable(getattr(TinyClient, name))


def test_the_constructor_checks_options_before_any_server_is_made() -> None:
    with pytest.raises(ValueError, match="request_meta"):
        client(request_meta=42)
    with pytest.raises(ValueError, match="validate_structured_content"):
        client(validate_structured_content="loose")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="configure_http"):
        client(configure_http=42)  # type: ignore[arg-type]
    c = client(
        stdio_config("x", name="a"), streamable_http_config("http://h/mcp", name="b"), proxy="p"
    )
    a, b = c.servers
    # HTTP options go to HTTP servers only; the era options to every one.
    # (CUST-1: an HTTP server gets them as the settings its configure_http hook saw.)
    assert "proxy" not in a.options and b.options["http_settings"].proxy == "p"
    assert a.options["era_cache"] is b.options["era_cache"]  # one era cache per client


def test_call_tool_asks_the_connection_for_its_version_only_where_it_decides() -> None:
    c = client()
    (server,) = c.servers
    schema = {"type": "object"}
    server.script["tools/list"] = {
        "tools": [
            {"name": "t", "inputSchema": schema, "outputSchema": schema},
            {"name": "plain", "inputSchema": schema},
        ]
    }
    server.script["tools/call"] = {"content": [], "structuredContent": {}}
    c.list_tools = lambda: c._run(c._core.list_tools())  # type: ignore[method-assign]
    c.list_tools()
    c.performed.clear()
    c._run(c._core.call_tool("plain", {}))
    # The request needs no era (the connection builds it for its own): one Call.
    assert [type(e).__name__ for e in c.performed] == ["Call"]
    c.performed.clear()
    c._run(c._core.call_tool("t", {}))
    # A structured result is checked against the negotiated version (SCH-18): the
    # connection's, from one Connect after the answer.
    assert [type(e).__name__ for e in c.performed] == ["Call", "Connect"]
    assert not hasattr(c._core, "_modern")  # no copy of the era in the client


def test_set_authorization_is_a_set_header_effect_then_the_cache_key() -> None:
    c = client(
        streamable_http_config("http://h/mcp", name="h", headers={"authorization": "Bearer 1"})
    )
    (server,) = c.servers
    assert c._core.servers[0].authorization == "Bearer 1"  # the header matched without case
    c.set_authorization("Bearer 2")
    assert server.headers == [("Authorization", "Bearer 2")]
    assert c._core.servers[0].authorization == "Bearer 2"
    ops = list(c._core.rotate_authorization(None, server="h"))
    assert ops == [SetHeader("h", "Authorization", None)]


def test_set_authorization_refusals() -> None:
    two = client(stdio_config("x", name="a"), stdio_config("y", name="b"))
    with pytest.raises(ValueError, match="needs server="):
        two.set_authorization("Bearer x")
    with pytest.raises(ValueError, match="stdio"):
        two.set_authorization("Bearer x", server="a")
    assert two._core.servers[0].authorization is None  # nothing half done


def test_subscribe_resource_follows_the_connections_era() -> None:
    c = client()
    (server,) = c.servers
    server.script["resources/list"] = {"resources": [{"uri": "file:///a", "name": "a"}]}
    assert c._run(c._core.subscribe_resource("file:///a")) is True
    assert server.requests[-1] == ("resources/subscribe", {"uri": "file:///a"})
    assert server.listens == []
    # The same client meets a 2026-07-28 server: a listen subscription, acknowledged.
    server.version = MODERN
    server.granted = {"resourceSubscriptions": ["file:///b"]}
    assert c._run(c._core.subscribe_resource("file:///b", server="srv")) is True
    assert server.listens == [{"resource_subscriptions": ["file:///b"]}]
    assert c._run(c._core.unsubscribe_resource("file:///b", server="srv")) is True
    assert c._core._resource_subs == {}


def test_an_unconfirmed_modern_subscription_is_closed_and_a_read_error() -> None:
    c = client()
    (server,) = c.servers
    server.version = MODERN
    server.granted = {"resourceSubscriptions": []}
    with pytest.raises(ResourceReadError, match="does not name it"):
        c._run(c._core.subscribe_resource("file:///a", server="srv"))
    assert [type(e).__name__ for e in c.performed][-1] == "CloseListen"
    server.granted = MCPError("timed out")
    with pytest.raises(ResourceReadError, match="timed out"):
        c._run(c._core.subscribe_resource("file:///a", server="srv"))
    assert c._core._resource_subs == {}


def modern_subscribed(uri: str = "file:///a", **options: Any) -> tuple[TinyClient, FakeSub]:
    """A client subscribed to ``uri`` on a 2026-07-28 server: (client, its handle)."""
    c = client(stdio_config("x", name="srv", **options))
    (server,) = c.servers
    server.version = MODERN
    server.granted = {"resourceSubscriptions": [uri]}
    assert c._run(c._core.subscribe_resource(uri, server="srv")) is True
    sub = c._core._resource_subs[("srv", uri)]
    assert isinstance(sub, FakeSub) and sub.active
    c.performed.clear()
    return c, sub


def test_res11_a_stream_honoured_now_is_reused_without_waiting() -> None:
    c, sub = modern_subscribed()
    assert c._run(c._core.subscribe_resource("file:///a", server="srv")) is True
    assert [type(e).__name__ for e in c.performed] == ["Connect"]
    assert sub.live_waits == [] and len(c.servers[0].listens) == 1


def test_res11_a_dropped_stream_is_waited_for_and_must_name_the_uri() -> None:
    """Dropped (re-opening): the second subscribe waits for the server's answer to the
    replacement, bounded by the read timeout; an acknowledgment that does not name the
    URI is no confirmation: the stream is closed and unassigned (RES-12)."""
    c, sub = modern_subscribed(read_timeout=7.0)
    sub.active = False  # the stream dropped; its old acknowledgment is still there
    sub.live = {"resourceSubscriptions": ["file:///a"]}
    assert c._run(c._core.subscribe_resource("file:///a", server="srv")) is True
    assert sub.live_waits == [7.0]
    assert [type(e).__name__ for e in c.performed] == ["Connect", "AwaitLive"]
    sub.active = False
    sub.live = {"resourceSubscriptions": []}
    with pytest.raises(ResourceReadError, match="does not name it"):
        c._run(c._core.subscribe_resource("file:///a", server="srv"))
    assert sub.closed and c._core._resource_subs == {}


def test_res12_a_stream_that_does_not_become_live_is_closed_and_unassigned() -> None:
    c, sub = modern_subscribed()
    sub.active = False
    sub.live = MCPError("the replacement was refused: HTTP 403")
    with pytest.raises(ResourceReadError, match="403"):
        c._run(c._core.subscribe_resource("file:///a", server="srv"))
    assert sub.closed and c._core._resource_subs == {}
    assert (
        c._run(c._core.unsubscribe_resource("file:///a", server="srv")) is True
    )  # nothing to search for
    assert [type(e).__name__ for e in c.performed][-1] == "PeekEra"


def test_res12_an_ended_stream_is_unassigned_and_replaced() -> None:
    c, sub = modern_subscribed()
    (server,) = c.servers
    server._subscriptions[1] = sub
    server._listen_event = lambda event: sub  # type: ignore[attr-defined]
    sub.closed = True  # as its ListenEnded makes it
    c._on_server_event(server, ListenEnded(1, ResourceReadError("withdrawn")))
    assert c._core._resource_subs == {}
    assert c._run(c._core.subscribe_resource("file:///a", server="srv")) is True
    assert len(server.listens) == 2  # a new listen, not the ended one
    assert c._core._resource_subs[("srv", "file:///a")] is not sub


def test_res10_an_acknowledgment_withdrawn_before_the_assignment_is_not_missed() -> None:
    """The race: the awaited acknowledgment names the URI, then (before the call
    assigns the stream) the stream is re-opened and acknowledged without it, which ends
    it. The check with the assignment in place sees it: not confirmed, unassigned."""
    c = client()
    (server,) = c.servers
    server.version = MODERN
    server.granted = {"resourceSubscriptions": ["file:///a"]}
    real_listen = server.listen

    def listen(notifications: Any) -> FakeSub:
        sub = real_listen(notifications)
        real_wait = sub.wait_acknowledged

        def wait() -> Any:
            granted = real_wait()
            sub.closed, sub.active = True, False  # ended in the machine meanwhile
            sub.error = ResourceReadError("no longer acknowledges file:///a")
            return granted

        sub.wait_acknowledged = wait  # type: ignore[method-assign]
        return sub

    server.listen = listen  # type: ignore[method-assign]
    with pytest.raises(ResourceReadError, match="withdrew it"):
        c._run(c._core.subscribe_resource("file:///a", server="srv"))
    assert c._core._resource_subs == {}


def test_server_requests_get_the_handlers_reply_busy_or_failed() -> None:
    def boom(*_: Any) -> Any:
        raise RuntimeError("host bug")

    c = client(roots=[{"uri": "file:///r"}], sampling_handler=boom)
    (server,) = c.servers
    c._on_server_event(server, RequestDue(7, ev.ServerRequest(1, "roots/list", {})))
    generation, rid, reply = server.replies[-1]
    assert (generation, rid, reply.code) == (7, 1, None)
    assert reply.result == {"roots": [{"uri": "file:///r"}]}
    c.busy = True
    c._on_server_event(server, RequestDue(7, ev.ServerRequest(2, "roots/list", {})))
    assert server.replies[-1] == (7, 2, BUSY)
    assert (BUSY.code, BUSY.message) == (-32603, "Client busy")
    assert (FAILED.code, FAILED.message) == (-32603, "Internal error")


def test_routing_order_caches_then_listeners_then_host_callbacks() -> None:
    c = client()
    (server,) = c.servers
    order: list[str] = []
    c._core._tools["srv"] = []  # a cached list, for list_changed to drop
    sub = FakeSub(server, {})
    sub._apply = lambda event: order.append(  # type: ignore[method-assign]
        f"listener {getattr(event, 'method', type(event).__name__)}"
    )
    server._subscriptions[1] = sub
    c.on_notification = c._callbacks.append  # type: ignore[attr-defined]
    c._callbacks.append(lambda s, method, params: order.append(f"callback {method}"))
    method = "notifications/tools/list_changed"
    c._on_server_event(server, ListenNotification(1, method, {}))
    assert "srv" not in c._core._tools  # NOTIF-3: the cache went first, at dispatch
    assert order == [f"listener {method}"]  # the listener's queue, before the callbacks
    c.drain()
    assert order == [f"listener {method}", f"callback {method}"]
    c._on_server_event(server, ListenAcknowledged(1, None))  # type: ignore[arg-type]
    assert order[-1] == "listener ListenAcknowledged"  # its own handle only
    c._on_server_event(server, ev.NotificationReceived(method, {}))
    c.drain()
    assert order[-1] == f"callback {method}"


def test_progress_settle_and_disconnect_are_typed_records() -> None:
    c = client()
    (server,) = c.servers
    seen: list[Any] = []
    c._on_server_event(
        server, ProgressDue(lambda *a: seen.append(a), CallProgress(3, 1.0, 2.0, "half"))
    )
    assert seen == []  # queued for the host callbacks, not run on the reader
    c.drain()
    assert seen == [(1.0, 2.0, "half")]

    class Waiter:
        settled = False

    waiter = Waiter()
    c._on_server_event(server, SettleDue(waiter))
    assert waiter.settled
    c._core._tools["srv"] = []
    c._on_server_event(server, CONNECTION_ENDED)
    assert "srv" not in c._core._tools


def test_log_effects_and_messages_reach_the_hosts_logger() -> None:
    c = client()
    (server,) = c.servers
    logger = c.logger
    assert isinstance(logger, Recorder)
    c._on_server_event(server, ev.LogMessage("WARNING", "db", "slow"))
    assert logger.lines[-1] == (30, "[srv] db: slow")
    c._run(iter_log())
    assert logger.lines[-1] == (40, "bad")


def test_notif5_the_clients_own_handling_comes_after_the_callbacks_are_queued() -> None:
    """A notification is queued for the host callbacks, then the client's own debug
    line is written (NOTIF-2, PROG-7); the log line of a notifications/message follows
    its notification (the session's order, NOTIF-5)."""
    c = client()
    (server,) = c.servers
    logger = c.logger
    assert isinstance(logger, Recorder)
    logger.lines.clear()  # (the construction's own debug line)
    order: list[str] = []
    real_submit = c._submit

    def submit(job: Callable[[], Any]) -> None:
        order.append(f"queued ({len(logger.lines)} log lines)")
        real_submit(job)

    c._submit = submit  # type: ignore[method-assign]
    c._callbacks.append(lambda s, method, params: None)
    updated = ev.NotificationReceived("notifications/resources/updated", {"uri": "file:///a"})
    c._on_server_event(server, updated)
    assert order == ["queued (0 log lines)"]
    assert logger.lines == [(10, "server 'srv': resource updated: file:///a")]
    for event in (
        ev.NotificationReceived("notifications/cancelled", {"requestId": 4, "reason": "x\ny"}),
        ev.NotificationReceived("vendor/thing", {}),
        ev.NotificationReceived("notifications/tools/list_changed", {}),
    ):
        c._on_server_event(server, event)
    assert [line for _, line in logger.lines[1:]] == [
        "server 'srv' cancelled its request 4: x\\x0ay",  # escaped: no forged lines
        "server 'srv': notification vendor/thing (the client does not handle it)",
    ]


def iter_log() -> Op[None]:
    from mcp_proto.effects import Log

    yield Log("ERROR", "bad")


def test_a_waiting_effect_refused_by_run_now() -> None:
    c = client()

    def op() -> Op[None]:
        yield Call("srv", "ping")

    with pytest.raises(TypeError, match="waits"):
        c._run_now(op())


def test_notif1_on_notification_returns_a_handle_that_removes_it() -> None:
    c = client()
    seen: list[str] = []
    handle = c.on_notification(lambda s, method, p: seen.append(method))
    handle(None, "x", {})  # a decorated function stays callable under its name
    assert seen == ["x"] and handle.active and len(c._callbacks) == 1
    assert handle.remove() is True
    assert not handle.active and c._callbacks == [] and handle.remove() is False
    other = c.on_notification(lambda *a: None)
    c.remove_notification_handler(other)  # the handle, or the callback itself
    assert c._callbacks == []


def test_log1_root1_log_level_and_roots_are_properties() -> None:
    c = client(roots=[])
    (server,) = c.servers
    assert c.log_level is None
    c.log_level = "warning"  # a server without logging is skipped (CAP-3)
    assert c.log_level == "warning"
    with pytest.raises(ValueError, match="log level"):
        c.log_level = "loud"
    assert c.log_level == "warning"
    server.connected = True
    c.roots = [{"uri": "file:///r", "name": "r"}]
    assert [(r.uri, r.name) for r in c.roots] == [("file:///r", "r")]
    assert server.requests[-1] == ("notifications/roots/list_changed", None)
    with pytest.raises(ValueError):
        c.roots = [{"uri": "https://example.com/"}]
    assert [r.uri for r in c.roots] == ["file:///r"]


def test_res1_resource_cache() -> None:
    c = client()
    (server,) = c.servers
    server.script["resources/list"] = {"resources": [{"uri": "file:///a", "name": "a"}]}
    assert c.resource_cache == []
    c._run(c._core.list_resources())
    assert [r.uri for r in c.resource_cache] == ["file:///a"]


def test_notification_notes_are_bounded() -> None:
    from mcp_proto.client.routing import HANDLED_NOTIFICATIONS, notification_note

    for method in HANDLED_NOTIFICATIONS:
        assert notification_note("s", method, {}) is None
    long = notification_note("s", "notifications/resources/updated", {"uri": "u" * 10_000})
    assert long is not None and len(long) < 400 and "truncated from 10000" in long
    odd = notification_note("s", "notifications/cancelled", {"requestId": None})
    assert odd == "server 's' cancelled its request None"


def test_a_calls_log_goes_to_a_stream_sink_and_not_to_a_plain_callback() -> None:
    # CallLog rides the call's progress channel (call_tool_streaming's LogChunk): a
    # stream's sink gets it, in order with progress; a plain progress callback not.
    from mcp_proto.client.streaming import LogChunk, ProgressChunk, ToolStream
    from mcp_proto.connection import CallLog

    c = client()
    (server,) = c.servers
    stream = ToolStream()
    params = {"level": "info", "logger": "db", "data": "step 1"}
    c._on_server_event(server, ProgressDue(stream.sink, CallLog(3, params)))
    c._on_server_event(server, ProgressDue(stream.sink, CallProgress(3, 1.0, None, None)))
    plain: list[Any] = []
    c._on_server_event(server, ProgressDue(lambda *a: plain.append(a), CallLog(4, params)))
    assert stream.take() is None  # queued for the host callbacks, not run on the reader
    c.drain()
    assert [stream.take(), stream.take()] == [LogChunk("info", "step 1", "db"), ProgressChunk(1.0)]
    assert plain == []


class FallibleServer(FakeServer):
    """A server object whose connect fails on some transports (as a URL that does not
    speak it: a bare HTTP status), recording its cleanup."""

    failing: frozenset[str] = frozenset()
    answered = False
    cleaned: list[str] = []

    @property
    def server_answered(self) -> bool:
        return self.answered

    def ensure_connected(self) -> ServerInfo:
        if self.config.type in self.failing:
            from mcp_proto.errors import ServerError

            raise ServerError("HTTP 404")
        return super().ensure_connected()

    def cleanup(self) -> None:
        self.cleaned.append(self.config.type)


def test_connect_tries_each_transport_through_the_shells_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # connect's chain: each TryConnect is an operation of its own (rebuild the server,
    # clean the old one up, connect) that the shell's loop runs (BaseClient._connect_op).
    from mcp_proto.effects import CallHost, Connect, TryConnect
    from mcp_proto.targets import plan_targets

    cleaned: list[str] = []
    monkeypatch.setattr(FallibleServer, "failing", frozenset({"streamable_http"}))
    monkeypatch.setattr(FallibleServer, "cleaned", cleaned)
    monkeypatch.setattr(TinyClient, "_server_class", lambda self, kind: FallibleServer)
    plans = plan_targets("http://127.0.0.1:9/x")
    c = client(*(plan.configs[0] for plan in plans))
    (name,) = c._servers
    (info,) = c._run(c._connect_op(plans))
    assert info.protocol_version == LEGACY
    assert c._servers[name].config.type == "sse"  # the server object was swapped
    assert cleaned == ["streamable_http"]  # and the old one cleaned up
    kinds = [type(e) for e in c.performed]
    assert kinds == [TryConnect, Connect, TryConnect, CallHost, Connect]


def test_connect_stops_at_a_server_that_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    # The Attempt carries server_answered: proof an MCP server is there ends the chain.
    from mcp_proto.errors import ServerError
    from mcp_proto.targets import plan_targets

    monkeypatch.setattr(FallibleServer, "failing", frozenset({"streamable_http"}))
    monkeypatch.setattr(FallibleServer, "answered", True)
    monkeypatch.setattr(FallibleServer, "cleaned", [])
    monkeypatch.setattr(TinyClient, "_server_class", lambda self, kind: FallibleServer)
    plans = plan_targets("http://127.0.0.1:9/x")
    c = client(*(plan.configs[0] for plan in plans))
    with pytest.raises(ServerError, match="404"):
        c._run(c._connect_op(plans))
    assert [s.config.type for s in c.servers] == ["streamable_http"]


def test_call_tools_concurrent_is_one_run_all_effect_run_in_turn_without_concurrency() -> None:
    # call_tools(concurrent=True) asks the shell to run the calls side by side (RunAll);
    # a driver without concurrency runs them in turn (BaseClient._perform_run_all): the
    # results in order, the first failure in order raised once every call has run.
    from mcp_proto.effects import RunAll
    from mcp_proto.errors import ToolNotFound

    c = client()
    (server,) = c.servers
    server.script["tools/list"] = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
    server.script["tools/call"] = {"content": [{"type": "text", "text": "ok"}]}
    calls = [{"name": "t", "arguments": {"i": i}} for i in range(3)]
    results = c._run(c._core.call_tools(calls, concurrent=True))
    assert [r.text for r in results] == ["ok", "ok", "ok"]
    assert type(c.performed[0]) is RunAll and len(c.performed[0].ops) == 3
    sent = [params["arguments"] for method, params in server.requests if method == "tools/call"]
    assert sent == [{"i": 0}, {"i": 1}, {"i": 2}]
    server.requests.clear()
    bad = [{"name": "t"}, {"name": "missing1"}, {"name": "t"}, {"name": "missing2"}]
    with pytest.raises(ToolNotFound, match="missing1"):
        c._run(c._core.call_tools(bad, concurrent=True))
    # The calls after the first failure still ran.
    assert [m for m, _ in server.requests].count("tools/call") == 2
