"""The typed results of ``call_tool``, ``get_prompt``, ``list_resources``,
``list_resource_templates`` and ``complete`` (issue 22 item 5): typed fields, the
mapping of the shape the operations returned before (``result["content"]``), and the
typed errors on malformed results."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from _proto_support import drive
from hypothesis import given
from hypothesis import strategies as st

from mcp_proto.client import ClientCore, ServerEntry
from mcp_proto.effects import Call, Connect, Effect, Log
from mcp_proto.errors import RemoteProtocolError, ValidationError
from mcp_proto.handlers import Handlers
from mcp_proto.results import (
    CompletionResult,
    PromptMessage,
    PromptResult,
    ResourcePage,
    ResourceTemplatePage,
    ToolResult,
)
from mcp_proto.session import ServerInfo
from mcp_proto.types import (
    AudioContent,
    EmbeddedResource,
    ImageContent,
    Resource,
    ResourceContent,
    ResourceLink,
    ResourceTemplate,
    TextContent,
    parse_content_item,
)

META = {"io.example/trace": "t-1"}
TEXT = {"type": "text", "text": "hello"}
IMAGE = {"type": "image", "data": "AAAA", "mimeType": "image/png", "annotations": {"p": 1}}
AUDIO = {"type": "audio", "data": "AAAAAAAA", "mimeType": "audio/wav"}
LINK = {"type": "resource_link", "uri": "file:///x", "name": "x", "size": 3}
EMBEDDED = {"type": "resource", "resource": {"uri": "demo://r", "text": "inner"}, "_meta": META}
UNKNOWN = {"type": "hologram", "frames": 3}


# ------------------------------------------------------------------------ tools/call


def test_tool_result_types_every_content_kind() -> None:
    raw = {
        "content": [TEXT, IMAGE, AUDIO, LINK, EMBEDDED, UNKNOWN],
        "structuredContent": {"k": 1},
        "isError": False,
        "_meta": META,
    }
    result = ToolResult.from_wire(raw, server="s")
    text, image, audio, link, embedded, unknown = result.content
    assert text == TextContent("hello")
    assert isinstance(image, ImageContent) and image.decoded == b"\x00\x00\x00"
    assert image.annotations == {"p": 1}
    assert isinstance(audio, AudioContent) and audio.mime_type == "audio/wav"
    assert isinstance(link, ResourceLink) and link.size == 3
    assert isinstance(embedded, EmbeddedResource) and embedded.meta == META
    assert embedded.resource == ResourceContent(uri="demo://r", text="inner")
    assert unknown is UNKNOWN  # a newer revision's kind is kept as sent
    assert result.structured_content == {"k": 1}
    assert result.is_error is False and result.meta == META and result.server == "s"
    assert result.text == "hello"
    # Each typed item gives back its wire shape.
    assert [i.to_dict() for i in result.content[:5]] == [TEXT, IMAGE, AUDIO, LINK, EMBEDDED]


def test_tool_result_keeps_the_readme_shape() -> None:
    raw = {"content": [TEXT], "structuredContent": {"sum": 7}, "isError": True}
    result = ToolResult.from_wire(raw)
    assert result["content"][0]["text"] == "hello"
    assert result["structuredContent"] == {"sum": 7}
    assert result.get("isError") is True and result.get("missing") is None
    assert "content" in result and "_meta" not in result
    assert result == raw and dict(result) == raw and len(result) == 3
    assert result.raw is raw and result.is_error
    assert json.loads(json.dumps(result.to_dict())) == raw
    with pytest.raises(KeyError):
        result["nope"]
    with pytest.raises(AttributeError):
        result.is_error = False  # type: ignore[misc]
    with pytest.raises(TypeError):
        hash(result)  # compares as a dict, so unhashable as one


def test_tool_result_tolerates_what_call_tool_always_did() -> None:
    # No content (the schema requires it, some servers omit it on errors), no isError,
    # structuredContent null, a resultType of 2026-07-28: all returned.
    for raw in ({}, {"isError": None}, {"content": None, "structuredContent": None}):
        result = ToolResult.from_wire(raw)
        assert result.content == () and not result.is_error and result.structured_content is None
    modern = ToolResult.from_wire({"content": [TEXT], "resultType": "complete"})
    assert modern["resultType"] == "complete" and modern.text == "hello"


@pytest.mark.parametrize(
    ("raw", "detail"),
    [
        (None, "expected a JSON object, got null"),
        ([TEXT], "expected a JSON object, got array"),
        ({"content": "hello"}, "content must be an array, got string"),
        ({"content": {"type": "text"}}, "content must be an array, got object"),
        ({"content": [TEXT, 3]}, "content[1]: a content item must be an object"),
        ({"content": [{"type": "text"}]}, "content[0]: text content: missing"),
        ({"content": [{"type": "text", "text": 3}]}, "content[0]: text content: field 'text'"),
        ({"content": [{"type": "image", "data": "AAAA"}]}, "content[0]: image content"),
        ({"content": [{"type": "resource", "resource": "x"}]}, "field 'resource' must be"),
        ({"content": [{"type": "resource", "resource": {"uri": "u"}}]}, "neither 'text'"),
        ({"content": [{"type": "resource_link", "uri": "u"}]}, "content[0]: resource link"),
        ({"content": [], "isError": "true"}, "'isError' must be a boolean, got string"),
        ({"content": [], "_meta": []}, "'_meta' must be an object, got array"),
    ],
)
def test_a_malformed_tool_result_is_a_remote_protocol_error(raw: Any, detail: str) -> None:
    with pytest.raises(RemoteProtocolError, match="server 'srv' sent a malformed tools/call") as e:
        ToolResult.from_wire(raw, server="srv")
    assert detail in str(e.value)


def test_a_tool_result_built_by_hand_has_its_wire_shape() -> None:
    result = ToolResult((TextContent("a"), LINK), is_error=True)
    assert result == {"content": [{"type": "text", "text": "a"}, LINK], "isError": True}
    assert ToolResult() == {"content": []}


_ITEMS = st.one_of(
    st.builds(TextContent, st.text()),
    st.builds(ImageContent, st.text(), st.text()),
    st.builds(AudioContent, data=st.text(), mime_type=st.text()),
    st.builds(
        EmbeddedResource,
        st.builds(ResourceContent, uri=st.text(), text=st.text()),
        meta=st.none() | st.just(META),
    ),
    st.builds(ResourceLink, uri=st.text(min_size=1), name=st.text()),
    st.fixed_dictionaries({"type": st.sampled_from(["x-new", "video"]), "n": st.integers()}),
)


@given(st.lists(_ITEMS, max_size=6), st.booleans())
def test_typed_content_round_trips_through_the_wire(items: list[Any], is_error: bool) -> None:
    built = ToolResult(tuple(items), is_error=is_error)
    wire = json.loads(json.dumps(built.to_dict()))
    again = ToolResult.from_wire(wire)
    assert again.content == tuple(items) and again.is_error is is_error
    assert again == built  # as mappings
    assert again.text == "\n".join(i.text for i in items if isinstance(i, TextContent))


@given(st.dictionaries(st.text(), st.text() | st.integers() | st.none(), max_size=4))
def test_an_item_of_unknown_type_is_kept_as_sent(extra: dict[str, Any]) -> None:
    item = {**extra, "type": "from-the-future"}
    assert parse_content_item(item) is item


def test_parse_content_item_refuses_what_is_not_an_object() -> None:
    for bad in (None, "text", 3, ["text"]):
        with pytest.raises(ValidationError, match="must be an object"):
            parse_content_item(bad)


# ----------------------------------------------------------------------- prompts/get


def test_prompt_result() -> None:
    raw = {
        "description": "a review",
        "messages": [
            {"role": "user", "content": TEXT},
            {"role": "assistant", "content": EMBEDDED},
        ],
        "_meta": META,
    }
    result = PromptResult.from_wire(raw, server="s")
    assert result.messages == (
        PromptMessage("user", TextContent("hello")),
        PromptMessage("assistant", EmbeddedResource.from_dict(EMBEDDED)),
    )
    assert result.description == "a review" and result.meta == META and result.server == "s"
    assert result["messages"][0]["content"]["text"] == "hello"  # the README's shape
    assert result == raw and result.to_dict() == raw
    assert [m.to_dict() for m in result.messages] == raw["messages"]
    assert PromptResult(result.messages, description="a review") == {
        "messages": raw["messages"],
        "description": "a review",
    }


@pytest.mark.parametrize(
    ("raw", "detail"),
    [
        ("x", "expected a JSON object"),
        ({}, "'messages' must be an array, got null"),
        ({"messages": None}, "'messages' must be an array, got null"),
        ({"messages": [1]}, "messages[0] must be an object"),
        ({"messages": [{"content": TEXT}]}, "messages[0]: 'role' must be a string"),
        ({"messages": [{"role": "user"}]}, "messages[0].content: a content item must be"),
        ({"messages": [{"role": "user", "content": [TEXT]}]}, "got array"),
        ({"messages": [], "description": 3}, "'description' must be a string"),
    ],
)
def test_a_malformed_prompt_result_is_a_remote_protocol_error(raw: Any, detail: str) -> None:
    with pytest.raises(RemoteProtocolError, match="malformed prompts/get result") as e:
        PromptResult.from_wire(raw, server="s")
    assert detail in str(e.value)


# ------------------------------------------------------------------------------ pages


def test_resource_pages() -> None:
    raw = {"resources": [{"uri": "demo://a", "name": "a"}], "nextCursor": "p2"}
    page = ResourcePage.from_wire(raw, server="s")
    assert page.resources == (Resource(uri="demo://a", name="a", server="s"),)
    assert page.next_cursor == "p2" and page.raw is raw
    assert page == {"resources": list(page.resources), "nextCursor": "p2"}
    assert page["resources"][0].uri == "demo://a"  # the entries are typed, as before
    assert page.to_dict() == raw
    merged = ResourcePage(page.resources)
    assert merged["nextCursor"] is None and merged.raw is None
    assert merged.to_dict() == {"resources": raw["resources"]}
    raw_t = {"resourceTemplates": [{"uriTemplate": "demo://{id}", "name": "t"}], "nextCursor": 7}
    templates = ResourceTemplatePage.from_wire(raw_t, server="s")
    assert templates.resource_templates == (
        ResourceTemplate(uri_template="demo://{id}", name="t", server="s"),
    )
    assert templates.next_cursor is None  # not a string: no next page
    assert templates["resourceTemplates"] == list(templates.resource_templates)


def test_malformed_pages() -> None:
    for raw in (None, {}, {"resources": {}}):
        with pytest.raises(RemoteProtocolError, match="malformed resources page"):
            ResourcePage.from_wire(raw, server="s")
    with pytest.raises(ValidationError, match="resource"):
        ResourcePage.from_wire({"resources": [{"name": "no uri"}]}, server="s")
    with pytest.raises(RemoteProtocolError, match="malformed resourceTemplates page"):
        ResourceTemplatePage.from_wire({"resourceTemplates": "x"}, server="s")


# --------------------------------------------------------------- completion/complete


def test_completion_result() -> None:
    raw = {"completion": {"values": ["py", "pyx"], "total": 10, "hasMore": True}}
    result = CompletionResult.from_wire(raw, server="s")
    assert result.completions == ("py", "pyx") and result.total == 10 and result.has_more
    assert result == {"values": ["py", "pyx"], "total": 10, "hasMore": True}
    assert result["values"] == ["py", "pyx"] and result.raw is raw
    assert result.to_dict() == raw["completion"]
    # Only what was sent is mapped.
    assert CompletionResult.from_wire({"completion": {"values": []}}) == {"values": []}


@pytest.mark.parametrize(
    "raw", [None, [], {}, {"completion": None}, {"completion": {}}, {"completion": {"values": 1}}]
)
def test_a_completion_without_values_has_none(raw: Any) -> None:
    result = CompletionResult.from_wire(raw)
    assert result.completions == () and result == {"values": []}


@pytest.mark.parametrize(
    ("completion", "detail"),
    [
        ({"values": ["a", 1]}, "values[1] must be a string, got number"),
        ({"values": [], "total": -1}, "'total' must be a non-negative integer"),
        ({"values": [], "total": True}, "'total' must be a non-negative integer"),
        ({"values": [], "hasMore": "yes"}, "'hasMore' must be a boolean"),
    ],
)
def test_malformed_completion_values(completion: Any, detail: str) -> None:
    with pytest.raises(RemoteProtocolError, match="completion/complete") as e:
        CompletionResult.from_wire({"completion": completion}, server="s")
    assert detail in str(e.value)


def test_every_result_is_a_read_only_mapping() -> None:
    results: list[Mapping[str, Any]] = [
        ToolResult(),
        PromptResult(),
        ResourcePage(),
        ResourceTemplatePage(),
        CompletionResult(),
    ]
    for result in results:
        assert isinstance(result, Mapping)
        assert not hasattr(result, "__setitem__")
        assert type(result).__name__ in repr(result)


# ------------------------------------------------------------------ the operations


def _answering(script: dict[str, Any]) -> tuple[ClientCore, Callable[[Effect], Any]]:
    caps = {"tools": {}, "prompts": {}, "resources": {}, "completions": {}}

    def perform(effect: Effect) -> Any:
        if isinstance(effect, Connect):
            return ServerInfo("2025-11-25", caps, None, None)
        if isinstance(effect, Call):
            return script[effect.method]
        assert isinstance(effect, Log), effect
        return None

    return ClientCore([ServerEntry("srv", "stdio")], handlers=Handlers()), perform


def test_the_operations_return_typed_results() -> None:
    core, perform = _answering(
        {
            "tools/list": {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]},
            "tools/call": {"content": [TEXT]},
            "prompts/list": {"prompts": [{"name": "p"}]},
            "prompts/get": {"messages": [{"role": "user", "content": TEXT}]},
            "resources/list": {"resources": [{"uri": "demo://a", "name": "a"}]},
            "resources/templates/list": {"resourceTemplates": []},
            "completion/complete": {"completion": {"values": ["x"]}},
        }
    )
    called = drive(core.call_tool("t"), perform)
    assert isinstance(called, ToolResult) and called.server == "srv" and called.text == "hello"
    [again] = drive(core.call_tools([{"name": "t"}]), perform)
    assert isinstance(again, ToolResult)
    prompt = drive(core.get_prompt("p"), perform)
    assert isinstance(prompt, PromptResult) and prompt.server == "srv"
    page = drive(core.list_resources(), perform)
    assert isinstance(page, ResourcePage) and page.resources[0].server == "srv"
    one = drive(core.list_resources(cursor="c", server="srv"), perform)
    assert isinstance(one, ResourcePage) and one.raw is not None
    templates = drive(core.list_resource_templates(), perform)
    assert isinstance(templates, ResourceTemplatePage) and templates.resource_templates == ()
    ref = {"type": "ref/prompt", "name": "p"}
    done = drive(core.complete(ref, {"name": "a", "value": ""}), perform)
    assert isinstance(done, CompletionResult) and done.completions == ("x",)


def test_call_tool_refuses_a_malformed_result() -> None:
    core, perform = _answering(
        {
            "tools/list": {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]},
            "tools/call": {"content": [{"type": "image"}]},
        }
    )
    with pytest.raises(RemoteProtocolError, match="server 'srv' sent a malformed tools/call"):
        drive(core.call_tool("t"), perform)
