"""``WWW-Authenticate`` (RFC 9110 § 11.6.1) parsed into challenges, and the Bearer
challenge's parameters (RFC 6750 § 3, RFC 9728 § 5.1, AUTH-14).

Grammar::

    WWW-Authenticate = #challenge
    challenge        = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
    auth-param       = token BWS "=" BWS ( token / quoted-string )

A header may carry several challenges, and a quoted string may hold commas, ``=`` and
escaped quotes: the parser walks the value once, left to right, and each parameter
belongs to the challenge whose scheme last appeared, so another scheme's ``scope`` is
never read as Bearer's. Two lenient points, both common server mistakes: an unquoted
value may hold non-token characters (``scope=files:read``), and parameters may be
separated by spaces alone. A parameter named twice in one challenge is ambiguous
(RFC 9110 § 11.2: "each parameter name MUST only occur once per challenge") and is
dropped rather than guessed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

__all__ = [
    "MAX_CHALLENGE_LENGTH",
    "BearerChallenge",
    "Challenge",
    "bearer_challenge",
    "parse_www_authenticate",
]

#: Longer headers are not parsed at all (HTTP servers cap a header near 8 KiB).
MAX_CHALLENGE_LENGTH: Final = 16 * 1024

_TOKEN: Final = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_SEP: Final = re.compile(r"[ \t,]*")
_PARAM: Final = re.compile(
    rf'({_TOKEN})[ \t]*=[ \t]*("(?:[^"\\]|\\.)*"|[^\s,"]+)(?=[ \t]*(?:,|$)|[ \t]+)'
)
_SCHEME: Final = re.compile(rf"({_TOKEN})(?=[ \t]|,|$)")
_TOKEN68: Final = re.compile(r"[ \t]+([A-Za-z0-9._~+/-]+=*)[ \t]*(?=,|$)")
_ESCAPE: Final = re.compile(r"\\(.)")
_EMPTY: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True)
class Challenge:
    """One challenge: ``scheme`` lower-cased, ``params`` with lower-cased names and
    unquoted values (a repeated name dropped), or a ``token68``."""

    scheme: str
    params: Mapping[str, str] = field(default_factory=lambda: _EMPTY, hash=False)
    token68: str | None = None


@dataclass(frozen=True)
class BearerChallenge:
    """The Bearer challenge's parameters; each ``None`` when absent."""

    resource_metadata: str | None = None
    scope: str | None = None
    error: str | None = None
    error_description: str | None = None
    realm: str | None = None

    @property
    def scopes(self) -> tuple[str, ...]:
        """``scope`` split on spaces (RFC 6749 § 3.3), without duplicates, in order."""
        return tuple(dict.fromkeys(self.scope.split())) if self.scope else ()

    @property
    def insufficient_scope(self) -> bool:
        return self.error == "insufficient_scope"


def parse_www_authenticate(value: str | None) -> tuple[Challenge, ...]:
    """Every challenge of a ``WWW-Authenticate`` value, in order. Parsing stops at the
    first thing that is neither a parameter nor a scheme (what came before is kept);
    ``()`` for ``None``, an empty value or one longer than :data:`MAX_CHALLENGE_LENGTH`."""
    if not value or len(value) > MAX_CHALLENGE_LENGTH:
        return ()
    out: list[Challenge] = []
    scheme: str | None = None
    params: dict[str, str] = {}
    repeated: set[str] = set()
    token68: str | None = None
    pos, end = 0, len(value)

    def close() -> None:
        if scheme is not None:
            kept = {k: v for k, v in params.items() if k not in repeated}
            out.append(Challenge(scheme, MappingProxyType(kept), token68))

    while True:
        pos = _SEP.match(value, pos).end()  # type: ignore[union-attr]
        if pos >= end:
            break
        param = _PARAM.match(value, pos) if scheme is not None and token68 is None else None
        if param is not None:
            name, raw = param.group(1).lower(), param.group(2)
            text = _ESCAPE.sub(r"\1", raw[1:-1]) if raw.startswith('"') else raw
            if name in params:
                repeated.add(name)
            else:
                params[name] = text
            pos = param.end()
            continue
        start = _SCHEME.match(value, pos)
        if start is None:
            break
        close()
        scheme, params, repeated, token68 = start.group(1).lower(), {}, set(), None
        pos = start.end()
        t68 = _TOKEN68.match(value, pos)
        if t68 is not None and "=" not in t68.group(1).rstrip("="):
            token68, pos = t68.group(1), t68.end()
    close()
    return tuple(out)


def bearer_challenge(value: str | None) -> BearerChallenge | None:
    """The first Bearer challenge of a ``WWW-Authenticate`` value, or ``None``.

    ``resource_metadata`` falls back to a ``resource`` parameter (AUTH-14: the name an
    early RFC 9728 draft used), which is validated like any peer URL before a fetch."""
    for challenge in parse_www_authenticate(value):
        if challenge.scheme == "bearer":
            p = challenge.params
            return BearerChallenge(
                resource_metadata=p.get("resource_metadata") or p.get("resource") or None,
                scope=p.get("scope"),
                error=p.get("error"),
                error_description=p.get("error_description"),
                realm=p.get("realm"),
            )
    return None
