"""Projected roles alternate: adjacent assistant replies become one (as Anthropic
reads same-role turns), with each call where it stood, so strict chat templates
("Conversation roles must alternate user/assistant") take every request."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamtools.model import ChatMessage, Thinking, ToolSpec
from streamtools.prompts import RENDERERS, get_renderer, project
from streamtools.transcript import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    Transcript,
    UserMessage,
)

CITY: Any = {"type": "object", "properties": {"city": {"type": "string"}}}
TOOLS = [ToolSpec(name="weather", description="Weather.", parameters=CITY)]
DIALECTS = sorted(RENDERERS)


def _roles_alternate(messages: list[ChatMessage]) -> bool:
    roles = [m.role for m in messages if m.role != "system"]
    pairs = zip(roles, roles[1:], strict=False)
    return not any(a == b and a in ("user", "assistant") for a, b in pairs)


@pytest.mark.parametrize("native", [False, True])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_two_assistant_messages_in_a_row_project_as_one_reply(dialect: str, native: bool) -> None:
    renderer = get_renderer(dialect)
    paris = ToolCall(id="c1", name="weather", arguments={"city": "Paris"})
    raw = renderer.render_call(paris)
    first = AssistantMessage(text="Let me look.", calls=(ToolCall(
        id="c1", name="weather", arguments={"city": "Paris"}, raw=raw, offset=12
    ),))
    transcript = Transcript(
        messages=[
            UserMessage(content="Weather in Paris?"),
            first,
            AssistantMessage(text="Checking now."),
            ToolResultMessage(call_id="c1", name="weather", content="sunny"),
        ]
    )
    sent = project(transcript, dialect, TOOLS, native=native)
    assert [m.role for m in sent if m.role != "system"][:2] == ["user", "assistant"]
    assert _roles_alternate(sent)
    (reply,) = [m for m in sent if m.role == "assistant"]
    if native:
        assert reply.content == "Let me look.\n\nChecking now."
        assert [c.id for c in reply.tool_calls] == ["c1"]
    else:  # the call where it stood: after the first text, before the second
        merged = AssistantMessage(
            text="Let me look.\n\nChecking now.", calls=first.calls
        )
        assert reply.content == renderer.render_reply(merged.text, merged.calls)
        if dialect != "json_object":  # the one that writes a reply as one JSON object
            content = reply.content
            where = content.index("Let me look."), content.index(raw), content.index("Checking")
            assert list(where) == sorted(where)
    # the result answers the call of the first message: no "no result" note, no orphan
    assert "No result was recorded" not in "".join(m.content for m in sent)
    assert "no such call" not in "".join(m.content for m in sent)


def test_merged_replies_keep_each_signed_block_before_its_own_calls() -> None:
    """A signed thinking block's place (``Thinking.calls``: the calls before it)
    counts the calls of the replies merged before its own, so the second reply's
    block goes back after the first reply's call, where it was, and not to the
    front (Anthropic refuses moved blocks in the latest assistant message)."""
    one = ToolCall(id="c1", name="weather", arguments={"city": "Paris"})
    two = ToolCall(id="c2", name="weather", arguments={"city": "Oslo"})
    transcript = Transcript(
        messages=[
            UserMessage(content="Paris and Oslo?"),
            AssistantMessage(calls=(one,), thinking=(Thinking(text="a", signature="s1"),)),
            AssistantMessage(calls=(two,), thinking=(Thinking(text="b", signature="s2"),)),
        ]
    )
    (reply,) = [m for m in project(transcript, "am_xml", TOOLS, native=True) if m.thinking]
    assert [(t.text, t.calls) for t in reply.thinking] == [("a", 0), ("b", 1)]
    assert [c.id for c in reply.tool_calls] == ["c1", "c2"]


_IDS = st.sampled_from(["c1", "c2", "c3"])
_TEXT = st.sampled_from(["", "ok", "Let me look.", "x\n", "`"])


@st.composite
def _calls(draw: st.DrawFn, dialect: str) -> ToolCall:
    call_id = draw(_IDS)
    arguments = {"city": draw(st.sampled_from(["Paris", "Oslo"]))}
    written = ToolCall(id=call_id, name="weather", arguments=arguments)
    return ToolCall(
        id=call_id,
        name=draw(st.sampled_from(["weather", "clock.now"])),
        arguments=arguments,
        raw=draw(st.sampled_from([None, get_renderer(dialect).render_call(written)])),
        offset=draw(st.none() | st.integers(-2, 20)),
        arguments_text=draw(st.sampled_from([None, '{"city": "Pa'])),
    )


def _messages(dialect: str) -> st.SearchStrategy[Message]:
    return st.one_of(
        st.builds(SystemMessage, content=_TEXT),
        st.builds(UserMessage, content=_TEXT),
        st.builds(
            AssistantMessage,
            text=_TEXT,
            calls=st.lists(_calls(dialect), max_size=3).map(tuple),
            reasoning=_TEXT,
        ),
        st.builds(
            ToolResultMessage, call_id=_IDS, name=st.just("weather"), content=_TEXT,
            is_error=st.booleans(),
        ),
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), dialect=st.sampled_from(DIALECTS), native=st.booleans())
def test_projected_roles_alternate_for_any_transcript(
    data: st.DataObject, dialect: str, native: bool
) -> None:
    messages = data.draw(st.lists(_messages(dialect), max_size=12))
    sent = project(Transcript(messages=messages), dialect, TOOLS, native=native)
    assert _roles_alternate(sent), [m.role for m in sent]
    assert all(m.role != "system" for m in sent[1:])
