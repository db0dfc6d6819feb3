"""A scripted model for the LLM examples when no API key is set (no network).

Each provider SDK (openai, anthropic, google-genai) takes an ``httpx2.Client``; these
``MockTransport`` handlers answer the SDK's real HTTP requests the way the provider's API
would, so the SDK builds, serialises and parses everything exactly as it does online:

* the first request must carry the MCP tools (by name); the "model" answers it with a
  call of ``tool`` with ``arguments``, in the provider's own tool-call format;
* the follow-up request must carry that call's result (the text the example got back from
  ``call_tool``); the "model" answers with a short text that quotes it.

A request that breaks either rule gets an HTTP 400 with the reason, which the SDK raises:
the example then fails loudly instead of passing on a request the real API would refuse.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx2

Handler = Callable[[dict[str, Any]], dict[str, Any]]

FINAL_PREFIX = "Here is what the tool said: "


class Refused(Exception):
    """The scripted model refuses a request (sent back as HTTP 400)."""


def _transport(handle: Handler) -> httpx2.MockTransport:
    def respond(request: httpx2.Request) -> httpx2.Response:
        try:
            body = json.loads(request.content or b"{}")
            return httpx2.Response(200, json=handle(body))
        except Refused as exc:
            error = {"type": "invalid_request_error", "message": str(exc), "code": 400}
            return httpx2.Response(400, json={"error": error})

    return httpx2.MockTransport(respond)


def _need_tool(names: list[str], tool: str) -> None:
    if tool not in names:
        raise Refused(f"the request offers no tool {tool!r} (tools: {names})")


def openai_chat(tool: str, arguments: dict[str, Any]) -> httpx2.Client:
    """OpenAI Chat Completions (``POST /chat/completions``)."""

    def handle(body: dict[str, Any]) -> dict[str, Any]:
        answers = [m for m in body.get("messages", []) if m.get("role") == "tool"]
        message: dict[str, Any]
        if answers:
            message = {"role": "assistant", "content": FINAL_PREFIX + answers[-1]["content"]}
            finish = "stop"
        else:
            _need_tool([t["function"]["name"] for t in body.get("tools", [])], tool)
            call = {
                "id": "call_1",
                "type": "function",
                "function": {"name": tool, "arguments": json.dumps(arguments)},
            }
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
        return {
            "id": "chatcmpl-offline",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "offline"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    return httpx2.Client(transport=_transport(handle))


def openai_chat_async(tool: str, arguments: dict[str, Any]) -> httpx2.AsyncClient:
    """The same script for ``AsyncOpenAI`` (the agent framework's client)."""
    sync = openai_chat(tool, arguments)
    transport = sync._transport

    class Async(httpx2.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            await request.aread()
            response = transport.handle_request(request)
            response.read()
            return httpx2.Response(
                response.status_code, headers=response.headers, content=response.content
            )

    return httpx2.AsyncClient(transport=Async())


def anthropic_messages(tool: str, arguments: dict[str, Any]) -> httpx2.Client:
    """Anthropic Messages (``POST /v1/messages``)."""

    def handle(body: dict[str, Any]) -> dict[str, Any]:
        results = [
            block
            for m in body.get("messages", [])
            if m.get("role") == "user" and isinstance(m.get("content"), list)
            for block in m["content"]
            if block.get("type") == "tool_result"
        ]
        content: list[dict[str, Any]]
        if results:
            text = results[-1]["content"]
            if isinstance(text, list):
                text = "".join(b.get("text", "") for b in text)
            content = [{"type": "text", "text": FINAL_PREFIX + text}]
            stop = "end_turn"
        else:
            _need_tool([t["name"] for t in body.get("tools", [])], tool)
            content = [{"type": "tool_use", "id": "toolu_1", "name": tool, "input": arguments}]
            stop = "tool_use"
        return {
            "id": "msg_offline",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "offline"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }

    return httpx2.Client(transport=_transport(handle))


def gemini(tool: str, arguments: dict[str, Any]) -> httpx2.Client:
    """Gemini API (``POST /v1beta/models/{model}:generateContent``)."""

    def handle(body: dict[str, Any]) -> dict[str, Any]:
        responses = [
            part["functionResponse"]
            for content in body.get("contents", [])
            for part in content.get("parts", [])
            if "functionResponse" in part
        ]
        part: dict[str, Any]
        if responses:
            part = {"text": FINAL_PREFIX + json.dumps(responses[-1]["response"])}
        else:
            names = [
                d["name"] for t in body.get("tools", []) for d in t.get("functionDeclarations", [])
            ]
            _need_tool(names, tool)
            part = {"functionCall": {"name": tool, "args": arguments}}
        return {
            "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1},
        }

    return httpx2.Client(transport=_transport(handle))
