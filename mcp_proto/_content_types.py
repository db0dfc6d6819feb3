"""The content items of tool results and prompt messages (schema ``ContentBlock``):
text, images and embedded resources here; audio and resource links, which predate this
module, in ``_resource_types``. :func:`parse_content_item` types one item of any kind.

The same rules as the rest of :mod:`mcp_proto.types` hold: the item is untrusted peer
data, a malformed field is a ``ValidationError`` naming it, and the server's JSON is
kept as given (``annotations``, ``_meta``). An item of a type this client does not know
(a newer revision's) is kept as the server's mapping, so nothing is lost.

They are :class:`~mcp_proto._record.Record` values, not ``attrs`` classes: a tool result
is typed on every ``call_tool``, and ``import mcp_io_sync`` loads this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

from ._record import Record
from ._resource_types import AudioContent, ResourceContent, ResourceLink
from ._type_fields import (
    _decode_base64,
    _json_copy,
    _kind,
    _object,
    _opt_object,
    _req_str,
)
from .errors import ValidationError

__all__ = [
    "ContentItem",
    "EmbeddedResource",
    "ImageContent",
    "TextContent",
    "parse_content_item",
]


_set = object.__setattr__  # (frozen: Record refuses setattr)


class TextContent(Record):
    """A ``text`` content item (schema ``TextContent``)."""

    __slots__ = ("annotations", "meta", "text")
    text: str
    annotations: Mapping[str, Any] | None
    meta: Mapping[str, Any] | None

    def __init__(
        self,
        text: str,
        annotations: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        _set(self, "text", text)
        _set(self, "annotations", annotations)
        _set(self, "meta", meta)

    @classmethod
    def from_dict(cls, data: object) -> TextContent:
        """Parse a ``TextContent``. Raises ``ValidationError`` if malformed."""
        what = "text content"
        obj = _object(data, what)
        _check_type(obj, "text", what)
        return cls(
            text=_req_str(obj, "text", what),
            annotations=_opt_object(obj, "annotations", what),
            meta=_opt_object(obj, "_meta", what),
        )

    def to_dict(self) -> dict[str, Any]:
        """The wire shape, ``type: "text"`` included."""
        out: dict[str, Any] = {"type": "text", "text": self.text}
        _put_extras(out, self.annotations, self.meta)
        return out


class ImageContent(Record):
    """An ``image`` content item (schema ``ImageContent``).

    ``data`` is the base64 string as sent; :attr:`decoded` gives the bytes.
    """

    __slots__ = ("annotations", "data", "meta", "mime_type")
    data: str
    mime_type: str
    annotations: Mapping[str, Any] | None
    meta: Mapping[str, Any] | None

    def __init__(
        self,
        data: str,
        mime_type: str,
        annotations: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        _set(self, "data", data)
        _set(self, "mime_type", mime_type)
        _set(self, "annotations", annotations)
        _set(self, "meta", meta)

    @classmethod
    def from_dict(cls, data: object) -> ImageContent:
        """Parse an ``ImageContent``. Raises ``ValidationError`` if malformed."""
        what = "image content"
        obj = _object(data, what)
        _check_type(obj, "image", what)
        return cls(
            data=_req_str(obj, "data", what),
            mime_type=_req_str(obj, "mimeType", what),
            annotations=_opt_object(obj, "annotations", what),
            meta=_opt_object(obj, "_meta", what),
        )

    @property
    def decoded(self) -> bytes:
        """The image bytes. Raises ``ValidationError`` if ``data`` is not valid base64."""
        return _decode_base64(self.data, "image content")

    def to_dict(self) -> dict[str, Any]:
        """The wire shape, ``type: "image"`` included."""
        out: dict[str, Any] = {"type": "image", "data": self.data, "mimeType": self.mime_type}
        _put_extras(out, self.annotations, self.meta)
        return out


class EmbeddedResource(Record):
    """A ``resource`` content item: a resource's contents inlined (schema
    ``EmbeddedResource``); ``resource`` holds its text or blob."""

    __slots__ = ("annotations", "meta", "resource")
    resource: ResourceContent
    annotations: Mapping[str, Any] | None
    meta: Mapping[str, Any] | None

    def __init__(
        self,
        resource: ResourceContent,
        annotations: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        _set(self, "resource", resource)
        _set(self, "annotations", annotations)
        _set(self, "meta", meta)

    @classmethod
    def from_dict(cls, data: object) -> EmbeddedResource:
        """Parse an ``EmbeddedResource``. Raises ``ValidationError`` if malformed."""
        what = "embedded resource"
        obj = _object(data, what)
        _check_type(obj, "resource", what)
        inner = obj.get("resource")
        if not isinstance(inner, Mapping):
            raise ValidationError(f"{what}: field 'resource' must be an object, got {_kind(inner)}")
        return cls(
            resource=ResourceContent.from_dict(inner),
            annotations=_opt_object(obj, "annotations", what),
            meta=_opt_object(obj, "_meta", what),
        )

    def to_dict(self) -> dict[str, Any]:
        """The wire shape, ``type: "resource"`` included."""
        out: dict[str, Any] = {"type": "resource", "resource": self.resource.to_dict()}
        _put_extras(out, self.annotations, self.meta)
        return out


#: One item of a tool result's ``content`` or a prompt message's ``content``: a typed
#: item, or the server's mapping for a type this client does not know.
ContentItem: TypeAlias = (
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource | Mapping[str, Any]
)

_PARSERS: dict[object, Any] = {
    "text": TextContent.from_dict,
    "image": ImageContent.from_dict,
    "audio": AudioContent.from_dict,
    "resource_link": ResourceLink.from_dict,
    "resource": EmbeddedResource.from_dict,
}


def parse_content_item(item: object) -> ContentItem:
    """Type one content item (schema ``ContentBlock``). A known ``type`` must carry its
    required fields; an unknown one (or none) is returned as the server's mapping.

    Raises:
        ValidationError: ``item`` is not an object, or a known item is malformed.
    """
    if type(item) is dict and len(item) == 2 and item.get("type") == "text":
        # The usual item, {"type": "text", "text": ...}: typed without the general
        # parser (a tool result is typed on every call_tool).
        text = item.get("text")
        if type(text) is str:
            return TextContent(text)
    if not isinstance(item, Mapping):
        raise ValidationError(f"a content item must be an object, got {_kind(item)}")
    kind = item.get("type")
    parse = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parse is None:
        return item
    result: ContentItem = parse(item)
    return result


def content_to_dict(item: ContentItem) -> dict[str, Any]:
    """The wire shape of a content item (a copy of an unknown item's mapping)."""
    if isinstance(item, Mapping):
        copied: dict[str, Any] = _json_copy(item)
        return copied
    return item.to_dict()


def _check_type(obj: Mapping[str, Any], expected: str, what: str) -> None:
    kind = obj.get("type", expected)
    if kind != expected:
        raise ValidationError(f"{what}: 'type' must be {expected!r}, got {kind!r}")


def _put_extras(
    out: dict[str, Any], annotations: Mapping[str, Any] | None, meta: Mapping[str, Any] | None
) -> None:
    if annotations is not None:
        out["annotations"] = _json_copy(annotations)
    if meta is not None:
        out["_meta"] = _json_copy(meta)
