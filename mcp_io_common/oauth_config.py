"""The ``OAuthProvider`` a definition file's ``"oauth"`` entry describes (issue 21),
built by the shells when a server has such an entry and no ``oauth_provider``.

The entry was checked by ``mcp_proto.server_config.check_oauth_settings``; here it
meets the host's randomness (``os.urandom``): pre-registered credentials bound to their
issuer, the scope, a loopback redirect URI on ``callback_port``, a Client ID Metadata
Document URL. Tokens are kept in memory (the CLI's logins: ``mcp-proto login``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

__all__ = ["provider_from_settings"]


def provider_from_settings(url: str, settings: Mapping[str, Any]) -> Any:
    """An ``OAuthProvider`` for the server at ``url`` (its ``handler``: the shell's)."""
    from mcp_proto.oauth import DEFAULT_REDIRECT_URI, ClientInfo, OAuthProvider

    kwargs: dict[str, Any] = {"random_bytes": os.urandom}
    if "client_id" in settings:
        kwargs["client_info"] = ClientInfo(
            settings["client_id"], settings.get("client_secret"), issuer=settings["issuer"]
        )
    if "scope" in settings:
        kwargs["scope"] = settings["scope"]
    if "client_id_metadata_url" in settings:
        kwargs["client_id_metadata_url"] = settings["client_id_metadata_url"]
    port = settings.get("callback_port")
    kwargs["redirect_uri"] = (
        f"http://localhost:{port}/callback" if port is not None else DEFAULT_REDIRECT_URI
    )
    return OAuthProvider(url, **kwargs)
