"""The proxy's OpenAI Responses endpoint (``POST /v1/responses``), with the
official ``openai`` SDK as the client (its stream accumulator included), Uvicorn
on 127.0.0.1, and ``FakeServer`` as the plain-chat upstream."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from test_proxy import PARIS, TIME, UTC, WEATHER, _openai, proxy

from streamtools.testing.fake_server import Reply

# the chat fixtures' tools, as the Responses API writes them (flat)
FN_WEATHER: Any = {"type": "function", **WEATHER["function"]}
FN_TIME: Any = {"type": "function", **TIME["function"]}


def test_streamed_call_as_the_sdk_assembles_it() -> None:
    with proxy([f"Let me check. {PARIS}"]) as (url, upstream):
        with _openai(url).responses.stream(
            model="plain-7b", input="Weather in Paris?", tools=[FN_WEATHER],
            instructions="Be brief.",
        ) as stream:
            events = list(stream)
            final = stream.get_final_response()
        sent = upstream.received[0].body
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    # text first, as one message item, closed before the call's item opens
    assert kinds.index("response.output_text.done") < kinds.index("response.output_item.done")
    call_added = [e for e in events if e.type == "response.output_item.added"][1]
    assert call_added.item.type == "function_call" and call_added.item.arguments == ""
    fragments = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert fragments and json.loads("".join(fragments)) == {"city": "Paris"}
    assert final.status == "completed" and final.output_text == "Let me check. "
    message, call = final.output
    assert message.type == "message" and call.type == "function_call"
    assert call.name == "weather" and json.loads(call.arguments) == {"city": "Paris"}
    assert call.call_id.startswith("call_") and call.status == "completed"
    usage = final.usage
    assert usage is not None  # the upstream's count (FakeServer: its body's length / 4)
    assert usage.input_tokens == len(json.dumps(sent)) // 4 and usage.output_tokens > 0
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    assert final.tools[0].name == "weather" and final.parallel_tool_calls is True  # type: ignore[union-attr]
    # the upstream saw a plain chat request: tools and instructions in the system prompt
    assert "tools" not in sent and "<am:tools>" in sent["messages"][0]["content"]
    assert "Be brief." in sent["messages"][0]["content"]


def test_non_streaming_parallel_calls() -> None:
    with proxy([f"{PARIS}\n{UTC}"]) as (url, _):
        response = _openai(url).responses.create(
            model="m", input="Weather and time?", tools=[FN_WEATHER, FN_TIME]
        )
    assert response.status == "completed" and response.output_text == ""
    items = [c for c in response.output if c.type == "function_call"]
    calls = [(c.name, json.loads(c.arguments)) for c in items]
    assert calls == [("weather", {"city": "Paris"}), ("clock.now", {"tz": "UTC"})]
    assert len({c.call_id for c in items}) == 2


@pytest.mark.parametrize("stream", [False, True])
def test_two_step_conversation_from_the_request_alone(stream: bool) -> None:
    with proxy([PARIS, "Paris is sunny."]) as (url, upstream):
        client = _openai(url)
        first = client.responses.create(model="m", input="Weather in Paris?", tools=[FN_WEATHER])
        (call,) = [item for item in first.output if item.type == "function_call"]
        history: list[Any] = [
            {"role": "user", "content": "Weather in Paris?"},
            *[item.model_dump(exclude_none=True) for item in first.output],
            {"type": "function_call_output", "call_id": call.call_id, "output": "sunny, 24 C"},
        ]
        second: Any
        if stream:
            with client.responses.stream(model="m", input=history, tools=[FN_WEATHER]) as events:
                second = events.get_final_response()
        else:
            second = client.responses.create(model="m", input=history, tools=[FN_WEATHER])
        sent = upstream.received[1].body
    assert second.output_text == "Paris is sunny."
    assert not [item for item in second.output if item.type == "function_call"]
    # the call and its result were written back as dialect text, from this request alone
    text = json.dumps(sent["messages"])
    assert "sunny, 24 C" in text and "am:tool_call" in text and "Paris" in text


def test_a_turn_of_text_and_parallel_calls_is_one_assistant_message() -> None:
    # input items as the SDK's output gives them: a message, two function_call
    # items, then their outputs; written back as the model's own turn and results
    with proxy([f"Checking both. {PARIS}\n{UTC}", "Sunny at noon."]) as (url, upstream):
        client = _openai(url)
        first = client.responses.create(
            model="m", input="Weather and time?", tools=[FN_WEATHER, FN_TIME]
        )
        calls = [item for item in first.output if item.type == "function_call"]
        results = {"weather": "sunny", "clock.now": "noon"}
        history: list[Any] = [
            {"role": "user", "content": "Weather and time?"},
            *[item.model_dump(exclude_none=True) for item in first.output],
            *[
                {"type": "function_call_output", "call_id": c.call_id, "output": results[c.name]}
                for c in calls
            ],
        ]
        second = client.responses.create(model="m", input=history, tools=[FN_WEATHER, FN_TIME])
        sent = upstream.received[1].body["messages"]
    assert [item.type for item in first.output] == ["message", "function_call", "function_call"]
    assert second.output_text == "Sunny at noon."
    assistant = [m for m in sent if m["role"] == "assistant"]
    assert len(assistant) == 1 and assistant[0]["content"].startswith("Checking both.")
    assert assistant[0]["content"].count("<am:tool_call") == 2
    after = sent[-1]["content"]  # each result under the name of the call it answers
    assert '<am:tool_result name="weather">sunny' in after
    assert '<am:tool_result name="clock.now">noon' in after


PATCH_GRAMMAR = 'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF'
APPLY_PATCH: Any = {
    "type": "custom",
    "name": "apply_patch",
    "description": "Edit files with a patch.",
    "format": {"type": "grammar", "syntax": "lark", "definition": PATCH_GRAMMAR},
}
# what a model writes for it in am_xml: raw text, no JSON escaping
PATCH = '*** Begin Patch\n*** Update File: a.py\n-x = "1"\n+x = "2" # \\ é 😀\n*** End Patch'
PATCH_CALL = f'<am:tool_call name="apply_patch"><input><![CDATA[{PATCH}]]></input></am:tool_call>'


@pytest.mark.parametrize("stream", [False, True])
def test_custom_tool_gets_its_raw_text(stream: bool) -> None:
    # Codex declares apply_patch as a custom (freeform) tool: the model is shown one
    # string parameter with the grammar, and the client gets a custom_tool_call
    # whose input is the text itself; its output goes back as a custom_tool_call_output
    with proxy([f"Patching. {PATCH_CALL}", "Done."]) as (url, upstream):
        client = _openai(url)
        kinds: list[str] = []
        first: Any
        if stream:
            with client.responses.stream(model="m", input="fix a.py", tools=[APPLY_PATCH]) as s:
                events = list(s)
                first = s.get_final_response()
            kinds = [e.type for e in events]
            deltas = [e.delta for e in events if e.type == "response.custom_tool_call_input.delta"]
            assert len(deltas) > 1 and "".join(deltas) == PATCH  # streamed, decoded
        else:
            first = client.responses.create(model="m", input="fix a.py", tools=[APPLY_PATCH])
        (call,) = [o for o in first.output if o.type == "custom_tool_call"]
        history: list[Any] = [
            {"role": "user", "content": "fix a.py"},
            *[o.model_dump(exclude_none=True) for o in first.output],
            {"type": "custom_tool_call_output", "call_id": call.call_id, "output": "applied"},
        ]
        second = client.responses.create(model="m", input=history, tools=[APPLY_PATCH])
        shown, sent_back = upstream.received[0].body, upstream.received[1].body
    assert call.name == "apply_patch" and call.input == PATCH
    assert not stream or kinds.index("response.custom_tool_call_input.done") < kinds.index(
        "response.completed"
    )
    assert first.tools[0].type == "custom"
    assert second.output_text == "Done."
    system = shown["messages"][0]["content"]
    assert "apply_patch" in system and "lark grammar" in system and "*** Begin Patch" in system
    # the call went back as the model wrote it, its result under its name
    (assistant,) = [m["content"] for m in sent_back["messages"] if m["role"] == "assistant"]
    assert '<am:tool_call name="apply_patch">' in assistant and "*** Update File: a.py" in assistant
    assert '<am:tool_result name="apply_patch">applied' in sent_back["messages"][-1]["content"]


def test_custom_tool_text_that_looks_like_json_stays_text() -> None:
    # a custom tool's input is raw text: JSON-looking text was decoded, then
    # written back as '{"input":{...}}'
    text = '{"query": [1, 2]}'
    call_text = f'<am:tool_call name="apply_patch"><input>{text}</input></am:tool_call>'
    with proxy([call_text]) as (url, _):
        response = _openai(url).responses.create(model="m", input="q", tools=[APPLY_PATCH])
    (call,) = [o for o in response.output if o.type == "custom_tool_call"]
    assert call.input == text


def test_tool_choice_required_and_named() -> None:
    with proxy(["It is nice out.", PARIS, PARIS]) as (url, upstream):
        client = _openai(url)
        required = client.responses.create(
            model="m", input="Paris?", tools=[FN_WEATHER], tool_choice="required"
        )
        named = client.responses.create(
            model="m", input="Paris?", tools=[FN_WEATHER, FN_TIME],
            tool_choice={"type": "function", "name": "weather"},
        )
        assert len(upstream.received) == 3  # one re-prompt for the answer without a call
    assert [o.type for o in required.output] == ["function_call"]  # first answer discarded
    assert required.tool_choice == "required"
    assert [o.type for o in named.output] == ["function_call"]
    assert named.tool_choice.name == "weather"  # type: ignore[union-attr]


def test_text_answer_and_token_limit() -> None:
    with proxy(["Hello there.", Reply(text="A long story", finish="length")]) as (url, _):
        client = _openai(url)
        hello = client.responses.create(model="m", input="hi")
        with client.responses.stream(model="m", input="tell", max_output_tokens=16) as events:
            kinds = [e.type for e in events]
            cut = events.get_final_response() if "response.completed" in kinds else None
    assert hello.output_text == "Hello there." and hello.status == "completed"
    assert kinds[-1] == "response.incomplete" and cut is None


def test_requests_the_proxy_cannot_serve_are_400s() -> None:
    with proxy(["never sent"]) as (url, upstream):
        client = _openai(url)
        bad: list[tuple[dict[str, Any], str]] = [
            ({"previous_response_id": "resp_1"}, "keeps no state"),
            ({"prompt": {"id": "pmpt_1", "variables": {"city": "Paris"}}}, "prompt is not"),
            (
                {"tools": [{"type": "namespace", "name": "n", "tools": [{"type": "web_search"}]}]},
                "expected a function, custom or namespace tool inside namespace 'n'",
            ),
            ({"tools": [{"type": "namespace", "tools": [FN_WEATHER]}]}, "needs a string 'name'"),
            ({"input": [{"type": "item_reference", "id": "msg_1"}]}, "item_reference"),
            ({"input": [{"role": "user", "content": [{"type": "input_video"}]}]}, "text only"),
            ({"input": []}, "no 'instructions' to answer"),  # with them: s19_empty_input
            (
                {"input": [{"type": "function_call", "call_id": "c", "name": "a", "arguments": 5}]},
                "input\\[0\\]: arguments must be a string of JSON",
            ),
            ({"top_p": "high"}, "top_p must be a number"),
            ({"stream": "false"}, "stream must be a boolean"),
            ({"max_output_tokens": "7"}, "max_output_tokens must be a positive integer"),
            ({"parallel_tool_calls": "no"}, "parallel_tool_calls must be a boolean"),
        ]
        for extra, says in bad:
            body: dict[str, Any] = {"input": "hi", **extra}
            with pytest.raises(openai.BadRequestError, match=says):
                client.responses.create(model="m", **body)
        assert upstream.received == []


def test_upstream_errors_before_and_during_the_stream() -> None:
    refuse = Reply(status=429, body='{"error": {"message": "slow down"}}', retry_after=0)
    with proxy([refuse]) as (url, _):
        with pytest.raises(openai.RateLimitError, match="slow down"):
            _openai(url).responses.create(model="m", input="hi", stream=True)
    with proxy([Reply(text=f"Checking {PARIS}", cut_after=12)]) as (url, _):
        with _openai(url).responses.stream(
            model="m", input="Paris?", tools=[FN_WEATHER]
        ) as stream:
            events = list(stream)
    error, failed = events[-2:]
    assert error.type == "error" and "upstream" in error.message
    assert failed.type == "response.failed" and failed.response.status == "failed"
    assert failed.response.error is not None and "upstream" in failed.response.error.message
    # the Responses API's code for a server's failure (Codex reads the code), in both
    assert error.code == failed.response.error.code == "server_error"


# Codex (0.144 and later) declares its tools in an ``additional_tools`` input item, in
# namespaces, and sends the built-in web_search tool by default
CODEX_TOOLS: Any = {
    "type": "additional_tools",
    "role": "developer",
    "tools": [
        {"type": "namespace", "name": "functions", "description": "Codex tools",
         "tools": [FN_WEATHER, APPLY_PATCH]},
    ],
}
NS_PARIS = '<am:tool_call name="functions.weather"><city>Paris</city></am:tool_call>'


@pytest.mark.parametrize("stream", [False, True])
def test_codex_additional_tools_in_a_namespace(stream: bool) -> None:
    with proxy([f"Checking. {NS_PARIS}", "Sunny."]) as (url, upstream):
        client = _openai(url)
        asked: Any = {
            "model": "m",
            "input": [CODEX_TOOLS, {"role": "user", "content": "Weather in Paris?"}],
            "tools": [{"type": "web_search"}],  # built in: left out, not a 400
        }
        first: Any
        if stream:
            with client.responses.stream(**asked) as events:
                added = [e.item for e in events if e.type == "response.output_item.added"]
                first = events.get_final_response()
            assert added[-1].model_dump()["namespace"] == "functions"
        else:
            first = client.responses.create(**asked)
        (call,) = [o for o in first.output if o.type == "function_call"]
        item = call.model_dump(exclude_none=True)
        history: list[Any] = [
            CODEX_TOOLS,
            {"role": "user", "content": "Weather in Paris?"},
            *[o.model_dump(exclude_none=True) for o in first.output],
            {"type": "function_call_output", "call_id": call.call_id, "output": "sunny"},
        ]
        second = client.responses.create(model="m", input=history)
        shown, sent_back = upstream.received[0].body, upstream.received[1].body
    # the client gets the tool's own name and its namespace, as OpenAI writes them
    assert (item["name"], item["namespace"]) == ("weather", "functions")
    assert json.loads(item["arguments"]) == {"city": "Paris"}
    assert [t.model_dump()["name"] for t in first.tools] == ["functions"]
    # the model was shown the namespaced tools, and nothing of web_search
    system = shown["messages"][0]["content"]
    assert 'name="functions.weather"' in system and 'name="functions.apply_patch"' in system
    assert "web_search" not in json.dumps(shown)
    # the call and its result went back under the name the model knows
    texts = [m["content"] for m in sent_back["messages"]]
    assert any('<am:tool_call name="functions.weather">' in t for t in texts)
    assert '<am:tool_result name="functions.weather">sunny' in texts[-1]
    assert second.output_text == "Sunny."


def test_a_namespaced_tool_choice_and_custom_tool() -> None:
    patch = f'<am:tool_call name="functions.apply_patch"><input>{"x"}</input></am:tool_call>'
    with proxy([patch]) as (url, upstream):
        choice: Any = {"type": "custom", "name": "apply_patch", "namespace": "functions"}
        response = _openai(url).responses.create(
            model="m", input=[CODEX_TOOLS, {"role": "user", "content": "patch"}],
            tool_choice=choice,
        )
        shown = upstream.received[0].body
    (call,) = [o.model_dump() for o in response.output if o.type == "custom_tool_call"]
    assert (call["name"], call["namespace"], call["input"]) == ("apply_patch", "functions", "x")
    assert response.model_dump()["tool_choice"] == choice
    # a named choice shows the model every tool (the prompt stays the same, for
    # an upstream's cache) and names the one to call in the last message
    system = shown["messages"][0]["content"]
    assert "functions.apply_patch" in system and "functions.weather" in system
    assert "must call the tool `functions.apply_patch`" in shown["messages"][-1]["content"]
