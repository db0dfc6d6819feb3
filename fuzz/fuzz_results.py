"""Fuzz target: the typed results of the client's operations (``mcp_proto.results``).

Feeds, structure-aware: a ``tools/call``, ``prompts/get``, ``completion/complete`` or a
``resources/list`` / ``resources/templates/list`` page result built from the keys these
results and their content items carry (``content``, ``messages``, ``completion``,
``type`` with every content kind, ``resource``, ``isError``, ``_meta``...), with wrong
types and boundary values. JSON text is used as the result directly.

Contract: each ``from_wire`` returns its result or raises ``RemoteProtocolError``
(``ValidationError`` too for a page's malformed entry), never another exception; a
result returned is a mapping whose keys are what the operation returned before it was
typed (``content`` of a tool result is its raw JSON, ``values`` of a completion is the
list of its ``completions``), its typed fields agree with it, and ``to_dict`` is JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from _fuzzlib import Reader, Target, json_input, json_value

from mcp_proto.errors import RemoteProtocolError, ValidationError
from mcp_proto.results import (
    CompletionResult,
    PromptResult,
    ResourcePage,
    ResourceTemplatePage,
    ToolResult,
)
from mcp_proto.types import ContentItem, TextContent

KEYS = (
    "content",
    "structuredContent",
    "isError",
    "_meta",
    "resultType",
    "messages",
    "role",
    "description",
    "completion",
    "values",
    "total",
    "hasMore",
    "resources",
    "resourceTemplates",
    "nextCursor",
    "type",
    "text",
    "data",
    "mimeType",
    "uri",
    "uriTemplate",
    "name",
    "title",
    "size",
    "blob",
    "resource",
    "annotations",
    "icons",
)
STRINGS = (
    "text",
    "image",
    "audio",
    "resource",
    "resource_link",
    "future_kind",
    "user",
    "assistant",
    "AAAA",
    "%%%",
    "image/png",
    "file:///x",
    "demo://r",
    "complete",
    True,
    False,
    -1,
    10**400,
)
KINDS = ("tools/call", "prompts/get", "completion/complete", "resources", "templates")


def _item(reader: Reader) -> Any:
    kind = reader.choice(STRINGS[:6])
    item: dict[str, Any] = {"type": kind}
    for _ in range(reader.below(5)):
        item[reader.choice(KEYS)] = json_value(reader, KEYS, STRINGS, max_depth=2)
    return item


def _result(reader: Reader) -> Any:
    shape = reader.below(5)
    if shape == 0:
        return {
            "content": [_item(reader) for _ in range(reader.below(4))],
            "isError": reader.choice((True, False, None, "yes")),
        }
    if shape == 1:
        return {
            "messages": [
                {"role": reader.choice(STRINGS[6:8]), "content": _item(reader)}
                for _ in range(reader.below(3))
            ]
        }
    if shape == 2:
        return {"completion": json_value(reader, KEYS, STRINGS, max_depth=3)}
    return json_value(reader, KEYS, STRINGS)


def _check_content(items: tuple[ContentItem, ...]) -> None:
    for item in items:
        assert isinstance(item, Mapping) or hasattr(item, "to_dict"), item


def check(data: bytes) -> None:
    document = json_input(data, _result)
    kind = KINDS[data[0] % len(KINDS)] if data else KINDS[0]
    for which in (kind, *KINDS):  # every parser sees every input
        _check_one(which, document)


def _check_one(kind: str, document: Any) -> None:
    try:
        if kind == "tools/call":
            tool = ToolResult.from_wire(document, server="s")
            assert tool.raw is document and dict(tool) == document
            assert tool.is_error is (document.get("isError") is True)
            _check_content(tool.content)
            texts = [i.text for i in tool.content if isinstance(i, TextContent)]
            assert tool.text == "\n".join(texts)
            json.dumps(tool.to_dict())
        elif kind == "prompts/get":
            prompt = PromptResult.from_wire(document, server="s")
            assert prompt.raw is document and prompt["messages"] is document["messages"]
            assert len(prompt.messages) == len(document["messages"])
            _check_content(tuple(m.content for m in prompt.messages))
            json.dumps(prompt.to_dict())
        elif kind == "completion/complete":
            completion = CompletionResult.from_wire(document, server="s")
            assert completion["values"] == list(completion.completions)
            assert all(isinstance(v, str) for v in completion.completions)
            assert completion.get("total") == completion.total
            json.dumps(completion.to_dict())
        elif kind == "resources":
            page = ResourcePage.from_wire(document, server="s")
            assert page["resources"] == list(page.resources)
            assert page["nextCursor"] == page.next_cursor
            json.dumps(page.to_dict())
        else:
            templates = ResourceTemplatePage.from_wire(document, server="s")
            assert templates["resourceTemplates"] == list(templates.resource_templates)
            json.dumps(templates.to_dict())
    except RemoteProtocolError as exc:
        assert "'s'" in str(exc), exc  # the error names the server
    except ValidationError as exc:
        assert kind in ("resources", "templates"), (kind, exc)


TARGET = Target(
    name="results",
    description="a result object -> ToolResult, PromptResult, CompletionResult, pages",
    check=check,
    seeds=(
        b'{"content":[{"type":"text","text":"hi"},{"type":"image","data":"AAAA",'
        b'"mimeType":"image/png"}],"structuredContent":{"a":1},"isError":false}',
        b'{"content":[{"type":"resource","resource":{"uri":"demo://r","blob":"AAAA"}},'
        b'{"type":"resource_link","uri":"file:///x","name":"x","size":-1}]}',
        b'{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"description":"d"}',
        b'{"completion":{"values":["a","b"],"total":2,"hasMore":false}}',
        b'{"resources":[{"uri":"demo://r","name":"r"}],"nextCursor":"c2"}',
        b'{"resourceTemplates":[{"uriTemplate":"demo://{id}","name":"t"}],"nextCursor":5}',
        b"\x00\x03\x01\x05\x13\x02\x07",
    ),
    max_len=4096,
)

if __name__ == "__main__":
    from run import main

    main(["results"])
