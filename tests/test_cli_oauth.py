"""``mcp-proto login|logout|auth status`` (issue 21 item 6) against a REAL authorization
server: oidc-provider in front of a small protected MCP resource
(``tests/peers/oidc_provider.mjs``). ``login`` runs the browser flow (the browser is
automated: it follows the provider's login/consent redirects to the loopback listener),
the token is kept in the file storage (0600), a later ``-c URL`` command uses it, and
no secret appears in any output (text or ``--json``)."""

from __future__ import annotations

import json
import os
import stat
import threading
import webbrowser
from pathlib import Path
from typing import Any

import httpcore
import pytest
from shells.test_oauth_shells import Browser, free_port, peer  # noqa: F401 (fixture)

from mcp_io_common.oauth_storage import FileStorage
from mcp_io_sync.cli import main
from mcp_proto.oauth import OpenAuthorization

pytestmark = pytest.mark.peer


def test_login_status_use_and_logout(
    peer: dict[str, str],  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    resource = peer["resource"]
    store = tmp_path / "cfg" / "oauth.json"
    monkeypatch.setenv("MCP_PROTO_OAUTH_FILE", str(store))
    port = free_port()
    browser = Browser()

    def user(url: str) -> None:
        landing = browser.handle(OpenAuthorization(url, f"http://localhost:{port}/callback"))
        httpcore.request("GET", landing.replace("localhost", "127.0.0.1"))

    def open_in_background(url: str) -> bool:
        threading.Thread(target=user, args=(url,), daemon=True).start()
        return True

    monkeypatch.setattr(webbrowser, "open", open_in_background)
    assert main(["login", resource, "--redirect-port", str(port), "--timeout", "60"]) == 0
    out = capsys.readouterr()
    assert out.out.startswith(f"logged in to {resource} (issuer {peer['issuer']}")
    assert len(browser.opened) == 1
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o600

    storage = FileStorage(store)
    (key,) = storage.token_keys()
    token = storage.get_token(key)
    assert token is not None and token.refresh_token
    secrets = [token.access_token, token.refresh_token]

    assert main(["auth", "status", "--json"]) == 0
    status = capsys.readouterr().out
    (login,) = json.loads(status)["logins"]
    assert login["server"] == resource and login["refreshable"] and not login["expired"]
    assert main(["auth", "status"]) == 0
    status += capsys.readouterr().out

    # A later command on the same URL presents the stored token: no browser.
    assert main(["-c", resource, "--protocol", "legacy", "--json", "call", "whoami"]) == 0
    called = capsys.readouterr()
    assert resource in called.out  # the resource's facts: the token's audience
    assert len(browser.opened) == 1

    assert main(["logout", resource]) == 0
    logged_out = capsys.readouterr().out
    assert logged_out.strip() == f"logged out of {resource}"
    assert storage.token_keys() == []
    assert main(["auth", "status"]) == 0
    assert "no stored logins" in capsys.readouterr().out

    everything: Any = [out.out, out.err, status, called.out, called.err, logged_out]
    assert not [s for s in secrets if s and any(s in text for text in everything)]


def test_a_command_without_a_login_gets_the_401(
    peer: dict[str, str],  # noqa: F811
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    env = {**os.environ, "MCP_PROTO_OAUTH_FILE": str(tmp_path / "none.json")}
    argv = ["-c", peer["resource"], "--protocol", "legacy", "tools"]
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_io_sync.cli", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 3, proc.stderr
    assert "401" in proc.stderr
