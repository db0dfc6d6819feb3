"""Serving the server's requests: ping, roots, sampling and elicitation.

The host registers plain callables (in the Trio shell they may be ``async``). This
module decides what to call, with which arguments (handlers may take fewer positional
arguments than offered: SAMP-2, ELIC-3), and turns what they return, or raise, into a
well-formed JSON-RPC answer. Host exception text never reaches the server (HYG-3): the
server gets a constant message, the local log gets the detail.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import attrs

from . import deprecations, jsonrpc
from .effects import CallHost, Log, Op
from .types import Root

__all__ = [
    "BUSY",
    "FAILED",
    "ContentRejected",
    "Handlers",
    "Reply",
    "adapt_args",
    "check_elicitation_content",
    "client_capabilities",
    "echo_related_task",
    "normalize_elicitation_result",
    "normalize_sampling_result",
    "requested_schema_problems",
    "serve_request",
    "validate_sampling_history",
]

_ELICITATION_MODES: Final = frozenset({"form", "url"})
_ACTIONS: Final = frozenset({"accept", "decline", "cancel"})


@attrs.frozen
class Reply:
    """The answer to one server request: a result, or an error (``code`` set)."""

    result: Any = None
    code: int | None = None
    message: str | None = None

    @property
    def is_error(self) -> bool:
        return self.code is not None


#: The answer to a server request refused at once because the client already holds
#: ``Limits.server_request_backlog`` of them (UT-8: bounded, never queued without end).
BUSY: Final = Reply(code=jsonrpc.INTERNAL_ERROR, message="Client busy")
#: The answer to a server request whose serving failed in the client itself (a bug, or
#: host code raising where a typed refusal was due): a JSON-RPC internal error.
FAILED: Final = Reply(code=jsonrpc.INTERNAL_ERROR, message="Internal error")


@attrs.frozen
class Handlers:
    """What the host registered for server-initiated requests."""

    sampling: Callable[..., Any] | None = None
    sampling_supports_tools: bool = False
    elicitation: Callable[..., Any] | None = None
    #: The roots to answer ``roots/list`` with (ROOT-4: always served, empty by default).
    roots: Callable[[], Sequence[Root]] = tuple
    #: Writes a deprecation notice to the client's logger (returns ``False`` when it
    #: went nowhere); given, serving a request that uses a feature the 2026-07-28
    #: revision deprecates announces it once per process (DEP-3, DEP-6, DEP-16).
    on_deprecated: Callable[[str], Any] | None = None


def client_capabilities(
    handlers: Handlers, *, roots: bool = True, roots_list_changed: bool = True
) -> dict[str, Any]:
    """Client capabilities derived from what the host registered (CAP-4), never fixed.

    ``roots`` is declared when the host registered roots (``roots=True``; ``roots/list``
    is still answered either way, ROOT-4); sampling and elicitation only with a
    handler; ``sampling.tools`` only with the opt-in.
    """
    caps: dict[str, Any] = {"roots": {"listChanged": roots_list_changed}} if roots else {}
    if handlers.sampling is not None:
        caps["sampling"] = {"tools": {}} if handlers.sampling_supports_tools else {}
    if handlers.elicitation is not None:
        caps["elicitation"] = {"form": {}, "url": {}}
    return caps


def adapt_args(fn: Callable[..., Any], args: Sequence[Any]) -> tuple[Any, ...]:
    """The leading ``args`` that ``fn`` requires positionally (all of them with ``*args``).

    Lets a host write ``lambda messages: ...`` or a five-argument handler alike. A
    parameter with a default is not counted: ``lambda m, s, a=answer: a`` (the usual
    way to bind a loop variable) keeps its ``a`` (issue 24 I).
    """
    import inspect  # lazy: only needed once a handler is actually called

    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return tuple(args)
    count = 0
    for param in sig.parameters.values():
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            return tuple(args)
        if param.default is not inspect.Parameter.empty:
            break  # (positional parameters after a defaulted one have defaults too)
        if param.kind in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        ):
            count += 1
    return tuple(args[:count])


#: 2025-11-25 § Related Task Metadata: the ``_meta`` key tying a message to its task.
RELATED_TASK: Final = "io.modelcontextprotocol/related-task"


def serve_request(
    handlers: Handlers, method: str, params: Mapping[str, Any], *, server: str
) -> Op[Reply]:
    """Answer one server request. Never raises: every outcome is a :class:`Reply`."""
    if method == "ping":
        return Reply(result={})
    if method == "roots/list":
        reply = yield from _roots(handlers, server)
    elif method == "sampling/createMessage":
        reply = yield from _sampling(handlers, params, server)
    elif method == "elicitation/create":
        reply = yield from _elicitation(handlers, params, server)
    else:
        return Reply(code=jsonrpc.METHOD_NOT_FOUND, message="Method not found")
    if reply.is_error:
        return reply
    return Reply(result=echo_related_task(params, reply.result))


def echo_related_task(request_params: Any, result: Any) -> Any:
    """SAMP-10: a request that names its task in ``_meta`` (a 2025-11-25 server asking
    for input on a task's ``tasks/result`` stream) gets the same related-task ``_meta``
    on its answer ("all requests, responses, and notifications associated with a task
    MUST include" it). ``result`` is returned as is when there is nothing to echo."""
    meta = request_params.get("_meta") if isinstance(request_params, Mapping) else None
    related = meta.get(RELATED_TASK) if isinstance(meta, Mapping) else None
    if not isinstance(related, Mapping) or not isinstance(related.get("taskId"), str):
        return result
    if not isinstance(result, Mapping):
        return result
    out = dict(result)
    own = out.get("_meta")
    out["_meta"] = {
        **(own if isinstance(own, Mapping) else {}),
        RELATED_TASK: {"taskId": related["taskId"]},
    }
    return out


def _roots(handlers: Handlers, server: str) -> Op[Reply]:
    try:
        roots = yield CallHost(handlers.roots)
        listed = [Root.coerce(r).to_dict() for r in roots]
    except Exception as exc:
        yield Log("ERROR", f"roots handler failed for server {server!r}: {exc!r}")
        return FAILED
    reply = {"roots": listed}
    if deprecations.roots_answer_exposes(reply):  # DEP-16: only an answer with a root
        _deprecated(handlers, ("roots",))
    return Reply(result=reply)


def _deprecated(handlers: Handlers, keys: Sequence[str]) -> None:
    """Announce deprecated features through the host's logger; never raises (DEP-12)."""
    emit = handlers.on_deprecated
    if emit is not None:
        for key in keys:
            deprecations.announce(key, emit)


# ---------------------------------------------------------------- sampling


def validate_sampling_history(messages: Any) -> str | None:
    """Check a sampling request's message history (SAMP-6). Returns a problem or None.

    Every message has role user/assistant and content; a user message carrying tool
    results carries nothing else; every assistant tool use is answered by tool results
    in the next user message (2025-11-25, Client Features § Sampling, tool use).
    """
    if not isinstance(messages, list):
        return "messages must be a list"
    pending_tool_uses: set[str] = set()
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or msg.get("role") not in ("user", "assistant"):
            return f"message {i} has no valid role"
        content = msg.get("content")
        if content is None:
            return f"message {i} has no content"
        items = content if isinstance(content, list) else [content]
        if not all(isinstance(c, dict) for c in items):
            return f"message {i} has malformed content"
        kinds = [c.get("type") for c in items]
        if msg["role"] == "user":
            if "tool_result" in kinds and any(k != "tool_result" for k in kinds):
                return f"message {i} mixes tool results with other content"
            results = [c for c in items if c.get("type") == "tool_result"]
            # ToolResultContent.toolUseId is a string (2025-11-25 schema); a list or an
            # object here is malformed params, not a set member (issue 11, case 1).
            if not all(isinstance(c.get("toolUseId"), str) for c in results):
                return f"message {i} has a tool result without a string toolUseId"
            answered = {c["toolUseId"] for c in results}
            if pending_tool_uses and not pending_tool_uses <= answered:
                return f"message {i} does not answer every tool use of the previous message"
            pending_tool_uses = set()
        else:
            if pending_tool_uses:
                return f"message {i} follows unanswered tool uses"
            uses = [c for c in items if c.get("type") == "tool_use"]
            if not all(isinstance(c.get("id"), str) for c in uses):
                return f"message {i} has a tool use without a string id"
            pending_tool_uses = {c["id"] for c in uses}
    return None


def _normalize_model_preferences(prefs: Any) -> dict[str, Any]:
    """SAMP-5: hints as ``[{name}]``, priorities clamped to 0..1."""
    if not isinstance(prefs, dict):
        return {}
    out: dict[str, Any] = {}
    hints = prefs.get("hints")
    if isinstance(hints, list):
        out["hints"] = [
            {"name": h["name"]}
            if isinstance(h, dict) and isinstance(h.get("name"), str)
            else {"name": h}
            for h in hints
            if isinstance(h, str) or (isinstance(h, dict) and isinstance(h.get("name"), str))
        ]
    for key in ("costPriority", "speedPriority", "intelligencePriority"):
        value = prefs.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = min(1.0, max(0.0, float(value)))
    return out


def normalize_sampling_result(value: Any) -> dict[str, Any]:
    """Turn what a sampling handler returned into a ``CreateMessageResult`` (SAMP-4)."""
    if isinstance(value, str):
        value = {"content": {"type": "text", "text": value}}
    elif not isinstance(value, Mapping):
        value = {"content": {"type": "text", "text": str(value)}}
    result = {str(k): v for k, v in value.items()}
    content = result.get("content")
    if isinstance(content, str):
        content = {"type": "text", "text": content}
    elif content is None:
        content = {"type": "text", "text": ""}
    result["content"] = content
    result.setdefault("role", "assistant")
    result.setdefault("model", "unknown")
    if "stopReason" not in result:
        items = content if isinstance(content, list) else [content]
        uses_tool = any(isinstance(c, dict) and c.get("type") == "tool_use" for c in items)
        result["stopReason"] = "toolUse" if uses_tool else "endTurn"
    return result


def _sampling(handlers: Handlers, params: Mapping[str, Any], server: str) -> Op[Reply]:
    if handlers.sampling is None:
        return Reply(code=jsonrpc.METHOD_NOT_FOUND, message="Method not found")
    if ("tools" in params or "toolChoice" in params) and not handlers.sampling_supports_tools:
        # SAMP-3: tool use in sampling needs the client's sampling.tools capability.
        return Reply(code=jsonrpc.INVALID_PARAMS, message="Sampling with tools is not supported")
    messages = params.get("messages")
    problem = validate_sampling_history(messages)
    if problem is not None:
        return Reply(code=jsonrpc.INVALID_PARAMS, message=f"Invalid sampling request: {problem}")
    max_tokens = params.get("maxTokens")
    args = (
        messages,
        _normalize_model_preferences(params.get("modelPreferences")),
        params.get("systemPrompt") if isinstance(params.get("systemPrompt"), str) else None,
        max_tokens if isinstance(max_tokens, int) and not isinstance(max_tokens, bool) else None,
        dict(params),
    )
    if params.get("includeContext") in ("thisServer", "allServers"):
        yield Log("INFO", f"server {server!r} asked for includeContext (deprecated)")
    _deprecated(handlers, deprecations.features_in_sampling_request(params))  # DEP-3, DEP-6
    try:
        value = yield CallHost(handlers.sampling, adapt_args(handlers.sampling, args))
    except Exception as exc:
        yield Log("ERROR", f"sampling handler failed for server {server!r}: {exc!r}")
        return Reply(code=jsonrpc.INTERNAL_ERROR, message="Sampling error")
    if value is None:
        # The user (host) rejected the request; the spec's example uses -1.
        return Reply(code=-1, message="Sampling rejected")
    return Reply(result=normalize_sampling_result(value))


# ---------------------------------------------------------------- elicitation


def _primitive(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool)) or (
        isinstance(value, list) and all(isinstance(v, str) for v in value)
    )


def check_elicitation_content(schema: Any, content: Mapping[str, Any]) -> str | None:
    """Check accepted form content against ``requestedSchema`` (the spec's restricted
    flat form: an object of primitive properties). Returns a problem or None."""
    if not all(isinstance(k, str) and _primitive(v) for k, v in content.items()):
        return "content must be an object of primitive values"
    if not isinstance(schema, dict):
        return None
    from .schema import errors_for  # local: keeps jsonschema-rs off the import path

    try:
        problems = errors_for(schema, dict(content), limit=1)
    except ValueError:
        return None  # an unusable schema is the server's problem, not the user's answer
    return problems[0] if problems else None


def _apply_defaults(schema: Any, content: dict[str, Any]) -> dict[str, Any]:
    """SEP-1034: a property the user left out takes the schema's ``default``."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    if isinstance(props, dict):
        for name, prop in props.items():
            if name not in content and isinstance(prop, dict) and "default" in prop:
                content[name] = prop["default"]
    return content


class ContentRejected(ValueError):
    """Accepted form content that cannot be sent: not an object of primitives, or not
    valid against ``requestedSchema`` (ELIC-6). The server is answered -32603 (§B2)."""


def normalize_elicitation_result(
    value: Any, *, mode: str, schema: Any = None
) -> tuple[dict[str, Any], str | None]:
    """Turn a handler's return into an ``ElicitResult``; also return a warning or None.

    Consent is never invented (ELIC-5, ELIC-9): an unknown ``action`` becomes
    ``cancel``. In form mode a bare mapping is the content of an ``accept`` (ELIC-4).
    In URL mode only an explicit action (or ``True``) counts, content is dropped.

    Raises:
        ContentRejected: form mode, content that is not transmitted (ELIC-6): the
            handler returned no mapping, or the content is not an object of primitive
            values or fails ``requestedSchema``; the message says what is wrong.
    """
    meta = value.get("_meta") if isinstance(value, Mapping) else None
    extra = {"_meta": meta} if isinstance(meta, dict) else {}
    if value is None:
        return {"action": "cancel", **extra}, None
    if mode == "url":
        if value is True:
            return {"action": "accept"}, None
        action = value.get("action") if isinstance(value, Mapping) else None
        if isinstance(action, str) and action in _ACTIONS:
            return {"action": action, **extra}, None
        return {"action": "cancel", **extra}, "URL elicitation answer had no valid action"
    if not isinstance(value, Mapping):
        raise ContentRejected(
            f"the handler returned {type(value).__name__}, neither a mapping nor None"
        )
    if "action" in value:
        action = value["action"]
        if not isinstance(action, str) or action not in _ACTIONS:
            return {"action": "cancel", **extra}, f"unknown elicitation action {action!r}"
        if action != "accept":
            return {"action": action, **extra}, None
        content = value.get("content", {})
        if not isinstance(content, Mapping):
            raise ContentRejected(f"accepted content is a {type(content).__name__}, not an object")
        content = dict(content)
    else:
        content = {str(k): v for k, v in value.items() if k != "_meta"}
    content = _apply_defaults(schema, content)
    problem = check_elicitation_content(schema, content)
    if problem is not None:
        raise ContentRejected(problem)
    return {"action": "accept", "content": content, **extra}, None


#: What a form's string property may declare as its ``format`` (2025-11-25 schema,
#: ``StringSchema``).
_FORM_FORMATS: Final = frozenset({"email", "uri", "date", "date-time"})
_FORM_TYPES: Final = frozenset({"string", "number", "integer", "boolean"})
#: At most this many problems are named in the warning.
_MAX_SCHEMA_PROBLEMS: Final = 5


def requested_schema_problems(schema: Any) -> list[str]:
    """Where ``requestedSchema`` leaves the restricted form the spec allows (ELIC-7):
    a flat object of string / number / integer / boolean / enum properties, string
    formats email, uri, date and date-time. Warnings only: the handler still gets the
    schema as it is (a host may cope), and answers are still validated against it."""
    if not isinstance(schema, Mapping):
        return [f"requestedSchema is a {type(schema).__name__}, not an object"]
    problems: list[str] = []
    if schema.get("type") != "object":
        problems.append("its type is not 'object'")
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        problems.append("it has no 'properties' object")
        props = {}
    for name, prop in props.items():
        shown = str(name)[:40]
        if not isinstance(prop, Mapping):
            problems.append(f"property {shown!r} is not a schema object")
            continue
        kind = prop.get("type")
        if kind == "array":
            items = prop.get("items")
            if not (isinstance(items, Mapping) and ("enum" in items or "anyOf" in items)):
                problems.append(f"property {shown!r} is an array that is not a multi-select enum")
        elif not isinstance(kind, str) or kind not in _FORM_TYPES:
            problems.append(
                f"property {shown!r} has type {kind!r}, not string, number, integer, "
                "boolean or an enum (forms are flat)"
            )
        fmt = prop.get("format")
        if fmt is not None and (not isinstance(fmt, str) or fmt not in _FORM_FORMATS):
            problems.append(f"property {shown!r} has format {str(fmt)[:40]!r}")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        problems.append("'required' is not a list of names")
    else:
        missing = [r for r in required if r not in props]
        if missing:
            problems.append(f"'required' names {len(missing)} undefined propert(y/ies)")
    return problems[:_MAX_SCHEMA_PROBLEMS]


def _elicitation(handlers: Handlers, params: Mapping[str, Any], server: str) -> Op[Reply]:
    mode = params.get("mode", "form")
    # Peer data: a list or an object here must not reach the set lookup (unhashable).
    if not isinstance(mode, str) or mode not in _ELICITATION_MODES:
        return Reply(code=jsonrpc.INVALID_PARAMS, message="Unsupported elicitation mode")
    if handlers.elicitation is None:
        return Reply(code=jsonrpc.METHOD_NOT_FOUND, message="Method not found")
    message = params.get("message") if isinstance(params.get("message"), str) else ""
    if mode == "url":
        detail: Any = {"mode": "url", "url": params.get("url")}
        if "elicitationId" in params:
            detail["elicitationId"] = params["elicitationId"]
        schema = None
    else:
        schema = params.get("requestedSchema")
        detail = schema
        problems = requested_schema_problems(schema)
        if problems:
            yield Log(
                "WARNING",
                f"server {server!r} asked for a form outside the spec's restricted "
                f"schema: {'; '.join(problems)}",
            )
    metadata = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    args = (message, detail, metadata)
    try:
        value = yield CallHost(handlers.elicitation, adapt_args(handlers.elicitation, args))
    except Exception as exc:
        yield Log("ERROR", f"elicitation handler failed for server {server!r}: {exc!r}")
        return Reply(code=jsonrpc.INTERNAL_ERROR, message="Elicitation handler error")
    try:
        result, warning = normalize_elicitation_result(value, mode=mode, schema=schema)
    except ContentRejected as exc:
        # ELIC-6, §B2: content that does not fit is never transmitted. The detail is
        # the user's answer: it stays in the local log (HYG-3).
        yield Log("WARNING", f"server {server!r}: elicitation content rejected: {exc}")
        return Reply(
            code=jsonrpc.INTERNAL_ERROR,
            message="Elicitation answer does not match the requested schema",
        )
    if warning is not None:
        yield Log("WARNING", f"server {server!r}: {warning}; answered cancel")
    return Reply(result=result)
