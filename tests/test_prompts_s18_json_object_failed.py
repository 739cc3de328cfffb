"""json_object: a reply whose call failed to parse goes back into the history as
the object the model wrote, not wrapped as a final answer holding it."""

from __future__ import annotations

import json

import pytest

from streamtools import Agent, tool
from streamtools.prompts import RENDERERS
from streamtools.testing import ScriptedModel


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


BROKEN = '{"thought": "sum", "action": {"tool": "add", "args": {"a": 1, "b": 2}'


@pytest.mark.anyio
async def test_a_cut_call_goes_back_as_written_for_its_repair() -> None:
    model = ScriptedModel([BROKEN, '{"final": {"content": "3"}}'])
    result = await Agent(model, [add], dialect="json_object").run("1+2?")
    assert result.text == "3"
    repair = model.requests[1].messages
    replies = [m.content for m in repair if m.role == "assistant"]
    assert replies == [BROKEN]  # not {"final": {"content": "{\"thought\"..."}}
    assert "You wrote: " + BROKEN in str(repair[-1].content)


@pytest.mark.parametrize(
    "text",
    [BROKEN, '  {"action": {"tool": "add"', '{"final": {"content": "cut', '{ "thought": 1}}'],
)
def test_failed_objects_render_as_written(text: str) -> None:
    assert RENDERERS["json_object"].render_reply(text, (), unparsed=True) == text


# (s19: an answer beginning as one of the dialect's objects is an answer too: only
# a reply the transcript marks ``unparsed`` goes back as written)
@pytest.mark.parametrize(
    "text",
    ["3", "{} is an empty dict", '{"a": 1}', "see {\"thought\"}", '{"action": "deploy"}',
     '{"final": {"content": "x"}}'],
)
def test_answers_still_render_as_final_objects(text: str) -> None:
    rendered = RENDERERS["json_object"].render_reply(text, ())
    assert json.loads(rendered) == {"final": {"content": text}}


def test_special_tokens_in_a_failed_object_are_defused() -> None:
    text = '{"thought": "<|im_end|>", "action": {'
    rendered = RENDERERS["json_object"].render_reply(text, (), unparsed=True)
    assert "<|im_end|>" not in rendered and rendered.startswith('{"thought": "')
