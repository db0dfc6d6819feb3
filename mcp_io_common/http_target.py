"""What both shells' HTTP server objects settle and do alike (no waiting, no protocol
rule): the OAuth provider of a definition file's ``"oauth"`` entry, the URL, the
settings the host's ``configure_http`` left (CUST-1), the connection pool they make
from them, and how an exchange the machine asks for is handed to that pool."""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable
from importlib import import_module
from typing import Any, ClassVar

import attrs

from mcp_proto.config import ServerConfig
from mcp_proto.connection import StartExchange
from mcp_proto.http_settings import HttpSettings

from .custom_pool import check_pool_settings, custom_pool
from .httpcore_glue import MAX_CONNECTIONS, exchange_timeouts

__all__ = ["HttpTarget", "http_target"]


class HttpTarget:
    """Mixed in before a shell's server class by its HTTP transports: builds the
    server object for an HTTP configuration (:func:`http_target`), then the shell's
    server (``super().__init__``) with the configuration that holds the provider."""

    #: The shell's module of ``BrowserOAuth`` (the browser step of a definition file's
    #: OAuth entry).
    _browser_module: ClassVar[str]
    #: The shell's own connection pool class (``ssl_context``, ``max_connections``), and
    #: whether the shell is asynchronous (what kind of pool the host's settings must
    #: give it).
    _pool_class: ClassVar[Callable[..., Any]]
    _asynchronous: ClassVar[bool]
    url: str
    read_timeout: float
    #: The pool the exchanges run on, from the transport's opening to its close.
    _pool: Any
    _http: HttpSettings
    _ssl_context: ssl.SSLContext | None
    _proxy: str | None

    def __init__(
        self,
        config: ServerConfig,
        *,
        ssl_context: ssl.SSLContext | None = None,
        proxy: str | None = None,
        http_settings: HttpSettings | None = None,
        **kwargs: Any,
    ) -> None:
        # CUST-1: what the host's configure_http left (the client core called it).
        config, url, self._http = http_target(
            self._browser_module,
            config,
            kwargs.get("name"),
            ssl_context,
            proxy,
            http_settings,
        )
        # The next class in the MRO is the shell's BaseServer (object to mypy here).
        super().__init__(config, **kwargs)  # type: ignore[call-arg]
        self.url = url
        self._ssl_context = self._http.ssl_context
        self._proxy = self._http.proxy
        check_pool_settings(self._http, asynchronous=self._asynchronous)  # CUST-1
        self._pool = None

    def _open_pool(self) -> None:
        """The transport opens: a new pool, unless the last one is still open."""
        if self._pool is None:
            self._pool = self._new_pool()

    def _new_pool(self) -> Any:
        """The pool the exchanges run on: httpcore's for a proxy, a network backend or
        the host's factory (CUST-1), else the shell's own."""
        custom = custom_pool(self._http, asynchronous=self._asynchronous)
        if custom is not None:
            return custom
        return self._pool_class(ssl_context=self._ssl_context, max_connections=MAX_CONNECTIONS)

    def _stream(self, pool: Any, frame: StartExchange, headers: list[tuple[bytes, bytes]]) -> Any:
        """``pool.stream(...)`` for the exchange ``frame`` (its context manager, not
        entered: a blocking one, or an ``async with`` one in the Trio shell), with
        ``headers`` as httpcore takes them and the timeouts of the exchange."""
        return pool.stream(
            frame.method.encode("ascii"),
            frame.url,
            headers=headers,
            content=frame.body,
            extensions=exchange_timeouts(self.read_timeout, frame.read_timeout),
        )


def http_target(
    browser_module: str,
    config: ServerConfig,
    name: object,
    ssl_context: ssl.SSLContext | None,
    proxy: str | None,
    http_settings: HttpSettings | None,
) -> tuple[ServerConfig, str, HttpSettings]:
    """``(config, url, settings)`` for an HTTP server object of a shell.

    A definition file's ``"oauth"`` entry (issue 21) becomes a provider with the
    shell's browser step (``BrowserOAuth`` of ``browser_module``, imported only then); its
    token expiry runs on wall time, kept across restarts. Raises ``ValueError`` for a
    configuration without a URL."""
    if config.oauth is not None and config.oauth_provider is None and config.endpoint_url:
        from .oauth_config import provider_from_settings

        oauth = provider_from_settings(config.endpoint_url, config.oauth)
        import_module(browser_module).BrowserOAuth(oauth)
        config = attrs.evolve(config, oauth_provider=oauth)
    url = config.endpoint_url
    if url is None:
        raise ValueError(f"server {name!r}: an HTTP transport needs a URL")
    settings = http_settings or HttpSettings(str(name), url, ssl_context=ssl_context, proxy=proxy)
    provider: Any = config.oauth_provider  # an OAuthProvider (typed loosely in the config)
    if provider is not None and provider.clock is None:
        provider.clock = time.time
    return config, url, settings
