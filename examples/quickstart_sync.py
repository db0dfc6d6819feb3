#!/usr/bin/env python3
"""The blocking client in a few lines: run it from the project root.

    python examples/quickstart_sync.py
"""

from __future__ import annotations

import sys

from mcp_io_sync import connect

SERVER = [sys.executable, "examples/demo_server.py"]


def main() -> None:
    with connect(SERVER) as client:
        for tool in client.list_tools():
            print(f"tool {tool.name}: {tool.description}")

        def progress(done: float, total: float | None, message: str | None) -> None:
            print(f"  progress {done:g}/{total:g} {message or ''}")

        result = client.call_tool("countdown", {"seconds": 1}, progress=progress, timeout=30)
        print("countdown:", result["content"][0]["text"])
        print("weather:", client.call_tool("weather", {"city": "Lisbon"})["structuredContent"])
        print("readme:", client.read_resource("demo://readme")[0].text.splitlines()[0])
        prompt = client.get_prompt("review", {"code": "print('hi')"})
        print("prompt:", prompt["messages"][0]["content"]["text"][:60])


if __name__ == "__main__":
    main()
