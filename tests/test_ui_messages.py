"""Chat request bodies (AI SDK useChat form and the simple form) to transcripts."""

from __future__ import annotations

import msgspec
import pytest

from streamtools.transcript import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from streamtools.ui import ChatRequestError, parse_chat_request


def body(obj: object) -> bytes:
    return msgspec.json.encode(obj)


def test_use_chat_messages_with_steps_and_tools_become_a_transcript() -> None:
    request = {
        "id": "chat-1",
        "trigger": "submit-message",
        "messages": [
            {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Weather in Paris?"}]},
            {
                "id": "a1",
                "role": "assistant",
                "parts": [
                    {"type": "step-start"},
                    {"type": "reasoning", "text": "look it up", "state": "done"},
                    {"type": "text", "text": "Checking.", "state": "done"},
                    {
                        "type": "dynamic-tool",
                        "toolName": "weather",
                        "toolCallId": "call_0",
                        "state": "output-available",
                        "input": {"city": "Paris"},
                        "output": "18C",
                    },
                    {
                        "type": "tool-search",
                        "toolCallId": "call_1",
                        "state": "output-error",
                        "input": {"q": "x"},
                        "errorText": "boom",
                    },
                    {"type": "tool-search", "toolCallId": "call_2", "state": "input-streaming"},
                    {"type": "step-start"},
                    {"type": "text", "text": "It is 18C."},
                    {"type": "file", "url": "x", "mediaType": "image/png"},
                ],
            },
            {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "Thanks"}]},
        ],
    }
    transcript = parse_chat_request(body(request))
    assert transcript.messages == [
        UserMessage(content="Weather in Paris?"),
        AssistantMessage(
            text="Checking.",
            reasoning="look it up",
            calls=(
                ToolCall(id="call_0", name="weather", arguments={"city": "Paris"}),
                ToolCall(id="call_1", name="search", arguments={"q": "x"}),
            ),
        ),
        ToolResultMessage(call_id="call_0", name="weather", content="18C"),
        ToolResultMessage(call_id="call_1", name="search", content="boom", is_error=True),
        AssistantMessage(text="It is 18C."),
        UserMessage(content="Thanks"),
    ]


def test_the_simple_form_and_structured_outputs() -> None:
    transcript = parse_chat_request(
        body(
            {
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": "hello"},
                    {"role": "user", "content": "bye"},
                ]
            }
        )
    )
    assert transcript.messages == [
        SystemMessage(content="Be brief."),
        UserMessage(content="hi"),
        AssistantMessage(text="hello"),
        UserMessage(content="bye"),
    ]
    tool = {"type": "dynamic-tool", "toolName": "f", "toolCallId": "c", "state": "output-available"}
    request = {
        "messages": [
            {"role": "user", "parts": [{"type": "text", "text": "q"}]},
            {"role": "assistant", "parts": [{**tool, "input": {}, "output": {"n": 1}}]},
            {"role": "user", "parts": [{"type": "text", "text": "q2"}]},
        ]
    }
    result = parse_chat_request(body(request)).messages[2]
    assert result == ToolResultMessage(call_id="c", name="f", content='{"n":1}')


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"{", "request body is not valid JSON: Input data was truncated"),
        (b"[]", "invalid chat request: Expected `object`, got `array`"),
        pytest.param(
            b'{"messages": [{"role": "user", "parts": [{"type": "text", "input": '
            + b"[" * 5000 + b"]" * 5000 + b"}]}]}",
            "request body is nested too deeply",
            id="nested-too-deeply",
        ),
        (b"{}", "invalid chat request: Object missing required field `messages`"),
        (
            b'{"messages": [{"role": "robot", "content": "x"}]}',
            "invalid chat request: Invalid enum value 'robot' - at `$.messages[0].role`",
        ),
        (
            b'{"messages": [{"role": "user"}]}',
            "message 0 has neither `parts` nor `content` - at `$.messages[0]`",
        ),
        (b'{"messages": []}', "the conversation must end with a user message"),
        (
            b'{"messages": [{"role": "user", "content": "a"},'
            b' {"role": "assistant", "content": "b"}]}',
            "the conversation must end with a user message",
        ),
        (
            b'{"messages": [{"role": "assistant", "parts": [{"type": "dynamic-tool"}]}]}',
            "tool part without a name or `toolCallId` - at `$.messages[0].parts`",
        ),
    ],
)
def test_malformed_bodies_raise_with_a_message_naming_the_problem(raw: bytes, message: str) -> None:
    with pytest.raises(ChatRequestError) as info:
        parse_chat_request(raw)
    assert str(info.value) == message


def test_a_lone_surrogate_escape_from_the_browser_is_read_as_u_fffd() -> None:
    # JSON.stringify writes a string cut inside an emoji as a lone \\ud83d; a
    # conversation keeping it could never be sent again
    body = (
        b'{"messages": [{"role": "user", "content": "cut \\ud83d here, whole \\ud83d\\ude00,'
        b' escaped \\\\ud83d"}]}'
    )
    (message,) = parse_chat_request(body).messages
    assert message == UserMessage(content="cut \ufffd here, whole \U0001f600, escaped \\ud83d")
    with pytest.raises(ChatRequestError, match="not valid JSON"):  # broken otherwise: still
        parse_chat_request(body.replace(b"]}", b"]"))


def test_a_call_whose_input_is_not_an_object_keeps_its_text() -> None:
    """A ``tool-input-error`` (a malformed or cut-off call) comes back from useChat
    with the model's text as ``input`` (``rawInput`` on a static tool part); read
    as ``{}``, the next turn showed the model a clean call it never made. In a
    prompt dialect that text is the model's markup, written back as it was."""
    cut = '{"city": "Par'
    markup = '<tool_call>{"name": "weather", "arguments": {"city": }</tool_call>'
    parts = [
        {"type": "step-start"},
        {
            "type": "dynamic-tool",
            "toolName": "weather",
            "toolCallId": "call_0",
            "state": "output-error",
            "input": cut,
            "errorText": "The arguments are not valid JSON.",
        },
        {
            "type": "tool-weather",
            "toolCallId": "call_1",
            "state": "output-error",
            "rawInput": "[1, 2]",
            "errorText": "must be an object",
        },
        {
            "type": "tool-weather",
            "toolCallId": "call_2",
            "state": "output-available",
            "input": '{"city": "Oslo"}',
            "output": "3C",
        },
        {
            "type": "dynamic-tool",
            "toolName": "weather",
            "toolCallId": "call_3",
            "state": "output-error",
            "input": markup,
            "errorText": "not valid JSON",
        },
    ]
    transcript = parse_chat_request(
        body(
            {
                "messages": [
                    {"role": "user", "parts": [{"type": "text", "text": "Weather?"}]},
                    {"role": "assistant", "parts": parts},
                    {"role": "user", "parts": [{"type": "text", "text": "Again"}]},
                ]
            }
        )
    )
    reply = transcript.messages[1]
    assert isinstance(reply, AssistantMessage)
    assert reply.calls == (
        ToolCall(id="call_0", name="weather", arguments={}, arguments_text=cut, raw=cut),
        ToolCall(id="call_1", name="weather", arguments={}, arguments_text="[1, 2]", raw="[1, 2]"),
        ToolCall(id="call_2", name="weather", arguments={"city": "Oslo"}),
        ToolCall(id="call_3", name="weather", arguments={}, arguments_text=markup, raw=markup),
    )
    from streamtools.prompts import project

    history = "\n".join(m.content for m in project(transcript, "hermes", []))
    assert '{"name": "weather", "arguments": {"city": "Par}' in history
    assert '"arguments": [1, 2]}' in history
    assert f"\n{markup}\n" in history and history.count("<tool_call>") == 4


def test_calls_keep_their_place_among_the_text_of_their_step() -> None:
    """Text, call, text, call in one step (dialects with several calls per reply)
    was read back as all the text, then all the calls: the model read a reply
    in another order than it wrote it."""
    parts = [
        {"type": "step-start"},
        {"type": "text", "text": "First I add."},
        {
            "type": "dynamic-tool",
            "toolName": "add",
            "toolCallId": "c1",
            "state": "output-available",
            "input": {"a": 1},
            "output": "1",
        },
        {"type": "text", "text": "Then again."},
        {
            "type": "dynamic-tool",
            "toolName": "add",
            "toolCallId": "c2",
            "state": "output-available",
            "input": {"a": 2},
            "output": "2",
        },
    ]
    transcript = parse_chat_request(
        body(
            {
                "messages": [
                    {"role": "user", "content": "Add"},
                    {"role": "assistant", "parts": parts},
                    {"role": "user", "content": "Again"},
                ]
            }
        )
    )
    from streamtools.prompts import project

    [reply] = [m.content for m in project(transcript, "json_action", []) if m.role == "assistant"]
    first, second = reply.index('"a": 1'), reply.index('"a": 2')
    assert reply.index("First I add.") < first < reply.index("Then again.") < second
