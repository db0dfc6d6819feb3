"""Resources: listing (one page or all), templates, finding the server that owns a URI,
``resources/read`` and subscriptions (RES-1..RES-16)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, NoReturn

from ..effects import (
    AwaitAcknowledged,
    AwaitLive,
    Call,
    CloseListen,
    Connect,
    Listen,
    Log,
    Op,
    PeekEra,
    ProgressCallback,
)
from ..errors import (
    AmbiguousResourceURI,
    CapabilityError,
    ConnectionError,
    MCPError,
    ResourceNotFound,
    ResourceReadError,
    ServerError,
    TransportError,
    ValidationError,
)
from ..pagination import list_all
from ..results import ResourcePage, ResourceTemplatePage
from ..session import ServerInfo
from ..types import ResourceContent, ResourceTemplate
from . import era
from .router import PASS_THROUGH, Router, ServerSelector

__all__ = ["ResourceOps"]

# JSON-RPC codes that mean "no such resource": -32002 up to 2025-11-25, -32602 in
# 2026-07-28 (RES-16).
_RESOURCE_NOT_FOUND: Final = frozenset({-32002, -32602})


class ResourceOps(Router):
    """The resource operations of :class:`~mcp_proto.client.ClientCore`."""

    def list_resources(
        self, *, cache: bool = True, cursor: str | None = None, server: ServerSelector | None = None
    ) -> Op[ResourcePage]:
        """A :class:`~mcp_proto.results.ResourcePage` (RES-1; as a mapping
        ``{'resources': [...], 'nextCursor': ...}``). Without ``cursor`` every page of
        every server; with ``cursor``, that one page of one server."""
        if cursor is None:
            resources = yield from self._list_across("resources", cache, server)
            return ResourcePage(tuple(resources))
        if server is None and len(self.servers) > 1:
            raise ValueError("list_resources(cursor=...) needs server= with several servers")
        name = self._default_server(server)
        result = yield from self._page_call(name, "resources/list", {"cursor": cursor}, cache)
        return ResourcePage.from_wire(result, server=name)

    def list_resource_templates(
        self, *, cursor: str | None = None, server: ServerSelector | None = None
    ) -> Op[ResourceTemplatePage]:
        """A :class:`~mcp_proto.results.ResourceTemplatePage` (RES-4; as a mapping
        ``{'resourceTemplates': [...], 'nextCursor': ...}``); every page of every server
        (or one) without ``cursor``."""
        if cursor is not None:
            if server is None and len(self.servers) > 1:
                raise ValueError("list_resource_templates(cursor=...) needs server=")
            name = self._default_server(server)
            result = yield from self._page_call(
                name, "resources/templates/list", {"cursor": cursor}
            )
            return ResourceTemplatePage.from_wire(result, server=name)
        templates: list[ResourceTemplate] = []
        for name in self._servers_for(server):
            info: ServerInfo = yield from self._judged(name)
            if not info.has_capability("resources"):
                continue
            raw: list[Any]
            if info.protocol_era == "modern":  # CACHE-11: only a positive ttlMs keeps them
                raw = yield from era.modern_list_all(
                    self, name, "resources/templates/list", "resourceTemplates"
                )
            else:
                raw = yield from list_all(
                    name,
                    "resources/templates/list",
                    "resourceTemplates",
                    max_pages=self.limits.max_pages,
                )
            for entry in raw:
                try:
                    templates.append(ResourceTemplate.from_dict(entry, server=name))
                except (ValidationError, ValueError, TypeError) as exc:
                    yield Log("WARNING", f"server {name!r}: skipping a malformed template: {exc}")
        return ResourceTemplatePage(tuple(templates))

    def _page_call(
        self, name: str, method: str, params: dict[str, Any], cache: bool = True
    ) -> Op[Any]:
        """One explicitly requested page. On a 2026-07-28 server through the result
        cache; a rejected cursor drops the list's cached pages and raises (CACHE-12:
        only an auto-paginated listing restarts). The connection's era decides."""
        info = yield from self._connect(name)
        if info.protocol_era != "modern":
            return (yield Call(name, method, params))
        try:
            return (yield from era.cached_call(self, name, method, params, use_cached=cache))
        except MCPError as exc:
            self.result_cache(name).cursor_rejected(method, params, exc)
            raise

    def _resource_owner(self, uri: str, server: ServerSelector | None) -> Op[str]:
        if server is not None:
            return self.select_server(server)
        if len(self.servers) == 1:
            return self.servers[0].name
        resources = yield from self._list_across("resources", True, None)
        owners: list[str] = sorted({r.server for r in resources if r.uri == uri and r.server})
        if len(owners) > 1:
            raise AmbiguousResourceURI(f"resource {uri!r} is offered by {owners}: pass server=")
        if owners:
            return owners[0]
        # RES-3: a URI reachable only through a template is not in any list; if exactly
        # one server offers resources at all, it is the one to ask.
        capable = []
        for s in self.servers:
            info: ServerInfo = yield from self._judged(s.name)
            if info.has_capability("resources"):
                capable.append(s.name)
        if len(capable) == 1:
            return capable[0]
        raise ResourceNotFound(f"no server lists a resource {uri!r}; pass server=")

    def read_resource(
        self,
        uri: str,
        *,
        server: ServerSelector | None = None,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
    ) -> Op[list[ResourceContent]]:
        """``resources/read``; ``progress(progress, total, message)`` is called for the
        server's progress notifications while it runs (PROG-4). A 2026-07-28 result
        served from the result cache makes no request, so no progress."""
        owner = yield from self._resource_owner(uri, server)
        try:
            result = yield from era.request(
                self, owner, "resources/read", {"uri": uri}, timeout, progress
            )
        except ServerError as exc:
            if exc.code in _RESOURCE_NOT_FOUND:
                raise ResourceNotFound(f"server {owner!r}: {exc}") from exc
            raise
        except PASS_THROUGH:
            raise
        except (TransportError, ConnectionError) as exc:
            raise ResourceReadError(f"reading {uri!r} from {owner!r} failed: {exc}") from exc
        if not isinstance(result, dict) or not isinstance(result.get("contents"), list):
            raise ResourceReadError(f"server {owner!r} sent a malformed resources/read result")
        contents = []
        for entry in result["contents"]:
            try:
                contents.append(ResourceContent.from_dict(entry))
            except (ValidationError, ValueError, TypeError) as exc:
                raise ResourceReadError(f"server {owner!r} sent malformed contents: {exc}") from exc
        return contents

    def subscribe_resource(self, uri: str, *, server: ServerSelector | None = None) -> Op[bool]:
        """Updates of ``uri`` reach ``on_notification`` callbacks; True once the server
        confirmed it. The connection's era decides how (RES-7, RES-9): a handshake-era
        server gets ``resources/subscribe`` (RES-6); a 2026-07-28 server a listen
        subscription for the URI, confirmed by an acknowledgment naming it (else
        ``ResourceReadError``, as for an unconfirmed ``resources/subscribe``).

        The seed's subscription paragraph (2026-07-28): a stream already assigned to
        the URI is reused only while the server honours the URI on it now; a dropped
        one is waited for (RES-11). One that ended, or that fails to become live again,
        is closed and unassigned (RES-12). The acknowledgment is re-verified with the
        assignment in place, so one that arrived in between is not missed (RES-10)."""
        owner = yield from self._resource_owner(uri, server)
        info: ServerInfo = yield Connect(owner)
        if info.protocol_era != "modern":
            return (yield from self._subscription("resources/subscribe", uri, owner))
        key = (owner, uri)
        existing = self._resource_subs.get(key)
        if existing is not None:
            if not existing.closed:
                if not existing.active or not _names(existing.acknowledged, uri):
                    # RES-11: not honoured now (dropped, re-opening): wait for the
                    # server's answer to the replacement, bounded by the read timeout.
                    yield from self._confirm_live(owner, uri, existing)
                return True
            self._unassign(key, existing)  # RES-12: ended; a new listen replaces it
        sub = yield Listen(owner, {"resource_subscriptions": [uri]})
        try:
            granted: Mapping[str, Any] = yield AwaitAcknowledged(sub)
            if not _names(granted, uri):
                raise ResourceReadError(
                    f"subscribing to {uri!r} on {owner!r} was not confirmed: the "
                    "server's acknowledgment does not name it"
                )
        except MCPError as exc:
            yield CloseListen(sub)
            _raise_unconfirmed(uri, owner, exc)
        self._resource_subs[key] = sub
        # RES-10: re-verified with the assignment in place. A later acknowledgment
        # that no longer names the URI ended the subscription in the machine (and the
        # assignment with it, _resource_ended); one that came in before the
        # assignment is seen here. Not a wait: a stream that dropped the moment it
        # was acknowledged has still granted it (RES-13).
        if sub.closed or not _names(sub.acknowledged or granted, uri):
            self._unassign(key, sub)
            yield CloseListen(sub)
            raise ResourceReadError(
                f"subscribing to {uri!r} on {owner!r} was not confirmed: the server "
                f"withdrew it as it was acknowledged ({sub.error or 'no longer named'})"
            )
        return True

    def unsubscribe_resource(self, uri: str, *, server: ServerSelector | None = None) -> Op[bool]:
        """Stop the updates of ``uri``: on a 2026-07-28 server its listen subscription
        ends (``True``, also when none was open); a handshake-era server gets
        ``resources/unsubscribe``."""
        owner = yield from self._resource_owner(uri, server)
        sub = self._resource_subs.pop((owner, uri), None)
        if sub is not None:
            yield CloseListen(sub)
            return True
        if (yield PeekEra(owner)) == "modern":
            return True  # nothing subscribed
        return (yield from self._subscription("resources/unsubscribe", uri, owner))

    def _confirm_live(self, owner: str, uri: str, sub: Any) -> Op[None]:
        """RES-11/RES-12: wait until the assigned subscription ``sub`` is honoured now
        and still names ``uri``; if not, it is closed and unassigned, and the
        subscription was not confirmed."""
        timeout = self._entry(owner).read_timeout
        try:
            granted: Mapping[str, Any] = yield AwaitLive(sub, timeout)
            if not _names(granted, uri):
                raise ResourceReadError(
                    f"subscribing to {uri!r} on {owner!r} was not confirmed: the "
                    "re-opened stream's acknowledgment does not name it"
                )
        except MCPError as exc:
            self._unassign((owner, uri), sub)
            yield CloseListen(sub)
            _raise_unconfirmed(uri, owner, exc)

    def _unassign(self, key: tuple[str, str], sub: Any) -> None:
        """Drop the assignment of ``key`` if it still names ``sub`` (not a newer one)."""
        if self._resource_subs.get(key) is sub:
            del self._resource_subs[key]

    def _resource_ended(self, sub: Any) -> None:
        """RES-12: a listen subscription ended; it is no longer any URI's."""
        for key, assigned in list(self._resource_subs.items()):
            if assigned is sub:
                self._unassign(key, sub)

    def _subscription(self, method: str, uri: str, owner: str) -> Op[bool]:
        """``resources/subscribe`` or ``resources/unsubscribe`` of ``uri`` on ``owner``
        (resolved by the caller), a handshake-era server (RES-6)."""
        info: ServerInfo = yield from self._judged(owner)
        if not info.has_capability("resources", "subscribe"):
            raise CapabilityError(f"server {owner!r} does not support resource subscriptions")
        try:
            yield Call(owner, method, {"uri": uri})
        except ServerError:
            raise
        except (TransportError, ConnectionError) as exc:
            # RES-6: no confirmation (timeout included) is a ResourceReadError.
            raise ResourceReadError(
                f"{method} {uri!r} on {owner!r} was not confirmed: {exc}"
            ) from exc
        return True


def _names(granted: Mapping[str, Any] | None, uri: str) -> bool:
    """Whether an acknowledgment's granted filter names ``uri`` (RES-9)."""
    if granted is None:
        return False
    uris = granted.get("resourceSubscriptions", ())
    return isinstance(uris, (list, tuple)) and uri in uris


def _raise_unconfirmed(uri: str, owner: str, error: MCPError) -> NoReturn:
    """What an unconfirmed subscription raises: ``error`` if it says so already, else
    a ``ResourceReadError`` caused by it (as for an unconfirmed ``resources/subscribe``)."""
    if isinstance(error, ResourceReadError):
        raise error
    raise ResourceReadError(
        f"subscribing to {uri!r} on {owner!r} was not confirmed: {error}"
    ) from error
