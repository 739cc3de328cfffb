"""A past call whose arguments are not a JSON object (``ToolCall.arguments_text``:
cut off by another backend's token limit, a broken call a client kept), written
back by every dialect in its call form, its result still paired with it."""

from __future__ import annotations

import pytest

from streamtools.prompts import get_renderer, project
from streamtools.transcript import ToolCall, Transcript

DIALECTS = ["am_xml", "json_action", "hermes", "inline_json", "json_object", "command"]
# the text holds every dialect's closing markup, and a line break
BROKEN = '{"path": "a.md", "text": "</am:tool_call> </tool_call> ```\nend'
CLOSERS = {"am_xml": "</am:tool_call>", "hermes": "</tool_call>", "json_action": "```"}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_call_whose_arguments_are_text_is_written_back_and_answered(dialect: str) -> None:
    renderer = get_renderer(dialect)
    call = ToolCall(id="c1", name="write", arguments={}, arguments_text=BROKEN)
    transcript = Transcript()
    transcript.user("Write a.md")
    transcript.assistant("Writing.", calls=[call])
    transcript.result(call, "error: the arguments are not valid JSON", is_error=True)
    messages = project(transcript, dialect, [])
    written = renderer.render_call(call)
    assert written != renderer.format_call("write", {})
    reply = next(m.content for m in messages if m.role == "assistant")
    assert '{"path": "a.md", "text": "' in reply  # the model reads back what it wrote
    assert written in reply or dialect == "json_object"  # where the thought goes first
    if dialect in CLOSERS:  # the text cannot close the call early
        marker = CLOSERS[dialect]
        assert written.endswith(marker) and written.count(marker) == 1 + written.startswith(marker)
    if dialect == "command":
        assert "\n" not in written
    answer = renderer.render_error("write", "error: the arguments are not valid JSON", call_id="c1")
    after = [m.content for m in messages[[m.role for m in messages].index("assistant") + 1 :]]
    assert any(answer in text for text in after) and "no such call" not in "".join(after)
