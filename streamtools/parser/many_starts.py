"""``feed`` for a parser with several marker-start characters, and the small steps
every entry point shares.

``core.Parser`` installs one of three entry points per instance (see its
``__init__``): ``feed`` and ``_feed_two`` test a delta for one or two
marker-start characters first; ``_feed_many``, here, is for a parser with two or
more besides "<" (``json_object``'s ``{`` and fence, or stop strings), whose fast
path is a loop in ``_feed``. The entry points are copies of one another by design:
a shared helper would cost a Python call on every delta inside a call. The lane
and body steps below are the ones all three call off their hot paths.
"""

from __future__ import annotations

from streamtools.errors import SizeLimitExceeded
from streamtools.events import ArgsDelta, ParserEvent, ReasoningDelta, TextDelta
from streamtools.parser.calls import XML_ARGS, Call, CallBody
from streamtools.parser.envelope import ARGS
from streamtools.parser.envelope import TEXT as TEXT_ROLE
from streamtools.parser.express_xml import ExpressXml

__all__ = ["ManyStarts"]


class ManyStarts(ExpressXml):
    """A base of ``core.Parser``: the entry point for many start characters."""

    _closed: str | None
    max_held: int

    def _feed_many(self, delta: str) -> list[ParserEvent]:
        """``feed`` for a parser with two or more marker-start characters besides
        "<" (``json_object``'s ``{`` and fence; stop strings may add more), whose
        fast path is a loop in ``_feed`` (installed per instance by ``__init__``):
        ``feed`` without its first test, which cannot pass here, and with the
        lane in a text or reasoning member written out (``json_object``'s answer
        is most of its reply). The rest is ``feed``'s, copied, as in ``_feed_two``."""
        body = self._body
        if body is None:
            return self._feed(delta, None)
        streaming = body.streaming
        if (
            streaming
            and '"' not in delta
            and "\\" not in delta
            and delta.isprintable()
            and delta
            and not self._held
        ):
            if streaming == ARGS or (
                streaming == XML_ARGS and "<" not in delta and "&" not in delta
            ):
                body.raw.append(delta)
                call: Call = body.call  # type: ignore[attr-defined]
                call.args.append(delta)
                if self._max_buffer is not None:
                    body.size += len(delta)
                    self._check_call_size(body, self._max_buffer)
                return [ArgsDelta(index=call.index, id=call.id, delta=delta)]
            if streaming != XML_ARGS:  # ``_lane_text``, inline
                body.raw.append(delta)
                if self._max_buffer is not None:
                    body.size += len(delta)
                    self._check_call_size(body, self._max_buffer)
                if streaming == TEXT_ROLE:
                    return [TextDelta(text=delta)]
                return [ReasoningDelta(text=delta)]
        if delta:
            s = self._held + delta if self._held else delta
            if s in body.holds:
                self._held = s  # as ``fast`` would hold it, without the call
                if body.undecided:
                    self._note_held(body)
                if self._max_buffer is not None:
                    self._check_call_size(body, self._max_buffer)
                return []
            fast = body.fast(s)
            if fast is not None:
                self._held = body.rest
                if body.undecided:
                    self._note_held(body)
                if self._max_buffer is not None:
                    self._check_call_size(body, self._max_buffer)
                return fast
        return self._feed(delta, body)

    def _lane_text(self, body: CallBody, streaming: int, delta: str) -> list[ParserEvent]:
        """The lane in a JSON body's text or reasoning member (``json_object``'s
        answer): the delta is that text."""
        body.raw.append(delta)
        if self._max_buffer is not None:
            body.size += len(delta)
            self._check_call_size(body, self._max_buffer)
        return [TextDelta(text=delta) if streaming == TEXT_ROLE else ReasoningDelta(text=delta)]

    def _note_held(self, body: CallBody) -> None:
        """An undecided body's text is held-back text: record its peak."""
        held = body.size + len(self._held)
        if held > self.max_held:
            self.max_held = held

    def _check_call_size(self, body: CallBody, limit: int) -> None:
        if body.size + len(self._held) > limit:
            self._closed = "ERROR"
            self._body = None
            raise SizeLimitExceeded(f"call text exceeds max_buffer={limit} characters")
