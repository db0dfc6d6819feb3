"""The client program the MCP conformance harness starts once per scenario.

    python tests/conformance/client.py [options...] <server-url>

The harness (``@modelcontextprotocol/conformance``, see ``tests/conformance/run.sh``)
passes the mock server's URL as the LAST argument and sets:

- ``MCP_CONFORMANCE_SCENARIO``: the scenario name (``initialize``, ``tools_call``, ...);
- ``MCP_CONFORMANCE_PROTOCOL_VERSION``: the revision under test. For a handshake revision
  (2025-11-25) the client offers its own newest handshake revision whatever this says; for
  2026-07-28 it connects with ``protocol="modern"`` (``server/discover``, per-request
  ``_meta``, no ``initialize``); ``MCP_CONFORMANCE_CLIENT_PROTOCOL=auto|modern|legacy``
  overrides that choice (e.g. ``auto`` to run the leg through the era probe);
- ``MCP_CONFORMANCE_CONTEXT``: JSON with scenario data (some auth scenarios, and
  ``http-custom-headers``, whose ``toolCalls`` list the exact arguments to send).

Only the public API of ``mcp_io_sync`` is used: ``connect(url, ...)`` picks the
transport from the URL exactly as it does for a user. Each scenario does what the
harness scores; an unknown scenario gets the default (connect, list tools, call each
tool with harmless arguments). Exit status 0 with the line
``conformance client: <scenario>: OK`` on stderr on success; otherwise 1 (2 for a usage
error) with a one-line ``conformance client: <scenario>: <error>`` message.
``MCP_CONFORMANCE_DEBUG=1`` logs the client's debug output (httpcore included);
``MCP_CONFORMANCE_DEADLINE`` (seconds, default 45) bounds the whole run.
``MCP_CONFORMANCE_SHELL=trio`` runs the ``auth/*`` scenarios through ``mcp_io_trio``
instead (``run.sh --shell trio``): the same provider, ``connect`` awaited, the handler
run off the event loop; the other scenarios stay on ``mcp_io_sync``.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any

import mcp_io_sync

LOG = logging.getLogger("conformance-client")
CLIENT_INFO = {"name": "mcp-proto-conformance-client", "version": mcp_io_sync.__version__}


class ScenarioFailed(Exception):
    """The server answered, but not what the scenario leads us to expect."""


# ---------------------------------------------------------------- helpers


def plain(value: Any) -> Any:
    """A JSON-ready deep copy (the client may hand out read-only mappings/tuples)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


# The revision under test (set by main() from MCP_CONFORMANCE_PROTOCOL_VERSION).
MODERN_REVISIONS = ("2026-07-28",)
SPEC_VERSION = ""


def era_option() -> dict[str, Any]:
    """``protocol=`` for the revision under test (LIFE-8): the 2026-07-28 leg scores the
    stateless revision, so the client is told to speak it; the handshake legs pass no
    option at all, so they run exactly as they did before the option existed."""
    forced = os.environ.get("MCP_CONFORMANCE_CLIENT_PROTOCOL", "")
    if forced:
        return {"protocol": forced}
    if SPEC_VERSION in MODERN_REVISIONS:
        return {"protocol": "modern"}
    return {}


def open_client(url: str, **kwargs: Any) -> mcp_io_sync.Client:
    options = {**era_option(), **kwargs}
    LOG.info("connecting to %s (%s)", url, options.get("protocol", "default era"))
    return mcp_io_sync.connect(
        url,
        read_timeout=float(os.environ.get("MCP_CONFORMANCE_READ_TIMEOUT", "30")),
        client_info=CLIENT_INFO,
        logger=logging.getLogger("mcp_io_sync"),
        **options,
    )


def text_of(result: Mapping[str, Any]) -> str:
    parts = []
    for item in result.get("content") or ():
        if isinstance(item, Mapping) and item.get("type") == "text":
            parts.append(str(item.get("text", "")))
    return "\n".join(parts)


def call_ok(client: mcp_io_sync.Client, name: str, arguments: Mapping[str, Any]) -> str:
    """Call a tool; fail the scenario on a tool-level error. Returns its text content."""
    LOG.info("calling %s(%s)", name, json.dumps(plain(arguments))[:200])
    result = client.call_tool(name, arguments)
    text = text_of(result)
    LOG.info("%s returned: %s", name, text[:200])
    if result.get("isError"):
        raise ScenarioFailed(f"tool {name!r} reported an error: {text[:200]}")
    return text


def tool_names(client: mcp_io_sync.Client) -> list[str]:
    names = [t.name for t in client.list_tools(cache=False)]
    LOG.info("tools: %s", names)
    return names


def require_tool(names: list[str], name: str) -> None:
    if name not in names:
        raise ScenarioFailed(f"the server lists no tool {name!r} (it lists {names})")


def example_value(schema: Any) -> Any:
    """A harmless value that fits a (simple) JSON schema."""
    if not isinstance(schema, Mapping):
        return "test"
    for key in ("const", "default"):
        if key in schema:
            return plain(schema[key])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return plain(schema["enum"][0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        return example_arguments(schema)
    minimum = schema.get("minimum", 1)
    return {
        "string": "test",
        "integer": int(minimum) if isinstance(minimum, (int, float)) else 1,
        "number": minimum if isinstance(minimum, (int, float)) else 1,
        "boolean": False,
        "array": [],
        "null": None,
    }.get(str(kind), "test")


def example_arguments(schema: Any) -> dict[str, Any]:
    """Values for the required properties of an object schema."""
    if not isinstance(schema, Mapping):
        return {}
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    required = schema.get("required")
    required = required if isinstance(required, list) else []
    return {str(name): example_value(props.get(name)) for name in required}


def answer_elicitation(message: str, schema: Any = None) -> dict[str, Any]:
    """Accept with no input of our own: the client fills in the schema's defaults
    (SEP-1034), which is what the elicitation scenario checks."""
    LOG.info("elicitation %r, schema %s", message, json.dumps(plain(schema))[:300])
    return {"action": "accept", "content": {}}


def answer_sampling(messages: Any, *rest: Any) -> dict[str, Any]:
    LOG.info("sampling request with %d message(s)", len(messages or ()))
    return {
        "role": "assistant",
        "content": {"type": "text", "text": "conformance test reply"},
        "model": "conformance-test-model",
        "stopReason": "endTurn",
    }


# ---------------------------------------------------------------- scenarios


def scenario_initialize(url: str, context: Mapping[str, Any]) -> None:
    """initialize: the handshake (protocol version, clientInfo), then one request."""
    with open_client(url) as client:
        tool_names(client)


def scenario_tools_call(url: str, context: Mapping[str, Any]) -> None:
    """tools_call: call ``add_numbers`` with numeric a and b."""
    with open_client(url) as client:
        require_tool(tool_names(client), "add_numbers")
        text = call_ok(client, "add_numbers", {"a": 5, "b": 3})
        if "8" not in text:
            raise ScenarioFailed(f"add_numbers(5, 3) answered {text!r}")


def scenario_elicitation_defaults(url: str, context: Mapping[str, Any]) -> None:
    """elicitation-sep1034-client-defaults: the tool elicits a form whose fields all
    have defaults; we accept without filling any, the client must send the defaults."""
    with open_client(url, elicitation_handler=answer_elicitation) as client:
        name = "test_client_elicitation_defaults"
        require_tool(tool_names(client), name)
        text = call_ok(client, name, {})
        if "Elicitation completed" not in text:
            raise ScenarioFailed(f"{name} answered {text!r}")


def scenario_sse_retry(url: str, context: Mapping[str, Any]) -> None:
    """sse-retry: the server closes the tools/call SSE stream after a priming event
    carrying ``retry: 500``; the client must wait that long, resume with GET and
    ``Last-Event-ID``, and receive the result on the resumed stream."""
    with open_client(url) as client:
        require_tool(tool_names(client), "test_reconnection")
        text = call_ok(client, "test_reconnection", {})
        if "Reconnection test completed" not in text:
            raise ScenarioFailed(f"test_reconnection answered {text!r}")


def scenario_json_schema_preservation(url: str, context: Mapping[str, Any]) -> None:
    """json-schema-2020-12-preservation: echo the focal tool's inputSchema back, as
    received, through ``json_schema_echo`` (the harness diffs it with the original)."""
    with open_client(url) as client:
        tools = {t.name: t for t in client.list_tools(cache=False)}
        LOG.info("tools: %s", list(tools))
        focal = tools.get("json_schema_2020_12_tool")
        if focal is None:
            raise ScenarioFailed(f"no tool json_schema_2020_12_tool (tools: {list(tools)})")
        require_tool(list(tools), "json_schema_echo")
        call_ok(client, "json_schema_echo", {"schema": plain(focal.input_schema)})


def scenario_default(url: str, context: Mapping[str, Any]) -> None:
    """Any other scenario: connect, list tools, call each tool with harmless arguments.
    Tool-level errors are logged, not fatal; protocol and transport errors are."""
    # (roots: the client always answers roots/list, with no roots unless given some.)
    with open_client(
        url, elicitation_handler=answer_elicitation, sampling_handler=answer_sampling
    ) as client:
        for tool in client.list_tools(cache=False):
            arguments = example_arguments(tool.input_schema)
            LOG.info("calling %s(%s)", tool.name, json.dumps(arguments)[:200])
            result = client.call_tool(tool.name, arguments)
            if result.get("isError"):
                LOG.warning("tool %s reported an error: %s", tool.name, text_of(result)[:200])


# ---------------------------------------------------------------- authorization (auth/*)

CIMD_URL = "https://conformance-test.local/client-metadata.json"


def browse(url: str, redirect_uri: str) -> str:
    """The user's browser, automated: the suite's authorization endpoint redirects at
    once to the redirect URI (with code, state, maybe iss); follow until there."""
    from urllib.parse import urljoin

    import httpcore

    for _ in range(10):
        if url.startswith(redirect_uri):
            return url
        response = httpcore.request("GET", url)
        location = next((v for k, v in response.headers if k.lower() == b"location"), None)
        if location is None:
            raise ScenarioFailed(f"the authorization endpoint answered {response.status}")
        url = urljoin(url, location.decode("latin-1"))
    raise ScenarioFailed("the authorization endpoint redirected too often")


def run_flow(flow: Any) -> Any:
    """Drive a flow of the OAuth core with plain httpcore (the conformance context's
    credentials name no issuer: discovery finds it before connecting)."""
    import time

    import httpcore

    from mcp_proto.oauth import HttpRequest, HttpResponse

    reply: Any = None
    while True:
        try:
            effect = flow.send(reply)
        except StopIteration as stop:
            return stop.value
        if not isinstance(effect, HttpRequest):
            reply = None
            continue
        r = httpcore.request(
            effect.method, effect.url, headers=list(effect.headers), content=effect.body
        )
        headers = tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in r.headers)
        reply = HttpResponse(r.status, headers, r.content, time.time())


def oauth_provider_for(url: str, scenario: str, ctx: Mapping[str, Any]) -> Any:
    """The OAuthProvider a host would configure for this scenario: a CIMD URL, the
    context's pre-registered credentials (bound to their issuer, AUTH-18), DPoP, the
    client credentials, JWT bearer and enterprise grants."""
    from mcp_proto.oauth import (
        AuthorizationResponse,
        ClientInfo,
        EnterpriseIdP,
        JoseKey,
        OAuthProvider,
        OpenAuthorization,
    )

    def handler(effect: Any) -> Any:
        if isinstance(effect, OpenAuthorization):
            return AuthorizationResponse(browse(effect.url, effect.redirect_uri))
        return ctx["idp_id_token" if effect.kind == "id_token" else "valid_jwt"]

    kw: dict[str, Any] = {
        "random_bytes": os.urandom,
        "client_id_metadata_url": CIMD_URL,
        "handler": handler,
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
    provider = OAuthProvider(url, **kw)
    if "client_id" in ctx and "issuer" not in ctx:
        # The context names no issuer; a host would (AUTH-18): bind the credentials to
        # the issuer discovery finds.
        issuer = run_flow(provider.discover(None)).issuer
        info = ClientInfo(ctx["client_id"], ctx.get("client_secret"), issuer=issuer)
        provider.storage.set_client_info(provider.client_registration_key(issuer), info)
    return provider


#: The auth scenarios whose server (or authorization server) must be refused: the error
#: type and its ``reason`` (None: any).
REFUSALS: dict[str, tuple[str, str | None]] = {
    # The refusal itself, or (when the discover probe gave up under load and the
    # handshake went on, so the last attempt was another request's) the 410 the mock
    # server answers once the limit is passed: either way the client stopped.
    "auth/scope-retry-limit": ("InsufficientScopeError ServerError", None),
    "auth/resource-mismatch": ("OAuthDiscoveryError", "resource_mismatch"),
    "auth/metadata-issuer-mismatch": ("OAuthDiscoveryError", "issuer_mismatch"),
    "auth/iss-supported-missing": ("OAuthCallbackError", "iss_missing"),
    "auth/iss-wrong-issuer": ("OAuthCallbackError", "iss_mismatch"),
    "auth/iss-unexpected": ("OAuthCallbackError", "iss_mismatch"),
    "auth/iss-normalized": ("OAuthCallbackError", "iss_mismatch"),
}


def use_tools(url: str, provider: Any) -> None:
    """Connect with ``provider``, list the tools and call each with harmless arguments
    (through the Trio shell with ``MCP_CONFORMANCE_SHELL=trio``)."""
    if os.environ.get("MCP_CONFORMANCE_SHELL", "sync") == "trio":
        import trio

        trio.run(use_tools_trio, url, provider)
        return
    with open_client(url, oauth_provider=provider) as client:
        for tool in client.list_tools(cache=False):
            arguments = example_arguments(tool.input_schema)
            LOG.info("calling %s(%s)", tool.name, json.dumps(arguments)[:200])
            result = client.call_tool(tool.name, arguments)
            if result.get("isError"):
                LOG.warning("tool %s reported an error: %s", tool.name, text_of(result)[:200])


async def use_tools_trio(url: str, provider: Any) -> None:
    """:func:`use_tools` over ``mcp_io_trio`` (the same options as :func:`open_client`)."""
    import mcp_io_trio

    options = {**era_option(), "oauth_provider": provider}
    LOG.info("connecting to %s over Trio (%s)", url, options.get("protocol", "default era"))
    async with mcp_io_trio.connect(
        url,
        read_timeout=float(os.environ.get("MCP_CONFORMANCE_READ_TIMEOUT", "30")),
        client_info=CLIENT_INFO,
        logger=logging.getLogger("mcp_io_trio"),
        **options,
    ) as client:
        for tool in await client.list_tools(cache=False):
            arguments = example_arguments(tool.input_schema)
            LOG.info("calling %s(%s)", tool.name, json.dumps(arguments)[:200])
            result = await client.call_tool(tool.name, arguments)
            if result.get("isError"):
                LOG.warning("tool %s reported an error: %s", tool.name, text_of(result)[:200])


def scenario_auth(url: str, context: Mapping[str, Any]) -> None:
    """auth/*: the server is behind OAuth; the client discovers, registers or uses its
    credentials, authorizes (the browser step automated) and retries with the token,
    then lists and calls the tools as the default scenario does. A scenario of
    ``REFUSALS`` must end in its typed error instead."""
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    provider = oauth_provider_for(url, scenario, context)
    refusal = REFUSALS.get(scenario)
    if refusal is None:
        use_tools(url, provider)
        return
    # A hostile or broken authorization setup: the client must refuse it with the typed
    # error (and send nothing it should not: the harness checks the wire).
    import mcp_proto.oauth as oauth
    from mcp_proto import errors

    wanted = tuple(getattr(oauth, n, None) or getattr(errors, n) for n in refusal[0].split())
    try:
        use_tools(url, provider)
    except wanted as exc:
        reason = getattr(exc, "reason", None)
        if refusal[1] is not None and reason != refusal[1]:
            raise ScenarioFailed(f"refused for the wrong reason {reason!r}: {exc}") from exc
        LOG.info("refused as expected: %s", exc)
        return
    raise ScenarioFailed(f"{scenario}: every request succeeded; the client must refuse")


# ---------------------------------------------------------------- 2026-07-28 leg


def answer_confirm(message: str, schema: Any = None) -> dict[str, Any]:
    """The MRTR scenario's elicitation: a form with one boolean ``confirmed``."""
    LOG.info("elicitation %r, schema %s", message, json.dumps(plain(schema))[:300])
    return {"action": "accept", "content": {"confirmed": True}}


def scenario_request_metadata(url: str, context: Mapping[str, Any]) -> None:
    """request-metadata (SEP-2575): the first request is refused with HTTP 400 and
    -32022 listing 2026-07-28; the client retries with that version, and every POST
    carries MCP-Protocol-Version equal to ``_meta``'s protocolVersion, clientInfo and
    clientCapabilities (elicitation declared here, so that check is scored too)."""
    with open_client(url, elicitation_handler=answer_elicitation) as client:
        tool_names(client)


def scenario_mrtr_request_state(url: str, context: Mapping[str, Any]) -> None:
    """sep-2322-client-request-state: two tools answer ``input_required`` (one with a
    ``requestState`` that must come back byte for byte, one without, which must not get
    one); an unrelated call in between must carry neither; a result without
    ``resultType`` is complete. The retries must use new JSON-RPC ids."""
    expected = {
        "test_mrtr_echo_state": "echo-state-ok",
        "test_mrtr_no_state": "no-state-ok",
        "test_mrtr_unrelated": "unrelated-ok",
        "test_mrtr_no_result_type": "no-result-type-test-ok",
    }
    with open_client(url, elicitation_handler=answer_confirm) as client:
        names = tool_names(client)
        for name, want in expected.items():
            require_tool(names, name)
            text = call_ok(client, name, {})
            if want not in text:
                raise ScenarioFailed(f"{name} answered {text!r}, expected {want!r}")


def scenario_standard_headers(url: str, context: Mapping[str, Any]) -> None:
    """http-standard-headers (SEP-2243): Mcp-Method on every POST, Mcp-Name on
    tools/call, resources/read and prompts/get; so exercise each of them (the
    hyphenated tool name and the percent-encoded / query-string URIs included)."""
    with open_client(url) as client:
        for name in tool_names(client):
            call_ok(client, name, {})
        for resource in client.list_resources(cache=False)["resources"]:
            LOG.info("reading %s", resource.uri)
            client.read_resource(resource.uri)
        for prompt in client.list_prompts(cache=False):
            LOG.info("getting prompt %s", prompt.name)
            client.get_prompt(prompt.name, {})


def scenario_custom_headers(url: str, context: Mapping[str, Any]) -> None:
    """http-custom-headers (SEP-2243): call each tool with the exact arguments the
    harness put in the context (``toolCalls``); the client mirrors the ``x-mcp-header``
    parameters into Mcp-Param-* (=?base64?...?= for unsafe values), none for the
    unannotated ones, and none for a null value."""
    calls = context.get("toolCalls")
    if not isinstance(calls, list) or not calls:
        raise ScenarioFailed(f"the harness gave no toolCalls in the context: {context!r}")
    with open_client(url) as client:
        names = tool_names(client)
        for call in calls:
            name = str(call.get("name"))
            require_tool(names, name)
            call_ok(client, name, call.get("arguments") or {})


def scenario_invalid_tool_headers(url: str, context: Mapping[str, Any]) -> None:
    """http-invalid-tool-headers (SEP-2243, HDR-4): the server lists one valid tool and
    eleven whose ``x-mcp-header`` annotations break a rule. The client library drops
    those from ``list_tools()`` (with a warning), so calling every tool it returns must
    reach ``valid_tool`` and nothing else."""
    with open_client(url) as client:
        tools = client.list_tools(cache=False)
        names = [t.name for t in tools]
        LOG.info("tools kept by the client: %s", names)
        if names != ["valid_tool"]:
            raise ScenarioFailed(f"expected only valid_tool to be kept, got {names}")
        for tool in tools:
            call_ok(client, tool.name, example_arguments(tool.input_schema))


def scenario_ref_no_deref(url: str, context: Mapping[str, Any]) -> None:
    """json-schema-ref-no-deref (SEP-2106): list the tools; the schema's network
    ``$ref`` must not be fetched (the client never dereferences schemas), and the
    ``$ref`` reaches the caller as written."""
    with open_client(url) as client:
        tools = {t.name: t for t in client.list_tools(cache=False)}
        tool = tools.get("lookup_user")
        if tool is None:
            raise ScenarioFailed(f"no tool lookup_user (tools: {list(tools)})")
        profile = plain(tool.input_schema).get("properties", {}).get("profile", {})
        if not str(profile.get("$ref", "")).startswith("http"):
            raise ScenarioFailed(f"the profile $ref did not survive as written: {profile!r}")


def scenario_skills_no_prefetch(url: str, context: Mapping[str, Any]) -> None:
    """sep-2640-client-no-prefetch: list the skills; nothing of a skill is fetched
    until it is loaded (not on connection, not on listing)."""
    with open_client(url) as client:
        skills = client.list_skills()
        LOG.info("skills listed: %s", [s.uri for s in skills])
        if not skills:
            raise ScenarioFailed("the server listed no skill")


def scenario_skills_verify(url: str, context: Mapping[str, Any]) -> None:
    """sep-2640-client-verify-{digest,size,frontmatter}: list, load the skill, and only
    if it verifies read its supporting files. A tampered SKILL.md is refused before any
    supporting file is read (the scenario fails a client that reads one anyway)."""
    from mcp_proto.errors import SkillVerificationError

    with open_client(url) as client:
        skills = client.list_skills()
        if not skills:
            raise ScenarioFailed("the server listed no skill")
        try:
            loaded = client.load_skill(skills[0])
        except SkillVerificationError as exc:
            LOG.info("skill refused as it should be (%s): %s", exc.reason, exc)
            return
        resources = loaded.entry.resources
        for file in resources if resources != "dynamic" else ():
            if file.uri != loaded.entry.uri:
                client.read_skill_file(loaded, file.uri)


SCENARIOS: dict[str, Callable[[str, Mapping[str, Any]], None]] = {
    "sep-2640-client-no-prefetch": scenario_skills_no_prefetch,
    "sep-2640-client-verify-digest": scenario_skills_verify,
    "sep-2640-client-verify-size": scenario_skills_verify,
    "sep-2640-client-verify-frontmatter": scenario_skills_verify,
    "initialize": scenario_initialize,
    "tools_call": scenario_tools_call,
    "elicitation-sep1034-client-defaults": scenario_elicitation_defaults,
    "sse-retry": scenario_sse_retry,
    "json-schema-2020-12-preservation": scenario_json_schema_preservation,
    "request-metadata": scenario_request_metadata,
    "sep-2322-client-request-state": scenario_mrtr_request_state,
    "http-standard-headers": scenario_standard_headers,
    "http-custom-headers": scenario_custom_headers,
    "http-invalid-tool-headers": scenario_invalid_tool_headers,
    "json-schema-ref-no-deref": scenario_ref_no_deref,
}


# ---------------------------------------------------------------- main


def start_watchdog(scenario: str, seconds: float) -> None:
    """End the process with a one-line message if the scenario hangs: a hung call
    must fail this scenario with a reason, not stall the harness until its timeout."""

    def expire() -> None:
        print(
            f"conformance client: {scenario or 'default'}: still running after {seconds:g}s "
            "(a request never completed); giving up",
            file=sys.stderr,
            flush=True,
        )
        os._exit(1)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()


def main(argv: list[str]) -> int:
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.DEBUG if os.environ.get("MCP_CONFORMANCE_DEBUG") == "1" else logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    if len(argv) < 2 or not argv[-1].startswith(("http://", "https://")):
        print(
            "usage: client.py [...] <server-url>  (started by the conformance harness)",
            file=sys.stderr,
        )
        return 2
    url = argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "")
    try:
        context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    except ValueError as exc:
        print(f"conformance client: MCP_CONFORMANCE_CONTEXT is not JSON: {exc}", file=sys.stderr)
        return 2
    global SPEC_VERSION
    SPEC_VERSION = version
    LOG.info("scenario %r, protocol version %r, server %s", scenario, version, url)
    start_watchdog(scenario, float(os.environ.get("MCP_CONFORMANCE_DEADLINE") or 45))
    run = SCENARIOS.get(
        scenario, scenario_auth if scenario.startswith("auth/") else scenario_default
    )
    try:
        run(url, context if isinstance(context, Mapping) else {})
    except Exception as exc:
        LOG.debug("scenario failed", exc_info=True)
        message = " ".join(f"{type(exc).__name__}: {exc}".split())
        print(f"conformance client: {scenario or 'default'}: {message}", file=sys.stderr)
        return 1
    # run.sh looks for this line: without it (a crash, or killed at the harness's
    # timeout) the scenario fails even if the server-side checks passed.
    print(f"conformance client: {scenario or 'default'}: OK", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
