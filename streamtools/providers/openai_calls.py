"""OpenAI-compatible tool-call deltas as ``CallChunk``: which call each delta belongs to.

Theory of operation
-------------------
``OpenAIChat`` reads ``delta.tool_calls`` fragments; ``ToolCallDeltas`` decides
which call of the reply each one continues or starts (servers reuse index 0
for parallel calls, with or without ids, repeat the name with every delta, or
stream it in pieces), numbers the calls in the order they began, and says when
each is complete (a ``done`` chunk), so that it can run while the next one is
still being written.

Interleaving. Most servers stream parallel calls one after another, but some
gateways interleave them (a fragment of index 0, then of index 1, then of
index 0 again). The events a call makes must still come one call after
another (``CallStart``, its ``ArgsDelta``, its ``CallEnd``; consumers such as
the console, the Anthropic and Responses wires of the proxy follow one call at
a time), so the chunks of a call that is not the one being streamed (the
front of the queue) are held and released, in order, when the calls before it
are complete. A call is complete, when a delta for another call comes, if its
argument text is one whole JSON value (nothing but blanks can follow it);
otherwise it stays open (the later calls are held) until its arguments become
whole, or the stream ends (see ``finish`` and ``rest``). So a server that
streams calls one after another sees no difference, except that a call whose
arguments are not whole when the next begins (a call with no argument text,
or broken JSON) completes at the end of the stream instead; argument text is
never lost or moved between calls.
Before, a fragment for a call left earlier went to a call already complete
(it may have been running) and became a ``malformed`` call error.

Resent arguments. Some servers send a call's argument text so far with
every delta rather than what is new (DeepSeek's and Baidu Qianfan's
cumulative mode, gateways that map another API's stream), or the whole
arguments once more at the end (GPT-5 through some gateways): appended,
they made ``{"a{"a": 1}``, and the call failed as invalid JSON (its model
told to fix JSON it had written right). A delta whose text begins with all
of the call's text so far is taken as such a resend, and only what follows
that text is the call's (nothing, for a repeat): the chunks stay
append-only. Incremental text cannot begin so (the JSON would repeat its own
start right after it), except where a value may begin (after ``:``, ``[``
or ``,``: ``{"node":`` then ``{"node": 1}}``); there it is read as a resend
only once the server has been seen resending, or once the text so far is a
whole value, after which nothing but blanks may follow. The check costs
nothing for the small pieces servers stream: it looks only at a delta at
least as long as the text so far. Some gateways send the whole arguments
again written anew (re-serialized: elizaOS/eliza#16973's consolidated
chunk), which does not begin with the text so far: a delta
that comes once that text is a whole value and is itself the same JSON
value is a resend too, and adds nothing.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import msgspec

from streamtools.model import CallChunk
from streamtools.parser.jsonscan import ValueScanner
from streamtools.providers.openrouter import DETAILS, ReasoningDetails
from streamtools.providers.surrogates import SurrogatePairs, arguments

__all__ = ["ToolCallDeltas", "ToolCallDelta"]


class Function(msgspec.Struct):
    name: str | None = None
    arguments: str | dict[str, Any] | None = None


class ToolCallDelta(msgspec.Struct):
    index: int | None = 0  # null (mlx-openai-server, some gateways) is read as missing
    id: str | None = None
    function: Function | None = None
    extra_content: dict[str, Any] | None = None  # Gemini: the call's thought signature


_BLANKS = " \t\r\n"  # JSON's whitespace
# finishes after which no open call runs: a broken stream, a filter, and a call the
# API could not read or refused (``openai_finish``: Gemini's MALFORMED_FUNCTION_CALL
# and UNEXPECTED_TOOL_CALL)
_BROKEN = frozenset({"error", "content_filter", "malformed_call", "unexpected_call"})


def _blank(name: str | None, raw: str | None, sent_id: str | None, call: _Call) -> bool:
    """Whether a delta for ``call`` brings nothing but blanks (JSON's whitespace,
    which may follow a whole value): no other name (MiniMax repeats the call's
    own with every delta), no other id, text all blanks."""
    if name not in (None, call.name) or not raw or sent_id not in (None, call.id):
        return False
    return not raw.strip(_BLANKS)


class _Whole:
    """Whether a call's argument text so far is one whole JSON value (then
    only blanks). The pieces are kept and scanned when asked, each once:
    ``ValueScanner`` goes on from where it stopped, and the short tail it
    leaves (an escape, number or literal cut at the end of a piece) is offered
    again with the next one. A server that never makes ``ToolCallDeltas`` ask (ids
    on every call, no repeated names) costs a list append per piece."""

    __slots__ = ("_scan", "_pieces", "_tail", "_after")

    def __init__(self) -> None:
        self._scan = ValueScanner()
        self._pieces: list[str] = []  # not scanned yet
        self._tail = ""
        self._after = False  # text other than blanks after the value

    def feed(self, text: str) -> None:
        self._pieces.append(text)

    @property
    def whole(self) -> bool:
        scan = self._scan
        for text in self._pieces:
            if scan.done:
                self._after = self._after or bool(text.strip(_BLANKS))
            elif scan.error is None:
                piece = self._tail + text
                end = scan.feed(piece, 0)
                self._tail = "" if scan.done else piece[end:]
                self._after = scan.done and bool(piece[end:].strip(_BLANKS))
        self._pieces.clear()
        return scan.done and not self._after


def _same_value(call: _Call, raw: str) -> bool:
    """Whether ``raw`` is one whole JSON value equal to the call's whole text so far."""
    try:
        again = msgspec.json.decode(raw)
        return bool(again == msgspec.json.decode("".join(call.sent)))
    except (msgspec.DecodeError, RecursionError):
        return False


class _Call:
    """One call of the reply as the server streams it (see ``ToolCallDeltas``)."""

    __slots__ = (
        "number", "index", "id", "name", "named", "args", "whole", "again", "ended", "details",
        "held", "queued", "sent", "length", "cumulative",
    )

    def __init__(self, number: int, index: int, call_id: str | None) -> None:
        self.number = number  # its ``CallChunk.index``: its place among the reply's calls
        self.index = index  # the server's index
        self.id = call_id
        self.name: str | None = None  # as far as it came
        self.named = False  # the name went out
        self.args = False  # argument text came
        self.whole = _Whole()
        self.again = False  # its name came again, alone, once its arguments were whole
        self.ended = False  # a ``done`` chunk went out
        self.details: list[dict[str, Any]] = []  # OpenRouter's, before it (``ReasoningDetails``)
        self.held: list[CallChunk] = []  # its chunks, while an earlier call is still open
        self.queued = True  # not all its chunks have gone out yet (``ToolCallDeltas``)
        self.sent: list[str] = []  # its argument text as the server sent it (``_new_text``)
        self.length = 0  # of that text
        self.cumulative = False  # the server sends all of it so far with every delta


class ToolCallDeltas:
    """The reply's tool-call deltas as ``CallChunk``: which call each belongs to.

    A delta starts another call when it names an ``index`` not seen yet, or a
    new ``id`` together with a name, or, on the same index with no new id
    (servers that put every call on index 0 and send no ids), a name once the
    call has arguments: a name other than the call's, or, for a call without
    an id, the call's own name followed by more arguments once its arguments
    are a whole JSON object (nothing but blanks can follow a whole value, so
    they are another call of the same tool). The call's own name alone is a
    repeat (MiniMax sends the name with every delta) and changes nothing; so a
    second call of a tool with empty argument text, on the same index with no
    id, cannot be told from a repeat and is not seen. A name that comes before
    any arguments and is not a repeat continues the name (Gemini streams a
    long name in pieces), so the name goes out, whole, with the call's first
    arguments (or its ``done``, or the end of the stream): the ``CallStart``
    waits for them. A delta for an index seen before goes to that index's
    latest call (interleaved calls: see the module docstring), which, if it
    has ended, takes nothing more (``NativeCalls`` reports a late, malformed
    part), except a name when it ended without one: that starts another call,
    as ``NativeCalls`` reads it. Each call gets its own ``CallChunk.index``, counted from 0, so
    ``NativeCalls`` needs no server index to tell calls apart.

    A delta on an index not seen yet that names no tool, brings no id but the
    latest call's and brings argument text, while that call's arguments are
    unfinished, continues that call (``_strayed``): DeepSeek V4 behind ollama.com's endpoint sends a
    call's head (id, name, the start of its arguments) on the index of the call
    before it and the rest on an index of its own. That rest began a nameless
    call (a ``CallError``), and the call ran with what its head held, ``{}``.
    A new call's first delta names its tool, brings an id or has no text, so
    no well-formed stream is read otherwise. The same holds on an index seen
    before whose call's arguments are already a whole value (nothing can follow
    it), for text that is not that call's sent again: SGLang numbers a call's
    first delta (id and name) by its tool's place in the request's ``tools``
    and the rest by the call's place in the reply (sgl-project/sglang#6310,
    open; its Gemma 4 parser numbers every delta by the tool's place,
    sgl-project/sglang#38198), so a second call's rest came on the index of
    the first call, complete by then: it was a late, malformed part, and the
    second call ran with ``{}``.

    A delta on an index not seen yet that is an earlier call sent again, whole
    (that call's id, its name or none, and its whole argument text), is
    nothing more of it (``_repeat``): LocalAI streams a call, then the same
    call on another index (mudler/LocalAI#9722), and the tool ran twice. A
    delta with that id and other text, or none yet, begins a call of its own:
    DeepSeek and Zhipu's GLM give one id to distinct parallel calls
    (HKUDS/nanobot#3943; ``NativeCalls`` gives the later ones ids of its own).
    """

    def __init__(self, pairs: SurrogatePairs[Any]) -> None:
        self._pairs = pairs
        self._by_index: dict[int, _Call] = {}  # server index -> its latest call
        self._count = 0
        self._last: _Call | None = None  # the call begun last (``_strayed``)
        self._by_id: dict[str, _Call] = {}  # the first call with each id (``_repeat``)
        # the calls whose chunks have not all gone out, in order: the first is streamed
        self._queue: deque[_Call] = deque()
        self.details = ReasoningDetails()

    def _extra(self, call: _Call, content: dict[str, Any] | None) -> dict[str, Any] | None:
        """A chunk's ``extra``: the call's ``extra_content``, and the reasoning
        details so far when new ones came (all of the call's: a chunk's extra
        is merged over the call's key by key)."""
        if self.details.pending:
            call.details.extend(self.details.take())
            return {**(content or {}), DETAILS: list(call.details)}
        return content

    def feed(self, tc: ToolCallDelta) -> list[CallChunk]:
        """The chunks of one tool-call delta, with those of earlier calls it completes
        or releases (see the module docstring)."""
        out: list[CallChunk] = []
        fn = tc.function
        name = (fn.name or None) if fn is not None else None
        raw = fn.arguments if fn is not None else None
        if isinstance(raw, dict):
            raw = msgspec.json.encode(raw).decode()
        sent_id = tc.id or None
        index = tc.index or 0  # a null index is a missing one: index 0
        call = self._by_index.get(index)
        if call is None and sent_id is not None and self._repeat(sent_id, name, raw):
            return out  # an earlier call sent again, whole (see the class docstring)
        if name is None and raw and self._last is not None and call is not self._last:
            if call is None:
                call = self._strayed(self._last, index, sent_id)
            elif self._full(call, raw):
                call = self._strayed(self._last, index, sent_id) or call
        if self._queue and call is not self._queue[0]:
            self._complete(out, call)  # a delta for a later call: the ones before, if whole
        if call is not None and call.ended and _blank(name, raw, sent_id, call):
            # blanks after a complete call's arguments: nothing of another call, but
            # sent (the call's text resent whole afterwards has them: ``_new_text``)
            self._new_text(call, raw or "")
            return out
        inherited = None  # the name a new call takes from a repeat (see ``_another``)
        if call is not None:
            new_id = bool(sent_id and call.id and sent_id != call.id)
            if new_id and name is None:  # the same call under a changed id (Poolside)
                sent_id = None
            elif new_id or self._another(call, name, raw or ""):
                inherited = call.name if call.again and name is None else None
                if not call.ended:
                    self._close(call, True, out)
                call = None
        if call is None:
            call = _Call(self._count, index, sent_id)
            call.name = inherited
            if sent_id is not None:
                self._by_id.setdefault(sent_id, call)
            self._count += 1
            self._by_index[index] = call
            self._last = call
            self._queue.append(call)
        elif sent_id and call.id is None:
            call.id = sent_id
            self._by_id.setdefault(sent_id, call)
        if name is not None and name != call.name and not call.named:
            call.name = (call.name or "") + name
        raw = self._new_text(call, raw) if raw else ""
        args = self._pairs.join(arguments(call.number), raw) if raw else ""
        if args:
            call.args = True
            call.whole.feed(args)
        chunk = CallChunk(
            index=call.number,
            id=sent_id,
            name=self._name(call) if call.args else None,
            arguments=args,
            extra=self._extra(call, tc.extra_content or None),
        )
        self._send(call, chunk, out)
        if len(self._queue) > 1:  # others wait: the streamed call, once whole, is complete
            self._complete(out, self._queue[-1])
        return out

    def _strayed(self, last: _Call, index: int, sent_id: str | None) -> _Call | None:
        """``last`` (the call begun last), now also the call of ``index``, for a
        nameless delta with argument text on an index not seen yet that brings
        no other id, while ``last``'s arguments are unfinished; else None (see
        the class docstring). A delta with no text there begins the call whose
        name and id come next, as it did."""
        if last.ended or (sent_id is not None and sent_id != last.id) or last.whole.whole:
            return None
        self._by_index[index] = last
        return last

    def _repeat(self, sent_id: str, name: str | None, raw: str | None) -> bool:
        """Whether a delta on an index not seen yet is the call with ``sent_id``
        sent again, whole (see the class docstring)."""
        call = self._by_id.get(sent_id)
        if call is None or name not in (None, call.name) or not call.whole.whole:
            return False
        text = (raw or "").strip(_BLANKS)
        return bool(text) and text == "".join(call.sent).strip(_BLANKS)

    @staticmethod
    def _full(call: _Call, raw: str) -> bool:
        """Whether ``call`` can take no more argument text: its arguments are a
        whole value, and ``raw`` is not the server sending them again (see the
        module docstring) nor blanks (which may follow a whole value), so it is
        another call's (``_strayed``)."""
        if not raw.strip(_BLANKS) or not call.whole.whole:
            return False
        return not raw.startswith("".join(call.sent))

    def finish(self, reason: str) -> list[CallChunk]:
        """At a finish reason (OpenAI's word for it). A call whose arguments are
        a whole value is complete (``done``), as it would be when the next call
        starts, unless the reason says the stream broke (``error``,
        ``content_filter``). A call whose arguments are not whole ends without
        ``done`` if the reason may have cut it (those two, and ``length``:
        ``NativeCalls.end`` makes it ``unterminated``), and is otherwise left
        open, the chunks of the calls after it held, until the stream ends
        (``rest``): some gateways put a finish reason on every chunk (one-api
        and new-api in front of Gemini), and the first one ended the call being
        written, which ran with ``{}``."""
        broken, cut = reason in _BROKEN, reason in _BROKEN or reason == "length"
        out: list[CallChunk] = []
        for call in list(self._queue):
            if call.ended:
                continue
            if not broken and call.whole.whole:
                self._close(call, True, out)
            elif cut:
                self._close(call, False, out)
        return out

    def rest(self, *, complete: bool = False) -> list[CallChunk]:
        """At the end of the stream, however it ended: the chunks still held,
        and the name still held for each call not complete, so that
        ``NativeCalls`` names the call it ends. With ``complete`` (the stream
        ended as the model chose), every call still open is ended, ``done``, in
        order: a call left open would end only in ``NativeCalls.end``, after
        the later calls had started."""
        out: list[CallChunk] = []
        if complete:
            for call in list(self._queue):
                if not call.ended:
                    self._close(call, True, out)
        while self._queue:
            call = self._queue.popleft()
            call.queued = False
            out.extend(call.held)
            call.held.clear()
            if call.ended:
                continue
            name, extra = self._name(call), self._extra(call, None)  # and details still due
            if name is not None or extra is not None:
                out.append(CallChunk(index=call.number, name=name, extra=extra))
        return out

    def _complete(self, out: list[CallChunk], until: _Call | None) -> None:
        """Complete the streamed call, then the next, while its arguments are
        whole and it is not ``until`` (a call a delta came for; None: a new one)."""
        queue = self._queue
        while queue and queue[0] is not until and queue[0].whole.whole:
            self._close(queue[0], True, out)

    def _send(self, call: _Call, chunk: CallChunk, out: list[CallChunk]) -> None:
        """``chunk`` out now if ``call`` is the one streamed, else held for it."""
        queue = self._queue
        if not call.queued:  # all of it went out: a late part, after the calls still open
            if not queue:
                out.append(chunk)
                return
            call.queued = True
            queue.append(call)
        if call is queue[0]:
            out.append(chunk)
        else:
            call.held.append(chunk)

    def _close(self, call: _Call, whole: bool, out: list[CallChunk]) -> None:
        """The chunk that ends ``call``: ``done`` if ``whole``; then, if it was
        the streamed call, the chunks held for the calls after it."""
        call.ended = whole
        lost = self._pairs.close(arguments(call.number))
        chunk = CallChunk(
            index=call.number,
            name=self._name(call),
            arguments=lost,
            done=whole,
            extra=self._extra(call, None),
        )
        self._send(call, chunk, out)
        queue = self._queue
        while queue and queue[0].ended:
            queue.popleft().queued = False
            if queue:
                out.extend(queue[0].held)
                queue[0].held.clear()

    @staticmethod
    def _new_text(call: _Call, raw: str) -> str:
        """What of a delta's argument text ``raw`` the call has not had yet (see
        the module docstring): past the text so far when ``raw`` begins with all
        of it and so is a resend, not more of it; nothing when the text so far
        is a whole value and ``raw`` is that value written anew."""
        if call.length and raw.strip(_BLANKS) and call.whole.whole and _same_value(call, raw):
            return ""
        if call.length and len(raw) >= call.length:
            so_far = "".join(call.sent)
            call.sent[:] = [so_far]
            if raw.startswith(so_far) and (
                call.cumulative
                or call.whole.whole
                or not so_far.rstrip(_BLANKS).endswith((":", "[", ","))
            ):
                call.cumulative = True
                raw = raw[call.length :]
        if raw:
            call.sent.append(raw)
            call.length += len(raw)
        return raw

    @staticmethod
    def _name(call: _Call) -> str | None:
        """The call's name if it has not gone out yet (and now does)."""
        if call.named or call.name is None:
            return None
        call.named = True
        return call.name

    @staticmethod
    def _another(call: _Call, name: str | None, raw: str) -> bool:
        """Whether a delta with ``name`` and argument text ``raw`` and no new id
        starts another call on ``call``'s index (see the class docstring)."""
        if name is None and not call.again:
            return False  # more of the call's arguments, or a delta with nothing
        if call.ended and call.name is None:
            return True  # a name for a call that ended without one: no repeat, another call
        if name is not None and call.name is not None and name != call.name and call.args:
            return True
        if call.id is not None or not call.whole.whole:
            return False  # a server that sends ids tells calls of one tool apart by them
        if raw.strip(_BLANKS) and (name is not None or call.again):
            return True
        if name is not None:
            call.again = True
        return False
