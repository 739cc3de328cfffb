"""The repair ladder: what the agent tells a model that got tool calling wrong.

Theory of operation
-------------------
Models without native function calling fail in a few recognisable ways. Each
has its own rung, and each rung its own bound, so that repair can never loop:

1. **Malformed call** (a ``CallError``: bad markup, invalid JSON, unknown
   tool, arguments that fail the schema, a call cut off at the end of the
   stream). The reply is answered with the parser's own message, the start of
   what the model wrote, and the dialect's ``format_reminder()``. Bound:
   ``max_repairs`` per run (default 2). Past the bound the reply is taken as
   it stands (its valid calls still run; with none, its text is the answer).

   A call the output token limit cut off (the reply ended with ``length``
   inside it: ``cut_calls``) is one the same request would cut at the same
   place again: the model is told so, and to make the call smaller (split the
   work over several calls, each after the last one's result), not to write it
   again (``call_error_feedback(cut=True)``). That is done once per run: a
   reply cut inside a call again, with no complete call of its own, ends the
   run with ``RepairExhausted(reason="max_tokens")`` (``cut_exhausted``), text
   or none: its text led up to a call, it is no answer; so does one cut when
   no repair is left. (Told only to fix the call, a model wrote it again at
   full length, cut at the same place, until the repairs ran out.) A reply
   that ends at the limit in its text, outside any call, is an answer marked
   ``truncated`` (``Final``, ``RunResult``); so is a ``json_object`` reply cut
   in its answer (the object unterminated, no tool named, its text out).
2. **Refusal or missing call.** A reply without a call that says it has no
   tools ("I don't have access to tools…") while no tool has run in the run
   (after results, "I can't check tomorrow's" states the answer's limits), or
   any reply without a call when ``tool_choice="required"`` and no tool has
   run yet (with ``UseTool(name)``: no call to that tool has run, whatever
   others did), gets one stronger re-prompt that restates the tools (or
   names the one) and the exact syntax. Bound: one per run.
3. **Repeated call.** The same tool with the same arguments (compared as the
   tool takes them, as canonical JSON: ``call_signature``) is not run again.
   The first repeat is *redirected*: the call gets a tool error quoting the
   earlier result and asking the model to use it, change the arguments, or
   answer. A second repeat *stops* tool use:
   that call is refused, and the model gets one last turn, told to answer
   without tools, in which every call is refused and whose text is final.
   Both show as ``ToolFailed(kind="refused")``; the redirect also as a
   ``Retry(reason="repeated_call")``.

   A *retry* is not a repeat: a call whose last run failed for a reason that
   may pass (it timed out, or raised a connection error or an error of the
   tool's own: ``executor.may_pass``), made again in a later reply, after the
   model read the failure, runs again, at most ``MAX_RETRIES`` (2) times per
   call (a sync call whose timed-out run still runs in its thread is refused
   meanwhile, by the executor); past that it is a repeat, and the redirect
   quotes its last error. A
   call that raised what says its arguments are wrong (``ValueError``,
   ``TypeError``, a ``ZeroDivisionError``…), was refused before it ran, or whose
   result could not be written as text would fail the same way: made again, it
   is a repeat at once, redirected with its error quoted. Peers run such a
   call again on and on; a model that sends the same arguments after reading
   the error is looping, and each run of the tool (its side effects too) would
   only buy the same error and spend a turn.

   A tool marked ``repeatable`` (``@tool(repeatable=True)``: a job's status,
   a clock) gives another result each time: a repeat of its call runs again,
   as a model polling it needs, bounded by ``max_turns``, and climbs no rung.

   An identical call written twice in one reply (a *twin*; models that write
   parallel calls duplicate one now and then) is neither: the second is not
   run, and is told that only the first is answered (``repeat_twin``), unless
   the tool is ``repeatable``: then it is another call ("roll two dice"). It
   quotes nothing, since whether the first one's result is in yet depends on
   timing, and the transcript must not; and it climbs no rung, being no loop
   across turns: a later repeat is still redirected before tool use stops.

4. **Empty reply** (no text, no call: models give one after tool results
   now and then). One re-prompt asking for the answer
   (``empty_reply_reprompt``), once per run; empty again, the agent raises
   ``RepairExhausted(reason="empty_reply")``, or ``reason="max_tokens"``
   when the output token limit cut it before any answer (all reasoning:
   ``reply_checks.empty_answer``).

**When the ladder runs out** (rung 1 past its bound, or the last turn of
rung 3), the reply is the answer if it has visible text (what the model said
around its failed call is all there is, and it may well be the answer). If it
has none (only the failed or refused calls), the run raises
``RepairExhausted`` (``exhausted``) with the last failure's message, rather
than end with a silent ``Final(text="")`` that a caller cannot tell from an
answer.

This module holds the detection and the wording, no I/O: the loop in
``streamtools.runtime.agent`` decides when to apply them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from streamtools.errors import RepairExhausted
from streamtools.events import CallError, ToolFailed, ToolResult
from streamtools.prompts.special_tokens import defuse_text
from streamtools.runtime.call_key import check_call
from streamtools.tools import Tool

__all__ = [
    "MAX_RETRIES",
    "OUT_OF_TOKENS",
    "RepairState",
    "announced_reprompt",
    "call_error_feedback",
    "call_signature",
    "cut_calls",
    "cut_exhausted",
    "empty_reply_reprompt",
    "LAST_TURN_NOTE",
    "LAST_TURN_REFUSAL",
    "exhausted",
    "looks_like_announcement",
    "looks_like_refusal",
    "missing_call_reprompt",
    "over_call_limit",
    "refusal_reprompt",
    "repeat_redirect",
    "repeat_twin",
    "repeat_stop",
]

# Phrases models use when they believe they cannot call tools. Anchored on
# the first person so that a model *reporting* a tool's failure ("the tool
# cannot access the file") is not mistaken for a refusal.
_REFUSAL = re.compile(
    r"\bI\s+(?:do\s+not|don't|cannot|can't|can\s+not|am\s+unable\s+to|am\s+not\s+able\s+to"
    r"|have\s+no)\s+(?:have\s+)?(?:any\s+)?(?:direct\s+)?"
    r"(?:access|tools?|ability|browse|call|use\s+(?:any\s+)?tools?|run|execute|check|look\s+up)"
    r"|\bas\s+an\s+AI(?:\s+language\s+model)?\b[^.]{0,40}\b(?:cannot|can't|don't|do\s+not)\b"
    r"|\bI\s+(?:don't|do\s+not)\s+have\s+(?:real-time|internet|web)",
    re.IGNORECASE,
)

# A short reply that ends by saying it is about to use a tool, and makes no call
# (``looks_like_announcement``): its last sentence, "Let me check …" / "I'll search …"
_ANNOUNCED = re.compile(
    r"(?:^|[.!?\n]\s*)(?:(?:ok(?:ay)?|sure|now|next|first|great|alright),?\s+)?"
    r"(?:let\s+me|let's|I'll|I\s+will|I'm\s+going\s+to|I\s+am\s+going\s+to|I\s+need\s+to)"
    r"\s+(?:now\s+|first\s+|quickly\s+|also\s+|then\s+|just\s+)?"
    r"(?:check|look|search|find|fetch|call|use|run|query|read|open|browse|calculate|compute"
    r"|retrieve|try|verify)\b[^.!?\n]*[.:…]*\s*$",
    re.IGNORECASE,
)
_ANNOUNCED_LIMIT = 300  # characters: an answer that only ends so is longer

_QUOTE_LIMIT = 300
# How many times a call whose failure may pass may run again (see rung 3).
MAX_RETRIES = 2


def looks_like_refusal(text: str) -> bool:
    """True when ``text`` reads as "I have no tools / cannot access …"."""
    return _REFUSAL.search(text) is not None


def looks_like_announcement(text: str) -> bool:
    """True when ``text``, a reply with no call, is a short one that ends by
    announcing a tool call (``Let me check the weather.``, ``I'll search for
    it:``) or with a colon (the words before a call it did not write): the
    model stopped where the call should have been (see rung 2's note in
    ``Agent``). A longer reply, or one that asks (``?``) or offers (``Shall
    I …``, ``Let me know``), is an answer."""
    text = text.strip()
    if not text or len(text) > _ANNOUNCED_LIMIT:
        return False
    return text[-1] in ":\uff1a" or _ANNOUNCED.search(text) is not None


def announced_reprompt(reminder: str) -> str:
    """The one re-prompt after a reply that announced a tool call and made none."""
    return (
        "Your reply said you would use a tool, but it made no tool call, so nothing was "
        "run. Make the call now, exactly in this format:\n" + reminder + "\nIf you need "
        "no tool, give your answer instead."
    )


def call_signature(name: str, arguments: dict[str, Any], tool: Tool | None = None) -> str:
    """A key equal for calls of one tool with equal arguments (key order ignored).

    With ``tool``, the arguments are compared as the tool takes them
    (``Tool.validate``): ``{"n": 5}`` and ``{"n": 5.0}`` for an ``int``, ``"5"``
    as a prompt dialect writes it, ``2`` and ``2.0`` for a ``float``, a default
    written out or left out, a value a ``default_factory`` filled in left out
    (``streamtools.runtime.call_key``). Compared as written, such calls were
    different calls, and a model that made the same call again written another
    way had it run again (a write, twice), never redirected."""
    return check_call(name, arguments, tool).signature


def _quote(raw: str) -> str:
    """Model or tool text quoted in a message to the model: trimmed, and its chat
    template special tokens defused (the message goes as a user message, which
    the render side leaves as written; see ``prompts.special_tokens``)."""
    raw = raw.strip()
    if len(raw) > _QUOTE_LIMIT:
        raw = raw[:_QUOTE_LIMIT] + " …"
    return defuse_text(raw)


def call_error_feedback(errors: Sequence[CallError], reminder: str, *, cut: bool = False) -> str:
    """The repair message for a reply whose calls could not be understood;
    ``cut``: the output token limit cut one off (``cut_calls``)."""
    lines = ["Your tool call could not be run."]
    for error in errors:
        what = f"`{defuse_text(error.name)}`" if error.name else "a call"
        # the message quotes the model's text too (``Text '…' is outside …``)
        lines.append(f"- {what} ({error.reason}): {defuse_text(error.message)}")
        if error.raw.strip():
            lines.append(f"  You wrote: {_quote(error.raw)}")
    if cut:
        lines.append(
            "Your reply reached the output token limit (max_tokens) while you were writing "
            "the call, so it was cut off there and not run. Written the same way again it "
            "would be cut off at the same place: make it much shorter. Split the work into "
            "smaller calls (a long text in parts, one call at a time, each after the last "
            "one's result), and write little or no text before the call. Write it exactly "
            "in this format:"
        )
    else:
        lines.append("Fix the call and write it again, exactly in this format:")
    lines.append(reminder)
    return "\n".join(lines)


# Finish reasons that say the reply ran out of output tokens (providers map
# theirs to ``length``; Anthropic's own word is taken too).
OUT_OF_TOKENS = frozenset({"length", "max_tokens"})


def cut_calls(errors: Sequence[CallError], finish: str | None) -> list[CallError]:
    """The calls of a reply that the output token limit cut off: a reply that
    finished with ``length`` leaves the call it was writing ``unterminated``."""
    if finish not in OUT_OF_TOKENS:
        return []
    return [e for e in errors if e.reason == "unterminated"]


def cut_exhausted(
    cut: Sequence[CallError], *, told: bool, max_tokens: int | None, turns: int
) -> RepairExhausted:
    """The error for a reply cut off inside a call that is not repaired
    (``told``: the model was told of a cut once already)."""
    name = cut[-1].name
    what = f"a call to `{name}`" if name else "a tool call"
    limit = "max_tokens" if max_tokens is None else f"max_tokens ({max_tokens})"
    again = " again, after it was told to write a shorter one" if told else ""
    return RepairExhausted(
        f"the model's reply reached the output token limit inside {what}{again}: "
        f"raise {limit}, or ask for less at once",
        reason="max_tokens",
        turns=turns,
    )


def refusal_reprompt(tool_names: Sequence[str], reminder: str) -> str:
    """The one stronger re-prompt after a reply that says it has no tools."""
    names = ", ".join(tool_names)
    return (
        f"You do have tools, and you must use them: {names}. "
        "They run for you and their results come back to you in the next message. "
        "Call the tool you need now, exactly in this format:\n" + reminder
    )


def missing_call_reprompt(
    tool_names: Sequence[str], reminder: str, *, forced: str | None = None
) -> str:
    """The one stronger re-prompt when a call was required and none was made;
    ``forced``: the tool that must be called (``UseTool``), named as the one."""
    if forced is not None:
        return (
            f"A call to `{forced}` is required before you answer. "
            "Call it now, exactly in this format:\n" + reminder
        )
    names = ", ".join(tool_names)
    return (
        f"A tool call is required before you answer. Available tools: {names}. "
        "Call one now, exactly in this format:\n" + reminder
    )


def empty_reply_reprompt(*, ran: bool, cut: bool = False) -> str:
    """The one re-prompt after a reply with nothing in it; ``ran``: tools ran;
    ``cut``: it ended at the output token limit (a reasoning model spent it all
    thinking), which "your reply was empty" would not explain."""
    using = " using the tool results above" if ran else ""
    if cut:
        return (
            "Your reply reached the output token limit (max_tokens) before it gave any "
            f"answer: it was all spent on reasoning. Think briefly and answer the user "
            f"now{using}, in plain text."
        )
    return f"Your reply was empty. Answer the user now{using}, in plain text."


# ``Agent(answer_at_max_turns=True)``: what the last turn's request says, and
# the tool error of a call made in it all the same (it is not run)
LAST_TURN_NOTE = (
    "This is your last reply in this run: no more tool calls will be run. Answer the "
    "user now, in plain text, from the tool results above; if they do not give the "
    "whole answer, say what is still unknown."
)
LAST_TURN_REFUSAL = (
    "This call was not run: the run had no turn left for tool calls, and the model was "
    "asked for its answer instead."
)


def repeat_twin(name: str) -> str:
    """The tool error for a call identical to one earlier in the same reply."""
    return (
        f"You wrote this call of `{name}` more than once in one reply, with exactly the "
        "same arguments; only the first of them is answered, and this one was not run."
    )


def over_call_limit(name: str, limit: int) -> str:
    """The tool error for a call past ``Agent(max_calls_per_reply=limit)`` in
    one reply: not run, and no loop (the same call in a later reply runs)."""
    calls = "1 tool call" if limit == 1 else f"{limit} tool calls"
    return (
        f"This call of `{name}` was not run: only the first {calls} of a reply are run. "
        "Read the results of those first; then make this call again if you still need it."
    )


def repeat_redirect(
    name: str, previous: str | None, *, failed: bool = False, runs: int = 1
) -> str:
    """The tool error for the first repeat of an identical call. ``previous``:
    the earlier call's result, quoted (None: not known). ``failed``: its last
    run failed (its retries are spent, or the failure would not pass):
    ``previous`` is its last error; ``runs``: how many times it ran."""
    if previous is None:
        return (
            f"You already called `{name}` with exactly these arguments; it was not run again. "
            "Use its result, call a tool with different arguments, or give your answer."
        )
    if failed:
        if runs > 1:
            said = f"it failed {runs} times; it was not run again. Its last error was:"
        else:
            said = (
                "it failed; the same arguments would fail the same way, so it was not run "
                "again. Its error was:"
            )
        return (
            f"You already called `{name}` with exactly these arguments and {said}\n"
            f"{_quote(previous)}\n"
            "Do not retry it: call a tool with different arguments, or give your answer."
        )
    return (
        f"You already called `{name}` with exactly these arguments; it was not run again. "
        f"Its result was:\n{_quote(previous)}\n"
        "Use that result, call a tool with different arguments, or give your answer."
    )


def repeat_stop(name: str, *, repeated: bool = True) -> str:
    """The tool error once repeats go on: tools are over for this run. ``repeated``
    false: a call made after that which is not a repeat (other arguments, another
    tool), refused all the same, and not told it repeated anything."""
    if not repeated:
        return (
            f"`{name}` was not run: tool use is stopped for this request after repeated "
            "identical calls. Do not call any more tools: answer now with what you have."
        )
    return (
        f"`{name}` was called again with the same arguments; tool use is stopped for this "
        "request. Do not call any more tools: answer now with what you have."
    )


@dataclass
class RepairState:
    """Per-run counters, one per rung, each checked against its own bound."""

    max_repairs: int = 2
    call_error_repairs: int = 0
    reprompted: bool = False
    nudged: bool = False  # the re-prompt after an empty reply, once per run
    announced: bool = False  # after a reply that announced a call it did not make, once
    cut_told: bool = False  # told of a call cut off at max_tokens, once per run
    redirected: bool = False
    stopping: bool = False
    calls_run: int = 0
    tools_run: set[str] = field(default_factory=set)  # the names of the calls run
    # The signatures of the calls run so far, and their results, to quote to a
    # repeat. By signature, not call id: a provider may reuse ids across turns
    # (every reply's first call ``call_0``), so an id can name several calls.
    seen: set[str] = field(default_factory=set)
    results: dict[str, str] = field(default_factory=dict)
    # The signatures whose last run failed in a way a retry may get past, those
    # whose last run failed at all, and how many retries each has had.
    failed: set[str] = field(default_factory=set)
    errored: set[str] = field(default_factory=set)
    retries: dict[str, int] = field(default_factory=dict)

    def can_repair(self) -> bool:
        return self.call_error_repairs < self.max_repairs

    def may_retry(self, signature: str) -> bool:
        """Whether a call seen before may run again: its last run failed in a way
        that may pass, and it has retries left."""
        return signature in self.failed and self.retries.get(signature, 0) < MAX_RETRIES

    def ran(self, signature: str, outcome: ToolResult | ToolFailed, *, retryable: bool) -> None:
        """Note a call's outcome: what a repeat of it is told, and whether a
        retry may run it again (``retryable``: a failure that may pass, as
        ``Executor.attempt`` says)."""
        self.calls_run += 1
        self.tools_run.add(outcome.name)
        if isinstance(outcome, ToolResult):
            self.results[signature] = outcome.content
            self.errored.discard(signature)
        else:
            self.results[signature] = outcome.message
            self.errored.add(signature)
        if isinstance(outcome, ToolFailed) and retryable:
            self.failed.add(signature)
        else:
            self.failed.discard(signature)


def exhausted(
    state: RepairState,
    *,
    text: str,
    errors: Sequence[CallError],
    refused: Sequence[str],
    turns: int,
) -> RepairExhausted | None:
    """The error to raise when the reply ending a run is only failed calls, else None.

    ``text`` is the reply's visible text, ``errors`` its call errors, ``refused``
    the messages of its calls the runtime refused (repeats); called only when
    the loop is about to take the reply as the final answer."""
    if text.strip():
        return None
    if state.stopping and (refused or errors):
        last = refused[-1] if refused else errors[-1].message
        return RepairExhausted(
            "the model kept repeating a tool call after tool use was stopped: " + last,
            reason="repeated_call",
            turns=turns,
        )
    if errors:
        return RepairExhausted(
            f"the model's tool calls still failed after {state.call_error_repairs} repairs: "
            + errors[-1].message,
            reason="call_error",
            turns=turns,
        )
    return None
