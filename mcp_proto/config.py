"""Server configuration as data: builders, raw dicts, ``mcpServers`` files, detection.

The shells read files and the environment; this module only parses what they hand in
(CONN-17..20) and decides, from a ``connect`` target alone, which transport it needs
(CONN-2..7, CONN-10, CONN-11). It never opens, resolves or executes anything: a
"path-looking" command is judged by its spelling only.

Every builder returns a validated, frozen :class:`ServerConfig`; a bad value raises
``ValueError`` naming the option.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal, cast
from urllib.parse import SplitResult, urlsplit

import attrs

from .errors import TransportDetectionError

__all__ = [
    "DEFAULT_MAX_DECOMPRESSED_BODY_BYTES",
    "REDACTED",
    "ServerConfig",
    "config_from_dict",
    "detect_transport",
    "http_config",
    "parse_server_definitions",
    "redact_config",
    "split_targets",
    "sse_config",
    "stdio_argv",
    "stdio_config",
    "streamable_http_config",
]

TransportType = Literal["stdio", "sse", "http", "streamable_http"]
ProtocolMode = Literal["auto", "modern", "legacy"]
DetectedTransport = Literal["stdio", "sse", "http", "streamable_http", "http_auto"]

#: Default bound on a gzip-decoded Streamable HTTP body (SIZE-1/2): 64 MiB.
DEFAULT_MAX_DECOMPRESSED_BODY_BYTES: Final = 64 * 2**20
#: What :func:`redact_config` puts in place of a secret.
REDACTED: Final = "[REDACTED]"

_TRANSPORTS: Final = ("stdio", "sse", "http", "streamable_http")
_PROTOCOLS: Final = ("auto", "modern", "legacy")
_HTTP_TYPES: Final = frozenset({"http", "streamable_http"})
# The plain-HTTP transport's historical default path (seeds: ``endpoint: '/rpc'``).
_DEFAULT_ENDPOINT: Final = "/rpc"
_CONTROL_OR_SPACE: Final = re.compile(r"[\x00-\x20\x7f]")
_HEADER_UNSAFE: Final = re.compile(r"[\r\n\x00]")


# --------------------------------------------------------------------- value checks


def _number(value: object, what: str, *, allow_zero: bool = False) -> float:
    # bool is an int subclass; ``read_timeout=True`` is a mistake, not one second.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number, got {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        bound = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{what} must be {bound}, got {value!r}")
    return float(value)


def _integer(value: object, what: str, *, allow_zero: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be an integer, got {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        bound = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{what} must be a {bound} integer, got {value!r}")
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
    return None if value is None else _string_map(value, "env")


def _argv(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        # A bare string would become a tuple of characters.
        raise ValueError("command must be an argv sequence here; use stdio_config() for strings")
    if not isinstance(value, Iterable):
        raise ValueError(f"command must be a sequence of strings, got {type(value).__name__}")
    argv = tuple(value)
    for part in argv:
        if not isinstance(part, str):
            raise ValueError(f"command parts must be strings, got {part!r}")
    return argv


def _parse_http_url(url: object, what: str = "URL") -> SplitResult:
    """Validate an http(s) URL with a host (HTTP-6); raise ``ValueError`` otherwise."""
    if not isinstance(url, str) or not url:
        raise ValueError(f"{what} must be a non-empty string, got {url!r}")
    if _CONTROL_OR_SPACE.search(url):
        raise ValueError(f"{what} must not contain spaces or control characters: {url!r}")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError as exc:
        raise ValueError(f"invalid {what} {url!r}: {exc}") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise ValueError(f"{what} must use http or https, got {url!r}")
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
        raise ValueError(f"endpoint must be a path starting with '/', got {endpoint!r}")
    # "//host/x" is a network-path reference: joined to the base it would change host.
    if endpoint.startswith("//"):
        raise ValueError(f"endpoint must not start with '//', got {endpoint!r}")
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
    #: An OAuth provider object for the shell (AUTH-3); opaque to the core.
    oauth_provider: object | None = attrs.field(default=None, repr=False)

    def __attrs_post_init__(self) -> None:
        if self.type not in _TRANSPORTS:
            raise ValueError(f"type must be one of {', '.join(_TRANSPORTS)}, got {self.type!r}")
        if self.name is not None and (not isinstance(self.name, str) or not self.name):
            raise ValueError(f"name must be a non-empty string or None, got {self.name!r}")
        _number(self.read_timeout, "read_timeout")
        _integer(self.retries, "retries", allow_zero=True)
        _number(self.retry_backoff, "retry_backoff", allow_zero=True)
        if self.ping is not None:
            _number(self.ping, "ping")
        # SIZE-2: non-positive or non-integer limits are rejected.
        _integer(self.max_decompressed_body_bytes, "max_decompressed_body_bytes")
        if self.protocol not in _PROTOCOLS:
            raise ValueError(
                f"protocol must be one of {', '.join(_PROTOCOLS)}, got {self.protocol!r}"
            )
        if self.discover_timeout is not None:
            _number(self.discover_timeout, "discover_timeout")
        if self.max_line_size is not None:
            _integer(self.max_line_size, "max_line_size")
        if self.type == "stdio":
            self._check_stdio()
        else:
            self._check_remote()

    def _check_stdio(self) -> None:
        if not self.command or not self.command[0]:
            raise ValueError("a stdio server needs a non-empty command")
        if self.cwd is not None and (not isinstance(self.cwd, str) or not self.cwd):
            raise ValueError(f"cwd must be a non-empty string or None, got {self.cwd!r}")
        for field in ("url", "endpoint"):
            if getattr(self, field) is not None:
                raise ValueError(f"{field} does not apply to a stdio server")
        if self.headers:
            raise ValueError("headers do not apply to a stdio server")

    def _check_remote(self) -> None:
        if self.command:
            raise ValueError(f"command does not apply to a {self.type} server")
        for field in ("env", "cwd"):
            if getattr(self, field) is not None:
                raise ValueError(f"{field} does not apply to a {self.type} server")
        _parse_http_url(self.url, "url")
        if self.type == "sse":
            # SSE-8 / CONN-13: HTTP+SSE is a handshake-era transport; it has no era to
            # probe, so asking for a modern server over it is a contradiction.
            if self.protocol == "modern":
                raise ValueError("protocol='modern' is not possible over the legacy SSE transport")
            if self.discover_timeout is not None:
                raise ValueError("discover_timeout does not apply to the SSE transport")
            if self.endpoint is not None:
                raise ValueError("endpoint does not apply to SSE (the server announces it)")
        else:
            _check_endpoint(self.endpoint)

    @property
    def endpoint_url(self) -> str | None:
        """The URL requests go to (HTTP types), the stream URL (SSE), ``None`` for stdio."""
        if self.type == "stdio":
            return None
        if self.type == "sse":
            return self.url
        return f"{self.url}{self.endpoint}"

    @property
    def warnings(self) -> tuple[str, ...]:
        """Advisory notes about this configuration for the shell to log (e.g. 0.0.0.0)."""
        return _url_warnings(self.url)


# ------------------------------------------------------------------------- builders


def _split_base_url(base_url: object) -> tuple[str, str | None]:
    """``(origin, path_and_query or None)`` of an http(s) base URL.

    The path keeps its query string (some servers take an API key there); a trailing
    ``/`` is dropped and a bare ``/`` counts as no path.
    """
    parts = _parse_http_url(base_url, "base_url")
    origin = f"{parts.scheme.lower()}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if parts.query:
        return origin, f"{path or '/'}?{parts.query}"
    return origin, path or None


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
) -> ServerConfig:
    """Configuration for a server run as a child process over stdio (CONN-17).

    Args:
        command: an argv sequence, or a string split with :func:`shlex.split` (POSIX
            rules: quote arguments containing spaces).
        args: appended to the argv.
        env: extra environment variables for the child (the shell merges them).
        cwd: working directory for the child.
        protocol: ``"auto"`` probes for the 2026-07-28 era, ``"modern"``/``"legacy"``
            force one (LIFE-8).
        discover_timeout: bound on the ``server/discover`` probe (LIFE-7).
        max_line_size: override of ``Limits.max_line_size`` for this server.

    Raises:
        ValueError: an empty/unparseable command or an invalid option.
    """
    argv = list(stdio_argv(command))
    if args is not None:
        if not isinstance(args, (list, tuple)):
            raise ValueError(f"args must be a list of strings, got {type(args).__name__}")
        argv.extend(_argv(args))
    return ServerConfig(
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
) -> ServerConfig:
    """Configuration for a legacy HTTP+SSE server (deprecated transport; CONN-17).

    ``base_url`` is the event-stream URL, kept as given (after validation).

    Raises:
        ValueError: not an http(s) URL with a host, or an invalid option.
    """
    _parse_http_url(base_url, "base_url")
    return ServerConfig(
        type="sse",
        name=name,
        url=base_url,
        headers=headers,
        read_timeout=read_timeout,
        ping=ping,
        retries=retries,
        retry_backoff=retry_backoff,
    )


def http_config(
    base_url: str,
    *,
    endpoint: str = _DEFAULT_ENDPOINT,
    headers: Mapping[str, str] | None = None,
    read_timeout: float = 30.0,
    retries: int = 3,
    retry_backoff: float = 1.0,
    name: str | None = None,
    protocol: ProtocolMode = "auto",
    discover_timeout: float | None = None,
    oauth_provider: object | None = None,
) -> ServerConfig:
    """Configuration for a plain HTTP (request/response) server (CONN-17).

    HTTP-5: when ``base_url`` has a path and ``endpoint`` is left at ``"/rpc"``, the
    path is the endpoint (``https://h/api`` → ``/api``); otherwise ``endpoint`` is used
    and the base URL's path is dropped (as the Ruby client does).

    Raises:
        ValueError: not an http(s) URL with a host, or an invalid option.
    """
    origin, path = _split_base_url(base_url)
    if path is not None and endpoint == _DEFAULT_ENDPOINT:
        endpoint = path
    return ServerConfig(
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
) -> ServerConfig:
    """Configuration for a Streamable HTTP server (CONN-17).

    HTTP-5: with ``endpoint`` left at ``None`` the base URL's path is the endpoint
    (``https://h/mcp`` → ``/mcp``), or ``"/rpc"`` when it has none. An explicit
    ``endpoint`` always wins.

    Raises:
        ValueError: not an http(s) URL with a host, or an invalid option (SIZE-2:
            ``max_decompressed_body_bytes`` must be a positive integer).
    """
    origin, path = _split_base_url(base_url)
    if endpoint is None:
        endpoint = path if path is not None else _DEFAULT_ENDPOINT
    return ServerConfig(
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
    )


# ----------------------------------------------------------------------- raw dicts

# Spellings of ``type`` seen in the wild, compared with case and separators removed.
_TYPE_ALIASES: Final[Mapping[str, TransportType]] = {
    "stdio": "stdio",
    "sse": "sse",
    "http": "http",
    "streamablehttp": "streamable_http",
}
_COMMON_KEYS: Final = frozenset(
    {"type", "transport", "name", "read_timeout", "retries", "retry_backoff"}
)
_KEYS_BY_TYPE: Final[Mapping[str, frozenset[str]]] = {
    "stdio": _COMMON_KEYS
    | {"command", "args", "env", "cwd", "protocol", "discover_timeout", "max_line_size"},
    "sse": _COMMON_KEYS | {"url", "base_url", "headers", "ping"},
    "http": _COMMON_KEYS
    | {"url", "base_url", "endpoint", "headers", "protocol", "discover_timeout", "oauth_provider"},
    "streamable_http": _COMMON_KEYS
    | {
        "url",
        "base_url",
        "endpoint",
        "headers",
        "protocol",
        "discover_timeout",
        "oauth_provider",
        "max_decompressed_body_bytes",
    },
}
# Keys a definition file may carry for humans or other hosts; never an error.
_IGNORED_KEYS: Final = frozenset({"comment", "description"})
_SSE_TOKEN: Final = re.compile(r"(?<![a-z0-9])sse(?![a-z0-9])")


def _normalise_type(value: object) -> TransportType:
    if isinstance(value, str):
        found = _TYPE_ALIASES.get(value.strip().lower().replace("_", "").replace("-", ""))
        if found is not None:
            return found
    raise ValueError(
        f"unknown server type {value!r} "
        "(expected stdio, sse, http, streamable_http / streamableHttp / streamable-http)"
    )


def _infer_type(entry: Mapping[str, Any]) -> TransportType | None:
    """CONN-20: command/args → stdio; a URL mentioning ``sse`` → sse; other URL → streamable.

    "Mentioning sse" means ``sse`` as a token of the host or path (``/sse``,
    ``/mcp-sse``, ``sse.example.com``), so ``/assessment`` does not count.
    """
    if "command" in entry or "args" in entry:
        return "stdio"
    url = entry.get("url", entry.get("base_url"))
    if isinstance(url, str):
        try:
            parts = urlsplit(url)
        except ValueError:
            return "streamable_http"
        if _SSE_TOKEN.search(f"{parts.netloc}{parts.path}".lower()):
            return "sse"
        return "streamable_http"
    if "env" in entry:
        return "stdio"
    return None


def _entry_url(entry: Mapping[str, Any]) -> Any:
    url, base_url = entry.get("url"), entry.get("base_url")
    if url is not None and base_url is not None and url != base_url:
        raise ValueError("'url' and 'base_url' disagree; give one of them")
    if url is None and base_url is None:
        raise ValueError("missing 'url' (or 'base_url')")
    return url if url is not None else base_url


def _build(entry: Mapping[str, Any], kind: TransportType, name: object) -> ServerConfig:
    opts: dict[str, Any] = {
        key: entry[key]
        for key in ("read_timeout", "retries", "retry_backoff")
        if entry.get(key) is not None
    }
    if name is not None:
        opts["name"] = name
    if kind in ("stdio", "http", "streamable_http"):
        for key in ("protocol", "discover_timeout"):
            if entry.get(key) is not None:
                opts[key] = entry[key]
    if kind == "stdio":
        command = entry.get("command")
        args = entry.get("args")
        if command is None:
            raise ValueError("a stdio server needs 'command'")
        if isinstance(command, str) and args is not None:
            # mcpServers convention: "command" is the executable itself (its path may
            # contain spaces) and "args" the rest, so it is not shell-split.
            command = [command]
        for key in ("env", "cwd", "max_line_size"):
            if entry.get(key) is not None:
                opts[key] = entry[key]
        return stdio_config(command, args=args, **opts)
    for key in ("headers", "endpoint"):
        if entry.get(key) is not None:
            opts[key] = entry[key]
    url = _entry_url(entry)
    if kind == "sse":
        opts.pop("endpoint", None)
        if entry.get("protocol") == "modern":
            # CONN-13: an explicit contradiction is an error, not silently dropped.
            raise ValueError("protocol='modern' is not possible over the legacy SSE transport")
        if entry.get("ping") is not None:
            opts["ping"] = entry["ping"]
        return sse_config(url, **opts)
    if entry.get("oauth_provider") is not None:
        opts["oauth_provider"] = entry["oauth_provider"]
    if kind == "http":
        return http_config(url, **opts)
    if entry.get("max_decompressed_body_bytes") is not None:
        opts["max_decompressed_body_bytes"] = entry["max_decompressed_body_bytes"]
    return streamable_http_config(url, **opts)


def config_from_dict(d: Mapping[str, Any], *, name: str | None = None) -> ServerConfig:
    """A :class:`ServerConfig` from a raw dict (CONN-18).

    Keys: ``type`` (``stdio``, ``sse``, ``http``, ``streamable_http`` /
    ``streamableHttp`` / ``streamable-http``; ``transport`` is accepted as its alias;
    inferred as in :func:`parse_server_definitions` when absent), ``name``,
    ``command`` (string or argv), ``args``, ``env``, ``cwd``, ``url`` or its alias
    ``base_url``, ``endpoint``, ``headers``, ``read_timeout``, ``retries``,
    ``retry_backoff``, ``ping``, ``max_decompressed_body_bytes``, ``protocol``,
    ``discover_timeout``, ``max_line_size``, ``oauth_provider``. Unset options take
    the builder's default for that type; keys that do not apply are ignored.

    A string ``command`` is shell-split unless ``args`` is given, in which case it is
    the executable itself (the ``mcpServers`` convention).

    Raises:
        ValueError: not a mapping, unknown/missing type, or an invalid value.
    """
    if not isinstance(d, Mapping):
        raise ValueError(f"a server config must be a mapping, got {type(d).__name__}")
    raw_type = d.get("type", d.get("transport"))
    if raw_type is not None:
        kind = _normalise_type(raw_type)
    else:
        inferred = _infer_type(d)
        if inferred is None:
            raise ValueError("cannot tell the server type: give 'type', 'command' or 'url'")
        kind = inferred
    return _build(d, kind, name if name is not None else d.get("name"))


def parse_server_definitions(obj: object) -> tuple[list[ServerConfig], list[str]]:
    """Parse a server definition document (CONN-19, CONN-20).

    Accepts ``{"mcpServers": {name: {...}}}`` (or ``mcpServers`` as a list), a bare
    list of server objects, or one server object. Leniency, each noted in the
    returned warnings for the shell to log: a missing ``type`` is inferred; ``comment``
    and ``description`` keys are ignored silently; unknown keys are ignored; entries
    with ``"disabled": true`` are skipped; invalid entries and duplicate names are
    skipped.

    Returns:
        ``(configs, warnings)``.

    Raises:
        ValueError: the document is not one of the accepted shapes (e.g. a number).
    """
    entries: list[tuple[str | None, object]]
    if isinstance(obj, Mapping) and "mcpServers" in obj:
        servers = obj["mcpServers"]
        if isinstance(servers, Mapping):
            entries = [(str(key), value) for key, value in servers.items()]
        elif isinstance(servers, list):
            entries = [(None, value) for value in servers]
        else:
            raise ValueError(
                f"'mcpServers' must be an object or an array, got {type(servers).__name__}"
            )
    elif isinstance(obj, list):
        entries = [(None, value) for value in obj]
    elif isinstance(obj, Mapping):
        entries = [(None, obj)]
    else:
        raise ValueError(
            "a server definition must be an object with 'mcpServers', an array of "
            f"servers or one server object, got {type(obj).__name__}"
        )

    configs: list[ServerConfig] = []
    warnings: list[str] = []
    seen: set[str] = set()
    for index, (key, entry) in enumerate(entries):
        name = key
        if name is None and isinstance(entry, Mapping):
            given = entry.get("name")
            name = given if isinstance(given, str) and given else None
        label = f"server {name!r}" if name is not None else f"server #{index}"
        if not isinstance(entry, Mapping):
            warnings.append(f"{label}: skipped, expected an object, got {type(entry).__name__}")
            continue
        if entry.get("disabled") is True:
            warnings.append(f"{label}: skipped, marked disabled")
            continue
        if name is not None and name in seen:
            warnings.append(f"{label}: skipped, duplicate server name")
            continue
        raw_type = entry.get("type", entry.get("transport"))
        try:
            if raw_type is not None:
                kind = _normalise_type(raw_type)
            else:
                inferred = _infer_type(entry)
                if inferred is None:
                    raise ValueError("no 'type', and neither 'command' nor 'url' to infer it")
                kind = inferred
                warnings.append(f"{label}: no 'type' given; inferred {kind!r}")
            config = _build(entry, kind, name)
        except ValueError as exc:
            warnings.append(f"{label}: skipped, invalid: {exc}")
            continue
        unknown = set(entry) - _KEYS_BY_TYPE[kind] - _IGNORED_KEYS - {"disabled"}
        if unknown:
            shown = ", ".join(sorted(map(str, unknown)))
            warnings.append(f"{label}: ignored keys that do not apply to {kind}: {shown}")
        warnings.extend(f"{label}: {note}" for note in config.warnings)
        if name is not None:
            seen.add(name)
        configs.append(config)
    return configs, warnings


# ------------------------------------------------------------------------ detection

# CONN-5: launchers that mean "run a local server". Matched on the first word, with a
# Windows ``.exe``/``.cmd``/``.bat`` suffix ignored; ``pythonX.Y`` counts as python.
_LAUNCHER: Final = re.compile(
    r"(?:npx|node|python(?:\d+(?:\.\d+)*)?|uvx?|deno|bun|docker|ruby|php|java|cargo)"
    r"(?:\.(?:exe|cmd|bat))?",
    re.IGNORECASE,
)
_SCRIPT_SUFFIX: Final = (".py", ".js", ".mjs", ".cjs", ".ts")
_SCHEME: Final = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_HOST_PORT: Final = re.compile(r"^[\w.-]+:\d+(?:/|$)")
_FORCED: Final[Mapping[str, TransportType]] = {
    "stdio": "stdio",
    "sse": "sse",
    "http": "http",
    "streamablehttp": "streamable_http",
}


def _is_http_url(text: str) -> bool:
    match = _SCHEME.match(text.strip())
    return match is not None and match.group(1).lower() in ("http", "https")


def _is_stdio_url(text: str) -> bool:
    return text.strip()[:8].lower() == "stdio://"


def _looks_like_command(words: Sequence[str]) -> bool:
    """CONN-5: a known launcher, ``go run``, or a path-looking executable/script."""
    if not words:
        return False
    first = words[0]
    if _LAUNCHER.fullmatch(first):
        return True
    if first.lower() == "go" and len(words) > 1 and words[1] == "run":
        return True
    if _HOST_PORT.match(first):
        return False  # "localhost:8000/mcp" is a URL without its scheme, not a path.
    return "/" in first or "\\" in first or first.lower().endswith(_SCRIPT_SUFFIX)


def split_targets(target: str | Sequence[str]) -> list[str | tuple[str, ...]]:
    """Split a ``connect`` target into per-server targets (CONN-9, CONN-10).

    A string is one target. A list is one stdio argv when it looks like command parts
    (its first element is a launcher, or no element is an http(s) URL); otherwise —
    its first element is a URL or ``stdio://`` target, or it mixes URLs with commands —
    each element is a separate server. An argv comes back as a tuple.

    Raises:
        TransportDetectionError: an empty list or a non-string element.
    """
    if isinstance(target, str):
        return [target]
    if not isinstance(target, Sequence) or not target:
        raise TransportDetectionError(f"cannot use {target!r} as a connect target")
    parts = list(target)
    for part in parts:
        if not isinstance(part, str):
            raise TransportDetectionError(f"connect targets must be strings, got {part!r}")
    first = parts[0]
    if _is_http_url(first) or _is_stdio_url(first):
        return list(parts)
    if _LAUNCHER.fullmatch(first) or first.lower() == "go":
        return [tuple(parts)]
    if not any(_is_http_url(part) for part in parts):
        return [tuple(parts)]
    return list(parts)


def detect_transport(
    target: str | Sequence[str],
    *,
    transport: str | None = None,
    protocol: ProtocolMode = "auto",
) -> DetectedTransport:
    """Which transport a ``connect`` target needs (CONN-2..7, CONN-10, CONN-11, CONN-13).

    ===================================================  =====================
    target                                               result
    ===================================================  =====================
    http(s) URL whose path ends ``/sse``                 ``"sse"``
    http(s) URL whose path ends ``/mcp``                 ``"streamable_http"``
    any other http(s) URL                                ``"http_auto"`` — try
                                                         Streamable HTTP, then
                                                         SSE, then plain HTTP
    ``stdio://command``, an argv list/tuple              ``"stdio"``
    a command starting with npx, node, python(3), uv,    ``"stdio"``
    uvx, deno, bun, docker, ruby, php, java, cargo,
    ``go run``, or a path-looking executable/script
    ===================================================  =====================

    A trailing ``/`` on the URL path is ignored. ``transport=`` forces one of
    ``stdio``, ``sse``, ``http``, ``streamable_http`` (CONN-11). With
    ``protocol="modern"`` an ambiguous URL is ``"streamable_http"`` (the other
    fallbacks are legacy-only) and SSE is refused (CONN-13).

    Raises:
        TransportDetectionError: a non-http URL, an invalid URL, an unknown forced
            transport, or a string that is neither URL nor recognisable command.
        ValueError: ``protocol="modern"`` with the SSE transport.
    """
    if transport is not None:
        forced = (
            _FORCED.get(transport.strip().lower().replace("_", "").replace("-", ""))
            if isinstance(transport, str)
            else None
        )
        if forced is None:
            raise TransportDetectionError(
                f"unknown transport {transport!r} (expected stdio, sse, http, streamable_http)"
            )
        result: DetectedTransport = forced
    else:
        result = _detect(target)
    if protocol == "modern":
        if result == "sse":
            raise ValueError(
                "protocol='modern' needs Streamable HTTP; the SSE transport is legacy-only"
            )
        if result == "http_auto":
            return "streamable_http"
    return result


def _detect(target: str | Sequence[str]) -> DetectedTransport:
    if not isinstance(target, str):
        pieces = split_targets(target)
        if len(pieces) == 1 and isinstance(pieces[0], tuple):
            if not pieces[0][0].strip():
                raise TransportDetectionError(f"empty command in argv {target!r}")
            return "stdio"
        raise TransportDetectionError(
            "this list names several servers; split it with split_targets() first"
        )
    text = target.strip()
    if not text:
        raise TransportDetectionError("empty connect target")
    if _is_stdio_url(text):
        if not text[8:].strip():
            raise TransportDetectionError("stdio:// target has no command")
        return "stdio"
    scheme = _SCHEME.match(text)
    if scheme is not None:
        if scheme.group(1).lower() not in ("http", "https"):
            raise TransportDetectionError(
                f"cannot detect a transport for the non-HTTP URL {text!r}; "
                "pass transport= to choose one"
            )
        try:
            parts = _parse_http_url(text)
        except ValueError as exc:
            raise TransportDetectionError(f"invalid URL: {exc}") from None
        path = parts.path.lower().rstrip("/")
        if path.endswith("/sse"):
            return "sse"
        if path.endswith("/mcp"):
            return "streamable_http"
        return "http_auto"
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise TransportDetectionError(f"cannot parse command {text!r}: {exc}") from None
    if _looks_like_command(words):
        return "stdio"
    raise TransportDetectionError(
        f"cannot detect a transport for {text!r}: not an http(s) URL, stdio:// target "
        "or known command; pass transport= to choose one"
    )


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


# ------------------------------------------------------------------------ redaction

# HYG-2's credential-bearing keys, compared without case, "_" or "-" so that
# ``apiKey``, ``API-KEY`` and ``api_key`` all match.
_SENSITIVE: Final = frozenset(
    key.replace("_", "")
    for key in (
        "headers",
        "env",
        "token",
        "access_token",
        "api_key",
        "auth",
        "authorization",
        "password",
        "secret",
        "client_secret",
        "oauth_provider",
    )
)


def _is_sensitive(key: object) -> bool:
    return isinstance(key, str) and key.lower().replace("_", "").replace("-", "") in _SENSITIVE


def _redact(value: Any) -> Any:
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if not _is_sensitive(key) or item is None:
                # ``None`` holds no secret, and "[REDACTED]" would claim one is set.
                out[key] = _redact(item)
            elif isinstance(item, Mapping):
                # Keep the names (which header, which variable), hide every value.
                out[key] = {name: REDACTED for name in item}
            else:
                out[key] = REDACTED
        return out
    if isinstance(value, (list, tuple)):
        return [_redact(item) for item in value]
    return value


def redact_config(config: Mapping[str, Any] | ServerConfig) -> dict[str, Any]:
    """A copy of a server config safe to log (HYG-2); the input is never mutated.

    Values under ``headers``, ``env``, ``token``, ``access_token``, ``api_key``,
    ``auth``, ``authorization``, ``password``, ``secret``, ``client_secret`` and
    ``oauth_provider`` (any case; ``-``/``_`` ignored) become ``"[REDACTED]"``; when
    such a value is a mapping its keys stay and each of its values is redacted; a
    ``None`` stays ``None`` (nothing to hide, and no false hint that a secret is set). Works
    at any depth, through lists too. A :class:`ServerConfig` is converted with
    :func:`attrs.asdict` first.

    Raises:
        TypeError: ``config`` is neither a mapping nor a ``ServerConfig``.
    """
    if isinstance(config, ServerConfig):
        # The provider object stays opaque: it is redacted whole, never walked.
        data = attrs.asdict(config, recurse=False)
        return cast(dict[str, Any], _redact(data))
    if not isinstance(config, Mapping):
        raise TypeError(f"redact_config needs a mapping or ServerConfig, got {type(config)}")
    return cast(dict[str, Any], _redact(config))
