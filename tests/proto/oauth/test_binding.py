"""Issuer binding (AUTH-16..24): registrations and tokens keyed by issuer, one token per
authorization server, migration, tokens arriving for an AS no longer current, one
record per authorization request."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import pytest

from mcp_proto.oauth import (
    AuthorizationResponse,
    ClientInfo,
    HttpRequest,
    MemoryStorage,
    OAuthCallbackError,
    OAuthProvider,
    OAuthTokenError,
    Token,
)

from ._fake import FakeAS, World, counter_random

SERVER = "https://mcp.example.com/mcp"
AS1 = "https://as1.example.com"
AS2 = "https://as2.example.com"
MCP_REQUEST = HttpRequest("POST", SERVER, (), b"{}")


def provider(storage: MemoryStorage | None = None, **kw: object) -> OAuthProvider:
    return OAuthProvider(SERVER, random_bytes=counter_random(), storage=storage, **kw)  # type: ignore[arg-type]


def form(req: HttpRequest) -> dict[str, str]:
    return dict(parse_qsl(req.body.decode()))


def client_ids_seen_at(world: World, issuer: str) -> set[str]:
    seen = set()
    for url in world.authorize_urls:
        if url.startswith(issuer):
            seen.add(dict(parse_qsl(urlsplit(url).query))["client_id"])
    for req in world.wire:
        if req.url.startswith(issuer) and req.purpose in ("token", "refresh"):
            seen.add(form(req).get("client_id", ""))
    return seen - {""}


def test_migration_re_registers_and_never_presents_the_old_credentials() -> None:
    as1, as2 = FakeAS(AS1), FakeAS(AS2)
    world = World(SERVER, [as1, as2], prm_as=[AS1])
    p = provider()
    assert world.run(p.auth_flow(MCP_REQUEST, 1000.0)).status == 200
    as1_client = client_ids_seen_at(world, AS1)
    world.prm_as = [AS2]  # the server moves to another authorization server
    assert world.run(p.auth_flow(MCP_REQUEST, 1001.0)).status == 200
    assert p.issuer == AS2
    assert client_ids_seen_at(world, AS2).isdisjoint(as1_client)
    assert len(as2.clients) == 1  # registered anew with AS2
    # no AS1 token ever went to AS2, and the resource got AS2's token last
    for req in world.wire:
        if req.url.startswith(AS2):
            assert f"@{AS1}" not in req.body.decode()
            assert f"@{AS1}" not in (req.header("Authorization") or "")
    assert world.wire[-1].header("Authorization") == f"Bearer at-1@{AS2}"
    assert [n.kind for n in world.notices].count("migration") == 1
    # the token AS1 issued, which the server refused, is gone (AUTH-20)
    assert p.storage.get_token(p.token_key(AS1)) is None


def test_back_to_the_first_as_reuses_its_registration() -> None:
    as1, as2 = FakeAS(AS1), FakeAS(AS2)
    world = World(SERVER, [as1, as2], prm_as=[AS1])
    p = provider()
    world.run(p.auth_flow(MCP_REQUEST, 1000.0))
    world.prm_as = [AS2]
    world.run(p.auth_flow(MCP_REQUEST, 1001.0))
    world.prm_as = [AS1]
    assert world.run(p.auth_flow(MCP_REQUEST, 1002.0)).status == 200
    assert len(as1.clients) == 1 and len(as2.clients) == 1
    assert client_ids_seen_at(world, AS1).isdisjoint(client_ids_seen_at(world, AS2))


def test_a_parked_token_is_resumed_when_its_as_is_current_again() -> None:
    storage = MemoryStorage()
    p = provider(storage)
    parked = Token("kept", issuer=AS1, resource=SERVER, expires_at=9999.0)
    storage.set_token(p.token_key(AS1), parked)
    storage.set_token(p.token_key(AS2), Token("other", issuer=AS2, resource=SERVER))
    p._issuer = AS2  # what discovery would set
    token = p.current_token()
    assert token is not None and token.access_token == "other"
    p._issuer = AS1
    token = p.current_token()
    assert token is not None and token.access_token == "kept"


def test_a_token_stored_under_another_issuer_key_is_never_presented() -> None:
    storage = MemoryStorage()
    p = provider(storage)
    storage.set_token(p.token_key(AS1), Token("smuggled", issuer=AS2))
    p._issuer = AS1
    assert p.current_token() is None


def test_a_token_arriving_after_its_as_stopped_being_current_is_discarded() -> None:
    as1, as2 = FakeAS(AS1), FakeAS(AS2)
    world = World(SERVER, [as1, as2], prm_as=[AS1])
    p = provider()
    world.run(p.auth_flow(MCP_REQUEST, 1000.0))
    token = p.current_token()
    assert token is not None
    # flow A: a refresh with AS1 is in flight...
    flow_a = p.refresh(token, 4000.0)
    request = flow_a.send(None)
    assert request.purpose == "refresh"
    # ...while flow B finds the server moved to AS2 and completes there.
    world.prm_as = [AS2]
    world.run(p.auth_flow(MCP_REQUEST, 4000.0))
    assert p.issuer == AS2
    # A's answer arrives: discarded, not stored, AS2's token untouched.
    answer = as1.token(request)
    notice = flow_a.send(answer)
    assert notice.kind == "token_discarded"
    with pytest.raises(StopIteration) as stop:
        flow_a.send(None)
    assert stop.value.value is None
    assert p.storage.get_token(p.token_key(AS1)) is None
    current = p.current_token()
    assert current is not None and current.issuer == AS2


def test_a_late_code_exchange_is_discarded_after_migration() -> None:
    as1, as2 = FakeAS(AS1), FakeAS(AS2)
    world = World(SERVER, [as1, as2], prm_as=[AS1])
    p = provider()
    flow = p.authorize(None, 1000.0)
    effect = world.run_until_open(flow)
    redirect = world.authorize(effect.url)
    world.prm_as = [AS2]
    world.run(p.auth_flow(MCP_REQUEST, 1001.0))  # another flow moves to AS2
    token_request = flow.send(AuthorizationResponse(redirect, 1002.0))
    assert token_request.url == f"{AS1}/token"
    notice = flow.send(as1.token(token_request))
    assert notice.kind == "token_discarded"
    with pytest.raises(OAuthTokenError) as info:
        flow.send(None)
    assert info.value.reason == "issuer_changed"
    assert p.current_token() is not None and p.current_token().issuer == AS2  # type: ignore[union-attr]


def test_two_flows_sharing_a_storage_keep_their_own_records() -> None:
    storage = MemoryStorage()
    as1 = FakeAS(AS1)
    world = World(SERVER, [as1])
    p1 = OAuthProvider(SERVER, random_bytes=counter_random("a"), storage=storage)
    p2 = OAuthProvider(SERVER, random_bytes=counter_random("b"), storage=storage)
    url1, state1 = world.run(p1.start_authorization_flow(None, 1000.0))
    url2, state2 = world.run(p2.start_authorization_flow(None, 1000.0))
    assert state1 != state2 and len(storage.authorizations) == 2
    r1, r2 = world.authorize(url1), world.authorize(url2)
    # the second completes first: the first's record is untouched
    world.run(p2.complete_authorization_flow(r2))
    assert list(storage.authorizations) == [state1]
    token = world.run(p1.complete_authorization_flow(r1))
    assert token.access_token.startswith("at-") and storage.authorizations == {}
    # a replayed callback finds no record
    with pytest.raises(OAuthCallbackError):
        world.run(p1.complete_authorization_flow(r1))


def test_pre_registered_credentials_are_seeded_under_their_issuer_key() -> None:
    storage = MemoryStorage()
    p = provider(storage, client_info=ClientInfo("pre", "s", issuer=AS1))
    assert storage.get_client_info(p.client_registration_key(AS1)) == ClientInfo(
        "pre", "s", issuer=AS1
    )
    assert storage.get_client_info(p.client_registration_key(AS2)) is None


def test_pre_registered_credentials_for_another_issuer_are_not_used() -> None:
    as2 = FakeAS(AS2)
    world = World(SERVER, [FakeAS(AS1), as2], prm_as=[AS2])
    p = provider(client_info=ClientInfo("for-as1", "secret1", issuer=AS1))
    world.run(p.auth_flow(MCP_REQUEST, 1000.0))
    assert "for-as1" not in client_ids_seen_at(world, AS2)
    assert len(as2.clients) == 1
    for req in world.wire:
        assert "secret1" not in req.body.decode()


def test_a_dynamic_registration_never_overwrites_pre_registered_credentials() -> None:
    storage = MemoryStorage()
    p = provider(storage)
    pre = ClientInfo("pre", "s", issuer=AS1)
    storage.set_client_info(p.client_registration_key(AS1), pre)
    world = World(SERVER, [FakeAS(AS1, cimd=True)])
    world.run(p.auth_flow(MCP_REQUEST, 1000.0))
    assert storage.get_client_info(p.client_registration_key(AS1)) == pre
    assert not world.requests("registration")


def test_refresh_presents_the_rotated_secret_written_under_the_server_url() -> None:
    as1 = FakeAS(AS1, auth_methods=["client_secret_post"], client_secret="first")
    world = World(SERVER, [as1])
    p = provider()
    world.run(p.auth_flow(MCP_REQUEST, 1000.0))
    in_use = p.storage.get_client_info(p.server_url)
    assert in_use is not None and in_use.client_secret == "first"
    p.storage.set_client_info(
        p.server_url, ClientInfo(**{**in_use.__dict__, "client_secret": "rotated"})
    )
    world.now = 5000.0
    world.run(p.auth_flow(MCP_REQUEST, 5000.0))
    assert form(world.requests("refresh")[0])["client_secret"] == "rotated"


def test_scopes_accumulate_across_a_restart_from_the_token_in_hand() -> None:
    storage = MemoryStorage()
    world = World(SERVER, [FakeAS(AS1)], challenge_scope="files:read")
    world.run(provider(storage).auth_flow(MCP_REQUEST, 1000.0))
    # a new provider (a restart) over the same storage gets a step-up challenge
    p = provider(storage)
    world.challenge_scope = "files:write"
    token = p.current_token()
    assert token is not None
    from mcp_proto.oauth import bearer_challenge

    challenge = bearer_challenge('Bearer error="insufficient_scope", scope="files:write"')
    url, _ = world.run(p.start_authorization_flow(challenge, 1001.0, status=403))
    scope = dict(parse_qsl(urlsplit(url).query))["scope"]
    assert scope == "files:read files:write"


def test_a_flow_started_before_a_restart_completes_after_it() -> None:
    """The split-phase API (start, then complete in a new process over the same
    storage): the record and the stored metadata are all the second provider needs."""
    storage = MemoryStorage()
    world = World(SERVER, [FakeAS(AS1, auth_methods=["client_secret_post"], client_secret="s")])
    first = OAuthProvider(SERVER, random_bytes=counter_random("a"), storage=storage)
    url, _ = world.run(first.start_authorization_flow(None, 1000.0))
    redirect = world.authorize(url)
    again = OAuthProvider(SERVER, random_bytes=counter_random("b"), storage=storage)
    token = world.run(again.complete_authorization_flow(redirect, now=1001.0))
    assert token.issuer == AS1 and again.current_token() == token
    assert form(world.requests("token")[0])["client_secret"] == "s"
    # and the refresh after the restart works from the stored metadata too
    world.now = 5000.0
    assert world.run(again.auth_flow(MCP_REQUEST, 5000.0)).status == 200
    assert world.requests("refresh")


def test_after_a_restart_the_current_as_is_kept_while_still_listed() -> None:
    storage = MemoryStorage()
    as1, as2 = FakeAS(AS1), FakeAS(AS2)
    world = World(SERVER, [as1, as2], prm_as=[AS2])
    world.run(provider(storage).auth_flow(MCP_REQUEST, 1000.0))
    world.prm_as = [AS1, AS2]  # the server now lists AS1 first, AS2 still
    again = provider(storage)
    world.run(again.discover(None))
    assert again.issuer == AS2 and not [n for n in world.notices if n.kind == "migration"]
