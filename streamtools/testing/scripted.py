"""``ScriptedModel``: a model that plays given replies, for tests and examples.

Theory of operation
-------------------
Each ``stream(request)`` call plays the next reply of the script (turn by
turn) and appends the request to ``requests``, so a test can check both what
the runtime saw and what it asked. A reply is either

* a string: split into token-like text deltas whose sizes are drawn from
  ``chunk_sizes`` by a ``random.Random(seed)`` (so a run is reproducible, and
  different seeds exercise different splits), then one ``FinishChunk``;
* a sequence of chunks, played as given; a ``FinishChunk(reason="stop")`` is
  appended when the sequence has none. An exception among them is raised
  there, after the chunks before it, as a provider's stream raises when its
  connection breaks (``ProviderError("connection reset")``); nothing after
  it is played, and no finish is added;
* an exception: raised on opening the stream, as a provider raises for an
  error status (``ProviderError("HTTP 429", status=429, retry_after=2)``);
  the request was still sent, so it is in ``requests``; or
* a function of the request (sync or async) that returns one of the above,
  called when the request comes: a reply that depends on what was asked (the
  tool result in the last message, the tools offered), as pydantic-ai's
  ``FunctionModel`` answers. An exception it raises is raised on opening.

Like a real OpenAI-compatible endpoint, a string reply honours
``request.stop``: the text ends just before the earliest stop string, which
is not sent, and the finish reports ``reason="stop"`` with that
``stop_sequence``. This is what lets tests exercise the ``</am:tool_call>``
stop trick without a server. Pass ``honor_stop=False`` to play a model that
ignores ``stop`` (as some APIs do), which the runtime must then cut itself.

Anything else (a ``streamtools.testing.Reply``, which scripts a
``FakeServer``'s HTTP answer, not a model's chunks; a dict; ``None``) is a
``UsageError`` naming the reply and what a reply may be: when the model is
made, or for a function's answer when the request comes (it was a
``TypeError`` from deep inside the agent's turn, "object is not iterable").

``delay`` sleeps between chunks (with anyio, so either backend works and the
stream is cancellable at every chunk). Running out of replies is a mistake in
the test, reported with ``UsageError``.
"""

from __future__ import annotations

import inspect
import random
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Mapping,
    Sequence,
)
from contextlib import asynccontextmanager

import anyio

from streamtools.errors import UsageError
from streamtools.model import Chunk, FinishChunk, ModelRequest, TextChunk

__all__ = ["ScriptedModel", "ScriptedReply", "split_text"]

#: what one model call plays (see the module docstring)
Played = str | Sequence[Chunk | Exception] | Exception
#: one item of a ``ScriptedModel``'s replies: what it plays, or a function of the
#: request that returns it. (Named apart from ``streamtools.testing.fake_server.Reply``,
#: the class that scripts one answer of a ``FakeServer``, a different thing.)
ScriptedReply = Played | Callable[[ModelRequest], Played | Awaitable[Played]]


def split_text(text: str, rng: random.Random, sizes: tuple[int, int]) -> list[str]:
    """Cut ``text`` into pieces of ``sizes[0]..sizes[1]`` characters (drawn by ``rng``)."""
    low, high = sizes
    if low < 1 or high < low:
        raise UsageError(f"chunk_sizes must satisfy 1 <= low <= high, got {sizes!r}")
    pieces: list[str] = []
    pos = 0
    while pos < len(text):
        size = rng.randint(low, high)
        pieces.append(text[pos : pos + size])
        pos += size
    return pieces


class ScriptedModel:
    """Plays ``replies`` one per request; records the requests in ``requests``."""

    def __init__(
        self,
        replies: Sequence[ScriptedReply],
        *,
        seed: int = 0,
        chunk_sizes: tuple[int, int] = (1, 6),
        delay: float = 0.0,
        honor_stop: bool = True,
    ) -> None:
        if isinstance(replies, str):  # each character would be a reply of its own
            raise UsageError(
                f"ScriptedModel takes a list of replies, one per request, not one text: "
                f"ScriptedModel([{_short(replies)}])"
            )
        self.replies: list[ScriptedReply] = [
            reply if callable(reply) else _check(reply, f"reply {n + 1}")
            for n, reply in enumerate(replies)
        ]
        self.requests: list[ModelRequest] = []
        self.chunk_sizes = chunk_sizes
        self.delay = delay
        self.honor_stop = honor_stop
        self._rng = random.Random(seed)
        # Kept for tests that check the runtime closed every stream it opened.
        self.open_streams = 0

    @property
    def remaining(self) -> int:
        """Replies not played yet."""
        return len(self.replies) - len(self.requests)

    def chunks_for(self, reply: Played, request: ModelRequest) -> list[Chunk | Exception]:
        """The chunks one reply plays as, given the request (its stop strings);
        an exception among them is raised there."""
        if isinstance(reply, Exception):
            return [reply]
        if not isinstance(reply, str):
            chunks = list(reply)
            if not any(isinstance(c, FinishChunk | Exception) for c in chunks):
                chunks.append(FinishChunk(reason="stop"))
            return chunks
        text, finish = reply, FinishChunk(reason="stop")
        if self.honor_stop and request.stop:
            hits = [(text.find(s), s) for s in request.stop if s and s in text]
            if hits:
                cut, stop = min(hits)
                text, finish = text[:cut], FinishChunk(reason="stop", stop_sequence=stop)
        out: list[Chunk | Exception] = [
            TextChunk(text=piece) for piece in split_text(text, self._rng, self.chunk_sizes)
        ]
        out.append(finish)
        return out

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[Chunk]]:
        turn = len(self.requests)
        if turn >= len(self.replies):
            raise UsageError(_ran_out(len(self.replies), request))
        self.requests.append(request)
        reply = _check(await _played(self.replies[turn], request), f"reply {turn + 1}")
        if isinstance(reply, Exception):
            raise reply  # refused on opening, as for an HTTP error status
        chunks = self.chunks_for(reply, request)
        self.open_streams += 1
        played = self._play(chunks)
        try:
            yield played
        finally:
            # Closed here rather than left to the garbage collector, which would
            # finalize it outside any task (and warn on trio).
            await played.aclose()
            self.open_streams -= 1

    async def _play(self, chunks: list[Chunk | Exception]) -> AsyncGenerator[Chunk, None]:
        for chunk in chunks:
            if self.delay:
                await anyio.sleep(self.delay)
            else:
                # A checkpoint per chunk keeps an instant script cancellable.
                await anyio.lowlevel.checkpoint()
            if isinstance(chunk, Exception):
                raise chunk  # the stream breaks here, as a cut connection's does
            yield chunk


def _check(reply: object, which: str) -> Played:
    """``reply`` if it is one ``ScriptedModel`` can play, else a ``UsageError``."""
    if isinstance(reply, str | Exception):
        return reply
    if isinstance(reply, Iterable) and not isinstance(reply, bytes | bytearray | Mapping):
        chunks = list(reply)  # (a generator of chunks is played too, once)
        for item in chunks:
            if not isinstance(item, Chunk | Exception):
                raise UsageError(
                    f"ScriptedModel {which}: {_short(item)} among its chunks is neither a "
                    "chunk (TextChunk, CallChunk, … of streamtools.model) nor an exception"
                )
        return chunks
    from streamtools.testing.fake_wire import Reply as FakeServerReply  # (only to say so)

    hint = ""
    if isinstance(reply, FakeServerReply):
        hint = (
            " (a Reply scripts a FakeServer's HTTP answer; for ScriptedModel write its "
            "chunks: TextChunk, ReasoningChunk, CallChunk, FinishChunk of streamtools.model)"
        )
    raise UsageError(
        f"ScriptedModel {which} is {_short(reply)}: a reply is text, a list of chunks, "
        f"an exception, or a function of the request that returns one of these{hint}"
    )


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


async def _played(reply: ScriptedReply, request: ModelRequest) -> Played:
    """What ``reply`` plays for ``request``: a function's answer, else itself."""
    if not callable(reply):
        return reply
    answer = reply(request)
    return await answer if inspect.isawaitable(answer) else answer


def _ran_out(scripted: int, request: ModelRequest) -> str:
    """Why a request found no reply, and the likely cause: a script of one reply
    per question, where the agent asks again after each turn whose calls ran
    (and to repair a call), so a reply with a call needs one after it."""
    replies = f"{scripted} repl{'y' if scripted == 1 else 'ies'}"
    last = request.messages[-1] if request.messages else None
    said = ""
    if last is not None:
        content = " ".join((last.content or "").split())
        shown = content if len(content) <= 80 else content[:79] + "…"
        said = f" (its last message, {last.role}: {shown!r})"
    return (
        f"ScriptedModel has {replies}; request {scripted + 1} has none{said}. The agent "
        "asks the model again after each turn whose tool calls ran, and to repair a "
        "call: script one reply per request, the last one the answer"
    )
