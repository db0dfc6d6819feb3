#!/usr/bin/env python3
"""MCP tools as Gemini function declarations, and the model's function call run by MCP.

    pip install google-genai
    python examples/google_tools.py                  # offline: a scripted model
    GEMINI_API_KEY=... python examples/google_tools.py   # the real Gemini API (GEMINI_MODEL)

The tools come from the demo server (examples/demo_server.py) through
``client.to_google_tools()`` (``$schema`` removed); each becomes the SDK's own
``types.FunctionDeclaration`` (its JSON Schema goes in ``parameters_json_schema``), built
and validated by the SDK's pydantic models. Each ``function_call`` of the reply
(``types.FunctionCall``) is run with ``client.call_tool`` and answered with a
``types.Part.from_function_response``.

Without ``GEMINI_API_KEY`` (or ``GOOGLE_API_KEY``) the SDK talks to a scripted model
(examples/_offline.py) through its own HTTP client. For Vertex AI, build the
``genai.Client(vertexai=True, project=..., location=...)`` instead: the tools are the same.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from google import genai
from google.genai import types

from mcp_io_sync import connect

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
SERVER = [sys.executable, str(HERE / "demo_server.py")]
QUESTION = "What is the weather in Lisbon right now?"


def model_client() -> tuple[genai.Client, str]:
    vertex = os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("1", "true")
    if os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY") or vertex:
        # Vertex AI: GOOGLE_APPLICATION_CREDENTIALS, GOOGLE_CLOUD_PROJECT and
        # GOOGLE_CLOUD_LOCATION, which run_all.py sets from VERTEX_CREDENTIALS_FILE.
        return genai.Client(), os.environ.get("GEMINI_MODEL", "gemini-2.5-flash")
    import _offline

    options = types.HttpOptions(httpx_client=_offline.gemini("weather", {"city": "Lisbon"}))
    return genai.Client(api_key="offline", http_options=options), "offline"


def declaration(tool: dict[str, Any]) -> types.FunctionDeclaration:
    # extra="forbid" in the SDK's models: a key it does not know raises here, offline.
    return types.FunctionDeclaration(
        name=tool["name"],
        description=tool["description"],
        parameters_json_schema=tool["parameters"],
    )


def main() -> None:
    llm, model = model_client()
    with connect(SERVER) as client:
        declarations = [declaration(t) for t in client.to_google_tools(["weather", "countdown"])]
        print(f"tools for Gemini: {[d.name for d in declarations]}")
        config = types.GenerateContentConfig(
            tools=[types.Tool(function_declarations=declarations)],
            # The calls are ours to run through MCP, not the SDK's automatic calling.
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )
        contents: list[types.Content] = [
            types.Content(role="user", parts=[types.Part.from_text(text=QUESTION)])
        ]
        for _ in range(4):
            reply = llm.models.generate_content(model=model, contents=contents, config=config)
            calls = reply.function_calls or []
            if not calls:
                print(f"model: {reply.text}")
                break
            assert reply.candidates and reply.candidates[0].content
            contents.append(reply.candidates[0].content)
            parts = []
            for call in calls:
                assert call.name is not None
                result = client.call_tool(call.name, dict(call.args or {}))
                print(f"call_tool {call.name}({call.args}) -> {result.text}")
                answer = result.structured_content or {"result": result.text}
                key = "error" if result.is_error else "output"
                parts.append(
                    types.Part.from_function_response(name=call.name, response={key: answer})
                )
            contents.append(types.Content(role="user", parts=parts))
        else:
            raise SystemExit("❌ the model never answered")
    print("✅ google-genai: tools offered, function call run through call_tool, answer received")


if __name__ == "__main__":
    main()
