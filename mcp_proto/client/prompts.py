"""Prompts: listing and ``prompts/get`` with its required-argument check."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import deprecations
from ..effects import Op, ProgressCallback
from ..errors import (
    ConnectionError,
    PromptGetError,
    TransportError,
    ValidationError,
)
from ..results import PromptResult
from ..types import Prompt
from . import era
from .router import PASS_THROUGH, Router, ServerSelector

__all__ = ["PromptOps"]


class PromptOps(Router):
    """The prompt operations of :class:`~mcp_proto.client.ClientCore`."""

    def list_prompts(
        self, *, cache: bool = True, server: ServerSelector | None = None
    ) -> Op[list[Prompt]]:
        return (yield from self._list_across("prompts", cache, server))

    def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, object] | None = None,
        *,
        server: ServerSelector | None = None,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
    ) -> Op[PromptResult]:
        """``prompts/get``; ``progress(progress, total, message)`` is called for the
        server's progress notifications while it runs (PROG-4, as ``call_tool``)."""
        prompt: Prompt = yield from self._resolve("prompts", name, server)
        args = {str(k): v for k, v in (arguments or {}).items()}
        meta = args.pop("_meta", None)
        if meta is not None and deprecations.features_in_meta(meta):
            self._deprecated("logging")  # DEP-4: a log level in a call's own _meta
        for arg in prompt.arguments:
            if arg.required and arg.name not in args:
                raise ValidationError(f"prompt {name!r} needs the argument {arg.name!r}")
        # Prompt arguments are strings on the wire (GetPromptRequest.arguments).
        params: dict[str, Any] = {
            "name": name,
            "arguments": {k: _as_str(v) for k, v in args.items()},
        }
        if isinstance(meta, Mapping):
            params["_meta"] = dict(meta)
        owner = prompt.server or self._default_server(None)
        try:
            result = yield from era.request(self, owner, "prompts/get", params, timeout, progress)
        except PASS_THROUGH:
            raise
        except (TransportError, ConnectionError) as exc:
            raise PromptGetError(f"getting prompt {name!r} from {owner!r} failed: {exc}") from exc
        return PromptResult.from_wire(result, server=owner)


def _as_str(value: Any) -> str:
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value)
