"""Tool names as an API takes them: a wire-safe name for each one it would refuse.

Theory of operation
-------------------
Tool names may contain dots (``kom.memory.v1.search_memory``; an MCP server's
tools come as ``server.tool``), but OpenAI's API takes only function names
that match ``^[a-zA-Z0-9_-]{1,64}$`` and Anthropic's only tool names that do:
a request with any other is refused (400), so an agent with such tools could
not run at all in native mode.

``WireNames.of(request, rule)`` gives each name of the request that does not
fit ``rule`` (a ``NameRule``: the characters allowed, the first character's,
the longest length) a name that does: the characters it refuses become ``_``
(``kom_memory_v1_search_memory``), ``fn_`` goes before a first character it
refuses (OpenAI-compatible servers: Moonshot's and Gemini's refuse a name
that begins with a digit), and a name that is then too long, empty,
or taken (by another of the request's names, as sent, or by a name already
given) is cut and ends in ``_`` and eight hex digits of its own SHA-256. The
names looked at are the tools', a named ``tool_choice``'s, and those of the
past native calls in the messages; they are given out in sorted order, so
the mapping is a function of those names alone, and every request of a
conversation (the same tools, the same past calls and more) maps a name the
same way. Names that fit go unchanged.

``wire(request)`` is the request with the given names everywhere one goes
out: the tools, a named ``tool_choice``, past calls, and tool messages'
``name``. A tool message whose name is not one of those (a prompt dialect's
result, sent as text) keeps its own. ``restored(chunks)`` maps a
``CallChunk``'s name back, so the runtime, the transcript and the events
only ever see the real names; a provider wraps its decoder in it only when
a name was given (``HTTPProvider``), so a request that needs none pays
nothing per chunk. A name the model made up is passed on as it came.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncGenerator
from dataclasses import dataclass

import msgspec

from streamtools.model import CallChunk, ChatMessage, Chunk, ModelRequest, UseTool

__all__ = ["NameRule", "OPENAI_NAMES", "ANTHROPIC_NAMES", "WireNames"]

_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
_DIGEST = 8  # hex digits of a name's SHA-256 that tell it apart when cut or taken


@dataclass(frozen=True)
class NameRule:
    """The names an API takes: ``allowed`` characters, ``first`` the ones a name
    may begin with (``allowed`` if empty), at most ``longest`` of them."""

    allowed: frozenset[str]
    longest: int
    first: frozenset[str] = frozenset()

    def fits(self, name: str) -> bool:
        if not 0 < len(name) <= self.longest or not set(name) <= self.allowed:
            return False
        return not self.first or name[0] in self.first

    def safe(self, name: str, taken: set[str]) -> str:
        """A name that fits, for ``name`` (which does not), not in ``taken``."""
        plain = "".join(c if c in self.allowed else "_" for c in name)
        if self.first and not (plain and plain[0] in self.first):
            plain = "fn_" + plain  # ``first`` holds the letters, whatever else it holds
        if plain and len(plain) <= self.longest and plain not in taken:
            return plain
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()
        for more in range(1 << 16):  # only a name taken on purpose needs a second
            tail = "_" + digest[:_DIGEST] + (f"_{more}" if more else "")
            cut = (plain or "_")[: self.longest - len(tail)] + tail
            if cut not in taken:
                return cut
        raise AssertionError("no free name")  # pragma: no cover


# OpenAI's function names, beginning with a letter as Moonshot's (Kimi) API asks (Gemini's
# OpenAI-compatible endpoint takes ``_`` too): a name beginning otherwise is rare
OPENAI_NAMES = NameRule(
    _WORD, 64, frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
)
ANTHROPIC_NAMES = NameRule(_WORD, 64)


_KEYWORDS = frozenset({"auto", "none", "required", "any"})  # ``any``: Anthropic's, as sent


def _chosen(choice: object) -> str | None:
    """The tool a ``tool_choice`` names: a ``UseTool``'s, or an untyped caller's
    bare name (the providers take one), else None."""
    if isinstance(choice, UseTool):
        return choice.name
    return choice if isinstance(choice, str) and choice not in _KEYWORDS else None


class WireNames:
    """One request's names as sent (``out``) and back (``back``): see the module docstring."""

    __slots__ = ("out", "back")

    def __init__(self, out: dict[str, str]) -> None:
        self.out = out
        self.back = {wire: name for name, wire in out.items()}

    @classmethod
    def of(cls, request: ModelRequest, rule: NameRule | None) -> WireNames:
        if rule is None:
            return _NONE
        names = {t.name for t in request.tools or ()}
        if (chosen := _chosen(request.tool_choice)) is not None:
            names.add(chosen)
        for msg in request.messages:
            if msg.tool_calls:
                names.update([c.name for c in msg.tool_calls])
        unfit = sorted([n for n in names if not rule.fits(n)])
        if not unfit:
            return _NONE
        taken = names - set(unfit)
        out: dict[str, str] = {}
        for name in unfit:
            out[name] = wire = rule.safe(name, taken)
            taken.add(wire)
        return cls(out)

    def wire(self, request: ModelRequest) -> ModelRequest:
        """``request`` with the names sent in place of the real ones."""
        out = self.out
        if not out:
            return request
        tools = request.tools
        if tools is not None:
            tools = tuple(
                msgspec.structs.replace(t, name=out[t.name]) if t.name in out else t for t in tools
            )
        choice = request.tool_choice
        if (chosen := _chosen(choice)) is not None and chosen in out:
            choice = UseTool(out[chosen])
        messages = tuple(self._message(m) for m in request.messages)
        return msgspec.structs.replace(request, tools=tools, tool_choice=choice, messages=messages)

    def _message(self, msg: ChatMessage) -> ChatMessage:
        out = self.out
        if msg.tool_calls and any(c.name in out for c in msg.tool_calls):
            calls = tuple(
                msgspec.structs.replace(c, name=out[c.name]) if c.name in out else c
                for c in msg.tool_calls
            )
            return msgspec.structs.replace(msg, tool_calls=calls)
        if msg.role == "tool" and msg.name in out and msg.name is not None:
            return msgspec.structs.replace(msg, name=out[msg.name])
        return msg

    async def restored(self, chunks: AsyncGenerator[Chunk, None]) -> AsyncGenerator[Chunk, None]:
        """``chunks`` with each call's name as the request's tools have it."""
        back = self.back
        try:
            async for chunk in chunks:
                if isinstance(chunk, CallChunk) and chunk.name in back and chunk.name is not None:
                    chunk = msgspec.structs.replace(chunk, name=back[chunk.name])
                yield chunk
        finally:
            await chunks.aclose()


_NONE = WireNames({})  # no name to map (never changed: ``out`` and ``back`` are only read)
