"""OpenAI's custom (freeform) tools on chat completions, through the openai SDK.

A ``tools`` entry ``{"type": "custom", "custom": {...}}`` was a 400 ("expected
{'type': 'function', ...}"). It is now shown to the model as a tool with one
string parameter, and the call comes back in OpenAI's custom shape,
``{"type": "custom", "custom": {"name", "input"}}``, with the raw text; the
call can be sent back in the history and the tool named in ``tool_choice``."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from test_proxy import WEATHER, _openai, _stream, proxy
from test_proxy_responses import PATCH, PATCH_CALL, PATCH_GRAMMAR

from streamtools.testing.fake_server import Reply

USER: Any = [{"role": "user", "content": "fix a.py"}]
APPLY_PATCH: Any = {
    "type": "custom",
    "custom": {
        "name": "apply_patch",
        "description": "Edit files with a patch.",
        "format": {"type": "grammar", "grammar": {"syntax": "lark", "definition": PATCH_GRAMMAR}},
    },
}


def test_a_custom_tool_call_comes_back_whole_with_its_raw_text() -> None:
    with proxy([f"Patching. {PATCH_CALL}"]) as (url, upstream):
        reply = _openai(url).chat.completions.create(
            model="m", messages=USER, tools=[APPLY_PATCH, WEATHER]
        )
        shown = upstream.requests[0]["messages"][0]["content"]
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Patching. "
    (call,) = choice.message.tool_calls or []
    assert call.type == "custom"
    assert call.custom.name == "apply_patch" and call.custom.input == PATCH
    assert call.id
    # the model was told of it, with its grammar, beside the function tool
    assert "apply_patch" in shown and "lark grammar" in shown and "*** Begin Patch" in shown
    assert "weather" in shown


def test_a_custom_tool_call_streams_its_text_in_pieces() -> None:
    with proxy([f"Patching. {PATCH_CALL}"]) as (url, _):
        chunks, snapshot = _stream(_openai(url), model="m", messages=USER, tools=[APPLY_PATCH])
    deltas = [tc for c in chunks if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
    first, rest = deltas[0].to_dict(), [d.to_dict() for d in deltas[1:]]
    assert first["type"] == "custom" and first["custom"] == {"name": "apply_patch", "input": ""}
    assert first["id"] and first["index"] == 0
    assert len(rest) > 1 and all(set(d) == {"index", "custom"} for d in rest)
    assert "".join(d["custom"]["input"] for d in rest) == PATCH
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
    # the SDK's accumulator assembles the call as a whole reply has it
    (call,) = snapshot.choices[0].message.tool_calls or []
    assert call.to_dict()["custom"] == {"name": "apply_patch", "input": PATCH}


def test_a_past_custom_call_and_its_result_go_back_to_the_model() -> None:
    with proxy([PATCH_CALL, "Done."]) as (url, upstream):
        client = _openai(url)
        first = client.chat.completions.create(model="m", messages=USER, tools=[APPLY_PATCH])
        message = first.choices[0].message
        (call,) = message.tool_calls or []
        history: list[Any] = [
            *USER,
            message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": "applied"},
        ]
        second = client.chat.completions.create(model="m", messages=history, tools=[APPLY_PATCH])
        sent = upstream.requests[1]["messages"]
    assert second.choices[0].message.content == "Done."
    (assistant,) = [m["content"] for m in sent if m["role"] == "assistant"]
    assert '<am:tool_call name="apply_patch">' in assistant and "*** Update File: a.py" in assistant
    assert '<am:tool_result name="apply_patch">applied' in sent[-1]["content"]


def test_a_named_custom_choice_tells_the_model_that_tool() -> None:
    with proxy([PATCH_CALL]) as (url, upstream):
        reply = _openai(url).chat.completions.create(
            model="m", messages=USER, tools=[APPLY_PATCH, WEATHER],
            tool_choice={"type": "custom", "custom": {"name": "apply_patch"}},
        )
        sent = upstream.requests[0]["messages"]
    (call,) = reply.choices[0].message.tool_calls or []
    assert call.type == "custom" and call.custom.input == PATCH
    # every tool is shown (the prompt stays the same), the choice's is named last
    assert "apply_patch" in sent[0]["content"] and "weather" in sent[0]["content"]
    assert "must call the tool `apply_patch`" in sent[-1]["content"]


@pytest.mark.parametrize(
    ("tool", "said"),
    [
        ({"type": "custom"}, "tools[0]: a custom tool needs a 'custom' object"),
        ({"type": "custom", "custom": {"name": ""}}, "tools[0].custom: a tool needs"),
    ],
)
def test_a_malformed_custom_tool_is_a_400_that_names_it(tool: Any, said: str) -> None:
    with proxy([]) as (url, _):
        answer = httpx.post(
            f"{url}/v1/chat/completions",
            json={"model": "m", "messages": USER, "tools": [tool]},
            timeout=20,
        )
    assert answer.status_code == 400
    assert said in answer.json()["error"]["message"]


@pytest.mark.parametrize("stream", [False, True])
def test_a_custom_call_cut_by_the_token_limit_keeps_its_text_so_far(stream: bool) -> None:
    cut = PATCH_CALL[: PATCH_CALL.index("*** End Patch")]
    with proxy([Reply(text=cut, finish="length")]) as (url, _):
        client = _openai(url)
        if stream:
            chunks, snapshot = _stream(client, model="m", messages=USER, tools=[APPLY_PATCH])
            finish = [c.choices[0].finish_reason for c in chunks if c.choices][-1]
            (call,) = snapshot.choices[0].message.tool_calls or []
            text = call.to_dict()["custom"]["input"]
        else:
            reply = client.chat.completions.create(model="m", messages=USER, tools=[APPLY_PATCH])
            finish = reply.choices[0].finish_reason
            (whole,) = reply.choices[0].message.tool_calls or []
            assert whole.type == "custom"
            text = whole.custom.input
    assert finish == "length"
    assert text and PATCH.startswith(text) and "*** Update File: a.py" in text


def test_allowed_tools_may_name_a_custom_tool() -> None:
    allowed: Any = {
        "type": "allowed_tools",
        "allowed_tools": {"mode": "required", "tools": [
            {"type": "custom", "custom": {"name": "apply_patch"}},
        ]},
    }
    with proxy([PATCH_CALL]) as (url, upstream):
        reply = _openai(url).chat.completions.create(
            model="m", messages=USER, tools=[APPLY_PATCH, WEATHER], tool_choice=allowed
        )
        sent = upstream.requests[0]["messages"]
    (call,) = reply.choices[0].message.tool_calls or []
    assert call.type == "custom" and call.custom.input == PATCH
    assert "apply_patch" in sent[0]["content"] and "weather" in sent[0]["content"]
    assert "must call at least one of these tools: `apply_patch`." in sent[-1]["content"]
