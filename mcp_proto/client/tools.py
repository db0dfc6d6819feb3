"""Tools: listing, finding, ``tools/call`` with its argument and input-schema checks,
structured-output validation (SCH-1/SCH-2/SCH-18) and ``call_tools``."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from .. import deprecations, llm
from .._schema_plain import is_plain
from ..effects import Connect, Log, Op, PeekEra, ProgressCallback, RunAll, _new_call
from ..errors import (
    CapabilityError,
    ConnectionError,
    HeaderMismatchError,
    SchemaError,
    ToolCallError,
    TransportError,
    ValidationError,
)
from ..results import ToolResult, _tool_result
from ..session import ServerInfo
from ..types import Tool
from ..versions import features_of
from . import era
from .router import PASS_THROUGH, Router, ServerSelector

__all__ = ["ToolOps"]


class ToolOps(Router):
    """The tool operations of :class:`~mcp_proto.client.ClientCore`."""

    #: This client's input-schema verdicts (see :func:`_input_schema_warning`), made
    #: at the first call; bounded, and gone with the client.
    _input_verdicts: _Verdicts | None = None

    def _input_schema_warning(self, tool: Tool) -> str | None:
        verdicts = self._input_verdicts
        if verdicts is None:
            verdicts = self._input_verdicts = {}
        return _input_schema_warning(tool, verdicts)

    def list_tools(
        self, *, cache: bool = True, server: ServerSelector | None = None
    ) -> Op[list[Tool]]:
        """Tools of every server (or one), cached until ``list_changed`` (TOOL-1)."""
        return (yield from self._list_across("tools", cache, server))

    def find_tools(self, pattern: str | re.Pattern[str]) -> Op[list[Tool]]:
        """Tools whose name contains ``pattern`` (a string) or matches it (a regex)."""
        tools = yield from self.list_tools()
        if isinstance(pattern, str):
            return [t for t in tools if pattern in t.name]
        return [t for t in tools if pattern.search(t.name)]

    def find_tool(self, pattern: str | re.Pattern[str]) -> Op[Tool | None]:
        tools = yield from self.find_tools(pattern)
        if isinstance(pattern, str):
            exact = [t for t in tools if t.name == pattern]
            if exact:
                return exact[0]
        return tools[0] if tools else None

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, object] | None = None,
        *,
        server: ServerSelector | None = None,
        progress: ProgressCallback | None = None,
        timeout: float | None = None,
    ) -> Op[ToolResult]:
        """Call a tool on the server that offers it (TOOL-4) and check the result.

        Raises ``ToolNotFound`` / ``AmbiguousToolName`` (routing), ``ValidationError``
        (missing required arguments, or structured output in strict mode),
        ``RequestTimeoutError`` (timeout), ``ServerError`` (the server's JSON-RPC
        error; ``HeaderMismatchError`` after one refresh and retry, HDR-5),
        ``InputRequiredError`` (a 2026-07-28 ``input_required`` exchange that could not
        complete: pass it to ``resume_input_required``), ``ToolCallError`` (the
        connection failed; the outcome is unknown), ``RemoteProtocolError`` (a
        malformed result).
        """
        return self._call_tool(name, arguments, server, progress, timeout, True)

    def _routes_through_tasks(self, tool: Tool, owner: str) -> bool:
        """Whether a call of ``tool`` may meet a task and so goes through the task ops
        (``mcp_proto.tasks.TaskOps`` says; a client without them never does)."""
        return False

    def _through_tasks(self, op: Op[ToolResult], timeout: float | None) -> Op[ToolResult]:
        raise NotImplementedError  # (only reached when _routes_through_tasks said so)

    def _call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        server: ServerSelector | None,
        progress: ProgressCallback | None,
        timeout: float | None,
        route: bool,
    ) -> Op[ToolResult]:
        # One cached match (the usual case) needs no op; anything else is _resolve's.
        matches = self._cached_matches("tools", name, server)
        if matches is not None and len(matches) == 1:
            tool: Tool = matches[0]
        else:
            tool = yield from self._resolve("tools", name, server)
        owner = tool.server or self._default_server(None)
        # Decided on the resolved tool (its taskSupport, its server's extensions), so
        # the usual call adds no layer: issue 22's per-call cost; TOOL-18, TASK-11.
        if route and self._routes_through_tasks(tool, owner):
            inner = self._call_tool(name, arguments, server, progress, timeout, False)
            return (yield from self._through_tasks(inner, timeout))
        args = dict(arguments or {})
        # TOOL-14: a request-level _meta given among the arguments goes to params._meta.
        meta = args.pop("_meta", None)
        if meta is not None and deprecations.features_in_meta(meta):
            self._deprecated("logging")  # DEP-4: a log level in a call's own _meta
        verdicts = self._input_verdicts  # (self._input_schema_warning's, inlined: per call)
        if verdicts is None:
            verdicts = self._input_verdicts = {}
        warning = _input_check(tool, args, verdicts)  # TOOL-5, then SCH-11/SCH-13
        if warning is not None:
            yield Log("WARNING", warning)
        params: dict[str, Any] = {"name": name, "arguments": args}
        if meta is not None and isinstance(meta, Mapping):  # (None: no ABC check)
            params["_meta"] = dict(meta)
        # The era and the negotiated version are the connection's (issue 22: one owner
        # per fact), and the request does not need them: the connection builds it for
        # its era (the tool's definition only matters to a 2026-07-28 HTTP one, HDR-1).
        # They are asked for only where they decide something: a result that is not
        # plainly complete, an error handled by era, a structured-output check. A
        # connection failing on the way is a ToolCallError too (inside the try).
        for attempt in (1, 2):
            try:
                try:
                    result = yield _new_call(owner, "tools/call", params, timeout, progress, tool)
                except CapabilityError as exc:
                    if (yield PeekEra(owner)) != "modern":
                        raise
                    result = yield from era.refused(
                        self, exc, owner, "tools/call", params, timeout, progress, tool
                    )
                # LIFE-19: an absent resultType, or "complete", is complete in either
                # era (the handshake era ignores the field): no era to ask for.
                try:
                    complete = "resultType" not in result or result["resultType"] == "complete"
                except TypeError:  # not an object: the era decides who says so
                    complete = False
                if not complete and (yield PeekEra(owner)) == "modern":
                    result = yield from era.rounds(
                        self, owner, "tools/call", params, result, timeout, progress, tool
                    )
                break
            except HeaderMismatchError:
                # HDR-5: the server's headers check failed, so our definition of the
                # tool is out of date: refresh tools/list (as a list_changed would)
                # and retry once with the headers recomputed; a second -32020 raises.
                if attempt == 2 or (yield PeekEra(owner)) != "modern":
                    raise
                yield Log(
                    "WARNING",
                    f"server {owner!r} rejected the headers of tool {name!r} (-32020);"
                    " refreshing tools/list and retrying once",
                )
                self.synthetic_notification(owner, "notifications/tools/list_changed")
                tool = yield from self._resolve("tools", name, owner)
                _check_required(tool, args)
                warning = self._input_schema_warning(tool)  # SCH-20: the refreshed tool
                if warning is not None:
                    yield Log("WARNING", warning)
            except PASS_THROUGH:
                raise
            except (TransportError, ConnectionError) as exc:
                raise ToolCallError(
                    f"calling tool {name!r} on server {owner!r} failed: {exc}"
                ) from exc
        typed = _tool_result(result, owner)  # (ToolResult.from_wire, as a function)
        if tool.has_structured_output and not typed.is_error:
            # SCH-18: the negotiated version decides what structuredContent may be.
            info: ServerInfo = yield Connect(owner)
            yield from self._check_structured(tool, typed.raw, info.protocol_version)
        return typed

    def _check_structured(self, tool: Tool, result: Mapping[str, Any], version: str) -> Op[None]:
        """SCH-1/SCH-2/SCH-18: a tool with an outputSchema must return matching
        ``structuredContent`` on success; ``isError`` results are exempt."""
        if not tool.has_structured_output or result.get("isError") is True:
            return
        structured = result.get("structuredContent")
        present = (
            isinstance(structured, dict)
            if features_of(version).structured_content_object_only
            else "structuredContent" in result
        )
        if not present:
            problems = [
                "the result has no structuredContent although the tool declares an outputSchema"
            ]
        else:
            where = f"tool {tool.name!r} on server {tool.server!r}"
            from ..schema import UnsupportedDialectError, compile  # lazy: jsonschema-rs

            try:
                validator = compile(tool.output_schema)
            except UnsupportedDialectError as exc:  # SCH-12: unreadable, in both modes
                raise ValidationError(f"{where}: output schema {exc.detail}") from None
            except SchemaError as exc:  # SCH-13: warned about, content not checked
                yield Log("WARNING", f"structured output of {where} not checked: {exc}")
                return
            if validator.unevaluated:  # SCH-7
                yield Log(
                    "WARNING",
                    f"{where}: output schema validation is partial ("
                    + ", ".join(sorted(validator.unevaluated))
                    + " not evaluated)",
                )
            problems = [str(v) for v in validator.violations(structured)]
        if not problems:
            return
        message = f"tool {tool.name!r} on server {tool.server!r}: " + "; ".join(problems)
        if self.validate_structured_content == "strict":
            raise ValidationError(message)
        yield Log("WARNING", f"structured output check failed: {message}")

    def call_tools(
        self, calls: Iterable[Mapping[str, object]], *, concurrent: bool = False
    ) -> Op[list[ToolResult]]:
        """Call several tools; results in the order of ``calls`` (TOOL-6). Each call is
        a mapping with the keys ``name``, ``arguments`` (or ``parameters``) and
        ``server`` (optional); every entry is checked before anything is sent.

        By default one after the other. With ``concurrent=True`` every request is sent
        before any answer is awaited (blocking shell: over stdio in one write, on one
        thread, no thread per call; Trio: one task each), so the server may run them in
        any order; if calls fail, the first failure in ``calls`` order is raised once
        all have finished."""
        ops = self.tool_call_ops(calls)
        if concurrent:
            results: list[ToolResult] = yield RunAll(ops)
            return results
        results = []
        for op in ops:
            results.append((yield from op))
        return results

    def to_openai_tools(self, tool_names: Iterable[str] | None = None) -> Op[list[dict[str, Any]]]:
        """Every server's tools (as ``list_tools`` gives them) as OpenAI function
        definitions (LLM-1); ``tool_names``: only those."""
        return llm.to_openai_tools((yield from self.list_tools()), tool_names)

    def to_anthropic_tools(
        self, tool_names: Iterable[str] | None = None
    ) -> Op[list[dict[str, Any]]]:
        """Every server's tools as Anthropic tool definitions (LLM-2); ``tool_names``:
        only those."""
        return llm.to_anthropic_tools((yield from self.list_tools()), tool_names)

    def to_google_tools(self, tool_names: Iterable[str] | None = None) -> Op[list[dict[str, Any]]]:
        """Every server's tools as Google function declarations (LLM-3); ``tool_names``:
        only those."""
        return llm.to_google_tools((yield from self.list_tools()), tool_names)

    def tool_call_ops(self, calls: Iterable[Mapping[str, Any]]) -> list[Op[ToolResult]]:
        """One ``call_tool`` operation per entry of a ``call_tools`` list (each entry is
        checked first, so a bad one fails before anything is sent). A shell runs them in
        turn, or side by side for ``call_tools(..., concurrent=True)``."""
        entries = []
        for i, call in enumerate(calls):
            # (type() first: the usual dict needs no ABC check; one round of a
            # concurrent call_tools builds one entry per call)
            name = call.get("name") if type(call) is dict or isinstance(call, Mapping) else None
            if not isinstance(name, str):
                raise ValueError(f"call {i} needs a 'name'")
            args = call["arguments"] if "arguments" in call else call.get("parameters")
            entries.append((name, args, call.get("server")))
        return [self.call_tool(name, args, server=server) for name, args, server in entries]


def _input_schema_warning(tool: Tool, verdicts: _Verdicts) -> str | None:
    """SCH-11/SCH-13: an inputSchema whose dialect is unsupported stops the call before
    anything is sent (``ValidationError``); any other unusable input schema gives the
    warning to log, and the call is still sent (the server owns argument validation).
    Call it again on a refreshed tool definition before a retry (SCH-20). (A plain
    function, not an op: the usual answer, no warning, then costs no generator.)

    The verdict is kept in ``verdicts`` (the client's) per schema object (a cached tool
    list hands out the same object every call), so the hot path of repeated calls pays
    a dict lookup, not a compile."""
    schema = tool.input_schema
    known = verdicts.get(id(schema))
    if known is None or known[0] is not schema:
        known = _judge(tool, verdicts)
    return _said(known[1])


def _input_check(tool: Tool, args: Mapping[str, Any], verdicts: _Verdicts) -> str | None:
    """:func:`_check_required` (TOOL-5), then :func:`_input_schema_warning`, with one
    lookup in ``verdicts``: ``call_tool`` runs both on every call (issue 22's per-call
    cost), and the table's entry also holds the schema's required names without a
    default, read from the schema once."""
    schema = tool.input_schema
    known = verdicts.get(id(schema))
    if known is None or known[0] is not schema:
        known = _judge(tool, verdicts)
    for name in known[2]:
        if name not in args:
            _check_required(tool, args)  # raises, naming every missing argument
    verdict = known[1]
    if verdict is None:
        return None
    return _said(verdict)


def _judge(tool: Tool, verdicts: _Verdicts) -> _Verdict:
    """The entry of ``tool``'s input schema in ``verdicts``, made now (and kept)."""
    schema = tool.input_schema
    verdict = None
    if not is_plain(schema):  # a plain one is certainly usable: no engine needed
        from ..schema import UnsupportedDialectError, compile  # lazy: jsonschema-rs

        try:
            compile(schema)
        except UnsupportedDialectError as exc:
            verdict = (
                "error",
                f"tool {tool.name!r} on server {tool.server!r}: input schema {exc.detail}",
            )
        except SchemaError as exc:
            verdict = (
                "warn",
                f"tool {tool.name!r} on server {tool.server!r}: unusable input schema, the"
                f" call is sent anyway: {exc}",
            )
    if len(verdicts) >= _MAX_VERDICTS:
        verdicts.clear()
    known = verdicts[id(schema)] = (schema, verdict, _required_names(schema))
    return known


def _said(verdict: tuple[str, str] | None) -> str | None:
    """A verdict's warning, or its error raised."""
    if verdict is None:
        return None
    if verdict[0] == "error":
        raise ValidationError(verdict[1])
    return verdict[1]


# id(inputSchema) -> (the schema object itself, its verdict, its required names without
# a default). Holding the object keeps its id from being reused by another schema while
# the entry lives.
_Verdict = tuple[Any, "tuple[str, str] | None", tuple[str, ...]]
_Verdicts = dict[int, _Verdict]
_MAX_VERDICTS: Final = 1024  # then the table starts over


def _required_names(schema: Any) -> tuple[str, ...]:
    """The names :func:`_check_required` asks for: ``required`` entries (strings) whose
    property has no ``default``."""
    is_mapping = type(schema) is dict or isinstance(schema, Mapping)
    required = schema.get("required") if is_mapping else None
    if not isinstance(required, list):
        return ()
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    return tuple(
        r
        for r in required
        if isinstance(r, str) and not (isinstance(props.get(r), Mapping) and "default" in props[r])
    )


def _check_required(tool: Tool, args: Mapping[str, Any]) -> None:
    """TOOL-5: required parameters without a schema default must be present."""
    schema = tool.input_schema
    # (a dict, as a rule: no ABC check on the hot path)
    is_mapping = type(schema) is dict or isinstance(schema, Mapping)
    required = schema.get("required") if is_mapping else None
    if not isinstance(required, list):
        return
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    missing = [
        r
        for r in required
        if isinstance(r, str)
        and r not in args
        and not (isinstance(props.get(r), Mapping) and "default" in props[r])
    ]
    if missing:
        raise ValidationError(
            f"tool {tool.name!r} is missing required argument(s): {', '.join(missing)}"
        )
