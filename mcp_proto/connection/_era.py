"""The 2026-07-28 era inside the machine: the era decision and the building of modern
requests (issue 10 items 1, 2, 3).

Era decision (LIFE-5..8, LIFE-18; 2026-07-28 basic/transports/stdio.mdx and
streamable-http.mdx § Backward Compatibility): with ``protocol="auto"`` or ``"modern"``
the first message on a new transport is ``server/discover`` (stdio and HTTP alike),
bounded by ``discover_timeout``. Its outcome is classified by
:func:`mcp_proto.modern.discover.classify_probe` (one table for every transport):

* ``Modern`` → READY at once, ``ServerInfo`` from the ``DiscoverResult``;
* ``RetryModern`` (-32022 listing a version we speak) → probe once more with it;
* ``RejectedModern`` / ``Incompatible`` → ``ConnectFailed`` with the typed error;
* ``Legacy`` (another error, an HTTP 4xx without a recognised modern error, silence)
  → the handshake exactly as before (``protocol="modern"``: ``ConnectFailed``);
* an HTTP 401/403, a 5xx or a transport failure says nothing about the era:
  ``ConnectFailed`` with that error (an ``UnauthorizedError`` for 401/403).

``protocol="legacy"`` (and HTTP+SSE, a handshake-era transport) never sends discover.

Era cache (LIFE-18): an :class:`~mcp_proto.modern.discover.EraCache` given by the driver
(one per client) is keyed by origin (HTTP) or process (stdio, when the driver names the
pid in ``transport_opened``). A cached legacy era skips the probe (``initialize``
first); a cached modern era skips the fallback logic: ``server/discover`` is still sent,
because the capabilities it returns gate every request (CAP-6), but with the cached
version and the request's ``read_timeout``, and an answer like a legacy server's makes
the machine forget the entry and probe again.

Modern requests (LIFE-10..15, LIFE-17): params get ``_meta`` from
:func:`~mcp_proto.modern.meta.with_meta` (version, client info, capabilities with
``extensions``, the host's ``request_meta`` copied at build time, the log level);
``ping`` is ``server/discover``; over HTTP each request gets
:func:`~mcp_proto.modern.headers.request_headers` (configured ``Mcp-Param-*`` dropped).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeGuard

import attrs

from .. import jsonrpc
from .._util import shown
from ..errors import (
    IncompatibleServerError,
    LocalProtocolError,
    MCPError,
    RequestTimeoutError,
    ServerError,
    TransientServerError,
)
from ..http import _OWNED as CLIENT_OWNED
from ..http import HttpSessionState
from ..modern.discover import (
    DISCOVER,
    Decision,
    EraCache,
    Incompatible,
    Legacy,
    Modern,
    ProbeAnswered,
    ProbeFailed,
    ProbeOutcome,
    ProbeSilent,
    RejectedModern,
    RetryModern,
    Undecided,
    classify_probe,
    discover_params,
    origin_key,
    parse_discover_result,
    process_key,
)
from ..modern.meta import (
    LOG_LEVELS,
    CapabilitiesMemo,
    HostMeta,
    merge_extensions,
    merge_host_meta,
    with_meta,
)
from ..session import REQUIRED_CAPABILITY, ServerInfo, Session
from ..session import State as SessionState
from ..versions import MODERN_VERSIONS
from ._transport import Outgoing

if TYPE_CHECKING:
    from ..config import ServerConfig
    from ..types import Implementation
    from ..versions import Era

__all__ = [
    "DISCOVER_TIMEOUT",
    "ConnectFails",
    "EraDecision",
    "EraPort",
    "EraSteps",
    "ModernReady",
    "Probe",
    "ProbeSent",
    "StartHandshake",
    "Supersede",
    "modern_post_headers",
]

#: Default bound of the probe with ``protocol="auto"`` (LIFE-7), capped by
#: ``read_timeout`` (a forced ``"modern"`` waits ``read_timeout``). A modern server
#: answers discover as its first message, so this only has to cover the server's start
#: (a Python or Node server is up in one or two seconds); a silent legacy server costs
#: this much once per process/origin (the era is cached). A server that starts slower
#: is still heard on stdio: its late answer decides while ``initialize`` is unanswered,
#: and a refusal of ``initialize`` as a modern server's probes again (``failed``,
#: ``handshake_refused``).
DISCOVER_TIMEOUT: Final = 5.0


class Probe:
    """The ``server/discover`` in flight that decides the era."""

    __slots__ = ("cached", "retried", "rid", "version")

    def __init__(self, rid: jsonrpc.RequestId, version: str, retried: bool, cached: bool) -> None:
        self.rid = rid
        self.version = version
        self.retried = retried  # already re-probed after a -32022
        self.cached = cached  # the era came from the cache (no fallback on silence)

    def __repr__(self) -> str:
        return f"Probe(rid={self.rid!r}, version={self.version!r})"


def _stateless(session: Session, server: ServerInfo | None) -> None:
    """Put a fresh session in the operation phase without a handshake (2026-07-28 has
    no ``initialize``: LIFE-17). Its id counter, pending table and deadlines are used as
    in the handshake era."""
    session.server = server
    session.state = SessionState.READY


def _refusal(error: MCPError) -> TypeGuard[ServerError]:
    """A server's answer (a JSON-RPC error, an HTTP 4xx), not a transport failure."""
    return isinstance(error, ServerError) and not isinstance(error, TransientServerError)


def _error_object(error: ServerError) -> dict[str, Any]:
    return {"code": error.code, "message": error.message, "data": error.data}


class EraPort(Protocol):
    """What the era steps may read of their connection and ask of it."""

    @property
    def config(self) -> ServerConfig: ...

    @property
    def name(self) -> str: ...

    @property
    def client_info(self) -> Implementation: ...

    @property
    def session(self) -> Session | None:
        """The session the era is decided on (its ids, pending table and server)."""

    @property
    def handshake_rid(self) -> jsonrpc.RequestId | None:
        """The ``initialize`` in flight, if any."""

    def new_session(self) -> Session:
        """A new session for this transport (the probe's), made and kept by the
        connection."""

    def send_request(
        self,
        method: str,
        params: dict[str, Any] | None,
        headers: tuple[tuple[str, str], ...] | None,
        *,
        now: float,
        timeout: float | None,
        cancel_on_timeout: bool = True,
    ) -> jsonrpc.RequestId:
        """Send a request of the machine's own on the current session; its id."""

    def diagnostic(self, level: str, message: str) -> None: ...


# ---------------------------------------------------------------- decisions
# What an era step decided; the connection applies it (``Connection._apply_era``).


@attrs.frozen
class StartHandshake:
    """``initialize`` now: on a new session, or (``reuse``) on the probe's, whose ids
    go on after the probe's so a late answer to it is never taken for the handshake's.
    ``late_probe``: the silent stdio probe whose answer may still decide (LIFE-7),
    kept pending without a deadline once ``initialize`` is out."""

    reuse: bool = False
    late_probe: jsonrpc.RequestId | None = None


@attrs.frozen
class ModernReady:
    """The server speaks 2026-07-28: the session enters the operation phase with
    ``info`` (no handshake, LIFE-17) and the connection is ready."""

    info: ServerInfo


@attrs.frozen
class ConnectFails:
    error: MCPError


@attrs.frozen
class ProbeSent:
    """A ``server/discover`` went out (``flush``: send it now, mid-input)."""

    flush: bool = False


@attrs.frozen
class Supersede:
    """A late probe answer decides while ``initialize`` is unanswered: abandon
    ``initialize``, then apply ``then``."""

    then: EraDecision


EraDecision = StartHandshake | ModernReady | ConnectFails | ProbeSent | Supersede | None


class EraSteps:
    """The era decision and modern request building of one connection. Its steps
    return an :data:`EraDecision` for the connection to apply; it owns only the era's
    own state (the probe in flight, the era cache, the log level)."""

    def __init__(
        self,
        port: EraPort,
        *,
        request_meta: HostMeta,
        extensions: Any,
        era_cache: EraCache | None,
    ) -> None:
        self.port = port
        self.request_meta = request_meta
        self.extensions = extensions
        self.era_cache = era_cache
        self.probe: Probe | None = None
        #: A silent stdio probe whose answer may still come (LIFE-7): see ``failed``.
        self.late: Probe | None = None
        #: ``initialize`` was refused as a 2026-07-28 server refuses it, and the era
        #: probed again: once per connect (``handshake_refused``).
        self.reprobed = False
        #: The probe of this connect went unanswered this long (then initialize).
        self.silent_for: float | None = None
        self.pid: int | None = None  # the stdio server's process (era cache key)
        self.log_level: str | None = None
        self._capabilities = CapabilitiesMemo()  # every modern request's clientCapabilities
        config = port.config
        self.http = config.type in ("http", "streamable_http")
        timeout = config.discover_timeout
        if timeout is None:
            # LIFE-7's bound exists to declare a silent server legacy. A forced
            # protocol="modern" has no fallback to decide, so its probe is the
            # connect's first request and waits as long as initialize would: a server
            # still starting (a cold import, an npx or uvx download) is not refused.
            timeout = config.read_timeout if config.protocol == "modern" else DISCOVER_TIMEOUT
        self.discover_timeout = min(timeout, config.read_timeout)

    # ------------------------------------------------------------ era cache

    def cache_key(self) -> Hashable | None:
        config = self.port.config
        if self.http:
            url = config.endpoint_url
            return origin_key(url) if url is not None else None
        if config.type == "stdio" and self.pid is not None:
            return process_key(self.pid, config.command)
        return None

    def _remember(self, era: Era, version: str | None) -> None:
        key = self.cache_key()
        if self.era_cache is not None and key is not None:
            self.era_cache.remember(key, era, version)

    def _forget(self) -> None:
        key = self.cache_key()
        if self.era_cache is not None and key is not None:
            self.era_cache.forget(key)

    # ------------------------------------------------------------ the decision

    def begin(self, now: float) -> EraDecision:
        """The transport can carry messages: probe, or handshake at once."""
        config = self.port.config
        self.late = None
        self.reprobed = False
        self.silent_for = None
        mode = config.protocol
        if config.type == "sse" or mode == "legacy":
            return StartHandshake()
        key = self.cache_key()
        record = self.era_cache.get(key) if self.era_cache is not None and key else None
        if record is not None and record.era == "legacy" and mode == "auto":
            return StartHandshake()  # LIFE-18: the era is known; no probe
        cached = record is not None and record.era == "modern"
        version = MODERN_VERSIONS[0]
        if cached and record is not None and record.protocol_version in MODERN_VERSIONS:
            version = record.protocol_version
        self.port.new_session()
        return self._send_probe(now, version, retried=False, cached=cached)

    def abandon(self) -> None:
        """The transport is gone: no probe answer decides anything any more."""
        self.probe = self.late = None

    def _send_probe(
        self, now: float, version: str, *, retried: bool, cached: bool, flush: bool = False
    ) -> EraDecision:
        port = self.port
        session = port.session
        assert session is not None
        _stateless(session, None)
        try:
            params = discover_params(**self._meta_options(version))
            headers = self._headers(DISCOVER, params, version)
        except Exception as exc:
            # The host's request_meta (LIFE-12) is bad or raised: no request can be
            # built, so the connect fails; a driver input never raises.
            failed = LocalProtocolError(
                f"server {port.name!r}: server/discover cannot be sent: {exc}"
            )
            failed.__cause__ = exc
            self.probe = None
            return ConnectFails(failed)
        timeout = port.config.read_timeout if cached else self.discover_timeout
        # No notifications/cancelled when a probe times out: a legacy server never
        # knew the request (it may not even be initialized), and over HTTP closing the
        # stream is the cancellation.
        rid = port.send_request(
            DISCOVER, params, headers, now=now, timeout=timeout, cancel_on_timeout=False
        )
        self.probe = Probe(rid, version, retried, cached)
        return ProbeSent(flush)

    def owns(self, rid: jsonrpc.RequestId) -> bool:
        probe = self.probe
        if probe is not None and probe.rid == rid:
            return True
        late = self.late
        return late is not None and late.rid == rid

    def answered(self, rid: jsonrpc.RequestId, result: Any, now: float) -> EraDecision:
        late = self.late
        if late is not None and late.rid == rid:
            self.late = None
            return self._late_answer(late, ProbeAnswered(result), now)
        return self._decide(ProbeAnswered(result), now)

    def failed(self, rid: jsonrpc.RequestId, error: MCPError, now: float) -> EraDecision:
        late = self.late
        if late is not None and late.rid == rid:
            self.late = None
            if _refusal(error):
                return self._late_answer(late, ProbeFailed(_error_object(error)), now)
            return None  # a lost transport: initialize fails with it
        outcome: ProbeOutcome
        if isinstance(error, RequestTimeoutError):
            probe = self.probe
            if probe is not None:
                self.silent_for = self.discover_timeout
            decision = self._decide(ProbeSilent(), now)
            if not self.http and probe is not None and isinstance(decision, StartHandshake):
                # LIFE-7 on stdio: "does not respond within a reasonable timeout" is
                # often a server still starting (a cold Python import, an npx or uvx
                # download). A dual-era server that then reads the probe first serves
                # 2026-07-28 and refuses initialize, so its late answer must still
                # decide: the probe stays pending, without a deadline, until the
                # handshake settles. (Over HTTP the timed-out exchange is closed:
                # no answer can come.)
                self.late = probe
                return StartHandshake(reuse=decision.reuse, late_probe=probe.rid)
            return decision
        if _refusal(error):
            # A JSON-RPC error, or an HTTP 4xx (its body's JSON-RPC error when it had
            # one: code None otherwise): classified by the spec's table.
            outcome = ProbeFailed(_error_object(error))
        else:
            # 401/403, 5xx, a transport failure: nothing about the era (Undecided).
            self.probe = None
            return ConnectFails(error)
        return self._decide(outcome, now)

    def _decide(self, outcome: ProbeOutcome, now: float) -> EraDecision:
        probe = self.probe
        assert probe is not None
        self.probe = None
        return self._apply(probe, classify_probe(outcome), now)

    def _apply(self, probe: Probe, decision: Decision, now: float) -> EraDecision:
        name = self.port.name
        if isinstance(decision, Modern):
            info = decision.info
            self._remember("modern", decision.version)
            return ModernReady(
                ServerInfo(
                    protocol_version=decision.version,
                    capabilities=info.capabilities,
                    server_info=info.server_info,
                    instructions=info.instructions,
                    ttl_ms=info.ttl_ms,
                    received_at=now,
                )
            )
        if isinstance(decision, RetryModern):
            if probe.retried:
                return ConnectFails(
                    IncompatibleServerError(
                        f"server {name!r} refused protocol version {probe.version} after "
                        f"listing it as supported ({', '.join(decision.supported)})",
                        protocol_version=probe.version,
                    )
                )
            # LIFE-6: a modern server wanting another version: never fall back.
            return self._send_probe(
                now, decision.version, retried=True, cached=probe.cached, flush=True
            )
        if isinstance(decision, RejectedModern):
            self._remember("modern", probe.version)
            return ConnectFails(decision.error)
        if isinstance(decision, Incompatible):
            return ConnectFails(decision.error())
        if isinstance(decision, Legacy):
            return self._legacy(probe, decision.reason, now)
        assert isinstance(decision, Undecided)  # only from HTTP statuses not fed here
        return ConnectFails(ServerError(decision.reason))

    def _late_answer(self, probe: Probe, outcome: ProbeOutcome, now: float) -> EraDecision:
        """The silent probe was answered after ``initialize`` went out (stdio, LIFE-7).
        While the handshake is unanswered the probe's answer decides, as it would have
        on time: a modern answer abandons ``initialize`` (its answer, if any, is then
        discarded as one to an unknown id); an answer like a legacy server's changes
        nothing."""
        port = self.port
        if port.handshake_rid is None or port.session is None:
            return None
        decision = classify_probe(outcome)
        if isinstance(decision, Legacy):
            return None
        port.diagnostic(
            "info",
            f"server {port.name!r} answered server/discover after discover_timeout "
            f"({self.discover_timeout:g}s); initialize abandoned",
        )
        return Supersede(self._apply(probe, decision, now))

    def handshake_settled(self, session: Session) -> None:
        """``initialize`` was answered: a late probe answer no longer decides."""
        late = self.late
        if late is not None:
            self.late = None
            session.cancel_request(late.rid, "handshake done", notify=False)

    def handshake_error(self, error: MCPError) -> MCPError:
        """``initialize``'s failure as the connect's: a timeout after a silent probe
        names both waits (the user's limit was spent twice; issue 24 D)."""
        waited = self.silent_for
        if waited is None or not isinstance(error, RequestTimeoutError):
            return error
        timeout = self.port.config.read_timeout
        both = RequestTimeoutError(
            f"{error}; server/discover had gone unanswered for {waited:g}s before it "
            f"({waited + timeout:g}s in all; protocol='legacy' skips that probe)",
            method=error.method,
        )
        both.__cause__ = error
        return both

    def handshake_refused(self, error: MCPError, now: float) -> EraDecision:
        """``initialize`` failed with ``error``: whether the refusal is a 2026-07-28
        server's (a -32022 listing a modern version we speak, LIFE-6: "Do not fall back
        to initialize"), in which case the era is probed again with that version, once
        per connect (the decision: the probe sent, or ``None``: the refusal stands).
        This catches a dual-era server that took a probe it answered too late (or that
        a cached legacy era skipped: LIFE-18 "re-probing if the cached assumption later
        fails"). Only with ``protocol="auto"``: a forced legacy connect reports the
        refusal."""
        port = self.port
        config = port.config
        session = port.session
        if (
            self.reprobed
            or config.protocol != "auto"
            or config.type == "sse"
            or session is None
            or not _refusal(error)
        ):
            return None
        decision = classify_probe(ProbeFailed(_error_object(error)))
        if not isinstance(decision, RetryModern):
            return None
        self.reprobed = True
        self.handshake_settled(session)
        self._forget()
        port.diagnostic(
            "info",
            f"server {port.name!r} refused initialize as a 2026-07-28 server does "
            f"({error.message}); probing again with {decision.version}",
        )
        return self._send_probe(now, decision.version, retried=True, cached=False, flush=True)

    def _legacy(self, probe: Probe, reason: str, now: float) -> EraDecision:
        port = self.port
        if probe.cached:
            # LIFE-18: the cached modern era no longer holds: forget it, probe afresh.
            self._forget()
            port.diagnostic(
                "info",
                f"server {port.name!r}: cached as 2026-07-28 but {reason}; probing again",
            )
            return self._send_probe(
                now, MODERN_VERSIONS[0], retried=False, cached=False, flush=True
            )
        if port.config.protocol == "modern":
            return ConnectFails(
                IncompatibleServerError(
                    f"server {port.name!r} does not speak the 2026-07-28 revision "
                    f"(protocol='modern'): {reason}"
                )
            )
        self._remember("legacy", None)
        port.diagnostic("debug", f"server {port.name!r}: {reason}; using initialize")
        # The same session continues: its ids go on after the probe's, so a late answer
        # to the probe can never be taken for the answer to initialize.
        return StartHandshake(reuse=True)

    def rediscovered(self, result: Any, now: float) -> ServerInfo | None:
        """A ``server/discover`` the host sent on the modern session was answered: the
        capabilities, identity and freshness it reports replace the ones known (the
        connection puts the returned ``ServerInfo`` on its session), so every later
        capability judgement (the client's and the session's own, CAP-6) uses them
        (LIFE-20, CACHE-13). An answer that is not a usable ``DiscoverResult``, or that
        no longer lists the version in use, changes nothing (``None``): the caller gets
        the result and judges it (a stale era is found by the next request, LIFE-18)."""
        session = self.port.session
        server = session.server if session is not None else None
        if server is None:
            return None
        try:
            info = parse_discover_result(result)
        except MCPError:
            return None
        if server.protocol_version not in info.supported_versions:
            return None
        return ServerInfo(
            protocol_version=server.protocol_version,
            capabilities=info.capabilities,
            server_info=info.server_info,
            instructions=info.instructions,
            ttl_ms=info.ttl_ms,
            received_at=now,
        )

    def set_log_level(self, level: object) -> None:
        """Validate and keep the level carried as ``_meta`` (LIFE-15)."""
        if level is not None and (not isinstance(level, str) or level not in LOG_LEVELS):
            raise ValueError(
                f"log level must be one of {', '.join(sorted(LOG_LEVELS))} or None, "
                f"got {shown(level)}"
            )
        self.log_level = level

    # ------------------------------------------------------------ a stale era

    def answers_like_legacy(self, method: str, error: MCPError) -> bool:
        """Whether a modern request's failure says the server is not (any longer) a
        2026-07-28 one (LIFE-18): ``ping`` (``server/discover``) refused the way the
        probe table calls legacy, or -32601 "method not found" for a method whose
        capability the server declared (a legacy server without a session knows none)."""
        if not _refusal(error):
            return False
        if method == "ping":
            return isinstance(classify_probe(ProbeFailed(_error_object(error))), Legacy)
        path = REQUIRED_CAPABILITY.get(method)
        session = self.port.session
        server = session.server if session is not None else None
        return (
            error.code == -32601
            and path is not None
            and server is not None
            and server.has_capability(*path)
        )

    def forget_era(self, reason: str) -> None:
        """Forget the cached era; the next connect probes afresh (LIFE-18)."""
        self._forget()
        port = self.port
        port.diagnostic(
            "info",
            f"server {port.name!r} answered a 2026-07-28 request like a handshake-era "
            f"server ({reason}); reconnecting with a new probe",
        )

    # ------------------------------------------------------------ modern requests

    def _meta_options(self, version: str) -> dict[str, Any]:
        port = self.port
        session = port.session
        caps: Mapping[str, Any] = session.capabilities if session is not None else {}
        config = port.config
        extensions = self.extensions
        if config.extensions:
            # §E3: a server's own extensions are declared besides the client's.
            extensions = merge_extensions(extensions, config.extensions)
        return {
            "protocol_version": version,
            "client_info": port.client_info,
            "capabilities": caps,
            "extensions": extensions,
            "client_capabilities": self._capabilities.get(caps, extensions),
            # LIFE-12: the server's own request_meta laid over the client's.
            "host_meta": merge_host_meta(self.request_meta, config.request_meta),
            "log_level": self.log_level,
        }

    def _headers(
        self, method: str, params: Mapping[str, Any] | None, version: str, tool: Any = None
    ) -> tuple[tuple[str, str], ...] | None:
        if not self.http:
            return None  # HDR-7: stdio has no headers
        from ..modern.headers import request_headers  # HTTP only: loaded when needed

        return tuple(
            request_headers(
                method,
                params,
                protocol_version=version,
                tool=tool,
                configured=configured_headers(self.port.config),
            )
        )

    def build(
        self, method: str, params: dict[str, Any] | None, tool: Any = None
    ) -> tuple[str, dict[str, Any], tuple[tuple[str, str], ...] | None]:
        """The method, params and HTTP headers of a modern request.

        Raises:
            ValidationError: bad host metadata, a name or argument that cannot be
                carried in a header. HeaderAnnotationError: ``tool``'s annotations.
            Exception: whatever the host's ``request_meta`` callable raises.
        """
        session = self.port.session
        server = session.server if session is not None else None
        assert server is not None
        version = server.protocol_version
        if method == "ping":
            # LIFE-14: ping on a modern server is server/discover (its params are
            # only the _meta).
            method, params = DISCOVER, None
        built = with_meta(params, **self._meta_options(version))
        if not self.http:
            return method, built, None  # HDR-7: stdio has no headers
        return method, built, self._headers(method, built, version, tool)


def configured_headers(config: ServerConfig) -> list[tuple[str, str]]:
    """The configured headers a modern POST may carry: not the ones the client owns
    (``Accept``, ``Mcp-Session-Id``, ... as in the handshake era: a configuration cannot
    forge protocol state; ``request_headers`` drops ``Mcp-Param-*`` and the standard
    request headers, HDR-6)."""
    return [(k, v) for k, v in config.headers.items() if k.lower() not in CLIENT_OWNED]


def modern_post_headers(
    config: ServerConfig, server: ServerInfo | None, out: Outgoing, *, streamable: bool
) -> tuple[tuple[str, str], ...]:
    """The headers of a 2026-07-28 POST: no session id; the content negotiation ones,
    then the request's own (computed by the connection: SHTTP-6, LIFE-11, HDR-6)."""
    base = HttpSessionState().post_headers(streamable=streamable, gzip=streamable)
    own = out.headers
    if own is None:
        # A message that is not a request (a notification, an answer): the version,
        # and the configured headers minus the client-owned Mcp-* ones.
        own = tuple(
            (name, value)
            for name, value in configured_headers(config)
            if not name.lower().startswith("mcp-")
        )
        if server is not None:
            own = (("MCP-Protocol-Version", server.protocol_version), *own)
    return (*base, *own)
