"""The HTTP customisation hook (CUST-1, CONN-15): what a host may change of one HTTP
server's connection, and the rules the shells apply to it.

``configure_http=`` (on ``Client``, ``connect`` and the HTTP config builders) is called
once per HTTP server, when the client builds that server, with an :class:`HttpSettings`
holding the values the options gave (the seeds' Faraday block receives the connection
after the defaults are applied). It may change them in place; what it leaves is used:

* ``ssl_context`` (an ``ssl.SSLContext``: a private CA, a client certificate) and
  ``proxy`` (``http://[user:password@]host:port``), as the options of the same names;
* ``headers``: sent on every request to the server, as the config's ``headers``;
* ``request_headers``: a callable with no argument returning a mapping of header names
  to values, called for each HTTP request the client sends to the server's origin
  (never for another origin, such as an OAuth authorization server);
* ``pool_factory``: a callable taking the settings and returning the connection pool
  the server's transport uses: an ``httpcore.ConnectionPool`` in the blocking shell, an
  ``httpcore.AsyncConnectionPool`` in the Trio shell (``uds=``, ``local_address=``,
  ``socket_options=``, ``http2=``, ...), or any object with httpcore's ``stream()`` and
  ``close()`` / ``aclose()``. It is called each time the transport opens (again after a
  reconnection) and the client closes what it returned when the transport closes. The
  pool is the factory's whole: ``ssl_context`` and ``proxy`` reach the server only if
  it passes them on (they are in the settings it receives);
* ``network_backend``: an ``httpcore.NetworkBackend`` (blocking shell) or
  ``httpcore.AsyncNetworkBackend`` (Trio shell) through which every connection to the
  server is opened (with httpcore's pool, ``ssl_context`` and ``proxy`` applied).

Without ``pool_factory``, ``network_backend`` or ``proxy`` each shell keeps its own
hand-written pool (the fast path; mcp_io_common/custom_pool.py).

Headers the protocol owns (``Accept``, ``Content-Type``, ``MCP-Protocol-Version``,
``Mcp-Session-Id``, ``Mcp-Method``, ``Mcp-Name``, ``Last-Event-ID``, ...) are refused
in ``headers`` with a ``ValueError`` when the hook returns. A per-request header never
replaces one the request already carries (the protocol's, or an ``Authorization`` from
``headers``, ``set_authorization`` or OAuth): the request's value is kept, so the
credentials the result cache binds private entries to (CACHE-6) are the ones sent. A
request header the callable returns with another owned name is left out.

Caching (CUST-3, CACHE-9): with ``request_headers`` set the client cannot know what a
request will carry before it is sent, so nothing of that server's 2026-07-28 results is
reused (the same rule as a ``request_meta`` callable).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from .http import _OWNED as _HTTP_OWNED
from .http import same_origin

__all__ = [
    "ConfigureHttp",
    "HttpSettings",
    "RequestHeadersError",
    "apply_configure_http",
    "check_configure_http",
]

#: Header names no host value may set (compared without case): the transport's, and
#: the 2026-07-28 routing headers of mcp_proto/modern/headers.py (spelt here: that
#: module is loaded only for modern sessions, tests/test_import_weight.py).
OWNED: Final = _HTTP_OWNED | {"mcp-method", "mcp-name", "proxy-authorization", "connection"}
_MCP_PARAM_PREFIX: Final = "mcp-param-"


class RequestHeadersError(Exception):
    """``request_headers`` raised or returned something that is not headers: the
    request fails (as a network failure would) with this as its detail."""


class HttpSettings:
    """One HTTP server's connection settings, handed to ``configure_http``.

    ``name`` and ``url`` are read-only; ``ssl_context``, ``proxy``, ``headers`` (a dict,
    changed in place or replaced), ``request_headers``, ``pool_factory`` and
    ``network_backend`` may be changed.
    """

    __slots__ = (
        "_name",
        "_url",
        "headers",
        "network_backend",
        "pool_factory",
        "proxy",
        "request_headers",
        "ssl_context",
    )

    def __init__(
        self,
        name: str,
        url: str,
        *,
        ssl_context: Any = None,
        proxy: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self._name = name
        self._url = url
        self.ssl_context: Any = ssl_context
        self.proxy: str | None = proxy
        self.headers: dict[str, str] = dict(headers or {})
        self.request_headers: Callable[[], Mapping[str, str]] | None = None
        self.pool_factory: Callable[[HttpSettings], Any] | None = None
        self.network_backend: Any = None

    @property
    def name(self) -> str:
        return self._name

    @property
    def url(self) -> str:
        return self._url

    def __repr__(self) -> str:
        # Headers may hold credentials; the proxy URL too: neither is shown.
        return f"HttpSettings(name={self._name!r}, url={self._url!r})"

    def checked(self) -> None:
        """Check what the hook left (``ValueError`` naming the field)."""
        from .server_config import _headers

        if self.proxy is not None and not isinstance(self.proxy, str):
            raise ValueError(f"configure_http: proxy must be a URL string, got {self.proxy!r:.40}")
        self.headers = _headers(self.headers)
        owned = sorted(k for k in self.headers if k.lower() in OWNED)
        if owned:
            raise ValueError(
                f"configure_http: headers {owned} are the protocol's; the client sets them"
            )
        if self.request_headers is not None and not callable(self.request_headers):
            raise ValueError("configure_http: request_headers must be a callable or None")
        if self.pool_factory is not None and not callable(self.pool_factory):
            raise ValueError(
                f"configure_http: pool_factory must be a callable or None, "
                f"got {self.pool_factory!r:.40}"
            )
        backend = self.network_backend
        if backend is not None and not callable(getattr(backend, "connect_tcp", None)):
            raise ValueError(
                "configure_http: network_backend must be an httpcore NetworkBackend "
                f"(or AsyncNetworkBackend in the Trio shell), got {type(backend).__name__}"
            )
        if self.pool_factory is not None and backend is not None:
            # The factory builds the whole pool: a backend beside it would be ignored.
            raise ValueError(
                "configure_http: set pool_factory or network_backend, not both (a factory "
                "passes the backend it wants to the pool it builds)"
            )

    def headers_for(self, url: str, headers: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
        """The headers of a request to ``url`` that the machine built with ``headers``:
        those, plus the per-request ones for the server's own origin (see the module).

        Raises:
            RequestHeadersError: the callable raised or returned something else than a
                mapping of strings without CR/LF.
        """
        out = list(headers)
        hook = self.request_headers
        if hook is None or not same_origin(url, self._url):
            return out
        try:
            extra = hook()
        except Exception as exc:
            raise RequestHeadersError(f"request_headers raised {type(exc).__name__}") from exc
        try:
            from .server_config import _headers

            checked = _headers(extra)
        except ValueError as exc:
            raise RequestHeadersError(f"request_headers returned bad headers: {exc}") from None
        present = {k.lower() for k, _ in out}
        for key, value in checked.items():
            low = key.lower()
            if low in OWNED or low in present or low.startswith(_MCP_PARAM_PREFIX):
                continue
            out.append((key, value))
        return out


#: The hook's type: called once with the settings, changes them in place.
ConfigureHttp = Callable[[HttpSettings], None]


def check_configure_http(value: object) -> ConfigureHttp | None:
    """``configure_http`` as given (``ValueError`` unless a callable or ``None``)."""
    if value is not None and not callable(value):
        raise ValueError(f"configure_http must be a callable or None, got {value!r:.40}")
    return value


def apply_configure_http(
    config: Any, name: str, url: str, hook: ConfigureHttp | None, ssl_context: Any, proxy: Any
) -> tuple[Any, HttpSettings]:
    """Build one HTTP server's settings, call ``hook`` on them once (the server's own
    ``configure_http``, else the client's), check what it left, and return the config
    carrying its headers with the settings (both shells, when they build the server)."""
    hook = getattr(config, "configure_http", None) or hook
    own = {k: v for k, v in config.headers.items() if k.lower() not in OWNED}
    settings = HttpSettings(name, url, ssl_context=ssl_context, proxy=proxy, headers=own)
    if hook is None:
        return config, settings
    hook(settings)
    settings.checked()
    if settings.headers != own:
        import attrs

        config = attrs.evolve(config, headers=settings.headers)
    return config, settings
