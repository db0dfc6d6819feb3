"""``input_required`` rounds (MRTR-1..7, 9) driven by hand with an injected clock.

The driver plays the shell: it answers each ``Call`` from a script of server results,
runs ``CallHost`` (the host's handlers, the clock, the sleep) and records ``Log``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_proto import errors, jsonrpc
from mcp_proto.effects import Call, CallHost, Log, Op
from mcp_proto.handlers import Handlers
from mcp_proto.modern.mrtr import (
    INPUT_REQUIRED_METHODS,
    MAX_ROUNDS,
    Continuation,
    InputRequiredFailure,
    InputRequiredWait,
    Pace,
    input_required_op,
    result_kind,
    resume_op,
    retry_params,
)

FORM = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Please confirm",
        "requestedSchema": {"type": "object", "properties": {"confirmed": {"type": "boolean"}}},
    },
}
DONE = {"resultType": "complete", "content": [{"type": "text", "text": "ok"}]}
STATE = json.dumps({"nonce": 'ü\u2028\\"x', "originalId": 1})  # not to be touched


def needs(requests: dict[str, Any] | None = None, state: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"resultType": "input_required"}
    if requests is not None:
        out["inputRequests"] = requests
    if state is not None:
        out["requestState"] = state
    return out


class Shell:
    """A scripted shell: results (or errors) per Call, a fake clock, recorded sleeps."""

    def __init__(self, results: list[Any]) -> None:
        self.results = list(results)
        self.calls: list[tuple[str, Any, Any]] = []
        self.sleeps: list[float] = []
        self.logs: list[tuple[str, str]] = []
        self.now = 100.0

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def drive(self, op: Op[Any]) -> Any:
        value: Any = None
        exc: BaseException | None = None
        while True:
            try:
                effect = op.send(value) if exc is None else op.throw(exc)
            except StopIteration as stop:
                return stop.value
            value, exc = None, None
            if isinstance(effect, Call):
                self.calls.append((effect.method, copy.deepcopy(effect.params), effect.timeout))
                answer = self.results.pop(0)
                if isinstance(answer, BaseException):
                    exc = answer
                else:
                    value = copy.deepcopy(answer)
            elif isinstance(effect, CallHost):
                try:
                    value = effect.fn(*effect.args)
                except Exception as e:
                    exc = e
            elif isinstance(effect, Log):
                self.logs.append((effect.level, effect.message))
            else:  # pragma: no cover - the op yields nothing else
                raise AssertionError(effect)

    def run(self, **kw: Any) -> Any:
        kw.setdefault("handlers", Handlers(elicitation=accept))
        kw.setdefault("method", "tools/call")
        kw.setdefault("params", {"name": "checkout", "arguments": {"cart": 1}})
        return self.drive(
            input_required_op(
                "srv", kw.pop("method"), kw.pop("params"), clock=self.clock, sleep=self.sleep, **kw
            )
        )

    def resume(self, error: errors.InputRequiredError, **kw: Any) -> Any:
        kw.setdefault("handlers", Handlers(elicitation=accept))
        return self.drive(resume_op("srv", error, clock=self.clock, sleep=self.sleep, **kw))


def accept(message: str, schema: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"confirmed": True}}


ACCEPTED = {"action": "accept", "content": {"confirmed": True}}


def sent_params(shell: Shell) -> list[Any]:
    return [params for _, params, _ in shell.calls]


# ---------------------------------------------------------------- the basic workflow


def test_answers_and_retries_with_state_echoed() -> None:
    # MRTR-1/2: answer every input request, retry with inputResponses and the state.
    shell = Shell([needs({"confirm": FORM}, STATE), DONE])
    assert shell.run(timeout=7.0) == DONE
    first, retry = sent_params(shell)
    assert first == {"name": "checkout", "arguments": {"cart": 1}}
    assert retry == {
        "name": "checkout",
        "arguments": {"cart": 1},
        "inputResponses": {"confirm": ACCEPTED},
        "requestState": STATE,
    }
    assert [t for _, _, t in shell.calls] == [7.0, 7.0]  # the call's timeout each time


@pytest.mark.parametrize("backend", ["json", "orjson"])
def test_request_state_survives_decode_and_encode_exactly(backend: str) -> None:
    # MRTR-2: the state goes from the server's bytes to ours as the same JSON value.
    server_bytes = (
        b'{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required",'
        b'"requestState":"a\\u00e9\\ud83d\\ude00\\n\\"\\\\/\\u2028 \xc3\xa9 \\ud800"}}'
    )
    [response] = jsonrpc.decode(server_bytes)
    assert isinstance(response, jsonrpc.Response)
    received = response.result["requestState"]
    before = jsonrpc.json_backend()
    jsonrpc.set_json_backend(backend)
    try:
        out = jsonrpc.encode_request(2, "tools/call", retry_params({"name": "t"}, None, received))
    finally:
        jsonrpc.set_json_backend(before)
    server_view = json.loads(out)["params"]["requestState"]
    assert server_view == json.loads(server_bytes)["result"]["requestState"]


@pytest.mark.parametrize("backend", ["json", "orjson"])
@given(
    state=st.lists(st.integers(0, 0x10FFFF), max_size=200).map(lambda cs: "".join(map(chr, cs)))
    | st.text(max_size=8).map(lambda s: "x" + s * 5000)  # long: the splicing encoder
)
def test_any_state_string_round_trips(backend: str, state: str) -> None:
    before = jsonrpc.json_backend()
    jsonrpc.set_json_backend(backend)
    try:
        wire = jsonrpc.encode_request(5, "tools/call", {"requestState": state})
    finally:
        jsonrpc.set_json_backend(before)
    [request] = jsonrpc.decode(wire)
    assert isinstance(request, jsonrpc.Request)
    assert request.params is not None and request.params["requestState"] == state


def test_no_state_sent_when_the_server_sent_none() -> None:
    shell = Shell([needs({"confirm": FORM}), DONE])
    shell.run()
    assert "requestState" not in sent_params(shell)[1]
    assert sent_params(shell)[1]["inputResponses"] == {"confirm": ACCEPTED}


def test_absent_result_type_is_complete() -> None:
    shell = Shell([{"content": []}])
    assert shell.run() == {"content": []}
    assert len(shell.calls) == 1
    assert result_kind({}) == "complete"
    assert result_kind({"resultType": "input_required"}) == "input_required"
    with pytest.raises(errors.RemoteProtocolError):
        result_kind({"resultType": "eventually"})
    with pytest.raises(errors.RemoteProtocolError):
        result_kind(["x"])


def test_first_result_handed_in_by_the_pipeline() -> None:
    shell = Shell([DONE])
    assert shell.run(first_result=needs({"confirm": FORM}, "s")) == DONE
    assert sent_params(shell)[0]["requestState"] == "s"


def test_stale_retry_keys_in_the_original_params_are_not_reused() -> None:
    shell = Shell([needs({"confirm": FORM}), DONE])
    shell.run(params={"name": "t", "requestState": "old", "inputResponses": {"x": 1}})
    assert sent_params(shell)[0] == {"name": "t", "requestState": "old", "inputResponses": {"x": 1}}
    assert sent_params(shell)[1] == {"name": "t", "inputResponses": {"confirm": ACCEPTED}}


def test_sampling_and_roots_answered_by_the_existing_handlers() -> None:
    sampling_req = {
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
            "maxTokens": 5,
        },
    }
    handlers = Handlers(
        sampling=lambda messages: {"role": "assistant", "content": {"type": "text", "text": "4"}},
        roots=lambda: [{"uri": "file:///work"}],
    )
    shell = Shell([needs({"q": sampling_req, "r": {"method": "roots/list"}}, "s"), DONE])
    shell.run(handlers=handlers)
    responses = sent_params(shell)[1]["inputResponses"]
    assert responses["q"]["content"] == {"type": "text", "text": "4"}
    assert responses["r"] == {"roots": [{"uri": "file:///work"}]}


# ---------------------------------------------------------------- failures (MRTR-3)


def test_more_than_ten_rounds_fail_resumably() -> None:
    rounds = [needs({f"k{i}": FORM}, f"s{i}") for i in range(MAX_ROUNDS + 1)]
    shell = Shell(rounds)
    with pytest.raises(InputRequiredFailure) as info:
        shell.run()
    err = info.value
    assert err.reason == "rounds"
    assert len(shell.calls) == MAX_ROUNDS + 1  # the 11th input_required is not answered
    assert err.input_requests == {"k10": FORM}
    assert err.request_state == "s10"
    assert err.request_method == "tools/call"
    assert err.request_params == {"name": "checkout", "arguments": {"cart": 1}}
    assert err.resumable
    assert isinstance(err, errors.InputRequiredError)


@pytest.mark.parametrize(
    ("requests", "kw", "why"),
    [
        ({"x": {"method": "tools/call", "params": {}}}, {}, "unknown method"),
        ({"x": {"method": "sampling/createMessage", "params": {}}}, {}, "no handler"),
        ({"x": FORM}, {"handlers": Handlers()}, "no handler"),
        ({"x": FORM}, {"capabilities": {"sampling": {}}}, "undeclared 'elicitation'"),
        ({"x": {"method": "roots/list"}}, {"capabilities": {}}, "undeclared 'roots'"),
    ],
)
def test_unanswerable_input_requests(requests: Any, kw: Any, why: str) -> None:
    shell = Shell([needs(requests, "s")])
    with pytest.raises(InputRequiredFailure, match=why) as info:
        shell.run(**kw)
    assert info.value.reason == "unanswerable"
    assert len(shell.calls) == 1  # nothing sent after it
    assert info.value.input_requests == requests and info.value.request_state == "s"


@pytest.mark.parametrize(
    "result",
    [
        {"resultType": "input_required"},  # neither field
        {"resultType": "input_required", "inputRequests": {}},
        {"resultType": "input_required", "inputRequests": ["x"]},
        {"resultType": "input_required", "inputRequests": {"x": "elicitation/create"}},
        {"resultType": "input_required", "inputRequests": {"x": {"params": {}}}},
        {
            "resultType": "input_required",
            "inputRequests": {"x": {"method": "roots/list", "params": 3}},
        },
        {"resultType": "input_required", "requestState": {"not": "a string"}},
        {"resultType": "needs_more"},
        "a string",
    ],
)
def test_malformed_results_fail_resumably(result: Any) -> None:
    shell = Shell([needs({"confirm": FORM}, "s1"), result])
    with pytest.raises(InputRequiredFailure) as info:
        shell.run()
    assert info.value.reason == "malformed"
    # The continuation is the last valid round, already answered.
    assert info.value.request_state == "s1"
    assert info.value.answered == {"confirm": ACCEPTED}


def test_input_required_only_on_the_three_methods() -> None:
    assert {"tools/call", "resources/read", "prompts/get"} == INPUT_REQUIRED_METHODS
    shell = Shell([needs({"confirm": FORM}, "s")])
    with pytest.raises(InputRequiredFailure, match="not allowed on this method"):
        shell.run(method="tools/list", params=None)


def test_handler_failure_stays_local() -> None:
    # MRTR-9: the host's exception text never reaches the server; nothing more is sent.
    def boom(message: str) -> Any:
        raise RuntimeError("secret-db-password")

    shell = Shell([needs({"confirm": FORM}, "s")])
    with pytest.raises(InputRequiredFailure) as info:
        shell.run(handlers=Handlers(elicitation=boom))
    assert info.value.reason == "handler"
    assert len(shell.calls) == 1
    assert "secret-db-password" not in str(info.value)
    assert any("secret-db-password" in m for level, m in shell.logs if level == "ERROR")


def test_answers_already_produced_are_kept_on_resume() -> None:
    # MRTR-6/8: one of two handlers fails; resume never asks the answered one again.
    asked: list[str] = []
    fail = {"now": True}

    def elicit(message: str) -> Any:
        asked.append(message)
        if message == "second" and fail["now"]:
            raise RuntimeError("not now")
        return {"action": "accept", "content": {}}

    def form(msg: str) -> dict[str, Any]:
        return {
            "method": "elicitation/create",
            "params": {"message": msg, "requestedSchema": {"type": "object"}},
        }

    handlers = Handlers(elicitation=elicit)
    shell = Shell([needs({"a": form("first"), "b": form("second")}, "s")])
    with pytest.raises(InputRequiredFailure) as info:
        shell.run(handlers=handlers)
    assert info.value.answered == {"a": {"action": "accept", "content": {}}}
    fail["now"] = False
    shell.results = [DONE]
    assert shell.resume(info.value, handlers=handlers) == DONE
    assert asked == ["first", "second", "second"]  # "first" was not asked again
    assert sent_params(shell)[-1]["inputResponses"] == {
        "a": {"action": "accept", "content": {}},
        "b": {"action": "accept", "content": {}},
    }
    assert sent_params(shell)[-1]["requestState"] == "s"


def test_a_partial_failure_shows_and_keeps_the_answers_already_produced() -> None:
    # HYG-4 / MRTR-8: of two inputs the second handler fails. The answer the first
    # produced is on the public error (InputRequiredError.input_responses, §B), and an
    # error rebuilt from those public fields (another host, another process) resumes
    # without putting the answered request back to a handler.
    asked: list[str] = []

    def elicit(message: str) -> Any:
        asked.append(message)
        if message == "second" and len(asked) < 3:
            raise RuntimeError("not now")
        return {"action": "accept", "content": {"n": len(asked)}}

    def form(msg: str) -> dict[str, Any]:
        return {
            "method": "elicitation/create",
            "params": {"message": msg, "requestedSchema": {"type": "object"}},
        }

    handlers = Handlers(elicitation=elicit)
    shell = Shell([needs({"a": form("first"), "b": form("second")}, "s")])
    with pytest.raises(InputRequiredFailure) as info:
        shell.run(handlers=handlers)
    first_answer = {"action": "accept", "content": {"n": 1}}
    assert info.value.input_responses == {"a": first_answer}
    rebuilt = errors.InputRequiredError(
        "interrupted",
        input_requests=info.value.input_requests,
        request_state=info.value.request_state,
        request_method=info.value.request_method,
        request_params=info.value.request_params,
        input_responses=info.value.input_responses,
    )
    shell.results = [DONE]
    assert shell.resume(rebuilt, handlers=handlers) == DONE
    assert asked == ["first", "second", "second"]  # "first" was not asked again
    assert sent_params(shell)[-1]["inputResponses"] == {
        "a": first_answer,
        "b": {"action": "accept", "content": {"n": 3}},
    }


def test_a_failed_retry_carries_the_continuation() -> None:
    shell = Shell([needs({"confirm": FORM}, "s"), errors.TransportError("reset")])
    with pytest.raises(InputRequiredFailure) as info:
        shell.run()
    assert info.value.reason == "request"
    assert isinstance(info.value.__cause__, errors.TransportError)
    shell.results = [DONE]
    assert shell.resume(info.value) == DONE
    assert sent_params(shell)[-1]["inputResponses"] == {"confirm": ACCEPTED}


def test_the_first_requests_own_error_is_not_wrapped() -> None:
    shell = Shell([errors.ServerError("no such tool", code=-32602)])
    with pytest.raises(errors.ServerError):
        shell.run()


def test_elicitation_id_dropped_on_a_modern_server() -> None:
    seen: list[Any] = []
    url = {
        "method": "elicitation/create",
        "params": {"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e1"},
    }
    shell = Shell([needs({"u": url}, "s"), DONE])
    shell.run(handlers=Handlers(elicitation=lambda message, meta: seen.append(meta) or True))
    assert seen == [{"mode": "url", "url": "https://x"}]
    assert any("elicitationId" in m for level, m in shell.logs if level == "WARNING")


# ---------------------------------------------------------------- out-of-band waits


def test_state_only_waits_are_paced_with_a_growing_delay() -> None:
    # MRTR-4.
    shell = Shell([needs(None, "w"), needs(None, "w"), needs(None, "w"), needs(None, "w"), DONE])
    assert shell.run(wait_limit=60.0) == DONE
    assert shell.sleeps == [0.5, 1.0, 2.0, 4.0]
    for params in sent_params(shell)[1:]:
        assert params == {"name": "checkout", "arguments": {"cart": 1}, "requestState": "w"}
    assert Pace().next(8.0) == 8.0  # bounded


def test_in_band_round_resets_the_pace() -> None:
    shell = Shell(
        [needs(None, "w"), needs(None, "w"), needs({"c": FORM}, "x"), needs(None, "y"), DONE]
    )
    shell.run(wait_limit=60.0)
    assert shell.sleeps == [0.5, 1.0, 0.5]


def test_wait_callback_sees_the_wait_and_can_retry_now() -> None:
    # MRTR-5: "retry" retries without the pause.
    waits: list[InputRequiredWait] = []

    def on_wait(wait: InputRequiredWait) -> Any:
        waits.append(wait)
        return "retry" if wait.round_trip == 1 else None

    shell = Shell([needs(None, "w1"), needs(None, "w2"), DONE])
    shell.run(on_wait=on_wait, wait_limit=60.0)
    assert shell.sleeps == [0.5]  # the first wait was retried at once
    first, second = waits
    assert (
        first.rpc_method,
        first.round_trip,
        first.delay,
        first.request_state,
        first.elapsed,
    ) == (
        "tools/call",
        1,
        0.5,
        "w1",
        0.0,
    )
    assert first.result == {"resultType": "input_required", "requestState": "w1"}
    assert (second.round_trip, second.request_state) == (2, "w2")


def test_cancel_stops_and_resume_completes() -> None:
    # MRTR-5/6: cancel → resumable error; resume_input_required continues.
    shell = Shell([needs(None, "w")])
    with pytest.raises(InputRequiredFailure) as info:
        shell.run(on_wait=lambda wait: "cancel")
    assert info.value.reason == "cancelled" and info.value.resumable
    assert info.value.request_state == "w"
    shell.results = [DONE]
    assert shell.resume(info.value) == DONE
    assert sent_params(shell)[-1] == {
        "name": "checkout",
        "arguments": {"cart": 1},
        "requestState": "w",
    }


def test_wait_never_exceeds_the_limit_and_callback_time_counts() -> None:
    # MRTR-7: a slow callback spends the budget too; the timeout error is resumable.
    shell = Shell([needs(None, "w")] * 50)

    def slow(wait: InputRequiredWait) -> None:
        shell.now += 0.75  # the host's callback takes its time

    with pytest.raises(InputRequiredFailure) as info:
        shell.run(on_wait=slow, wait_limit=3.0)
    assert info.value.reason == "timeout" and info.value.resumable
    # Pauses + callback time stay within the 3 s limit (the clock only moves there).
    assert shell.now - 100.0 <= 3.0
    assert sum(shell.sleeps) < 3.0
    assert len(shell.sleeps) >= 1


def test_retry_decision_cannot_outrun_the_limit() -> None:
    shell = Shell([needs(None, "w")] * 50)

    def busy(wait: InputRequiredWait) -> str:
        shell.now += 1.0
        return "retry"

    with pytest.raises(InputRequiredFailure, match="exceeded"):
        shell.run(on_wait=busy, wait_limit=2.5)
    assert shell.sleeps == []


def test_a_raising_wait_callback_fails_resumably() -> None:
    def bad(wait: InputRequiredWait) -> None:
        raise ValueError("host bug")

    shell = Shell([needs(None, "w")])
    with pytest.raises(InputRequiredFailure) as info:
        shell.run(on_wait=bad)
    assert info.value.reason == "handler"
    assert isinstance(info.value.__cause__, ValueError)


def test_resume_from_a_plain_input_required_error() -> None:
    plain = errors.InputRequiredError(
        "x", request_method="prompts/get", request_params={"name": "p"}, request_state="s"
    )
    shell = Shell([DONE])
    assert shell.resume(plain) == DONE
    assert shell.calls[0][:2] == ("prompts/get", {"name": "p", "requestState": "s"})
    with pytest.raises(ValueError, match="not resumable"):
        shell.resume(errors.InputRequiredError("x"))


def test_resume_after_malformed_first_result_resends_the_original() -> None:
    shell = Shell([{"resultType": "input_required"}])
    with pytest.raises(InputRequiredFailure) as info:
        shell.run()
    shell.results = [DONE]
    assert shell.resume(info.value) == DONE
    assert sent_params(shell)[-1] == {"name": "checkout", "arguments": {"cart": 1}}


def test_continuation_is_plain_data() -> None:
    c = Continuation("tools/call", {"name": "t"}, "s", {"k": FORM}, {"k": ACCEPTED})
    err = InputRequiredFailure("m", reason="cancelled", continuation=c)
    assert (err.request_method, err.request_params, err.request_state) == (
        "tools/call",
        {"name": "t"},
        "s",
    )
    assert err.input_requests == {"k": FORM} and err.answered == {"k": ACCEPTED}
