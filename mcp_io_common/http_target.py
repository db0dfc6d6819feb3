"""What both shells' HTTP server objects settle alike when built (no waiting, no
protocol rule): the OAuth provider of a definition file's ``"oauth"`` entry, the URL,
and the settings the host's ``configure_http`` left (CUST-1)."""

from __future__ import annotations

import ssl
import time
from importlib import import_module
from typing import Any, ClassVar

import attrs

from mcp_proto.config import ServerConfig
from mcp_proto.http_settings import HttpSettings

__all__ = ["HttpTarget", "http_target"]


class HttpTarget:
    """Mixed in before a shell's server class by its HTTP transports: builds the
    server object for an HTTP configuration (:func:`http_target`), then the shell's
    server (``super().__init__``) with the configuration that holds the provider."""

    #: The shell's module of ``BrowserOAuth`` (the browser step of a definition file's
    #: OAuth entry).
    _browser_module: ClassVar[str]
    url: str
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
