"""Resources, resource templates and their contents, the content items of tool results
(resource links, audio) and roots: the value objects of :mod:`mcp_proto.types` that
describe data rather than operations (re-exported there, where users import them).
The same rules hold: peer data is untrusted, a malformed field is a
``ValidationError`` naming it, and the server's JSON is kept as given."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

import attrs

from ._type_fields import (
    _decode_base64,
    _icon_tuple,
    _icons,
    _json_copy,
    _kind,
    _label,
    _object,
    _opt_object,
    _opt_size,
    _opt_str,
    _put,
    _req_str,
)
from .errors import ValidationError

# --------------------------------------------------------------------------- resources


@attrs.frozen(unsafe_hash=False)
class Resource:
    """A resource a server can read (schema ``Resource``, RES-5)."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    icons: tuple[Mapping[str, Any], ...] = attrs.field(
        default=(), converter=_icon_tuple, repr=False
    )
    meta: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    server: str | None = None
    raw: Mapping[str, Any] | None = attrs.field(default=None, repr=False, eq=False)

    @classmethod
    def from_dict(cls, data: object, *, server: str | None = None) -> Resource:
        """Parse one entry of a ``resources/list`` result. Raises ``ValidationError``."""
        what = _label(data, "resource")
        obj = _object(data, what)
        return cls(
            uri=_req_str(obj, "uri", what, non_empty=True),
            name=_req_str(obj, "name", what),
            title=_opt_str(obj, "title", what),
            description=_opt_str(obj, "description", what),
            mime_type=_opt_str(obj, "mimeType", what),
            size=_opt_size(obj, "size", what),
            annotations=_opt_object(obj, "annotations", what),
            icons=_icons(obj, what),
            meta=_opt_object(obj, "_meta", what),
            server=server,
            raw=obj,
        )

    @property
    def display_name(self) -> str:
        """``title`` if set, else ``name``."""
        return self.title or self.name

    @property
    def last_modified(self) -> str | None:
        """``annotations.lastModified`` (an ISO 8601 string) if the server sent one."""
        value = (self.annotations or {}).get("lastModified")
        return value if isinstance(value, str) else None

    def to_dict(self) -> dict[str, Any]:
        """The wire shape; unset fields omitted."""
        out: dict[str, Any] = {"uri": self.uri, "name": self.name}
        _put(out, "title", self.title)
        _put(out, "description", self.description)
        _put(out, "mimeType", self.mime_type)
        _put(out, "size", self.size)
        if self.annotations is not None:
            out["annotations"] = _json_copy(self.annotations)
        _put(out, "icons", [_json_copy(icon) for icon in self.icons] or None)
        if self.meta is not None:
            out["_meta"] = _json_copy(self.meta)
        return out


@attrs.frozen(unsafe_hash=False)
class ResourceTemplate:
    """A URI template for resources (schema ``ResourceTemplate``; RFC 6570 templates)."""

    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    icons: tuple[Mapping[str, Any], ...] = attrs.field(
        default=(), converter=_icon_tuple, repr=False
    )
    meta: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    server: str | None = None
    raw: Mapping[str, Any] | None = attrs.field(default=None, repr=False, eq=False)

    @classmethod
    def from_dict(cls, data: object, *, server: str | None = None) -> ResourceTemplate:
        """Parse one entry of a ``resources/templates/list`` result."""
        what = _label(data, "resource template")
        obj = _object(data, what)
        return cls(
            uri_template=_req_str(obj, "uriTemplate", what, non_empty=True),
            name=_req_str(obj, "name", what),
            title=_opt_str(obj, "title", what),
            description=_opt_str(obj, "description", what),
            mime_type=_opt_str(obj, "mimeType", what),
            annotations=_opt_object(obj, "annotations", what),
            icons=_icons(obj, what),
            meta=_opt_object(obj, "_meta", what),
            server=server,
            raw=obj,
        )

    @property
    def display_name(self) -> str:
        """``title`` if set, else ``name``."""
        return self.title or self.name

    def to_dict(self) -> dict[str, Any]:
        """The wire shape; unset fields omitted."""
        out: dict[str, Any] = {"uriTemplate": self.uri_template, "name": self.name}
        _put(out, "title", self.title)
        _put(out, "description", self.description)
        _put(out, "mimeType", self.mime_type)
        if self.annotations is not None:
            out["annotations"] = _json_copy(self.annotations)
        _put(out, "icons", [_json_copy(icon) for icon in self.icons] or None)
        if self.meta is not None:
            out["_meta"] = _json_copy(self.meta)
        return out


@attrs.frozen(unsafe_hash=False)
class ResourceContent:
    """One item of a ``resources/read`` result: text or a base64 blob (RES-2).

    Exactly one of ``text`` / ``blob`` is set (schema ``TextResourceContents`` /
    ``BlobResourceContents``). ``blob`` is the base64 string as the server sent it;
    :attr:`data` decodes it.
    """

    uri: str
    mime_type: str | None = None
    text: str | None = attrs.field(default=None, repr=False)
    blob: str | None = attrs.field(default=None, repr=False)
    annotations: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    meta: Mapping[str, Any] | None = attrs.field(default=None, repr=False)

    def __attrs_post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            raise ValidationError(
                f"resource contents {self.uri!r}: exactly one of 'text' and 'blob' must be set"
            )

    @classmethod
    def from_dict(cls, data: object) -> ResourceContent:
        """Parse one entry of ``contents``. Raises ``ValidationError`` if malformed."""
        what = "resource contents"
        obj = _object(data, what)
        uri = _req_str(obj, "uri", what)
        what = f"resource contents {uri[:64]!r}"
        text = _opt_str(obj, "text", what)
        blob = _opt_str(obj, "blob", what)
        if text is not None and blob is not None:
            raise ValidationError(f"{what}: has both 'text' and 'blob'")
        if text is None and blob is None:
            raise ValidationError(f"{what}: has neither 'text' nor 'blob'")
        return cls(
            uri=uri,
            mime_type=_opt_str(obj, "mimeType", what),
            text=text,
            blob=blob,
            annotations=_opt_object(obj, "annotations", what),
            meta=_opt_object(obj, "_meta", what),
        )

    @property
    def is_text(self) -> bool:
        """The item carries ``text``."""
        return self.text is not None

    @property
    def is_binary(self) -> bool:
        """The item carries a base64 ``blob``."""
        return self.blob is not None

    @property
    def data(self) -> bytes:
        """The content as bytes: the decoded blob, or the text encoded as UTF-8.

        Raises:
            ValidationError: the blob is not valid base64.
        """
        if self.blob is not None:
            return _decode_base64(self.blob, f"resource contents {self.uri[:64]!r}")
        return (self.text or "").encode("utf-8")

    def to_dict(self) -> dict[str, Any]:
        """The wire shape; unset fields omitted."""
        out: dict[str, Any] = {"uri": self.uri}
        _put(out, "mimeType", self.mime_type)
        _put(out, "text", self.text)
        _put(out, "blob", self.blob)
        if self.annotations is not None:
            out["annotations"] = _json_copy(self.annotations)
        if self.meta is not None:
            out["_meta"] = _json_copy(self.meta)
        return out


# -------------------------------------------------------------- tool result content


@attrs.frozen(unsafe_hash=False)
class ResourceLink:
    """A ``resource_link`` content item in a tool or prompt result (GEN-7).

    Per the schema, a linked resource need not appear in ``resources/list``.
    """

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    icons: tuple[Mapping[str, Any], ...] = attrs.field(
        default=(), converter=_icon_tuple, repr=False
    )
    meta: Mapping[str, Any] | None = attrs.field(default=None, repr=False)

    @classmethod
    def from_dict(cls, data: object) -> ResourceLink:
        """Parse a ``ResourceLink``. Raises ``ValidationError`` if malformed."""
        what = _label(data, "resource link")
        obj = _object(data, what)
        kind = obj.get("type", "resource_link")
        if kind != "resource_link":
            raise ValidationError(f"{what}: 'type' must be 'resource_link', got {kind!r}")
        return cls(
            uri=_req_str(obj, "uri", what, non_empty=True),
            name=_req_str(obj, "name", what),
            title=_opt_str(obj, "title", what),
            description=_opt_str(obj, "description", what),
            mime_type=_opt_str(obj, "mimeType", what),
            size=_opt_size(obj, "size", what),
            annotations=_opt_object(obj, "annotations", what),
            icons=_icons(obj, what),
            meta=_opt_object(obj, "_meta", what),
        )

    def to_dict(self) -> dict[str, Any]:
        """The wire shape, ``type: "resource_link"`` included."""
        out: dict[str, Any] = {"type": "resource_link", "uri": self.uri, "name": self.name}
        _put(out, "title", self.title)
        _put(out, "description", self.description)
        _put(out, "mimeType", self.mime_type)
        _put(out, "size", self.size)
        if self.annotations is not None:
            out["annotations"] = _json_copy(self.annotations)
        _put(out, "icons", [_json_copy(icon) for icon in self.icons] or None)
        if self.meta is not None:
            out["_meta"] = _json_copy(self.meta)
        return out


@attrs.frozen(unsafe_hash=False)
class AudioContent:
    """An ``audio`` content item (schema ``AudioContent``, GEN-5).

    ``data`` is the base64 string as sent; :attr:`decoded` gives the bytes.
    """

    data: str = attrs.field(repr=False)
    mime_type: str
    annotations: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    meta: Mapping[str, Any] | None = attrs.field(default=None, repr=False)

    @classmethod
    def from_dict(cls, data: object) -> AudioContent:
        """Parse an ``AudioContent``. Raises ``ValidationError`` if malformed."""
        what = "audio content"
        obj = _object(data, what)
        kind = obj.get("type", "audio")
        if kind != "audio":
            raise ValidationError(f"{what}: 'type' must be 'audio', got {kind!r}")
        return cls(
            data=_req_str(obj, "data", what),
            mime_type=_req_str(obj, "mimeType", what),
            annotations=_opt_object(obj, "annotations", what),
            meta=_opt_object(obj, "_meta", what),
        )

    @property
    def decoded(self) -> bytes:
        """The audio bytes. Raises ``ValidationError`` if ``data`` is not valid base64."""
        return _decode_base64(self.data, "audio content")

    def to_dict(self) -> dict[str, Any]:
        """The wire shape, ``type: "audio"`` included."""
        out: dict[str, Any] = {"type": "audio", "data": self.data, "mimeType": self.mime_type}
        if self.annotations is not None:
            out["annotations"] = _json_copy(self.annotations)
        if self.meta is not None:
            out["_meta"] = _json_copy(self.meta)
        return out


def parse_tool_content(content: object) -> list[ResourceLink | AudioContent | dict[str, Any]]:
    """Type the ``content`` array of a ``CallToolResult`` (GEN-7).

    ``resource_link`` items become :class:`ResourceLink`, ``audio`` items
    :class:`AudioContent`; every other item is returned as the original dict. Not
    applied automatically: a tool result stays the server's JSON unless the host asks.

    Raises:
        ValidationError: ``content`` is not an array, an item is not an object, or a
            ``resource_link``/``audio`` item is malformed.
    """
    if not isinstance(content, (list, tuple)):
        raise ValidationError(f"tool result content must be an array, got {_kind(content)}")
    items: list[ResourceLink | AudioContent | dict[str, Any]] = []
    for index, item in enumerate(content):
        if not isinstance(item, dict):
            raise ValidationError(
                f"tool result content[{index}] must be an object, got {_kind(item)}"
            )
        kind = item.get("type")
        try:
            if kind == "resource_link":
                items.append(ResourceLink.from_dict(item))
            elif kind == "audio":
                items.append(AudioContent.from_dict(item))
            else:
                items.append(item)
        except ValidationError as exc:
            raise ValidationError(f"tool result content[{index}]: {exc}") from None
    return items


# ------------------------------------------------------------------------------- roots


def _check_root_uri(_inst: object, _attr: attrs.Attribute[Any], uri: Any) -> None:
    """Root URIs: ``file://`` only, and no ``..`` segment even when percent-encoded.

    Spec (client/roots, 2025-11-25): the uri "MUST be a ``file://`` URI in the current
    specification", and clients MUST "validate all root URIs to prevent path
    traversal" (ROOT-2).
    """
    if not isinstance(uri, str):
        raise ValidationError(f"Root uri must be a string, got {_kind(uri)}")
    # The schema asks for the literal ``file://`` form; ``file:/x`` and ``file:x``
    # are not accepted.
    if not uri[:7].lower() == "file://":
        raise ValidationError(f"Root uri must be a file:// URI, got {uri[:200]!r}")
    try:
        parts = urlsplit(uri)
    except ValueError as exc:
        raise ValidationError(f"Root uri is not a valid URI: {uri[:200]!r} ({exc})") from None
    # Decode first so "%2e%2e" cannot smuggle a ".." past the check; split on both
    # separators because a Windows server treats "\" as one.
    for part in (parts.netloc, parts.path):
        decoded = unquote(part)
        if "\x00" in decoded:
            raise ValidationError(f"Root uri must not contain NUL characters: {uri[:200]!r}")
        if ".." in decoded.replace("\\", "/").split("/"):
            raise ValidationError(
                f"Root uri must not contain '..' path segments, got {uri[:200]!r}"
            )


def _check_root_name(_inst: object, _attr: attrs.Attribute[Any], name: Any) -> None:
    if name is not None and not isinstance(name, str):
        raise ValidationError(f"Root name must be a string or None, got {_kind(name)}")


def _check_root_meta(_inst: object, _attr: attrs.Attribute[Any], meta: Any) -> None:
    # Root._meta is an object of arbitrary keys (schema ``Root``).
    if meta is not None and not isinstance(meta, Mapping):
        raise ValidationError(f"Root _meta must be a mapping, got {_kind(meta)}")


@attrs.frozen(unsafe_hash=False)
class Root:
    """A directory or file the client exposes to servers (schema ``Root``, ROOT-1/2).

    Validated on construction; a bad value raises
    :class:`~mcp_proto.errors.ValidationError` (a ``ValueError``).
    """

    uri: str = attrs.field(validator=_check_root_uri)
    name: str | None = attrs.field(default=None, validator=_check_root_name)
    meta: Mapping[str, Any] | None = attrs.field(
        default=None, validator=_check_root_meta, repr=False
    )

    @classmethod
    def coerce(cls, obj: object) -> Root:
        """A :class:`Root` from a ``Root`` or a mapping ``{uri, name, _meta}``.

        Raises:
            ValidationError: anything else, or an invalid root.
        """
        if isinstance(obj, Root):
            return obj
        if isinstance(obj, Mapping):
            # Wrong types are the validators' business: they raise ValidationError.
            uri: Any = obj.get("uri")
            name: Any = obj.get("name")
            meta: Any = obj.get("_meta", obj.get("meta"))
            return cls(uri=uri, name=name, meta=meta)
        raise ValidationError(f"a root must be a Root or a mapping, got {_kind(obj)}")

    @classmethod
    def from_dict(cls, data: object) -> Root:
        """Parse a wire ``Root`` (same rules as :meth:`coerce`)."""
        return cls.coerce(_object(data, "root"))

    def to_dict(self) -> dict[str, Any]:
        """The wire shape ``{uri, name?, _meta?}``."""
        out: dict[str, Any] = {"uri": self.uri}
        _put(out, "name", self.name)
        if self.meta is not None:
            out["_meta"] = _json_copy(self.meta)
        return out

    def __str__(self) -> str:
        return f"{self.name} ({self.uri})" if self.name else self.uri
