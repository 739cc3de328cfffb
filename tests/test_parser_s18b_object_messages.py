"""``json_object``: a reply object with no action and no final answer the dialect
reads was told "The reply has neither an action nor a final answer" whatever it
had, LangChain's ``{"action": "search", "action_input": {…}}`` included, where an
``action`` key is right there: the model, told it wrote no action, cannot see
what to change. The message now says what the object has instead and where it
goes (the action is an object holding the tool's name and its ``args``; a call
written flat goes under ``action``; an answer under another key goes under
``final``); only an object with none of these keeps the old words."""

from __future__ import annotations

import pytest
from parser_cases import F, every_chunking, run_checked

from streamtools.events import CallError

TOOLS = ["search"]


def message(text: str) -> str:
    errors = [e for e in run_checked("json_object", [text], TOOLS) if isinstance(e, CallError)]
    assert len(errors) == 1 and errors[0].reason == "malformed"
    return errors[0].message


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"thought": "look", "action": "search", "action_input": {"q": "cats"}}',
         '"action" is the tool\'s name alone, with its arguments under "action_input" beside '
         'it: the action is an object that holds both, {"action": {"tool": "search", '
         '"args": {...}}}.'),
        ('{"action": "search"}',
         '"action" is the tool\'s name alone: the action is an object that holds both, '
         '{"action": {"tool": "search", "args": {...}}}.'),
        ('{"action": "Final Answer", "action_input": "Paris"}',
         '"Final Answer" is no tool: give the answer as {"final": {"content": "..."}}, '
         "not as an action."),
        ('{"action": null}', '"action" must be an object, {"action": {"tool": "TOOL", '
                             '"args": {...}}}.'),
        ('{"action": [{"tool": "search"}]}', "(one call per reply)."),
        ('{"thought": "t", "tool": "search", "args": {"q": 1}}',
         'The call must be under "action": write {"action": {"tool": "search", "args": '
         '{...}}}.'),
        ('{"name": "search", "arguments": {"q": 1}}', 'The call must be under "action"'),
        ('{"final_answer": "Paris"}',
         'The answer goes under "final", not "final_answer": {"final": {"content": "..."}}.'),
        ('{"final": {"answer": "Paris"}}',
         'The final answer goes under "content": {"final": {"content": "..."}}.'),
        ('{"action": {"args": {"q": 1}}}', 'The action names no tool: put its name under "tool".'),
    ],
)
def test_the_message_says_what_the_object_has_instead(text: str, says: str) -> None:
    got = message(text)
    assert says in got
    assert "neither" not in got
    assert got.endswith('{"thought": "...", "final": {"content": "..."}}.')  # the form whole
    thought = [("think", text.split('"')[3])] if text.startswith('{"thought"') else []
    every_chunking("json_object", text, TOOLS, [*thought, ("error", None, "malformed"), F])


def test_an_object_with_nothing_the_dialect_reads_keeps_the_old_words() -> None:
    for text in ('{"thought": "hmm"}', '{"mood": 1}'):
        assert message(text).startswith("The reply has neither an action nor a final answer.")


def test_a_fenced_object_gets_the_same_message() -> None:
    text = '```json\n{"action": "search", "action_input": {"q": "cats"}}\n```'
    assert message(text).startswith('"action" is the tool\'s name alone')
