#!/usr/bin/env python3
"""A real MCP server built with FastMCP 4 (``fastmcp==4.1.6``), used as a test peer.

    python tests/servers/fastmcp_server.py                               # stdio
    python tests/servers/fastmcp_server.py --transport http --port 8765  # Streamable HTTP, /mcp
    python tests/servers/fastmcp_server.py --transport http --port 8765 --path /  # mounted at /

What it offers (names are part of the test contract, keep them stable):

tools
    add(a: int, b: int) -> int    a scalar: FastMCP sends the text "3" and wraps the value
                                  as structuredContent {"result": 3} (outputSchema declared)
    plan(trip: Trip) -> dict      nested arguments: Trip is an object with a ``name`` and an
                                  array ``stops`` of objects {city, nights?}; returns
                                  {"name", "stops", "nights"} (structured, with its text copy)
    shout(text) -> str            the text upper-cased (FastMCP wraps strings as well)
    warn(message) -> str          sends a warning log notification, then returns "logged"

resources
    fastmcp://motd                text/plain "Hello from FastMCP"

prompts
    haiku(topic)                  one user message "Write a haiku about {topic}."
"""

from __future__ import annotations

import argparse

from fastmcp import Context, FastMCP
from pydantic import BaseModel

mcp = FastMCP("mcp-proto-fastmcp-test-server", version="1.0.0")


class Stop(BaseModel):
    city: str
    nights: int = 1


class Trip(BaseModel):
    name: str
    stops: list[Stop]


@mcp.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool
def plan(trip: Trip) -> dict[str, object]:
    """Summarise a trip: its stops and the total number of nights."""
    return {
        "name": trip.name,
        "stops": [stop.city for stop in trip.stops],
        "nights": sum(stop.nights for stop in trip.stops),
    }


@mcp.tool
def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()


@mcp.tool
async def warn(message: str, ctx: Context) -> str:
    """Send a warning log notification carrying the message."""
    await ctx.warning(message)
    return "logged"


@mcp.resource("fastmcp://motd", mime_type="text/plain")
def motd() -> str:
    """The message of the day."""
    return "Hello from FastMCP"


@mcp.prompt
def haiku(topic: str) -> str:
    """Ask for a haiku."""
    return f"Write a haiku about {topic}."


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--path", default="/mcp", help="where the HTTP endpoint is mounted")
    args = parser.parse_args(argv)
    if args.transport == "stdio":
        mcp.run(transport="stdio", show_banner=False)
    else:
        mcp.run(
            transport="http",
            host=args.host,
            port=args.port,
            path=args.path,
            show_banner=False,
            log_level="warning",
        )


if __name__ == "__main__":
    main()
