"""Wire validity for the 2026-07-28 tests: messages checked against the revision's schema.

``schema_2026_07_28.json`` is a verbatim copy of the published schema
(``spec/schema/2026-07-28/schema.json``); each check validates one message against one
of its ``$defs`` with jsonschema-rs (the engine ``mcp_proto.schema`` uses).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs

SCHEMA_FILE = Path(__file__).with_name("schema_2026_07_28.json")


@cache
def _schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return data


@cache
def validator(definition: str) -> Any:
    """A validator for ``#/$defs/<definition>`` of the 2026-07-28 schema."""
    schema = _schema()
    assert definition in schema["$defs"], definition
    root = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
    return jsonschema_rs.Draft202012Validator(root)


def errors_of(definition: str, instance: Any) -> list[str]:
    return [str(e) for e in validator(definition).iter_errors(instance)]


def assert_valid(definition: str, instance: Any) -> None:
    problems = errors_of(definition, instance)
    assert not problems, f"not a valid {definition}: {problems}"


def request(method: str, params: dict[str, Any], request_id: int | str = 1) -> dict[str, Any]:
    """A JSON-RPC request message as the client would send it."""
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


#: The schema's request definition for each client method.
REQUEST_DEFS = {
    "server/discover": "DiscoverRequest",
    "tools/list": "ListToolsRequest",
    "tools/call": "CallToolRequest",
    "resources/list": "ListResourcesRequest",
    "resources/templates/list": "ListResourceTemplatesRequest",
    "resources/read": "ReadResourceRequest",
    "prompts/list": "ListPromptsRequest",
    "prompts/get": "GetPromptRequest",
    "completion/complete": "CompleteRequest",
    "subscriptions/listen": "SubscriptionsListenRequest",
}


def assert_valid_request(message: dict[str, Any]) -> None:
    """Valid as its own request type and as a ``ClientRequest``."""
    assert_valid(REQUEST_DEFS[message["method"]], message)
    assert_valid("ClientRequest", message)
