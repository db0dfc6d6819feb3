"""A scripted world for the pure OAuth flow: an MCP resource and authorization servers
as plain Python, answering the flow's effects as values and recording every request
(the "wire"), so a test asserts on what was sent. Time is a number; randomness a
counter."""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from mcp_proto.oauth import (
    AuthorizationResponse,
    HttpRequest,
    HttpResponse,
    Notice,
    OpenAuthorization,
)


def counter_random(salt: str = "") -> Callable[[int], bytes]:
    """Deterministic 'random' bytes: each call a new block."""
    seq = itertools.count(1)

    def random_bytes(n: int) -> bytes:
        i = next(seq)
        return hashlib.sha256(f"{salt}{i}".encode()).digest()[:n].ljust(n, b"\0")

    return random_bytes


def json_response(
    obj: Any, status: int = 200, headers: tuple[tuple[str, str], ...] = ()
) -> HttpResponse:
    return HttpResponse(
        status, (("Content-Type", "application/json"), *headers), json.dumps(obj).encode()
    )


NOT_FOUND = HttpResponse(404, (), b"not found")


@dataclass
class FakeAS:
    """An authorization server at ``issuer`` (metadata at the RFC 8414 path)."""

    issuer: str
    scopes_supported: list[str] | None = None
    iss_supported: bool = True
    iss_mode: str = "correct"  # correct / omit / wrong / normalized
    pkce: list[str] | None = field(default_factory=lambda: ["S256"])
    registration: bool = True
    cimd: bool = False
    auth_methods: list[str] | None = field(default_factory=lambda: ["none"])
    token_type: str | None = "Bearer"
    expires_in: int | None = 3600
    refresh: bool = True
    metadata_issuer: str | None = None
    authorization_endpoint: str | None = None
    client_secret: str | None = None
    tokens: int = 0
    codes: dict[str, dict[str, str]] = field(default_factory=dict)
    clients: list[dict[str, Any]] = field(default_factory=list)

    def metadata(self) -> dict[str, Any]:
        md: dict[str, Any] = {
            "issuer": self.metadata_issuer or self.issuer,
            "authorization_endpoint": self.authorization_endpoint or f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "response_types_supported": ["code"],
            "authorization_response_iss_parameter_supported": self.iss_supported,
        }
        if self.pkce is not None:
            md["code_challenge_methods_supported"] = self.pkce
        if self.registration:
            md["registration_endpoint"] = f"{self.issuer}/register"
        if self.scopes_supported is not None:
            md["scopes_supported"] = self.scopes_supported
        if self.cimd:
            md["client_id_metadata_document_supported"] = True
        if self.auth_methods is not None:
            md["token_endpoint_auth_methods_supported"] = self.auth_methods
        return md

    def handle(self, req: HttpRequest) -> HttpResponse | None:
        path = req.url.split("?")[0]
        well_known = f"{origin(self.issuer)}/.well-known/oauth-authorization-server"
        if path == well_known + urlsplit(self.issuer).path:
            return json_response(self.metadata())
        if path == f"{self.issuer}/register" and req.method == "POST":
            body = json.loads(req.body)
            self.clients.append(body)
            out = {"client_id": f"client-{len(self.clients)}@{self.issuer}", **body}
            if self.client_secret:
                out["client_secret"] = self.client_secret
            return json_response(out, 201)
        if path == f"{self.issuer}/token" and req.method == "POST":
            return self.token(req)
        return None

    def authorize(self, url: str) -> str:
        q = dict(parse_qsl(urlsplit(url).query))
        code = f"code-{len(self.codes) + 1}"
        self.codes[code] = q
        params = {"code": code, "state": q["state"]}
        if self.iss_mode == "correct":
            params["iss"] = self.issuer
        elif self.iss_mode == "wrong":
            params["iss"] = "https://evil.example.com"
        elif self.iss_mode == "normalized":
            params["iss"] = self.issuer + "/"
        return q["redirect_uri"] + "?" + urlencode(params)

    def token(self, req: HttpRequest) -> HttpResponse:
        form = dict(parse_qsl(req.body.decode()))
        grant = form.get("grant_type")
        if grant == "authorization_code":
            q = self.codes.pop(form.get("code", ""), None)
            if q is None:
                return json_response({"error": "invalid_grant"}, 400)
            verifier = form.get("code_verifier", "")
            challenge = (
                base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
                .rstrip(b"=")
                .decode()
            )
            if challenge != q.get("code_challenge") or form.get("resource") != q.get("resource"):
                return json_response({"error": "invalid_grant"}, 400)
            scope = q.get("scope")
        elif grant == "refresh_token":
            if not form.get("refresh_token", "").startswith("refresh-"):
                return json_response({"error": "invalid_grant"}, 400)
            scope = None
        else:
            return json_response({"error": "unsupported_grant_type"}, 400)
        self.tokens += 1
        out: dict[str, Any] = {"access_token": f"at-{self.tokens}@{self.issuer}"}
        if self.token_type is not None:
            out["token_type"] = self.token_type
        if self.expires_in is not None:
            out["expires_in"] = self.expires_in
        if self.refresh:
            out["refresh_token"] = f"refresh-{self.tokens}"
        if scope:
            out["scope"] = scope
        return json_response(out)


def origin(url: str) -> str:
    p = urlsplit(url)
    return f"{p.scheme}://{p.netloc}"


@dataclass
class World:
    """The MCP server at ``server_url`` with its PRM, and its authorization servers."""

    server_url: str
    servers: list[FakeAS]
    prm_path: str | None = None  # default: path-aware
    prm_resource: str | None = None
    prm_scopes: list[str] | None = None
    prm_as: list[str] | None = None
    challenge_scope: str | None = None
    challenge_prm: bool = True
    required_scopes: set[str] = field(default_factory=set)
    wire: list[HttpRequest] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    authorize_urls: list[str] = field(default_factory=list)
    valid_tokens: set[str] = field(default_factory=set)
    extra: dict[str, HttpResponse] = field(default_factory=dict)
    callback: Callable[[str], str] | None = None
    now: float = 1000.0

    @property
    def prm_url(self) -> str:
        path = (
            self.prm_path
            or "/.well-known/oauth-protected-resource" + urlsplit(self.server_url).path
        )
        return origin(self.server_url) + path

    def current_as(self) -> FakeAS:
        names = self.prm_as or [self.servers[0].issuer]
        return next(s for s in self.servers if s.issuer == names[0])

    def respond(self, req: HttpRequest) -> HttpResponse:
        self.wire.append(req)
        if req.url in self.extra:
            return self.extra[req.url]
        if req.purpose == "resource":
            return self.resource(req)
        if req.url == self.prm_url:
            return json_response(
                {
                    "resource": self.prm_resource or self.server_url,
                    "authorization_servers": self.prm_as or [self.servers[0].issuer],
                    **(
                        {"scopes_supported": self.prm_scopes} if self.prm_scopes is not None else {}
                    ),
                }
            )
        for s in self.servers:
            out = s.handle(req)
            if out is not None:
                return out
        return NOT_FOUND

    def resource(self, req: HttpRequest) -> HttpResponse:
        auth = req.header("Authorization")
        params = []
        if self.challenge_prm:
            params.append(f'resource_metadata="{self.prm_url}"')
        if self.challenge_scope:
            params.append(f'scope="{self.challenge_scope}"')
        if not auth or auth.removeprefix("Bearer ") not in self.valid_tokens_now():
            return HttpResponse(401, (("WWW-Authenticate", "Bearer " + ", ".join(params)),), b"")
        return HttpResponse(200, (), b"ok")

    def valid_tokens_now(self) -> set[str]:
        cur = self.current_as()
        return {t for t in self.valid_tokens if t.endswith("@" + cur.issuer)} | {
            f"at-{i}@{cur.issuer}" for i in range(1, cur.tokens + 1)
        }

    def run(self, flow: Any) -> Any:
        """Drive ``flow`` to its end; returns its result (exceptions propagate)."""
        reply: Any = None
        while True:
            try:
                effect = flow.send(reply)
            except StopIteration as stop:
                return stop.value
            if isinstance(effect, HttpRequest):
                reply = self.respond(effect)
                reply = HttpResponse(reply.status, reply.headers, reply.body, self.now)
            elif isinstance(effect, OpenAuthorization):
                self.authorize_urls.append(effect.url)
                redirect = (self.callback or self.authorize)(effect.url)
                reply = AuthorizationResponse(redirect, self.now)
            elif isinstance(effect, Notice):
                self.notices.append(effect)
                reply = None
            else:  # pragma: no cover
                raise AssertionError(effect)

    def run_until_open(self, flow: Any) -> OpenAuthorization:
        """Drive ``flow`` until it asks the host to open the authorization URL."""
        reply: Any = None
        while True:
            effect = flow.send(reply)
            if isinstance(effect, OpenAuthorization):
                self.authorize_urls.append(effect.url)
                return effect
            if isinstance(effect, Notice):
                self.notices.append(effect)
                reply = None
            else:
                reply = self.respond(effect)

    def authorize(self, url: str) -> str:
        for s in self.servers:
            if url.startswith(s.metadata()["authorization_endpoint"].split("?")[0]):
                return s.authorize(url)
        raise AssertionError(url)

    def requests(self, purpose: str) -> list[HttpRequest]:
        return [r for r in self.wire if r.purpose == purpose]
