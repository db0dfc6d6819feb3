#!/usr/bin/env python3
"""The Trio client: the same API, awaited. Run it from the project root.

    python examples/quickstart_trio.py
"""

from __future__ import annotations

import sys

import trio

from mcp_io_trio import connect

SERVER = [sys.executable, "examples/demo_server.py"]


async def main() -> None:
    async with connect(SERVER) as client:
        tools = await client.list_tools()
        print("tools:", ", ".join(t.name for t in tools))

        async def progress(done: float, total: float | None, message: str | None) -> None:
            print(f"  progress {done:g}/{total:g} {message or ''}")

        # Two calls at once: each waits on its own response, the reader task serves both.
        async with trio.open_nursery() as nursery:
            for city in ("Lisbon", "Oslo"):
                nursery.start_soon(show_weather, client, city)
        result = await client.call_tool("countdown", {"seconds": 1}, progress=progress)
        print("countdown:", result["content"][0]["text"])


async def show_weather(client: object, city: str) -> None:
    result = await client.call_tool("weather", {"city": city})  # type: ignore[attr-defined]
    print(f"weather in {city}:", result["structuredContent"])


if __name__ == "__main__":
    trio.run(main)
