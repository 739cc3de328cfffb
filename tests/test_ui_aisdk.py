"""The AI SDK UI message stream encoder and our SSE framing, without I/O."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st
from test_ui_support import UIReader, read_ui_stream, sse_data

from streamtools.events import (
    ArgsDelta,
    CallEnd,
    CallError,
    CallStart,
    Event,
    Final,
    Finish,
    ReasoningDelta,
    Retry,
    StreamError,
    TextDelta,
    ToolFailed,
    ToolResult,
    TurnEnd,
    TurnStart,
    Usage,
    decode_event,
)
from streamtools.ui import (
    UI_MESSAGE_STREAM_HEADERS,
    EventsFramer,
    UIMessageFramer,
    UIMessageStreamEncoder,
    encode_sse_event,
    encode_ui_chunk,
)


def encode_all(events: list[Event], **kwargs: Any) -> list[dict[str, Any]]:
    encoder = UIMessageStreamEncoder(**kwargs)
    chunks = encoder.start()
    for event in events:
        chunks += encoder.encode(event)
    return chunks + encoder.close()


def one_tool_turn() -> list[Event]:
    return [
        TurnStart(turn=1),
        ReasoningDelta(text="need "),
        ReasoningDelta(text="weather"),
        TextDelta(text="Let me "),
        TextDelta(text="check."),
        CallStart(index=0, id="call_0", name="weather"),
        ArgsDelta(index=0, id="call_0", delta='{"city": "Pa'),
        ArgsDelta(index=0, id="call_0", delta='ris"}'),
        CallEnd(index=0, id="call_0", name="weather", arguments={"city": "Paris"}, raw="<x/>"),
        Finish(reason="stop"),
        ToolResult(index=0, id="call_0", name="weather", content="18C"),
        Usage(input_tokens=10, output_tokens=5),
        TurnEnd(turn=1, reason="tool_calls"),
        TurnStart(turn=2),
        TextDelta(text="It is 18C."),
        Finish(reason="stop"),
        TurnEnd(turn=2, reason="final"),
        Final(text="It is 18C.", turns=2),
    ]


def test_a_tool_turn_maps_to_the_protocol_chunks_in_order() -> None:
    dyn = {"dynamic": True}
    assert encode_all(one_tool_turn(), message_id="m1") == [
        {"type": "start", "messageId": "m1"},
        {"type": "start-step"},
        {"type": "reasoning-start", "id": "reasoning-1"},
        {"type": "reasoning-delta", "id": "reasoning-1", "delta": "need "},
        {"type": "reasoning-delta", "id": "reasoning-1", "delta": "weather"},
        {"type": "reasoning-end", "id": "reasoning-1"},
        {"type": "text-start", "id": "text-2"},
        {"type": "text-delta", "id": "text-2", "delta": "Let me "},
        {"type": "text-delta", "id": "text-2", "delta": "check."},
        {"type": "text-end", "id": "text-2"},
        {"type": "tool-input-start", "toolCallId": "call_0", "toolName": "weather", **dyn},
        {"type": "tool-input-delta", "toolCallId": "call_0", "inputTextDelta": '{"city": "Pa'},
        {"type": "tool-input-delta", "toolCallId": "call_0", "inputTextDelta": 'ris"}'},
        {
            "type": "tool-input-available",
            "toolCallId": "call_0",
            "toolName": "weather",
            "input": {"city": "Paris"},
            **dyn,
        },
        {"type": "tool-output-available", "toolCallId": "call_0", "output": "18C", **dyn},
        {"type": "finish-step"},
        {"type": "start-step"},
        {"type": "text-start", "id": "text-3"},
        {"type": "text-delta", "id": "text-3", "delta": "It is 18C."},
        {"type": "text-end", "id": "text-3"},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "stop"},
    ]


def test_static_tool_parts_omit_the_dynamic_flag() -> None:
    chunks = encode_all(one_tool_turn(), dynamic_tools=False)
    tool_chunks = [c for c in chunks if c["type"].startswith("tool-")]
    assert tool_chunks and all("dynamic" not in c for c in tool_chunks)


def test_a_call_id_reused_by_a_later_turn_gets_a_unique_ui_id() -> None:
    turn: list[Event] = [
        CallStart(index=0, id="call_0", name="f"),
        CallEnd(index=0, id="call_0", name="f", arguments={}, raw=""),
        ToolResult(index=0, id="call_0", name="f", content="r"),
    ]
    events: list[Event] = [TurnStart(turn=1), *turn, TurnEnd(turn=1, reason="tool_calls")]
    events += [TurnStart(turn=2), *turn, TurnEnd(turn=2, reason="tool_calls")]
    chunks = encode_all(events)
    starts = [c["toolCallId"] for c in chunks if c["type"] == "tool-input-start"]
    outputs = [c["toolCallId"] for c in chunks if c["type"] == "tool-output-available"]
    assert starts == outputs == ["call_0", "call_0-2"]


def test_a_malformed_call_becomes_a_tool_input_error_with_the_raw_text() -> None:
    events: list[Event] = [
        TextDelta(text="ok "),
        CallError(
            index=0, id="call_0", name=None, raw="<am:tool_call>", reason="malformed", message="fix"
        ),
        Finish(reason="stop"),
    ]
    chunks = encode_all(events)
    assert chunks[4:7] == [
        {"type": "text-end", "id": "text-1"},
        {
            "type": "tool-input-start",
            "toolCallId": "call_0",
            "toolName": "unknown",
            "dynamic": True,
        },
        {
            "type": "tool-input-error",
            "toolCallId": "call_0",
            "toolName": "unknown",
            "input": "<am:tool_call>",
            "errorText": "fix",
            "dynamic": True,
        },
    ]
    # Without turn events, Finish closes the implicit step.
    assert chunks[-2:] == [{"type": "finish-step"}, {"type": "finish", "finishReason": "stop"}]


def test_a_failed_tool_is_an_output_error_and_later_events_for_it_are_ignored() -> None:
    events: list[Event] = [
        CallEnd(index=0, id="c", name="f", arguments={"a": 1}, raw=""),
        ToolFailed(index=0, id="c", name="f", kind="exception", message="boom"),
        ToolResult(index=0, id="c", name="f", content="late"),
    ]
    reader = UIReader()
    for chunk in encode_all(events):
        reader.feed(chunk)
    assert reader.tool_parts == [
        {
            "type": "tool",
            "toolCallId": "c",
            "toolName": "f",
            "state": "output-error",
            "raw": "",
            "input": {"a": 1},
            "errorText": "boom",
        }
    ]


def test_a_stream_error_the_agent_went_on_after_does_not_end_the_answer() -> None:
    """The model stream failed after a complete call: the agent runs the call and
    starts the next turn. An ``error`` chunk there ended the answer in the SDK's
    chat (it stops reading and aborts, so the agent was cancelled) and left the
    call's card running."""
    events: list[Event] = [
        TurnStart(turn=1),
        CallEnd(index=0, id="call_0", name="f", arguments={}, raw=""),
        StreamError(kind="stream", message="connection reset"),
        Finish(reason="error"),
        ToolResult(index=0, id="call_0", name="f", content="ok"),
        TurnEnd(turn=1, reason="tool_calls"),
        TurnStart(turn=2),
        TextDelta(text="Done."),
        Finish(reason="stop"),
        TurnEnd(turn=2, reason="final"),
    ]
    reader = UIReader()
    for chunk in encode_all(events):
        reader.feed(chunk)
    assert reader.errors == [] and reader.finished
    assert reader.text == "Done."
    assert [(p["toolName"], p["state"]) for p in reader.tool_parts] == [("f", "output-available")]


def test_a_stream_error_nothing_came_after_is_sent_when_the_stream_ends() -> None:
    encoder = UIMessageStreamEncoder()
    chunks = encoder.encode(CallStart(index=0, id="c", name="f"))
    chunks += encoder.encode(StreamError(kind="stream", message="stream ended mid-call"))
    chunks += encoder.encode(Finish(reason="error"))
    chunks += encoder.close()
    reader = UIReader()
    for chunk in chunks:
        reader.feed(chunk)
    assert reader.errors == ["stream: stream ended mid-call"] and reader.finished
    why = "stopped before it finished: stream: stream ended mid-call"
    assert reader.tool_parts[0]["errorText"] == why
    assert encoder.close() == []
    # The agent failed after it: one error, the agent's (the SDK reads no further).
    encoder = UIMessageStreamEncoder()
    chunks = encoder.encode(StreamError(kind="stream", message="reset"))
    chunks += encoder.close(error="ProviderError: reset")
    assert [c for c in chunks if c["type"] == "error"] == [
        {"type": "error", "errorText": "ProviderError: reset"}
    ]
    assert chunks[-1] == {"type": "finish", "finishReason": "error"}


def test_ui_framer_writes_data_lines_and_done() -> None:
    framer = UIMessageFramer()
    body = framer.open() + framer.frame(TextDelta(text="a\nb")) + framer.close()
    assert body.startswith(b'data: {"type":"start"}\n\n')
    assert body.endswith(b'data: {"type":"finish"}\n\ndata: [DONE]\n\n')
    assert read_ui_stream(body).text == "a\nb"
    assert encode_ui_chunk({"type": "x", "s": "\n"}) == b'data: {"type":"x","s":"\\n"}\n\n'
    assert UI_MESSAGE_STREAM_HEADERS["x-vercel-ai-ui-message-stream"] == "v1"


def test_our_events_over_sse_are_named_by_type_and_decode_back() -> None:
    events = one_tool_turn() + [Retry(turn=3, reason="refusal", message="m")]
    body = b"".join(encode_sse_event(e) for e in events)
    names = [line[7:] for line in body.decode().split("\n") if line.startswith("event: ")]
    assert names[:3] == ["turn_start", "reasoning", "reasoning"]
    assert [decode_event(d) for d in sse_data(body)] == events
    assert EventsFramer().close("boom") == encode_sse_event(
        StreamError(kind="server", message="boom")
    )
    assert EventsFramer().close() == b""


# --- property: any event order gives a stream the SDK reader accepts ---------

ids = st.sampled_from(["call_0", "call_1", "call_2"])
names = st.sampled_from(["f", "kom.memory.v1.search_memory"])
texts = st.text(max_size=4)
event_strategy: st.SearchStrategy[Event] = st.one_of(
    st.builds(TextDelta, text=texts),
    st.builds(ReasoningDelta, text=texts),
    st.builds(CallStart, index=st.just(0), id=ids, name=names),
    st.builds(ArgsDelta, index=st.just(0), id=ids, delta=texts),
    st.builds(CallEnd, index=st.just(0), id=ids, name=names, arguments=st.just({}), raw=texts),
    st.builds(
        CallError,
        index=st.just(0),
        id=ids,
        name=st.none() | names,
        raw=texts,
        reason=st.just("x"),
        message=texts,
    ),
    st.builds(ToolResult, index=st.just(0), id=ids, name=names, content=texts),
    st.builds(ToolFailed, index=st.just(0), id=ids, name=names, kind=st.just("x"), message=texts),
    st.builds(Finish, reason=st.just("stop")),
    st.builds(TurnStart, turn=st.integers(1, 3)),
    st.builds(TurnEnd, turn=st.integers(1, 3), reason=st.just("final")),
    st.builds(StreamError, kind=st.just("stream"), message=texts),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(event_strategy, max_size=30))
def test_any_event_sequence_encodes_to_a_stream_the_reader_accepts(events: list[Event]) -> None:
    framer = UIMessageFramer()
    body = framer.open() + b"".join(framer.frame(e) for e in events) + framer.close()
    reader = read_ui_stream(body)  # raises if the SDK would reject the stream
    assert reader.text == "".join(e.text for e in events if isinstance(e, TextDelta))
    assert reader.steps_open == 0
    for chunk in sse_data(body)[:-1]:
        decoded = msgspec.json.decode(chunk)
        assert isinstance(decoded, dict) and "type" in decoded


def test_a_result_after_a_bare_streams_finish_still_finds_its_call() -> None:
    events: list[Event] = [
        CallEnd(index=0, id="c", name="f", arguments={"a": 1}, raw=""),
        Finish(reason="stop"),
        ToolResult(index=0, id="c", name="f", content="ok"),
    ]
    reader = UIReader()
    for chunk in encode_all(events):
        reader.feed(chunk)
    [part] = reader.tool_parts
    assert (part["toolCallId"], part["state"], part["output"]) == ("c", "output-available", "ok")


def test_calls_left_open_when_the_stream_fails_end_as_errors() -> None:
    """A call whose arguments were streaming, or whose tool was running, when the
    agent failed would otherwise show as running forever."""
    encoder = UIMessageStreamEncoder()
    chunks = encoder.encode(TurnStart(turn=1))
    chunks += encoder.encode(CallStart(index=0, id="call_0", name="slow"))
    chunks += encoder.encode(CallEnd(index=0, id="call_0", name="slow", arguments={}, raw=""))
    chunks += encoder.encode(CallStart(index=1, id="call_1", name="add"))
    chunks += encoder.encode(ArgsDelta(index=1, id="call_1", delta='{"a": '))
    chunks += encoder.encode(CallStart(index=2, id="call_2", name="done"))
    chunks += encoder.encode(ToolResult(index=2, id="call_2", name="done", content="ok"))
    chunks += encoder.close(error="the server is shutting down")
    reader = UIReader()
    for chunk in chunks:
        reader.feed(chunk)
    assert [(p["toolName"], p["state"], p.get("errorText")) for p in reader.tool_parts] == [
        ("slow", "output-error", "stopped before it finished: the server is shutting down"),
        ("add", "output-error", "stopped before it finished: the server is shutting down"),
        ("done", "output-available", None),
    ]
    assert reader.errors == ["the server is shutting down"] and reader.finished
    # Without an error, open calls stay open: a bare parser's calls are the client's to run.
    quiet = UIMessageStreamEncoder()
    quiet.encode(CallEnd(index=0, id="call_0", name="slow", arguments={}, raw=""))
    assert [c["type"] for c in quiet.close()] == ["finish-step", "finish"]


def test_text_utf8_cannot_carry_is_written_as_a_replacement_character() -> None:
    """A lone surrogate half (a model or source of the user's own) made the
    framer raise: the answer ended as an internal error, and the closing
    ``text-end`` named a part the client never saw started."""
    cut = TextDelta(text="caf\udce9 \ud83d")
    framer = UIMessageFramer()
    body = framer.open() + framer.frame(TextDelta(text="ok ")) + framer.frame(cut) + framer.close()
    assert read_ui_stream(body).text == "ok caf\ufffd \ufffd"
    pair = ToolResult(index=0, id="c", name="t", content="\ud83d\ude00")  # one character
    text, result = sse_data(encode_sse_event(cut) + encode_sse_event(pair))
    assert decode_event(text.encode()) == TextDelta(text="caf\ufffd \ufffd")
    assert decode_event(result.encode()) == ToolResult(index=0, id="c", name="t", content="😀")


def test_finish_carries_the_last_replys_reason_in_the_sdks_words() -> None:
    """``finish`` had no ``finishReason``, so ``useChat``'s ``onFinish`` got
    ``undefined`` (ai 6, and ai 5 since 5.0.92, read it from the chunk)."""
    cases: list[tuple[list[Event], str | None, str | None]] = [
        (one_tool_turn(), None, "stop"),
        ([TextDelta(text="cut"), Finish(reason="length")], None, "length"),
        ([TextDelta(text="x"), Finish(reason="max_tokens")], None, "length"),
        ([CallEnd(index=0, id="c", name="f", arguments={}, raw=""), Finish(reason="tool_calls")],
         None, "tool-calls"),
        ([Finish(reason="content_filter")], None, "content-filter"),
        ([Finish(reason="something_new")], None, "other"),
        ([TextDelta(text="x"), Finish(reason="stop")], "BudgetExceeded: 8 turns", "error"),
        ([TextDelta(text="no finish yet")], None, None),
    ]
    for events, error, reason in cases:
        encoder = UIMessageStreamEncoder()
        chunks = [c for e in events for c in encoder.encode(e)] + encoder.close(error=error)
        reader = UIReader()
        for chunk in chunks:
            reader.feed(chunk)
        assert reader.finished and reader.finish_reason == reason, (events, chunks[-1])
        assert ("finishReason" in chunks[-1]) is (reason is not None)
    # for an ai 5 client older than 5.0.92, whose schema refuses the key
    quiet = UIMessageStreamEncoder(finish_reason=False)
    chunks = quiet.encode(Finish(reason="stop")) + quiet.close()
    assert chunks[-1] == {"type": "finish"}
