#!/usr/bin/env python3
"""A real MCP server built with the official Python SDK (``mcp==2.3.0``), used as a test peer.

Start it over stdio (the default; the SDK serves both the ``initialize`` handshake era and the
2026-07-28 per-request ``_meta`` era on the same pipe, the client's first request decides)::

    python tests/servers/sdk_server.py
    python tests/servers/sdk_server.py --transport streamable-http --port 8765 \
        [--stateless] [--json-response] [--path /]
    python tests/servers/sdk_server.py --transport sse --port 8765
    python tests/servers/sdk_server.py --transport streamable-http --uds /tmp/mcp.sock
    python tests/servers/sdk_server.py --era legacy ...   # or --era modern (default: dual)

``--era`` narrows the dual-era server to one era, on every transport (for the dual-era
matrix, tests/shells/test_dual_era_matrix.py):

``dual`` (default)
    the SDK as shipped: the client's first request decides the era.
``legacy``
    a handshake-only server, answering like the published pre-2026 servers: over HTTP a
    POST whose ``MCP-Protocol-Version`` header is not a handshake revision gets
    ``400`` with JSON-RPC error -32600 ("Bad Request: Unsupported protocol version: ...",
    the 2025 SDKs' header check); on any transport ``server/discover`` gets -32601 (method
    not found) and any other request carrying the 2026-07-28 ``_meta`` envelope gets
    -32600 (no handshake happened).
``modern``
    a 2026-07-28-only server: ``initialize`` gets -32022 (UnsupportedProtocolVersionError,
    ``data.supported`` = the modern revisions, ``data.requested`` = the version asked
    for); over HTTP a POST with a handshake ``MCP-Protocol-Version`` (or none) gets that
    error with status 400 before the SDK sees it.

What it offers (names are part of the test contract, keep them stable):

tools
    echo(text)              -> the text (no outputSchema; only add/bad_structured declare one)
    add(a: int, b: int)     -> structuredContent {"sum": a+b}, outputSchema declared
    bad_structured()        -> structuredContent {"sum": "not a number"} violating its outputSchema
    missing_structured()    declares add's outputSchema but returns text content only (no
                            structuredContent at all)
    slow(seconds: float)    sleeps; records "slow:done" / "slow:cancelled" (see events) and prints
                            "SLOW DONE seconds=S" / "SLOW CANCELLED seconds=S" to stderr
    progress(steps, delay=0.01)  progress i/steps, message "step i/steps", then "done"
    chatty(steps, delay=0.01)    per step: ctx.info "working on step i" (logger
                            "sdk_server"), then progress i/steps; then "done"
    sample(prompt)          sends sampling/createMessage, returns the text the client answered
    elicit_name()           elicits a form {name: string}; returns JSON {"action", "content"}
    list_roots()            sends roots/list; returns the roots as JSON list [{"uri", "name"}]
                            (these three: if the client answers a JSON-RPC error, the result is
                            isError with text JSON {"error": {"code", "message"[, "data"]}}; if
                            its result is malformed, {"invalid_result": "..."})
    log(level, message)     notifications/message (logger "sdk_server") unless below the level
                            set by logging/setLevel; returns "sent" or "suppressed"
    change_tools()          adds tool dynamic_<n> (returns "dynamic <n>"), sends
                            notifications/tools/list_changed; returns the new name
    fail()                  isError result, text "Error executing tool fail: intentional failure"
    big(n: int)             -> "x" * n
    stderr_spam(n, line_length=1024)  writes exactly n bytes to stderr, then returns
    touch(uri, force=False) notifications/resources/updated (only for a subscribed uri unless
                            force); returns "sent" or "not subscribed"
    events()                the recorded server events (JSON list of strings), then clears them

resources
    ``demo://text`` (text/plain), ``demo://blob`` (application/octet-stream, bytes 0..255),
    template ``demo://item/{id}``; ``resources/subscribe`` / ``resources/unsubscribe`` are served.

prompts
    ``greet(name)`` -> one user message ``"Please greet <name>."``.

completion
    prompt ``greet`` argument ``name``: values of ["Alice", "Alex", "Bob"] starting with the typed
    prefix; template ``demo://item/{id}`` argument ``id``: values of ["1", "2", "3", "10", "42"]
    starting with the prefix.

logging
    ``logging/setLevel`` is accepted (capability ``logging`` is declared).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Callable
from typing import Any, Literal

import anyio
from mcp.server import InitializationOptions, MCPServer, NotificationOptions, ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.types import (
    CallToolResult,
    Completion,
    CompletionArgument,
    CompletionContext,
    EmptyResult,
    PromptReference,
    ResourceTemplateReference,
    SamplingMessage,
    SetLevelRequestParams,
    SubscribeRequestParams,
    TextContent,
    UnsubscribeRequestParams,
)
from pydantic import BaseModel, ValidationError

# Logging, sampling and roots are deprecated as of 2026-07-28; this server uses them on purpose.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
_LEVEL_ORDER: list[str] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
]

NAME_CANDIDATES = ["Alice", "Alex", "Bob"]
ITEM_IDS = ["1", "2", "3", "10", "42"]
BLOB_BYTES = bytes(range(256))

# Mutable server state (one process serves one stdio connection).
state: dict[str, Any] = {
    "log_level": None,  # set by logging/setLevel; None = send everything
    "subscriptions": set(),  # URIs subscribed via resources/subscribe
    "dynamic_tools": 0,
    "events": [],  # strings recorded for the `events` tool
}

mcp = MCPServer(name="mcp-proto-sdk-test-server", version="1.0.0", log_level="WARNING")


def _record(event: str, stderr_line: str) -> None:
    state["events"].append(event)
    print(stderr_line, file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------- tools
# SDK 2.3.0 quirk: a tool annotated `-> str` gets an auto-generated outputSchema
# {"result": string} and structuredContent {"result": ...}. Only `add` (and, by hand,
# `bad_structured`) should declare an outputSchema here, so the rest pass structured_output=False.


@mcp.tool(structured_output=False)
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


class AddResult(BaseModel):
    sum: int


@mcp.tool(structured_output=True)
def add(a: int, b: int) -> AddResult:
    """Add two integers; structured output {"sum": a + b} with a declared outputSchema."""
    return AddResult(sum=a + b)


@mcp.tool(structured_output=False)
def bad_structured() -> CallToolResult:
    """Declares the same outputSchema as `add` but returns structuredContent that violates it."""
    return CallToolResult(
        content=[TextContent(type="text", text='{"sum": "not a number"}')],
        structured_content={"sum": "not a number"},
    )


# MCPServer validates a tool's own structured output against its output *model*. A schema
# published without a model is advertised but not validated ("hand-built metadata" in the SDK), so
# the mismatching structuredContent above really goes out on the wire.
@mcp.tool(structured_output=False)
def missing_structured() -> CallToolResult:
    """Declares the same outputSchema as `add` but returns no structuredContent at all."""
    return CallToolResult(content=[TextContent(type="text", text='{"sum": 3}')])


for _name in ("bad_structured", "missing_structured"):
    _meta = mcp._tool_manager._tools[_name].fn_metadata  # pyright: ignore[reportPrivateUsage]
    _meta.output_model = None
    _meta.output_schema = {
        "type": "object",
        "properties": {"sum": {"type": "integer"}},
        "required": ["sum"],
    }


@mcp.tool(structured_output=False)
async def slow(seconds: float) -> str:
    """Sleep `seconds`; records slow:done or slow:cancelled (see `events`, and stderr)."""
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            _record("slow:cancelled", f"SLOW CANCELLED seconds={seconds}")
        raise
    _record("slow:done", f"SLOW DONE seconds={seconds}")
    return f"slept {seconds}"


@mcp.tool(structured_output=False)
async def progress(steps: int, ctx: Context, delay: float = 0.01) -> str:
    """Report progress 1..steps (total=steps, message "step i/steps"), then return "done"."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i}/{steps}")
        if delay > 0:
            await anyio.sleep(delay)
    return "done"


@mcp.tool(structured_output=False)
async def chatty(steps: int, ctx: Context, delay: float = 0.01) -> str:
    """Per step: log "working on step i" at info, then report progress i/steps."""
    for i in range(1, steps + 1):
        await ctx.info(f"working on step {i}", logger_name="sdk_server")
        await ctx.report_progress(i, steps)
        if delay > 0:
            await anyio.sleep(delay)
    return "done"


def _client_error(exc: Exception) -> CallToolResult:
    """isError result for a server->client request that failed, so the test sees the reply."""
    if isinstance(exc, MCPError):
        error: dict[str, Any] = {"code": exc.code, "message": exc.message}
        if exc.data is not None:
            error["data"] = exc.data
        payload: dict[str, Any] = {"error": error}
    else:  # e.g. pydantic.ValidationError: the client's result did not match the spec
        payload = {"invalid_result": str(exc)}
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(payload))], is_error=True
    )


@mcp.tool(structured_output=False)
async def sample(prompt: str, ctx: Context) -> str | CallToolResult:
    """Send sampling/createMessage to the client and return the text it answered."""
    try:
        result = await ctx.session.create_message(
            messages=[SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
            max_tokens=100,
            related_request_id=ctx.request_id,
        )
    except (MCPError, ValidationError) as exc:
        return _client_error(exc)
    if isinstance(result.content, TextContent):
        return result.content.text
    return json.dumps(result.model_dump(mode="json", by_alias=True, exclude_none=True))


NAME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "Your name"}},
    "required": ["name"],
}


@mcp.tool(structured_output=False)
async def elicit_name(ctx: Context) -> str | CallToolResult:
    """Elicit a form {name: string}; return {"action", "content"} as JSON text (unvalidated)."""
    try:
        result = await ctx.session.elicit_form(
            "What is your name?", NAME_SCHEMA, related_request_id=ctx.request_id
        )
    except (MCPError, ValidationError) as exc:
        return _client_error(exc)
    return json.dumps({"action": result.action, "content": result.content})


@mcp.tool(structured_output=False)
async def list_roots(ctx: Context) -> str | CallToolResult:
    """Send roots/list to the client and return its roots as JSON text."""
    try:
        result = await ctx.session.list_roots()
    except (MCPError, ValidationError) as exc:
        return _client_error(exc)
    return json.dumps(
        [root.model_dump(mode="json", by_alias=True, exclude_none=True) for root in result.roots]
    )


@mcp.tool(structured_output=False)
async def log(level: LogLevel, message: str, ctx: Context) -> str:
    """Emit notifications/message at `level` unless below the level set by logging/setLevel."""
    current = state["log_level"]
    if current is not None and _LEVEL_ORDER.index(level) < _LEVEL_ORDER.index(current):
        return "suppressed"
    await ctx.log(level, message, logger_name="sdk_server")
    return "sent"


def _make_dynamic_tool(n: int) -> Callable[[], str]:
    def dynamic() -> str:
        return f"dynamic {n}"

    dynamic.__doc__ = f"A tool added at runtime by change_tools (#{n})."
    return dynamic


@mcp.tool(structured_output=False)
async def change_tools(ctx: Context) -> str:
    """Add a new tool `dynamic_<n>` and send notifications/tools/list_changed; returns its name."""
    state["dynamic_tools"] += 1
    n = state["dynamic_tools"]
    name = f"dynamic_{n}"
    mcp.add_tool(_make_dynamic_tool(n), name=name, structured_output=False)
    await ctx.session.send_tool_list_changed()  # handshake era: a plain notification
    await ctx.notify_tools_changed()  # 2026-07-28: to subscriptions/listen streams
    return name


@mcp.tool(structured_output=False)
def fail() -> str:
    """Always fails: the result has isError=true and text containing "intentional failure"."""
    raise ToolError("intentional failure")


@mcp.tool(structured_output=False)
def big(n: int) -> str:
    """Return a text of exactly n bytes ("x" * n)."""
    return "x" * n


@mcp.tool(structured_output=False)
def stderr_spam(n: int, line_length: int = 1024) -> str:
    """Write n bytes to stderr (lines of `line_length` bytes incl. the newline), then return."""
    out = sys.stderr.buffer
    line_length = max(1, line_length)
    line = b"e" * (line_length - 1) + b"\n"
    remaining = n
    while remaining > 0:
        chunk = line if remaining >= len(line) else line[:remaining]
        out.write(chunk)
        remaining -= len(chunk)
    out.flush()
    return f"wrote {n} bytes to stderr"


@mcp.tool(structured_output=False)
async def touch(uri: str, ctx: Context, force: bool = False) -> str:
    """Send notifications/resources/updated for `uri` (only if subscribed, unless force)."""
    if not force and uri not in state["subscriptions"]:
        return "not subscribed"
    await ctx.session.send_resource_updated(uri)  # handshake era
    await ctx.notify_resource_updated(uri)  # 2026-07-28 subscriptions/listen streams
    return "sent"


@mcp.tool(structured_output=False)
def events() -> str:
    """Return the recorded server events (JSON list of strings) and clear them."""
    recorded = list(state["events"])
    state["events"].clear()
    return json.dumps(recorded)


# --------------------------------------------------------------------------------------- resources


@mcp.resource(
    "demo://text", name="text", mime_type="text/plain", description="A small text resource"
)
def text_resource() -> str:
    return "Hello from demo://text"


@mcp.resource(
    "demo://blob", name="blob", mime_type="application/octet-stream", description="Bytes 0..255"
)
def blob_resource() -> bytes:
    return BLOB_BYTES


@mcp.resource("demo://item/{id}", name="item", mime_type="text/plain", description="Item by id")
async def item_resource(id: str, ctx: Context) -> str:
    if id == "progress":  # progress on resources/read (PROG-4)
        for i in (1, 2):
            await ctx.report_progress(i, 2, f"read {i}/2")
    return f"item {id}"


async def handle_subscribe(
    ctx: ServerRequestContext, params: SubscribeRequestParams
) -> EmptyResult:
    state["subscriptions"].add(str(params.uri))
    return EmptyResult()


async def handle_unsubscribe(
    ctx: ServerRequestContext, params: UnsubscribeRequestParams
) -> EmptyResult:
    state["subscriptions"].discard(str(params.uri))
    return EmptyResult()


async def handle_set_level(ctx: ServerRequestContext, params: SetLevelRequestParams) -> EmptyResult:
    state["log_level"] = params.level
    return EmptyResult()


# MCPServer has no public API for these three yet (the SDK's own everything-server does the same).
_low = mcp._lowlevel_server  # pyright: ignore[reportPrivateUsage]
_low.add_request_handler("resources/subscribe", SubscribeRequestParams, handle_subscribe)
_low.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, handle_unsubscribe)
_low.add_request_handler("logging/setLevel", SetLevelRequestParams, handle_set_level)

# MCPServer.run() builds the initialize result from create_initialization_options() with default
# NotificationOptions (listChanged false everywhere). Declare tools.listChanged, since change_tools
# really sends it, for every transport.
_orig_init_options = _low.create_initialization_options


def _init_options(
    notification_options: NotificationOptions | None = None, *args: Any, **kwargs: Any
) -> InitializationOptions:
    return _orig_init_options(
        notification_options or NotificationOptions(tools_changed=True), *args, **kwargs
    )


_low.create_initialization_options = _init_options  # type: ignore[method-assign]

# ----------------------------------------------------------------------------- prompts, completion


@mcp.prompt()
async def greet(name: str, ctx: Context) -> str:
    """Ask the model to greet someone."""
    if name == "progress":  # progress on prompts/get (PROG-4)
        for i in (1, 2):
            await ctx.report_progress(i, 2, f"prompt {i}/2")
    return f"Please greet {name}."


@mcp.completion()  # type: ignore[untyped-decorator, no-untyped-call, unused-ignore]
async def complete(
    ref: PromptReference | ResourceTemplateReference,
    argument: CompletionArgument,
    context: CompletionContext | None,
) -> Completion | None:
    if isinstance(ref, PromptReference) and ref.name == "greet" and argument.name == "name":
        values = [v for v in NAME_CANDIDATES if v.startswith(argument.value)]
    elif (
        isinstance(ref, ResourceTemplateReference)
        and ref.uri == "demo://item/{id}"
        and argument.name == "id"
    ):
        values = [v for v in ITEM_IDS if v.startswith(argument.value)]
    else:
        return None
    return Completion(values=values, total=len(values), has_more=False)


# ------------------------------------------------------------------------------- --era modes

_MODERN_KEY = "io.modelcontextprotocol/protocolVersion"
UNSUPPORTED_PROTOCOL_VERSION = -32022


def _modern_versions() -> list[str]:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return list(MODERN_PROTOCOL_VERSIONS)


def _handshake_versions() -> tuple[str, ...]:
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    return tuple(HANDSHAKE_PROTOCOL_VERSIONS)


def restrict_era(era: str) -> None:
    """Refuse the other era's requests inside the SDK (a context-tier middleware, which
    wraps ``initialize`` and every request on every transport)."""

    async def only_one_era(ctx: Any, call_next: Any) -> Any:
        params = ctx.params if isinstance(ctx.params, dict) else {}
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        enveloped = _MODERN_KEY in meta
        if era == "legacy":
            if ctx.method == "server/discover":
                raise MCPError(code=-32601, message="Method not found", data=ctx.method)
            if enveloped and ctx.method != "initialize":
                raise MCPError(code=-32600, message="Invalid request: not initialized")
        elif ctx.method == "initialize":
            raise MCPError(
                code=UNSUPPORTED_PROTOCOL_VERSION,
                message="Unsupported protocol version: this server speaks 2026-07-28 only",
                data={
                    "supported": _modern_versions(),
                    "requested": str(params.get("protocolVersion", "")),
                },
            )
        return await call_next(ctx)

    mcp._lowlevel_server.middleware.insert(0, only_one_era)
    if era == "legacy":
        # On a pipe the SDK's dual-era loop lets the first request pick the era for good: an
        # enveloped server/discover would turn the connection modern, and the initialize a
        # client sends next would then be refused with -32022, which no pre-2026 server
        # does. A legacy-only server serves the handshake loop only.
        import mcp.server.lowlevel.server as lowlevel
        from mcp.server.runner import serve_loop

        lowlevel.serve_dual_era_loop = serve_loop  # type: ignore[assignment]


class EraHeaderGate:
    """ASGI wrapper for --era over Streamable HTTP: the era is refused on the
    ``MCP-Protocol-Version`` header before the SDK routes the request, as servers that
    implement only one era do (400 + a JSON-RPC error body)."""

    def __init__(self, app: Any, era: str) -> None:
        self.app, self.era = app, era

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        version = next(
            (v.decode("latin-1") for k, v in scope["headers"] if k == b"mcp-protocol-version"),
            None,
        )
        if self.era == "legacy" and version is not None and version not in _handshake_versions():
            error = {
                "code": -32600,
                "message": f"Bad Request: Unsupported protocol version: {version}. "
                f"Supported versions: {', '.join(_handshake_versions())}",
            }
        elif self.era == "modern" and (version is None or version in _handshake_versions()):
            error = {
                "code": UNSUPPORTED_PROTOCOL_VERSION,
                "message": "Unsupported protocol version: this server speaks 2026-07-28 only",
                "data": {"supported": _modern_versions(), "requested": version or ""},
            }
        else:
            await self.app(scope, receive, send)
            return
        # Drain the body so the client sees an answer, not a reset.
        more = True
        while more:
            message = await receive()
            more = message.get("more_body", False) and message["type"] == "http.request"
        body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 400,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def serve_mounted(prefix: str, host: str, port: int) -> None:
    """The Streamable HTTP app under ``Mount(prefix)`` in a Starlette app of its own, as
    servers embedded in a larger web app are deployed: ``POST prefix`` is answered 307
    ``prefix/`` by Starlette (the mounted app's lifespan is the outer app's to run)."""
    import contextlib
    from collections.abc import AsyncIterator

    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import Mount

    inner = mcp.streamable_http_app(streamable_http_path="/")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with mcp.session_manager.run():
            yield

    outer = Starlette(routes=[Mount(prefix, app=inner)], lifespan=lifespan)
    uvicorn.run(outer, host=host, port=port, log_level="warning")


# -------------------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=["stdio", "streamable-http", "sse"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument(
        "--stateless", action="store_true", help="streamable-http: stateless_http=True"
    )
    parser.add_argument(
        "--json-response", action="store_true", help="streamable-http: json_response=True"
    )
    parser.add_argument(
        "--path", default="/mcp", help="streamable-http: the endpoint path (e.g. / for the root)"
    )
    parser.add_argument(
        "--mount",
        default=None,
        help="streamable-http: serve under a Starlette Mount at this prefix (endpoint "
        "PREFIX/; PREFIX without the slash answers 307, as such deployments do)",
    )
    parser.add_argument(
        "--era",
        choices=["dual", "legacy", "modern"],
        default="dual",
        help="serve both protocol eras (the SDK as shipped), or only one (see the docstring)",
    )
    parser.add_argument(
        "--ssl-certfile", default=None, help="streamable-http: serve HTTPS with this certificate"
    )
    parser.add_argument("--ssl-keyfile", default=None, help="with --ssl-certfile: its key")
    parser.add_argument(
        "--uds", default=None, help="streamable-http: listen on this UNIX socket, not a port"
    )
    args = parser.parse_args(argv)
    if args.era != "dual":
        restrict_era(args.era)
    if args.transport == "stdio":
        mcp.run()
    elif args.mount is not None:
        serve_mounted(args.mount, args.host, args.port)
    elif args.transport == "sse":
        mcp.run(transport="sse", host=args.host, port=args.port)
    elif args.uds is not None:
        # A UNIX socket (tests/shells/test_http_pool_factory.py: a pool built with
        # httpcore's uds= through configure_http's pool_factory).
        import uvicorn

        app = mcp.streamable_http_app(streamable_http_path=args.path, host=args.host)
        uvicorn.run(app, uds=args.uds, log_level="warning")
    elif args.ssl_certfile is not None:
        # HTTPS (tests/shells/test_http_custom.py: a private CA through configure_http).
        import uvicorn

        app = mcp.streamable_http_app(streamable_http_path=args.path, host=args.host)
        uvicorn.run(
            app,
            host=args.host,
            port=args.port,
            log_level="warning",
            ssl_certfile=args.ssl_certfile,
            ssl_keyfile=args.ssl_keyfile,
        )
    elif args.era == "dual":
        mcp.run(
            transport="streamable-http",
            host=args.host,
            port=args.port,
            stateless_http=args.stateless,
            json_response=args.json_response,
            streamable_http_path=args.path,
        )
    else:
        import uvicorn

        app = mcp.streamable_http_app(
            streamable_http_path=args.path,
            stateless_http=args.stateless,
            json_response=args.json_response,
        )
        uvicorn.run(
            EraHeaderGate(app, args.era), host=args.host, port=args.port, log_level="warning"
        )


if __name__ == "__main__":
    main()
