"""A file-backed :class:`mcp_proto.oauth.OAuthStorage` (AUTH-32; issue 21 item 5).

One JSON document holds every slot (tokens, registrations, metadata, pending
authorization requests). It is readable by its owner alone — the directory is created
0700 and the file written 0600 — and each write is atomic: the whole document goes to
a temporary file in the same directory (created 0600, flushed and fsynced), which then
replaces the old one with ``os.replace``, so a crash leaves the old document or the new
one, never half of either. Reads are bounded (:data:`MAX_FILE_BYTES`).

Writers in several processes are not serialised: the last write wins. Tokens and
registrations are rewritten whole, so a lost write costs a refresh or a registration,
never a torn credential.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, Final

from mcp_proto.oauth import AuthorizationRecord, ClientInfo, Token

__all__ = ["MAX_FILE_BYTES", "FileStorage"]

#: A larger file is refused (a wrong path such as /dev/zero is not read for ever).
MAX_FILE_BYTES: Final = 4 * 1024 * 1024

_SECTIONS: Final = ("tokens", "clients", "metadata", "authorizations")


class FileStorage:
    """OAuth state in the JSON file at ``path`` (created on first write)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"FileStorage({str(self.path)!r})"

    # ------------------------------------------------------------ the document

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            with open(self.path, "rb") as f:
                data = f.read(MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            return {name: {} for name in _SECTIONS}
        if len(data) > MAX_FILE_BYTES:
            raise ValueError(f"{self.path}: larger than {MAX_FILE_BYTES} bytes")
        try:
            doc = json.loads(data) if data.strip() else {}
        except ValueError:
            raise ValueError(f"{self.path}: not a JSON OAuth storage document") from None
        if not isinstance(doc, dict):
            raise ValueError(f"{self.path}: not a JSON OAuth storage document")
        return {name: doc[name] if isinstance(doc.get(name), dict) else {} for name in _SECTIONS}

    def _write(self, doc: dict[str, dict[str, Any]]) -> None:
        directory = self.path.parent
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        data = json.dumps({"version": 1, **doc}, indent=1, sort_keys=True).encode()
        # mkstemp creates the file O_EXCL with mode 0600.
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=directory)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, stat.S_IRUSR | stat.S_IWUSR)
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def _get(self, section: str, key: str) -> dict[str, Any] | None:
        value = self._read()[section].get(key)
        return value if isinstance(value, dict) else None

    def _set(self, section: str, key: str, value: dict[str, Any] | None) -> None:
        doc = self._read()
        if value is None:
            if key not in doc[section]:
                return
            del doc[section][key]
        else:
            doc[section][key] = value
        self._write(doc)

    def token_keys(self) -> list[str]:
        """The keys of the stored tokens (``mcp-proto auth status``, ``logout``)."""
        return sorted(self._read()["tokens"])

    def delete_server_metadata(self, key: str) -> None:
        self._set("metadata", key, None)

    # ------------------------------------------------------------ OAuthStorage

    def get_token(self, key: str) -> Token | None:
        value = self._get("tokens", key)
        return Token.from_dict(value) if value is not None else None

    def set_token(self, key: str, token: Token) -> None:
        self._set("tokens", key, token.to_dict())

    def delete_token(self, key: str) -> None:
        self._set("tokens", key, None)

    def get_client_info(self, key: str) -> ClientInfo | None:
        value = self._get("clients", key)
        return ClientInfo.from_dict(value) if value is not None else None

    def set_client_info(self, key: str, info: ClientInfo) -> None:
        self._set("clients", key, info.to_dict())

    def delete_client_info(self, key: str) -> None:
        self._set("clients", key, None)

    def get_server_metadata(self, key: str) -> dict[str, Any] | None:
        return self._get("metadata", key)

    def set_server_metadata(self, key: str, metadata: dict[str, Any]) -> None:
        self._set("metadata", key, metadata)

    def get_authorization(self, state: str) -> AuthorizationRecord | None:
        value = self._get("authorizations", state)
        return AuthorizationRecord.from_dict(value) if value is not None else None

    def set_authorization(self, state: str, record: AuthorizationRecord) -> None:
        self._set("authorizations", state, record.to_dict())

    def delete_authorization(self, state: str) -> None:
        self._set("authorizations", state, None)
