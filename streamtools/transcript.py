"""The canonical conversation: provider-neutral, dialect-neutral.

Theory of operation
-------------------
A ``Transcript`` is the single record of a conversation: system prompt,
user messages, assistant replies (visible text, reasoning, and the calls they
made, each with an id), and tool results paired to those calls by id. It
never stores a dialect's markup except as ``ToolCall.raw``, the exact text a
model wrote for a call, kept so that history can be written back as the model
wrote it.

Each turn the runtime (or the proxy) projects the transcript for one dialect
and one provider with ``project`` (see below), which returns the
``ChatMessage`` list of a ``ModelRequest``. The projection rules (merged
system messages, unanswered calls, orphan results) are stated in
``streamtools.prompts.project``.

Text that UTF-8 cannot carry (a lone UTF-16 surrogate half: a file name
that is not UTF-8, input read with ``surrogateescape``) would make every
request, recording and saved transcript fail with ``UnicodeEncodeError``.
The helpers that add text (``user``, ``system``, ``assistant``, ``result``)
write such a half as U+FFFD (``results.valid_text``), and ``encode`` does the
same for text that came in another way (a message built and ``add``-ed);
``decode`` reads one as U+FFFD too, in a ``str`` or escaped in the JSON.

This module is core: standard library and msgspec only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import msgspec

from streamtools.errors import UsageError
from streamtools.model import ReasoningOrigin, Thinking
from streamtools.results import decode_json, encode_json, valid_text

__all__ = [
    "AssistantMessage",
    "Message",
    "SystemMessage",
    "ToolCall",
    "ToolResultMessage",
    "Transcript",
    "UserMessage",
]


class ToolCall(msgspec.Struct, frozen=True, kw_only=True):
    """A call an assistant made. ``raw`` is the model's own text for it, when
    it was written in a prompt dialect (None for native calls). ``offset`` is
    where it stood in its reply: the number of characters of the reply's
    ``text`` written before it (None: after all of it). A prompt dialect writes
    history back in that order, as the model wrote it. ``arguments_text``: the
    arguments as they were written when they are not a JSON object (a native
    call cut off by a token limit, a broken call a client kept in its history;
    ``arguments`` is empty then), which a prompt dialect writes back in its call
    form (``Renderer.format_call_text``)."""

    id: str
    name: str
    arguments: dict[str, Any]
    raw: str | None = None
    offset: int | None = None
    extra: dict[str, Any] | None = None  # a native API's data for the call (CallEnd.extra)
    arguments_text: str | None = None


class SystemMessage(msgspec.Struct, tag="system", tag_field="role", frozen=True, kw_only=True):
    content: str


class UserMessage(msgspec.Struct, tag="user", tag_field="role", frozen=True, kw_only=True):
    content: str


class AssistantMessage(
    msgspec.Struct, tag="assistant", tag_field="role", frozen=True, kw_only=True
):
    """One model reply: its visible text, its reasoning, and the calls it made
    (in order). ``text`` is the visible text with the calls' markup removed.
    ``thinking``: the reasoning blocks the provider signed (Anthropic's extended
    thinking), which its API needs back with the reply's native calls.
    ``reasoning_origin``: the wire field and server the reasoning came from
    (``ReasoningOrigin``), kept so that the server that streamed it gets it
    back in native mode (DeepSeek's and Kimi's thinking modes require it with
    the reply's tool calls), whether the transcript was saved and loaded or
    carried on by another agent, and no other server does.
    ``unparsed``: ``text`` holds the raw text of a call that failed to parse
    (prompt mode: the runtime keeps it in place, as written, for the model to
    fix), so it goes back as written; a dialect that writes an answer in its
    own form (``json_object``'s ``{"final": …}``) writes other text so."""

    text: str = ""
    calls: tuple[ToolCall, ...] = ()
    reasoning: str = ""
    thinking: tuple[Thinking, ...] = ()
    reasoning_origin: ReasoningOrigin | None = None
    unparsed: bool = False


class ToolResultMessage(msgspec.Struct, tag="tool", tag_field="role", frozen=True, kw_only=True):
    """The result of the call ``call_id``; ``is_error`` marks a tool error."""

    call_id: str
    name: str
    content: str
    is_error: bool = False


Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage


class Transcript(msgspec.Struct, kw_only=True):
    """An ordered list of messages; JSON-encodable with msgspec."""

    messages: list[Message] = msgspec.field(default_factory=list)

    def add(self, message: Message) -> None:
        self.messages.append(message)

    def system(self, content: str) -> None:
        self.messages.append(SystemMessage(content=valid_text(content)))

    def user(self, content: str) -> None:
        self.messages.append(UserMessage(content=valid_text(content)))

    def assistant(
        self, text: str = "", calls: Sequence[ToolCall] = (), *, reasoning: str = ""
    ) -> AssistantMessage:
        """Append a model reply and return it."""
        message = AssistantMessage(
            text=valid_text(text), calls=tuple(calls), reasoning=valid_text(reasoning)
        )
        self.messages.append(message)
        return message

    def result(self, call: ToolCall, content: str, *, is_error: bool = False) -> None:
        """Append the result (or, with ``is_error``, the error) of ``call``."""
        self.messages.append(
            ToolResultMessage(
                call_id=call.id, name=call.name, content=valid_text(content), is_error=is_error
            )
        )

    def pending_calls(self) -> list[ToolCall]:
        """Calls of the last assistant reply that have no result yet, in order.
        Calls that share an id (clients and servers do reuse ids) take the results
        with that id in order, as ``project`` pairs them: two such calls and one
        result leave the second pending."""
        for i in range(len(self.messages) - 1, -1, -1):
            message = self.messages[i]
            if isinstance(message, AssistantMessage):
                answers = Counter(
                    m.call_id for m in self.messages[i + 1 :] if isinstance(m, ToolResultMessage)
                )
                pending: list[ToolCall] = []
                for call in message.calls:
                    if answers[call.id] > 0:
                        answers[call.id] -= 1
                    else:
                        pending.append(call)
                return pending
        return []

    def encode(self) -> bytes:
        """JSON (msgspec) of the whole conversation; a lone surrogate half as U+FFFD."""
        return encode_json(self)

    @classmethod
    def decode(cls, data: bytes | str) -> Transcript:
        """Inverse of ``encode``. Text that is not a transcript (invalid JSON, bytes
        that are not UTF-8, a message of an unknown role, a field of the wrong type)
        is a ``UsageError`` naming what is wrong, as for a recording.

        A lone surrogate half is read as U+FFFD, as ``encode`` writes it: in a
        ``str`` (text read with ``surrogateescape``), or escaped in a JSON string
        (``"\\ud83d"`` with no low half, as JavaScript writes a string cut inside
        an emoji), which JSON parsers refuse (the proxy reads request bodies so too).

        A byte order mark before the JSON (a file saved again by a Windows editor,
        or read with ``encoding="utf-8"`` rather than ``"utf-8-sig"``) is no part
        of it, as for a recording."""
        if isinstance(data, str):
            data = valid_text(data.removeprefix("\ufeff")).encode()
        data = bytes(data).removeprefix(b"\xef\xbb\xbf")
        try:
            return decode_json(lambda raw: msgspec.json.decode(raw, type=cls), data)
        except msgspec.ValidationError as exc:
            raise UsageError(f"not a transcript: {exc}") from exc
        except msgspec.DecodeError as exc:
            raise UsageError(f"not a transcript: invalid JSON: {exc}") from exc
        except UnicodeDecodeError as exc:  # msgspec's error for a string's bytes that are not UTF-8
            raise UsageError(f"not a transcript: not UTF-8: {exc}") from None
        except RecursionError:  # deeper than msgspec goes (about a thousand levels)
            raise UsageError("not a transcript: JSON nested too deeply") from None
