#!/usr/bin/env python3
"""MCP tools in an OpenAI Chat Completions request, and the model's tool call run by MCP.

    pip install openai
    python examples/openai_tools.py                  # offline: a scripted model (no network)
    OPENAI_API_KEY=sk-... python examples/openai_tools.py   # the real API (OPENAI_MODEL)

The tools come from the demo server (examples/demo_server.py) through
``client.to_openai_tools()``; each is checked against the SDK's own request type
(``ChatCompletionFunctionToolParam``) before it is sent. The model's ``tool_calls`` come
back as the SDK's ``ChatCompletionMessageFunctionToolCall`` objects, and each one is run with
``client.call_tool`` and its text returned to the model as a ``tool`` message.

Without ``OPENAI_API_KEY`` the SDK talks to a scripted model (examples/_offline.py) through
its own HTTP client: every request and response still goes through the SDK's types.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import openai
import pydantic
from openai.types.chat import ChatCompletionFunctionToolParam, ChatCompletionMessageParam

from mcp_io_sync import connect

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
SERVER = [sys.executable, str(HERE / "demo_server.py")]
QUESTION = "What is the weather in Lisbon right now?"


def model_client() -> tuple[openai.OpenAI, str]:
    if os.environ.get("OPENAI_API_KEY"):
        return openai.OpenAI(), os.environ.get("OPENAI_MODEL", "gpt-4o-mini")
    import _offline

    http = _offline.openai_chat("weather", {"city": "Lisbon"})
    return openai.OpenAI(api_key="offline", http_client=http, max_retries=0), "offline"


def main() -> None:
    llm, model = model_client()
    with connect(SERVER) as client:
        tools = client.to_openai_tools(["weather", "countdown"])
        # Offline check: each tool is a valid request parameter of the SDK's own type.
        # (a TypedDict ignores unknown keys, so nothing may be dropped either).
        checked = pydantic.TypeAdapter(list[ChatCompletionFunctionToolParam])
        if checked.validate_python(tools) != tools:
            raise SystemExit("❌ to_openai_tools() has keys ChatCompletionFunctionToolParam lacks")
        print(f"tools for OpenAI: {[t['function']['name'] for t in tools]}")

        messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": QUESTION}]
        for _ in range(4):  # a few rounds at most: the model answers or calls tools
            reply = llm.chat.completions.create(model=model, messages=messages, tools=tools)
            message = reply.choices[0].message
            if not message.tool_calls:
                print(f"model: {message.content}")
                break
            messages.append(message.model_dump(exclude_none=True))  # type: ignore[arg-type]
            for call in message.tool_calls:
                if call.type != "function":
                    continue
                arguments = json.loads(call.function.arguments or "{}")
                result = client.call_tool(call.function.name, arguments)
                print(f"call_tool {call.function.name}({arguments}) -> {result.text}")
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result.text})
        else:
            raise SystemExit("❌ the model never answered")
    print("✅ openai: tools offered, tool call dispatched through call_tool, answer received")


if __name__ == "__main__":
    main()
