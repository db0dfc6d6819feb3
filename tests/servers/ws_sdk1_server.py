"""The official Python SDK 1.x serving MCP over WebSocket (issue 25): a test peer.

Run with the ws-venv's python (``make ws-peer``: mcp 1.x, uvicorn, websockets), not
the project's (mcp 2.x has no WebSocket transport)::

    tests/peers/ws-venv/bin/python tests/servers/ws_sdk1_server.py PORT [--tls DIR]

Serves ``ws://127.0.0.1:PORT/mcp`` through ``mcp.server.websocket.websocket_server``
on uvicorn with the ``websockets`` implementation, which negotiates
``permessage-deflate``. Tools: ``echo``, ``count`` (progress), ``ask_name``
(elicitation), ``summarize`` (sampling), ``notify`` (a log message and a list change),
``big`` (a 5 MB result by default), ``slow`` (sleeps). With ``--tls DIR`` it serves
``wss://`` with a self-signed certificate for 127.0.0.1 that it writes to
``DIR/cert.pem`` (the client trusts that file).
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import anyio
import uvicorn
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.websocket import websocket_server
from mcp.types import SamplingMessage, TextContent
from pydantic import BaseModel
from self_signed import self_signed  # (this script's folder is on sys.path)

# The SDK and uvicorn announce their deprecations of this transport on every start.
warnings.simplefilter("ignore", DeprecationWarning)
mcp = FastMCP("ws-sdk1", log_level="WARNING")


@mcp.tool()
def echo(text: str) -> str:
    return text


@mcp.tool()
async def count(n: int, ctx: Context) -> str:  # type: ignore[type-arg]
    for i in range(n):
        await ctx.report_progress(i + 1, n, f"step {i + 1}")
    return f"counted {n}"


class Name(BaseModel):
    name: str


@mcp.tool()
async def ask_name(ctx: Context) -> str:  # type: ignore[type-arg]
    answer = await ctx.elicit(message="Your name?", schema=Name)
    if answer.action == "accept" and answer.data is not None:
        return f"hello {answer.data.name}"
    return f"no name ({answer.action})"


@mcp.tool()
async def summarize(text: str, ctx: Context) -> str:  # type: ignore[type-arg]
    reply = await ctx.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text=text))],
        max_tokens=50,
    )
    content = reply.content
    return content.text if isinstance(content, TextContent) else repr(content)


@mcp.tool()
async def notify(ctx: Context) -> str:  # type: ignore[type-arg]
    await ctx.info("info from the server")
    await ctx.session.send_tool_list_changed()
    return "sent"


@mcp.tool()
def big(size: int = 5_000_000) -> str:
    return "0123456789abcdef" * (size // 16)


@mcp.tool()
async def slow(seconds: float) -> str:
    await anyio.sleep(seconds)
    return "done"


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "websocket" and scope["path"] == "/mcp":
        async with websocket_server(scope, receive, send) as (read, write):
            server = mcp._mcp_server
            await server.run(read, write, server.create_initialization_options())
        return
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})


if __name__ == "__main__":
    port = int(sys.argv[1])
    tls: dict[str, Any] = {}
    if len(sys.argv) > 3 and sys.argv[2] == "--tls":
        certfile, keyfile = self_signed(sys.argv[3])
        tls = {"ssl_certfile": certfile, "ssl_keyfile": keyfile}
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        ws="websockets",
        lifespan="off",
        log_level="warning",
        **tls,
    )
