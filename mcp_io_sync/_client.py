"""The blocking ``Client``: drives ``mcp_proto.ClientCore`` operations with threads."""

from __future__ import annotations

import functools
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Concatenate, Literal, ParamSpec, TypeVar

from mcp_io_common.client_io import ClientIO
from mcp_io_common.servers import raise_first
from mcp_proto.client import ClientCore
from mcp_proto.client.base import EFFECTS, results_in_order
from mcp_proto.client.router import ServerSelector
from mcp_proto.client.streaming import END, ToolChunk, ToolStream
from mcp_proto.connection import CallCancelledError
from mcp_proto.effects import Call, CallHost, Effect, Op, RunAll
from mcp_proto.errors import MCPError

from ._base import BaseServer, CallToken
from ._events import ServerEvents

if TYPE_CHECKING:
    # The 2026-07-28 revision's modules load when a server speaks it, not with the shell.
    from mcp_proto.modern.notify_queue import ListenFilter

    from ._listen import Listener, Subscription

__all__ = ["Client"]

T = TypeVar("T")
P = ParamSpec("P")


def blocking(
    op: Callable[Concatenate[ClientCore, P], Op[T]],
) -> Callable[Concatenate[Client, P], T]:
    """A public method running the core operation ``op`` to its end (its signature and
    docstring are the operation's: written once, in ``mcp_proto.client``)."""

    @functools.wraps(op)
    def method(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._run(op(self._core, *args, **kwargs))

    return method


class Client(ClientIO[BaseServer], ServerEvents):
    """An MCP client aggregating one or more servers (blocking API).

    Every method runs a ``mcp_proto.ClientCore`` operation; :class:`BaseClient` holds
    the constructor, the effect table and the event routing; this class performs the
    effects that wait, on the caller's thread. Host callbacks (notifications,
    progress) run on one dispatcher thread, server requests (sampling, elicitation,
    roots) on a bounded worker pool, never on a reader thread, so they may make
    requests of their own (STDIO-9).
    """

    logger: logging.Logger
    _server_base = BaseServer

    # ------------------------------------------------------------ the shell's part

    def _clock(self) -> float:
        return time.monotonic()

    def _sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def _init_io(self) -> None:
        self._dispatch_queue: queue.Queue[Callable[[], Any] | None] = queue.Queue(
            self.limits.max_queued_notifications
        )
        self._dispatcher: threading.Thread | None = None
        self._workers = ThreadPoolExecutor(
            max_workers=self.limits.server_request_concurrency, thread_name_prefix="mcp-handler"
        )
        self._backlog = threading.BoundedSemaphore(self.limits.server_request_backlog)
        self._lock = threading.Lock()
        self._closed = False

    def _spawn(self, op: Op[Any]) -> None:
        def job() -> None:
            try:
                self._run(op)
            except Exception:
                self.logger.exception("a task the server asked for failed")

        try:
            self._workers.submit(job)
        except RuntimeError:  # pool shut down: the client is closing
            op.close()

    # ------------------------------------------------------------ driving the core

    def _run(self, op: Op[T]) -> T:
        """Perform ``op``'s effects until it returns."""
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                effect = op.throw(error) if error is not None else op.send(value)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            value, error = self._outcome(effect)

    def _outcome(self, effect: Effect) -> tuple[Any, BaseException | None]:
        """Perform ``effect`` (the table's method): (its value, None) or (None, the
        error to throw back)."""
        try:
            if type(effect) is Call:  # the common effect, without a lookup
                return self._perform_call(effect), None
            return getattr(self, EFFECTS[type(effect)][0])(effect), None
        except MCPError as exc:
            return None, exc
        except Exception as exc:  # host code (CallHost) may raise anything
            if not isinstance(effect, CallHost):
                raise
            return None, exc

    def _perform_run_all(self, effect: RunAll) -> list[Any]:
        return self._run_all(effect.ops)

    def _run_all(self, ops: Sequence[Op[T]]) -> list[T]:
        """Run ``ops`` side by side on this thread: advance each to its next request,
        send the whole round (pipelined per server, see ``BaseServer.request_many``),
        feed the answers back, repeat. Other effects are performed as they come."""
        inputs: list[tuple[Any, BaseException | None]] = [(None, None)] * len(ops)
        results: list[Any] = [None] * len(ops)
        failures: dict[int, BaseException] = {}
        live = list(range(len(ops)))
        while live:
            round_: list[tuple[int, Call]] = []
            for i in live:
                value, error = inputs[i]
                while True:
                    try:
                        effect = ops[i].throw(error) if error is not None else ops[i].send(value)
                    except StopIteration as stop:
                        results[i] = stop.value
                        break
                    except MCPError as exc:
                        failures[i] = exc
                        break
                    if isinstance(effect, Call):
                        round_.append((i, effect))
                        break
                    value, error = self._outcome(effect)
            by_server: dict[str, list[tuple[int, Call]]] = {}
            for item in round_:
                by_server.setdefault(item[1].server, []).append(item)
            for name, items in by_server.items():
                outcomes = self._servers[name].request_many([call for _, call in items])
                for (i, _), outcome in zip(items, outcomes, strict=True):
                    inputs[i] = outcome
            live = [i for i, _ in round_]
        return results_in_order(results, failures)

    # ------------------------------------------------------------ servers

    def connect_all(self) -> None:
        # (docstring: mcp_io_common/client_io.py)
        raise_first(self._connect_each())

    def _connect_each(self) -> list[MCPError | None]:
        """Connect every server at the same time; the failure of each, ``None`` for a
        connected one (anything but an ``MCPError`` is a bug, raised as it is)."""
        failures: list[MCPError | None] = []
        for failure in self._each_server(lambda server: server.ensure_connected()):
            if failure is not None and not isinstance(failure, MCPError):
                raise failure
            failures.append(failure)
        return failures

    # ------------------------------------------------------------ public API

    list_tools = blocking(ClientCore.list_tools)

    find_tools = blocking(ClientCore.find_tools)

    find_tool = blocking(ClientCore.find_tool)

    call_tool = blocking(ClientCore.call_tool)

    def call_tool_streaming(
        self,
        name: str,
        arguments: Mapping[str, object] | None = None,
        *,
        server: ServerSelector | None = None,
        timeout: float | None = None,
    ) -> Iterator[ToolChunk]:
        # (docstring: mcp_io_common/client_io.py)
        cond = threading.Condition()
        stream = ToolStream(lock=cond, wake=cond.notify_all)
        token, left = CallToken(), threading.Event()
        op = stream.op(self._core, name, arguments, server=server, timeout=timeout)
        worker = threading.Thread(
            target=self._run_streaming,
            args=(op, token, stream, left),
            name="mcp-stream",
            daemon=True,
        )
        worker.start()
        try:
            while True:
                with cond:
                    chunk = stream.take()
                    while chunk is None:
                        cond.wait()
                        chunk = stream.take()
                if chunk is END:
                    return
                yield chunk  # type: ignore[misc]  # (END and None are not chunks)
        finally:
            if not stream.ended:
                token.cancel()
                left.set()
            worker.join()
            if left.is_set():
                self._run(stream.leave_op(self._core))

    def _run_streaming(
        self, op: Op[None], token: CallToken, stream: ToolStream, left: threading.Event
    ) -> None:
        """``_run`` for a streaming call, on its own thread: its requests carry
        ``token`` (the consumer cancels them through it); once cancelled, the operation
        is told so before any further effect. The operation's sleeps (a task's poll
        interval, up to the call's timeout) end when the consumer leaves (``left``)."""
        value: Any = None
        error: BaseException | None = None
        try:
            while True:
                try:
                    effect = op.throw(error) if error is not None else op.send(value)
                except StopIteration:
                    return
                if token.cancelled:
                    value, error = None, CallCancelledError("the streaming call was left early")
                elif type(effect) is Call:
                    try:
                        value = self._servers[effect.server].request(
                            effect.method,
                            effect.params,
                            timeout=effect.timeout,
                            progress=effect.progress,
                            tool=effect.tool,
                            cancel_on_timeout=effect.cancel_on_timeout,
                            token=token,
                        )
                        error = None
                    except MCPError as exc:
                        value, error = None, exc
                elif type(effect) is CallHost and effect.fn == self._sleep:
                    left.wait(effect.args[0])
                    value, error = None, None
                else:
                    value, error = self._outcome(effect)
        except BaseException as exc:  # a bug of the client: the consumer sees it
            stream.fail(exc)

    call_tools = blocking(ClientCore.call_tools)

    list_prompts = blocking(ClientCore.list_prompts)

    get_prompt = blocking(ClientCore.get_prompt)

    list_resources = blocking(ClientCore.list_resources)

    list_resource_templates = blocking(ClientCore.list_resource_templates)

    read_resource = blocking(ClientCore.read_resource)

    subscribe_resource = blocking(ClientCore.subscribe_resource)

    unsubscribe_resource = blocking(ClientCore.unsubscribe_resource)

    complete = blocking(ClientCore.complete)

    set_log_level = blocking(ClientCore.set_log_level)

    set_roots = blocking(ClientCore.set_roots)

    # ------------------------------------------------------------ 2026-07-28

    resume_input_required = blocking(ClientCore.resume_input_required)

    cache_info = blocking(ClientCore.cache_info)

    ping = blocking(ClientCore.ping)

    send_rpc = blocking(ClientCore.send_rpc)

    send_notification = blocking(ClientCore.send_notification)

    # ------------------------------------------------------------ tasks (both eras)

    call_tool_as_task = blocking(ClientCore.call_tool_as_task)

    get_task = blocking(ClientCore.get_task)

    get_task_result = blocking(ClientCore.get_task_result)

    list_tasks = blocking(ClientCore.list_tasks)

    cancel_task = blocking(ClientCore.cancel_task)

    update_task = blocking(ClientCore.update_task)

    wait_for_task = blocking(ClientCore.wait_for_task)

    # ------------------------------------------------------------ skills (SEP-2640)

    list_skills = blocking(ClientCore.list_skills)

    get_skill = blocking(ClientCore.get_skill)

    load_skill = blocking(ClientCore.load_skill)

    read_skill_file = blocking(ClientCore.read_skill_file)

    def listen(
        self,
        notifications: ListenFilter | Mapping[str, object],
        callback: Listener | None = None,
        *,
        server: ServerSelector | None = None,
        ack_timeout: float | Literal[False] | None = None,
    ) -> Subscription:
        # (docstring: mcp_io_common/client_io.py)
        return self._listen_target(server).listen(notifications, callback, ack_timeout=ack_timeout)

    def _start_op(self, op: Op[Any], what: str) -> None:
        self._run(op)  # a property assignment: blocking, its errors raised here

    def flush_callbacks(self, timeout: float | None = None) -> bool:
        """Wait until the notification and progress callbacks queued so far have run
        (they run on a dispatcher thread, after the reader queued them). Returns False
        if ``timeout`` passed first."""
        if threading.current_thread() is self._dispatcher or self._closed:
            return True  # from inside a callback everything before it has run already
        done = threading.Event()
        self._submit(done.set)
        return done.wait(timeout)

    to_openai_tools = blocking(ClientCore.to_openai_tools)

    to_anthropic_tools = blocking(ClientCore.to_anthropic_tools)

    to_google_tools = blocking(ClientCore.to_google_tools)

    def cleanup(self) -> None:
        """Stop every server (bounded: STDIO-6) and the client's threads. Idempotent;
        the client can still be used afterwards: servers restart on demand. Open
        subscriptions are kept: they wait, and are sent again when their server next
        connects (SUB-22)."""
        raise_first(self._each_server(lambda server: server.cleanup()))
        self._stop_dispatcher()

    def _each_server(self, do: Callable[[BaseServer], Any]) -> list[BaseException | None]:
        """``do`` to every server, all at the same time, one thread each (each server has
        its own machine and lock): what each raised, ``None`` where it returned. Ten
        servers that take a second each to start, or a grace period each to close (a
        server that ignores its closed stdin), would add up one after the other."""
        servers = list(self._servers.values())
        if len(servers) == 1:
            try:
                do(servers[0])
            except Exception as exc:
                return [exc]
            return [None]
        pool = ThreadPoolExecutor(max_workers=len(servers), thread_name_prefix="mcp-each")
        try:
            futures = [pool.submit(do, server) for server in servers]
            return [f.exception() for f in futures]  # each one waited for
        finally:
            # Not waiting on a KeyboardInterrupt: close() then ends the connects still
            # waiting (their servers' cleanup fails them).
            pool.shutdown(wait=False)

    def _stop_dispatcher(self) -> None:
        with self._lock:
            dispatcher, self._dispatcher = self._dispatcher, None
        if dispatcher is not None:
            self._dispatch_queue.put(None)
            dispatcher.join(timeout=5)

    def close(self) -> None:
        """Like :meth:`cleanup`, and also end every open subscription and stop the
        handler pool. Final: a request made afterwards raises ``ConnectionError``
        instead of starting a server again (that one nobody would close)."""
        self._run(self._end_subscriptions_op())
        raise_first(self._each_server(lambda server: server.close()))
        self._stop_dispatcher()
        with self._lock:
            self._closed = True
        self._workers.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort at interpreter exit
        try:
            self._workers.shutdown(wait=False)
        except Exception:
            pass
