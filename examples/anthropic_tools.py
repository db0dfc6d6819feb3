#!/usr/bin/env python3
"""MCP tools in an Anthropic Messages request, and the model's ``tool_use`` run by MCP.

    pip install anthropic
    python examples/anthropic_tools.py                      # offline: a scripted model
    ANTHROPIC_API_KEY=sk-ant-... python examples/anthropic_tools.py   # the real API

The tools come from the demo server (examples/demo_server.py) through
``client.to_anthropic_tools()`` (``$schema`` removed, as the API wants); each is checked
against the SDK's ``ToolParam`` type. Each ``tool_use`` block of the reply (the SDK's
``ToolUseBlock``) is run with ``client.call_tool`` and answered with a ``tool_result``.

Without ``ANTHROPIC_API_KEY`` the SDK talks to a scripted model (examples/_offline.py)
through its own HTTP client; the model is ``ANTHROPIC_MODEL`` online.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anthropic
import pydantic
from anthropic.types import MessageParam, ToolParam

from mcp_io_sync import connect

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
SERVER = [sys.executable, str(HERE / "demo_server.py")]
QUESTION = "What is the weather in Lisbon right now?"


def model_client() -> tuple[anthropic.Anthropic, str]:
    if os.environ.get("ANTHROPIC_API_KEY"):
        return anthropic.Anthropic(), os.environ.get("ANTHROPIC_MODEL", "claude-haiku-4-5")
    import _offline

    http = _offline.anthropic_messages("weather", {"city": "Lisbon"})
    return anthropic.Anthropic(api_key="offline", http_client=http, max_retries=0), "offline"


def main() -> None:
    llm, model = model_client()
    with connect(SERVER) as client:
        tools = client.to_anthropic_tools(["weather", "countdown"])
        # Offline check against the SDK's own request type; nothing may be dropped.
        if pydantic.TypeAdapter(list[ToolParam]).validate_python(tools) != tools:
            raise SystemExit("❌ to_anthropic_tools() has keys ToolParam lacks")
        print(f"tools for Anthropic: {[t['name'] for t in tools]}")

        messages: list[MessageParam] = [{"role": "user", "content": QUESTION}]
        for _ in range(4):
            reply = llm.messages.create(
                model=model,
                max_tokens=1024,
                messages=messages,
                tools=tools,  # type: ignore[arg-type]
            )
            uses = [block for block in reply.content if block.type == "tool_use"]
            if not uses:
                print("model:", "".join(b.text for b in reply.content if b.type == "text"))
                break
            messages.append({"role": "assistant", "content": reply.content})  # type: ignore[typeddict-item]
            results: list[Any] = []
            for use in uses:
                result = client.call_tool(use.name, dict(use.input))
                print(f"call_tool {use.name}({use.input}) -> {result.text}")
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": use.id,
                        "content": result.text,
                        "is_error": result.is_error,
                    }
                )
            messages.append({"role": "user", "content": results})
        else:
            raise SystemExit("❌ the model never answered")
    print("✅ anthropic: tools offered, tool_use dispatched through call_tool, answer received")


if __name__ == "__main__":
    main()
