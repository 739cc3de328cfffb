"""The pieces every dialect shares: dialect syntax as data, call bodies, calls.

Theory of operation
-------------------
The core ``Parser`` scans visible text for the markers a dialect declares in its
``DialectSyntax``. When one matches, it asks the dialect for a ``CallBody`` (a
small state machine for that dialect's call syntax) and hands it every further
character until the body reports ``DONE`` (the call ended; the core resumes text
mode just after it) or ``REJECTED`` (what looked like a call is prose after all;
the core emits the body's text and rescans it, which is bounded because a body
rejects only inside a short decision window).

``CallBody.feed(s, pos, out)`` consumes ``s[pos:k]`` and returns ``k``. If the
body is still running and ``k < len(s)``, the core holds ``s[k:]`` and prepends
it to the next delta: that is how a body waits for a partial escape, literal or
closing marker without copying state of its own. Everything a body consumes is
appended to its ``raw`` pieces, so a call's ``raw`` is exactly the text the
model wrote for it (conservation).

``Call`` turns the parts a body finds (a name, argument JSON text) into events:
``CallStart`` once the name is known and accepted, ``ArgsDelta`` for each piece
of argument text, and at the end ``CallEnd`` or ``CallError``. Arguments are
always decoded from the concatenation of the pieces that were emitted, so the
append-only invariant holds by construction. A call whose tool is unknown gets
no ``CallStart``: its first and only event is the ``CallError``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Self

import msgspec

from streamtools.errors import describe_json_error
from streamtools.events import (
    ArgsDelta,
    CallEnd,
    CallError,
    CallErrorReason,
    CallStart,
    ParserEvent,
)
from streamtools.parser.catalog import ToolCatalog, tool_named, unknown_tool_message

__all__ = [
    "DONE", "NEVER_HOLDS", "NO_HOLDS", "PROVIDER_STOP", "REJECTED", "RUNNING", "SPECIAL_TOKEN",
    "SPECIAL_TOKEN_START", "XML_ARGS", "Call", "CallBody", "CallContext", "DialectSyntax",
    "prose_line",
]

RUNNING, DONE, REJECTED = 0, 1, 2
# Finish reasons that say the provider stopped the text on purpose (a stop
# sequence, possibly the dialect's closing marker): only these complete a call
# whose closing marker is missing. ``None`` (a stream that broke before its
# finish) and ``length`` do not.
PROVIDER_STOP = frozenset({"stop", "stop_sequence"})
# a chat template's special token as text (``<|im_end|>``, ``<|eot_id|>``, Gemma 4's
# ``<turn|>``, DeepSeek's ``<｜end▁of▁sentence｜>``): a server that does not strip
# them shows the one a model ended its turn with; where a call's closing marker
# is due it is layout (``am_xml`` and the JSON dialects). The shape is the one
# ``streamtools.prompts.special_tokens`` defuses (it imports this pattern): a
# bar, ASCII or full-width, on one side of the name or both; a name of 1 to 64
# characters other than whitespace, angle and square brackets and the bars.
_BAR = "|\uff5c"
_NAME = rf"[^\s<>\[\]{_BAR}]"
SPECIAL_TOKEN = re.compile(rf"<[{_BAR}]{_NAME}{{1,64}}[{_BAR}]?>|<{_NAME}{{1,64}}[{_BAR}]>")
# one still arriving (at most 67 characters held, where the call would fail otherwise)
SPECIAL_TOKEN_START = re.compile(rf"<[{_BAR}]?{_NAME}{{0,64}}[{_BAR}]?\Z")
Out = list[ParserEvent]
NO_HOLDS: frozenset[str] = frozenset()  # ``CallBody.holds`` where nothing is held whole
# ``CallBody.holds`` of a body that never holds by set: "in" it hashes nothing
NEVER_HOLDS: tuple[()] = ()
Holds = frozenset[str] | tuple[()]


class CallContext:
    """Per-parser call bookkeeping: the catalog and the call counter."""

    __slots__ = ("catalog", "checks", "count", "id_prefix", "spare")

    def __init__(self, catalog: ToolCatalog, id_prefix: str, *, checks: bool) -> None:
        self.catalog = catalog
        self.id_prefix = id_prefix
        self.count = 0
        self.checks = checks
        # the body of the call that ended last, which the core let go of: a dialect
        # opening its next call may renew it instead of building a new one (see
        # ``CallBody.renews``); the core hands over only a body it no longer reads
        self.spare: CallBody | None = None

    def allocate(self) -> tuple[int, str]:
        n = self.count
        self.count = n + 1
        return n, f"{self.id_prefix}{n}"


XML_ARGS = 7  # ``CallBody.streaming`` in an ``am_xml`` string parameter (ARGS and co.: envelope)


class CallBody:
    """Base of the per-dialect call state machines (see the module docstring)."""

    def __init__(self, ctx: CallContext, marker: str) -> None:
        self.ctx = ctx
        self.status = RUNNING
        self.raw: list[str] = [marker]
        # characters in ``raw``, for the core's hold-back and ``max_buffer`` checks; the
        # core's lane (decided calls only) counts its pieces only under a ``max_buffer``,
        # since nothing else reads the size of a decided call
        self.size = len(marker)
        self.undecided = False  # True while the text may still turn out to be prose
        self.streaming = 0  # (an instance attribute: the core reads it on every delta)
        # Buffers the body holds whole in its current state, whatever else is true
        # (a JSON envelope's head or a closing marker still arriving, spelled the
        # usual way): the core holds one of these by one set lookup, without
        # calling ``fast``. Never one while ``streaming``: the lane comes first.
        self.holds: Holds = NEVER_HOLDS

    # The body can be made a fresh one by ``renew`` (a JSON body: see ``jsoncall``):
    # the core hands it to ``CallContext.spare`` when the call is over. Building a
    # body is four objects and their lists, a sizable part of what a short call costs.
    renews = False

    def renew(self, marker: str) -> None:
        """Be the body ``__init__(ctx, marker)`` makes, reusing this one's objects
        (the body's call is over and nothing reads it any more)."""
        self.status = RUNNING
        self.raw = [marker]
        self.size = len(marker)
        self.undecided = False
        self.streaming = 0
        self.holds = NEVER_HOLDS
        self.rest = ""

    @classmethod
    def spare(cls, ctx: CallContext) -> Self | None:
        """The context's spare body if it is one of this class, taken (the
        caller renews it), else None (the caller builds one)."""
        body = ctx.spare
        if body is not None and body.__class__ is cls:
            ctx.spare = None
            return body
        return None

    def record(self, s: str, start: int, stop: int) -> None:
        if stop > start:
            self.raw.append(s[start:stop])
            self.size += stop - start

    def layout(self, s: str, i: int) -> int:
        """Record the whitespace at ``s[i:]`` as the call's raw text: where it ends."""
        j, n = i, len(s)
        while j < n and s[j] in " \t\r\n":
            j += 1
        self.record(s, i, j)
        return j

    def raw_text(self) -> str:
        text = "".join(self.raw)
        self.raw = [text]
        return text

    def feed(self, s: str, pos: int, out: Out) -> int:
        raise NotImplementedError

    # what the last successful ``fast`` left for the core to hold (a cut escape)
    rest = ""
    # What the body is streaming, for the core's lane (``Parser.feed``): 0, or the
    # kind of string the next delta may be the plain text of (a JSON body: the
    # envelope's role ARGS, TEXT or REASONING; ``am_xml``: XML_ARGS). Set only
    # where the body's own state makes it true: in a started call's argument
    # string, or in a text or reasoning member past its first piece.
    streaming: int

    def fast(self, delta: str) -> list[ParserEvent] | None:
        """Events for ``delta`` if it is plain content the body can take (all of
        it but ``rest``) in its current state, else None for the full machine."""
        return None

    def end(self, tail: str, finish_reason: str, out: Out) -> str | None:
        """The stream ended inside this body with ``tail`` unconsumed.

        Emit the call's last event and return None, or return the whole text of a
        rejected body for the core to rescan as text, or, with ``status`` DONE, the
        text after the call's end (``tail`` or part of it), which the core scans
        as text from its first character.
        """
        raise NotImplementedError


class Call:
    """One call being assembled: emits CallStart/ArgsDelta/CallEnd/CallError."""

    __slots__ = ("args", "ctx", "id", "index", "meta", "name", "started")

    def __init__(self, ctx: CallContext, *, meta: bool = False) -> None:
        self.ctx = ctx
        self.meta = meta  # a dialect-level request (am:request_tools): no catalog checks
        self.name: str | None = None
        self.index = -1
        self.id = ""
        self.args: list[str] = []
        self.started = False

    def renew(self) -> None:
        """Be the ``Call(ctx)`` of a new call, reusing this object."""
        self.name = None
        self.index = -1
        self.id = ""
        self.args = []
        self.started = False

    def named(self, name: str, out: Out) -> None:
        """The tool name is known: start the call if the tool exists (as
        ``functions.NAME`` too: ``catalog.tool_named``, looked up only for a name
        the catalog does not have, and then the call's name)."""
        self.name = name
        if self.meta or name in self.ctx.catalog or (name := self._namespaced(name)):
            self.index, self.id = self.ctx.allocate()
            self.started = True
            out.append(CallStart(index=self.index, id=self.id, name=name))
            if self.args:
                out.append(ArgsDelta(index=self.index, id=self.id, delta="".join(self.args)))

    def _namespaced(self, name: str) -> str:
        """The tool ``name`` calls in ``functions.NAME``, now the call's name, or ""."""
        found = tool_named(self.ctx.catalog, name)
        if found is None:
            return ""
        self.name = found
        return found

    def add_args(self, text: str, out: Out) -> None:
        if text:
            self.args.append(text)
            if self.started:
                out.append(ArgsDelta(index=self.index, id=self.id, delta=text))

    def fail(self, raw: str, reason: CallErrorReason, message: str, out: Out) -> None:
        if self.index < 0:
            self.index, self.id = self.ctx.allocate()
        out.append(
            CallError(
                index=self.index, id=self.id, name=self.name, raw=raw, reason=reason,
                message=message,
            )
        )

    def complete(self, raw: str, out: Out, *, example: str = "") -> None:
        """The call's markup closed: validate and emit CallEnd or CallError."""
        name = self.name
        if name is None:
            self.fail(raw, "malformed", f"The call has no tool name.{example}", out)
            return
        if not self.started:
            self.fail(raw, "unknown_tool", unknown_tool_message(self.ctx.catalog, name), out)
            return
        if not self.args:
            self.add_args("{}", out)
        text = "".join(self.args)
        try:
            arguments: Any = msgspec.json.decode(text)
        except (msgspec.DecodeError, RecursionError, UnicodeEncodeError) as exc:
            # the model's text to fix, not an exception out of ``feed``: nested deeper
            # than the decoder goes, or a lone surrogate half (``am_xml``'s JSON body;
            # the JSON dialects' scanner refuses one where it stands)
            self.fail(
                raw, "invalid_json",
                f"The arguments of {name} are not valid JSON ({describe_json_error(exc)}). "
                f"Write them as one JSON object with double-quoted keys and strings.{example}",
                out,
            )
            return
        if not isinstance(arguments, dict):
            self.fail(
                raw, "malformed",
                f"The arguments of {name} must be a JSON object of parameter names to "
                f"values, not {type(arguments).__name__}.{example}", out,
            )
            return
        if self.ctx.checks and not self.meta:
            problem = self.ctx.catalog.check_arguments(name, arguments)
            if problem is not None:
                if name not in problem:
                    problem = f"Invalid arguments for {name}: {problem}"
                message = f"{problem} Fix the arguments and call {name} again."
                self.fail(raw, "invalid_arguments", message, out)
                return
        out.append(CallEnd(index=self.index, id=self.id, name=name, arguments=arguments, raw=raw))


def prose_line(raw: list[str], s: str, start: int, i: int) -> bool:
    """Whether ``s[i]`` begins prose on a line of its own right after a call's
    complete markup where its closing marker was due: a letter or digit, and a
    line break in the layout before it (in ``s[start:i]``, then back in the
    call's ``raw``). Such a call is complete there and the prose is text (the
    model left the closing marker out and went on writing: ``jsoncall``'s
    SUFFIX, ``hermes_xml``'s AFTER). Called only where the call would fail."""
    if not s[i].isalnum():
        return False
    j = i
    while j > start:
        j -= 1
        if s[j] in "\r\n":
            return True
        if s[j] not in " \t":
            return False
    for piece in reversed(raw):
        text = piece.rstrip(" \t")
        if text:
            return text[-1] in "\r\n"
    return False


@dataclass(frozen=True)
class DialectSyntax:
    """A dialect's parse side as data: the core's transition table for text mode.

    ``markers``: strings that may open a call in visible text; ``open(marker, ctx)``
    returns the body that parses the call, or None when the marker is plain text
    here (``quiet_markers`` too, read only where ``TextModes._quiet`` says
``<think>`` may open). ``line_start``: markers count only at the start of a line. ``once``: only
    the first call of a reply is parsed (``json_object``). ``drop_outer_whitespace``:
    whitespace-only text around calls is not visible text (``json_object``).
    """

    name: str
    stop_marker: str | None
    markers: tuple[str, ...]
    open: Callable[[str, CallContext], CallBody | None]
    line_start: bool = False
    once: bool = False
    drop_outer_whitespace: bool = False
    hold_bound: int | None = None  # longest text hold-back when larger than markers imply
    # markers read only where ``<think>`` may open reasoning (``TextModes._quiet``),
    # whose start character then costs no delta of prose a test (``mistral_call``)
    quiet_markers: tuple[str, ...] = ()
