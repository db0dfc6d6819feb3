"""Which deprecation notices ``mcp-proto`` shows (issue 24 G).

The library announces each deprecated feature once per process
(``mcp_proto.deprecations``, DEP-9): the CLI is a new process for every command, so on
its own it would repeat the same notice on every command. It remembers what it showed,
across invocations, per *configuration* (the server command, the URL, or the config
file and ``--server``) and *version* (this package's): a notice shown once for a
configuration is not shown again until either changes.

The memory is a small JSON file, ``$XDG_STATE_HOME/mcp-proto/notices.json``
(``~/.local/state/mcp-proto/notices.json`` without ``XDG_STATE_HOME``): at most
:data:`MAX_ENTRIES` entries (the oldest go first), written atomically (a temporary
file in the same folder, then ``os.replace``), read leniently (a missing, unreadable or
corrupt file is an empty memory, overwritten at the next notice). Failing to read or
write it never fails a command: the notice is then simply shown again. The entries are
hashes: the file names no server, URL or path.

The features already shown for this configuration are dropped by a filter on the
CLI's stderr handler: the library consults it (DEP-14), so such a notice is neither
written nor spent. After the command, the features the library wrote in it
(``deprecations.announced()``, which counts only a notice a handler took, DEP-12) are
remembered.

Logging is deprecated by the 2026-07-28 revision; on a session of an earlier revision
``logging/setLevel`` and ``notifications/message`` are the protocol's own way, and the
notice's advice ("log to stderr or use OpenTelemetry") is for the server's author: a
command whose servers all speak an earlier revision shows no Logging notice
(:meth:`Notices.connected`).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from mcp_proto import deprecations

__all__ = ["MAX_ENTRIES", "Notices", "configuration", "state_file"]

#: The most notices remembered (each entry is ~60 bytes: the file stays under 16 KiB).
MAX_ENTRIES: Final = 256
_FORMAT: Final = 1
_MAX_FILE: Final = 1 << 20  # a bigger file is not ours: ignored


def state_file(environ: Mapping[str, str] | None = None) -> Path | None:
    """Where the memory lives (XDG Base Directory: ``$XDG_STATE_HOME``, an absolute
    path, else ``~/.local/state``)."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_STATE_HOME", "")
    if base and os.path.isabs(base):
        root = Path(base)
    else:
        try:
            root = Path.home() / ".local" / "state"
        except (RuntimeError, KeyError):  # no home to find: nothing is remembered
            return None
    return root / "mcp-proto" / "notices.json"


def configuration(opts: argparse.Namespace) -> str:
    """What the command connects to, as one string (hashed before it is stored)."""
    if getattr(opts, "config", None) is not None:
        try:
            path = str(Path(opts.config).resolve())
        except (OSError, RuntimeError):
            path = str(opts.config)
        return json.dumps(["config", path, opts.server])
    if getattr(opts, "url", None) is not None:
        return json.dumps(["url", opts.url, opts.transport, opts.endpoint])
    argv = opts.server_argv if opts.server_argv is not None else [opts.connect]
    return json.dumps(["command", list(argv), opts.cwd])


class Notices(logging.Filter):
    """The memory of one command, and the filter (on the CLI's stderr handler) that
    drops the notices not to show: :meth:`silence_shown` before connecting,
    :meth:`connected` once the servers' revisions are known, :meth:`remember` at the
    end."""

    def __init__(self, path: Path | None, configuration: str, version: str) -> None:
        super().__init__()
        self.path = path
        self._configuration = configuration
        self._version = version
        self._silenced: set[str] = set()  # notice texts
        self._before = deprecations.announced()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.WARNING or not self._silenced:
            return True
        try:
            return record.getMessage() not in self._silenced
        except Exception:  # not ours to judge: a record that cannot be formatted
            return True

    def _key(self, feature: str) -> str:
        text = f"{self._version}\0{self._configuration}\0{feature}"
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]

    def load(self) -> dict[str, float]:
        """The remembered entries (key -> when shown); empty if there is no usable file."""
        if self.path is None:
            return {}
        try:
            with open(self.path, "rb") as f:
                raw = f.read(_MAX_FILE + 1)
            if len(raw) > _MAX_FILE:
                return {}
            data = json.loads(raw)
        except (OSError, ValueError):
            return {}
        ours = isinstance(data, dict) and data.get("format") == _FORMAT
        shown = data.get("shown") if ours else None
        if not isinstance(shown, dict):
            return {}
        return {
            k: float(v)
            for k, v in shown.items()
            if isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool)
        }

    def silence_shown(self) -> None:
        """Drop the notices already shown for this configuration and version."""
        shown = self.load()
        for feature in deprecations.registry():
            if self._key(feature) in shown:
                self._silence(feature)

    def connected(self, eras: Iterable[str | None]) -> None:
        """The command's servers are connected, speaking these eras: without a
        2026-07-28 one, Logging is not deprecated in any of its sessions."""
        if "modern" not in set(eras):
            self._silence("logging")

    def _silence(self, feature: str) -> None:
        self._silenced.add(deprecations.registry()[feature].notice)

    def remember(self) -> None:
        """Remember the notices the library wrote in this command. Never raises."""
        new = deprecations.announced() - self._before
        if not new:
            return
        entries = self.load()
        now = time.time()
        for feature in new:
            entries[self._key(feature)] = now
        kept = dict(sorted(entries.items(), key=lambda kv: kv[1])[-MAX_ENTRIES:])
        with contextlib.suppress(OSError, ValueError):
            self._write({"format": _FORMAT, "shown": kept})

    def _write(self, data: Any) -> None:
        if self.path is None:
            return
        folder = self.path.parent
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temporary = tempfile.mkstemp(prefix=".notices-", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, separators=(",", ":"))
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
