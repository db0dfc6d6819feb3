"""OAuth on the HTTP transports (issue 21; 2025-11-25 and 2026-07-28
``basic/authorization``): the connection machine drives
:class:`mcp_proto.oauth.OAuthProvider`'s flow.

* Every request to the MCP server carries the current token (SHTTP-10: the POSTs, the
  GET stream, the closing DELETE): ``Authorization: Bearer``, or ``DPoP`` with a proof.
* A 401, or a 403 ``insufficient_scope`` (step-up), parks the refused request and runs
  ``provider.authorize``: its HTTP requests (metadata, registration, token) are
  ``StartExchange`` frames to their own origins, read up to their bound; what needs the
  host (the browser, an assertion) is an ``OAuthInteraction`` frame the driver answers
  with ``Connection.oauth_reply``. Requests refused meanwhile wait for the same flow.
* Once a token is there the parked requests are sent again with it; a request causes at
  most ``MAX_AUTHORIZATIONS`` authorizations, then its refusal is its error. A failed
  flow fails them with its ``OAuthError`` (chained to the refusal, ``http_status``).
* RFC 9449 § 9: a resource's ``use_dpop_nonce`` 401 is answered once with the nonce.

Only loaded for a server with an ``oauth_provider`` (a plain client never imports the
OAuth core: tests/test_oauth_import.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from .. import deprecations
from ..errors import ConnectionError, MCPError, UnauthorizedError
from ..http import unauthorized_error
from ..oauth import (
    MAX_AUTHORIZATIONS,
    BearerChallenge,
    HttpRequest,
    HttpResponse,
    Notice,
    OAuthError,
    OAuthProvider,
    bearer_challenge,
)
from ..oauth._base import _challenge_error
from ..oauth._urls import origin_of
from ._exchange import Exchange, Mode, failure_error
from .frames import AbortExchange, ExchangeFailure, OAuthInteraction, StartExchange

if TYPE_CHECKING:
    from ..oauth import Flow, Token
    from ._http import HttpTransport

__all__ = ["OAuthSession"]

_NO_HANDLER = (
    "the server needs an OAuth authorization and no handler was configured "
    "(OAuthProvider(handler=...), BrowserOAuth, or `mcp-proto login URL` first)"
)


@attrs.define(eq=False)
class _AuthExchange:
    """One request of the flow (not the MCP server's): its response, bounded."""

    request: HttpRequest
    status: int = 0
    headers: tuple[tuple[str, str], ...] = ()
    parts: list[bytes] = attrs.Factory(list)
    size: int = 0


class OAuthSession:
    """One server's OAuth state inside its HTTP transport."""

    def __init__(self, transport: HttpTransport, provider: OAuthProvider) -> None:
        self.transport = transport
        self.provider = provider
        self._flow: Flow[Token] | None = None
        self._refusal: UnauthorizedError | None = None
        self._status = 401
        self._ex: dict[int, _AuthExchange] = {}
        self._parked: list[tuple[Exchange, StartExchange]] = []
        # Streams refused meanwhile: what reopens each once authorized, and what ends
        # it if the flow fails.
        self._streams: list[tuple[Callable[[float], None], Callable[[MCPError, float], None]]] = []
        self._asking = False  # an OAuthInteraction is with the host
        # Authorizations since one last proved useful (a request sent again after one
        # succeeded): at most MAX_AUTHORIZATIONS in a row for the whole connection, not
        # per request (a probe that gave up and the handshake after it, accepted
        # without a new token, would otherwise start over: the conformance suite's
        # scope-retry-limit counts every attempt).
        self._streak = 0

    # ------------------------------------------------------------ time

    def _wall(self, now: float | None) -> float:
        """The provider's clock (wall time: token expiry survives restarts), else the
        machine's ``now`` (else the last time the provider was given)."""
        clock = self.provider.clock
        if clock is not None:
            return clock()
        return now if now is not None else self.provider._now

    # ------------------------------------------------------------ presenting

    def _usable_token(self, now: float | None) -> Token | None:
        provider = self.provider
        provider._tick(self._wall(now))
        token = provider.current_token()
        if token is None or token.is_expired(provider._now):
            return None
        return token

    def present(self, frame: StartExchange, now: float | None) -> StartExchange:
        """``frame`` carrying the current token (SHTTP-10); unchanged without one (a
        configured ``Authorization`` header stays then)."""
        token = self._usable_token(now)
        if token is None:
            return frame
        sent = self.provider.present(HttpRequest(frame.method, frame.url, frame.headers), token)
        return StartExchange(
            frame.xid,
            frame.method,
            frame.url,
            sent.headers,
            frame.body,
            frame.read_timeout,
            frame.streaming,
        )

    def seen(self, ex: Exchange, status: int, headers: list[tuple[str, str]]) -> None:
        """A head of the MCP server: keep its DPoP nonce (RFC 9449 § 9: the last one a
        server gave is used in the next proof to it)."""
        if 200 <= status < 300 and ex.authorizations:
            self._streak = 0  # an authorization proved useful: the request it answered went
        for key, value in headers:
            if key.lower() == "dpop-nonce":
                ex.dpop_nonce = value
                if self.provider.dpop_key is not None:
                    self.provider._dpop_nonces[origin_of(self.transport.url)] = value
                return

    # ------------------------------------------------------------ refusals

    def refused(self, ex: Exchange, now: float) -> bool:
        """``ex`` (a POST) was answered 401/403 and its body read. True: it is being
        dealt with (sent again, or parked until a flow ends); False: its refusal is
        its error."""
        request, ex.refused = ex.refused, None
        if request is None or ex.status not in (401, 403):
            return False
        header = ex.www_authenticate
        if (
            ex.status == 401
            and ex.dpop_nonce
            and not ex.nonce_retried
            and _challenge_error(header, "dpop") == "use_dpop_nonce"
        ):
            # RFC 9449 § 9: the resource wants a nonce; not a refusal of the token.
            self._send_again(ex, request, now, nonce_retried=True)
            return True
        challenge = bearer_challenge(header)
        if ex.status == 403 and (challenge is None or not challenge.insufficient_scope):
            return False  # a plain 403 is a refusal no token fixes
        if ex.authorizations >= MAX_AUTHORIZATIONS or (
            self._flow is None and self._streak >= MAX_AUTHORIZATIONS
        ):
            return False
        sent = _header(request.headers, "authorization")
        token = self.provider.current_token()
        current = token.authorization_header() if token is not None else None
        if self._flow is None and sent is not None and current is not None and sent != current:
            # Sent with a token replaced since: send it again with the new one.
            self._send_again(ex, request, now, authorizations=ex.authorizations + 1)
            return True
        self._parked.append((ex, request))
        self._join(ex.status, header, challenge, sent, token, now)
        return True

    def refused_stream(
        self,
        ex: Exchange,
        reopen: Callable[[float], None],
        give_up: Callable[[MCPError, float], None],
        now: float,
    ) -> bool:
        """A stream (the Streamable HTTP GET stream, the legacy HTTP+SSE event stream)
        was answered 401, or 403 ``insufficient_scope``; its head is in ``ex``. True: a
        flow will ``reopen`` it with the token (or ``give_up`` with the flow's error);
        False: its refusal stands (no OAuth can help, or the authorization bound is
        reached). MCP ``basic/authorization`` asks for the token "in every HTTP request
        from client to server", the GET included; a refused one is authorized the same
        way as a POST."""
        request, ex.refused = ex.refused, None
        if request is None or ex.status not in (401, 403):
            return False
        header = ex.www_authenticate
        challenge = bearer_challenge(header)
        if ex.status == 403 and (challenge is None or not challenge.insufficient_scope):
            return False
        if self._flow is None and self._streak >= MAX_AUTHORIZATIONS:
            return False
        sent = _header(request.headers, "authorization")
        token = self.provider.current_token()
        current = token.authorization_header() if token is not None else None
        if self._flow is None and sent is not None and current is not None and sent != current:
            reopen(now)  # sent with a token replaced since: open it with the new one
            return True
        self._streams.append((reopen, give_up))
        self._join(ex.status, header, challenge, sent, token, now)
        return True

    def _join(
        self,
        status: int,
        header: str | None,
        challenge: BearerChallenge | None,
        sent: str | None,
        token: Token | None,
        now: float,
    ) -> None:
        """Start the flow for a refusal, unless one runs (its end answers this one too)."""
        if self._flow is not None:
            return
        wall = self._wall(now)
        self.provider._tick(wall)
        # The token that was refused (expired ones included: a refresh may help).
        presented = token if sent is not None else None
        if presented is None and token is not None and token.is_expired(wall):
            presented = token
        self._status = status
        self._refusal = unauthorized_error(status, header)
        self._flow = self.provider.authorize(challenge, wall, status=status, presented=presented)
        self._step(None, None, now)

    def _send_again(
        self,
        ex: Exchange,
        request: StartExchange,
        now: float,
        *,
        authorizations: int | None = None,
        nonce_retried: bool | None = None,
    ) -> None:
        t = self.transport
        if ex.rid is not None and not t.port.is_pending(ex.rid):
            return  # answered, cancelled or timed out meanwhile
        again = attrs.evolve(
            ex,
            xid=t._xid(),
            mode=Mode.HEAD,
            status=0,
            www_authenticate=None,
            decoder=None,
            parser=None,
            parts=[],
            size=0,
            request=None,
            refused=None,
            dpop_nonce=None,
            authorizations=ex.authorizations if authorizations is None else authorizations,
            nonce_retried=ex.nonce_retried if nonce_retried is None else nonce_retried,
        )
        t._ex[again.xid] = again
        read_timeout = t._read_timeout(ex.rid, now) if ex.rid is not None else request.read_timeout
        frame = StartExchange(
            again.xid,
            request.method,
            request.url,
            request.headers,
            request.body,
            read_timeout,
            request.streaming,
        )
        t._start(again, frame, now)

    # ------------------------------------------------------------ the flow

    def _step(self, reply: Any, error: BaseException | None, now: float) -> None:
        """Run the flow until it needs an exchange or the host, or ends."""
        flow = self._flow
        assert flow is not None
        while True:
            try:
                effect = flow.throw(error) if error is not None else flow.send(reply)
            except StopIteration:
                self._flow = None
                self._resume(now)
                return
            except OAuthError as exc:
                self._flow = None
                exc.http_status = self._status
                exc.__cause__ = self._refusal
                self._fail(exc, now)
                return
            except MCPError as exc:  # the refusal itself (the flow's bound), typed errors
                self._flow = None
                self._fail(exc, now)
                return
            except Exception as exc:  # a host storage's failure, say: typed, never a crash
                self._flow = None
                failed = ConnectionError(f"the OAuth flow failed ({type(exc).__name__})")
                failed.__cause__ = exc
                self._fail(failed, now)
                return
            error = None
            reply = None
            if isinstance(effect, HttpRequest):
                self._fetch(effect, now)
                return
            if isinstance(effect, Notice):
                self._notice(effect)
                continue
            if self.provider.handler is None:
                error = UnauthorizedError(_NO_HANDLER)
                continue
            self._asking = True
            self.transport.port.emit(OAuthInteraction(effect, self.provider.handler))
            return

    def _notice(self, notice: Notice) -> None:
        """A flow's notice as the server's log record. A deprecation (DEP-7: dynamic
        registration) goes through the registry, as every deprecation notice does: the
        registry's text, once per process, announced by the driver with the host's
        logger (DEP-11, DEP-12); the rest as WARNING (a migration) or INFO."""
        port = self.transport.port
        key = notice.deprecation
        if notice.kind == "deprecation" and key:
            if deprecations.state(key) == "due":
                port.diagnostic("warning", deprecations.REGISTRY[key].notice, deprecation=key)
            return
        level = "warning" if notice.kind == "migration" else "info"
        port.diagnostic(level, f"server {port.name!r}: OAuth: {notice.message}")

    def reply(self, value: Any, now: float) -> None:
        """The host's answer to an ``OAuthInteraction`` (an exception: it failed)."""
        if not self._asking or self._flow is None:
            return
        self._asking = False
        if isinstance(value, BaseException):
            self._step(None, value, now)
        else:
            self._step(value, None, now)

    def _fetch(self, request: HttpRequest, now: float) -> None:
        t = self.transport
        xid = t._xid()
        self._ex[xid] = _AuthExchange(request)
        t.port.emit(
            StartExchange(
                xid,
                request.method,
                request.url,
                request.headers,
                request.body if request.body or request.method != "GET" else None,
                t.port.config.read_timeout,
                False,
            )
        )

    def _resume(self, now: float) -> None:
        self._streak += 1
        parked, self._parked = self._parked, []
        streams, self._streams = self._streams, []
        for ex, request in parked:
            self._send_again(ex, request, now, authorizations=ex.authorizations + 1)
        for reopen, _give_up in streams:
            reopen(now)

    def _fail(self, error: MCPError, now: float) -> None:
        parked, self._parked = self._parked, []
        streams, self._streams = self._streams, []
        for ex, _request in parked:
            self.transport._attempt_error(ex, error, now)
        for _reopen, give_up in streams:
            give_up(error, now)

    # ------------------------------------------------------------ the flow's exchanges

    def owns(self, xid: int) -> bool:
        return xid in self._ex

    def head(self, xid: int, status: int, headers: list[tuple[str, str]]) -> None:
        aex = self._ex[xid]
        aex.status = status
        aex.headers = tuple(headers)

    def data(self, xid: int, data: bytes, now: float) -> None:
        aex = self._ex[xid]
        bound = aex.request.max_response_bytes
        aex.parts.append(data)
        aex.size += len(data)
        if bound is not None and aex.size > bound:
            # Enough to know it is too large: the flow refuses it (a 100 MB or endless
            # document costs a bounded read).
            self.transport.port.emit(AbortExchange(xid))
            self.end(xid, now)

    def end(self, xid: int, now: float) -> None:
        aex = self._ex.pop(xid)
        body = b"".join(aex.parts)
        if self._flow is None:
            return
        self._step(HttpResponse(aex.status, aex.headers, body, self._wall(now)), None, now)

    def failed(self, xid: int, failure: ExchangeFailure, now: float) -> None:
        aex = self._ex.pop(xid)
        if self._flow is None:
            return
        self._flow.close()
        self._flow = None
        what = f"OAuth {aex.request.purpose.replace('_', ' ')} request to {aex.request.url}"
        self._fail(failure_error(failure, what), now)

    def reset(self) -> None:
        """The transport is being reset: the flow's own exchanges are not wanted."""
        for xid in list(self._ex):
            self.transport.port.emit(AbortExchange(xid))
        self._ex.clear()
        if self._flow is not None:
            self._flow.close()
            self._flow = None
        self._parked.clear()
        self._streams.clear()
        self._asking = False


def _header(headers: tuple[tuple[str, str], ...], name: str) -> str | None:
    return next((v for k, v in headers if k.lower() == name), None)
