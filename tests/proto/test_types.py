"""Value objects parsed from server JSON (GEN-5..7, TOOL-9..13, PROMPT-3, RES-2/5, ROOT-1/2)."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any
from urllib.parse import unquote, urlsplit

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_proto.errors import ValidationError
from mcp_proto.types import (
    AudioContent,
    Implementation,
    Prompt,
    PromptArgument,
    Resource,
    ResourceContent,
    ResourceLink,
    ResourceTemplate,
    Root,
    Tool,
    parse_tool_content,
)

ICONS = [
    {"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]},
    {"src": "data:image/svg+xml;base64,PHN2Zy8+", "theme": "dark"},
]
META: dict[str, Any] = {"io.example/owner": "team-a", "nested": {"k": [1, 2]}}

# A tools/list entry with every optional field of the 2025-11-25 schema.
FULL_TOOL: dict[str, Any] = {
    "name": "get_weather",
    "title": "Weather",
    "description": "Current weather",
    "inputSchema": {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
    "outputSchema": {"type": "object", "properties": {"temp": {"type": "number"}}},
    "annotations": {
        "title": "Weather (annotated)",
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    },
    "execution": {"taskSupport": "optional"},
    "icons": ICONS,
    "_meta": META,
}

FULL_PROMPT: dict[str, Any] = {
    "name": "review",
    "title": "Code review",
    "description": "Review code",
    "arguments": [
        {"name": "code", "title": "Code", "description": "The code", "required": True},
        {"name": "style"},
    ],
    "icons": ICONS,
    "_meta": META,
}

FULL_RESOURCE: dict[str, Any] = {
    "uri": "file:///project/README.md",
    "name": "README.md",
    "title": "Read me",
    "description": "Project readme",
    "mimeType": "text/markdown",
    "size": 1234,
    "annotations": {
        "audience": ["user"],
        "priority": 0.5,
        "lastModified": "2025-01-12T15:00:58Z",
    },
    "icons": ICONS,
    "_meta": META,
}

FULL_TEMPLATE: dict[str, Any] = {
    "uriTemplate": "file:///{path}",
    "name": "files",
    "title": "Files",
    "description": "Any file",
    "mimeType": "application/octet-stream",
    "annotations": {"audience": ["assistant"], "priority": 1},
    "icons": ICONS,
    "_meta": META,
}

FULL_LINK: dict[str, Any] = {"type": "resource_link", **FULL_RESOURCE}


# ------------------------------------------------------------------ Implementation


def test_implementation_round_trip_with_every_field() -> None:
    data = {
        "name": "srv",
        "version": "1.2.3",
        "title": "Server",
        "description": "A server",
        "websiteUrl": "https://example.com",
        "icons": ICONS,
    }
    impl = Implementation.from_dict(data)
    assert impl.website_url == "https://example.com"
    assert impl.icons == tuple(ICONS)
    assert impl.to_dict() == data


def test_implementation_minimal_to_dict_omits_unset() -> None:
    assert Implementation("c", "1").to_dict() == {"name": "c", "version": "1"}


@pytest.mark.parametrize(
    "data",
    [
        None,
        "srv",
        [],
        {},
        {"name": "x"},
        {"version": "1"},
        {"name": 1, "version": "1"},
        {"name": "x", "version": "1", "title": 5},
        {"name": "x", "version": "1", "icons": "nope"},
        {"name": "x", "version": "1", "icons": [{"mimeType": "image/png"}]},
        {"name": "x", "version": "1", "icons": [3]},
    ],
)
def test_implementation_malformed(data: Any) -> None:
    with pytest.raises(ValidationError):
        Implementation.from_dict(data)


# --------------------------------------------------------------------------- Tool


def test_tool_every_optional_field() -> None:
    tool = Tool.from_dict(FULL_TOOL, server="weather-srv")
    assert tool.name == "get_weather"
    assert tool.title == "Weather"
    assert tool.description == "Current weather"
    assert tool.input_schema == FULL_TOOL["inputSchema"]
    assert tool.schema is tool.input_schema
    assert tool.output_schema == FULL_TOOL["outputSchema"]
    assert tool.annotations == FULL_TOOL["annotations"]
    assert tool.icons == tuple(ICONS)
    assert tool.meta == META
    assert tool.task_support == "optional"
    assert tool.server == "weather-srv"
    assert tool.raw is FULL_TOOL
    assert tool.to_dict() == FULL_TOOL


def test_tool_to_dict_is_a_copy() -> None:
    tool = Tool.from_dict(FULL_TOOL)
    out = tool.to_dict()
    out["inputSchema"]["properties"]["city"]["type"] = "integer"
    out["_meta"]["nested"]["k"].append(3)
    assert FULL_TOOL["inputSchema"]["properties"]["city"]["type"] == "string"
    assert META["nested"]["k"] == [1, 2]


def test_tool_minimal() -> None:
    tool = Tool.from_dict({"name": "t"})
    assert tool.input_schema == {"type": "object"}
    assert tool.description is None
    assert tool.title is None
    assert tool.output_schema is None
    assert tool.annotations is None
    assert tool.icons == ()
    assert tool.meta is None
    assert tool.task_support is None
    assert tool.server is None
    assert tool.to_dict() == {"name": "t", "inputSchema": {"type": "object"}}


def test_tool_schema_key_fallback() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    assert Tool.from_dict({"name": "t", "schema": schema}).input_schema == schema
    # inputSchema wins over schema; a null inputSchema falls through.
    both = {"name": "t", "inputSchema": {"type": "object"}, "schema": schema}
    assert Tool.from_dict(both).input_schema == {"type": "object"}
    null = {"name": "t", "inputSchema": None, "schema": schema}
    assert Tool.from_dict(null).input_schema == schema


def test_tool_null_optional_fields_are_absent() -> None:
    tool = Tool.from_dict({"name": "t", "description": None, "annotations": None, "icons": None})
    assert tool.description is None
    assert tool.annotations is None
    assert tool.icons == ()


@pytest.mark.parametrize(
    "data",
    [
        None,
        42,
        "tool",
        ["name"],
        {},
        {"name": ""},
        {"name": 5},
        {"name": "t", "description": 5},
        {"name": "t", "title": ["x"]},
        {"name": "t", "inputSchema": "object"},
        {"name": "t", "inputSchema": []},
        {"name": "t", "schema": 1},
        {"name": "t", "outputSchema": "x"},
        {"name": "t", "annotations": ["readOnlyHint"]},
        {"name": "t", "_meta": 3},
        {"name": "t", "icons": {"src": "x"}},
        {"name": "t", "icons": [{"src": 1}]},
        {"name": "t", "execution": "optional"},
        {"name": "t", "execution": {"taskSupport": 1}},
    ],
)
def test_tool_malformed(data: Any) -> None:
    with pytest.raises(ValidationError):
        Tool.from_dict(data)


def test_tool_error_names_the_tool() -> None:
    with pytest.raises(ValidationError, match=r"tool 'calc'.*description"):
        Tool.from_dict({"name": "calc", "description": 7})


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        # TOOL-9: ToolAnnotations defaults when a hint is absent.
        (None, (False, True, False, True)),
        ({}, (False, True, False, True)),
        ({"title": "x"}, (False, True, False, True)),
        # Explicit values are respected, false included.
        (
            {
                "readOnlyHint": False,
                "destructiveHint": False,
                "idempotentHint": False,
                "openWorldHint": False,
            },
            (False, False, False, False),
        ),
        (
            {
                "readOnlyHint": True,
                "destructiveHint": True,
                "idempotentHint": True,
                "openWorldHint": True,
            },
            (True, True, True, True),
        ),
        # A non-boolean hint is not trusted: the default applies.
        (
            {
                "readOnlyHint": "yes",
                "destructiveHint": 0,
                "idempotentHint": 1,
                "openWorldHint": None,
            },
            (False, True, False, True),
        ),
    ],
)
def test_tool_annotation_hints(annotations: Any, expected: tuple[bool, ...]) -> None:
    tool = Tool.from_dict({"name": "t", "annotations": annotations})
    got = (tool.read_only_hint, tool.destructive_hint, tool.idempotent_hint, tool.open_world_hint)
    assert got == expected


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        (None, (False, False, False)),
        ({}, (False, False, False)),
        ({"readOnly": True, "destructive": True, "requiresConfirmation": True}, (True,) * 3),
        ({"readOnly": False, "destructive": False, "requiresConfirmation": False}, (False,) * 3),
        ({"readOnly": "true", "destructive": 1}, (False, False, False)),
        # The spec hints do not feed the legacy names.
        ({"readOnlyHint": True, "destructiveHint": True}, (False, False, False)),
    ],
)
def test_tool_legacy_annotations(annotations: Any, expected: tuple[bool, ...]) -> None:
    tool = Tool.from_dict({"name": "t", "annotations": annotations})
    assert (tool.is_read_only, tool.is_destructive, tool.requires_confirmation) == expected


@pytest.mark.parametrize(
    ("output_schema", "expected"),
    [(None, False), ({}, False), ({"type": "object"}, True)],
)
def test_tool_structured_output(output_schema: Any, expected: bool) -> None:
    data: dict[str, Any] = {"name": "t"}
    if output_schema is not None:
        data["outputSchema"] = output_schema
    assert Tool.from_dict(data).has_structured_output is expected


@pytest.mark.parametrize(
    ("execution", "supports", "required", "optional", "forbidden"),
    [
        (None, False, False, False, True),
        ({}, False, False, False, True),
        ({"taskSupport": "forbidden"}, False, False, False, True),
        ({"taskSupport": "optional"}, True, False, True, False),
        ({"taskSupport": "required"}, True, True, False, False),
        ({"taskSupport": "sometimes"}, False, False, False, True),
    ],
)
def test_tool_task_support(
    execution: Any, supports: bool, required: bool, optional: bool, forbidden: bool
) -> None:
    data: dict[str, Any] = {"name": "t"}
    if execution is not None:
        data["execution"] = execution
    tool = Tool.from_dict(data)
    assert tool.supports_task is supports
    assert tool.task_required is required
    assert tool.task_optional is optional
    assert tool.task_forbidden is forbidden


def test_tool_display_name_precedence() -> None:
    assert Tool.from_dict(FULL_TOOL).display_name == "Weather"
    only_annotation = {"name": "t", "annotations": {"title": "Annotated"}}
    assert Tool.from_dict(only_annotation).display_name == "Annotated"
    assert Tool.from_dict({"name": "t"}).display_name == "t"


def test_tool_is_frozen_and_unhashable() -> None:
    tool = Tool.from_dict({"name": "t"})
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        tool.name = "u"  # type: ignore[misc]
    with pytest.raises(TypeError):
        hash(tool)
    assert tool == Tool.from_dict({"name": "t"})
    assert "Tool(name='t'" in repr(tool)
    big = Tool.from_dict({"name": "t", "inputSchema": {"type": "object", "description": "x" * 500}})
    assert len(repr(big)) < 200


def test_tool_equality_ignores_raw() -> None:
    a = Tool.from_dict({"name": "t", "extra": 1})
    b = Tool.from_dict({"name": "t", "extra": 2})
    assert a == b


JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
JSON = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "name",
                    "title",
                    "description",
                    "inputSchema",
                    "schema",
                    "outputSchema",
                    "annotations",
                    "icons",
                    "_meta",
                    "execution",
                    "taskSupport",
                    "src",
                    "arguments",
                    "required",
                    "uri",
                    "uriTemplate",
                    "mimeType",
                    "size",
                    "text",
                    "blob",
                    "type",
                    "data",
                    "version",
                ]
            )
            | st.text(max_size=5),
            inner,
            max_size=6,
        )
    ),
    max_leaves=20,
)
PARSERS = [
    Tool.from_dict,
    Prompt.from_dict,
    PromptArgument.from_dict,
    Resource.from_dict,
    ResourceTemplate.from_dict,
    ResourceContent.from_dict,
    ResourceLink.from_dict,
    AudioContent.from_dict,
    Implementation.from_dict,
    Root.from_dict,
    Root.coerce,
    parse_tool_content,
]


@given(data=JSON, parser=st.sampled_from(PARSERS))
def test_parsers_only_raise_validation_error(data: Any, parser: Any) -> None:
    try:
        parsed = parser(data)
    except ValidationError:
        return
    # Whatever parsed must be usable without surprises.
    if isinstance(parsed, Tool):
        parsed.to_openai_tool()
        parsed.to_anthropic_tool()
        parsed.to_google_tool()
        json.dumps(parsed.to_dict())
        hints = (parsed.read_only_hint, parsed.destructive_hint, parsed.open_world_hint)
        assert all(isinstance(h, bool) for h in hints)
        assert isinstance(parsed.display_name, str)
        assert parsed.task_forbidden is not parsed.supports_task


@given(
    name=st.text(min_size=1, max_size=10),
    extra=st.dictionaries(st.text(max_size=5), JSON, max_size=4),
)
def test_tool_from_dict_with_random_extra_fields(name: str, extra: dict[str, Any]) -> None:
    data = {**extra, "name": name}
    try:
        tool = Tool.from_dict(data)
    except ValidationError:
        return
    assert tool.name == name


# ----------------------------------------------------------------------- Prompt


def test_prompt_every_optional_field() -> None:
    prompt = Prompt.from_dict(FULL_PROMPT, server="s1")
    assert prompt.name == "review"
    assert prompt.title == "Code review"
    assert prompt.description == "Review code"
    assert prompt.arguments == (
        PromptArgument("code", "The code", True, "Code"),
        PromptArgument("style"),
    )
    assert prompt.arguments[1].required is False
    assert prompt.required_arguments == ("code",)
    assert prompt.icons == tuple(ICONS)
    assert prompt.meta == META
    assert prompt.server == "s1"
    assert prompt.raw is FULL_PROMPT
    assert prompt.display_name == "Code review"
    assert prompt.to_dict() == FULL_PROMPT


def test_prompt_minimal() -> None:
    prompt = Prompt.from_dict({"name": "p"})
    assert prompt.arguments == ()
    assert prompt.display_name == "p"
    assert prompt.to_dict() == {"name": "p"}


@pytest.mark.parametrize(
    "data",
    [
        None,
        {},
        {"name": 3},
        {"name": "p", "arguments": {"name": "a"}},
        {"name": "p", "arguments": ["a"]},
        {"name": "p", "arguments": [{}]},
        {"name": "p", "arguments": [{"name": "a", "required": "yes"}]},
        {"name": "p", "_meta": []},
    ],
)
def test_prompt_malformed(data: Any) -> None:
    with pytest.raises(ValidationError):
        Prompt.from_dict(data)


def test_prompt_argument_error_is_located() -> None:
    with pytest.raises(ValidationError, match=r"arguments\[1\]"):
        Prompt.from_dict({"name": "p", "arguments": [{"name": "a"}, {"name": 2}]})


# -------------------------------------------------------------------- Resources


def test_resource_every_optional_field() -> None:
    res = Resource.from_dict(FULL_RESOURCE, server="fs")
    assert res.uri == "file:///project/README.md"
    assert res.name == "README.md"
    assert res.title == "Read me"
    assert res.description == "Project readme"
    assert res.mime_type == "text/markdown"
    assert res.size == 1234
    assert res.annotations == FULL_RESOURCE["annotations"]
    assert res.last_modified == "2025-01-12T15:00:58Z"
    assert res.icons == tuple(ICONS)
    assert res.meta == META
    assert res.server == "fs"
    assert res.raw is FULL_RESOURCE
    assert res.display_name == "Read me"
    assert res.to_dict() == FULL_RESOURCE


def test_resource_minimal() -> None:
    res = Resource.from_dict({"uri": "mem://x", "name": "x"})
    assert res.last_modified is None
    assert res.to_dict() == {"uri": "mem://x", "name": "x"}


@pytest.mark.parametrize(
    "data",
    [
        {"name": "x"},
        {"uri": "mem://x"},
        {"uri": "", "name": "x"},
        {"uri": "mem://x", "name": "x", "size": -1},
        {"uri": "mem://x", "name": "x", "size": 1.5},
        {"uri": "mem://x", "name": "x", "size": True},
        {"uri": "mem://x", "name": "x", "size": "10"},
        {"uri": "mem://x", "name": "x", "mimeType": 1},
        {"uri": "mem://x", "name": "x", "annotations": "x"},
    ],
)
def test_resource_malformed(data: Any) -> None:
    with pytest.raises(ValidationError):
        Resource.from_dict(data)


def test_resource_template_every_optional_field() -> None:
    tpl = ResourceTemplate.from_dict(FULL_TEMPLATE, server="fs")
    assert tpl.uri_template == "file:///{path}"
    assert tpl.name == "files"
    assert tpl.title == "Files"
    assert tpl.description == "Any file"
    assert tpl.mime_type == "application/octet-stream"
    assert tpl.annotations == FULL_TEMPLATE["annotations"]
    assert tpl.icons == tuple(ICONS)
    assert tpl.meta == META
    assert tpl.server == "fs"
    assert tpl.raw is FULL_TEMPLATE
    assert tpl.display_name == "Files"
    assert tpl.to_dict() == FULL_TEMPLATE


@pytest.mark.parametrize(
    "data", [{"name": "x"}, {"uriTemplate": "a/{b}"}, {"uriTemplate": 1, "name": "x"}]
)
def test_resource_template_malformed(data: Any) -> None:
    with pytest.raises(ValidationError):
        ResourceTemplate.from_dict(data)


# -------------------------------------------------------------- ResourceContent


def test_resource_content_text() -> None:
    data = {
        "uri": "file:///a.txt",
        "mimeType": "text/plain",
        "text": "héllo",
        "annotations": {"priority": 1},
        "_meta": META,
    }
    item = ResourceContent.from_dict(data)
    assert item.is_text and not item.is_binary
    assert item.text == "héllo"
    assert item.blob is None
    assert item.data == "héllo".encode()
    assert item.annotations == {"priority": 1}
    assert item.meta == META
    assert item.to_dict() == data


def test_resource_content_blob() -> None:
    payload = bytes(range(256))
    encoded = base64.b64encode(payload).decode()
    item = ResourceContent.from_dict(
        {"uri": "file:///a.bin", "mimeType": "application/octet-stream", "blob": encoded}
    )
    assert item.is_binary and not item.is_text
    assert item.blob == encoded  # kept as sent
    assert item.data == payload


def test_resource_content_blob_with_line_breaks() -> None:
    encoded = base64.encodebytes(b"x" * 100).decode()  # MIME style, wrapped
    assert "\n" in encoded
    item = ResourceContent.from_dict({"uri": "u", "blob": encoded})
    assert item.data == b"x" * 100


@pytest.mark.parametrize("blob", ["not base64!!", "abc", "YQ=", "YQ==YQ==x"])
def test_resource_content_bad_base64(blob: str) -> None:
    item = ResourceContent.from_dict({"uri": "u", "blob": blob})
    with pytest.raises(ValidationError, match="base64"):
        item.data  # noqa: B018


@pytest.mark.parametrize(
    "data",
    [
        {"uri": "u"},
        {"uri": "u", "text": "a", "blob": "YQ=="},
        {"uri": "u", "text": None, "blob": None},
        {"text": "a"},
        {"uri": 1, "text": "a"},
        {"uri": "u", "text": 5},
        {"uri": "u", "blob": b"YQ=="},
        "text",
    ],
)
def test_resource_content_malformed(data: Any) -> None:
    with pytest.raises(ValidationError):
        ResourceContent.from_dict(data)


def test_resource_content_constructor_checks_exactly_one() -> None:
    with pytest.raises(ValidationError):
        ResourceContent("u")
    with pytest.raises(ValidationError):
        ResourceContent("u", text="a", blob="YQ==")


# ---------------------------------------------------- tool result content items


def test_resource_link_every_optional_field() -> None:
    link = ResourceLink.from_dict(FULL_LINK)
    assert link.uri == FULL_RESOURCE["uri"]
    assert link.name == "README.md"
    assert link.title == "Read me"
    assert link.description == "Project readme"
    assert link.mime_type == "text/markdown"
    assert link.size == 1234
    assert link.annotations == FULL_RESOURCE["annotations"]
    assert link.icons == tuple(ICONS)
    assert link.meta == META
    assert link.to_dict() == FULL_LINK


@pytest.mark.parametrize(
    "data",
    [
        {"type": "resource_link", "uri": "u"},
        {"type": "resource_link", "name": "n"},
        {"type": "text", "uri": "u", "name": "n"},
        {"type": "resource_link", "uri": "u", "name": "n", "size": "big"},
    ],
)
def test_resource_link_malformed(data: Any) -> None:
    with pytest.raises(ValidationError):
        ResourceLink.from_dict(data)


def test_audio_content() -> None:
    raw = b"RIFF....WAVE"
    data = {
        "type": "audio",
        "data": base64.b64encode(raw).decode(),
        "mimeType": "audio/wav",
        "annotations": {"audience": ["user"]},
        "_meta": META,
    }
    audio = AudioContent.from_dict(data)
    assert audio.mime_type == "audio/wav"
    assert audio.data == data["data"]
    assert audio.decoded == raw
    assert audio.annotations == {"audience": ["user"]}
    assert audio.meta == META
    assert audio.to_dict() == data
    assert data["data"] not in repr(audio)


@pytest.mark.parametrize(
    "data",
    [
        {"type": "audio", "mimeType": "audio/wav"},
        {"type": "audio", "data": "AAAA"},
        {"type": "audio", "data": 1, "mimeType": "audio/wav"},
        {"type": "image", "data": "AAAA", "mimeType": "audio/wav"},
    ],
)
def test_audio_content_malformed(data: Any) -> None:
    with pytest.raises(ValidationError):
        AudioContent.from_dict(data)


def test_audio_content_bad_base64() -> None:
    audio = AudioContent.from_dict({"type": "audio", "data": "%%%", "mimeType": "audio/wav"})
    with pytest.raises(ValidationError):
        audio.decoded  # noqa: B018


def test_parse_tool_content() -> None:
    text = {"type": "text", "text": "hi"}
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    audio = {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}
    embedded = {"type": "resource", "resource": {"uri": "u", "text": "t"}}
    unknown = {"type": "future_thing", "x": 1}
    items = parse_tool_content([text, FULL_LINK, image, audio, embedded, unknown])
    assert items[0] is text
    assert isinstance(items[1], ResourceLink) and items[1].name == "README.md"
    assert items[2] is image
    assert isinstance(items[3], AudioContent) and items[3].decoded == b"\x00\x00\x00"
    assert items[4] is embedded
    assert items[5] is unknown
    assert parse_tool_content([]) == []


@pytest.mark.parametrize(
    "content",
    [
        None,
        {"type": "text"},
        "text",
        [1],
        [None],
        [{"type": "resource_link", "uri": "u"}],
        [{"type": "audio", "data": "AAAA"}],
    ],
)
def test_parse_tool_content_malformed(content: Any) -> None:
    with pytest.raises(ValidationError):
        parse_tool_content(content)


# ------------------------------------------------------------------------ Root


@pytest.mark.parametrize(
    "uri",
    [
        "file:///home/user/project",
        "FILE:///home/user/project",
        "file:///C:/Users/me",
        "file://server/share/dir",
        "file:///a/b..c/d",
        "file:///a/.../b",
        "file:///a/.hidden",
        "file:///",
    ],
)
def test_root_valid(uri: str) -> None:
    root = Root(uri)
    assert root.uri == uri


@pytest.mark.parametrize(
    "uri",
    [
        "http://example.com/x",
        "https://example.com",
        "file:/home/user",
        "file:relative",
        "/home/user",
        "",
        "file:///a/../b",
        "file:///a/..",
        "file://../etc",
        "file:///a/%2e%2e/b",
        "file:///a/%2E%2E/b",
        "file:///a/.%2e/b",
        "file:///a/..%2fb/../c",
        "file:///C:/a/..\\b",
        "file:///a/%2e%2e%5cb",
        "file:///a/%00b",
    ],
)
def test_root_invalid_uri(uri: str) -> None:
    with pytest.raises(ValueError):
        Root(uri)


@pytest.mark.parametrize("uri", [None, 5, b"file:///x", ["file:///x"]])
def test_root_uri_wrong_type(uri: Any) -> None:
    with pytest.raises(ValueError, match="string"):
        Root(uri)


def test_root_traversal_message_is_clear() -> None:
    with pytest.raises(ValidationError, match=r"'\.\.'"):
        Root("file:///a/%2e%2e/b")


def test_root_meta_and_name_checked() -> None:
    with pytest.raises(ValueError, match="_meta must be a mapping"):
        Root("file:///x", meta=["a"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="name"):
        Root("file:///x", name=3)  # type: ignore[arg-type]
    root = Root("file:///x", name="X", meta={"k": "v"})
    assert root.to_dict() == {"uri": "file:///x", "name": "X", "_meta": {"k": "v"}}
    assert str(root) == "X (file:///x)"
    assert str(Root("file:///x")) == "file:///x"


def test_root_coerce() -> None:
    root = Root("file:///x")
    assert Root.coerce(root) is root
    assert Root.coerce({"uri": "file:///y", "name": "Y"}) == Root("file:///y", "Y")
    coerced = Root.coerce({"uri": "file:///y", "_meta": {"a": 1}})
    assert coerced.meta == {"a": 1}
    assert Root.coerce({"uri": "file:///y"}).to_dict() == {"uri": "file:///y"}
    assert Root.from_dict({"uri": "file:///z", "name": "Z"}) == Root("file:///z", "Z")
    for bad in ("file:///x", 3, None, ["file:///x"], {"name": "no uri"}, {"uri": "http://x"}):
        with pytest.raises(ValueError):
            Root.coerce(bad)
    with pytest.raises(ValueError):
        Root.coerce({"uri": "file:///x", "_meta": "m"})


def test_root_is_frozen_and_compares_by_value() -> None:
    root = Root("file:///x", "X")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        root.uri = "file:///y"  # type: ignore[misc]
    assert root == Root("file:///x", "X")
    assert root != Root("file:///x", "Y")


@given(uri=st.text(max_size=40), name=st.none() | st.text(max_size=5), meta=JSON)
def test_root_only_raises_value_error(uri: str, name: str | None, meta: Any) -> None:
    try:
        root = Root(uri, name, meta)
    except ValueError:
        return
    assert root.uri.lower().startswith("file://")
    path = unquote(urlsplit(root.uri).path).replace("\\", "/")
    assert ".." not in path.split("/")


@given(
    segments=st.lists(st.sampled_from(["a", "..", "%2e%2e", "%2E.", "b c", "x%2Fy"]), max_size=5)
)
def test_root_traversal_property(segments: list[str]) -> None:
    uri = "file:///" + "/".join(segments)
    traversal = any(s.lower() in ("..", "%2e%2e", "%2e.") for s in segments)
    if traversal:
        with pytest.raises(ValueError):
            Root(uri)
    else:
        assert Root(uri).uri == uri


def test_fixtures_not_mutated_by_parsing() -> None:
    before = copy.deepcopy([FULL_TOOL, FULL_PROMPT, FULL_RESOURCE, FULL_TEMPLATE, FULL_LINK])
    Tool.from_dict(FULL_TOOL).to_anthropic_tool()
    Prompt.from_dict(FULL_PROMPT).to_dict()
    Resource.from_dict(FULL_RESOURCE).to_dict()
    ResourceTemplate.from_dict(FULL_TEMPLATE).to_dict()
    ResourceLink.from_dict(FULL_LINK).to_dict()
    assert before == [FULL_TOOL, FULL_PROMPT, FULL_RESOURCE, FULL_TEMPLATE, FULL_LINK]
