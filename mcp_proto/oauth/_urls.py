"""The URL rules of MCP authorization, all textual (no DNS: UT-13).

- :func:`normalize_server_url`: the configured MCP server URL (AUTH-1).
- :func:`protected_resource_metadata_urls` / :func:`authorization_server_metadata_urls`:
  the discovery candidate lists (RFC 9728 § 3.1, RFC 8414 § 3.1 and § 5; AUTH-5).
- :func:`resource_matches`: the PRM ``resource`` names this server (RFC 9728 § 3.3, AUTH-6).
- :func:`check_peer_url`: a URL a peer advertised, before anything is fetched from or
  sent to it (AUTH-7, AUTH-30, UT-6).
- :func:`check_redirect_uri` (AUTH-28) and :func:`check_client_id_metadata_url` (AUTH-11).
- :func:`authorization_url`: the endpoint's own query kept, each protocol parameter
  once (RFC 6749 § 3.1, AUTH-26).
- :func:`callback_params`: the redirect's parameters, a repeated one refused (AUTH-29).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Final
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from ._errors import OAuthCallbackError, UnsafeURLError

__all__ = [
    "PROTOCOL_PARAMETERS",
    "authorization_server_metadata_urls",
    "authorization_url",
    "callback_params",
    "check_client_id_metadata_url",
    "check_peer_url",
    "check_redirect_uri",
    "is_loopback_host",
    "is_loopback_url",
    "legacy_endpoints",
    "normalize_server_url",
    "origin_of",
    "protected_resource_metadata_urls",
    "resource_matches",
]

#: Longer URLs are refused outright (no browser or server takes more than this).
MAX_URL_LENGTH: Final = 8 * 1024

#: Parameters the client sets on an authorization request: never taken twice, never
#: taken from the endpoint's own query (AUTH-26).
PROTOCOL_PARAMETERS: Final = frozenset(
    {
        "response_type",
        "client_id",
        "redirect_uri",
        "scope",
        "state",
        "code_challenge",
        "code_challenge_method",
        "resource",
    }
)

_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def _split(url: str, what: str) -> tuple[str, str, str, int | None, str, str, str]:
    """(scheme, userinfo, host, port, path, query, fragment), lower-cased scheme and
    host; raises :class:`UnsafeURLError` for what is not an absolute http(s) URL."""
    if not isinstance(url, str) or not url or len(url) > MAX_URL_LENGTH:
        raise UnsafeURLError(f"the {what} is not a usable URL")
    if any(ord(c) <= 0x20 or ord(c) == 0x7F for c in url):
        raise UnsafeURLError(f"the {what} contains spaces or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise UnsafeURLError(f"the {what} is not a usable URL") from None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in _DEFAULT_PORTS or not host:
        raise UnsafeURLError(f"the {what} is not an absolute http(s) URL")
    userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    return scheme, userinfo, host, port, parts.path, parts.query, parts.fragment


def _netloc(scheme: str, host: str, port: int | None) -> str:
    shown = f"[{host}]" if ":" in host else host
    if port is None or port == _DEFAULT_PORTS.get(scheme):
        return shown
    return f"{shown}:{port}"


def normalize_server_url(url: str) -> str:
    """The configured MCP server URL in canonical form (AUTH-1; MCP "Canonical Server
    URI"): scheme and host lower-cased, the default port, a trailing slash and the
    fragment removed; path and query kept. Userinfo is refused (a credential in a URL
    would travel in ``resource`` parameters)."""
    scheme, userinfo, host, port, path, query, _ = _split(url, "server URL")
    if userinfo:
        raise UnsafeURLError("the server URL carries userinfo (user:password@)")
    path = path.rstrip("/")
    return urlunsplit((scheme, _netloc(scheme, host, port), path, query, ""))


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of an http(s) URL (default port dropped)."""
    scheme, _, host, port, _, _, _ = _split(url, "URL")
    return f"{scheme}://{_netloc(scheme, host, port)}"


def protected_resource_metadata_urls(server_url: str) -> tuple[str, ...]:
    """Where to look for the PRM when the challenge named none (RFC 9728 § 3.1;
    MCP "Protected Resource Metadata Discovery Requirements"): the path-aware
    well-known URI first (for a server not at the root), then the root one."""
    scheme, _, host, port, path, _, _ = _split(server_url, "server URL")
    base = f"{scheme}://{_netloc(scheme, host, port)}/.well-known/oauth-protected-resource"
    path = path.rstrip("/")
    return (base + path, base) if path else (base,)


def authorization_server_metadata_urls(issuer: str) -> tuple[str, ...]:
    """Where to look for an issuer's metadata, in the order MCP requires (RFC 8414
    § 3.1 path insertion, OIDC Discovery, RFC 8414 § 5 path appending)."""
    scheme, _, host, port, path, _, _ = _split(issuer, "issuer")
    origin = f"{scheme}://{_netloc(scheme, host, port)}"
    path = path.rstrip("/")
    if not path:
        return (
            f"{origin}/.well-known/oauth-authorization-server",
            f"{origin}/.well-known/openid-configuration",
        )
    return (
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    )


def legacy_endpoints(server_url: str) -> tuple[str, str, str]:
    """(authorization, token, registration) endpoints at the server's origin: the
    2025-03-26 revision's fallback when no metadata exists ("Fallbacks for Servers
    without Metadata Discovery")."""
    origin = origin_of(server_url)
    return f"{origin}/authorize", f"{origin}/token", f"{origin}/register"


def resource_matches(resource: str, server_url: str) -> bool:
    """Whether a PRM ``resource`` identifies this server (RFC 9728 § 3.3; AUTH-6):
    same scheme, host and port, and its path is the server's path or a parent of it at
    a segment boundary (a root PRM names the whole origin). Compared in canonical form,
    so ``HTTPS://Host:443/mcp/`` names ``https://host/mcp``."""
    try:
        a = urlsplit(normalize_server_url(resource))
        b = urlsplit(normalize_server_url(server_url))
    except UnsafeURLError:
        return False
    if (a.scheme, a.netloc) != (b.scheme, b.netloc) or a.query:
        return False
    if not a.path:
        return True
    return b.path == a.path or b.path.startswith(a.path + "/")


# ---------------------------------------------------------------- host classification

_LOOPBACK_NAMES: Final = ("localhost",)


def _legacy_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The address of a host written in one of inet_aton's forms (``127.1``,
    ``0x7f.0.0.1``, ``2130706433``, ``0177.0.0.1``), which resolvers accept and a
    strict parser does not: a peer must not slip 127.0.0.1 past the check that way."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(parts):
        return None
    values: list[int] = []
    for part in parts:
        try:
            if part.lower().startswith("0x"):
                values.append(int(part[2:] or "0", 16))
            elif len(part) > 1 and part.startswith("0"):
                values.append(int(part, 8))
            else:
                values.append(int(part, 10))
        except ValueError:
            return None
    *head, last = values
    if any(v > 255 for v in head) or last >= 256 ** (5 - len(values)):
        return None
    number = 0
    for v in head:
        number = number << 8 | v
    number = number << 8 * (5 - len(values)) | last
    return ipaddress.IPv4Address(number)


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    host = host.strip("[]").split("%", 1)[0]
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return _legacy_ipv4(host)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def is_loopback_host(host: str) -> bool:
    """``localhost``, ``*.localhost`` (RFC 6761 § 6.3), 127.0.0.0/8 or ``::1``."""
    host = host.lower().rstrip(".")
    if host in _LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    address = _address(host)
    return address is not None and address.is_loopback


def is_loopback_url(url: str) -> bool:
    try:
        return is_loopback_host(_split(url, "URL")[2])
    except UnsafeURLError:
        return False


def _is_non_public(host: str) -> bool:
    """A literal address no public peer should send us to: loopback, private,
    link-local (169.254.0.0/16 holds cloud metadata services), unspecified, multicast
    or reserved; or a loopback name."""
    if is_loopback_host(host):
        return True
    address = _address(host)
    if address is None:
        return False
    return (
        address.is_private
        or address.is_link_local
        or address.is_unspecified
        or address.is_multicast
        or address.is_reserved
        or address.is_loopback
    )


def check_peer_url(url: object, *, what: str, loopback_allowed: bool) -> str:
    """``url`` when a peer may send the client there; else :class:`UnsafeURLError`.

    HTTPS, no userinfo, no fragment, and a host that is not a literal loopback, private
    or link-local address (AUTH-30). ``loopback_allowed`` is the local-stack exception:
    true only when the configured server itself is on the loopback interface, and even
    then it opens plain HTTP to *loopback* hosts only, never to private or link-local
    ones (ES, REQUIREMENTS.md §C.5). Hostnames are not resolved (UT-13)."""
    if not isinstance(url, str):
        raise UnsafeURLError(f"the {what} is not a string")
    scheme, userinfo, host, _, _, _, fragment = _split(url, what)
    if userinfo:
        raise UnsafeURLError(f"the {what} carries userinfo (user:password@)")
    if fragment or url.endswith("#"):
        raise UnsafeURLError(f"the {what} has a fragment")
    loopback = is_loopback_host(host)
    if loopback and loopback_allowed:
        return url
    if _is_non_public(host):
        raise UnsafeURLError(
            f"the {what} points at a loopback, private or link-local address", url=url
        )
    if scheme != "https":
        raise UnsafeURLError(f"the {what} is not HTTPS", url=url)
    return url


def check_redirect_uri(uri: object) -> str:
    """``uri`` when it is a valid redirect URI (AUTH-28; MCP "Communication
    Security"): HTTPS, plain HTTP on a loopback host, or an RFC 8252 § 7.1 private-use
    scheme (reverse domain name: ``com.example.app:/cb``). Never a fragment."""
    if not isinstance(uri, str) or not uri or len(uri) > MAX_URL_LENGTH:
        raise UnsafeURLError("the redirect URI is not a usable URL")
    if "#" in uri or any(ord(c) <= 0x20 or ord(c) == 0x7F for c in uri):
        raise UnsafeURLError("the redirect URI has a fragment or control characters")
    scheme = uri.partition(":")[0].lower()
    if re.fullmatch(r"[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+", scheme) and ":" in uri:
        return uri  # RFC 8252 § 7.1 private-use URI scheme
    parts = _split(uri, "redirect URI")
    if parts[1]:
        raise UnsafeURLError("the redirect URI carries userinfo (user:password@)")
    if parts[0] == "https" or is_loopback_host(parts[2]):
        return uri
    raise UnsafeURLError("the redirect URI is neither HTTPS nor a loopback address", url=uri)


def check_client_id_metadata_url(url: object) -> str:
    """A Client ID Metadata Document URL (AUTH-11; draft-ietf-oauth-client-id-metadata-
    document § 3): HTTPS with a path, no userinfo, no fragment, no ``.``/``..``
    segments."""
    if not isinstance(url, str):
        raise UnsafeURLError("the client ID metadata URL is not a string")
    scheme, userinfo, _, _, path, _, fragment = _split(url, "client ID metadata URL")
    if scheme != "https":
        raise UnsafeURLError("the client ID metadata URL is not HTTPS")
    if userinfo or fragment or "#" in url:
        raise UnsafeURLError("the client ID metadata URL has userinfo or a fragment")
    segments = path.split("/")[1:]
    if not path or path == "/" or any(s in (".", "..") for s in segments):
        raise UnsafeURLError("the client ID metadata URL needs a path without . or ..")
    return url


def authorization_url(endpoint: str, params: dict[str, str]) -> str:
    """The authorization request URL: the endpoint's own query kept (RFC 6749 § 3.1:
    ``tenant``, ``brand``, a locale...) except the protocol parameters the client sets,
    so each parameter appears once (AUTH-26)."""
    parts = urlsplit(endpoint)
    kept = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if k not in PROTOCOL_PARAMETERS and k not in params
    ]
    query = urlencode([*kept, *params.items()], quote_via=quote)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def callback_params(redirect: str) -> dict[str, str]:
    """The parameters of an authorization response: a full redirect URL, or its query
    string alone. A parameter that appears twice is refused (RFC 6749 § 3.1: "Request
    and response parameters MUST NOT be included more than once"; AUTH-29), instead of
    silently taking one of the values."""
    if not isinstance(redirect, str) or len(redirect) > MAX_URL_LENGTH:
        raise OAuthCallbackError("the authorization response is not a usable URL")
    query = urlsplit(redirect).query if "?" in redirect or "://" in redirect else redirect
    out: dict[str, str] = {}
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=False)
    except ValueError:
        raise OAuthCallbackError("the authorization response is malformed") from None
    for name, value in pairs:
        if name in out:
            raise OAuthCallbackError(
                f"the authorization response repeats the parameter {name!r}",
                reason="repeated_parameter",
            )
        out[name] = value
    return out
