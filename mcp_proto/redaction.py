"""Redaction of server configurations for logs (HYG-2)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final, cast

import attrs

from .server_config import ServerConfig

__all__ = ["REDACTED", "redact_config"]

#: What :func:`redact_config` puts in place of a secret.
REDACTED: Final = "[REDACTED]"


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
        # A server's own request_meta (LIFE-12) may carry tenant ids or tokens.
        "request_meta",
    )
)


def _is_sensitive(key: object) -> bool:
    return isinstance(key, str) and key.lower().replace("_", "").replace("-", "") in _SENSITIVE


def _new_container(value: Any) -> dict[Any, Any] | list[Any] | None:
    if isinstance(value, Mapping):
        return {}
    if isinstance(value, (list, tuple)):
        return []
    return None


def _entries(value: Any) -> Iterator[tuple[Any, Any]]:
    if isinstance(value, Mapping):
        yield from value.items()
    else:
        for item in value:
            yield None, item


def _redact(root: Any) -> Any:
    """The redacted copy, built with an explicit stack: a config nested thousands of
    levels deep must not hit the interpreter's recursion limit (documented: any depth)."""
    out_root = _new_container(root)
    if out_root is None:
        return root
    # (source, its copy, the source's remaining entries); ``on_path`` holds the ids of the
    # containers being copied, so a container holding itself is caught, not looped on.
    stack = [(root, out_root, _entries(root))]
    on_path = {id(root)}
    while stack:
        source, copy, entries = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            on_path.discard(id(source))
            continue
        key, item = entry
        if isinstance(copy, dict) and _is_sensitive(key) and item is not None:
            # ``None`` holds no secret (see below); any other value is hidden whole, and
            # a mapping keeps its names (which header, which variable), not its values.
            copy[key] = {name: REDACTED for name in item} if isinstance(item, Mapping) else REDACTED
            continue
        child = _new_container(item)
        if child is not None:
            if id(item) in on_path:
                raise ValueError("cannot redact a configuration that contains itself")
            stack.append((item, child, _entries(item)))
            on_path.add(id(item))
        value = item if child is None else child
        if isinstance(copy, dict):
            copy[key] = value
        else:
            copy.append(value)
    return out_root


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
        ValueError: ``config`` contains itself (a reference cycle).
    """
    if isinstance(config, ServerConfig):
        # The provider object stays opaque: it is redacted whole, never walked.
        data = attrs.asdict(config, recurse=False)
        # The logger is the host's object, not configuration to show.
        data.pop("logger", None)
        data.pop("_warnings_logged", None)
        return cast(dict[str, Any], _redact(data))
    if not isinstance(config, Mapping):
        raise TypeError(f"redact_config needs a mapping or ServerConfig, got {type(config)}")
    return cast(dict[str, Any], _redact(config))
