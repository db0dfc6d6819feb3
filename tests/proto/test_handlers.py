"""Serving the server's requests (ping, roots, sampling, elicitation) with a tiny driver.

The driver performs the two effects ``serve_request`` yields: ``CallHost`` (run the
host's handler, send back what it returned or throw what it raised) and ``Log``
(recorded). Covers SAMP-2..6, SAMP-8, ELIC-2..6, ELIC-9, ELIC-11, ELIC-12, ROOT-4/6,
CAP-4, HYG-3.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import attrs
import pytest
from _proto_support import json_objects, json_values
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto.effects import CallHost, Effect, Log
from mcp_proto.handlers import (
    ContentRejected,
    Handlers,
    Reply,
    adapt_args,
    client_capabilities,
    normalize_elicitation_result,
    normalize_sampling_result,
    requested_schema_problems,
    serve_request,
    validate_sampling_history,
)
from mcp_proto.types import Root


@attrs.define
class Driver:
    """Performs effects like a shell would, recording what happened."""

    logs: list[Log] = attrs.Factory(list)
    host_calls: list[tuple[Any, ...]] = attrs.Factory(list)

    def perform(self, effect: Effect) -> Any:
        if isinstance(effect, CallHost):
            self.host_calls.append(effect.args)
            return effect.fn(*effect.args)
        if isinstance(effect, Log):
            self.logs.append(effect)
            return None
        raise AssertionError(f"serve_request yielded an unexpected effect {effect!r}")

    def serve(self, handlers: Handlers, method: str, params: Any = None) -> Reply:
        op = serve_request(handlers, method, params or {}, server="srv")
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                effect = op.throw(error) if error is not None else op.send(value)
            except StopIteration as stop:
                reply = stop.value
                assert isinstance(reply, Reply)
                return reply
            value, error = None, None
            try:
                value = self.perform(effect)
            except Exception as exc:  # host code may raise anything: thrown back in
                error = exc


def serve(handlers: Handlers, method: str, params: Any = None) -> tuple[Reply, Driver]:
    driver = Driver()
    return driver.serve(handlers, method, params), driver


def boom(*_args: Any) -> Any:
    raise RuntimeError("secret detail /home/alice/.ssh/id_rsa")


# ---------------------------------------------------------------- ping, unknown


def test_ping() -> None:
    reply, driver = serve(Handlers(), "ping")
    assert reply == Reply(result={})
    assert not reply.is_error
    assert driver.host_calls == [] and driver.logs == []


@pytest.mark.parametrize("method", ["tasks/get", "x/custom", "", "PING", "roots/List"])
def test_unknown_method(method: str) -> None:
    reply, _ = serve(Handlers(sampling=lambda: "x", elicitation=lambda: None), method)
    assert reply == Reply(code=-32601, message="Method not found")
    assert reply.is_error


# ---------------------------------------------------------------- roots (ROOT-4, ROOT-6)


def test_roots_default_empty() -> None:
    reply, _ = serve(Handlers(), "roots/list")
    assert reply == Reply(result={"roots": []})


def test_roots_served_from_handler() -> None:
    roots = [
        Root("file:///work/project", name="project"),
        {"uri": "file:///tmp", "_meta": {"k": 1}},
    ]
    reply, _ = serve(Handlers(roots=lambda: roots), "roots/list")
    assert reply.result == {
        "roots": [
            {"uri": "file:///work/project", "name": "project"},
            {"uri": "file:///tmp", "_meta": {"k": 1}},
        ]
    }


@pytest.mark.parametrize(
    "roots_fn",
    [
        boom,
        lambda: [{"uri": "https://example.com"}],  # not file://
        lambda: [{"uri": "file:///a/../etc"}],  # traversal (ROOT-2)
        lambda: [42],
        lambda: 42,  # not iterable
    ],
)
def test_roots_failure_is_constant(roots_fn: Callable[[], Any]) -> None:
    reply, driver = serve(Handlers(roots=roots_fn), "roots/list")
    assert reply == Reply(code=-32603, message="Internal error")
    (log,) = driver.logs
    assert log.level == "ERROR" and "srv" in log.message


def test_roots_exception_text_stays_local() -> None:
    reply, driver = serve(Handlers(roots=boom), "roots/list")
    assert "secret" not in repr(reply)
    assert "secret detail" in driver.logs[0].message


# ---------------------------------------------------------------- sampling (SAMP-2..8)

USER_HI = {"role": "user", "content": {"type": "text", "text": "hi"}}
SAMPLING = {
    "messages": [USER_HI],
    "modelPreferences": {"hints": [{"name": "claude"}], "intelligencePriority": 0.8},
    "systemPrompt": "Be brief.",
    "maxTokens": 100,
    "temperature": 0.2,
}


def test_sampling_without_handler() -> None:
    reply, _ = serve(Handlers(), "sampling/createMessage", SAMPLING)
    assert reply == Reply(code=-32601, message="Method not found")


def test_sampling_five_arguments() -> None:
    got: list[tuple[Any, ...]] = []

    def handler(messages: Any, prefs: Any, system: Any, max_tokens: Any, params: Any) -> Any:
        got.append((messages, prefs, system, max_tokens, params))
        return "hello"

    reply, _ = serve(Handlers(sampling=handler), "sampling/createMessage", SAMPLING)
    assert reply.result == {
        "content": {"type": "text", "text": "hello"},
        "role": "assistant",
        "model": "unknown",
        "stopReason": "endTurn",
    }
    ((messages, prefs, system, max_tokens, params),) = got
    assert messages == [USER_HI]
    assert prefs == {"hints": [{"name": "claude"}], "intelligencePriority": 0.8}
    assert system == "Be brief."
    assert max_tokens == 100
    assert params == SAMPLING  # the full request, future fields included (SAMP-2)


@pytest.mark.parametrize(
    ("handler", "arity"),
    [
        (lambda: "x", 0),
        (lambda m: "x", 1),
        (lambda m, p: "x", 2),
        (lambda m, p, s: "x", 3),
        (lambda m, p, s, t: "x", 4),
        (lambda m, p, s, t, r: "x", 5),
        # Defaulted parameters are the handler's own (issue 24 I): only those without
        # a default count; *args takes everything.
        (lambda m, p=None, s=None, t=None, r=None, extra=None: "x", 1),
        (lambda m, p, answer="x": answer, 2),
        (lambda m, p=None, *rest: "x", 1),
        (lambda *args: "x", 5),
        (lambda m, *rest: "x", 5),
        (lambda m, *, kw=None: "x", 1),
        (lambda m, p, **kw: "x", 2),
    ],
)
def test_sampling_arity(handler: Callable[..., Any], arity: int) -> None:
    reply, driver = serve(Handlers(sampling=handler), "sampling/createMessage", SAMPLING)
    assert not reply.is_error
    (args,) = driver.host_calls
    assert len(args) == arity


def test_a_loop_bound_default_keeps_its_value() -> None:
    # The usual way to bind a loop variable: the answer is the handler's own, never
    # overwritten by an offered argument (which made every answer `cancel`).
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    params = {"message": "Name?", "requestedSchema": schema}
    for answer in ({"action": "accept", "content": {"name": "Ada"}}, {"action": "decline"}):
        handler = lambda m, s, a=answer: a  # noqa: E731
        reply, driver = serve(Handlers(elicitation=handler), "elicitation/create", params)
        assert reply.result == answer
        assert driver.host_calls == [("Name?", schema)]


def test_sampling_arity_of_callable_objects() -> None:
    class Sampler:
        def __call__(self, messages: Any, prefs: Any) -> str:
            return "ok"

    def three(a: Any, b: Any, c: Any) -> str:
        return "ok"

    for handler, arity in ((Sampler(), 2), (functools.partial(three, 1), 2)):
        reply, driver = serve(Handlers(sampling=handler), "sampling/createMessage", SAMPLING)
        assert not reply.is_error
        assert len(driver.host_calls[0]) == arity


def test_adapt_args_without_signature() -> None:
    # Some builtins have no inspectable signature: everything is passed.
    with pytest.raises(ValueError):
        inspect.signature(dict)
    assert adapt_args(dict, (1, 2, 3)) == (1, 2, 3)
    assert adapt_args(lambda a, b: None, (1, 2, 3)) == (1, 2)
    assert adapt_args(lambda: None, (1, 2)) == ()


def test_sampling_none_is_rejection() -> None:
    reply, _ = serve(Handlers(sampling=lambda m: None), "sampling/createMessage", SAMPLING)
    assert reply == Reply(code=-1, message="Sampling rejected")


def test_sampling_raise_is_constant_error() -> None:
    reply, driver = serve(Handlers(sampling=boom), "sampling/createMessage", SAMPLING)
    assert reply == Reply(code=-32603, message="Sampling error")
    (log,) = driver.logs
    assert log.level == "ERROR"
    assert "secret detail" in log.message  # detail only in the local log (HYG-3)


@pytest.mark.parametrize("key", ["tools", "toolChoice"])
def test_sampling_tools_need_opt_in(key: str) -> None:
    called = []
    params = {**SAMPLING, key: [] if key == "tools" else {"mode": "auto"}}
    reply, _ = serve(
        Handlers(sampling=lambda *a: called.append(a)), "sampling/createMessage", params
    )
    assert reply.code == -32602
    assert called == []
    reply, driver = serve(
        Handlers(sampling=lambda *a: "ok", sampling_supports_tools=True),
        "sampling/createMessage",
        params,
    )
    assert not reply.is_error
    assert driver.host_calls[0][4][key] == params[key]  # forwarded in the 5th argument


def test_sampling_include_context_logged() -> None:
    params = {**SAMPLING, "includeContext": "allServers"}
    reply, driver = serve(Handlers(sampling=lambda: "x"), "sampling/createMessage", params)
    assert not reply.is_error
    assert [log.level for log in driver.logs] == ["INFO"]
    _, driver = serve(
        Handlers(sampling=lambda: "x"),
        "sampling/createMessage",
        {**SAMPLING, "includeContext": "none"},
    )
    assert driver.logs == []


@pytest.mark.parametrize(
    ("prefs", "expected"),
    [
        (None, {}),
        ("fast", {}),
        (
            {"hints": ["claude-3", {"name": "gpt"}]},
            {"hints": [{"name": "claude-3"}, {"name": "gpt"}]},
        ),
        ({"hints": [{"nome": "x"}, 5, None, {"name": 3}]}, {"hints": []}),
        ({"hints": "claude"}, {}),
        (
            {"costPriority": -1, "speedPriority": 7, "intelligencePriority": 0.5},
            {"costPriority": 0.0, "speedPriority": 1.0, "intelligencePriority": 0.5},
        ),
        ({"costPriority": True, "speedPriority": "1"}, {}),
    ],
)
def test_model_preferences_normalised(prefs: Any, expected: dict[str, Any]) -> None:
    params = {**SAMPLING, "modelPreferences": prefs}
    _, driver = serve(Handlers(sampling=lambda m, p: "x"), "sampling/createMessage", params)
    assert driver.host_calls[0][1] == expected


@pytest.mark.parametrize(
    ("field", "value"), [("systemPrompt", 5), ("maxTokens", True), ("maxTokens", "100")]
)
def test_sampling_bad_optional_fields_become_none(field: str, value: Any) -> None:
    params = {**SAMPLING, field: value}
    _, driver = serve(Handlers(sampling=lambda *a: "x"), "sampling/createMessage", params)
    index = {"systemPrompt": 2, "maxTokens": 3}[field]
    assert driver.host_calls[0][index] is None


@pytest.mark.parametrize(
    ("returned", "expected"),
    [
        ("hi", {"content": {"type": "text", "text": "hi"}}),
        (42, {"content": {"type": "text", "text": "42"}}),
        ({"content": "hi"}, {"content": {"type": "text", "text": "hi"}}),
        ({}, {"content": {"type": "text", "text": ""}}),
        ({"content": None, "model": "m"}, {"content": {"type": "text", "text": ""}, "model": "m"}),
        (
            {"content": {"type": "image", "data": "AA==", "mimeType": "image/png"}, "role": "user"},
            {"content": {"type": "image", "data": "AA==", "mimeType": "image/png"}, "role": "user"},
        ),
        (
            {"content": [{"type": "tool_use", "id": "c1", "name": "t", "input": {}}]},
            {
                "content": [{"type": "tool_use", "id": "c1", "name": "t", "input": {}}],
                "stopReason": "toolUse",
            },
        ),
        (
            {"content": {"type": "tool_use", "id": "c1", "name": "t", "input": {}}},
            {
                "content": {"type": "tool_use", "id": "c1", "name": "t", "input": {}},
                "stopReason": "toolUse",
            },
        ),
        (
            {"content": "x", "stopReason": "maxTokens"},
            {"content": {"type": "text", "text": "x"}, "stopReason": "maxTokens"},
        ),
        ({1: "one", "content": "x"}, {"1": "one", "content": {"type": "text", "text": "x"}}),
    ],
)
def test_sampling_result_normalised(returned: Any, expected: dict[str, Any]) -> None:
    defaults = {"role": "assistant", "model": "unknown", "stopReason": "endTurn"}
    assert normalize_sampling_result(returned) == {**defaults, **expected}
    reply, _ = serve(Handlers(sampling=lambda: returned), "sampling/createMessage", SAMPLING)
    assert reply.result == {**defaults, **expected}


@settings(deadline=None)
@given(json_values)
def test_sampling_result_always_has_required_fields(value: Any) -> None:
    if value is None:
        return
    out = normalize_sampling_result(value)
    assert {"role", "model", "content", "stopReason"} <= out.keys()
    assert all(isinstance(k, str) for k in out)


# ---- history validation corpus (SAMP-6)

TEXT = {"type": "text", "text": "t"}
USE_A = {"type": "tool_use", "id": "a", "name": "weather", "input": {}}
USE_B = {"type": "tool_use", "id": "b", "name": "weather", "input": {}}
RES_A = {"type": "tool_result", "toolUseId": "a", "content": [TEXT]}
RES_B = {"type": "tool_result", "toolUseId": "b", "content": [TEXT]}


def user(*content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content[0] if len(content) == 1 else list(content)}


def assistant(*content: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": content[0] if len(content) == 1 else list(content)}


VALID_HISTORIES = [
    [],
    [user(TEXT)],
    [user(TEXT, TEXT)],
    [user(TEXT), assistant(TEXT), user(TEXT)],
    [user(TEXT), assistant(USE_A), user(RES_A)],
    [user(TEXT), assistant(TEXT, USE_A, USE_B), user(RES_A, RES_B), assistant(TEXT), user(TEXT)],
    [user(TEXT), assistant(USE_A, USE_B), user(RES_B, RES_A)],  # any order
    [user(TEXT), assistant(USE_A), user([RES_A])],  # content given as a list of one
    [assistant(TEXT)],
    [user({"type": "image", "data": "AA==", "mimeType": "image/png"})],
]

INVALID_HISTORIES = [
    ("not a list", None),
    ({"role": "user"}, None),
    ([5], "role"),
    (["user"], "role"),
    ([{"content": TEXT}], "role"),
    ([{"role": "system", "content": TEXT}], "role"),
    ([{"role": "tool", "content": TEXT}], "role"),
    ([{"role": "user"}], "content"),
    ([{"role": "user", "content": None}], "content"),
    ([{"role": "user", "content": "text"}], "malformed"),
    ([{"role": "user", "content": [TEXT, "x"]}], "malformed"),
    ([user(RES_A, TEXT)], "mixes"),
    ([user(TEXT), assistant(USE_A), user(RES_A, TEXT)], "mixes"),
    ([user(TEXT), assistant(USE_A), user(TEXT)], "answer"),
    ([user(TEXT), assistant(USE_A, USE_B), user(RES_A)], "answer"),
    ([user(TEXT), assistant(USE_A), user(RES_B)], "answer"),
    ([user(TEXT), assistant(USE_A), assistant(TEXT)], "unanswered"),
    ([user(TEXT), assistant(USE_A), assistant(USE_B), user(RES_A, RES_B)], "unanswered"),
]


@pytest.mark.parametrize("messages", VALID_HISTORIES)
def test_valid_histories(messages: Any) -> None:
    assert validate_sampling_history(messages) is None
    reply, driver = serve(
        Handlers(sampling=lambda m: "ok"), "sampling/createMessage", {"messages": messages}
    )
    assert not reply.is_error
    assert driver.host_calls == [(messages,)]


@pytest.mark.parametrize(("messages", "problem"), INVALID_HISTORIES)
def test_invalid_histories(messages: Any, problem: str | None) -> None:
    found = validate_sampling_history(messages)
    assert found is not None
    if problem is not None:
        assert problem in found
    called = []
    reply, _ = serve(
        Handlers(sampling=lambda m: called.append(m)),
        "sampling/createMessage",
        {"messages": messages},
    )
    assert reply.code == -32602
    assert reply.message is not None and reply.message.startswith("Invalid sampling request")
    assert called == []  # the handler never runs on a malformed history


@pytest.mark.parametrize("tool_use_id", [[], {}, None, 5])
def test_unhashable_tool_use_id_is_invalid_params(tool_use_id: Any) -> None:
    """Issue 11, case 1: ``"toolUseId": []`` made serve_request raise TypeError
    (unhashable), which both shells turned into -32603 and an ERROR traceback."""
    params = {
        "messages": [
            {"role": "user", "content": {"type": "tool_result", "toolUseId": tool_use_id}}
        ],
        "maxTokens": 5,
    }
    called: list[Any] = []
    reply, driver = serve(Handlers(sampling=called.append), "sampling/createMessage", params)
    assert reply == Reply(
        code=-32602,
        message="Invalid sampling request: message 0 has a tool result without a string toolUseId",
    )
    assert called == [] and driver.logs == []


@pytest.mark.parametrize("tool_id", [[], {}, None, 7])
def test_tool_use_without_string_id_is_invalid_params(tool_id: Any) -> None:
    use = {"type": "tool_use", "id": tool_id, "name": "weather", "input": {}}
    messages = [user(TEXT), assistant(use), user(RES_A)]
    reply, _ = serve(
        Handlers(sampling=lambda m: "x"), "sampling/createMessage", {"messages": messages}
    )
    assert reply.code == -32602
    assert reply.message == (
        "Invalid sampling request: message 1 has a tool use without a string id"
    )


def test_missing_messages_is_invalid() -> None:
    reply, _ = serve(Handlers(sampling=lambda: "x"), "sampling/createMessage", {})
    assert reply.code == -32602


@settings(deadline=None)
@given(json_values)
def test_history_validation_never_raises(messages: Any) -> None:
    assert validate_sampling_history(messages) is None or isinstance(
        validate_sampling_history(messages), str
    )


# ---------------------------------------------------------------- elicitation (ELIC-*)

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "age": {"type": "integer", "minimum": 0},
        "color": {"type": "string", "enum": ["red", "green"], "default": "red"},
        "subscribe": {"type": "boolean", "default": False},
    },
    "required": ["name"],
}
FORM = {"mode": "form", "message": "Who are you?", "requestedSchema": SCHEMA}
URL = {
    "mode": "url",
    "message": "Sign in",
    "url": "https://example.com/auth",
    "elicitationId": "e-1",
}


def elicit(value: Any, params: dict[str, Any] = FORM) -> tuple[Reply, Driver]:
    return serve(Handlers(elicitation=lambda *a: value), "elicitation/create", params)


@pytest.mark.parametrize("mode", ["", "FORM", "html", 5, None, ["form"], {"m": 1}])
def test_unknown_mode_rejected_even_without_handler(mode: Any) -> None:
    for handlers in (Handlers(), Handlers(elicitation=lambda: None)):
        reply, driver = serve(handlers, "elicitation/create", {**FORM, "mode": mode})
        assert reply == Reply(code=-32602, message="Unsupported elicitation mode")
        assert driver.host_calls == []


def test_no_handler() -> None:
    for params in (FORM, URL, {"message": "no mode means form"}):
        reply, _ = serve(Handlers(), "elicitation/create", params)
        assert reply == Reply(code=-32601, message="Method not found")


def test_handler_exception_is_constant() -> None:
    reply, driver = serve(Handlers(elicitation=boom), "elicitation/create", FORM)
    assert reply == Reply(code=-32603, message="Elicitation handler error")
    assert "secret detail" in driver.logs[0].message and driver.logs[0].level == "ERROR"


@pytest.mark.parametrize(
    ("handler", "expected_args"),
    [
        (lambda: None, ()),
        (lambda message: None, ("Who are you?",)),
        (lambda message, schema: None, ("Who are you?", SCHEMA)),
        (lambda message, schema, meta: None, ("Who are you?", SCHEMA, {"k": "v"})),
        (lambda *args: None, ("Who are you?", SCHEMA, {"k": "v"})),
    ],
)
def test_elicitation_arity(handler: Callable[..., Any], expected_args: tuple[Any, ...]) -> None:
    params = {**FORM, "_meta": {"k": "v"}}
    _, driver = serve(Handlers(elicitation=handler), "elicitation/create", params)
    assert driver.host_calls == [expected_args]


def test_elicitation_url_arguments() -> None:
    _, driver = serve(Handlers(elicitation=lambda *a: True), "elicitation/create", URL)
    assert driver.host_calls == [
        ("Sign in", {"mode": "url", "url": "https://example.com/auth", "elicitationId": "e-1"}, {})
    ]


def test_elicitation_defaults_for_missing_fields() -> None:
    _, driver = serve(Handlers(elicitation=lambda *a: None), "elicitation/create", {"message": 5})
    assert driver.host_calls == [("", None, {})]


#: The answer is JSON-RPC error -32603, never a result (ELIC-6, §B2).
REJECTED: Any = "-32603"

FORM_CASES = [
    (None, {"action": "cancel"}, False),
    ({"action": "accept", "content": {"name": "Ada", "age": 36}}, None, False),
    ({"action": "decline"}, {"action": "decline"}, False),
    ({"action": "cancel"}, {"action": "cancel"}, False),
    ({"action": "decline", "content": {"name": "Ada"}}, {"action": "decline"}, False),
    # ELIC-5: an unknown action is not consent.
    ({"action": "yes", "content": {"name": "Ada"}}, {"action": "cancel"}, True),
    ({"action": "ACCEPT"}, {"action": "cancel"}, True),
    ({"action": ["accept"]}, {"action": "cancel"}, True),
    ({"action": None}, {"action": "cancel"}, True),
    # ELIC-4: a bare mapping is the content of an accept.
    ({"name": "Ada"}, None, False),
    # Not a mapping: no content to send (§B2: -32603).
    ("Ada", REJECTED, True),
    (True, REJECTED, True),
    (["Ada"], REJECTED, True),
    # ELIC-6: content that violates requestedSchema is not transmitted: -32603.
    ({"action": "accept", "content": {"name": ""}}, REJECTED, True),
    ({"action": "accept", "content": {"age": 3}}, REJECTED, True),  # name required
    ({"name": "Ada", "age": -1}, REJECTED, True),
    ({"name": "Ada", "age": "36"}, REJECTED, True),
    ({"name": "Ada", "color": "blue"}, REJECTED, True),
    ({"name": {"first": "Ada"}}, REJECTED, True),  # not a primitive
    ({"name": "Ada", "tags": [1, 2]}, REJECTED, True),  # list of non-strings
    ({"action": "accept"}, REJECTED, True),  # no content: name missing
    ({"action": "accept", "content": "Ada"}, REJECTED, True),
]


@pytest.mark.parametrize(("returned", "expected", "warns"), FORM_CASES)
def test_form_mode_normalisation(returned: Any, expected: Any, warns: bool) -> None:
    reply, driver = elicit(returned)
    if expected is REJECTED:
        assert reply == Reply(
            code=-32603, message="Elicitation answer does not match the requested schema"
        )
        # The user's answer stays in the local log; the server gets a constant.
        assert [log.level for log in driver.logs] == ["WARNING"]
        assert "elicitation content rejected" in driver.logs[0].message
        return
    if expected is None:
        # Accepted: SEP-1034 defaults fill what the user left out.
        content = returned.get("content", returned) if "action" in returned else dict(returned)
        expected = {
            "action": "accept",
            "content": {"color": "red", "subscribe": False, **content},
        }
    assert reply.result == expected
    assert [log.level for log in driver.logs] == (["WARNING"] if warns else [])


def test_rejected_content_is_not_transmitted_whatever_the_schema_says() -> None:
    # ELIC-6 / §B2: the server gets -32603 and a constant message, never the content
    # (the user's answer) nor the validator's words about it.
    reply, _ = elicit({"name": "secret-answer", "age": "x"})
    assert reply.is_error and reply.code == -32603
    assert "secret-answer" not in str(reply)
    assert reply.result is None


#: Every property shape the 2025-11-25 schema allows in a form (PrimitiveSchemaDefinition).
SPEC_FORM = {
    "type": "object",
    "properties": {
        "email": {"type": "string", "format": "email", "minLength": 3},
        "site": {"type": "string", "format": "uri"},
        "born": {"type": "string", "format": "date"},
        "at": {"type": "string", "format": "date-time"},
        "n": {"type": "number", "minimum": 0},
        "i": {"type": "integer"},
        "ok": {"type": "boolean", "default": True},
        "pick": {"type": "string", "enum": ["a", "b"]},
        "titled": {"type": "string", "oneOf": [{"const": "a", "title": "A"}]},
        "legacy": {"type": "string", "enum": ["a"], "enumNames": ["A"]},
        "many": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        "many_titled": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}},
    },
    "required": ["email"],
}


def test_a_spec_form_schema_draws_no_warning() -> None:
    assert requested_schema_problems(SPEC_FORM) == []
    reply, driver = elicit(None, {"message": "m", "requestedSchema": SPEC_FORM})
    assert reply.result == {"action": "cancel"}
    assert driver.logs == []


@pytest.mark.parametrize(
    ("schema", "says"),
    [
        ([1, 2], "requestedSchema is a list, not an object"),
        ({"type": "array", "properties": {}}, "its type is not 'object'"),
        ({"type": "object"}, "it has no 'properties' object"),
        (
            {"type": "object", "properties": {"addr": {"type": "object", "properties": {}}}},
            "property 'addr' has type 'object', not string",
        ),
        ({"type": "object", "properties": {"x": 5}}, "property 'x' is not a schema object"),
        (
            {"type": "object", "properties": {"ip": {"type": "string", "format": "ipv4"}}},
            "property 'ip' has format 'ipv4'",
        ),
        (
            {"type": "object", "properties": {"l": {"type": "array", "items": {"type": "string"}}}},
            "property 'l' is an array that is not a multi-select enum",
        ),
        (
            {"type": "object", "properties": {}, "required": ["ghost"]},
            "'required' names 1 undefined",
        ),
    ],
)
def test_a_malformed_requested_schema_is_warned_about(schema: Any, says: str) -> None:
    # ELIC-7: warnings only; the handler is still asked.
    reply, driver = elicit({"action": "decline"}, {"message": "m", "requestedSchema": schema})
    assert reply.result == {"action": "decline"}
    assert [log.level for log in driver.logs] == ["WARNING"]
    assert "outside the spec's restricted schema" in driver.logs[0].message
    assert says in driver.logs[0].message


def test_a_catastrophic_content_pattern_is_bounded_and_rejects() -> None:
    """ELIC-7: the answer's pattern checks run under the validator's whole-instance work
    budget (mcp_proto/schema.py): a backtracking pattern a server put in its form
    against a long answer fails the check (-32603, never transmitted) instead of
    hanging the client; the same pattern with a short answer is accepted."""
    pattern = "^(?:a+(?!b))+$"  # a lookahead: fancy-regex's backtracking engine
    schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": pattern}}}
    params = {"message": "m", "requestedSchema": schema}
    reply, _ = elicit({"code": "aaaa"}, params)
    assert reply.result == {"action": "accept", "content": {"code": "aaaa"}}
    reply, driver = elicit({"code": "a" * 40 + "!"}, params)
    assert reply.is_error and reply.code == -32603
    assert any("work budget" in log.message for log in driver.logs)


def test_sep1034_defaults_do_not_overwrite_answers() -> None:
    reply, _ = elicit({"name": "Ada", "color": "green", "subscribe": True})
    assert reply.result == {
        "action": "accept",
        "content": {"name": "Ada", "color": "green", "subscribe": True},
    }


def test_sep1034_default_can_satisfy_required() -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string", "default": "anonymous"}},
        "required": ["name"],
    }
    reply, _ = elicit({}, {"message": "m", "requestedSchema": schema})
    assert reply.result == {"action": "accept", "content": {"name": "anonymous"}}


def test_meta_passes_through() -> None:
    reply, _ = elicit({"name": "Ada", "_meta": {"trace": 1}})
    assert reply.result["_meta"] == {"trace": 1}
    assert "_meta" not in reply.result["content"]
    reply, _ = elicit({"action": "decline", "_meta": {"trace": 2}})
    assert reply.result == {"action": "decline", "_meta": {"trace": 2}}
    reply, _ = elicit({"action": "nope", "_meta": {"trace": 3}})
    assert reply.result == {"action": "cancel", "_meta": {"trace": 3}}


def test_form_without_schema_accepts_primitives() -> None:
    reply, _ = elicit({"a": 1, "b": "x", "c": True, "d": 1.5, "e": ["x", "y"]}, {"message": "m"})
    assert reply.result == {
        "action": "accept",
        "content": {"a": 1, "b": "x", "c": True, "d": 1.5, "e": ["x", "y"]},
    }


def test_unusable_schema_does_not_reject_the_answer() -> None:
    reply, _ = elicit({"name": "Ada"}, {"message": "m", "requestedSchema": {"type": 5}})
    assert reply.result == {"action": "accept", "content": {"name": "Ada"}}


URL_CASES = [
    (True, {"action": "accept"}, False),
    ({"action": "accept"}, {"action": "accept"}, False),
    ({"action": "accept", "content": {"token": "x"}}, {"action": "accept"}, False),
    ({"action": "decline"}, {"action": "decline"}, False),
    ({"action": "cancel"}, {"action": "cancel"}, False),
    (None, {"action": "cancel"}, False),
    # ELIC-9: only an explicit action (or True) is consent in URL mode.
    ({"token": "x"}, {"action": "cancel"}, True),
    ({"action": "ok"}, {"action": "cancel"}, True),
    ({"action": {"a": 1}}, {"action": "cancel"}, True),
    (False, {"action": "cancel"}, True),
    (1, {"action": "cancel"}, True),
    ("accept", {"action": "cancel"}, True),
    ({"action": "accept", "_meta": {"m": 1}}, {"action": "accept", "_meta": {"m": 1}}, False),
]


@pytest.mark.parametrize(("returned", "expected", "warns"), URL_CASES)
def test_url_mode_normalisation(returned: Any, expected: Any, warns: bool) -> None:
    reply, driver = elicit(returned, URL)
    assert reply.result == expected
    assert "content" not in reply.result
    assert [log.level for log in driver.logs] == (["WARNING"] if warns else [])


@settings(deadline=None)
@given(json_values, st.sampled_from(["form", "url"]), st.none() | json_objects)
def test_elicitation_normalisation_never_raises_and_never_invents_consent(
    value: Any, mode: str, schema: Any
) -> None:
    try:
        result, warning = normalize_elicitation_result(value, mode=mode, schema=schema)
    except ContentRejected:
        assert mode == "form"  # only form content is refused; URL answers have none
        return
    assert result["action"] in ("accept", "decline", "cancel")
    assert warning is None or isinstance(warning, str)
    if result["action"] != "accept":
        assert "content" not in result
    if mode == "url":
        assert "content" not in result
        if result["action"] == "accept":
            assert value is True or value.get("action") == "accept"
    elif result["action"] == "accept":
        assert isinstance(value, dict)
        assert value.get("action", "accept") == "accept"


@settings(deadline=None)
@given(json_objects)
def test_elicitation_serving_never_raises(params: dict[str, Any]) -> None:
    for handlers in (Handlers(), Handlers(elicitation=lambda *a: {"x": 1})):
        reply, _ = serve(handlers, "elicitation/create", params)
        assert isinstance(reply, Reply)


@settings(deadline=None)
@given(json_objects)
def test_sampling_serving_never_raises(params: dict[str, Any]) -> None:
    reply, _ = serve(Handlers(sampling=lambda *a: "x"), "sampling/createMessage", params)
    assert isinstance(reply, Reply)
    assert reply.code in (None, -32602)


# ---------------------------------------------------------------- CAP-4


def test_client_capabilities_derived_from_handlers() -> None:
    assert client_capabilities(Handlers()) == {"roots": {"listChanged": True}}
    assert client_capabilities(Handlers(), roots_list_changed=False) == {
        "roots": {"listChanged": False}
    }
    assert client_capabilities(Handlers(sampling=lambda: "x")) == {
        "roots": {"listChanged": True},
        "sampling": {},
    }
    assert client_capabilities(Handlers(sampling=lambda: "x", sampling_supports_tools=True)) == {
        "roots": {"listChanged": True},
        "sampling": {"tools": {}},
    }
    # The opt-in alone declares nothing: there is no handler to use tools with.
    assert "sampling" not in client_capabilities(Handlers(sampling_supports_tools=True))
    assert client_capabilities(Handlers(elicitation=lambda: None)) == {
        "roots": {"listChanged": True},
        "elicitation": {"form": {}, "url": {}},
    }
    caps = client_capabilities(Handlers(sampling=lambda: "x", elicitation=lambda: None))
    assert set(caps) == {"roots", "sampling", "elicitation"}
    assert "tasks" not in caps  # the client is only a requestor
