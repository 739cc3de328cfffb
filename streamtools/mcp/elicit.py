"""A server asking the user something mid-call: ``elicitation/create``.

Theory of operation
-------------------
An MCP server may ask its client's user for input while a tool runs (spec
2025-06-18 and later): in *form* mode a message and a flat JSON Schema of what
to fill in (a name, a number, a choice), in *URL* mode (2025-11-25) a message
and a page to open (a sign-in, a payment), whose answer never passes through
the client. The user accepts (with the form's content), declines, or cancels.

``mcp_tools(..., on_elicit=handler)`` (and ``MCPConnection``) takes a handler,
sync or async, called with an ``Elicitation`` and returning an
``ElicitAnswer``. A sync handler runs in a worker thread, so one that waits
for a person at a terminal (``ask_in_terminal``, which ``streamtools chat``
uses) does not stall the session. A handler that raises or returns something
else is logged and answered "cancel" (no choice was made). While a handler
runs, the calls in flight on that server count as at work: their timeouts
(``call_timeout`` and the agent's ``tool_timeout``) start again, up to their
limit in all, as progress would, so a person taking a minute to answer does
not get the call cut at 30 s.

With a handler the client declares the ``elicitation`` capability (the SDK
declares both modes). Without one it declares nothing, so a server that
checks (the SDK's own resolvers do) says clearly that it needs it; and a
server that asks anyway, as a 2025 server calling ``ctx.elicit`` does without
looking, is answered "decline", the spec's answer for a user who says no, so
the tool goes on (``streamtools.mcp.screen``). It got an error before
("Elicitation not supported"), which failed the tool. Declaring the
capability for every server, to decline everything, was not done: a server
that checks would hear "the user declined" where no user was asked, and a
strict server of an older protocol may refuse the capability's newer shape.

That refusal also met a client with a handler (``streamtools chat`` at a
terminal, which offers every server its questions): the SDK offers
``{"form": {}, "url": {}}`` (2025-11-25), and a strict 2025-06-18 server
(the Java SDK's: -32603 ``Unrecognized field "form"``, openai/codex#17492)
refused the ``initialize``, so the server did not load at all, for a
capability it might never use. A handshake answered with an error while
questions were offered is now tried again offering less (``Offer``, ``LESS``):
first the 2025-06-18 shape, ``{}`` (form questions only, as openai/codex#20562
sends; ``streamtools.mcp.screen`` writes it into the ``initialize``), then
nothing (questions declined), with a warning that says so. Only an error
answer to the handshake is tried again, not a crash or silence (a server that
does not start would start three times).

A server may also refuse a call until the user has opened a page (the error
``URL_ELICITATION_REQUIRED``, -32042, spec 2025-11-25, carrying the pages).
The call failed saying only "URL elicitation required", so neither the model
nor the user learned where to go. The pages are now put to ``on_elicit`` (URL
mode), and when the user accepts each, the call is made once more (the server
never ran it); without a handler, or when the user does not accept, the tool
error names each page's message and URL.

Decided with what peers offer: the SDK's ``elicitation_callback`` (context,
params) -> ``ElicitResult``, the AI SDK's ``onElicitationRequest`` handler
returning an action and content (ai docs, "Handling Elicitation Requests"),
both of which leave asking to the application.
"""

from __future__ import annotations

import inspect
import logging
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import anyio
import anyio.to_thread
from mcp import MCPError
from mcp.client.session import ClientRequestContext, ElicitationFnT
from mcp.types import (
    CONNECTION_CLOSED,
    REQUEST_TIMEOUT,
    URL_ELICITATION_REQUIRED,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
    ErrorData,
)

from streamtools.mcp.servers import MCPLoadError, MCPToolError, describe_failure, unwrap_group
from streamtools.runtime.progress import call_clock

__all__ = [
    "LESS",
    "ElicitAnswer",
    "Elicitation",
    "Offer",
    "OfferRefused",
    "OnElicit",
    "PagesFirst",
    "ask_in_terminal",
    "elicitation_callback",
    "offering_less",
    "opening_pages",
    "pages_to_open",
    "refused_offer",
]

logger = logging.getLogger("streamtools.mcp")

Value: TypeAlias = str | int | float | bool | list[str] | None

# What a handshake offers of answering the server's questions, most first (see the
# module docstring): the SDK's capability ({"form": {}, "url": {}}), the 2025-06-18
# shape ({}: form questions only), nothing (questions declined).
Offer: TypeAlias = Literal["full", "form", "none"]
LESS: dict[Offer, Offer] = {"full": "form", "form": "none"}


def refused_offer(exc: BaseException) -> bool:
    """Whether a handshake that failed was answered with an error, which offering
    less may mend (not a connection closed, not silence)."""
    inner = unwrap_group(exc)
    return isinstance(inner, MCPError) and inner.code not in (CONNECTION_CLOSED, REQUEST_TIMEOUT)


class OfferRefused(MCPLoadError):
    """A handshake offering the server's questions was answered with an error
    (``refused``): the connection tries again offering less."""

    def __init__(self, failed: MCPLoadError, refused: BaseException) -> None:
        super().__init__(str(failed))
        self.refused = refused


def offering_less(label: str, offer: Offer, exc: BaseException) -> Offer:
    """The offer to try after ``offer`` was refused with ``exc``; says so in the log."""
    less = LESS[offer]
    what = "form questions only" if less == "form" else "no questions (they are declined)"
    logger.warning(
        "MCP server %r refused the handshake offering to ask the user its questions "
        "(elicitation): %s; trying again offering %s",
        label, describe_failure(exc), what,
    )
    return less


# While a handler runs, the calls in flight are told this often that they are at work.
_TICK = 0.25


@dataclass(frozen=True)
class Elicitation:
    """What a server asks: ``message``; in form mode the ``schema`` of the answer
    (a flat object schema), in URL mode the ``url`` to open and its
    ``elicitation_id``. ``server`` is the server's label."""

    server: str
    message: str
    schema: Mapping[str, Any] | None = None
    url: str | None = None
    elicitation_id: str | None = None

    @property
    def mode(self) -> Literal["form", "url"]:
        return "url" if self.url is not None else "form"


@dataclass(frozen=True)
class ElicitAnswer:
    """The user's answer: ``accept`` (with ``content`` in form mode), ``decline``
    or ``cancel`` (dismissed without a choice)."""

    action: Literal["accept", "decline", "cancel"]
    content: Mapping[str, Value] | None = field(default=None)


OnElicit: TypeAlias = Callable[[Elicitation], ElicitAnswer | Awaitable[ElicitAnswer]]


def _question(label: str, params: ElicitRequestParams) -> Elicitation:
    if isinstance(params, ElicitRequestURLParams):
        return Elicitation(
            server=label, message=params.message, url=params.url,
            elicitation_id=params.elicitation_id,
        )
    return Elicitation(server=label, message=params.message, schema=dict(params.requested_schema))


def _is_async(on_elicit: OnElicit) -> bool:
    # a coroutine function, or an object whose __call__ is one
    return inspect.iscoroutinefunction(on_elicit) or inspect.iscoroutinefunction(
        type(on_elicit).__call__
    )


async def _answer(on_elicit: OnElicit, question: Elicitation) -> object:
    if _is_async(on_elicit):
        return await on_elicit(question)  # type: ignore[misc]
    answer = await anyio.to_thread.run_sync(on_elicit, question, abandon_on_cancel=True)
    if inspect.isawaitable(answer):  # a sync function handing back an awaitable
        return await answer
    return answer


async def _keep_going(keep_going: Callable[[], None]) -> None:
    while True:
        keep_going()
        await anyio.sleep(_TICK)


async def _asked(
    on_elicit: OnElicit,
    question: Elicitation,
    keep_going: Callable[[], None] | None,
) -> ElicitAnswer:
    """``on_elicit``'s answer to ``question``, calling ``keep_going`` every
    ``_TICK`` seconds meanwhile; "cancel" for a handler that fails."""
    label = question.server
    answer: object = None
    failed = False
    async with anyio.create_task_group() as waiting:
        if keep_going is not None:
            waiting.start_soon(_keep_going, keep_going)
        try:
            answer = await _answer(on_elicit, question)
        except Exception:
            logger.exception("MCP server %r: the on_elicit handler failed; answered cancel", label)
            failed = True
        waiting.cancel_scope.cancel()
    if failed:
        return ElicitAnswer("cancel")
    if not isinstance(answer, ElicitAnswer):
        logger.error(
            "MCP server %r: on_elicit returned %r, not an ElicitAnswer; answered cancel",
            label, answer,
        )
        return ElicitAnswer("cancel")
    return answer


def elicitation_callback(
    on_elicit: OnElicit, label: str, keep_going: Callable[[], None] | None = None
) -> ElicitationFnT:
    """The SDK's elicitation callback for one server: asks ``on_elicit``, calling
    ``keep_going`` every ``_TICK`` seconds meanwhile (the connection starts its
    calls' timeouts again with it: see the module docstring)."""

    async def callback(
        context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult | ErrorData:
        question = _question(label, params)
        answer = await _asked(on_elicit, question, keep_going)
        if answer.action != "accept" or question.mode == "url":
            return ElicitResult(action=answer.action)
        return ElicitResult(action="accept", content=dict(answer.content or {}))

    return callback


def pages_to_open(label: str, error: MCPError) -> list[Elicitation]:
    """The pages a server refused a call for until the user opens them (an error
    ``URL_ELICITATION_REQUIRED``, -32042, spec 2025-11-25); [] for another error."""
    if error.code != URL_ELICITATION_REQUIRED or not isinstance(error.data, dict):
        return []
    pages: list[Elicitation] = []
    for page in error.data.get("elicitations") or ():
        if isinstance(page, dict) and isinstance(page.get("url"), str):
            message = page.get("message")
            pages.append(Elicitation(
                server=label, message=message if isinstance(message, str) else "",
                url=page["url"], elicitation_id=page.get("elicitationId"),
            ))
    return pages


class PagesFirst(Exception):
    """A server refused a call until the user opens ``pages`` (-32042)."""

    def __init__(self, pages: list[Elicitation]) -> None:
        super().__init__("URL elicitation required")
        self.pages = pages


def _said(name: str, pages: list[Elicitation], why: str) -> MCPToolError:
    """A tool error naming the pages, for the model to pass on to the user."""
    listed = "; ".join(
        f"{page.message} <{page.url}>" if page.message else f"<{page.url}>" for page in pages
    )
    return MCPToolError(f"MCP tool {name!r} {why}: {listed}")


async def opening_pages(
    call: Callable[[], Awaitable[str]], on_elicit: OnElicit | None, name: str
) -> str:
    """``call()``; if the server refuses it until the user opens pages
    (``PagesFirst``), ask ``on_elicit`` for each and, once every one is
    accepted, ``call()`` once more (the server did not run it). Otherwise an
    ``MCPToolError`` naming the pages. The agent's timeout for the call starts
    again while the user answers, as for a question mid-call."""
    try:
        return await call()
    except PagesFirst as refused:
        pages = refused.pages
    if on_elicit is None:
        raise _said(name, pages, "needs the user to open a page first, then to call it again")
    clock = call_clock()  # in the call's own task: see streamtools.runtime.progress
    for page in pages:
        answer = await _asked(on_elicit, page, None if clock is None else clock.progressed)
        if answer.action != "accept":
            raise _said(name, pages, f"was not run: the user chose {answer.action} for the page")
    try:
        return await call()
    except PagesFirst as again:
        raise _said(name, again.pages, "still needs the user to open a page") from None


# ---- answering at a terminal -------------------------------------------------------------


def _read(prompt: str) -> str | None:
    """A line from the user (``None`` at end of input)."""
    print(prompt, end="", file=sys.stderr, flush=True)
    line = sys.stdin.readline()
    return None if not line else line.rstrip("\n")


def _convert(text: str, spec: Mapping[str, Any]) -> Value:
    """``text`` as the property ``spec`` asks; ``ValueError`` saying what is expected."""
    kind = spec.get("type")
    choices = spec.get("enum") or [
        option.get("const") for option in spec.get("oneOf", ()) if isinstance(option, dict)
    ]
    if kind == "array":
        items = spec.get("items") or {}
        allowed = items.get("enum") or [
            option.get("const") for option in items.get("anyOf", ()) if isinstance(option, dict)
        ]
        picked = [part.strip() for part in text.split(",") if part.strip()]
        wrong = [part for part in picked if allowed and part not in allowed]
        if wrong:
            raise ValueError(f"choose among {', '.join(map(str, allowed))}")
        return picked
    if choices and text not in choices:
        raise ValueError(f"choose one of {', '.join(map(str, choices))}")
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            raise ValueError("a whole number") from None
    if kind == "number":
        try:
            return float(text)
        except ValueError:
            raise ValueError("a number") from None
    if kind == "boolean":
        lowered = text.strip().lower()
        if lowered in ("y", "yes", "true", "1"):
            return True
        if lowered in ("n", "no", "false", "0"):
            return False
        raise ValueError("yes or no")
    return text


def ask_in_terminal(question: Elicitation) -> ElicitAnswer:
    """An ``on_elicit`` handler that asks at the terminal (stderr and stdin):
    the message, whether to answer, then each field of the form (Enter keeps a
    default or skips an optional field), or whether the page was opened. End
    of input cancels. ``streamtools chat`` uses it when stdin is a terminal."""
    print(f"\nMCP server {question.server!r} asks: {question.message}", file=sys.stderr)
    if question.url is not None:
        print(f"  open: {question.url}", file=sys.stderr)
        reply = _read("  Open it and go on? [y]es / [n]o (decline) / [c]ancel: ")
        if reply is None or reply.strip().lower().startswith("c"):
            return ElicitAnswer("cancel")
        return ElicitAnswer("accept" if reply.strip().lower().startswith("y") else "decline")
    reply = _read("  Answer? [Y]es / [n]o (decline) / [c]ancel: ")
    if reply is None or reply.strip().lower().startswith("c"):
        return ElicitAnswer("cancel")
    if reply.strip().lower().startswith("n"):
        return ElicitAnswer("decline")
    schema = question.schema or {}
    required = set(schema.get("required", ()))
    content: dict[str, Value] = {}
    for name, spec in (schema.get("properties") or {}).items():
        spec = spec if isinstance(spec, dict) else {}
        title = spec.get("title") or name
        hint = f" ({spec['description']})" if spec.get("description") else ""
        default = spec.get("default")
        shown = f" [{default}]" if default is not None else ("" if name in required else " [skip]")
        while True:
            text = _read(f"  {title}{hint}{shown}: ")
            if text is None:
                return ElicitAnswer("cancel")
            if not text.strip():
                if default is not None:
                    content[name] = default
                    break
                if name not in required:
                    break
                print("  (required)", file=sys.stderr)
                continue
            try:
                content[name] = _convert(text.strip(), spec)
                break
            except ValueError as exc:
                print(f"  ({exc})", file=sys.stderr)
    return ElicitAnswer("accept", content)
