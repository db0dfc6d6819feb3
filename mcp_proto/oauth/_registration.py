"""Client registration, in MCP's priority order (AUTH-17..22): pre-registered
credentials for the issuer, a Client ID Metadata Document, dynamic registration.
"""

from __future__ import annotations

import json
from typing import Any

from ._base import _JSON_ACCEPT
from ._discovery import DiscoveryMixin
from ._effects import Flow, HttpRequest, HttpResponse, Notice
from ._errors import OAuthRegistrationError, OAuthStorageError
from ._models import ClientInfo, ServerMetadata, parse_registration_response
from ._urls import check_redirect_uri, is_loopback_url

__all__ = ["RegistrationMixin"]


class RegistrationMixin(DiscoveryMixin):
    """Which client registration to use with an authorization server."""

    def _client_for(self, metadata: ServerMetadata) -> Flow[ClientInfo]:
        """The registration to use with ``metadata.issuer`` (AUTH-19): pre-registered
        credentials for this issuer, else a Client ID Metadata Document id when the
        server supports it, else an earlier dynamic registration with this issuer, else
        a new dynamic registration (deprecated: DEP-7)."""
        issuer = metadata.issuer
        chosen = self._registration(issuer, None, allow_cimd=False)
        if chosen is not None and chosen.source == "pre-registered":
            return self._use(chosen)
        if self.client_id_metadata_url and metadata.client_id_metadata_document_supported:
            return self._use(
                ClientInfo(
                    client_id=self.client_id_metadata_url,
                    token_endpoint_auth_method="none",
                    redirect_uris=(self.redirect_uri,),
                    source="cimd",
                )
            )
        if chosen is not None:
            return self._use(chosen)
        if metadata.registration_endpoint is None:
            raise OAuthRegistrationError(
                "no client registration is possible with this authorization server "
                "(no pre-registered credentials for its issuer, no Client ID Metadata "
                "Document support, no registration endpoint)",
                reason="no_registration",
            )
        endpoint = self._peer(metadata.registration_endpoint, "registration endpoint")
        yield Notice(
            "deprecation",
            "registering with OAuth Dynamic Client Registration, deprecated by MCP "
            "2026-07-28: prefer a Client ID Metadata Document or pre-registered credentials",
            deprecation="oauth_dcr",
        )
        body = json.dumps(self._registration_metadata(metadata)).encode()
        response: HttpResponse = yield HttpRequest(
            "POST",
            endpoint,
            (("Content-Type", "application/json"), _JSON_ACCEPT),
            body,
            "registration",
            self.max_document_bytes,
        )
        self._tick(response.now)
        info = parse_registration_response(
            response.body, issuer=issuer, status=response.status, max_bytes=self.max_document_bytes
        )
        for uri in info.redirect_uris:
            check_redirect_uri(uri)  # AUTH-28: also what a registration response registers
        self._use(info)
        slot = self.client_registration_key(issuer)
        try:
            existing = self.storage.get_client_info(slot)
            if existing is None or existing.source != "pre-registered":
                self.storage.set_client_info(slot, info)  # per-AS copy: best effort
        except Exception:
            yield Notice("storage", "the OAuth storage could not keep the per-issuer registration")
        return info

    def client_id_metadata_document(self) -> dict[str, Any]:
        """The document to publish at ``client_id_metadata_url`` (draft-ietf-oauth-
        client-id-metadata-document § 4; MCP "Client ID Metadata Documents"): its
        ``client_id`` is the URL itself, with ``client_name`` and ``redirect_uris``
        (required), ``grant_types`` including ``refresh_token`` (SEP-2207) and
        ``token_endpoint_auth_method`` ``none``; ``client_metadata`` adds to it."""
        if self.client_id_metadata_url is None:
            raise ValueError("no client_id_metadata_url is configured")
        grant_types = ["authorization_code"] + (["refresh_token"] if self.want_refresh else [])
        document: dict[str, Any] = {
            "client_name": "mcp-proto",
            "redirect_uris": [self.redirect_uri],
            "grant_types": grant_types,
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        }
        document.update(self.client_metadata)
        document["client_id"] = self.client_id_metadata_url
        return document

    def _registration_metadata(self, metadata: ServerMetadata) -> dict[str, Any]:
        """RFC 7591 client metadata. ``application_type`` (OIDC Registration § 2): MCP
        requires it; ``native`` for loopback and private-use redirects."""
        native = is_loopback_url(self.redirect_uri) or not self.redirect_uri.lower().startswith(
            ("http:", "https:")
        )
        supported = metadata.token_endpoint_auth_methods_supported or ("client_secret_basic",)
        method = next(
            (m for m in ("none", "client_secret_basic", "client_secret_post") if m in supported),
            "none",
        )
        grant_types = (
            ["authorization_code", "refresh_token"] if self.want_refresh else ["authorization_code"]
        )
        out: dict[str, Any] = {
            "client_name": "mcp-proto",
            "redirect_uris": [self.redirect_uri],
            "grant_types": grant_types,
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "application_type": "native" if native else "web",
        }
        out.update(self.client_metadata)
        return out

    def _registration(
        self, issuer: str, client_id: str | None, *, allow_cimd: bool = True
    ) -> ClientInfo | None:
        """The stored registration for ``issuer`` (AUTH-22: the slot under the server
        URL, which a host may rotate, wins over the per-AS copy when both are the same
        client); ``client_id`` pins the one an authorization request used."""
        in_use = self.storage.get_client_info(self.server_url)
        per_as = self.storage.get_client_info(self.client_registration_key(issuer))
        candidates = []
        if in_use is not None and (
            in_use.issuer == issuer or (allow_cimd and in_use.source == "cimd")
        ):
            candidates.append(in_use)
        if per_as is not None and per_as.issuer == issuer:
            if per_as.source == "pre-registered" and (
                not candidates or candidates[0].client_id != per_as.client_id
            ):
                candidates.insert(0, per_as)  # pre-registered outranks a dynamic one
            else:
                candidates.append(per_as)
        for info in candidates:
            if client_id is None or info.client_id == client_id:
                return info
        if client_id is not None and client_id == self.client_id_metadata_url:
            return ClientInfo(client_id=client_id, token_endpoint_auth_method="none", source="cimd")
        return None

    def _use(self, info: ClientInfo) -> ClientInfo:
        """Record ``info`` as the registration in use; it must reach storage, or the
        callback could not find it (AUTH-21)."""
        try:
            current = self.storage.get_client_info(self.server_url)
            if current != info and not (
                current is not None
                and current.client_id == info.client_id
                and current.issuer == info.issuer
            ):
                self.storage.set_client_info(self.server_url, info)
        except Exception as exc:
            raise OAuthStorageError(
                "the OAuth storage could not keep the client registration in use"
            ) from exc
        return info
