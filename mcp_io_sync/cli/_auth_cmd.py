"""``mcp-proto login URL``, ``mcp-proto logout URL``, ``mcp-proto auth status`` (issue 21
item 6): OAuth logins kept in a file storage, used by every other command that connects
to the same URL (``stored_login``).

The file is ``$MCP_PROTO_OAUTH_FILE``, else ``$XDG_CONFIG_HOME/mcp-proto/oauth.json``
(``~/.config/...``): 0600 in a 0700 directory (``mcp_io_common.oauth_storage``). No
token, refresh token, code or client secret is ever printed, in text or ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._args import EXIT_CONNECTION, EXIT_OK, EXIT_USAGE, PROG

__all__ = ["AUTH_COMMANDS", "auth_main", "storage_path", "stored_login"]

#: The first words that select this module's commands.
AUTH_COMMANDS = ("login", "logout", "auth")


def storage_path() -> Path:
    explicit = os.environ.get("MCP_PROTO_OAUTH_FILE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "mcp-proto" / "oauth.json"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="OAuth logins of MCP servers.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    p = sub.add_parser(
        "login",
        prog=f"{PROG} login",
        help="authorize this machine for a server (browser flow); the token is stored",
    )
    p.add_argument("url", metavar="URL")
    p.add_argument("--scope", help="the scope to ask for (space-separated)")
    p.add_argument(
        "--redirect-port",
        type=int,
        default=8080,
        help="the loopback port of the redirect URI http://localhost:PORT/callback",
    )
    p.add_argument("--no-browser", action="store_true", help="print the URL instead")
    p.add_argument("--timeout", type=float, default=300.0, help="how long to wait for the browser")
    p = sub.add_parser("logout", prog=f"{PROG} logout", help="forget a server's tokens")
    p.add_argument("url", metavar="URL")
    p = sub.add_parser("auth", prog=f"{PROG} auth", help="the stored logins")
    p.add_argument("what", choices=("status",))
    p.add_argument("--json", action="store_true", help="as JSON")
    return parser


def _provider(url: str, **kwargs: Any) -> Any:
    from mcp_io_common.oauth_storage import FileStorage
    from mcp_proto.oauth import OAuthProvider

    return OAuthProvider(
        url, random_bytes=os.urandom, storage=FileStorage(storage_path()), **kwargs
    )


def stored_login(url: str) -> Any | None:
    """An ``OAuthProvider`` over the stored logins when ``url`` has one (a later
    command uses and refreshes its token; a flow that needs the browser fails, telling
    the user to log in again), else ``None`` (nothing OAuth is loaded)."""
    path = storage_path()
    if not path.is_file():
        return None
    provider = _provider(url)
    prefix = f"oauth-token:{provider.server_url} "
    if not any(k.startswith(prefix) for k in provider.storage.token_keys()):
        return None
    return provider


def _print(line: str) -> None:
    sys.stdout.write(line + "\n")


def _login(opts: argparse.Namespace) -> int:
    import mcp_io_sync

    provider = _provider(
        opts.url,
        scope=opts.scope,
        redirect_uri=f"http://localhost:{opts.redirect_port}/callback",
    )
    mcp_io_sync.BrowserOAuth(provider, timeout=opts.timeout, auto_open_browser=not opts.no_browser)
    if opts.no_browser:
        import logging

        logging.getLogger("mcp_io_sync.oauth").addHandler(logging.StreamHandler(sys.stderr))
    with mcp_io_sync.connect(opts.url, oauth_provider=provider, read_timeout=opts.timeout + 30):
        pass
    token = provider.current_token()
    if token is None:
        sys.stderr.write(f"{PROG}: {opts.url}: the server asked for no authorization\n")
        return EXIT_OK
    _print(f"logged in to {provider.server_url} ({_describe(token)})")
    return EXIT_OK


def _describe(token: Any) -> str:
    parts = [f"issuer {token.issuer}"]
    if token.scope:
        parts.append(f"scope {token.scope}")
    if token.expires_at is not None:
        left = token.expires_at - time.time()
        parts.append(f"expires in {int(left)} s" if left > 0 else "expired")
    parts.append("refreshable" if token.refresh_token else "not refreshable")
    return ", ".join(parts)


def _entries() -> list[dict[str, Any]]:
    from mcp_io_common.oauth_storage import FileStorage

    storage = FileStorage(storage_path())
    out = []
    for key in storage.token_keys():
        token = storage.get_token(key)
        if token is None:
            continue
        server = key.removeprefix("oauth-token:").rsplit(" ", 1)[0]
        out.append(
            {
                "server": server,
                "issuer": token.issuer,
                "token_type": token.token_type,
                "scope": token.scope,
                "expires_at": token.expires_at,
                "expired": token.is_expired(time.time()),
                "refreshable": bool(token.refresh_token),
            }
        )
    return out


def _status(opts: argparse.Namespace) -> int:
    entries = _entries()
    if opts.json:
        _print(json.dumps({"file": str(storage_path()), "logins": entries}, indent=2))
        return EXIT_OK
    if not entries:
        _print(f"no stored logins ({storage_path()})")
        return EXIT_OK
    for e in entries:
        state = "expired" if e["expired"] else "valid"
        refresh = ", refreshable" if e["refreshable"] else ""
        scope = f", scope {e['scope']}" if e["scope"] else ""
        _print(f"{e['server']}: {state}{refresh} (issuer {e['issuer']}{scope})")
    return EXIT_OK


def _logout(opts: argparse.Namespace) -> int:
    provider = _provider(opts.url)
    storage = provider.storage
    prefix = f"oauth-token:{provider.server_url} "
    keys = [k for k in storage.token_keys() if k.startswith(prefix)]
    for key in keys:
        storage.delete_token(key)
    storage.delete_server_metadata(provider.server_url)
    _print(
        f"logged out of {provider.server_url}"
        if keys
        else f"no stored login for {provider.server_url}"
    )
    return EXIT_OK


def auth_main(argv: Sequence[str]) -> int:
    """Run ``login``/``logout``/``auth status``; returns the exit code."""
    try:
        opts = _parser().parse_args(list(argv))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    from mcp_proto import errors

    try:
        if opts.command == "login":
            return _login(opts)
        if opts.command == "logout":
            return _logout(opts)
        return _status(opts)
    except errors.MCPError as exc:
        sys.stderr.write(f"{PROG}: {opts.command}: {' '.join(str(exc).split())}\n")
        return EXIT_CONNECTION
    except ValueError as exc:  # a bad URL, a corrupt storage file
        sys.stderr.write(f"{PROG}: {opts.command}: {exc}\n")
        return EXIT_USAGE
