"""A conformance-suite client for the OAuth core alone, until the core is wired into
``Client`` (then ``tests/conformance/client.py`` takes over and this file goes).

It speaks just enough MCP over Streamable HTTP (the 2025-11-25 handshake, or the
2026-07-28 stateless ``_meta``) to reach the suite's protected resource, every request
through ``OAuthProvider.auth_flow``, with an httpcore driver that follows the mock
authorization server's redirect. Configured per scenario from the harness's
``MCP_CONFORMANCE_SCENARIO`` and ``MCP_CONFORMANCE_CONTEXT``. Run it with the shared
recipe, e.g.::

    /work/shared/tools/run-conformance.sh \\
        ".venv/bin/python tests/oauth_conformance_probe.py" 2026-07-28

(legs ``2025-11-25``, ``2026-07-28``, ``extensions``). Only the ``auth/*`` scenarios are
meaningful: the other scenarios test MCP features this probe does not implement.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any
from urllib.parse import urljoin

import httpcore

from mcp_proto.oauth import (
    AuthorizationResponse,
    ClientInfo,
    EnterpriseIdP,
    HttpRequest,
    HttpResponse,
    JoseKey,
    MemoryStorage,
    Notice,
    OAuthProvider,
    ObtainAssertion,
    OpenAuthorization,
)

CIMD_URL = "https://conformance-test.local/client-metadata.json"


class Probe:
    def __init__(self, url: str, scenario: str, ctx: dict[str, Any], version: str) -> None:
        self.url, self.ctx, self.version = url, ctx, version
        self.pool = httpcore.ConnectionPool()
        self.session_id: str | None = None
        self.ids = iter(range(1, 1000))
        kw: dict[str, Any] = {
            "random_bytes": os.urandom,
            "client_id_metadata_url": CIMD_URL,
            "storage": MemoryStorage(),
        }
        if "client_id" in ctx and "issuer" in ctx:
            kw["client_info"] = ClientInfo(
                ctx["client_id"], ctx.get("client_secret"), issuer=ctx["issuer"]
            )
        if scenario.startswith("auth/dpop"):
            kw["dpop_key"] = JoseKey.generate("ES256")
        if scenario.startswith("auth/client-credentials"):
            kw["grant"] = "client_credentials"
            if "private_key_pem" in ctx:
                alg = ctx.get("signing_algorithm", "ES256")
                kw["client_key"] = JoseKey.from_pem(ctx["private_key_pem"], alg)
        if scenario == "auth/wif-jwt-bearer":
            kw["grant"] = "jwt_bearer"
        if scenario == "auth/enterprise-managed-authorization":
            kw["grant"] = "enterprise"
            kw["enterprise"] = EnterpriseIdP(
                ctx["idp_issuer"],
                ctx["idp_token_endpoint"],
                ctx["idp_client_id"],
                ctx.get("idp_client_secret"),
            )
        self.provider = OAuthProvider(url, **kw)
        if "client_id" in ctx and "issuer" not in ctx:
            # The context names no issuer; a host would (AUTH-18). The probe binds the
            # credentials to the issuer discovery finds.
            issuer = self.run(self.provider.discover(None)).issuer
            key = self.provider.client_registration_key(issuer)
            info = ClientInfo(ctx["client_id"], ctx.get("client_secret"), issuer=issuer)
            self.provider.storage.set_client_info(key, info)

    def http(self, req: HttpRequest) -> HttpResponse:
        try:
            return self._http(req)
        except (httpcore.ReadError, httpcore.WriteError, httpcore.RemoteProtocolError):
            return self._http(req)  # a kept-alive connection closed while idle

    def _http(self, req: HttpRequest) -> HttpResponse:
        with self.pool.stream(
            req.method.encode(), req.url, headers=list(req.headers), content=req.body
        ) as r:
            body = b""
            for chunk in r.iter_stream():
                body += chunk
                if req.max_response_bytes is not None and len(body) > req.max_response_bytes:
                    break
            headers = tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in r.headers)
            return HttpResponse(r.status, headers, body, time.time())

    def browse(self, url: str, redirect_uri: str) -> str:
        for _ in range(10):
            if url.startswith(redirect_uri):
                return url
            r = self.pool.request("GET", url)
            location = next((v for k, v in r.headers if k.lower() == b"location"), None)
            if location is None:
                raise SystemExit(f"the authorization endpoint answered {r.status}")
            url = urljoin(url, location.decode("latin-1"))
        raise SystemExit("too many redirects")

    def run(self, flow: Any) -> Any:
        reply: Any = None
        while True:
            try:
                effect = flow.send(reply)
            except StopIteration as stop:
                return stop.value
            if isinstance(effect, HttpRequest):
                reply = self.http(effect)
            elif isinstance(effect, OpenAuthorization):
                redirect = self.browse(effect.url, effect.redirect_uri)
                reply = AuthorizationResponse(redirect, time.time())
            elif isinstance(effect, ObtainAssertion):
                kind = "idp_id_token" if effect.kind == "id_token" else "valid_jwt"
                reply = self.ctx[kind]
            else:
                assert isinstance(effect, Notice)
                print(f"notice: {effect.kind}: {effect.message}", file=sys.stderr)
                reply = None

    def rpc(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not method.startswith("notifications/"):
            message["id"] = next(self.ids)
        headers = [
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", self.version),
        ]
        if self.session_id:
            headers.append(("Mcp-Session-Id", self.session_id))
        request = HttpRequest("POST", self.url, tuple(headers), json.dumps(message).encode())
        response = self.run(self.provider.auth_flow(request, time.time()))
        self.session_id = response.header("Mcp-Session-Id") or self.session_id
        if response.status >= 400:
            raise SystemExit(f"{method}: HTTP {response.status}")

    def main(self) -> None:
        if self.version >= "2026":
            meta = {
                "io.modelcontextprotocol/protocolVersion": self.version,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
            self.rpc("tools/list", {"_meta": meta})
            self.rpc("tools/call", {"name": "test-tool", "arguments": {}, "_meta": meta})
            return
        info = {"name": "mcp-proto-oauth-probe", "version": "0"}
        self.rpc(
            "initialize", {"protocolVersion": self.version, "capabilities": {}, "clientInfo": info}
        )
        self.rpc("notifications/initialized")
        self.rpc("tools/list", {})
        self.rpc("tools/call", {"name": "test-tool", "arguments": {}})


if __name__ == "__main__":
    Probe(
        sys.argv[-1],
        os.environ.get("MCP_CONFORMANCE_SCENARIO", ""),
        json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}"),
        os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or "2025-11-25",
    ).main()
