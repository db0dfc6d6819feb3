"""The blocking ``Client``: drives ``mcp_proto.ClientCore`` operations with threads."""

from __future__ import annotations

import logging
import queue
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from mcp_io_common.commands import check_commands
from mcp_io_common.files import load_definition_file
from mcp_proto import events as ev
from mcp_proto import jsonrpc, llm
from mcp_proto.client import ClientCore, ServerEntry
from mcp_proto.config import (
    ProtocolMode,
    ServerConfig,
    config_from_dict,
    redact_config,
)
from mcp_proto.connection.events import (
    ListenAcknowledged,
    ListenEnded,
    ListenInterrupted,
    ListenNotification,
)
from mcp_proto.definitions import unique_server_names
from mcp_proto.effects import (
    Attempt,
    Call,
    CallHost,
    Connect,
    Effect,
    Log,
    Notify,
    Op,
    ProgressCallback,
    SetLogLevel,
    TryConnect,
)
from mcp_proto.errors import InputRequiredError, MCPError
from mcp_proto.handlers import Handlers, Reply, serve_request
from mcp_proto.limits import Limits
from mcp_proto.modern.discover import EraCache
from mcp_proto.modern.meta import Extensions, HostMeta, check_extensions
from mcp_proto.targets import TargetOptions, connect_all, plan_targets
from mcp_proto.types import Implementation, Prompt, ResourceContent, Root, Tool

from ._base import BaseServer
from ._stdio import StdioServer

if TYPE_CHECKING:
    # The 2026-07-28 revision's modules load when a server speaks it, not with the shell.
    from mcp_proto.modern.cache import CacheInfo, CacheKind
    from mcp_proto.modern.mrtr import InputRequiredWait
    from mcp_proto.modern.notify_queue import ListenFilter

    from ._listen import Listener, Subscription

    InputRequiredWaitCallback = Callable[[InputRequiredWait], Any]

if TYPE_CHECKING:  # ssl is only an annotation here; importing it costs start-up time
    import ssl

__all__ = ["Client", "connect", "create_client"]

T = TypeVar("T")
NotificationCallback = Callable[[BaseServer, str, dict[str, Any]], Any]
#: ``on_input_required_wait``: ``callback(wait)`` (MRTR-5).


def _authorization(config: ServerConfig) -> str | None:
    """The ``Authorization`` header configured for a server: the credential a private
    2026-07-28 cached result is bound to (CACHE-6; the only one this client sends)."""
    for key, value in config.headers.items():
        if key.lower() == "authorization":
            return value
    return None


def _transport_class(kind: str) -> type[BaseServer]:
    """The server class of a transport. The HTTP module (and with it httpcore, TLS and
    h11) is imported only when an HTTP server is configured: a stdio-only client starts
    faster and smaller."""
    if kind == "stdio":
        return StdioServer
    from . import _http

    classes: dict[str, type[BaseServer]] = {
        "streamable_http": _http.StreamableHttpServer,
        "http": _http.HttpServer,
        "sse": _http.SseServer,
    }
    return classes[kind]


_LISTEN_EVENTS = (ListenAcknowledged, ListenNotification, ListenInterrupted, ListenEnded)

_LOGGER = logging.getLogger("mcp_io_sync")
_LOGGER.addHandler(logging.NullHandler())


class Client:
    """An MCP client aggregating one or more servers (blocking API).

    Every method runs a ``mcp_proto.ClientCore`` operation; this class only performs
    its effects: connecting servers, sending requests, calling host handlers and
    logging. Host callbacks (notifications, progress) run on one dispatcher thread,
    server requests (sampling, elicitation, roots) on a bounded worker pool, never on
    a reader thread, so they may make requests of their own (STDIO-9).
    """

    def __init__(
        self,
        mcp_server_configs: Iterable[ServerConfig | Mapping[str, Any]] = (),
        *,
        logger: logging.Logger | None = None,
        elicitation_handler: Callable[..., Any] | None = None,
        roots: Iterable[Root | Mapping[str, Any]] | None = None,
        sampling_handler: Callable[..., Any] | None = None,
        sampling_supports_tools: bool = False,
        client_info: Implementation | Mapping[str, Any] | None = None,
        validate_structured_content: Literal["warn", "strict"] = "warn",
        limits: Limits | None = None,
        ssl_context: ssl.SSLContext | None = None,
        proxy: str | None = None,
        request_meta: HostMeta = None,
        extensions: Extensions = (),
        on_input_required_wait: InputRequiredWaitCallback | None = None,
    ) -> None:
        configs = [
            c if isinstance(c, ServerConfig) else config_from_dict(c) for c in mcp_server_configs
        ]
        self.logger = logger or _LOGGER
        self.limits = limits or Limits()
        if isinstance(client_info, Mapping):
            client_info = Implementation.from_dict(client_info)
        names = unique_server_names(configs)
        self._http_options: dict[str, Any] = {"ssl_context": ssl_context, "proxy": proxy}
        # The 2026-07-28 era (issue 10): host metadata on every modern request
        # (LIFE-12), declared extensions (LIFE-13), and the era of each server process
        # / origin, probed once per client (LIFE-18). Checked now: a bad value is the
        # caller's error, before any server starts.
        self._era_options: dict[str, Any] = {
            # Read per request, so that assigning client.request_meta reaches every
            # connection; it calls this once per request and copies what it gives.
            "request_meta": self._request_meta,
            "extensions": extensions,
            "era_cache": EraCache(),
        }
        if request_meta is not None and not (
            isinstance(request_meta, Mapping) or callable(request_meta)
        ):
            raise ValueError(
                f"request_meta must be a mapping, a callable or None, got {request_meta!r:.40}"
            )
        check_extensions(extensions)
        self._core = ClientCore(
            [
                ServerEntry(
                    n,
                    c.type,
                    authorization=_authorization(c),
                    read_timeout=c.read_timeout,
                    request_meta=c.request_meta,
                    extensions=c.extensions,
                )
                for n, c in zip(names, configs, strict=True)
            ],
            handlers=Handlers(
                sampling=sampling_handler,
                sampling_supports_tools=sampling_supports_tools,
                elicitation=elicitation_handler,
                roots=lambda: self._core.roots_snapshot(),
            ),
            client_info=client_info,
            validate_structured_content=validate_structured_content,
            limits=self.limits,
            # 2026-07-28 (issue 10): the shell's clock and sleep for the result cache and
            # input_required waits; deprecation notices go to this client's logger; the
            # core keeps request_meta (the cache key, CACHE-7) and the extensions.
            clock=time.monotonic,
            sleep=time.sleep,
            on_input_required_wait=on_input_required_wait,
            on_deprecated=self._deprecation_notice,
            on_synthetic_notification=self._on_synthetic_notification,
            request_meta=request_meta,
            extensions=extensions,
        )
        if roots is not None:
            self._core.set_initial_roots(roots)
        self._servers: dict[str, BaseServer] = {
            name: self._make_server(name, cfg) for name, cfg in zip(names, configs, strict=True)
        }
        for name, cfg in zip(names, configs, strict=True):
            self.logger.debug("configured server %s: %s", name, redact_config(cfg))
        self._callbacks: list[NotificationCallback] = []
        # subscribe_resource on 2026-07-28 servers: (server, uri) -> its listen.
        self._resource_subs: dict[tuple[str, str], Subscription] = {}
        self._dispatch_queue: queue.Queue[Callable[[], Any] | None] = queue.Queue(
            self.limits.max_queued_notifications
        )
        self._dispatcher: threading.Thread | None = None
        self._workers = ThreadPoolExecutor(
            max_workers=self.limits.server_request_concurrency, thread_name_prefix="mcp-handler"
        )
        self._backlog = threading.BoundedSemaphore(self.limits.server_request_backlog)
        self._lock = threading.Lock()
        self._closed = False

    def _make_server(self, name: str, config: ServerConfig) -> BaseServer:
        cls = _transport_class(config.type)
        extra = self._http_options if cls is not StdioServer else {}
        server = cls(
            config,
            name=name,
            client_info=self._core.client_info,
            capabilities=lambda: self._core.capabilities,
            limits=self.limits,
            logger=self.logger,
            on_event=self._on_server_event,
            **self._era_options,
            **extra,
        )
        server._cache_info = lambda kind, uri: self._core.cache_info_at(
            name, kind, uri, time.monotonic()
        )
        return server

    def _request_meta(self) -> Mapping[str, Any]:
        meta = self._core.request_meta
        if callable(meta):
            meta = meta()
        return {} if meta is None else meta

    def _deprecation_notice(self, text: str) -> bool:
        """Write a deprecation notice (DEP-11); ``False`` (the notice stays due) when
        the logger would drop a warning (DEP-12)."""
        if not self.logger.isEnabledFor(logging.WARNING):
            return False
        self.logger.warning("%s", text)
        return True

    def _replace_config(self, name: str, config: ServerConfig) -> None:
        """Swap a (not yet connected) server's transport: used by ``connect``'s fallback."""
        self._servers[name].cleanup()
        self._servers[name] = self._make_server(name, config)
        self._core.replace_type(name, config.type)

    # ------------------------------------------------------------ driving the core

    def _run(self, op: Op[T]) -> T:
        """Perform ``op``'s effects until it returns."""
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                effect = op.throw(error) if error is not None else op.send(value)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            value, error = self._outcome(effect)

    def _outcome(self, effect: Effect) -> tuple[Any, BaseException | None]:
        """Perform ``effect``: (its value, None) or (None, the error to throw back)."""
        try:
            return self._perform(effect), None
        except MCPError as exc:
            return None, exc
        except Exception as exc:  # host code (CallHost) may raise anything
            if not isinstance(effect, CallHost):
                raise
            return None, exc

    def _run_all(self, ops: Sequence[Op[T]]) -> list[T]:
        """Run ``ops`` side by side on this thread: advance each to its next request,
        send the whole round (pipelined per server, see ``BaseServer.request_many``),
        feed the answers back, repeat. Other effects are performed as they come."""
        inputs: list[tuple[Any, BaseException | None]] = [(None, None)] * len(ops)
        results: list[Any] = [None] * len(ops)
        failures: dict[int, BaseException] = {}
        live = list(range(len(ops)))
        while live:
            round_: list[tuple[int, Call]] = []
            for i in live:
                value, error = inputs[i]
                while True:
                    try:
                        effect = ops[i].throw(error) if error is not None else ops[i].send(value)
                    except StopIteration as stop:
                        results[i] = stop.value
                        break
                    except MCPError as exc:
                        failures[i] = exc
                        break
                    if isinstance(effect, Call):
                        round_.append((i, effect))
                        break
                    value, error = self._outcome(effect)
            by_server: dict[str, list[tuple[int, Call]]] = {}
            for item in round_:
                by_server.setdefault(item[1].server, []).append(item)
            for name, items in by_server.items():
                outcomes = self._servers[name].request_many([call for _, call in items])
                for (i, _), outcome in zip(items, outcomes, strict=True):
                    inputs[i] = outcome
            live = [i for i, _ in round_]
        if failures:
            raise failures[min(failures)]
        return results

    def _perform(self, effect: Effect) -> Any:
        if isinstance(effect, Call):
            return self._servers[effect.server].request(
                effect.method,
                effect.params,
                timeout=effect.timeout,
                progress=effect.progress,
                # The called tool's definition (HDR-1), on effects that carry one.
                tool=getattr(effect, "tool", None),
            )
        if isinstance(effect, Connect):
            return self._servers[effect.server].ensure_connected()
        if isinstance(effect, TryConnect):
            return self._try_connect(effect)
        if isinstance(effect, Notify):
            self._servers[effect.server].notify(
                effect.method, effect.params, only_if_connected=effect.only_if_connected
            )
            return None
        if isinstance(effect, CallHost):
            return effect.fn(*effect.args)
        if isinstance(effect, Log):
            self.logger.log(logging.getLevelName(effect.level), "%s", effect.message)
            return None
        if isinstance(effect, SetLogLevel):  # LIFE-15: carried as _meta from now on
            self._servers[effect.server].set_era_log_level(effect.level)
            return None
        raise TypeError(f"unknown effect {effect!r}")  # pragma: no cover

    def _try_connect(self, effect: TryConnect) -> Attempt:
        """One try of ``connect``'s transport chain; the core decides what comes next."""
        if effect.config is not None:
            self._replace_config(effect.server, effect.config)
        server = self._servers[effect.server]
        try:
            return Attempt(info=server.ensure_connected())
        except MCPError as exc:
            return Attempt(error=exc, server_answered=server.server_answered)

    # ------------------------------------------------------------ events from servers

    def _on_server_event(self, server: BaseServer, event: Any) -> None:
        if isinstance(event, tuple):
            kind = event[0]
            if kind == "progress":
                _, callback, progress = event
                self._submit(lambda: callback(progress.progress, progress.total, progress.message))
            elif kind == "settle":
                self._settle_after_callbacks(event[1])
            elif kind == "request":
                self._serve(server, event[1], event[2])
            elif kind == "closed":
                self._core.server_disconnected(server.name)
            return
        if isinstance(event, _LISTEN_EVENTS):
            self._on_listen_event(server, event)
            return
        if isinstance(event, ev.NotificationReceived):
            # NOTIF-4: caches go first, on this thread, before any host callback runs.
            self._core.handle_notification(server.name, event.method, event.params)
            if self._callbacks:
                method, params = event.method, event.params
                self._submit(lambda: self._notify_callbacks(server, method, params))
        elif isinstance(event, ev.LogMessage):
            self.logger.log(
                logging.getLevelName(event.level),
                "[%s]%s %s",
                server.name,
                f" {event.logger}:" if event.logger else "",
                event.text,
            )
        elif isinstance(event, ev.MessageDiscarded):
            self.logger.debug("server %s: discarded a message: %s", server.name, event.reason)

    def _on_synthetic_notification(self, name: str, method: str, params: dict[str, Any]) -> None:
        """A notification the client emits itself (HDR-5: the ``tools/list`` refresh
        after a -32020), routed as a received one after the core's bookkeeping and
        cache invalidation (NOTIF-3): queued for the listeners of that server's open
        subscriptions that asked for it, then for the host callbacks."""
        server = self._servers.get(name)
        if server is None:
            return
        for sub in list(server._subscriptions.values()):
            if not sub.closed and sub.requested.wants(method, params):
                sub._apply(ListenNotification(sub.sub_id, method, params))
        if self._callbacks:
            self._submit(lambda: self._notify_callbacks(server, method, params))

    def _on_listen_event(self, server: BaseServer, event: Any) -> None:
        """A subscription's event (on the server's dispatching thread, in order). A
        notification is routed in the fixed order (NOTIF-3): the machine did the
        bookkeeping; caches are dropped; it is queued for the subscription's listeners
        (their own thread: SUB-6); the host callbacks come last (queued, NOTIF-8)."""
        sub = server._listen_event(event)
        if not isinstance(event, ListenNotification):
            if sub is not None:
                sub._apply(event)
            return
        method, params = event.method, event.params
        try:
            self._core.handle_notification(server.name, method, params)
        except Exception:  # NOTIF-7: stops neither delivery nor the host callbacks
            self.logger.exception("cache invalidation failed")
        if sub is not None:
            sub._apply(event)
        if self._callbacks:
            self._submit(lambda: self._notify_callbacks(server, method, params))

    def _notify_callbacks(self, server: BaseServer, method: str, params: dict[str, Any]) -> None:
        for callback in list(self._callbacks):
            try:
                callback(server, method, params)
            except Exception:
                # NOTIF-7: a raising callback is logged and stops nothing.
                self.logger.exception("notification callback failed")

    def _submit(self, job: Callable[[], Any]) -> bool:
        """Queue ``job`` for the dispatcher thread; False if it was not queued."""
        with self._lock:
            if self._closed:
                return False
            if self._dispatcher is None:
                self._dispatcher = threading.Thread(
                    target=self._dispatch_loop, name="mcp-dispatch", daemon=True
                )
                self._dispatcher.start()
        try:
            self._dispatch_queue.put_nowait(job)
        except queue.Full:
            self.logger.warning("host callbacks are behind; dropping a notification")
            return False
        return True

    def _settle_after_callbacks(self, waiter: Any) -> None:
        """A call's answer arrived after progress callbacks were queued for it: queue a
        marker behind them, and have the caller wait for it before returning (issue 9,
        item 6: a call returns only after those callbacks have run). Called on the
        reading thread, in order with the queued callbacks."""
        ran = threading.Event()
        if not self._submit(ran.set):
            return  # closed, or the queue overflowed (callbacks were dropped): no wait
        dispatcher = self._dispatcher

        def settle() -> None:
            # A callback calling the server itself runs on the dispatcher: the marker
            # is behind it, so waiting there would never end.
            if threading.current_thread() is not dispatcher:
                ran.wait()

        waiter.settle = settle

    def _dispatch_loop(self) -> None:
        while True:
            job = self._dispatch_queue.get()
            if job is None:
                return
            try:
                job()
            except Exception:
                self.logger.exception("callback failed")

    def _serve(self, server: BaseServer, session: Any, request: ev.ServerRequest) -> None:
        """Answer a server request on the worker pool (UT-8: bounded)."""
        if self._closed or not self._backlog.acquire(blocking=False):
            server.reply(
                session, request.request_id, code=jsonrpc.INTERNAL_ERROR, message="Client busy"
            )
            return

        def job() -> None:
            try:
                reply: Reply = self._run(
                    serve_request(
                        self._core.handlers, request.method, request.params, server=server.name
                    )
                )
                server.reply(
                    session,
                    request.request_id,
                    reply.result,
                    code=reply.code,
                    message=reply.message or "",
                )
            except Exception:
                self.logger.exception("serving %s failed", request.method)
                server.reply(
                    session,
                    request.request_id,
                    code=jsonrpc.INTERNAL_ERROR,
                    message="Internal error",
                )
            finally:
                self._backlog.release()

        try:
            self._workers.submit(job)
        except RuntimeError:  # pool shut down
            self._backlog.release()

    # ------------------------------------------------------------ servers

    @property
    def servers(self) -> list[BaseServer]:
        return list(self._servers.values())

    def find_server(self, name: Any) -> BaseServer:
        return self._servers[self._core.select_server(name)]

    def connect_all(self) -> None:
        """Connect every server now instead of on first use."""
        for server in self._servers.values():
            server.ensure_connected()

    # ------------------------------------------------------------ public API

    @property
    def tool_cache(self) -> list[Tool]:
        return self._core.tool_cache

    @property
    def prompt_cache(self) -> list[Prompt]:
        return self._core.prompt_cache

    @property
    def roots(self) -> tuple[Root, ...]:
        return self._core.roots

    def list_tools(self, *, cache: bool = True, server: Any = None) -> list[Tool]:
        return self._run(self._core.list_tools(cache=cache, server=server))

    def find_tools(self, pattern: str | re.Pattern[str]) -> list[Tool]:
        return self._run(self._core.find_tools(pattern))

    def find_tool(self, pattern: str | re.Pattern[str]) -> Tool | None:
        return self._run(self._core.find_tool(pattern))

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        server: Any = None,
        progress: ProgressCallback | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        return self._run(
            self._core.call_tool(name, arguments, server=server, progress=progress, timeout=timeout)
        )

    def call_tools(
        self, calls: Iterable[Mapping[str, Any]], *, concurrent: bool = False
    ) -> list[dict[str, Any]]:
        """Call several tools; results in the order of ``calls`` (TOOL-6).

        By default one after the other. With ``concurrent=True`` every request is sent
        before any answer is awaited (over stdio, in one write on one thread: no thread
        per call), so the server may run them in any order; if calls fail, the first
        failure in ``calls`` order is raised once all have finished."""
        if not concurrent:
            return self._run(self._core.call_tools(calls))
        return self._run_all(self._core.tool_call_ops(calls))

    def list_prompts(self, *, cache: bool = True, server: Any = None) -> list[Prompt]:
        return self._run(self._core.list_prompts(cache=cache, server=server))

    def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        server: Any = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        return self._run(self._core.get_prompt(name, arguments, server=server, timeout=timeout))

    def list_resources(
        self, *, cache: bool = True, cursor: str | None = None, server: Any = None
    ) -> dict[str, Any]:
        return self._run(self._core.list_resources(cache=cache, cursor=cursor, server=server))

    def list_resource_templates(
        self, *, cursor: str | None = None, server: Any = None
    ) -> dict[str, Any]:
        return self._run(self._core.list_resource_templates(cursor=cursor, server=server))

    def read_resource(
        self, uri: str, *, server: Any = None, timeout: float | None = None
    ) -> list[ResourceContent]:
        return self._run(self._core.read_resource(uri, server=server, timeout=timeout))

    def subscribe_resource(self, uri: str, *, server: Any = None) -> bool:
        """Updates of ``uri`` reach ``on_notification`` callbacks. A handshake-era
        server gets ``resources/subscribe``; a 2026-07-28 server a listen subscription
        for the URI, confirmed by an acknowledgment naming it (RES-7, RES-9)."""
        owner = self._run(self._core._resource_owner(uri, server))
        target = self._servers[owner]
        if (target.ensure_connected()).protocol_era != "modern":
            return self._run(self._core.subscribe_resource(uri, server=owner))
        if (owner, uri) not in self._resource_subs:
            from ._listen import subscribe_uri

            self._resource_subs[(owner, uri)] = subscribe_uri(target, uri)
        return True

    def unsubscribe_resource(self, uri: str, *, server: Any = None) -> bool:
        owner = self._run(self._core._resource_owner(uri, server))
        sub = self._resource_subs.pop((owner, uri), None)
        if sub is not None:  # a 2026-07-28 server: closing the listen ends it
            sub.close()
            return True
        if self._servers[owner].protocol_era == "modern":
            return True  # nothing subscribed
        return self._run(self._core.unsubscribe_resource(uri, server=owner))

    def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        *,
        context: Mapping[str, Any] | None = None,
        server: Any = None,
    ) -> dict[str, Any]:
        return self._run(self._core.complete(ref, argument, context=context, server=server))

    def set_log_level(self, level: str, *, server: Any = None) -> list[str]:
        return self._run(self._core.set_log_level(level, server=server))

    def set_roots(self, roots: Iterable[Root | Mapping[str, Any]]) -> None:
        self._run(self._core.set_roots(roots))

    # ------------------------------------------------------------ 2026-07-28

    def set_authorization(self, authorization: str | None, *, server: Any = None) -> None:
        """Send ``authorization`` (e.g. ``"Bearer <new token>"``; ``None`` removes the
        header) as the ``Authorization`` header of ``server`` from the next request on:
        a rotated token. Private cached results of a 2026-07-28 server fetched under
        the previous value are not served under this one (the server is asked again);
        public ones still are (CACHE-6). ``server`` may be left out when the client has
        one server.

        Raises:
            ServerNotFound: no such server. ValueError: ``server`` left out with several
                servers; a stdio server (it has no headers); a value with CR or LF.
        """
        if server is None and len(self._core.servers) > 1:
            raise ValueError("set_authorization() needs server= when the client has several")
        name = self._core._default_server(server)
        target = self._servers[name]
        with target._lock:
            target._conn.set_header("Authorization", authorization)
        self._core.set_authorization(name, authorization)

    @property
    def request_meta(self) -> HostMeta:
        """The host metadata put in every 2026-07-28 request's ``_meta`` (LIFE-12): a
        mapping (copied when assigned: assign a new one to change it) or a callable
        called once per request."""
        return self._core.request_meta

    @request_meta.setter
    def request_meta(self, value: HostMeta) -> None:
        self._core.request_meta = value

    def on_input_required_wait(
        self, callback: InputRequiredWaitCallback | None
    ) -> InputRequiredWaitCallback | None:
        """Steer ``input_required`` out-of-band waits (MRTR-5): ``callback(wait)``
        returns ``"cancel"`` (stop: ``InputRequiredError``), ``"retry"`` (retry now) or
        anything else (wait the growing delay). Usable as a decorator; ``None`` removes
        it."""
        self._core.on_input_required_wait = callback
        return callback

    def resume_input_required(
        self, error: InputRequiredError, *, server: Any = None, timeout: float | None = None
    ) -> Any:
        """Continue the ``input_required`` exchange that raised ``error`` (MRTR-6): the
        answers already produced are kept, the request is retried with the server's
        ``requestState``; returns the request's result."""
        return self._run(self._core.resume_input_required(error, server=server, timeout=timeout))

    def cache_info(
        self, kind: CacheKind, uri: str | None = None, *, server: Any = None
    ) -> dict[str, CacheInfo | None]:
        """Per server name, what the 2026-07-28 result cache holds for ``kind``
        (``"read"`` with ``uri``): ``CacheInfo(ttl_ms, cache_scope, received_at,
        fresh)`` or ``None`` (CACHE-10). ``server.cache_info(kind)`` for one server."""
        return self._run(self._core.cache_info(kind, uri, server=server))

    def ping(self, *, server: Any = None, timeout: float | None = None) -> dict[str, Any]:
        return self._run(self._core.ping(server=server, timeout=timeout))

    def send_rpc(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        server: Any = None,
        timeout: float | None = None,
    ) -> Any:
        return self._run(self._core.send_rpc(method, params, server=server, timeout=timeout))

    def send_notification(
        self, method: str, params: Mapping[str, Any] | None = None, *, server: Any = None
    ) -> None:
        self._run(self._core.send_notification(method, params, server=server))

    def listen(
        self,
        notifications: ListenFilter | Mapping[str, Any],
        callback: Listener | None = None,
        *,
        server: Any = None,
        ack_timeout: float | Literal[False] | None = None,
    ) -> Subscription:
        """Open a ``subscriptions/listen`` subscription on a 2026-07-28 server (the
        only one, or ``server=``); see ``BaseServer.listen``."""
        target = self._servers[self._core.select_server(server)] if server is not None else None
        if target is None:
            if len(self._servers) != 1:
                raise ValueError("several servers are configured: name one with server=")
            (target,) = self._servers.values()
        return target.listen(notifications, callback, ack_timeout=ack_timeout)

    def on_notification(self, callback: NotificationCallback) -> NotificationCallback:
        """Register ``callback(server, method, params)``; usable as a decorator.
        Remove it with :meth:`remove_notification_handler`."""
        self._callbacks.append(callback)
        return callback

    def remove_notification_handler(self, callback: NotificationCallback) -> None:
        self._callbacks.remove(callback)

    def flush_callbacks(self, timeout: float | None = None) -> bool:
        """Wait until the notification and progress callbacks queued so far have run
        (they run on a dispatcher thread, after the reader queued them). Returns False
        if ``timeout`` passed first."""
        if threading.current_thread() is self._dispatcher or self._closed:
            return True  # from inside a callback everything before it has run already
        done = threading.Event()
        self._submit(done.set)
        return done.wait(timeout)

    def clear_cache(self) -> None:
        self._core.clear_cache()

    def to_openai_tools(self, tool_names: Iterable[str] | None = None) -> list[dict[str, Any]]:
        return llm.to_openai_tools(self.list_tools(), tool_names)

    def to_anthropic_tools(self, tool_names: Iterable[str] | None = None) -> list[dict[str, Any]]:
        return llm.to_anthropic_tools(self.list_tools(), tool_names)

    def to_google_tools(self, tool_names: Iterable[str] | None = None) -> list[dict[str, Any]]:
        return llm.to_google_tools(self.list_tools(), tool_names)

    def cleanup(self) -> None:
        """Stop every server (bounded: STDIO-6) and the client's threads. Idempotent;
        the client can still be used afterwards: servers restart on demand. Open
        subscriptions are kept: they wait, and are sent again when their server next
        connects (SUB-22)."""
        for server in self._servers.values():
            server.cleanup()
        with self._lock:
            dispatcher, self._dispatcher = self._dispatcher, None
        if dispatcher is not None:
            self._dispatch_queue.put(None)
            dispatcher.join(timeout=5)

    def close(self) -> None:
        """Like :meth:`cleanup`, and also end every open subscription and stop the
        handler pool (final)."""
        for server in self._servers.values():
            for sub in list(server._subscriptions.values()):
                sub.close()
        self.cleanup()
        with self._lock:
            self._closed = True
        self._workers.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort at interpreter exit
        try:
            self._workers.shutdown(wait=False)
        except Exception:
            pass


def connect(
    target: str | Sequence[str],
    *,
    transport: Literal["stdio", "sse", "http", "plain_http", "streamable_http"] | None = None,
    name: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    headers: Mapping[str, str] | None = None,
    read_timeout: float | None = None,
    retries: int | None = None,
    retry_backoff: float | None = None,
    endpoint: str | None = None,
    ping: float | None = None,
    protocol: ProtocolMode = "auto",
    discover_timeout: float | None = None,
    oauth_provider: object | None = None,
    **client_kwargs: Any,
) -> Client:
    """Connect to one server (or several: a list of targets) and return the client.

    ``target`` is a URL or a command line. A URL is used as given: ``…/sse`` is the
    deprecated HTTP+SSE transport, ``…/mcp`` Streamable HTTP, any other http(s) URL
    (``http://h:8000/`` included) is tried as Streamable HTTP, then HTTP+SSE, then plain
    HTTP (CONN-6). Any other string is a command line (``"mcp-server-time"``,
    ``"python server.py"``, ``"bash server.sh"``, ``"env K=V cmd"``, ``"stdio://cmd"``),
    as is an argv list; its first word must resolve on the child's PATH or as a file
    relative to ``cwd``. ``protocol`` may be ``"auto"`` (default) or ``"legacy"``: both
    use the handshake era today; ``protocol="modern"``, ``discover_timeout`` and
    ``oauth_provider`` are not supported yet and raise ``ValueError`` before anything
    starts. Every other keyword goes to :class:`Client`. The servers are connected
    before this returns; on failure nothing is left running. The fallback chain stops
    at the first answer that proves an MCP server is there (a 401/403, a JSON-RPC
    answer): that error is raised as it is.

    Raises:
        CommandNotFoundError: a command's first word does not resolve (nothing started).
        AllTransportsFailedError: every transport of the fallback chain failed; the
            message names each URL tried.
        TransportDetectionError: the target is neither a URL nor a command line.
        UnauthorizedError: HTTP 401/403; carries the Bearer challenge's fields.
        ConnectionError: the server could not be reached or refused the handshake.
        ValueError: an invalid option, or one not supported yet.
    """
    plans = plan_targets(
        target,
        transport=transport,
        name=name,
        options=TargetOptions(
            env=env,
            cwd=cwd,
            headers=headers,
            read_timeout=read_timeout,
            retries=retries,
            retry_backoff=retry_backoff,
            endpoint=endpoint,
            ping=ping,
            protocol=protocol,
            discover_timeout=discover_timeout,
            oauth_provider=oauth_provider,
        ),
    )
    check_commands(plans)
    client = Client([plan.configs[0] for plan in plans], **client_kwargs)
    try:
        # The core tries the transports and decides fallback (targets.connect_op).
        client._run(connect_all([s.name for s in client.servers], plans))
    except BaseException:
        client.close()
        raise
    return client


def create_client(
    mcp_server_configs: Iterable[ServerConfig | Mapping[str, Any]] = (),
    *,
    server_definition_file: str | Path | None = None,
    logger: logging.Logger | None = None,
    **client_kwargs: Any,
) -> Client:
    """Build a client from config objects and/or an ``{"mcpServers": {...}}`` file.

    Servers connect lazily, on first use.
    """
    configs = list(mcp_server_configs)
    if server_definition_file is not None:
        configs.extend(load_definition_file(server_definition_file, logger or _LOGGER))
    return Client(configs, logger=logger, **client_kwargs)
