"""Server definitions as data: raw dicts and ``mcpServers`` documents (CONN-18..20).

The shells read the file; this module parses what they hand in and never touches the
filesystem.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final
from urllib.parse import urlsplit

import attrs

from ._util import shown
from .server_config import (
    ServerConfig,
    TransportType,
    _mark_warnings_logged,
    check_oauth_settings,
    check_unbuilt_options,
    http_config,
    sse_config,
    stdio_config,
    streamable_http_config,
    websocket_config,
)

__all__ = [
    "MAX_DEFINITION_FILE",
    "TYPE_SPELLINGS",
    "command_server_name",
    "config_from_dict",
    "decode_definition_file",
    "default_server_name",
    "parse_server_definitions",
    "unique_server_names",
]

#: Largest definition file read (bytes). Real ones are a few KiB; the bound keeps a
#: wrong path (``/dev/zero``, a log file) from being read for ever.
MAX_DEFINITION_FILE: Final = 16 * 1024 * 1024


def decode_definition_file(data: bytes) -> object:
    """The JSON document of a definition file's bytes (at most
    :data:`MAX_DEFINITION_FILE` + 1 of them, as read): UTF-8, a leading BOM allowed
    (editors on Windows write one).

    Raises:
        ValueError: too large, not UTF-8, not JSON (nested too deeply included); one
            line, starting with what is wrong.
    """
    if len(data) > MAX_DEFINITION_FILE:
        raise ValueError(f"is larger than {MAX_DEFINITION_FILE // (1024 * 1024)} MiB")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"is not UTF-8 text (byte {exc.start})") from None
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("is not valid JSON: nested too deeply") from None
    except ValueError as exc:
        raise ValueError(f"is not valid JSON: {exc}") from None


# Spellings of ``type`` seen in the wild, compared with case and separators removed.
# "http" means what Claude Code, VS Code and Cursor write it for: a Streamable HTTP
# server (spec 2025-03-26 and later, "Transports"). Plain JSON-RPC over HTTP, which no
# host writes, has a spelling of its own. ``transport=`` on connect() keeps its own
# vocabulary (CONN-11: "http" is plain HTTP there); see docs/usage.md.
_TYPE_ALIASES: Final[Mapping[str, TransportType]] = {
    "stdio": "stdio",
    "sse": "sse",
    "http": "streamable_http",
    "streamablehttp": "streamable_http",
    "plainhttp": "http",
    "websocket": "websocket",
    "ws": "websocket",
}
#: Every spelling :func:`config_from_dict` and :func:`parse_server_definitions` accept
#: for ``type`` (case is ignored, and so are ``-``/``_``), and the transport it selects.
TYPE_SPELLINGS: Final[Mapping[str, TransportType]] = {
    "stdio": "stdio",
    "http": "streamable_http",
    "streamable-http": "streamable_http",
    "streamable_http": "streamable_http",
    "streamableHttp": "streamable_http",
    "sse": "sse",
    "plain_http": "http",
    "websocket": "websocket",
    "ws": "websocket",
}
_COMMON_KEYS: Final = frozenset(
    {"type", "transport", "transportType", "name", "read_timeout", "retries", "retry_backoff"}
)
# Where an entry gives its URL: ``url`` (Claude Code, VS Code, Cursor), ``base_url``,
# ``serverUrl`` (Windsurf) and ``httpUrl`` (Gemini CLI, where it means Streamable HTTP).
# In this order of precedence when several are given (they must then agree).
_URL_FIELDS: Final = ("url", "base_url", "serverUrl", "httpUrl")
_URL_KEYS: Final = frozenset(_URL_FIELDS)
# The 2026-07-28 options of the transports that have an era (LIFE-8, LIFE-12, LIFE-13).
_ERA_KEYS: Final = frozenset({"protocol", "discover_timeout", "request_meta", "extensions"})
_KEYS_BY_TYPE: Final[Mapping[str, frozenset[str]]] = {
    "stdio": _COMMON_KEYS | _ERA_KEYS | {"command", "args", "env", "cwd", "max_line_size"},
    "sse": _COMMON_KEYS | _URL_KEYS | {"headers", "ping", "oauth_provider", "oauth"},
    "http": _COMMON_KEYS
    | _ERA_KEYS
    | _URL_KEYS
    | {"endpoint", "headers", "oauth_provider", "oauth"},
    "streamable_http": _COMMON_KEYS
    | _ERA_KEYS
    | _URL_KEYS
    | {
        "endpoint",
        "headers",
        "protocol",
        "discover_timeout",
        "oauth_provider",
        "oauth",
        "max_decompressed_body_bytes",
    },
    "websocket": _COMMON_KEYS
    | _ERA_KEYS
    | _URL_KEYS
    | {"headers", "max_decompressed_body_bytes", "max_line_size", "ping"},
}
# Keys a definition file may carry for humans or other hosts; never an error, and not
# worth a warning: notes, and the settings of a host's tool-approval prompts (Cline's
# ``autoApprove`` and ``disabledReason``, Roo Code's ``alwaysAllow``, Gemini CLI's
# ``trust``), which a client without such prompts has nothing to do with. Keys that
# would change what a host shows or waits for (``timeout``, ``disabledTools``...) are
# still reported as ignored.
_IGNORED_KEYS: Final = frozenset(
    {"comment", "description", "autoApprove", "alwaysAllow", "disabledReason", "trust"}
)
_SSE_TOKEN: Final = re.compile(r"(?<![a-z0-9])sse(?![a-z0-9])")


def _raw_type(entry: Mapping[str, Any]) -> object:
    """An entry's transport as written: ``type``, or ``transport``, or ``transportType``
    (Cline: "stdio", "sse", "streamable-http"), the first one given."""
    for key in ("type", "transport", "transportType"):
        value = entry.get(key)
        if value is not None:
            return value
    return None


def _normalise_type(value: object) -> TransportType:
    if isinstance(value, str):
        found = _TYPE_ALIASES.get(value.strip().lower().replace("_", "").replace("-", ""))
        if found is not None:
            return found
    raise ValueError(
        f"unknown server type {shown(value)} (expected stdio, http, streamable-http, "
        "streamable_http, streamableHttp, sse, plain_http, websocket or ws)"
    )


def _infer_type(entry: Mapping[str, Any]) -> TransportType | None:
    """CONN-20: command/args → stdio; a URL mentioning ``sse`` → sse; other URL → streamable.

    "Mentioning sse" means ``sse`` as a token of the host or path (``/sse``,
    ``/mcp-sse``, ``sse.example.com``), so ``/assessment`` does not count.
    """
    if "command" in entry or "args" in entry:
        return "stdio"
    if "httpUrl" in entry:
        return "streamable_http"  # Gemini CLI: httpUrl is Streamable HTTP, url is SSE
    url = entry.get("url", entry.get("base_url", entry.get("serverUrl")))
    if isinstance(url, str):
        try:
            parts = urlsplit(url)
        except ValueError:
            return "streamable_http"
        if parts.scheme.lower() in ("ws", "wss"):
            return "websocket"  # issue 25: the scheme says it
        if _SSE_TOKEN.search(f"{parts.netloc}{parts.path}".lower()):
            return "sse"
        return "streamable_http"
    if "env" in entry:
        return "stdio"
    return None


def _entry_url(entry: Mapping[str, Any]) -> Any:
    keys = [k for k in _URL_FIELDS if entry.get(k) is not None]
    if not keys:
        raise ValueError("missing 'url' (or 'base_url', 'serverUrl', 'httpUrl')")
    url = entry[keys[0]]
    if any(entry[k] != url for k in keys[1:]):
        raise ValueError(f"{' and '.join(map(repr, keys))} disagree; give one of them")
    return url


def _build(entry: Mapping[str, Any], kind: TransportType, name: object) -> ServerConfig:
    # Issue 9 item 7: an option this client cannot honour yet is an error (so a file's
    # entry carrying one is skipped with a warning naming it), for every type.
    check_unbuilt_options(
        entry.get("protocol", "auto"), entry.get("discover_timeout"), entry.get("oauth_provider")
    )
    opts: dict[str, Any] = {
        key: entry[key]
        for key in ("read_timeout", "retries", "retry_backoff")
        if entry.get(key) is not None
    }
    if name is not None:
        opts["name"] = name
    if kind == "sse" and (entry.get("protocol") == "modern" or "discover_timeout" in entry):
        # SSE-8 / CONN-13: a handshake-era transport has no era to choose.
        raise ValueError("'protocol': 'modern' and 'discover_timeout' do not apply to sse")
    if kind == "sse" and ("request_meta" in entry or "extensions" in entry):
        raise ValueError("'request_meta' and 'extensions' do not apply to sse")
    if kind in ("stdio", "http", "streamable_http", "websocket"):
        for key in ("protocol", "discover_timeout", "request_meta", "extensions"):
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
    if kind == "websocket":
        opts.pop("endpoint", None)
        for key in ("max_decompressed_body_bytes", "max_line_size", "ping"):
            if entry.get(key) is not None:
                opts[key] = entry[key]
        return websocket_config(url, **opts)
    if entry.get("oauth_provider") is not None:
        opts["oauth_provider"] = entry["oauth_provider"]
    # Issue 21: the OAuth client a host's file names; the shell builds the provider.
    oauth = check_oauth_settings(entry["oauth"]) if entry.get("oauth") is not None else None
    if kind == "sse":
        opts.pop("endpoint", None)
        if entry.get("ping") is not None:
            opts["ping"] = entry["ping"]
        config = sse_config(url, **opts)
    elif kind == "http":
        config = http_config(url, **opts)
    else:
        if entry.get("max_decompressed_body_bytes") is not None:
            opts["max_decompressed_body_bytes"] = entry["max_decompressed_body_bytes"]
        config = streamable_http_config(url, **opts)
    return config if oauth is None else attrs.evolve(config, oauth=oauth)


def config_from_dict(d: Mapping[str, Any], *, name: str | None = None) -> ServerConfig:
    """A :class:`ServerConfig` from a raw dict (CONN-18).

    Keys: ``type`` (``stdio``; ``http``, ``streamable-http``, ``streamable_http`` or
    ``streamableHttp`` for Streamable HTTP, as Claude Code, VS Code and Cursor write it;
    ``sse``; ``plain_http`` for plain JSON-RPC over HTTP; see :data:`TYPE_SPELLINGS`;
    ``transport`` is accepted as its alias; inferred as in
    :func:`parse_server_definitions` when absent), ``name``,
    ``command`` (string or argv), ``args``, ``env``, ``cwd``, ``url`` or its aliases
    ``base_url``, ``serverUrl`` (Windsurf) and ``httpUrl`` (Gemini CLI: Streamable
    HTTP), ``endpoint``, ``headers``, ``read_timeout``, ``retries``,
    ``retry_backoff``, ``ping``, ``max_decompressed_body_bytes``, ``protocol``,
    ``discover_timeout``, ``max_line_size``, ``oauth_provider``, ``request_meta`` (an
    object laid over the client's ``request_meta``) and ``extensions`` (identifiers, or
    identifier -> settings) on the transports with an era. Unset options take the
    builder's default for that type; keys that do not apply are ignored.
    ``oauth_provider`` must be an ``OAuthProvider`` object (issue 21), which a JSON
    document cannot hold: an entry naming one is refused. ``oauth`` (HTTP transports)
    names the OAuth client: see ``check_oauth_settings`` and docs/oauth.md.

    A string ``command`` is shell-split unless ``args`` is given, in which case it is
    the executable itself (the ``mcpServers`` convention).

    Raises:
        ValueError: not a mapping, unknown/missing type, or an invalid value.
    """
    if not isinstance(d, Mapping):
        raise ValueError(f"a server config must be a mapping, got {type(d).__name__}")
    raw_type = _raw_type(d)
    if raw_type is not None:
        kind = _normalise_type(raw_type)
    else:
        inferred = _infer_type(d)
        if inferred is None:
            raise ValueError("cannot tell the server type: give 'type', 'command' or 'url'")
        kind = inferred
    return _build(d, kind, name if name is not None else d.get("name"))


def _servers_key(obj: object) -> str | None:
    """The key holding the server table: ``mcpServers`` (Claude, Cursor, most hosts) or
    ``servers`` (VS Code's mcp.json), unless the object is itself one server."""
    if not isinstance(obj, Mapping):
        return None
    if "mcpServers" in obj:
        return "mcpServers"
    if "servers" in obj and not {"type", "transport", "command", *_URL_KEYS} & set(obj):
        return "servers"
    return None


def parse_server_definitions(
    obj: object, *, environ: Mapping[str, str] | None = None, workspace: str | None = None
) -> tuple[list[ServerConfig], list[str]]:
    """Parse a server definition document (CONN-19, CONN-20).

    Accepts ``{"mcpServers": {name: {...}}}`` (or ``mcpServers`` as a list), VS Code's
    ``{"servers": {name: {...}}}`` (its ``inputs`` prompts are not supported), a bare
    list of server objects, or one server object. Leniency, each noted in the
    returned warnings for the shell to log: a missing ``type`` is inferred; ``comment``
    and ``description`` keys are ignored silently; unknown keys are ignored; entries
    with ``"disabled": true`` are skipped; invalid entries and duplicate names are
    skipped, and so is an entry with an ``oauth_provider`` (a document cannot hold the
    provider object), its warning naming the key.

    ``environ``: the environment that ``${VAR}``, ``${VAR:-default}``, ``${env:VAR}``
    and ``${userHome}`` placeholders are expanded from, as Claude Code, VS Code and
    Cursor do when they read these files (:mod:`mcp_proto.placeholders`); an entry
    with one that cannot be expanded is skipped with a warning naming it. ``None``:
    placeholders are left as they are (the shells pass the process environment).
    ``workspace``: what ``${workspaceFolder}`` is, for a file in a workspace's
    ``.vscode/`` or ``.cursor/`` folder (:func:`mcp_proto.placeholders.workspace_folder`
    of the file's path).

    Returns:
        ``(configs, warnings)``.

    Raises:
        ValueError: the document is not one of the accepted shapes (e.g. a number).
    """
    entries: list[tuple[str | None, object]]
    key = _servers_key(obj)
    if key is not None:
        assert isinstance(obj, Mapping)
        servers = obj[key]
        if isinstance(servers, Mapping):
            entries = [(str(name), value) for name, value in servers.items()]
        elif isinstance(servers, list):
            entries = [(None, value) for value in servers]
        else:
            raise ValueError(f"{key!r} must be an object or an array, got {type(servers).__name__}")
    elif isinstance(obj, list):
        entries = [(None, value) for value in obj]
    elif isinstance(obj, Mapping):
        entries = [(None, obj)]
    else:
        raise ValueError(
            "a server definition must be an object with 'mcpServers', an array of "
            f"servers or one server object, got {type(obj).__name__}"
        )

    if environ is not None:
        from .placeholders import expand_entry  # (loaded with a file, not at import)
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
        raw_type = _raw_type(entry)
        try:
            if environ is not None:
                entry = expand_entry(entry, environ, workspace)
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
            # Named by its file spelling: in a file "http" means Streamable HTTP.
            spelled = "plain_http" if kind == "http" else kind
            warnings.append(f"{label}: ignored keys that do not apply to {spelled}: {shown}")
        warnings.extend(f"{label}: {note}" for note in config.warnings)
        _mark_warnings_logged(config)  # the caller logs them (with the file's label)
        if name is not None:
            seen.add(name)
        configs.append(config)
    return configs, warnings


#: Commands that run the server named by their arguments (``python x/demo.py``).
_LAUNCHERS: Final = frozenset(
    {"python", "python3", "py", "node", "npx", "uv", "uvx", "run", "deno", "bun", "pipx"}
)
_PYTHON: Final = re.compile(r"python[\d.]*", re.IGNORECASE)
_SUFFIX: Final = re.compile(r"\.(py|js|mjs|cjs|ts|exe|cmd|bat)$", re.IGNORECASE)


def _stem(word: str) -> str:
    base = re.split(r"[/\\]", word.rstrip("/\\"))[-1] or word
    if "@" in base[1:]:  # an npm version: server-memory@1.2
        base = base[0] + base[1:].split("@", 1)[0]
    return _SUFFIX.sub("", base)


def command_server_name(
    argv: Sequence[str], package_of: Callable[[str], str | None] | None = None
) -> str:
    """A short name for the server ``argv`` starts, for messages and ``server=``:
    ``python x/demo_server.py`` -> ``demo_server``, ``npx -y @scope/server-foo`` ->
    ``server-foo``, ``python -m pkg`` -> ``pkg``. ``package_of``: the shell's look-up of
    the npm package a script belongs to (it reads files; this module does not)."""
    launcher = _stem(argv[0]) if argv else "server"
    rest = list(argv[1:]) if launcher.lower() in _LAUNCHERS or _PYTHON.fullmatch(launcher) else []
    if not rest:
        return launcher or "server"
    i = 0
    while i < len(rest):
        word = rest[i]
        if word in ("-c", "-e", "--eval"):
            return launcher
        if word == "-m" and i + 1 < len(rest):
            return rest[i + 1]
        if word.startswith("-") or word.lower() in _LAUNCHERS:
            i += 1
            continue
        name = (package_of(word) if package_of is not None else None) or _stem(word)
        return name if name and not any(ch.isspace() for ch in name) else launcher
    return launcher


def default_server_name(config: ServerConfig) -> str | None:
    """What a server without a ``name`` is called (issue 24 E): after its command
    (:func:`command_server_name`) or its URL's host and port; None if neither says."""
    if config.command:
        return command_server_name(config.command)
    url = config.endpoint_url
    if url:
        split = urlsplit(url)
        if split.hostname:
            return split.hostname + (f":{split.port}" if split.port else "")
    return None


def unique_server_names(configs: Sequence[ServerConfig]) -> list[str]:
    """Names for servers, in order: each its own ``name``, else
    :func:`default_server_name` (else ``server_<i>``), made unique case-insensitively by
    a ``_2``, ``_3``… suffix."""
    names: list[str] = []
    for i, cfg in enumerate(configs):
        base = cfg.name or default_server_name(cfg) or f"server_{i}"
        name, n = base, 1
        while name.lower() in {x.lower() for x in names}:
            n += 1
            name = f"{base}_{n}"
        names.append(name)
    return names
