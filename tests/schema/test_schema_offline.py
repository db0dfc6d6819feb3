"""A hostile schema cannot make the client fetch a URL or read a file (SCH-13, SCH-15).

A tiny HTTP server on 127.0.0.1 counts every connection; schemas point ``$ref``,
``$dynamicRef``, ``$schema`` and relative references at it and at ``file:`` URLs. Each
is reported as unusable (external / unsupported dialect), the server sees nothing, and
a file whose content would change the answer is never read.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_proto import schema
from mcp_proto.errors import SchemaError


class _Recorder(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        self.connections = 0
        self.paths: list[str] = []
        super().__init__(("127.0.0.1", 0), _Handler)

    def verify_request(self, request: Any, client_address: Any) -> bool:
        self.connections += 1
        return True


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Recorder

    def do_GET(self) -> None:
        self.server.paths.append(self.path)
        body = json.dumps({"type": "string"}).encode()  # what a fetch would bring back
        self.send_response(200)
        self.send_header("Content-Type", "application/schema+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[_Recorder]:
    recorder = _Recorder()
    thread = threading.Thread(target=recorder.serve_forever, daemon=True)
    thread.start()
    try:
        yield recorder
    finally:
        recorder.shutdown()
        recorder.server_close()
        thread.join(timeout=5)


def _url(server: _Recorder, path: str = "schema.json") -> str:
    host, port = server.server_address[:2]
    return f"http://{host!s}:{port}/{path}"


def _external_schemas(url: str, base: str) -> list[Any]:
    return [
        {"$ref": url},
        {"$ref": url + "#/definitions/x"},
        {"properties": {"a": {"$ref": url}}},
        {"if": False, "then": {"$ref": url}},  # in a branch no instance reaches
        {"$defs": {"unused": {"$ref": url}}},
        {"allOf": [{"$ref": "#/$defs/a"}], "$defs": {"a": {"$ref": url}}},
        {"$id": base, "$ref": "other.json"},  # relative to an $id on the server
        {"$dynamicRef": url + "#meta"},
        {"$schema": schema.DIALECT_2019_09, "$recursiveRef": url},
        {"$ref": "#/x-unknown", "x-unknown": {"$ref": url}},
        {"$schema": schema.DIALECT_DRAFT_07, "definitions": {"a": {"$ref": url}}},
    ]


def test_http_references_are_never_followed(server: _Recorder) -> None:
    url = _url(server)
    for bad in _external_schemas(url, _url(server, "dir/root.json")):
        with pytest.raises(SchemaError) as info:
            schema.compile(bad)
        assert "JSON Schema" in str(info.value)
        if "$recursiveRef" not in bad:  # 2019-09 allows only "#" there: malformed
            assert isinstance(info.value, schema.ExternalReferenceError), bad
            assert info.value.reference is not None
            assert info.value.reference.startswith(url.rsplit("/", 1)[0]), bad
        with pytest.raises(SchemaError):
            schema.errors_for(bad, "x")  # the path the client uses
    assert server.connections == 0
    assert server.paths == []


def test_meta_schema_on_the_server_is_not_fetched(server: _Recorder) -> None:
    for meta in (_url(server, "meta.json"), _url(server, "meta.json") + "#"):
        with pytest.raises(schema.UnsupportedDialectError) as info:
            schema.compile({"$schema": meta, "type": "string"})
        assert info.value.dialect == meta
        with pytest.raises(schema.UnsupportedDialectError):
            schema.compile({"$defs": {"x": {"$id": "urn:x", "$schema": meta}}})
    assert server.connections == 0


def test_file_references_are_never_read(tmp_path: Path) -> None:
    # If this file were read, {"$ref": <it>} would accept everything.
    planted = tmp_path / "planted.json"
    planted.write_text("true", encoding="utf-8")
    for target in ("file:///etc/passwd", planted.as_uri(), planted.as_uri() + "#"):
        for bad in ({"$ref": target}, {"items": {"$ref": target}}, {"$id": target, "$ref": "x"}):
            with pytest.raises(schema.ExternalReferenceError) as info:
                schema.compile(bad)
            assert info.value.reference is not None
            assert info.value.reference.startswith("file:")
    with pytest.raises(schema.ExternalReferenceError):
        schema.compile({"$id": tmp_path.as_uri() + "/", "$ref": "planted.json"})


def test_relative_reference_without_a_base_is_external() -> None:
    with pytest.raises(schema.ExternalReferenceError):
        schema.compile({"$ref": "other.json"})
    with pytest.raises(schema.ExternalReferenceError):
        schema.compile({"$ref": "urn:example:elsewhere"})


def test_references_inside_the_document_resolve(server: _Recorder) -> None:
    url = _url(server, "root.json")
    valid = schema.compile(
        {
            "$id": url,  # an http $id is a name, not a place to go
            "$defs": {
                "n": {"$id": "n.json", "type": "integer"},
                "u": {"$id": "urn:example:u", "type": "string"},
                "a": {"$anchor": "anchored", "minimum": 0},
            },
            "properties": {
                "n": {"$ref": "n.json"},
                "abs": {"$ref": _url(server, "n.json")},
                "u": {"$ref": "urn:example:u"},
                "anchor": {"$ref": "#anchored"},
                "pointer": {"$ref": "#/$defs/n"},
                "self": {"$ref": ""},
            },
        }
    )
    assert valid.is_valid({"n": 1, "abs": 2, "u": "x", "anchor": 3, "pointer": 4, "self": {}})
    assert not valid.is_valid({"n": "1"})
    assert not valid.is_valid({"u": 1})
    assert not valid.is_valid({"anchor": -1})
    assert not valid.is_valid({"self": {"n": "x"}})
    assert server.connections == 0
