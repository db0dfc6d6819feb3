"""``ServerConfig`` and its builders: one server's configuration as validated data.

Every builder returns a frozen :class:`ServerConfig`; a bad value raises ``ValueError``
naming the option (CONN-17, HTTP-5/6, SIZE-2, SSE-8). Nothing here opens, resolves or
executes anything.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal
from urllib.parse import SplitResult, urlsplit

import attrs

from ._util import MAX_SECONDS, check_seconds, shown
from .modern.discover import check_discover_timeout, check_protocol
from .modern.meta import Extensions, HostMeta, check_extensions, config_request_meta

__all__ = [
    "DEFAULT_MAX_DECOMPRESSED_BODY_BYTES",
    "MAX_SECONDS",
    "ProtocolMode",
    "ServerConfig",
    "TransportType",
    "check_oauth_settings",
    "check_unbuilt_options",
    "http_config",
    "sse_config",
    "stdio_argv",
    "stdio_config",
    "streamable_http_config",
    "websocket_config",
]

TransportType = Literal["stdio", "sse", "http", "streamable_http", "websocket"]
ProtocolMode = Literal["auto", "modern", "legacy"]

#: Default bound on a gzip-decoded Streamable HTTP body (SIZE-1/2): 64 MiB.
DEFAULT_MAX_DECOMPRESSED_BODY_BYTES: Final = 64 * 2**20

_TRANSPORTS: Final = ("stdio", "sse", "http", "streamable_http", "websocket")
_PROTOCOLS: Final = ("auto", "modern", "legacy")
_CONTROL_OR_SPACE: Final = re.compile(r"[\x00-\x20\x7f]")
_HEADER_UNSAFE: Final = re.compile(r"[\r\n\x00]")


# --------------------------------------------------------------------- value checks


def check_unbuilt_options(
    protocol: object = "auto", discover_timeout: object = None, oauth_provider: object = None
) -> None:
    """Check the era options and refuse one this client does not implement yet.

    ``protocol`` must be ``"auto"`` (probe with ``server/discover``), ``"modern"``
    (2026-07-28 only) or ``"legacy"`` (the handshake only) (LIFE-8);
    ``discover_timeout`` positive seconds or ``None`` (the default, LIFE-7). No option
    is accepted and silently ignored. ``oauth_provider`` must be an
    :class:`mcp_proto.oauth.OAuthProvider` (issue 21; checked by its methods, so this
    module does not load the OAuth core).

    Raises:
        ValueError: a bad ``protocol``, ``discover_timeout`` or ``oauth_provider``; one
            line naming the option.
    """
    check_protocol(protocol)
    if discover_timeout is not None:
        check_discover_timeout(discover_timeout)
    if oauth_provider is not None and not all(
        callable(getattr(oauth_provider, m, None)) for m in ("authorize", "present", "prepare")
    ):
        raise ValueError(
            f"oauth_provider must be an mcp_proto.oauth.OAuthProvider, got "
            f"{type(oauth_provider).__name__}"
        )


#: A definition file's ``"oauth"`` keys, as hosts write them (camelCase, as in
#: ``mcpServers`` files) or in snake_case: the canonical name of each.
_OAUTH_KEYS: Final = {
    "clientId": "client_id",
    "client_id": "client_id",
    "clientSecret": "client_secret",
    "client_secret": "client_secret",
    "issuer": "issuer",
    "scope": "scope",
    "scopes": "scope",
    "callbackPort": "callback_port",
    "callback_port": "callback_port",
    "clientMetadataUrl": "client_id_metadata_url",
    "client_id_metadata_url": "client_id_metadata_url",
}


def check_oauth_settings(value: object) -> dict[str, Any]:
    """A definition file's ``"oauth"`` object, checked and normalised (issue 21):
    ``client_id`` (with ``issuer``, AUTH-18: pre-registered credentials name their
    authorization server), ``client_secret``, ``scope`` (a string, or a list joined with
    spaces), ``callback_port`` (the loopback redirect URI's port), and
    ``client_id_metadata_url``.

    Raises:
        ValueError: not an object, an unknown key, a wrong type, ``client_id`` without
            ``issuer``; one line, never showing a secret.
    """
    if not isinstance(value, Mapping):
        raise ValueError("'oauth' must be an object")
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = _OAUTH_KEYS.get(key) if isinstance(key, str) else None
        if name is None:
            raise ValueError(f"'oauth': unknown key {shown(key)}")
        if name == "scope" and isinstance(item, list) and all(isinstance(x, str) for x in item):
            item = " ".join(item)
        if name == "callback_port":
            if isinstance(item, bool) or not isinstance(item, int) or not 0 < item < 65536:
                raise ValueError("'oauth': callbackPort must be a port number")
        elif not isinstance(item, str) or not item:
            raise ValueError(f"'oauth': {key} must be a non-empty string")
        out[name] = item
    if "client_id" in out and "issuer" not in out:
        raise ValueError(
            "'oauth': a clientId must name its authorization server ('issuer'); "
            "credentials are bound to the issuer that issued them"
        )
    if "client_secret" in out and "client_id" not in out:
        raise ValueError("'oauth': clientSecret without clientId")
    return out


def _integer(value: object, what: str, *, allow_zero: bool = False) -> int:
    # Integers are only ever compared (counts, byte limits), so a huge one is harmless.
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be an integer, got {shown(value)}")
    if value < 0 or (value == 0 and not allow_zero):
        bound = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{what} must be a {bound} integer, got {shown(value)}")
    return value


def _string_map(value: object, what: str, *, header: bool = False) -> dict[str, str]:
    """A copy of a str→str mapping; JSON numbers are accepted as values and stringified."""
    if not isinstance(value, Mapping):
        raise ValueError(f"{what} must be a mapping of strings, got {type(value).__name__}")
    out: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"{what}: keys must be non-empty strings, got {key!r}")
        if isinstance(item, (int, float)) and not isinstance(item, bool):
            if isinstance(item, int) and item.bit_length() > 64:
                # str() of a huge int is slow, and fails past 4300 digits.
                raise ValueError(f"{what}[{key!r}]: {shown(item)} is not a usable value")
            item = str(item)
        if not isinstance(item, str):
            raise ValueError(f"{what}[{key!r}] must be a string, got {type(item).__name__}")
        # CR/LF in a header would let configuration inject extra header lines.
        if header and (_HEADER_UNSAFE.search(key) or _HEADER_UNSAFE.search(item)):
            raise ValueError(f"{what}[{key!r}] must not contain CR, LF or NUL")
        out[key] = item
    return out


def _headers(value: object) -> dict[str, str]:
    return {} if value is None else _string_map(value, "headers", header=True)


def _env(value: object) -> dict[str, str] | None:
    if value is None:
        return None
    env = _string_map(value, "env")
    for key, item in env.items():
        # The OS cannot pass these: spawning would fail with a bare ValueError.
        if "=" in key or "\x00" in key or "\x00" in item:
            raise ValueError(f"env[{key!r}]: names must not contain '=' or NUL, values NUL")
    return env


def _argv(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        # A bare string would become a tuple of characters.
        raise ValueError("command must be an argv sequence here; use stdio_config() for strings")
    if not isinstance(value, Iterable):
        raise ValueError(f"command must be a sequence of strings, got {type(value).__name__}")
    argv = tuple(value)
    for part in argv:
        if not isinstance(part, str):
            raise ValueError(f"command parts must be strings, got {shown(part)}")
        if "\x00" in part:
            # exec() takes C strings: spawning would fail with a bare ValueError.
            raise ValueError(f"command parts must not contain NUL, got {shown(part)}")
    return argv


def _parse_http_url(url: object, what: str = "URL") -> SplitResult:
    """Validate an http(s) URL with a host (HTTP-6); raise ``ValueError`` otherwise."""
    if not isinstance(url, str) or not url:
        raise ValueError(f"{what} must be a non-empty string, got {shown(url)}")
    if _CONTROL_OR_SPACE.search(url):
        raise ValueError(f"{what} must not contain spaces or control characters: {url!r}")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError as exc:
        raise ValueError(f"invalid {what} {url!r}: {exc}") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise ValueError(f"{what} must use http or https, got {shown(url)}")
    if not parts.hostname:
        raise ValueError(f"{what} has no host: {url!r}")
    return parts


def _parse_ws_url(url: object, what: str = "URL") -> SplitResult:
    """Validate a ws(s) URL with a host (issue 25); raise ``ValueError`` otherwise."""
    if not isinstance(url, str) or not url:
        raise ValueError(f"{what} must be a non-empty string, got {shown(url)}")
    if _CONTROL_OR_SPACE.search(url):
        raise ValueError(f"{what} must not contain spaces or control characters: {url!r}")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError as exc:
        raise ValueError(f"invalid {what} {url!r}: {exc}") from None
    if parts.scheme.lower() not in ("ws", "wss"):
        raise ValueError(f"{what} must use ws or wss, got {shown(url)}")
    if not parts.hostname:
        raise ValueError(f"{what} has no host: {url!r}")
    return parts


def _url_warnings(url: str | None) -> tuple[str, ...]:
    if url is None:
        return ()
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return ()
    if host == "0.0.0.0":
        # HTTP-6: a listen-all address, not a destination; usually meant 127.0.0.1.
        return (
            f"server URL {url!r} uses 0.0.0.0, which may be insecure; "
            "consider 127.0.0.1 for localhost",
        )
    return ()


def _check_endpoint(endpoint: object) -> str:
    if not isinstance(endpoint, str) or not endpoint.startswith("/"):
        raise ValueError(f"endpoint must be a path starting with '/', got {shown(endpoint)}")
    # "//host/x" is a network-path reference: joined to the base it would change host.
    if endpoint.startswith("//"):
        raise ValueError(f"endpoint must not start with '//', got {shown(endpoint)}")
    if _CONTROL_OR_SPACE.search(endpoint):
        raise ValueError(f"endpoint must not contain spaces or control characters: {endpoint!r}")
    return endpoint


# --------------------------------------------------------------------- ServerConfig


@attrs.frozen(kw_only=True, unsafe_hash=False)
class ServerConfig:
    """One server's configuration, as the shells consume it.

    For ``http``/``streamable_http``, ``url`` is the origin (``scheme://host[:port]``)
    and ``endpoint`` the path (plus query) requests go to; :attr:`endpoint_url` joins
    them. For ``sse``, ``url`` is the event-stream URL and ``endpoint`` is unset (the
    server names the POST endpoint). For ``stdio``, ``command`` is the argv.

    Build it with :func:`stdio_config`, :func:`sse_config`, :func:`http_config`,
    :func:`streamable_http_config` or :func:`config_from_dict`; direct construction
    validates too. Holds dicts, so it is unhashable.

    Raises:
        ValueError: an invalid or inconsistent value.
    """

    type: TransportType
    name: str | None = None
    command: tuple[str, ...] = attrs.field(default=(), converter=_argv)
    env: Mapping[str, str] | None = attrs.field(default=None, converter=_env, repr=False)
    cwd: str | None = None
    url: str | None = None
    endpoint: str | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict, converter=_headers, repr=False)
    read_timeout: float = 30.0
    retries: int = 0
    retry_backoff: float = 1.0
    ping: float | None = None
    max_decompressed_body_bytes: int = DEFAULT_MAX_DECOMPRESSED_BODY_BYTES
    protocol: ProtocolMode = "auto"
    discover_timeout: float | None = None
    max_line_size: int | None = None
    #: The server's :class:`mcp_proto.oauth.OAuthProvider` (AUTH-3, issue 21): the HTTP
    #: transports present its token and run its flow on a 401/403
    #: (``mcp_proto.connection._oauth``).
    oauth_provider: object | None = attrs.field(default=None, repr=False)
    #: This server's HTTP customisation hook (CUST-1), called once with its
    #: ``mcp_proto.http_settings.HttpSettings``; wins over the client's.
    configure_http: Any = attrs.field(default=None, repr=False, eq=False)
    #: This server's own host metadata on every 2026-07-28 request, laid over the
    #: client's ``request_meta`` (LIFE-12): a mapping (copied now) or a callable.
    request_meta: HostMeta = attrs.field(default=None, converter=config_request_meta, repr=False)
    #: Extensions this server's requests declare besides the client's (LIFE-13), as the
    #: ``capabilities.extensions`` object (identifier -> settings).
    extensions: Mapping[str, Mapping[str, Any]] = attrs.field(
        factory=dict, converter=check_extensions
    )
    #: A definition file's ``"oauth"`` entry, checked (:func:`check_oauth_settings`):
    #: the shell builds the ``OAuthProvider`` and its ``BrowserOAuth`` from it when no
    #: ``oauth_provider`` is given (issue 21). Not in the repr: it may hold a secret.
    oauth: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    #: This server's own logger (CONN-17; a ``logging.Logger`` or anything with its
    #: methods): the server object's messages and this configuration's warnings go to
    #: it; ``None``, the client's. Not compared, not shown.
    logger: Any = attrs.field(default=None, repr=False, eq=False)
    # Whether :attr:`warnings` were already logged (by a builder given ``logger=``, or
    # returned by a definition-file parse): a client then does not log them again. An
    # init field (``warnings_logged=``) so that ``attrs.evolve`` keeps it.
    _warnings_logged: bool = attrs.field(default=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        if self.type not in _TRANSPORTS:
            allowed = ", ".join(_TRANSPORTS)
            raise ValueError(f"type must be one of {allowed}, got {shown(self.type)}")
        if self.name is not None and (not isinstance(self.name, str) or not self.name):
            raise ValueError(f"name must be a non-empty string or None, got {shown(self.name)}")
        check_seconds(self.read_timeout, "read_timeout")
        _integer(self.retries, "retries", allow_zero=True)
        check_seconds(self.retry_backoff, "retry_backoff", allow_zero=True)
        if self.ping is not None:
            check_seconds(self.ping, "ping")
        # SIZE-2: non-positive or non-integer limits are rejected.
        _integer(self.max_decompressed_body_bytes, "max_decompressed_body_bytes")
        if self.protocol not in _PROTOCOLS:
            raise ValueError(
                f"protocol must be one of {', '.join(_PROTOCOLS)}, got {shown(self.protocol)}"
            )
        check_unbuilt_options(self.protocol, self.discover_timeout, self.oauth_provider)
        if self.max_line_size is not None:
            _integer(self.max_line_size, "max_line_size")
        if self.type == "stdio":
            self._check_stdio()
        else:
            self._check_remote()

    def _check_stdio(self) -> None:
        if not self.command or not self.command[0]:
            raise ValueError("a stdio server needs a non-empty command")
        if self.cwd is not None and (
            not isinstance(self.cwd, str) or not self.cwd or "\x00" in self.cwd
        ):
            raise ValueError(f"cwd must be a non-empty string without NUL, got {shown(self.cwd)}")
        for field in ("url", "endpoint"):
            if getattr(self, field) is not None:
                raise ValueError(f"{field} does not apply to a stdio server")
        if self.headers:
            raise ValueError("headers do not apply to a stdio server")
        if self.configure_http is not None:
            raise ValueError("configure_http does not apply to a stdio server")

    def _check_remote(self) -> None:
        if self.command:
            raise ValueError(f"command does not apply to a {self.type} server")
        for field in ("env", "cwd"):
            if getattr(self, field) is not None:
                raise ValueError(f"{field} does not apply to a {self.type} server")
        if self.configure_http is not None and not callable(self.configure_http):
            raise ValueError(f"configure_http must be a callable, got {shown(self.configure_http)}")
        if self.type == "websocket":
            if self.configure_http is not None:
                raise ValueError("configure_http does not apply to a WebSocket server")
            # Issue 25: one connection carrying messages both ways, as stdio does; the
            # URL is used as given (the upgrade's target is its path and query).
            _parse_ws_url(self.url, "url")
            if self.endpoint is not None:
                raise ValueError("endpoint does not apply to a WebSocket server (use the URL)")
            return
        _parse_http_url(self.url, "url")
        if self.type == "sse":
            # SSE-8 / CONN-13: HTTP+SSE is a handshake-era transport; asking it for the
            # 2026-07-28 era, or bounding a probe it never makes, is a contradiction.
            if self.protocol == "modern" or self.discover_timeout is not None:
                raise ValueError(
                    "protocol='modern' and discover_timeout do not apply to HTTP+SSE "
                    "(a handshake-era transport): use Streamable HTTP for 2026-07-28"
                )
            if self.request_meta is not None or self.extensions:
                raise ValueError(
                    "request_meta and extensions do not apply to HTTP+SSE (a "
                    "handshake-era transport): use Streamable HTTP for 2026-07-28"
                )
            if self.endpoint is not None:
                raise ValueError("endpoint does not apply to SSE (the server announces it)")
        else:
            _check_endpoint(self.endpoint)

    @property
    def endpoint_url(self) -> str | None:
        """The URL requests go to (HTTP types), the stream URL (SSE), the WebSocket URL,
        ``None`` for stdio."""
        if self.type == "stdio":
            return None
        if self.type in ("sse", "websocket"):
            return self.url
        return f"{self.url}{self.endpoint}"

    @property
    def warnings(self) -> tuple[str, ...]:
        """Advisory notes about this configuration for the shell to log (e.g. 0.0.0.0)."""
        return _url_warnings(self.url)

    @property
    def warnings_logged(self) -> bool:
        """Whether :attr:`warnings` were already logged or handed to a caller to log
        (a ``Client`` logs them otherwise, HTTP-6)."""
        return self._warnings_logged


def _mark_warnings_logged(config: ServerConfig) -> None:
    object.__setattr__(config, "_warnings_logged", True)


def _built(config: ServerConfig) -> ServerConfig:
    """A builder's result: with ``logger=``, its warnings are logged now (HTTP-6)."""
    logger = config.logger
    if logger is not None:
        for note in config.warnings:
            logger.warning("%s", note)
        _mark_warnings_logged(config)
    return config


# ------------------------------------------------------------------------- builders


def _split_base_url(base_url: object) -> tuple[str, str]:
    """``(origin, path_and_query)`` of an http(s) base URL, the path exactly as given.

    A URL is used as given (issue 8 item 3; the official SDK client does the same): a
    server mounted at ``/`` is reached at ``http://h/`` or ``http://h``, and a trailing
    ``/`` is kept, since ``/mcp`` and ``/mcp/`` can be different routes. Only an empty
    path becomes ``/``, which is what an HTTP client sends for it (RFC 9110 §4.2.1). The
    query string stays (some servers take an API key there).
    """
    parts = _parse_http_url(base_url, "base_url")
    origin = f"{parts.scheme.lower()}://{parts.netloc}"
    path = parts.path or "/"
    return origin, f"{path}?{parts.query}" if parts.query else path


def stdio_config(
    command: str | Sequence[str],
    *,
    args: Sequence[str] | None = None,
    name: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    read_timeout: float = 15.0,
    retries: int = 0,
    retry_backoff: float = 1.0,
    protocol: ProtocolMode = "auto",
    discover_timeout: float | None = None,
    max_line_size: int | None = None,
    request_meta: HostMeta = None,
    extensions: Extensions = (),
    logger: Any = None,
) -> ServerConfig:
    """Configuration for a server run as a child process over stdio (CONN-17).

    Args:
        command: an argv sequence, or a string split with :func:`shlex.split` (POSIX
            rules: quote arguments containing spaces).
        args: appended to the argv.
        env: extra environment variables for the child (the shell merges them).
        cwd: working directory for the child.
        protocol: ``"auto"`` (default: probe with ``server/discover``, fall back to
            ``initialize``), ``"modern"`` (2026-07-28 only) or ``"legacy"`` (the
            handshake only, no probe) (LIFE-8).
        discover_timeout: how long the probe waits before a silent server is taken
            for a legacy one (LIFE-7); ``None``: 5 s (``protocol="modern"``:
            ``read_timeout``), capped by ``read_timeout``.
        max_line_size: override of ``Limits.max_line_size`` for this server.
        request_meta: this server's own host metadata on every 2026-07-28 request,
            laid over the client's ``request_meta`` (its keys win): a mapping (copied
            now) or a callable called once per request (LIFE-12).
        extensions: extension identifiers (or identifier -> settings) this server's
            requests declare besides the client's ``extensions`` (LIFE-13).
        logger: this server's logger (CONN-17): the server object's messages go to
            it instead of the client's.

    Raises:
        ValueError: an empty/unparseable command or an invalid option.
    """
    argv = list(stdio_argv(command))
    if args is not None:
        if not isinstance(args, (list, tuple)):
            raise ValueError(f"args must be a list of strings, got {type(args).__name__}")
        argv.extend(_argv(args))
    return _built(
        ServerConfig(
            type="stdio",
            name=name,
            command=tuple(argv),
            env=env,
            cwd=cwd,
            read_timeout=read_timeout,
            retries=retries,
            retry_backoff=retry_backoff,
            protocol=protocol,
            discover_timeout=discover_timeout,
            max_line_size=max_line_size,
            request_meta=request_meta,
            extensions=extensions,
            logger=logger,
        )
    )


def sse_config(
    base_url: str,
    *,
    headers: Mapping[str, str] | None = None,
    read_timeout: float = 30.0,
    ping: float | None = 10.0,
    retries: int = 0,
    retry_backoff: float = 1.0,
    name: str | None = None,
    logger: Any = None,
    configure_http: Any = None,
    oauth_provider: object | None = None,
) -> ServerConfig:
    """Configuration for a legacy HTTP+SSE server (deprecated transport; CONN-17).

    ``base_url`` is the event-stream URL, kept as given (after validation).
    ``oauth_provider`` (an :class:`mcp_proto.oauth.OAuthProvider`) authorizes the event
    stream and the POSTs to its endpoint (docs/oauth.md).

    ``logger``: this server's logger (CONN-17): the server object's messages go to it
    instead of the client's, and this configuration's warnings (a ``0.0.0.0`` host,
    HTTP-6) are logged to it at once; without it, the client logs them.

    ``configure_http``: a callable called once with this server's
    :class:`mcp_proto.http_settings.HttpSettings` when the client builds it (TLS
    context, proxy, headers, per-request headers: CUST-1); wins over the client's.

    Raises:
        ValueError: not an http(s) URL with a host, or an invalid option.
    """
    _parse_http_url(base_url, "base_url")
    return _built(
        ServerConfig(
            type="sse",
            name=name,
            url=base_url,
            headers=headers,
            read_timeout=read_timeout,
            ping=ping,
            retries=retries,
            retry_backoff=retry_backoff,
            logger=logger,
            configure_http=configure_http,
            oauth_provider=oauth_provider,
        )
    )


def http_config(
    base_url: str,
    *,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    read_timeout: float = 30.0,
    retries: int = 3,
    retry_backoff: float = 1.0,
    name: str | None = None,
    protocol: ProtocolMode = "auto",
    discover_timeout: float | None = None,
    oauth_provider: object | None = None,
    request_meta: HostMeta = None,
    extensions: Extensions = (),
    logger: Any = None,
    configure_http: Any = None,
) -> ServerConfig:
    """Configuration for a plain JSON-RPC-over-HTTP (request/response) server (CONN-17).

    HTTP-5: with ``endpoint`` left at ``None`` the URL is used as given: its path is the
    endpoint (``https://h/api`` → ``/api``, ``https://h`` → ``/``). An explicit
    ``endpoint`` wins and the base URL's path is dropped (as the Ruby client does);
    ``endpoint="/rpc"`` gives the Ruby client's default path. That default is not
    taken (CONN-17 names it): the seeds' examples pass ``endpoint="/rpc"`` explicitly,
    and ``connect``'s fallback chain, ``connect(transport="http")`` and ``plain_http``
    file entries build through this function, where a default path would send a bare
    origin's requests elsewhere than the URL says (docs/http.md).

    ``protocol`` is ``"auto"`` (probe with ``server/discover``, else ``initialize``),
    ``"modern"`` or ``"legacy"`` (LIFE-8); ``discover_timeout`` bounds the probe (None:
    5 s, ``read_timeout`` with ``protocol="modern"``; capped by ``read_timeout``).
    ``oauth_provider`` (an :class:`mcp_proto.oauth.OAuthProvider`) authorizes the
    requests (docs/oauth.md).

    ``request_meta`` (a mapping, copied now, or a callable) is laid over the client's
    ``request_meta`` on this server's 2026-07-28 requests; ``extensions`` are declared
    besides the client's (LIFE-12, LIFE-13). Bad values raise ``ValidationError`` (a
    ``ValueError``).

    ``logger``: this server's logger (CONN-17): the server object's messages go to it
    instead of the client's, and this configuration's warnings (a ``0.0.0.0`` host,
    HTTP-6) are logged to it at once; without it, the client logs them.

    ``configure_http``: a callable called once with this server's
    :class:`mcp_proto.http_settings.HttpSettings` when the client builds it (TLS
    context, proxy, headers, per-request headers: CUST-1); wins over the client's.

    Raises:
        ValueError: not an http(s) URL with a host, or an invalid option.
    """
    origin, path = _split_base_url(base_url)
    if endpoint is None:
        endpoint = path
    return _built(
        ServerConfig(
            type="http",
            name=name,
            url=origin,
            endpoint=endpoint,
            headers=headers,
            read_timeout=read_timeout,
            retries=retries,
            retry_backoff=retry_backoff,
            protocol=protocol,
            discover_timeout=discover_timeout,
            oauth_provider=oauth_provider,
            request_meta=request_meta,
            extensions=extensions,
            logger=logger,
            configure_http=configure_http,
        )
    )


def streamable_http_config(
    base_url: str,
    *,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    read_timeout: float = 30.0,
    retries: int = 3,
    retry_backoff: float = 1.0,
    name: str | None = None,
    max_decompressed_body_bytes: int = DEFAULT_MAX_DECOMPRESSED_BODY_BYTES,
    protocol: ProtocolMode = "auto",
    discover_timeout: float | None = None,
    oauth_provider: object | None = None,
    request_meta: HostMeta = None,
    extensions: Extensions = (),
    logger: Any = None,
    configure_http: Any = None,
) -> ServerConfig:
    """Configuration for a Streamable HTTP server (CONN-17).

    HTTP-5: with ``endpoint`` left at ``None`` the URL is used as given: its path is the
    endpoint (``https://h/mcp`` → ``/mcp``, ``https://h`` and ``https://h/`` → ``/``).
    An explicit ``endpoint`` always wins.

    ``protocol`` is ``"auto"`` (probe with ``server/discover``, else ``initialize``),
    ``"modern"`` or ``"legacy"`` (LIFE-8); ``discover_timeout`` bounds the probe (None:
    5 s, ``read_timeout`` with ``protocol="modern"``; capped by ``read_timeout``).
    ``oauth_provider`` (an :class:`mcp_proto.oauth.OAuthProvider`) authorizes the
    requests (docs/oauth.md).

    ``request_meta`` (a mapping, copied now, or a callable) is laid over the client's
    ``request_meta`` on this server's 2026-07-28 requests; ``extensions`` are declared
    besides the client's (LIFE-12, LIFE-13). Bad values raise ``ValidationError`` (a
    ``ValueError``).

    ``logger``: this server's logger (CONN-17): the server object's messages go to it
    instead of the client's, and this configuration's warnings (a ``0.0.0.0`` host,
    HTTP-6) are logged to it at once; without it, the client logs them.

    ``configure_http``: a callable called once with this server's
    :class:`mcp_proto.http_settings.HttpSettings` when the client builds it (TLS
    context, proxy, headers, per-request headers: CUST-1); wins over the client's.

    Raises:
        ValueError: not an http(s) URL with a host, or an invalid option (SIZE-2:
            ``max_decompressed_body_bytes`` must be a positive integer).
    """
    origin, path = _split_base_url(base_url)
    if endpoint is None:
        endpoint = path
    return _built(
        ServerConfig(
            type="streamable_http",
            name=name,
            url=origin,
            endpoint=endpoint,
            headers=headers,
            read_timeout=read_timeout,
            retries=retries,
            retry_backoff=retry_backoff,
            max_decompressed_body_bytes=max_decompressed_body_bytes,
            protocol=protocol,
            discover_timeout=discover_timeout,
            oauth_provider=oauth_provider,
            request_meta=request_meta,
            extensions=extensions,
            logger=logger,
            configure_http=configure_http,
        )
    )


def websocket_config(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    read_timeout: float = 30.0,
    retries: int = 0,
    retry_backoff: float = 1.0,
    name: str | None = None,
    max_decompressed_body_bytes: int = DEFAULT_MAX_DECOMPRESSED_BODY_BYTES,
    max_line_size: int | None = None,
    ping: float | None = None,
    protocol: ProtocolMode = "auto",
    discover_timeout: float | None = None,
    request_meta: HostMeta = None,
    extensions: Extensions = (),
    logger: Any = None,
) -> ServerConfig:
    """Configuration for a server reached over WebSocket (issue 25; SEP-1288, a draft:
    the official Python SDK 1.x and the TypeScript SDK speak it).

    ``url`` is a ``ws://`` or ``wss://`` URL, used as given (its path and query are the
    upgrade's target). ``headers`` go with the upgrade request (an ``Authorization``
    among them). ``max_line_size`` bounds one message (default
    ``Limits.max_line_size``); ``max_decompressed_body_bytes`` bounds what one
    ``permessage-deflate`` message may inflate to (SIZE-1, as the HTTP gzip bound).
    ``ping``: seconds between keep-alive Pings (``None``, the default: none); a Pong
    not back within 2.5 intervals loses the connection (the next call reconnects).
    ``protocol`` and ``discover_timeout`` choose the era as for stdio (LIFE-7, LIFE-8).

    ``logger``: this server's logger (CONN-17): the server object's messages go to it
    instead of the client's, and this configuration's warnings (a ``0.0.0.0`` host,
    HTTP-6) are logged to it at once; without it, the client logs them.

    Raises:
        ValueError: not a ws(s) URL with a host, or an invalid option.
    """
    _parse_ws_url(url, "url")
    return _built(
        ServerConfig(
            type="websocket",
            name=name,
            url=url,
            headers=headers,
            read_timeout=read_timeout,
            retries=retries,
            retry_backoff=retry_backoff,
            max_decompressed_body_bytes=max_decompressed_body_bytes,
            max_line_size=max_line_size,
            ping=ping,
            protocol=protocol,
            discover_timeout=discover_timeout,
            request_meta=request_meta,
            extensions=extensions,
            logger=logger,
        )
    )


# ------------------------------------------------------------------------ stdio argv


def _is_stdio_url(text: str) -> bool:
    return text.strip()[:8].lower() == "stdio://"


def stdio_argv(target: str | Sequence[str]) -> tuple[str, ...]:
    """The argv of a stdio target: strips ``stdio://`` and shell-splits a string.

    Raises:
        ValueError: empty, unbalanced quotes, or a non-string argv element.
    """
    if isinstance(target, str):
        text = target.strip()
        if _is_stdio_url(text):
            text = text[8:]
        argv = tuple(shlex.split(text))
    else:
        argv = _argv(target)
    if not argv or not argv[0]:
        raise ValueError(f"empty stdio command: {target!r}")
    return argv
