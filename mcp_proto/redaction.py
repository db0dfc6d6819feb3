"""Redaction of server configurations for logs (HYG-2)."""

from __future__ import annotations

from collections.abc import Mapping
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
