"""Answers from an MCP server, screened before the SDK sees them: ``screened``.

Theory of operation
-------------------
``screened(transport, label)`` wraps the SDK transport of one session (its
read and write streams) and mends two things in what the server sends, each
of which would otherwise cost the user far more than the one fault:

A malformed answer. Over stdio the SDK drops a line it cannot validate, even
one that is plainly the answer to a request of ours (it carries the request's
id, but its ``error`` has no ``message``, or its ``result`` is not an object):
the request would then wait out its whole timeout for an answer that already
came. ``answer_to_request`` turns such a line into a JSON-RPC error for that
id, saying what was wrong, so the call fails at once with the reason. (Over
streamable HTTP the SDK does so itself: there the HTTP response tells which
request an answer belongs to.) An answer whose id is missing, null or not
one of ours cannot be given to any request: the SDK drops it, and the
request it was meant for waits for its timeout. The screen logs a warning
for it then (with the server's error message, if it sent one), so that the
timeout that follows has an explanation in the log.

A tool listing with one bad tool. The SDK validates a ``tools/list`` answer
as a whole, so one tool with an input schema that is not an object schema
(or without a name) would fail the listing and lose every tool of the
server. The screen notes the ids of the ``tools/list`` requests it passes;
when the answer to one fails the negotiated version's validation only inside
``tools[i]`` entries, those entries are taken out, each with a warning on
the ``streamtools.mcp`` logger naming the server, the tool and the reason.
Any other fault in the answer is left for the SDK to report.

A tool result with one bad content block. The SDK validates a ``tools/call``
answer as a whole too, so a result holding one block it cannot read (an image
without ``mimeType``, a content type newer than it, a text block whose text is
null) was a tool error ("ValidationError: 13 validation errors for
CallToolResult"), and the text beside it lost, though the tool had run. The
screen notes the ``tools/call`` requests it passes; in an answer to one whose
only faults are inside ``content[i]``, each such block is replaced by a text
block saying what it was (``[json content]``, as ``result_text`` says a type
it does not know) and why it is not valid, and a result without ``content``
(only ``structuredContent``) gets an empty one; once per answer, a warning
names the server, the tool and the fault. The rest reaches the model.

A question for the user (``elicitation/create``) from a server the client did
not offer to answer one (no ``on_elicit``: the capability is not declared) is
answered "decline" here, once per session with a warning, so that the tool
goes on; the SDK answered it with an error, which failed the tool
(``streamtools.mcp.elicit``).

On the way out, one thing: with ``form_only`` the ``initialize`` offers the
elicitation capability in its 2025-06-18 shape (``{}``, form questions only)
rather than the SDK's ``{"form": {}, "url": {}}``, which a strict server of that
version refuses (``streamtools.mcp.elicit``, ``Offer``).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
from mcp.shared.message import SessionMessage
from mcp.types import (
    PARSE_ERROR,
    CallToolResult,
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    ListToolsResult,
    methods,
)
from pydantic import BaseModel, ValidationError

if TYPE_CHECKING:  # the SDK's public Transport; its streams' type has no public name
    from mcp.client import Transport
    from mcp.client._transport import TransportStreams

__all__ = ["answer_to_request", "screened"]

logger = logging.getLogger("streamtools.mcp")


def _errors(exc: Exception) -> list[dict[str, Any]]:
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return []
    try:
        return list(errors())
    except Exception:  # not pydantic's errors()
        return []


def _request_key(request_id: object) -> str | None:
    # The SDK matches an answer's id "7" to request 7: so do we.
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return None
    return str(request_id)


def answer_to_request(fault: Exception) -> SessionMessage | None:
    """A JSON-RPC error for the request that a line the SDK could not validate
    answers (see the module docstring), or None when it answers none we can name."""
    found = _errors(fault)
    # Every branch of the message union reports on the whole object somewhere
    # (a request's missing "method", at least); take it from there.
    message = next((e["input"] for e in found if isinstance(e.get("input"), dict)), None)
    if message is None or "method" in message:
        return None  # not JSON at all, or a request or notification: not an answer
    request_id = message.get("id")
    if _request_key(request_id) is None:
        return None
    shape = "JSONRPCError" if "error" in message else "JSONRPCResponse"
    wrong = next((e for e in found if e["loc"][:1] == (shape,) and len(e["loc"]) > 1), None)
    what = ""
    if wrong is not None:
        what = f" ({'.'.join(str(part) for part in wrong['loc'][1:])}: {wrong['msg']})"
    error = ErrorData(
        code=PARSE_ERROR,
        message=f"the server's answer is not valid MCP JSON-RPC{what}: {repr(message)[:200]}",
    )
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


def _faults(
    method: str, model: type[BaseModel], result: dict[str, Any], version: str | None
) -> list[dict[str, Any]]:
    """The validation errors of a ``method`` result (``tools/list``, ``tools/call``),
    by the negotiated version's rules and then the SDK's own ``model`` (both are
    applied to it after us)."""
    found: list[dict[str, Any]] = []
    if version is not None:
        try:
            methods.validate_server_result(method, version, result)
        except ValidationError as exc:
            found.extend(_errors(exc))
        except (KeyError, ValueError):  # a version this SDK has no rules for
            pass
    try:
        model.model_validate(result, by_name=False)
    except ValidationError as exc:
        found.extend(_errors(exc))
    return found


# a content block's "type" -> the name pydantic gives its member of the content union
_BLOCKS = {
    "text": "TextContent",
    "image": "ImageContent",
    "audio": "AudioContent",
    "resource_link": "ResourceLink",
    "resource": "EmbeddedResource",
}


def _block_fault(block: object, faults: list[dict[str, Any]]) -> str:
    """What is wrong with one content block, from its faults (one per union member)."""
    kind = block.get("type") if isinstance(block, dict) else None
    member = _BLOCKS.get(kind) if isinstance(kind, str) else None
    if isinstance(kind, str) and member is None:
        return f"a content type this client does not know, {kind!r}"
    for fault in faults:
        loc = fault["loc"]
        if member is not None and len(loc) > 2 and loc[2] == member:
            where = ".".join(str(part) for part in loc[3:])
            return f"{where}: {fault['msg']}" if where else fault["msg"]
    return "not a content block"


# fields of a tool that no call needs: wrong, they are taken out rather than the tool
_EXTRAS = frozenset({"outputSchema", "icons", "title", "annotations", "execution", "_meta"})


def _tool_label(entry: object) -> str:
    name = entry.get("name") if isinstance(entry, dict) else None
    return repr(name) if isinstance(name, str) else "without a valid name"


class _Screen:
    """The state one session's screen keeps: the ids of the requests sent and not
    answered yet (a request that timed out stays: its answer may still come),
    and which of them are ``tools/list`` requests."""

    def __init__(
        self,
        label: str,
        version: Callable[[], str | None],
        *,
        decline_questions: bool = False,
        form_only: bool = False,
    ) -> None:
        self.label = label
        self.version = version
        self.decline_questions = decline_questions
        self.form_only = form_only
        self._declined = False  # a question was declined (said once per session)
        self._unanswered: set[str] = set()
        self._listings: set[str] = set()
        self._calls: dict[str, str] = {}  # tools/call request id -> the tool's name

    def sent(self, item: SessionMessage) -> None:
        message = item.message
        if isinstance(message, JSONRPCRequest):
            key = _request_key(message.id)
            if key is not None:
                self._unanswered.add(key)
                if message.method == "tools/list":
                    self._listings.add(key)
                elif message.method == "tools/call":
                    name = (message.params or {}).get("name")
                    self._calls[key] = name if isinstance(name, str) else "?"

    def offered(self, item: SessionMessage) -> SessionMessage:
        """``item``, but an ``initialize`` that offers form questions only when
        ``form_only`` (see the module docstring)."""
        message = item.message
        if not (
            self.form_only
            and isinstance(message, JSONRPCRequest)
            and message.method == "initialize"
            and isinstance(message.params, dict)
        ):
            return item
        capabilities = message.params.get("capabilities")
        if not isinstance(capabilities, dict) or "elicitation" not in capabilities:
            return item
        params = {**message.params, "capabilities": {**capabilities, "elicitation": {}}}
        return SessionMessage(message.model_copy(update={"params": params}), item.metadata)

    def declined(self, item: SessionMessage | Exception) -> SessionMessage | None:
        """The answer "decline" to a question for the user (``elicitation/create``)
        that the client did not offer to answer (``streamtools.mcp.elicit``), or
        None to pass ``item`` on."""
        if not self.decline_questions or isinstance(item, Exception):
            return None
        message = item.message
        if not (isinstance(message, JSONRPCRequest) and message.method == "elicitation/create"):
            return None
        if not self._declined:
            self._declined = True
            logger.warning(
                "MCP server %r asks the user something (elicitation), which streamtools did "
                "not offer; declined (mcp_tools(on_elicit=...) answers it)",
                self.label,
            )
        answer = JSONRPCResponse(jsonrpc="2.0", id=message.id, result={"action": "decline"})
        return SessionMessage(answer)

    def received(self, item: SessionMessage | Exception) -> SessionMessage | Exception:
        if isinstance(item, Exception):
            return answer_to_request(item) or item
        message = item.message
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            key = _request_key(message.id)
            if key not in self._unanswered:
                said = f": {message.error.message}" if isinstance(message, JSONRPCError) else ""
                logger.warning(
                    "MCP server %r sent an answer no request is waiting for (id %r); ignored%s",
                    self.label, message.id, said,
                )
                return item
            self._unanswered.discard(key)
            if key in self._listings:
                self._listings.discard(key)
                if isinstance(message, JSONRPCResponse):
                    self._drop_invalid_tools(message.result)
            tool = self._calls.pop(key, None) if key is not None else None
            if tool is not None and isinstance(message, JSONRPCResponse):
                self._mend_result(tool, message.result)
        return item

    def _mend_result(self, tool: str, result: dict[str, Any]) -> None:
        """Replace the bad blocks of a ``tools/call`` result (see the module docstring)."""
        if result.get("resultType", "complete") != "complete":
            return  # a 2026-07-28 server asking for input (no content): not a tool result
        faults = _faults("tools/call", CallToolResult, result, self.version())
        if not faults:
            return
        content = result.get("content")
        if content is None and all(f["loc"] == ("content",) for f in faults):
            result["content"] = []  # structuredContent alone: result_text says it
            logger.warning(
                "MCP server %r: the result of %r has no content (not valid MCP); "
                "its structured content is used", self.label, tool,
            )
            return
        if not isinstance(content, list):
            return
        by_block: dict[int, list[dict[str, Any]]] = {}
        for fault in faults:
            loc = fault["loc"]
            if len(loc) < 2 or loc[0] != "content" or not isinstance(loc[1], int):
                return  # the result itself is wrong: the SDK says so
            by_block.setdefault(loc[1], []).append(fault)
        said: list[str] = []
        for index, found in sorted(by_block.items()):
            block = content[index]
            why = _block_fault(block, found)
            kind = block.get("type") if isinstance(block, dict) else None
            what = kind if isinstance(kind, str) else "unknown"
            text = f"[{what} content]" if why.startswith("a content type") else (
                f"[{what} content that is not valid MCP ({why})]"
            )
            content[index] = {"type": "text", "text": text}
            said.append(f"content[{index}]: {why}")
        logger.warning(
            "MCP server %r: the result of %r holds content that is not valid MCP (%s); "
            "the rest is used", self.label, tool, "; ".join(said),
        )

    def _tool_faults(self, result: dict[str, Any]) -> dict[int, list[dict[str, Any]]] | None:
        """A listing's faults by tool index; None if one is outside every tool."""
        bad: dict[int, list[dict[str, Any]]] = {}
        for fault in _faults("tools/list", ListToolsResult, result, self.version()):
            loc = fault["loc"]
            if len(loc) < 2 or loc[0] != "tools" or not isinstance(loc[1], int):
                return None  # the listing itself is wrong: the SDK says so
            bad.setdefault(loc[1], []).append(fault)
        return bad

    def _drop_invalid_tools(self, result: dict[str, Any]) -> None:
        tools = result.get("tools")
        if not isinstance(tools, list):
            return
        bad = self._tool_faults(result)
        if bad and self._strip_extras(tools, bad):
            bad = self._tool_faults(result)  # what is left wrong after that
        if bad is None:
            return
        for index, faults in sorted(bad.items()):
            loc, msg = faults[0]["loc"], faults[0]["msg"]
            where = ".".join(str(part) for part in loc[2:])
            logger.warning(
                "MCP server %r: tool %s left out: its definition is not valid MCP (%s)",
                self.label, _tool_label(tools[index]), f"{where}: {msg}" if where else msg,
            )
        result["tools"] = [entry for index, entry in enumerate(tools) if index not in bad]

    def _strip_extras(self, tools: list[Any], bad: dict[int, list[dict[str, Any]]]) -> bool:
        """Take out of each bad tool the fields that are wrong when no call needs them
        (``_EXTRAS``: an ``outputSchema`` that is not an object schema, as many
        servers declare for a tool that returns a list, or an icon without its
        ``src``), keeping the tool: it was left out for them. Whether any was."""
        stripped = False
        for index, faults in bad.items():
            entry = tools[index]
            if not isinstance(entry, dict) or any(len(f["loc"]) < 3 for f in faults):
                continue
            fields = sorted({str(f["loc"][2]) for f in faults})
            if not _EXTRAS.issuperset(fields):
                continue
            tools[index] = {key: value for key, value in entry.items() if key not in fields}
            where = ".".join(str(part) for part in faults[0]["loc"][2:])
            logger.warning(
                "MCP server %r: tool %s kept without its %s, which %s not valid MCP (%s: %s)",
                self.label, _tool_label(entry), " and ".join(fields),
                "are" if len(fields) > 1 else "is", where, faults[0]["msg"],
            )
            stripped = True
        return stripped


class _ScreenedReads:
    """A transport's read stream, screened (``_Screen.received``)."""

    def __init__(self, inner: Any, screen: _Screen, writes: Any) -> None:
        self._inner = inner
        self._screen = screen
        self._writes = writes  # the transport's write stream, for a declined question

    @property
    def last_context(self) -> Any:  # the SDK reads it off the stream it iterates, if there
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._inner.receive()
            answer = self._screen.declined(item)
            if answer is None:
                return self._screen.received(item)
            await self._writes.send(answer)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _ScreenedReads:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _ScreenedReads:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class _ScreenedWrites:
    """A transport's write stream; the screen notes what is sent (``_Screen.sent``)."""

    def __init__(self, inner: Any, screen: _Screen) -> None:
        self._inner = inner
        self._screen = screen

    async def send(self, item: SessionMessage, /) -> None:
        item = self._screen.offered(item)
        self._screen.sent(item)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _ScreenedWrites:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


@asynccontextmanager
async def screened(
    transport: Transport,
    label: str,
    version: Callable[[], str | None],
    *,
    decline_questions: bool = False,
    form_only: bool = False,
) -> AsyncIterator[TransportStreams]:
    """``transport`` with what the server sends screened (see the module docstring);
    ``version`` gives the protocol version negotiated, once it is known;
    ``decline_questions``: answer the server's questions to the user "decline";
    ``form_only``: offer form questions only in the ``initialize``."""
    screen = _Screen(label, version, decline_questions=decline_questions, form_only=form_only)
    async with transport as (read_stream, write_stream):
        reads = _ScreenedReads(read_stream, screen, write_stream)
        yield reads, _ScreenedWrites(write_stream, screen)
