"""Which proxy the environment names for a URL, without reading the environment.

The shells read the variables (``mcp_io_common.proxy_env``) and hand them here as a
mapping; the client core calls :func:`proxy_for_url` when it builds an HTTP or
WebSocket server and no ``proxy=`` was given, unless ``trust_env=False``. The rules
are those of httpx's ``trust_env`` (and of ``urllib.request.getproxies``, which it
reads the variables with):

* ``<scheme>_proxy`` for the URL's scheme (``http_proxy``, ``https_proxy``; a
  WebSocket URL uses the variable of its HTTP scheme: ``ws`` → ``http``, ``wss`` →
  ``https``), else ``all_proxy``. Each name in lower case wins over its upper-case
  spelling (``https_proxy`` over ``HTTPS_PROXY``), an empty value is unset.
* ``HTTP_PROXY`` in upper case is ignored when ``REQUEST_METHOD`` is set (a CGI
  script, where a client's ``Proxy:`` header arrives as that variable: "httpoxy").
* A value without a scheme is an ``http://`` proxy (``proxy.corp:3128``).
* ``no_proxy`` / ``NO_PROXY``, comma-separated: ``*`` turns every proxy off; an IP
  address matches that host, a CIDR block (``10.0.0.0/8``) every address in it;
  ``localhost`` matches itself; a domain matches itself and its subdomains
  (``example.com`` and ``.example.com`` both match ``api.example.com``; the first
  also ``example.com``); an entry with ``:port`` matches that port only; an entry
  with ``://`` is a URL prefix (``http://internal``). Matching ignores case.

Loopback addresses get no special treatment (as in httpx): list them in
``NO_PROXY`` (``localhost,127.0.0.1``) to reach local servers directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final
from urllib.parse import urlsplit

__all__ = ["PROXY_SCHEMES", "EnvironmentProxy", "proxy_for_url", "proxy_variables"]

#: The proxy URL schemes the HTTP transports take (``socks5`` through httpcore's
#: ``socks`` extra); another scheme in a variable is a ``ValueError`` naming it.
PROXY_SCHEMES: Final = frozenset({"http", "https", "socks5", "socks5h"})
#: Which variable a URL's scheme reads.
_VARIABLE_OF: Final = {"http": "http", "https": "https", "ws": "http", "wss": "https"}


class EnvironmentProxy:
    """A proxy the environment names: ``url`` and the ``variable`` it came from
    (for messages: the URL may hold credentials and is never shown)."""

    __slots__ = ("url", "variable")

    def __init__(self, url: str, variable: str) -> None:
        self.url = url
        self.variable = variable

    def __repr__(self) -> str:
        return f"EnvironmentProxy(from {self.variable})"


def proxy_variables(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables this module reads, out of a whole environment (what a shell
    keeps of ``os.environ``): every ``*_proxy`` name in either case, and
    ``REQUEST_METHOD``."""
    return {
        k: v for k, v in environ.items() if k.lower().endswith("_proxy") or k == "REQUEST_METHOD"
    }


def _lookup(environ: Mapping[str, str], name: str) -> tuple[str, str] | None:
    """``name``'s value (lower case first) and the spelling it came from."""
    for spelling in (name, name.upper()):
        if spelling == "HTTP_PROXY" and "REQUEST_METHOD" in environ:
            continue  # httpoxy: a CGI request's "Proxy:" header
        value = environ.get(spelling, "").strip()
        if value:
            return value, spelling
    return None


def _bypassed(host: str, port: int | None, url: str, no_proxy: str) -> bool:
    import ipaddress  # lazy: read only when NO_PROXY is set

    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    for raw in no_proxy.split(","):
        entry = raw.strip().lower()
        if not entry:
            continue
        if entry == "*":
            return True
        if "://" in entry:
            if url.lower().startswith(entry):
                return True
            continue
        entry_port: int | None = None
        if entry.startswith("["):  # [::1]:8080
            bracket = entry.find("]")
            rest = entry[bracket + 1 :]
            if rest.startswith(":") and rest[1:].isdigit():
                entry_port = int(rest[1:])
            entry = entry[1:bracket]
        elif entry.count(":") == 1:
            name, _, digits = entry.partition(":")
            if digits.isdigit():
                entry, entry_port = name, int(digits)
        if entry_port is not None and entry_port != port:
            continue
        if address is not None:
            try:
                if address in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                pass
            continue
        domain = entry.lstrip("*").lstrip(".")
        if not domain:
            continue
        if host == domain and not entry.startswith((".", "*.")):
            return True
        if host.endswith("." + domain):
            return True
    return False


def proxy_for_url(url: str, environ: Mapping[str, str]) -> EnvironmentProxy | None:
    """The proxy ``environ`` names for ``url`` (``None``: go direct). See the module.

    Raises:
        ValueError: the variable that applies holds no usable proxy URL (the message
            names the variable, never its value: it may hold credentials).
    """
    parts = urlsplit(url)
    variable = _VARIABLE_OF.get(parts.scheme.lower())
    if variable is None:
        return None
    found = _lookup(environ, f"{variable}_proxy") or _lookup(environ, "all_proxy")
    if found is None:
        return None
    value, spelling = found
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    port = port or (443 if variable == "https" else 80)
    no_proxy = _lookup(environ, "no_proxy")
    if no_proxy is not None and _bypassed(host, port, url, no_proxy[0]):
        return None
    if "://" not in value:
        value = "http://" + value
    try:
        proxy = urlsplit(value)
        scheme = proxy.scheme.lower()
        proxy_host = proxy.hostname
        proxy.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        raise ValueError(f"{spelling} is not a proxy URL (a bad port?)") from None
    if scheme not in PROXY_SCHEMES or not proxy_host:
        raise ValueError(
            f"{spelling} is not a proxy URL: an http://, https:// or socks5:// URL with a "
            "host is needed (trust_env=False ignores the environment)"
        )
    return EnvironmentProxy(value, spelling)
