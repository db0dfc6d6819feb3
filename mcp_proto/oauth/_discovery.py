"""Discovery: protected resource metadata (RFC 9728), then authorization server
metadata (RFC 8414 / OIDC Discovery, the 2025-03-26 fallback), every peer-advertised
URL checked before it is fetched (AUTH-5, AUTH-6, AUTH-30).
"""

from __future__ import annotations

from ._base import ProviderCore
from ._challenge import BearerChallenge
from ._effects import Flow, Notice
from ._errors import OAuthDiscoveryError
from ._models import (
    ResourceMetadata,
    ServerMetadata,
    parse_resource_metadata,
    parse_server_metadata,
)
from ._urls import (
    authorization_server_metadata_urls,
    legacy_endpoints,
    origin_of,
    protected_resource_metadata_urls,
    resource_matches,
)

__all__ = ["DiscoveryMixin"]


class DiscoveryMixin(ProviderCore):
    """Finding this server's authorization server."""

    def discover(self, challenge: BearerChallenge | None = None) -> Flow[ServerMetadata]:
        """Protected resource metadata, then the authorization server's metadata."""
        prm = yield from self._resource_metadata_for(challenge)
        if prm is not None:
            issuer = self._choose_issuer(prm)
            metadata = yield from self._server_metadata(issuer, legacy=False)
            self._resource = prm.resource
        else:
            # 2025-03-26 servers: no PRM; the authorization server is the MCP server's
            # origin ("Authorization Base URL"), its metadata optional.
            issuer = origin_of(self.server_url)
            metadata = yield from self._server_metadata(issuer, legacy=True)
            self._resource = None
        for what, url in (
            ("token endpoint", metadata.token_endpoint),
            ("authorization endpoint", metadata.authorization_endpoint),
        ):
            if url is not None:
                self._peer(url, what)
        previous = self.issuer
        if previous is not None and previous != metadata.issuer:
            yield Notice(
                "migration",
                "the server now names another authorization server; its credentials and "
                "tokens are kept apart and a new registration is used",
            )
        self._issuer, self._metadata, self._resource_metadata = metadata.issuer, metadata, prm
        try:
            self.storage.set_server_metadata(
                self.server_url, {"server": metadata.to_dict(), "resource": self._resource}
            )
        except Exception:  # a cache: best effort
            yield Notice("storage", "the OAuth storage could not cache the server metadata")
        return metadata

    def _resource_metadata_for(
        self, challenge: BearerChallenge | None
    ) -> Flow[ResourceMetadata | None]:
        if challenge is not None and challenge.resource_metadata is not None:
            # The challenge's URL is authoritative, and a refused one fails closed
            # (AUTH-30): no fallback to well-known URIs or cached metadata.
            url = self._peer(challenge.resource_metadata, "resource_metadata URL")
            response = yield self._get(url, "resource_metadata")
            if response.status != 200:
                raise OAuthDiscoveryError(
                    f"the protected resource metadata answered HTTP {response.status}",
                    reason="not_found",
                    url=url,
                )
            prm = parse_resource_metadata(response.body, url=url, max_bytes=self.max_document_bytes)
        else:
            found: ResourceMetadata | None = None
            for url in protected_resource_metadata_urls(self.server_url):
                response = yield self._get(url, "resource_metadata")
                if response.status == 200:
                    found = parse_resource_metadata(
                        response.body, url=url, max_bytes=self.max_document_bytes
                    )
                    break
            if found is None:
                return None
            prm = found
        if not resource_matches(prm.resource, self.server_url):
            raise OAuthDiscoveryError(
                "the protected resource metadata names another resource than this server",
                reason="resource_mismatch",
                url=prm.url,
            )
        return prm

    def _choose_issuer(self, prm: ResourceMetadata) -> str:
        """The authorization server to use (RFC 9728 § 7.6 leaves the choice to the
        client): the current one while it is still listed, else the first entry. It is
        checked before its metadata is fetched (AUTH-30)."""
        servers = prm.authorization_servers
        current = self.issuer  # the stored one after a restart
        issuer = current if current in servers else servers[0]
        return self._peer(issuer, "authorization server")

    def _server_metadata(self, issuer: str, *, legacy: bool) -> Flow[ServerMetadata]:
        for url in authorization_server_metadata_urls(issuer):
            response = yield self._get(url, "server_metadata")
            if response.status == 200:
                source = "oidc" if "openid-configuration" in url else "oauth"
                return parse_server_metadata(
                    response.body,
                    expected_issuer=issuer,
                    source=source,
                    url=url,
                    max_bytes=self.max_document_bytes,
                )
        if not legacy:
            raise OAuthDiscoveryError(
                "no authorization server metadata was found for the issuer",
                reason="not_found",
                url=issuer,
            )
        authorize, token, register = legacy_endpoints(self.server_url)
        return ServerMetadata(
            issuer=issuer,
            authorization_endpoint=authorize,
            token_endpoint=token,
            registration_endpoint=register,
            source="fallback",
        )
