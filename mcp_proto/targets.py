"""From a ``connect`` target to the server configurations to try (CONN-1..11).

``connect("python server.py")``, ``connect("https://h/mcp")``, ``connect([url1, url2])``:
this module decides, without any I/O, which servers a target names and, for each, the
transports to try in order. The shell then tries them, after looking up each command's
first word (:func:`command_not_found` words the error). Connecting with the fallback
chain is one operation, :func:`connect_op`: it yields a :class:`~mcp_proto.effects.TryConnect`
per transport, decides with :func:`may_fall_back` whether the next one may be tried, and
reports a failed chain with :func:`fallback_error`, so both shells say the same thing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal
from urllib.parse import urlsplit, urlunsplit

from ._record import Record
from .detection import detect_transport, split_targets
from .effects import Attempt, Op, TryConnect
from .errors import (
    AllTransportsFailedError,
    CommandNotFoundError,
    IncompatibleServerError,
    MCPError,
    ServerError,
    SessionExpiredError,
    UnauthorizedError,
)
from .server_config import (
    ProtocolMode,
    ServerConfig,
    check_unbuilt_options,
    http_config,
    sse_config,
    stdio_argv,
    stdio_config,
    streamable_http_config,
    websocket_config,
)
from .session import ServerInfo

__all__ = [
    "CommandStatus",
    "Plan",
    "TargetOptions",
    "command_not_found",
    "connect_all",
    "connect_op",
    "fallback_error",
    "may_fall_back",
    "plan_targets",
]

#: What the shell found for a command's first word, given the PATH and working
#: directory the child will get: ``"found"``; ``"missing"``; ``"not_executable"`` (a
#: file, but not runnable); ``"not_on_path"`` (a bare word naming no program on PATH,
#: though a file of that name is in the working directory).
CommandStatus = Literal["found", "missing", "not_executable", "not_on_path"]


class TargetOptions(Record):
    """``connect`` options that shape server configurations; ``None`` = the default of
    the transport's config builder. A :class:`~mcp_proto._record.Record`, not an
    ``attrs`` class: made once per ``connect``, it is not worth the import cost."""

    __slots__ = (
        "cwd",
        "discover_timeout",
        "endpoint",
        "env",
        "headers",
        "oauth_provider",
        "ping",
        "protocol",
        "read_timeout",
        "retries",
        "retry_backoff",
    )
    env: Mapping[str, str] | None
    cwd: str | None
    headers: Mapping[str, str] | None
    read_timeout: float | None
    retries: int | None
    retry_backoff: float | None
    endpoint: str | None
    ping: float | None
    #: Era and auth options (CONN-12): ``protocol`` and ``discover_timeout`` (LIFE-7,
    #: LIFE-8); ``oauth_provider`` (an ``mcp_proto.oauth.OAuthProvider``) for the HTTP
    #: transports (issue 21).
    protocol: ProtocolMode
    discover_timeout: float | None
    oauth_provider: object | None

    def __init__(
        self,
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
    ) -> None:
        _set = object.__setattr__
        _set(self, "env", env)
        _set(self, "cwd", cwd)
        _set(self, "headers", headers)
        _set(self, "read_timeout", read_timeout)
        _set(self, "retries", retries)
        _set(self, "retry_backoff", retry_backoff)
        _set(self, "endpoint", endpoint)
        _set(self, "ping", ping)
        _set(self, "protocol", protocol)
        _set(self, "discover_timeout", discover_timeout)
        _set(self, "oauth_provider", oauth_provider)


class Plan(Record):
    """One server of a ``connect`` target: what the user wrote, and the configurations
    to try in order."""

    __slots__ = ("configs", "target")
    target: str | tuple[str, ...]
    configs: tuple[ServerConfig, ...]

    def __init__(self, target: str | tuple[str, ...], configs: tuple[ServerConfig, ...]) -> None:
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "configs", configs)

    def describe(self) -> str:
        return self.target if isinstance(self.target, str) else " ".join(self.target)


def _given(**kwargs: Any) -> dict[str, Any]:
    return {k: v for k, v in kwargs.items() if v is not None}


def _config(
    kind: str, target: str | tuple[str, ...], name: str | None, o: TargetOptions
) -> ServerConfig:
    common = _given(read_timeout=o.read_timeout, retries=o.retries, retry_backoff=o.retry_backoff)
    if kind == "sse":
        # CONN-13: HTTP+SSE has no era to choose; the protocol option is dropped. AUTH-3:
        # the OAuth provider authorizes it too (issue 21).
        assert isinstance(target, str)
        return sse_config(
            target,
            name=name,
            headers=o.headers,
            **common,
            **_given(ping=o.ping, oauth_provider=o.oauth_provider),
        )
    common["protocol"] = o.protocol
    if o.discover_timeout is not None:
        common["discover_timeout"] = o.discover_timeout
    if kind == "stdio":
        return stdio_config(stdio_argv(target), name=name, env=o.env, cwd=o.cwd, **common)
    assert isinstance(target, str)
    if kind == "websocket":
        return websocket_config(
            target, name=name, headers=o.headers, **common, **_given(ping=o.ping)
        )
    # AUTH-3: the OAuth provider authorizes the HTTP transports (issue 21).
    if o.oauth_provider is not None:
        common["oauth_provider"] = o.oauth_provider
    if kind == "http":
        return http_config(
            target, name=name, headers=o.headers, **common, **_given(endpoint=o.endpoint)
        )
    return streamable_http_config(
        target, name=name, headers=o.headers, endpoint=o.endpoint, **common
    )


def plan_targets(
    target: str | Sequence[str],
    *,
    transport: str | None = None,
    name: str | None = None,
    options: TargetOptions | None = None,
) -> list[Plan]:
    """One entry per server the target names; each entry lists the configurations to
    try in order (several only for an ambiguous URL of a single-server target: CONN-6,
    Streamable HTTP, then HTTP+SSE, then plain HTTP; with several servers an ambiguous
    URL is Streamable HTTP without fallback, CONN-9).

    Raises:
        TransportDetectionError: the transport cannot be determined.
        ValueError: an option is invalid for the transport.
    """
    o = options or TargetOptions()
    # Issue 9 item 7: refused before anything is detected, started or sent.
    check_unbuilt_options(o.protocol, o.discover_timeout, o.oauth_provider)
    targets = split_targets(target)
    plans: list[Plan] = []
    for i, single in enumerate(targets):
        kind = detect_transport(single, transport=transport, protocol=o.protocol)
        server_name = name if len(targets) == 1 else (f"{name}_{i}" if name else None)
        if kind == "http_auto":
            kinds = ["streamable_http", "sse", "http"] if len(targets) == 1 else ["streamable_http"]
        else:
            kinds = [kind]
        plans.append(Plan(single, tuple(_config(k, single, server_name, o) for k in kinds)))
    return plans


# Interpreters to suggest for a script that cannot be run directly, by suffix.
_INTERPRETERS: Final = {".py": "python", ".js": "node", ".mjs": "node", ".cjs": "node"}
# "example.com/mcp": a word that reads like a host and path, i.e. a URL missing its scheme.
_HOST_AND_PATH: Final = re.compile(r"^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?::\d+)?/")


def _run_with(word: str) -> str:
    suffix = word[word.rfind(".") :].lower() if "." in word else ""
    return f"{_INTERPRETERS.get(suffix, 'bash')} {word}"


def command_not_found(config: ServerConfig, status: CommandStatus) -> CommandNotFoundError | None:
    """The error for a stdio ``config`` whose first word did not resolve, or ``None``.

    Issue 8 item 7: a non-URL target is a command line, so a typo or a server that is not
    installed must say which word was not found, in one line, before anything runs. The
    shell supplies ``status`` (it alone may look at PATH and the filesystem).
    """
    if status == "found" or config.type != "stdio" or not config.command:
        return None
    word = config.command[0]
    where = f" (working directory {config.cwd})" if config.cwd else ""
    # "cannot start": the wording of a failed spawn in both shells, kept for continuity.
    if status == "not_executable":
        message = (
            f"cannot start {word!r}: not executable{where}; make it executable or name its "
            f"interpreter first, e.g. {_run_with(word)!r}"
        )
    elif status == "not_on_path":
        message = (
            f"cannot start {word!r}: not on PATH; to run the file of that name in the "
            f"working directory write './{word}' or {_run_with(word)!r}"
        )
    elif "/" in word or "\\" in word:
        message = f"cannot start {word!r}: no such file{where}"
        if _HOST_AND_PATH.match(word):
            message += f"; if it is a URL, write https://{word} or http://{word}"
    else:
        message = (
            f"cannot start {word!r}: not found on PATH; install the server or give the "
            "full path of its executable"
        )
    return CommandNotFoundError(message, command=word)


def _attempt_url(config: ServerConfig) -> str:
    # SSE starts with a GET of the stream; the HTTP transports POST to the endpoint.
    method = "GET" if config.type == "sse" else "POST"
    return f"{method} {config.endpoint_url}"


def fallback_error(
    plan: Plan, failures: Sequence[tuple[ServerConfig, MCPError]]
) -> AllTransportsFailedError:
    """The error when every configuration of ``plan`` failed (CONN-6).

    One line naming, for each try in order, the transport, the request that was refused
    (method and URL) and why, e.g. ``could not connect to http://h:8000; tried all
    transports: streamable_http: POST http://h:8000/: ...; sse: GET http://h:8000: ...``.
    """
    attempts = tuple((config.type, config.endpoint_url or "", error) for config, error in failures)
    # One line even when a reason quotes a multi-line body: whitespace runs become a space.
    tried = "; ".join(
        f"{cfg.type}: {_attempt_url(cfg)}: {' '.join(str(error).split())}"
        for cfg, error in failures
    )
    return AllTransportsFailedError(
        f"could not connect to {plan.describe()}; tried all transports: {tried}"
        + _root_hint(plan, failures),
        attempts=attempts,
    )


def _root_hint(plan: Plan, failures: Sequence[tuple[ServerConfig, MCPError]]) -> str:
    """Every transport was answered 404 at the root of a site: no MCP endpoint there.
    Servers are usually mounted at ``/mcp`` (the SDKs' and FastMCP's default), and a
    new user often gives the site's address; say where to look (decided from the
    statuses, never from the messages)."""
    if not failures or any(error.http_status != 404 for _, error in failures):
        return ""
    if not isinstance(plan.target, str):
        return ""
    parts = urlsplit(plan.target)
    if parts.scheme not in ("http", "https") or parts.path not in ("", "/"):
        return ""
    base = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    return (
        f"; nothing answers at the root: MCP servers are usually at /mcp (Streamable HTTP)"
        f" or /sse (HTTP+SSE), e.g. {base}/mcp"
    )


def may_fall_back(error: MCPError, *, server_answered: bool = False) -> bool:
    """Whether ``connect`` may try the next transport after ``error`` (CONN-6, issue 9).

    Falling back is for a URL that does not speak the transport just tried. It never
    happens after an answer that proves an MCP server is there: trying another
    transport would hide the real failure behind "tried all transports" and send the
    request (and any credentials) again. Decided from facts only, never from text:

    =====================================================  ===========
    what happened                                          fall back?
    =====================================================  ===========
    ``server_answered``: the server answered initialize    no
    (the shell's fact; e.g. it then failed after an
    ``Mcp-Session-Id`` was assigned)
    HTTP 401/403 (:class:`UnauthorizedError`,              no
    :class:`InsufficientScopeError`)
    a JSON-RPC error response, also in a 4xx/5xx body     no
    (:class:`ServerError` with a ``code``)
    the session expired (:class:`SessionExpiredError`)     no
    the initialize result named a version this client      no
    does not speak (:class:`IncompatibleServerError`)
    connection refused, reset, TLS or other transport      yes
    failure (:class:`TransportError`)
    HTTP 404/405/406/415 or another status without a       yes
    JSON-RPC body (:class:`ServerError` without a code)
    an HTML page or another unexpected content type,       yes
    a non-event-stream answer to the SSE GET, no
    ``endpoint`` event, a timeout
    =====================================================  ===========
    """
    if server_answered:
        return False
    if isinstance(error, (UnauthorizedError, SessionExpiredError, IncompatibleServerError)):
        return False
    # A ServerError without a code is a bare HTTP status (404, 405, 406, 415...): the
    # URL does not serve this transport. With a code, a JSON-RPC peer answered.
    return not (isinstance(error, ServerError) and error.code is not None)


def connect_op(server: str, plan: Plan) -> Op[ServerInfo]:
    """Connect ``server`` (already configured with ``plan.configs[0]``) by trying each
    configuration of ``plan`` in order (CONN-6); returns the handshake's info.

    Each try is one :class:`~mcp_proto.effects.TryConnect`; the first names no config
    (the server already has it), the next ones the config to rebuild the server on.
    After a failure the next transport is tried only if :func:`may_fall_back` allows
    it: never after a 401/403 or any answer that proves an MCP server is there.

    Raises:
        MCPError: the failure that ended the chain, as the shell met it (a plan with
            one configuration, or a failure that forbids falling back).
        AllTransportsFailedError: every configuration failed; names each URL tried.
    """
    failures: list[tuple[ServerConfig, MCPError]] = []
    for i, config in enumerate(plan.configs):
        attempt: Attempt = yield TryConnect(server, config if i else None)
        if attempt.error is None:
            if attempt.info is None:  # pragma: no cover - a driver bug, not peer input
                raise TypeError("an Attempt needs info or an error")
            return attempt.info
        failures.append((config, attempt.error))
        if len(plan.configs) == 1 or not may_fall_back(
            attempt.error, server_answered=attempt.server_answered
        ):
            raise attempt.error
    raise fallback_error(plan, failures)


def connect_all(servers: Sequence[str], plans: Sequence[Plan]) -> Op[list[ServerInfo]]:
    """:func:`connect_op` for each server of a ``connect`` target in turn (the names
    the client gave the plans' servers, in order); the first failure ends it."""
    if len(servers) != len(plans):
        raise ValueError("one server name per plan")
    infos = []
    for server, plan in zip(servers, plans, strict=True):
        infos.append((yield from connect_op(server, plan)))
    return infos
