"""Which choice of a streamed ``chat.completion.chunk`` is the answer (sans-IO).

Theory of operation
-------------------
``OpenAIChat`` asks for one answer (``n`` other than 1 is refused before
sending), so every event's choice should be choice 0. Servers number it
otherwise: Microsoft's Foundry Local (0.7.117) and text-generation-inference
before 1.4.4 count ``choices[].index`` up with every chunk (0, 1, 2… or 1, 2,
3…), and gateways send a single choice under index 1. Reading choice 0 only,
every chunk after the first (the finish included) was dropped: the answer came
back as its first token, or empty, under a plain ``stop``.

So a choice is the answer's while the stream shows one answer: an event's only
choice is read whatever its index, as long as that index is the one read last
or a new one. A server that streams several answers all the same shows it by
an event with several choices, or by an index coming back after another (0, 1,
0: each answer's deltas in turn); from then on choice 0 alone is read. Before
that, such a stream's first delta of choice 1 was read (in the streams of
OpenAI's API and vLLM it is the role and no text). A null index is index 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

__all__ = ["Answer"]


class _Choice(Protocol):
    @property
    def index(self) -> int | None: ...


C = TypeVar("C", bound=_Choice)


class Answer:
    """Picks the answer's choice of each event (see the module docstring).
    ``index`` is the index read last: the caller reads an event's only
    choice of that index without asking (the usual event)."""

    __slots__ = ("index", "_seen", "_several")

    def __init__(self) -> None:
        self.index = 0
        self._seen: set[int] = set()  # indices read before ``index``
        self._several = False  # the server streams several answers

    def pick(self, choices: Sequence[C]) -> C | None:
        """The answer's choice among an event's ``choices``, or None."""
        if len(choices) > 1:
            self._several = True
        if not self._several:
            index = choices[0].index or 0
            if index == self.index:
                return choices[0]
            if index not in self._seen:  # the next chunk's number (Foundry Local, old TGI)
                self._seen.add(self.index)
                self.index = index
                return choices[0]
            self._several = True  # an index back after another: answers in turn
        self.index = 0
        return next((c for c in choices if not c.index), None)
