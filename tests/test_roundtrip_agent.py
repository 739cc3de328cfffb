"""One conversation, two wires: a model that calls tools natively (tool-call
deltas) and one that writes the same calls as text in a dialect, the way the
prompt teaches, give the agent the same transcript: the same words, the same
calls with the same arguments, the same results."""

from __future__ import annotations

import json
import random
from typing import Any

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamtools.model import CallChunk, Chunk, FinishChunk, TextChunk
from streamtools.prompts import RENDERERS, get_renderer
from streamtools.runtime.agent import Agent
from streamtools.testing.scripted import ScriptedModel, ScriptedReply
from streamtools.tools import tool
from streamtools.transcript import AssistantMessage, ToolCall, ToolResultMessage, UserMessage

_MARKUP = [
    *["</am:tool_call>", "]]>", "<![CDATA[", "<tool_call>", "</tool_call>", "```", "@tool"],
    *["\n@tool t {}", "<think>", "</think>", "&", "<", "\\", '"', "\n", " ", "é", "😀", "中文"],
    *["{", "}", "`", "<|im_end|>", "null", "  "],
]
_awkward = st.lists(st.sampled_from(_MARKUP) | st.text(max_size=3), max_size=5).map("".join)


@tool
def echo(text: str, n: int = 1, tags: list[str] | None = None, note: str | None = None) -> str:
    """Echo the text."""
    return text


@tool(name="ns.sum")
def total(values: list[float]) -> str:
    """Add the values."""
    return str(sum(values))


@tool
def now() -> str:
    """The time."""
    return "12:00"


def _echo(
    text: str, n: int | None, tags: list[str] | None, note: str | None
) -> tuple[str, dict[str, Any]]:
    """An ``echo`` call; ``n`` and ``tags`` left out when None, ``note`` sent as
    null (as OpenAI's strict mode sends every optional parameter)."""
    given = {"text": text, "n": n, "tags": tags}
    return ("echo", {**{k: v for k, v in given.items() if v is not None}, "note": note})


_calls: st.SearchStrategy[tuple[str, dict[str, Any]]] = st.one_of(
    st.just(("now", {})),
    st.builds(
        _echo,
        _awkward,
        st.none() | st.integers(-(10**6), 10**6),
        st.none() | st.lists(_awkward, max_size=2),
        st.none() | _awkward,
    ),
    st.builds(
        lambda v: ("ns.sum", {"values": v}),
        st.lists(st.integers(-100, 100) | st.floats(-1e6, 1e6, width=32), max_size=3),
    ),
)


def _native(text: str, calls: list[tuple[str, dict[str, Any]]], rng: random.Random) -> list[Chunk]:
    """The reply as tool-call deltas, each call's arguments cut in two (a call
    without arguments sometimes sends none, as some servers do)."""
    chunks: list[Chunk] = [TextChunk(text=text)] if text else []
    for index, (name, arguments) in enumerate(calls):
        wire = json.dumps(arguments, ensure_ascii=False) if arguments or rng.random() < 0.5 else ""
        cut = rng.randint(0, len(wire))
        chunks.append(CallChunk(index=index, id=f"n{index}", name=name, arguments=wire[:cut]))
        chunks.append(CallChunk(index=index, arguments=wire[cut:]))
    return [*chunks, FinishChunk(reason="tool_calls" if calls else "stop")]


def _written(dialect: str, text: str, calls: list[tuple[str, dict[str, Any]]]) -> str:
    """The reply as the dialect's text: the words, then each call as taught."""
    made = [ToolCall(id=f"x{i}", name=name, arguments=a) for i, (name, a) in enumerate(calls)]
    return get_renderer(dialect).render_reply(text, made)


def _transcript(dialect: str, turns: list[tuple[str, list[Any]]], seed: int) -> list[Any]:
    """What the agent records of ``turns`` over one wire, up to layout."""
    rng = random.Random(seed)
    replies: list[ScriptedReply]
    if dialect == "native":
        replies = [_native(text, calls, rng) for text, calls in turns]
    else:
        replies = [_written(dialect, text, calls) for text, calls in turns]
    model = ScriptedModel(replies, seed=seed, chunk_sizes=(1, 9))
    native = dialect == "native"
    agent = Agent(model, [echo, total, now], dialect="am_xml" if native else dialect, native=native)

    async def run() -> list[Any]:
        with anyio.fail_after(20):
            result = await agent.run("Go.")
        out: list[Any] = []
        for m in result.transcript.messages:
            if isinstance(m, AssistantMessage):
                words = " ".join(m.text.split())  # a canonical call sits on a line of its own
                out.append(("assistant", words, [(c.name, c.arguments) for c in m.calls]))
            elif isinstance(m, ToolResultMessage):
                out.append(("result", m.name, m.content, m.is_error))
            elif isinstance(m, UserMessage):
                out.append(("user", m.content))
        return out

    return anyio.run(run)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dialect=st.sampled_from(list(RENDERERS)),
    text=st.sampled_from(["", "Working on it.", "Sure:"]),
    # the same call twice in one reply: whether the second's refusal quotes the first's
    # result depends on which finished first (eager dispatch)
    calls=st.lists(_calls, min_size=1, max_size=2, unique_by=lambda c: json.dumps(c)),
    final=st.sampled_from(["Done.", "All good 😀"]),
    seed=st.integers(0, 1000),
)
def test_native_and_text_calls_of_one_conversation_give_one_transcript(
    dialect: str, text: str, calls: list[Any], final: str, seed: int
) -> None:
    """In ``json_object`` the words become the thought and one call is allowed
    per reply: there the calls and results are compared. ``am_xml`` cannot
    carry a null for a string parameter (``test_roundtrip_layers``' xfail)."""
    if RENDERERS[dialect].one_call_per_reply:
        calls = calls[:1]
    if dialect == "am_xml" and any(a.get("note", "") is None for _, a in calls):
        return
    turns = [(text, calls), (final, [])]
    native, written = _transcript("native", turns, seed), _transcript(dialect, turns, seed)
    if dialect == "json_object":
        native = [m for m in native if m[0] != "assistant"]
        written = [m for m in written if m[0] != "assistant"]
    assert written == native
