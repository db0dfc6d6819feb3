#!/usr/bin/env python3
"""A small, friendly MCP server for ``make demo``, written with the official Python SDK.

Run it over stdio::

    python examples/demo_server.py

It offers:

* tool ``countdown(seconds: int = 3)`` - counts down, reporting progress four times per
  demo-second (``progress=i, total=4*seconds``, message ``"T-minus 2.75s"``...); a demo-second
  lasts 2/3 s of real time, so the default run takes about 2 s and a progress bar is visible.
  Returns ``"Liftoff!"``.
* tool ``weather(city: str)`` - made-up but stable weather, as structured output
  (``city``, ``temperature_c``, ``conditions``, ``humidity_pct``; an outputSchema is declared).
* resource ``demo://readme`` - a short Markdown text.
* prompt ``review(code: str)`` - asks the model to review a piece of code.
"""

from __future__ import annotations

import zlib

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

TICKS_PER_SECOND = 4
REAL_SECONDS_PER_DEMO_SECOND = 2 / 3

mcp = MCPServer(
    name="mcp-proto-demo",
    version="1.0.0",
    instructions="A tiny demo server: try the countdown tool to see progress notifications.",
    log_level="WARNING",
)


@mcp.tool(structured_output=False)
async def countdown(ctx: Context, seconds: int = 3) -> str:
    """Count down from `seconds`, reporting progress along the way, then lift off."""
    if not 1 <= seconds <= 30:
        raise ToolError("seconds must be between 1 and 30")
    total = seconds * TICKS_PER_SECOND
    for i in range(1, total + 1):
        await anyio.sleep(REAL_SECONDS_PER_DEMO_SECOND / TICKS_PER_SECOND)
        remaining = seconds - i / TICKS_PER_SECOND
        message = f"T-minus {remaining:.2f}s" if remaining > 0 else "Ignition!"
        await ctx.report_progress(i, total, message)
    return "Liftoff!"


class WeatherReport(BaseModel):
    city: str
    temperature_c: float = Field(description="Temperature in degrees Celsius")
    conditions: str
    humidity_pct: int = Field(description="Relative humidity in percent")


CONDITIONS = ["sunny", "partly cloudy", "cloudy", "light rain", "windy", "foggy"]


@mcp.tool()
def weather(city: str) -> WeatherReport:
    """Report the (made-up, but stable) weather for a city."""
    seed = zlib.crc32(city.strip().lower().encode())
    return WeatherReport(
        city=city,
        temperature_c=round(-5 + (seed % 400) / 10, 1),
        conditions=CONDITIONS[seed % len(CONDITIONS)],
        humidity_pct=20 + seed % 71,
    )


README = """# mcp-proto demo server

This server exists to show off the mcp-proto client:

- `countdown` streams progress notifications,
- `weather` returns structured content validated against its output schema,
- `review` is a prompt template, and this text is the `demo://readme` resource.
"""


@mcp.resource("demo://readme", name="readme", title="README", mime_type="text/markdown")
def readme() -> str:
    """What this demo server is for."""
    return README


@mcp.prompt()
def review(code: str) -> str:
    """Ask the model to review a piece of code."""
    return (
        "Please review the following code. Point out bugs, unclear names and missing tests, "
        f"and suggest concrete improvements.\n\n```\n{code}\n```"
    )


if __name__ == "__main__":
    mcp.run()
