"""Where OAuth state lives: the :class:`OAuthStorage` protocol (AUTH-32, §E5) and the
default in-memory :class:`MemoryStorage`. A file storage is in
``mcp_io_common/oauth_storage.py`` (file I/O is not the core's).

Layout (AUTH-17, AUTH-20, AUTH-24), all keys strings the provider builds:

- client registrations under ``client_registration_key(issuer)`` (the per-AS slot;
  pre-registered credentials are seeded there) and under the MCP server URL (the
  registration in use, which names its issuer);
- tokens under ``token_key(issuer)``: one per authorization server, so a token of
  another AS is parked under its own key, never presented, and resumed when its AS is
  current again;
- metadata under the MCP server URL (the discovery result: PRM + AS metadata);
- one :class:`AuthorizationRecord` per pending authorization request, under its
  ``state``.

Methods are synchronous and quick (a dict, a small file); a backend that cannot keep
a value raises, and the flow turns that into :class:`OAuthStorageError` where the
value is needed (AUTH-21).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from ._models import AuthorizationRecord, ClientInfo, Token

__all__ = ["MemoryStorage", "OAuthStorage"]


@runtime_checkable
class OAuthStorage(Protocol):
    """The storage contract. ``get_*`` return ``None`` for a missing key;
    ``delete_*`` of a missing key does nothing."""

    def get_token(self, key: str) -> Token | None: ...
    def set_token(self, key: str, token: Token) -> None: ...
    def delete_token(self, key: str) -> None: ...

    def get_client_info(self, key: str) -> ClientInfo | None: ...
    def set_client_info(self, key: str, info: ClientInfo) -> None: ...
    def delete_client_info(self, key: str) -> None: ...

    def get_server_metadata(self, key: str) -> dict[str, Any] | None: ...
    def set_server_metadata(self, key: str, metadata: dict[str, Any]) -> None: ...

    def get_authorization(self, state: str) -> AuthorizationRecord | None: ...
    def set_authorization(self, state: str, record: AuthorizationRecord) -> None: ...
    def delete_authorization(self, state: str) -> None: ...


class MemoryStorage:
    """The default storage: dicts, gone with the process."""

    def __init__(self) -> None:
        self.tokens: dict[str, Token] = {}
        self.clients: dict[str, ClientInfo] = {}
        self.metadata: dict[str, dict[str, Any]] = {}
        self.authorizations: dict[str, AuthorizationRecord] = {}

    def __repr__(self) -> str:  # the keys only: values hold secrets
        return (
            f"MemoryStorage(tokens={sorted(self.tokens)}, clients={sorted(self.clients)}, "
            f"pending={len(self.authorizations)})"
        )

    def get_token(self, key: str) -> Token | None:
        return self.tokens.get(key)

    def set_token(self, key: str, token: Token) -> None:
        self.tokens[key] = token

    def delete_token(self, key: str) -> None:
        self.tokens.pop(key, None)

    def get_client_info(self, key: str) -> ClientInfo | None:
        return self.clients.get(key)

    def set_client_info(self, key: str, info: ClientInfo) -> None:
        self.clients[key] = info

    def delete_client_info(self, key: str) -> None:
        self.clients.pop(key, None)

    def get_server_metadata(self, key: str) -> dict[str, Any] | None:
        return self.metadata.get(key)

    def set_server_metadata(self, key: str, metadata: dict[str, Any]) -> None:
        self.metadata[key] = metadata

    def get_authorization(self, state: str) -> AuthorizationRecord | None:
        return self.authorizations.get(state)

    def set_authorization(self, state: str, record: AuthorizationRecord) -> None:
        self.authorizations[state] = record

    def delete_authorization(self, state: str) -> None:
        self.authorizations.pop(state, None)
