#!/usr/bin/env python3
"""MCP tools inside an agent framework: the OpenAI Agents SDK (LLM-5).

    pip install openai-agents
    python examples/openai_agents_tools.py                  # offline: a scripted model
    OPENAI_API_KEY=sk-... python examples/openai_agents_tools.py   # the real API

Each MCP tool becomes the framework's own ``FunctionTool``: its name, description and
input schema (``params_json_schema``) from ``list_tools()``, and an ``on_invoke_tool`` that
runs ``client.call_tool``. The framework's ``Runner`` then drives the loop itself: it sends
the tools, receives the model's call, invokes the tool and returns the result to the model.
This is the Python counterpart of the seed's RubyLLM wrapper (``name``, ``description``,
``schema``, ``execute -> call_tool``).

The blocking client is called from the framework's asyncio loop through
``asyncio.to_thread`` so that a slow tool does not stall the loop. Without
``OPENAI_API_KEY`` the framework's Chat Completions model talks to a scripted model
(examples/_offline.py) through the SDK's own HTTP client; tracing export is off.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import agents
from openai import AsyncOpenAI

from mcp_io_sync import Client, Tool, connect

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
SERVER = [sys.executable, str(HERE / "demo_server.py")]
QUESTION = "What is the weather in Lisbon right now?"


def agent_tool(client: Client, tool: Tool) -> agents.FunctionTool:
    async def invoke(_context: agents.ToolContext[Any], arguments: str) -> str:
        parsed = json.loads(arguments or "{}")
        result = await asyncio.to_thread(client.call_tool, tool.name, parsed)
        print(f"call_tool {tool.name}({parsed}) -> {result.text}")
        return result.text

    return agents.FunctionTool(
        name=tool.name,
        description=tool.description or "",
        params_json_schema=tool.to_openai_tool()["function"]["parameters"],
        on_invoke_tool=invoke,
        # MCP schemas are not written for OpenAI's strict mode (every property required).
        strict_json_schema=False,
    )


def model() -> agents.Model:
    if os.environ.get("OPENAI_API_KEY"):
        name = os.environ.get("OPENAI_MODEL", "gpt-4o-mini")
        return agents.OpenAIChatCompletionsModel(model=name, openai_client=AsyncOpenAI())
    import _offline

    agents.set_tracing_disabled(True)
    http = _offline.openai_chat_async("weather", {"city": "Lisbon"})
    offline = AsyncOpenAI(api_key="offline", http_client=http, max_retries=0)
    return agents.OpenAIChatCompletionsModel(model="offline", openai_client=offline)


def main() -> None:
    with connect(SERVER) as client:
        tools = [agent_tool(client, t) for t in client.list_tools()]
        print(f"agent tools: {[t.name for t in tools]}")
        agent = agents.Agent(
            name="weather helper",
            instructions="Answer with the tools you have.",
            tools=list(tools),
            model=model(),
        )
        result = agents.Runner.run_sync(agent, QUESTION, max_turns=4)
        print(f"agent: {result.final_output}")
        called = [item for item in result.new_items if item.type == "tool_call_output_item"]
        if not called:
            raise SystemExit("❌ the agent never called an MCP tool")
    print("✅ openai-agents: MCP tools wrapped as FunctionTool, run by the agent's Runner")


if __name__ == "__main__":
    main()
