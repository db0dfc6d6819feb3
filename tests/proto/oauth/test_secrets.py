"""No secret — access or refresh token, authorization code, PKCE verifier, client
secret — appears in any error message, repr or notice (HYG-6, issue 21 item 5).

Whole flows run (success, refresh, failures of every kind); every effect the flow
yields, every value it returns or stores, and every error it raises is turned into
text (``str`` and ``repr``) and scanned for the secrets the wire carried."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from mcp_proto.oauth import (
    AuthorizationResponse,
    ClientInfo,
    HttpRequest,
    HttpResponse,
    MemoryStorage,
    Notice,
    OAuthError,
    OAuthProvider,
    OpenAuthorization,
)

from ._fake import FakeAS, World, counter_random, json_response

SERVER = "https://mcp.example.com/mcp"
AS = "https://auth.example.com"
SECRET = "client-secret-XYZZY"


class Recorder(World):
    """Records the text of every effect and reply; collects the secrets on the wire."""

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.texts: list[str] = []
        self.secrets: set[str] = {SECRET}

    def run(self, flow: Any) -> Any:
        reply: Any = None
        while True:
            try:
                effect = flow.send(reply)
            except StopIteration as stop:
                self.texts += [str(stop.value), repr(stop.value)]
                return stop.value
            except OAuthError as exc:
                self.note_error(exc)
                raise
            self.texts.append(repr(effect))
            if isinstance(effect, HttpRequest):
                self.collect(effect)
                reply = self.respond(effect)
                reply = HttpResponse(reply.status, reply.headers, reply.body, self.now)
                self.collect_response(reply)
            elif isinstance(effect, OpenAuthorization):
                redirect = (self.callback or self.authorize)(effect.url)
                self.secrets.add(dict(parse_qsl(urlsplit(redirect).query)).get("code", "x" * 40))
                reply = AuthorizationResponse(redirect, self.now)
            else:
                assert isinstance(effect, Notice)
                self.texts.append(effect.message)
                reply = None
            self.texts.append(repr(reply))

    def note_error(self, exc: BaseException | None) -> None:
        while exc is not None:
            self.texts += [str(exc), repr(exc), repr(exc.args)]
            for value in vars(exc).values():
                self.texts.append(repr(value))
            exc = exc.__cause__ or exc.__context__

    def collect(self, req: HttpRequest) -> None:
        form = dict(parse_qsl(req.body.decode(errors="replace")))
        for key in ("code", "code_verifier", "refresh_token", "client_secret"):
            if key in form:
                self.secrets.add(form[key])
        auth = req.header("Authorization")
        if auth:
            self.secrets.add(auth.split(" ", 1)[1])

    def collect_response(self, resp: HttpResponse) -> None:
        try:
            body = json.loads(resp.body)
        except ValueError:
            return
        if isinstance(body, dict):
            for key in ("access_token", "refresh_token", "client_secret"):
                if isinstance(body.get(key), str):
                    self.secrets.add(body[key])

    def scan(self, *extra: object) -> None:
        texts = self.texts + [repr(x) for x in extra] + [str(x) for x in extra]
        secrets = {s for s in self.secrets if len(s) >= 6}
        assert secrets, "the flow carried no secrets: nothing was checked"
        for text in texts:
            for secret in secrets:
                assert secret not in text, f"secret leaked in: {text[:200]}"


def provider(storage: MemoryStorage, **kw: Any) -> OAuthProvider:
    return OAuthProvider(SERVER, random_bytes=counter_random(), storage=storage, **kw)


REQUEST = HttpRequest("POST", SERVER, (), b"{}")


def test_a_whole_flow_with_refresh_leaks_nothing() -> None:
    storage = MemoryStorage()
    world = Recorder(
        SERVER, [FakeAS(AS, auth_methods=["client_secret_post"], client_secret=SECRET)]
    )
    p = provider(storage)
    world.run(p.auth_flow(REQUEST, 1000.0))
    world.now = 5000.0
    world.run(p.auth_flow(REQUEST, 5000.0))
    assert world.requests("refresh")
    world.scan(p, storage, *storage.tokens.values(), *storage.clients.values())
    world.run(p.start_authorization_flow(None, 6000.0))
    world.scan(*storage.authorizations.values(), p.current_token())


def test_basic_auth_pre_registered_flow_leaks_nothing() -> None:
    storage = MemoryStorage()
    world = Recorder(SERVER, [FakeAS(AS, registration=False, auth_methods=["client_secret_basic"])])
    p = provider(storage, client_info=ClientInfo("pre", SECRET, issuer=AS))
    world.run(p.auth_flow(REQUEST, 1000.0))
    world.scan(p, storage, *storage.clients.values())


FAILURES: dict[str, dict[str, Any]] = {
    "token_refused": {
        "extra": {
            f"{AS}/token": json_response(
                {"error": "invalid_grant", "error_description": "bad code"}, 400
            )
        }
    },
    "token_type_mac": {"as": {"token_type": "mac"}},
    "iss_wrong": {"as": {"iss_mode": "wrong"}},
    "repeated_code": {"callback": lambda w, url: w.authorize(url) + "&code=again-" + "z" * 10},
    "denied": {"callback": lambda w, url: url.split("redirect_uri=")[0] + "?error=access_denied"},
}


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_failures_leak_nothing(case: str) -> None:
    spec = FAILURES[case]
    storage = MemoryStorage()
    world = Recorder(
        SERVER,
        [
            FakeAS(
                AS, auth_methods=["client_secret_post"], client_secret=SECRET, **spec.get("as", {})
            )
        ],
    )
    world.extra.update(spec.get("extra", {}))
    if "callback" in spec:
        world.callback = lambda url: spec["callback"](world, url)
    with pytest.raises(OAuthError):
        world.run(provider(storage).auth_flow(REQUEST, 1000.0))
    world.scan(storage, *storage.clients.values(), *storage.authorizations.values())


def test_grants_with_jose_leak_nothing() -> None:
    """private_key_jwt assertions, DPoP proofs and the private keys stay out of every
    repr, notice and error, in success and in failure."""
    from joserfc.jwk import ECKey

    from mcp_proto.oauth import JoseKey, OAuthTokenError

    from .test_grants import AS as GRANT_AS
    from .test_grants import REQUEST as GRANT_REQUEST
    from .test_grants import SERVER as GRANT_SERVER
    from .test_grants import Server

    client_key, dpop_key = JoseKey.generate("ES256"), JoseKey.generate("ES256")
    private = {ECKey.as_dict(k._key, private=True)["d"] for k in (client_key, dpop_key)}
    for fail in (False, True):
        server = Server(
            token_endpoint_auth_methods_supported=["private_key_jwt"],
            dpop_signing_alg_values_supported=["ES256"],
        )
        server.token_type = "DPoP"
        server.as_nonce = server.rs_nonce = "n"
        if fail:
            server.token_error = {"error": "invalid_client"}
        p = OAuthProvider(
            GRANT_SERVER,
            random_bytes=counter_random(),
            grant="client_credentials",
            client_key=client_key,
            dpop_key=dpop_key,
            client_info=ClientInfo("svc", issuer=GRANT_AS),
        )
        texts: list[str] = [repr(p), repr(client_key), repr(dpop_key)]
        flow = p.auth_flow(GRANT_REQUEST, 1000.0)
        reply: Any = None
        try:
            while True:
                effect = flow.send(reply)
                texts.append(repr(effect))
                if isinstance(effect, HttpRequest):
                    reply = server.respond(effect)
                else:
                    texts.append(effect.message)
                    reply = None
                texts.append(repr(reply))
        except StopIteration as stop:
            texts.append(repr(stop.value))
        except OAuthTokenError as exc:
            assert fail
            texts += [str(exc), repr(exc), *map(repr, vars(exc).values())]
        secrets = set(private)
        for req in server.wire:
            form = dict(parse_qsl(req.body.decode()))
            secrets |= {form[k] for k in ("client_assertion",) if k in form}
            secrets |= {v for k, v in req.headers if k.lower() in ("dpop", "authorization")}
        assert len(secrets) > 2
        for text in texts:
            for secret in secrets:
                assert secret not in text
