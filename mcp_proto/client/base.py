"""``BaseClient``: the whole client, pure; an I/O shell adds only what waits.

httpx's ``BaseClient`` under ``Client`` / ``AsyncClient`` is the precedent: what does
not depend on how a program waits is written once here, and ``mcp_io_sync.Client``
(threads), ``mcp_io_trio.Client`` (Trio) and ``examples/asyncio_client.py`` (asyncio)
subclass it. This class holds

* the constructor: option checks, the :class:`~mcp_proto.client.ClientCore`, one
  server object per configuration (the shell's class for its transport, from
  :meth:`BaseClient._server_class`, a plain table);
* the one table of effects (:data:`EFFECTS`): which method performs each effect a core
  operation yields, and whether it waits. The effects that only set or read a
  connection's state are performed here; the ones that wait are the server objects'
  own methods (``request``, ``ensure_connected``, ``notify``, ``listen``, ...), called
  here and awaited by an async shell's loop;
* the routing of the servers' events, in the order the protocol fixes (NOTIF-3,
  NOTIF-4): the machine's bookkeeping first, then the client's caches, then a
  subscription's listeners, the host callbacks last;
* the client-level rules: serving a server request (the busy and failure replies are
  :data:`~mcp_proto.handlers.BUSY` / :data:`~mcp_proto.handlers.FAILED`), token
  rotation (a :class:`~mcp_proto.effects.SetHeader`), connect's transport chain
  (:meth:`BaseClient._try_connect_op`). (``subscribe_resource``, deciding by the
  connection's era between ``resources/subscribe`` and a listen subscription, is a
  core operation: ``mcp_proto/client/resources.py``.)

A shell provides its server objects (which drive ``mcp_proto.connection.Connection``)
and these primitives: ``_clock``, ``_sleep``, ``_init_io`` (its own state), the
effect loop ``_run`` (blocking, or a coroutine), ``_start_op``
(a property assignment that sends something: ``log_level``, ``roots``), and for the
events ``_submit`` (queue a job for the host callbacks), ``_settle_after_callbacks``,
``_serve`` (run :meth:`BaseClient._answer_op` somewhere it may wait, bounded) and
``_notify_callbacks``. docs/embedding.md ("Driving the whole client") walks through it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Generic, Literal, Protocol, TypeVar

from .. import events as ev
from ..config import ServerConfig, config_from_dict, redact_config
from ..connection.events import (
    CallLog,
    ListenAcknowledged,
    ListenEnded,
    ListenInterrupted,
    ListenNotification,
)
from ..definitions import unique_server_names
from ..effects import (
    Attempt,
    AwaitAcknowledged,
    AwaitLive,
    Call,
    CallHost,
    CloseListen,
    Connect,
    Listen,
    Log,
    Notify,
    Op,
    PeekEra,
    RunAll,
    SetHeader,
    SetLogLevel,
    TryConnect,
)
from ..errors import MCPError
from ..handlers import FAILED, Handlers, Reply, client_capabilities, serve_request
from ..http_settings import HttpSettings, apply_configure_http, check_configure_http
from ..limits import Limits
from ..modern import SUBSCRIPTION_RESTART_MIN_INTERVAL
from ..modern.discover import EraCache
from ..modern.meta import Extensions, HostMeta, check_extensions
from ..tasks._model import STATUS_NOTIFICATIONS, status_note
from ..tasks.store import (
    CLIENT_TASK_METHODS,
    PENDING,
    ClientTaskStore,
    client_tasks_capability,
    serve_as_task,
)
from ..types import Implementation, Root
from . import ClientCore
from .facade import ClientFacade
from .router import ServerEntry, ServerSelector
from .routing import ConnectionEnded, ProgressDue, RequestDue, SettleDue, notification_note
from .streaming import hook

if TYPE_CHECKING:
    from ..modern.mrtr import InputRequiredWait
    from ..session import ServerInfo
    from ..targets import Plan

__all__ = ["EFFECTS", "BaseClient", "HostLogger", "ServerPort", "results_in_order"]

T = TypeVar("T")

#: What a caller that gave up tells the server (its ``notifications/cancelled``
#: reason, 2025-11-25 basic/utilities/cancellation.mdx).
CANCELLED_REASON: Final = "Request cancelled by the client"

#: ``logging`` level numbers by name (the core imports no ``logging``; the host's
#: logger is handed in).
_LEVELS: Final = {"DEBUG": 10, "INFO": 20, "WARNING": 30, "ERROR": 40, "CRITICAL": 50}

#: Every effect an operation may yield: the client method performing it, and whether
#: that method waits (then an async shell awaits what it returns). One table for every
#: shell: the methods named here are :class:`BaseClient`'s.
EFFECTS: Final[dict[type[Any], tuple[str, bool]]] = {
    Call: ("_perform_call", True),
    Connect: ("_perform_connect", True),
    TryConnect: ("_perform_try_connect", True),
    Notify: ("_perform_notify", True),
    CallHost: ("_perform_call_host", True),
    Listen: ("_perform_listen", True),
    AwaitAcknowledged: ("_perform_await_acknowledged", True),
    AwaitLive: ("_perform_await_live", True),
    CloseListen: ("_perform_close_listen", True),
    RunAll: ("_perform_run_all", True),
    Log: ("_perform_log", False),
    SetLogLevel: ("_perform_set_log_level", False),
    SetHeader: ("_perform_set_header", False),
    PeekEra: ("_perform_peek_era", False),
}

#: The requests a server sends about the tasks the client runs for it.
_CLIENT_TASK_REQUESTS: Final = frozenset(
    {"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"}
)
#: How often a held ``tasks/result`` looks again for its task's end (seconds).
_RESULT_POLL: Final = 0.05

_LISTEN_EVENTS: Final = (ListenAcknowledged, ListenNotification, ListenInterrupted, ListenEnded)


class HostLogger(Protocol):
    """What the client needs of the host's logger (a ``logging.Logger`` has it)."""

    def log(self, level: int, msg: str, *args: Any) -> None: ...

    def debug(self, msg: str, *args: Any) -> None: ...

    def warning(self, msg: str, *args: Any) -> None: ...

    def exception(self, msg: str, *args: Any) -> None: ...

    def isEnabledFor(self, level: int) -> bool: ...


class ServerPort(Protocol):
    """What :class:`BaseClient` needs of a shell's server object (besides its own
    waiting methods, which the effect table names)."""

    name: str
    config: ServerConfig
    _subscriptions: dict[int, Any]

    @property
    def protocol_era(self) -> str | None: ...

    @property
    def server_answered(self) -> bool: ...

    def _listen_event(self, event: Any) -> Any: ...

    def set_era_log_level(self, level: str | None) -> None: ...

    def set_header(self, name: str, value: str | None) -> None: ...


S = TypeVar("S", bound=ServerPort)
InputRequiredWaitCallback = Callable[["InputRequiredWait"], Any]


class BaseClient(ClientFacade[S], Generic[S]):
    """The client over one or more servers, without I/O (see the module docstring for
    what a shell adds). Not thread-safe by itself: a blocking shell guards what it
    shares between threads."""

    logger: HostLogger

    def __init__(
        self,
        mcp_server_configs: Iterable[ServerConfig | Mapping[str, Any]] = (),
        *,
        logger: HostLogger | None = None,
        elicitation_handler: Callable[..., Any] | None = None,
        roots: Iterable[Root | Mapping[str, Any]] | None = None,
        sampling_handler: Callable[..., Any] | None = None,
        sampling_supports_tools: bool = False,
        client_info: Implementation | Mapping[str, Any] | None = None,
        validate_structured_content: Literal["warn", "strict"] = "warn",
        limits: Limits | None = None,
        ssl_context: object | None = None,
        proxy: str | None = None,
        trust_env: bool = True,
        configure_http: Callable[[HttpSettings], None] | None = None,
        request_meta: HostMeta = None,
        extensions: Extensions = (),
        on_input_required_wait: InputRequiredWaitCallback | None = None,
    ) -> None:
        configs = [
            c if isinstance(c, ServerConfig) else config_from_dict(c) for c in mcp_server_configs
        ]
        self.logger = logger or self._default_logger()
        self.limits = limits or Limits()
        if isinstance(client_info, Mapping):
            client_info = Implementation.from_dict(client_info)
        names = unique_server_names(configs)
        # Options only an HTTP transport takes.
        self._http_options: dict[str, Any] = {"ssl_context": ssl_context, "proxy": proxy}
        if not isinstance(trust_env, bool):
            raise ValueError(f"trust_env must be True or False, got {trust_env!r:.40}")
        # Without proxy=, each HTTP or WebSocket server's proxy comes from the
        # environment's HTTP_PROXY/HTTPS_PROXY/NO_PROXY (mcp_proto/proxy_env.py).
        self._trust_env = trust_env
        # CUST-1: called once per HTTP server (not WebSocket: its own options).
        self._configure_http = check_configure_http(configure_http)
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
            [ServerEntry.from_config(n, c) for n, c in zip(names, configs, strict=True)],
            handlers=Handlers(
                sampling=sampling_handler,
                sampling_supports_tools=sampling_supports_tools,
                elicitation=elicitation_handler,
                roots=lambda: self._core.roots_snapshot(),
            ),
            client_info=client_info,
            validate_structured_content=validate_structured_content,
            limits=self.limits,
            # The shell's clock and sleep for the 2026-07-28 result cache and
            # input_required waits; deprecation notices go to this client's logger.
            clock=self._clock,
            sleep=self._sleep,
            on_input_required_wait=on_input_required_wait,
            on_deprecated=self._deprecation_notice,
            on_synthetic_notification=self._on_synthetic_notification,
            request_meta=request_meta,
            extensions=extensions,
        )
        if roots is not None:
            self._core.set_initial_roots(roots)
        self._callbacks: list[Callable[..., Any]] = []
        # Handlers a server object was given of its own (server.on_sampling_request...).
        self._server_handlers: dict[str, Handlers] = {}
        # The tasks this client runs for each server (2025-11-25), bounded.
        self._task_stores: dict[str, ClientTaskStore] = {}
        self._init_io()
        self._servers: dict[str, S] = {
            name: self._make_server(name, cfg) for name, cfg in zip(names, configs, strict=True)
        }
        for name, cfg in zip(names, configs, strict=True):
            self.logger.debug("configured server %s: %s", name, redact_config(cfg))
            if not cfg.warnings_logged:
                # HTTP-6: a 0.0.0.0 host, whichever way the config came (connect(), a
                # builder without logger=, a dict); a builder with logger= or a
                # definition file's parse has logged them already.
                for note in cfg.warnings:
                    (cfg.logger or self.logger).warning("server %s: %s", name, note)

    # ------------------------------------------------------------ the shell's part

    def _default_logger(self) -> HostLogger:
        raise NotImplementedError  # pragma: no cover - the shell's

    def _clock(self) -> float:
        """The shell's monotonic clock, in seconds."""
        raise NotImplementedError  # pragma: no cover - the shell's

    def _sleep(self, seconds: float) -> Any:
        """The shell's sleep (performed as host code: an async shell awaits it)."""
        raise NotImplementedError  # pragma: no cover - the shell's

    def _init_io(self) -> None:
        """The shell's own state (queues, pools, locks), before the servers are made."""

    def _server_class(self, kind: str) -> type[S]:
        """The shell's server class for a transport type (a plain table)."""
        raise NotImplementedError  # pragma: no cover - the shell's

    def _server_options(self, cls: type[S]) -> dict[str, Any]:
        """Keyword arguments the shell's server class takes besides the common ones."""
        return {}

    def _submit(self, job: Callable[[], Any]) -> bool:
        """Queue ``job`` for the host callbacks' dispatcher; False if not queued."""
        raise NotImplementedError  # pragma: no cover - the shell's

    def _settle_after_callbacks(self, waiter: Any) -> None:
        raise NotImplementedError  # pragma: no cover - the shell's

    def _serve(self, server: S, generation: Any, request: ev.ServerRequest) -> None:
        """Run :meth:`_answer_op` for ``request`` where it may wait (bounded, UT-8) and
        send its reply with ``server.reply``; or reply ``BUSY`` at once."""
        raise NotImplementedError  # pragma: no cover - the shell's

    def _notify_callbacks(self, server: S, method: str, params: dict[str, Any]) -> Any:
        raise NotImplementedError  # pragma: no cover - the shell's

    def _spawn(self, op: Op[Any]) -> None:
        """Run ``op`` to its end in the background (a task-augmented server request's
        handler, after its task was answered)."""
        raise NotImplementedError  # pragma: no cover - the shell's

    def _new_task_id(self) -> str:
        """A cryptographically secure task id (the shell's: the core has no entropy)."""
        raise NotImplementedError  # pragma: no cover - the shell's

    def _task_timestamp(self) -> str:
        """Now as an ISO 8601 timestamp (the shell's: the core has no wall clock)."""
        raise NotImplementedError  # pragma: no cover - the shell's

    def _deprecation_notice(self, text: str) -> bool:
        """Write a deprecation notice (DEP-11); ``False`` keeps it due. A shell checks
        that the logger would really write a warning (DEP-12..14)."""
        self.logger.warning("%s", text)
        return True

    # ------------------------------------------------------------ server objects

    def _proxy_environment(self) -> Mapping[str, str]:
        """The environment's proxy variables (the shell's: the core reads none)."""
        return {}

    def _server_proxy(self, name: str, config: ServerConfig) -> str | None:
        """``proxy=``, else (``trust_env``) the one the environment names for the
        server's URL, else none (mcp_proto/proxy_env.py)."""
        proxy: str | None = self._http_options["proxy"]
        url = config.endpoint_url
        if proxy is not None or not self._trust_env or not url:
            return proxy
        environ = self._proxy_environment()
        if not environ:
            return None
        from ..proxy_env import proxy_for_url  # lazy: only with proxy variables set

        found = proxy_for_url(url, environ)
        if found is None:
            return None
        if config.type == "websocket" and not found.url.lower().startswith(("http:", "https:")):
            # A WebSocket goes through an HTTP CONNECT tunnel only (issue 25).
            self.logger.warning(
                "server %s: %s names a proxy WebSocket cannot use (not http:// or "
                "https://); connecting directly",
                name,
                found.variable,
            )
            return None
        self.logger.debug("server %s: proxy from %s", name, found.variable)
        return found.url

    def _make_server(self, name: str, config: ServerConfig) -> S:
        cls = self._server_class(config.type)
        extra: dict[str, Any] = {}
        if config.type == "websocket":
            extra = {**self._http_options, "proxy": self._server_proxy(name, config)}
        elif config.type != "stdio":
            # CUST-1: the host's hook, once per HTTP server, before the machine reads
            # the headers; the core entry follows what it left (CACHE-6, CACHE-9).
            config, settings = apply_configure_http(
                config,
                name,
                config.endpoint_url or "",
                self._configure_http,
                self._http_options["ssl_context"],
                self._server_proxy(name, config),
            )
            self._core.http_configured(name, config.headers, settings.request_headers)
            extra = {"http_settings": settings}
        server = cls(  # type: ignore[call-arg]
            config,
            name=name,
            client_info=self._core.client_info,
            capabilities=lambda: self._capabilities_of(name),
            limits=self.limits,
            logger=config.logger or self.logger,  # CONN-17: the server's own, if any
            on_event=self._on_server_event,
            **self._era_options,
            **self._server_options(cls),
            **extra,
        )
        server._cache_info = lambda kind, uri: self._core.cache_info_at(  # type: ignore[attr-defined]
            name, kind, uri, self._clock()
        )
        server._client = self  # type: ignore[attr-defined]  # its scoped methods (§E3)
        default = SUBSCRIPTION_RESTART_MIN_INTERVAL
        interval = getattr(cls, "SUBSCRIPTION_RESTART_MIN_INTERVAL", default)
        if interval != default:  # a server class's own bound (SUB-21): a test's shorter one
            server._conn.subscription_restart_min_interval = interval  # type: ignore[attr-defined]
        return server

    def _handlers_of(self, name: str) -> Handlers:
        """The handlers serving ``name``'s requests: its own, else the client's."""
        return self._server_handlers.get(name) or self._core.handlers

    def _capabilities_of(self, name: str) -> dict[str, Any]:
        """What ``name``'s next handshake declares (each connection asks anew). With a
        sampling or elicitation handler, the client runs those requests as tasks when
        the server asks (2025-11-25 § Client Capabilities: ``tasks``)."""
        own = self._server_handlers.get(name)
        if own is None:
            caps = self._core.capabilities
        else:
            # CAP-4: roots declared when registered, for the client or for this server.
            roots = self._core._roots_registered or own.roots is not self._core.handlers.roots
            caps = client_capabilities(own, roots=roots)
        tasks = client_tasks_capability(own or self._core.handlers)
        if tasks:
            caps["tasks"] = tasks
        return caps

    def _set_server_handler(self, name: str, **handler: Callable[..., Any]) -> None:
        """``server.on_sampling_request`` & co.: a handler for ``name`` only. The
        server's next connection declares it (CAP-1); requests it sends are served by
        it from now on."""
        import attrs

        if "roots" in handler:
            given = handler["roots"]
            handler["roots"] = lambda: tuple(Root.coerce(r) for r in given())
        if handler.get("sampling") is not None:
            self._core._deprecated("sampling")  # DEP-3: registering the handler uses it
        changes: dict[str, Any] = dict(handler)
        self._server_handlers[name] = attrs.evolve(self._handlers_of(name), **changes)

    def _swap_server(self, name: str, config: ServerConfig) -> S:
        """``connect``'s fallback: a new server object for ``name`` on ``config``'s
        transport; returns the old one, to be cleaned up."""
        old = self._servers[name]
        self._servers[name] = self._make_server(name, config)
        self._core.replace_type(name, config.type)
        return old

    def _connect_op(self, plans: Sequence[Plan]) -> Op[list[ServerInfo]]:
        """``connect``: the transport chain of each planned target (CONN-6,
        :func:`mcp_proto.targets.connect_all`) for this client's servers, in order."""
        from ..targets import connect_all  # (connect's planning: not every client's)

        return connect_all(list(self._servers), plans)

    def _try_connect_op(self, effect: TryConnect) -> Op[Attempt]:
        """One try of ``connect``'s transport chain: the server rebuilt on the next
        transport (the old object cleaned up: that waits, so it is the shell's server
        method run as a :class:`~mcp_proto.effects.CallHost`), then connected; the
        outcome as an :class:`~mcp_proto.effects.Attempt` (the chain decides what
        comes next)."""
        if effect.config is not None:
            old = self._swap_server(effect.server, effect.config)
            yield CallHost(old.cleanup)  # type: ignore[attr-defined]
        try:
            info = yield Connect(effect.server)
        except MCPError as exc:
            answered = self._servers[effect.server].server_answered
            return Attempt(error=exc, server_answered=answered)
        return Attempt(info=info)

    # ------------------------------------------------------------ effects

    def _run_now(self, op: Op[T]) -> T:
        """Drive ``op`` when it yields only effects that do not wait (the table says
        which); a waiting one is a bug of the caller."""
        value: Any = None
        error: MCPError | None = None
        while True:
            try:
                effect = op.throw(error) if error is not None else op.send(value)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            name, waits = EFFECTS[type(effect)]
            if waits:
                raise TypeError(f"{effect!r} waits: run it with the shell's _run")
            try:
                value, error = getattr(self, name)(effect), None
            except MCPError as exc:
                value, error = None, exc

    def _perform_call(self, effect: Call) -> Any:
        return self._servers[effect.server].request(  # type: ignore[attr-defined]
            effect.method,
            effect.params,
            timeout=effect.timeout,
            progress=effect.progress,
            tool=effect.tool,  # the called tool's definition (HDR-1)
            cancel_on_timeout=effect.cancel_on_timeout,  # TASK-19
        )

    def _perform_connect(self, effect: Connect) -> Any:
        return self._servers[effect.server].ensure_connected()  # type: ignore[attr-defined]

    def _perform_notify(self, effect: Notify) -> Any:
        return self._servers[effect.server].notify(  # type: ignore[attr-defined]
            effect.method, effect.params, only_if_connected=effect.only_if_connected
        )

    def _perform_call_host(self, effect: CallHost) -> Any:
        return effect.fn(*effect.args)

    def _perform_listen(self, effect: Listen) -> Any:
        return self._servers[effect.server].listen(effect.notifications)  # type: ignore[attr-defined]

    def _perform_await_acknowledged(self, effect: AwaitAcknowledged) -> Any:
        return effect.subscription.wait_acknowledged()

    def _perform_await_live(self, effect: AwaitLive) -> Any:
        return effect.subscription._wait_live(effect.timeout)

    def _perform_close_listen(self, effect: CloseListen) -> Any:
        return effect.subscription.close()

    def _perform_try_connect(self, effect: TryConnect) -> Any:
        # An effect made of effects: its operation, run by the shell's own loop (a
        # blocking one returns the Attempt, an async one a coroutine of it, awaited).
        return self._run(self._try_connect_op(effect))

    def _perform_run_all(self, effect: RunAll) -> Any:
        # Side by side is the shell's (it overrides this); a driver without concurrency
        # runs them in turn, with the same outcome.
        return self._run(_in_turn(effect.ops))

    def _run(self, op: Op[T]) -> Any:
        """The shell's effect loop: perform ``op``'s effects until it returns (its
        value; in an async shell a coroutine of it)."""
        raise NotImplementedError  # pragma: no cover - the shell's

    def _perform_log(self, effect: Log) -> None:
        self.logger.log(_LEVELS.get(effect.level, 20), "%s", effect.message)

    def _perform_set_log_level(self, effect: SetLogLevel) -> None:
        # LIFE-15: carried as _meta on the server's 2026-07-28 requests from now on.
        self._servers[effect.server].set_era_log_level(effect.level)

    def _perform_set_header(self, effect: SetHeader) -> None:
        self._servers[effect.server].set_header(effect.name, effect.value)

    def _perform_peek_era(self, effect: PeekEra) -> str | None:
        return self._servers[effect.server].protocol_era

    # ------------------------------------------------------------ client-level rules

    def _answer_op(self, server: str, request: ev.ServerRequest) -> Op[Reply]:
        """Serve a server request with the host's handlers; a failure of the client
        itself is logged here and answered ``FAILED`` (the detail never reaches the
        server, HYG-3). A 2025-11-25 server's task-augmented sampling or elicitation
        request is answered at once with its task, the handler running on (the
        shell's ``_spawn``); its ``tasks/*`` requests are answered from the server's
        bounded store (``mcp_proto/tasks/store.py``)."""
        method, params = request.method, request.params
        try:
            if method in _CLIENT_TASK_REQUESTS:
                return (yield from self._task_request_op(server, method, params))
            if method in CLIENT_TASK_METHODS and isinstance((params or {}).get("task"), Mapping):
                created, run = serve_as_task(
                    self._task_store(server), self._handlers_of(server), method, params or {},
                    server=server, now=self._clock(), clock=self._clock,
                )  # fmt: skip
                if run is not None:
                    self._spawn(run)
                return created
            reply: Reply = yield from serve_request(
                self._handlers_of(server), request.method, request.params, server=server
            )
        except Exception:
            self.logger.exception("serving %s failed", request.method)
            return FAILED
        return reply

    def _task_store(self, server: str) -> ClientTaskStore:
        store = self._task_stores.get(server)
        if store is None:
            store = self._task_stores[server] = ClientTaskStore(
                new_id=self._new_task_id, timestamp=self._task_timestamp
            )
        return store

    def _task_request_op(self, server: str, method: str, params: Any) -> Op[Reply]:
        """A server's ``tasks/get|result|list|cancel`` about the tasks this client
        runs for it. ``tasks/result`` of a running task waits for it (§ Retrieving Task
        Results: the receiver blocks), looking again every :data:`_RESULT_POLL` s on
        the shell's clock; the store's TTL bounds the wait."""
        store = self._task_store(server)
        while True:
            reply = store.serve(method, params or {}, now=self._clock())
            if reply is not PENDING:
                assert isinstance(reply, Reply)
                return reply
            yield CallHost(self._sleep, (_RESULT_POLL,))

    def set_authorization(
        self, authorization: str | None, *, server: ServerSelector | None = None
    ) -> None:
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
        self._run_now(self._core.rotate_authorization(authorization, server=server))

    def _end_subscriptions_op(self) -> Op[None]:
        """``close()``'s first step: every open listen subscription ends (the client is
        done; ``cleanup()`` keeps them for the next connection, SUB-22)."""
        for server in list(self._servers.values()):
            for sub in list(server._subscriptions.values()):
                yield CloseListen(sub)

    def _listen_target(self, server: ServerSelector | None) -> S:
        """The server a ``listen`` is for: ``server=``, or the only one."""
        if server is not None:
            return self._servers[self._core.select_server(server)]
        if len(self._servers) != 1:
            raise ValueError("several servers are configured: name one with server=")
        (target,) = self._servers.values()
        return target

    # ------------------------------------------------------------ events

    def _on_server_event(self, server: S, event: Any) -> None:
        """An event a server object dispatched (on its dispatching thread or task, in
        the machine's order)."""
        kind = type(event)
        if kind is ProgressDue:
            callback, progress = event.callback, event.progress
            if type(progress) is CallLog:
                # The call's own log message (call_tool_streaming's LogChunk); a plain
                # progress callback has no use for it.
                on_log = hook(callback, "on_log")
                if on_log is not None:
                    params = progress.params
                    self._submit(lambda: on_log(params))
            else:
                self._submit(lambda: callback(progress.progress, progress.total, progress.message))
        elif kind is SettleDue:
            self._settle_after_callbacks(event.waiter)
        elif kind is RequestDue:
            self._serve(server, event.generation, event.request)
        elif kind is ConnectionEnded:
            self._core.server_disconnected(server.name)
        elif kind in _LISTEN_EVENTS:
            self._on_listen_event(server, event)
        elif kind is ev.NotificationReceived:
            # NOTIF-4: caches go first, where the event is dispatched, before any host
            # callback runs.
            method, params = event.method, event.params
            self._core.handle_notification(server.name, method, params)
            if self._callbacks:
                self._submit(lambda: self._notify_callbacks(server, method, params))
            self._note(server.name, method, params)
        elif kind is ev.LogMessage:
            # NOTIF-5: the session hands it over after the notification it came in, so
            # it reaches the host's logger once that is queued for the callbacks.
            self.logger.log(
                _LEVELS.get(event.level, 20),
                "[%s]%s %s",
                server.name,
                f" {event.logger}:" if event.logger else "",
                event.text,
            )
        elif kind is ev.MessageDiscarded:
            self.logger.debug("server %s: discarded a message: %s", server.name, event.reason)

    def _note_task_status(self, server: str, method: str, params: Any) -> None:
        """NOTIF-2: a task status notification is parsed and logged, after it was
        queued for delivery (NOTIF-5); it announces only (TASK-15)."""
        if method in STATUS_NOTIFICATIONS:
            note = status_note(server, method, params)
            if note is not None:
                self.logger.log(_LEVELS[note[0]], "%s", note[1])

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

    def _on_listen_event(self, server: S, event: Any) -> None:
        """A subscription's event. A notification is routed in the fixed order
        (NOTIF-3): the machine did the bookkeeping; caches are dropped; it is queued for
        the subscription's listeners (their own thread or task: SUB-6); the host
        callbacks come last (queued, NOTIF-8)."""
        sub = server._listen_event(event)
        if not isinstance(event, ListenNotification):
            if sub is not None:
                sub._apply(event)
                if isinstance(event, ListenEnded):
                    # RES-12: an ended stream is no longer the URI's subscription.
                    self._core._resource_ended(sub)
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
        self._note(server.name, method, params)

    def _note(self, server: str, method: str, params: Mapping[str, Any]) -> None:
        """NOTIF-2/NOTIF-5: the client's own line for a notification, after its
        delivery was queued: a task status parsed (a malformed one warned of), anything
        else at debug (built only when debug is on: a flood costs nothing)."""
        if method in STATUS_NOTIFICATIONS:
            self._note_task_status(server, method, params)
        elif self.logger.isEnabledFor(10):
            note = notification_note(server, method, params)
            if note is not None:
                self.logger.debug("%s", note)


def _in_turn(ops: Sequence[Op[T]]) -> Op[list[T]]:
    """:class:`~mcp_proto.effects.RunAll`'s outcome, the operations run one after the
    other."""
    results: list[Any] = [None] * len(ops)
    failures: dict[int, MCPError] = {}
    for i, op in enumerate(ops):
        try:
            results[i] = yield from op
        except MCPError as exc:
            failures[i] = exc
    return results_in_order(results, failures)


def results_in_order(results: list[T], failures: Mapping[int, BaseException]) -> list[T]:
    """The outcome of a :class:`~mcp_proto.effects.RunAll` (every shell's): the
    operations' results (by index), or the first failure in order (``failures``: by
    index) once every one has ended."""
    if failures:
        raise failures[min(failures)]
    return results
