"""The one error hierarchy of mcp-proto, shared by the core and both shells.

Every failure a user can meet is one of these classes. A peer's garbage becomes a typed
error (or a discarded message), never a stray ``KeyError``. Several classes also derive
from a builtin so that idiomatic ``except`` clauses work: ``RequestTimeoutError`` is a
``TimeoutError``, the ``*NotFound`` classes are ``LookupError``s and ``ValidationError``
is a ``ValueError``.

Names follow the error rows of ``docs/requirements.md``. ``ConnectionError`` shadows the
builtin of the same name inside this module only: ``from mcp_proto.errors import *``
(and the packages' star exports) give it as ``MCPConnectionError``, leaving the builtin
alone; ``errors.ConnectionError`` is the same class. (Task errors come with tasks,
which are not built yet: ``docs/roadmap.md``.)
"""

from __future__ import annotations

import builtins
from typing import Any

__all__ = [
    "AllTransportsFailedError",
    "AmbiguousPromptName",
    "AmbiguousResourceURI",
    "AmbiguousToolName",
    "CapabilityError",
    "CommandNotFoundError",
    "HeaderAnnotationError",
    "HeaderMismatchError",
    "IncompatibleServerError",
    "InputRequiredError",
    "InsufficientScopeError",
    "LineTooLongError",
    "LocalProtocolError",
    "MCPConnectionError",
    "MCPError",
    "MissingRequiredClientCapabilityError",
    "PromptGetError",
    "PromptNotFound",
    "ProxyAuthenticationError",
    "ProxyError",
    "RemoteProtocolError",
    "RequestTimeoutError",
    "ResourceNotFound",
    "ResourceReadError",
    "ResponseStreamClosedError",
    "ResponseTooLargeError",
    "SchemaError",
    "ServerError",
    "ServerNotFound",
    "SessionExpiredError",
    "SkillError",
    "SkillVerificationError",
    "TaskError",
    "TaskNotFound",
    "TaskReplacedError",
    "ToolCallError",
    "ToolNotFound",
    "TransientServerError",
    "TransportDetectionError",
    "TransportError",
    "UnauthorizedError",
    "UnknownResultTypeError",
    "UnsupportedProtocolVersionError",
    "ValidationError",
    "WebSocketClosedError",
    "WebSocketHandshakeError",
    "WebSocketProtocolError",
    "server_error_from",
]


class MCPError(Exception):
    """Base class of every error mcp-proto raises on purpose.

    ``http_status``: the status of the HTTP response the error is about, when it is
    about one (a 404, a 500...), else ``None``; a fact for callers to decide on (connect
    says which path answered nothing), never read from the message."""

    http_status: int | None = None


class ConnectionError(MCPError):
    """The client could not connect, or the server is unusable (e.g. unsupported version)."""


MCPConnectionError = ConnectionError


class UnauthorizedError(ConnectionError):
    """The server refused our credentials: HTTP 401, or a 403 (AUTH, §B3 "HTTP 401/403").

    Built from the response's facts (status and ``WWW-Authenticate``), never from text.
    The Bearer challenge's parameters (RFC 6750 § 3, RFC 9728 § 5.1) are kept for an
    OAuth flow to act on: ``resource_metadata`` (the protected resource metadata URL),
    ``scope``, ``error`` (e.g. ``"invalid_token"``) and ``error_description``; each is
    ``None`` when the challenge did not carry it. ``status`` is 401 or 403.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int = 401,
        resource_metadata: str | None = None,
        scope: str | None = None,
        error: str | None = None,
        error_description: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = self.http_status = status
        self.resource_metadata = resource_metadata
        self.scope = scope
        self.error = error
        self.error_description = error_description


class InsufficientScopeError(UnauthorizedError):
    """HTTP 403 with a Bearer ``insufficient_scope`` challenge (still a ``ConnectionError``)."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 403,
        resource_metadata: str | None = None,
        scope: str | None = None,
        error: str | None = "insufficient_scope",
        error_description: str | None = None,
    ) -> None:
        super().__init__(
            message,
            status=status,
            resource_metadata=resource_metadata,
            scope=scope,
            error=error,
            error_description=error_description,
        )


class SessionExpiredError(ConnectionError):
    """The server answered HTTP 404 to a request carrying our ``Mcp-Session-Id``.

    2025-11-25 § Session Management: the session is over and the client starts a new
    one. The shells replace the session and re-send the request when the retry table
    allows it (RETRY-6); otherwise (``tools/call``, or a second expiry) the caller gets
    this error, and the next request runs on the new session.
    """


class IncompatibleServerError(ConnectionError):
    """The server answered ``initialize`` but cannot be used: it named a protocol
    revision this client does not speak (or none), or its result was not an object.

    Lifecycle § Version Negotiation: the client SHOULD disconnect. The answer proves an
    MCP server is there, so ``connect`` does not try another transport (issue 9).
    ``protocol_version`` is the server's value when it was a string.
    """

    def __init__(self, message: str, *, protocol_version: str | None = None) -> None:
        super().__init__(message)
        self.protocol_version = protocol_version


class TransportError(MCPError):
    """A transport, network or framing failure (the request may not have arrived)."""


class RequestTimeoutError(TransportError, builtins.TimeoutError):
    """No response within the request's timeout. Never retried automatically."""

    def __init__(self, message: str, *, method: str | None = None) -> None:
        super().__init__(message)
        self.method = method


class ResponseTooLargeError(TransportError):
    """A response (or a line, or an SSE event) grew past its configured bound."""


class LineTooLongError(ResponseTooLargeError):
    """A stdio line exceeded ``Limits.max_line_size`` without a newline."""


class ResponseStreamClosedError(TransportError):
    """A 2026-07-28 response stream broke twice (the original and its one re-issue)."""


class RemoteProtocolError(TransportError):
    """The peer broke the protocol in a way that ends the connection."""


class UnknownResultTypeError(RemoteProtocolError):
    """A result's ``resultType`` is one this client does not recognise (or not a string).

    2026-07-28 basic § ResultType: "A ``resultType`` of any value unrecognized by the
    client MUST be considered invalid" (LIFE-19). ``result_type`` is the peer's value,
    kept as given (it may be any JSON value); ``method`` is the request it answered.
    """

    def __init__(self, message: str, *, result_type: Any = None, method: str | None = None) -> None:
        super().__init__(message)
        self.result_type = result_type
        self.method = method


class WebSocketHandshakeError(ConnectionError):
    """The WebSocket opening handshake failed (RFC 6455 § 4.1): the server answered the
    upgrade with another status (``http_status``), chose no or another subprotocol than
    ``mcp``, sent a malformed answer, or closed the connection before answering."""


class WebSocketClosedError(ConnectionError):
    """The WebSocket connection ended: the server sent a Close frame (``code`` and
    ``reason`` are its own, RFC 6455 § 7.1.5) or the TCP connection ended without one
    (``code`` 1006)."""

    def __init__(self, message: str, *, code: int | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason


class WebSocketProtocolError(RemoteProtocolError):
    """The server broke the WebSocket protocol or MCP's use of it (a binary frame, text
    that is not UTF-8, a malformed frame); the client closed the connection with
    ``code`` (RFC 6455 § 7.4.1)."""

    def __init__(self, message: str, *, code: int) -> None:
        super().__init__(message)
        self.code = code


class ProxyError(ConnectionError):
    """The proxy between the client and the server failed the connection: its
    ``CONNECT`` answer was not 2xx (``http_status``), was malformed or too large, the
    proxy closed the connection or did not answer in time (``http_status`` ``None``).
    ``proxy`` is the proxy's URL without its credentials (mcp_proto/proxy_tunnel.py)."""

    proxy: str = ""


class ProxyAuthenticationError(ProxyError):
    """The proxy answered ``407 Proxy Authentication Required`` (RFC 9110 § 15.5.8):
    the proxy URL carried no credentials, or they were refused. The message names the
    proxy and the schemes it asks for, never the credentials."""


class LocalProtocolError(MCPError):
    """The caller asked the core for something illegal in the current state (a bug)."""


class ServerError(MCPError):
    """The server answered with a JSON-RPC error (or an HTTP 4xx). Never retried.

    ``code``, ``message`` and ``data`` are the server's own, so a handler can inspect them.
    The server's message is peer-controlled text: it is kept as given but only ever
    shown, never interpreted.
    """

    def __init__(
        self,
        message: str,
        *,
        code: int | None = None,
        data: Any = None,
        method: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.method = method

    def __str__(self) -> str:
        if self.code is None:
            return self.message
        return f"{self.message} (code {self.code})"


class TransientServerError(ServerError):
    """HTTP 5xx: the request most likely did not complete; retryable except ``tools/call``."""


class HeaderMismatchError(ServerError):
    """-32020: HTTP headers did not match the body (2026-07-28 Streamable HTTP § Server
    Validation). The pipeline refreshes ``tools/list`` and retries once before raising it
    (HDR-5)."""


class MissingRequiredClientCapabilityError(ServerError):
    """-32021: the server needs a client capability the request did not declare.

    ``required_capabilities`` is the server's ``data.requiredCapabilities`` when it is an
    object (schema ``MissingRequiredClientCapabilityError``), else ``None``.
    """

    def __init__(
        self,
        message: str,
        *,
        code: int | None = -32021,
        data: Any = None,
        method: str | None = None,
    ) -> None:
        super().__init__(message, code=code, data=data, method=method)
        found = data.get("requiredCapabilities") if isinstance(data, dict) else None
        self.required_capabilities: dict[str, Any] | None = (
            found if isinstance(found, dict) else None
        )


class UnsupportedProtocolVersionError(ServerError):
    """-32022: the server does not support the requested protocol version.

    ``supported`` lists the versions the server named in ``data.supported`` (only its
    string entries; empty when the data is malformed) and ``requested`` echoes
    ``data.requested`` when it is a string (schema ``UnsupportedProtocolVersionError``).
    A client picks a mutually supported version from ``supported`` and retries
    (2026-07-28 Versioning § Protocol Version Negotiation).
    """

    def __init__(
        self,
        message: str,
        *,
        code: int | None = -32022,
        data: Any = None,
        method: str | None = None,
        supported: tuple[str, ...] | None = None,
        requested: str | None = None,
    ) -> None:
        super().__init__(message, code=code, data=data, method=method)
        if supported is None:
            listed = data.get("supported") if isinstance(data, dict) else None
            # Peer data: keep the string entries only, never fail on the rest.
            supported = (
                tuple(v for v in listed if isinstance(v, str)) if isinstance(listed, list) else ()
            )
        if requested is None and isinstance(data, dict):
            found = data.get("requested")
            requested = found if isinstance(found, str) else None
        self.supported: tuple[str, ...] = supported
        self.requested: str | None = requested


class CapabilityError(MCPError):
    """The request needs a server capability that was not negotiated; nothing was sent."""


class ValidationError(MCPError, ValueError):
    """Data failed validation (structured output, tool arguments, elicitation content)."""


class SchemaError(ValidationError):
    """A JSON Schema is unusable (bad keyword value, external ``$ref``, bad dialect)."""


class HeaderAnnotationError(ValidationError):
    """A tool's ``x-mcp-header`` annotations break a rule of the 2026-07-28 revision.

    Streamable HTTP § Custom Headers from Tool Parameters: such a tool MUST be excluded
    from ``tools/list`` (HDR-3). ``rule`` names the first rule broken: ``"not-empty"``,
    ``"charset"``, ``"unique"``, ``"primitive-only"`` or ``"reachable"`` (the first four
    are the conformance suite's ``sep-2243-x-mcp-header-*`` check names).
    ``path`` is the chain of ``properties`` keys to the offending annotation (empty
    when it sits at the schema root); ``problems`` lists every violation found, one
    line each; ``tool`` is the tool's name when known.
    """

    def __init__(
        self,
        message: str,
        *,
        rule: str,
        path: tuple[str, ...] = (),
        problems: tuple[str, ...] = (),
        tool: str | None = None,
    ) -> None:
        super().__init__(message)
        self.rule = rule
        self.path = path
        self.problems = problems or (message,)
        self.tool = tool


class ResourceReadError(MCPError):
    """Reading or listing resources failed, or a subscription was not confirmed."""


class InputRequiredError(MCPError):
    """A multi round-trip (``input_required``) exchange could not be completed.

    §B1: more than 10 rounds, an unanswerable or malformed ``inputRequests``, a host
    that cancelled the wait, a wait past the request's timeout. It carries what a
    later ``resume_input_required`` needs: the last ``input_requests`` and the opaque
    ``request_state`` (echoed byte for byte, MRTR), the original ``request_method``
    and ``request_params``, and ``input_responses`` already produced (kept, MRTR rows).
    ``resumable`` is given explicitly by whoever raises it; left out, it is true when
    the original request is known (there is something to re-send).
    """

    def __init__(
        self,
        message: str,
        *,
        input_requests: Any = None,
        request_state: str | None = None,
        request_method: str | None = None,
        request_params: Any = None,
        input_responses: Any = None,
        resumable: bool | None = None,
    ) -> None:
        super().__init__(message)
        self.input_requests = input_requests
        self.request_state = request_state
        self.request_method = request_method
        self.request_params = request_params
        self.input_responses = input_responses
        self._resumable = resumable

    @property
    def resumable(self) -> bool:
        if self._resumable is not None:
            return self._resumable
        return self.request_method is not None


class TaskError(MCPError):
    """A task operation failed. ``task`` is the handle as it stood when it failed (with
    the input requests already answered, MRTR-8), when there is one: pass it to
    ``wait_for_task`` to go on."""

    def __init__(self, message: str, *, task: Any = None) -> None:
        super().__init__(message)
        self.task = task


class TaskReplacedError(TaskError):
    """The server reused a task handle's id for a new task."""


class TaskNotFound(TaskError, LookupError):
    """Task not found, unknown or expired on its server."""


class ToolNotFound(MCPError, LookupError):
    """No server offers a tool of that name."""


class PromptNotFound(MCPError, LookupError):
    """No server offers a prompt of that name."""


class ResourceNotFound(ResourceReadError, LookupError):
    """No server offers a resource with that URI."""


class ServerNotFound(MCPError, LookupError):
    """A ``server=`` selector matched no configured server."""


class AmbiguousToolName(MCPError):
    """Several servers offer a tool of that name and no ``server=`` was given."""


class AmbiguousPromptName(MCPError):
    """Several servers offer a prompt of that name and no ``server=`` was given."""


class AmbiguousResourceURI(MCPError):
    """Several servers offer a resource with that URI and no ``server=`` was given."""


class ToolCallError(MCPError):
    """A tool call failed below the protocol (transport/connection), naming the server."""


class PromptGetError(MCPError):
    """Getting a prompt failed below the protocol (transport/connection)."""


class TransportDetectionError(MCPError):
    """``connect`` could not tell which transport a target needs."""


class CommandNotFoundError(ConnectionError):
    """A command-line target's first word is neither on ``PATH`` nor a runnable file.

    The transport is known (stdio); the server cannot be started, which is a
    :class:`ConnectionError` (§B1 "cannot connect"), as a failed start was before this
    check existed. ``command`` is the word that did not resolve.
    """

    def __init__(self, message: str, *, command: str) -> None:
        super().__init__(message)
        self.command = command


class AllTransportsFailedError(ConnectionError):
    """Every transport of ``connect``'s fallback chain failed (CONN-6).

    ``attempts`` holds one ``(transport, url, error)`` per try, in order; the message
    names each of them.
    """

    def __init__(self, message: str, *, attempts: tuple[tuple[str, str, MCPError], ...]) -> None:
        super().__init__(message)
        self.attempts = attempts


# JSON-RPC error codes with a typed class of their own (docs/requirements.md §B3).
_CODE_CLASSES: dict[int, type[ServerError]] = {
    -32020: HeaderMismatchError,
    -32021: MissingRequiredClientCapabilityError,
    -32022: UnsupportedProtocolVersionError,
}


def server_error_from(error: Any, *, method: str | None = None) -> ServerError:
    """Build the typed ``ServerError`` for a JSON-RPC ``error`` member.

    ``error`` is peer data: anything that is not a well-formed error object still gives
    a ``ServerError`` (with ``code=None``), never a ``KeyError`` or ``TypeError``.
    """
    if not isinstance(error, dict):
        return ServerError("malformed JSON-RPC error object", method=method)
    code = error.get("code")
    if isinstance(code, bool) or not isinstance(code, int):
        code = None
    message = error.get("message")
    if not isinstance(message, str):
        message = "server error"
    cls = _CODE_CLASSES.get(code, ServerError) if code is not None else ServerError
    return cls(message, code=code, data=error.get("data"), method=method)


class SkillError(MCPError):
    """A skill (``io.modelcontextprotocol/skills``, SEP-2640) cannot be listed or
    loaded: the server does not offer the extension, the entry is malformed or over
    the limits, a name is ambiguous."""


class SkillVerificationError(SkillError):
    """A skill file failed verification against its listing entry (SEP-2640 §
    Integrity and verification): ``reason`` is ``"size"``, ``"digest"``,
    ``"frontmatter"`` or ``"unlisted"``; ``uri`` the file. Its content is not used."""

    def __init__(self, message: str, *, uri: str, reason: str) -> None:
        super().__init__(message)
        self.uri = uri
        self.reason = reason
