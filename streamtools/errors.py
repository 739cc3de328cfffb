"""Exceptions raised by streamtools.

Two families, kept apart as h11 keeps them: a caller's misuse of an object
(``UsageError`` and subclasses) and input from the outside that cannot be
handled (everything else). Model text never raises: malformed calls are
``CallError`` events. Exceptions raise only where the caller must act.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from streamtools.results import valid_text

if TYPE_CHECKING:  # transcript imports this module
    from streamtools.events import Usage
    from streamtools.transcript import Transcript

__all__ = [
    "BudgetExceeded",
    "ParserStateError",
    "ProviderError",
    "RepairExhausted",
    "RepairReason",
    "SizeLimitExceeded",
    "StreamtoolsError",
    "TokenCountUnavailable",
    "ToolDefinitionError",
    "TurnPaused",
    "UnknownDialectError",
    "UsageError",
    "describe_exception",
    "describe_json_error",
]


def _rebuilt(cls: type[BaseException], args: tuple[Any, ...]) -> BaseException:
    """An exception of ``cls`` with ``args``, its ``__init__`` not called (see
    ``StreamtoolsError.__reduce__``); pickle then restores its attributes."""
    return cls.__new__(cls, *args)


class StreamtoolsError(Exception):
    """Base of every streamtools exception."""

    def __reduce__(self) -> tuple[Any, ...]:
        """pickle and ``copy`` rebuild an exception by calling its class with its
        ``args``, which raises TypeError for one whose ``__init__`` takes other
        arguments (``BudgetExceeded``'s required ``turns``, ``ToolArgumentsError``'s
        four), so an error sent back from a worker process was lost. It is made
        from its ``args`` without ``__init__``, and its attributes restored."""
        return (_rebuilt, (type(self), self.args), self.__dict__)


class UsageError(StreamtoolsError):
    """The caller used an object wrongly (a bug in the calling code)."""


class ParserStateError(UsageError):
    """``feed``/``end`` called in a state that does not allow it (e.g. after ``end``)."""


class UnknownDialectError(UsageError, KeyError):
    """No dialect of that name."""

    @classmethod
    def of(cls, dialect: object, known: Iterable[str]) -> UnknownDialectError:
        """The one message for it, wherever a name is looked up (the parser's
        dialects, the renderers): the choices sorted, after a colon."""
        return cls(f"unknown dialect {dialect!r}; choose one of: {', '.join(sorted(known))}")

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class SizeLimitExceeded(StreamtoolsError):
    """Input exceeded a configured size cap (the parser then refuses more input)."""


class ToolDefinitionError(UsageError):
    """A function cannot be turned into a tool (unsupported annotation, bad name…)."""


class BudgetExceeded(StreamtoolsError):
    """The agent ran out of turns or time before the model gave a final answer.

    ``transcript`` is the run's history up to there (the agent's own, when the
    prompt was a string), so that the work done is not lost with the run;
    ``usage`` the tokens the run's requests used until then, summed as
    ``RunResult.usage`` is (None for an error not raised out of a run)."""

    def __init__(self, message: str, *, turns: int, transcript: Transcript | None = None) -> None:
        super().__init__(message)
        self.turns = turns
        self.transcript = transcript
        self.usage: Usage | None = None


# ``RepairExhausted.reason``: every value the runtime raises it with (as the events'
# codes in ``streamtools.events``; tests/test_api_s19_event_literals.py checks both)
RepairReason = Literal["call_error", "repeated_call", "empty_reply", "max_tokens"]


class RepairExhausted(StreamtoolsError):
    """The repair ladder ran out and the model's last reply said nothing: its calls
    still failed after ``max_repairs`` repairs (``reason="call_error"``), it kept
    repeating a call after tool use was stopped (``reason="repeated_call"``), or
    its reply was empty again after it was asked for its answer
    (``reason="empty_reply"``). The message ends with the last failure's message,
    as the model was told it. ``reason="max_tokens"``: its reply reached the
    output token limit inside a call again after it was told to make the call
    smaller (or with no repair left), or before any answer, all reasoning, again
    after it was asked for its answer; the message says to raise ``max_tokens``.
    ``transcript``: the run's history, and ``usage`` its tokens, as for
    ``BudgetExceeded``."""

    def __init__(
        self,
        message: str,
        *,
        reason: RepairReason,
        turns: int,
        transcript: Transcript | None = None,
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.turns = turns
        self.transcript = transcript
        self.usage: Usage | None = None


class ProviderError(StreamtoolsError):
    """A model provider failed: an HTTP error status (``status`` and the API's own
    ``body``), a transport failure (``status`` is None), or a broken stream.
    ``retry_after`` is the server's ``retry-after`` in seconds, when it sent one;
    ``should_retry`` its ``x-should-retry`` header (True, False; None when
    absent), which the OpenAI and Anthropic SDKs obey over the status.

    Raised out of an agent's run: ``partial_text`` is the visible text of the reply
    the failure cut short ("" if it had none; None outside a run), which is not
    put in the history, and ``transcript`` the run's history up to that reply and
    ``usage`` its tokens, as for ``BudgetExceeded``."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        body: str | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        should_retry: bool | None = None,
        partial_text: str | None = None,
        transcript: Transcript | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
        self.retryable = retryable
        self.retry_after = retry_after
        self.should_retry = should_retry
        self.partial_text = partial_text
        self.transcript = transcript
        self.usage: Usage | None = None


class TokenCountUnavailable(ProviderError):
    """The server has no endpoint that counts tokens (``OpenAIChat.count_tokens``
    against OpenAI itself, Ollama or a gateway): a caller estimates instead."""


class TurnPaused(ProviderError):
    """The server paused the model's turn (Anthropic's ``pause_turn``, a long
    server-tool run) and the provider did not go on with it (past
    ``AnthropicMessages(max_pauses=...)``): the reply is unfinished, no answer.
    Raised out of an agent's run after ``StreamError(kind="pause")``; its text so
    far is ``partial_text``. Raise ``max_pauses`` to let the provider go on."""


def describe_exception(exc: BaseException) -> str:
    """``"TypeName: message"`` for an exception from code that is not ours (a
    tool, a user's validator), even when its ``__str__`` itself raises."""
    try:
        text = valid_text(str(exc))  # it goes to the model: no lone surrogate half
    except Exception:
        text = "(its message could not be formatted)"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def describe_json_error(exc: Exception) -> str:
    """What is wrong with text a JSON decoder refused, for a message: msgspec's
    own words, or what its ``RecursionError`` (nested deeper than it goes, about
    a thousand levels) and ``UnicodeEncodeError`` (a lone UTF-16 surrogate half in
    a str) mean."""
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, UnicodeEncodeError):
        return "a lone UTF-16 surrogate, which is not text"
    return str(exc)
