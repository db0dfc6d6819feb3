"""The OAuthStorage contract, run over the in-memory and the file storage (AUTH-32),
and the file storage's own promises: 0600, atomic replace, bounded reads."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mcp_io_common.oauth_storage import MAX_FILE_BYTES, FileStorage
from mcp_proto.oauth import (
    AuthorizationRecord,
    ClientInfo,
    HttpRequest,
    MemoryStorage,
    OAuthProvider,
    OAuthStorage,
    Token,
)
from tests.proto.oauth._fake import FakeAS, World, counter_random


@pytest.fixture(params=["memory", "file"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> OAuthStorage:
    if request.param == "memory":
        return MemoryStorage()
    return FileStorage(tmp_path / "oauth" / "state.json")


RECORD = AuthorizationRecord(
    state="st",
    code_verifier="v" * 43,
    issuer="https://as",
    iss_required=True,
    client_id="c",
    redirect_uri="http://localhost:8080/callback",
    resource="https://mcp",
    scope="a b",
    token_endpoint="https://as/token",
    server_url="https://mcp",
    created_at=12.5,
)


def test_the_contract(storage: OAuthStorage) -> None:
    assert isinstance(storage, OAuthStorage)
    token = Token("at", expires_at=99.5, scope="a", refresh_token="rt", issuer="https://as")
    assert storage.get_token("k") is None
    storage.set_token("k", token)
    assert storage.get_token("k") == token
    storage.delete_token("k")
    storage.delete_token("k")
    assert storage.get_token("k") is None
    info = ClientInfo("id", "secret", issuer="https://as", redirect_uris=("http://localhost/cb",))
    storage.set_client_info("c", info)
    assert storage.get_client_info("c") == info
    storage.delete_client_info("c")
    assert storage.get_client_info("c") is None
    storage.set_server_metadata("s", {"server": {"issuer": "https://as"}, "resource": None})
    assert storage.get_server_metadata("s") == {
        "server": {"issuer": "https://as"},
        "resource": None,
    }
    storage.set_authorization("st", RECORD)
    assert storage.get_authorization("st") == RECORD
    storage.delete_authorization("st")
    assert storage.get_authorization("st") is None


def test_a_whole_flow_survives_a_restart_over_the_storage(storage: OAuthStorage) -> None:
    server = "https://mcp.example.com/mcp"
    world = World(server, [FakeAS("https://auth.example.com")], challenge_scope="files:read")
    request = HttpRequest("POST", server, (), b"{}")
    first = OAuthProvider(server, random_bytes=counter_random(), storage=storage)
    assert world.run(first.auth_flow(request, 1000.0)).status == 200
    world.wire.clear()
    again = OAuthProvider(server, random_bytes=counter_random("2"), storage=storage)
    assert world.run(again.auth_flow(request, 1001.0)).status == 200
    assert [r.purpose for r in world.wire] == ["resource"]  # the stored token was used


def test_the_file_is_private_and_written_atomically(tmp_path: Path) -> None:
    path = tmp_path / "dir" / "oauth.json"
    storage = FileStorage(path)
    storage.set_token("k", Token("at"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    inode = path.stat().st_ino
    storage.set_token("k2", Token("at2"))
    assert path.stat().st_ino != inode  # replaced, not rewritten in place
    assert sorted(p.name for p in path.parent.iterdir()) == ["oauth.json"]  # no temp left


def test_a_failed_write_leaves_the_old_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "oauth.json"
    storage = FileStorage(path)
    storage.set_token("k", Token("old"))

    def broken_replace(src: str, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        storage.set_token("k", Token("new"))
    monkeypatch.undo()
    assert storage.get_token("k") == Token("old")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["oauth.json"]


def test_an_oversized_or_corrupt_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "oauth.json"
    path.write_bytes(b"{" + b" " * MAX_FILE_BYTES)
    with pytest.raises(ValueError, match="larger than"):
        FileStorage(path).get_token("k")
    path.write_bytes(b"[1, 2")
    with pytest.raises(ValueError, match="not a JSON"):
        FileStorage(path).get_token("k")
