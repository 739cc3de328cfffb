"""NativeCalls: native call deltas become CallStart / ArgsDelta / CallEnd / CallError."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamtools.errors import ParserStateError
from streamtools.events import ArgsDelta, CallEnd, CallError, CallStart, ParserEvent
from streamtools.model import CallChunk
from streamtools.native import NativeCalls


def run(chunks: list[CallChunk], tools: Any = None) -> list[ParserEvent]:
    calls = NativeCalls(tools)
    events: list[ParserEvent] = []
    for chunk in chunks:
        events += calls.feed(chunk)
    return events + calls.end()


def test_openai_style_deltas() -> None:
    events = run(
        [
            CallChunk(index=0, id="call_a", name="add", arguments=""),
            CallChunk(index=0, arguments='{"a": '),
            CallChunk(index=0, arguments="1}"),
        ]
    )
    assert events == [
        CallStart(index=0, id="call_a", name="add"),
        ArgsDelta(index=0, id="call_a", delta='{"a": '),
        ArgsDelta(index=0, id="call_a", delta="1}"),
        CallEnd(index=0, id="call_a", name="add", arguments={"a": 1}, raw='{"a": 1}'),
    ]


def test_call_start_is_emitted_by_the_feed_that_names_the_call() -> None:
    calls = NativeCalls()
    assert calls.feed(CallChunk(index=0, id="x", name="clock")) == [
        CallStart(index=0, id="x", name="clock")
    ]
    assert calls.feed(CallChunk(index=0, arguments="{}")) == [
        ArgsDelta(index=0, id="x", delta="{}")
    ]


def test_index_zero_reused_for_parallel_calls_with_different_ids() -> None:
    events = run(
        [
            CallChunk(index=0, id="c1", name="add", arguments='{"a":1}'),
            CallChunk(index=0, id="c2", name="mul"),
            CallChunk(index=0, arguments='{"b":2}'),
        ]
    )
    ends = [e for e in events if isinstance(e, CallEnd)]
    assert [(e.index, e.id, e.name, e.arguments) for e in ends] == [
        (0, "c1", "add", {"a": 1}),
        (1, "c2", "mul", {"b": 2}),
    ]


def test_two_calls_of_one_reply_never_share_an_id() -> None:
    # a server that gives two calls one id (a bug), and one that spells an id like ours
    events = run(
        [
            CallChunk(index=0, id="a", name="add", arguments='{"a": 1}'),
            CallChunk(index=1, id="a", name="mul", arguments='{"b": 2}'),
            CallChunk(index=2, name="add", arguments="{}"),  # no id: ours, call_2
            CallChunk(index=3, id="call_2", name="mul", arguments="{}"),
        ]
    )
    starts = [(e.index, e.id) for e in events if isinstance(e, CallStart)]
    assert starts == [(0, "a"), (1, "call_1"), (2, "call_2"), (3, "call_3")]
    ends = [(e.index, e.id, e.arguments) for e in events if isinstance(e, CallEnd)]
    assert ends == [
        (0, "a", {"a": 1}), (1, "call_1", {"b": 2}), (2, "call_2", {}), (3, "call_3", {})
    ]


def test_an_id_that_arrives_late_is_kept_unless_taken() -> None:
    events = run(
        [
            CallChunk(index=0, id="x", name="add", arguments="{}", done=True),
            CallChunk(index=1, arguments="{}"),  # id and name come later
            CallChunk(index=1, id="x", name="mul"),
        ]
    )
    assert [(e.index, e.id) for e in events if isinstance(e, CallEnd)] == [(0, "x"), (1, "call_1")]


def test_repeated_id_on_every_delta_stays_one_call() -> None:
    events = run(
        [
            CallChunk(index=0, id="c1", name="add", arguments='{"a"'),
            CallChunk(index=0, id="c1", arguments=":1}"),
        ]
    )
    assert [type(e) for e in events] == [CallStart, ArgsDelta, ArgsDelta, CallEnd]


def test_whole_calls_without_ids_get_generated_ids() -> None:
    events = run(
        [
            CallChunk(index=0, name="add", arguments='{"a":1}'),
            CallChunk(index=1, name="add", arguments='{"a":2}'),
        ]
    )
    ends = [e for e in events if isinstance(e, CallEnd)]
    assert [(e.id, e.arguments) for e in ends] == [("call_0", {"a": 1}), ("call_1", {"a": 2})]


def test_id_prefix() -> None:
    calls = NativeCalls(id_prefix="t3_")
    assert calls.feed(CallChunk(index=0, name="x")) == [CallStart(index=0, id="t3_0", name="x")]


def test_arguments_before_name_are_released_with_the_start() -> None:
    calls = NativeCalls()
    assert calls.feed(CallChunk(index=0, id="c", arguments='{"q":')) == []
    assert calls.feed(CallChunk(index=0, name="search", arguments='"x"}')) == [
        CallStart(index=0, id="c", name="search"),
        ArgsDelta(index=0, id="c", delta='{"q":'),
        ArgsDelta(index=0, id="c", delta='"x"}'),
    ]
    assert calls.end() == [
        CallEnd(index=0, id="c", name="search", arguments={"q": "x"}, raw='{"q":"x"}')
    ]


def test_empty_arguments_become_an_empty_object_delta() -> None:
    events = run([CallChunk(index=0, id="c", name="clock")])
    assert events[1:] == [
        ArgsDelta(index=0, id="c", delta="{}"),
        CallEnd(index=0, id="c", name="clock", arguments={}, raw="{}"),
    ]


def test_invalid_json_is_a_call_error() -> None:
    events = run([CallChunk(index=0, id="c", name="add", arguments='{"a": 1')])
    error = events[-1]
    assert isinstance(error, CallError)
    assert (error.reason, error.raw, error.name) == ("invalid_json", '{"a": 1', "add")
    assert "not valid JSON" in error.message


def test_non_object_arguments_are_a_call_error() -> None:
    events = run([CallChunk(index=0, id="c", name="add", arguments="[1, 2]")])
    assert isinstance(events[-1], CallError) and events[-1].reason == "invalid_json"


def test_call_without_name_is_malformed() -> None:
    events = run([CallChunk(index=0, id="c", arguments="{}")])
    assert len(events) == 1 and isinstance(events[0], CallError)
    assert events[0].reason == "malformed" and events[0].name is None


def test_unknown_tool_with_plain_names_lists_only_allowed() -> None:
    events = run([CallChunk(index=0, id="c", name="rm", arguments="{}")], tools=["add", "mul"])
    error = events[-1]
    assert isinstance(error, CallError) and error.reason == "unknown_tool"
    assert "add, mul" in error.message and "rm" in error.message


class Catalog:
    def __init__(self) -> None:
        self.names = ["add"]

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def __iter__(self) -> Any:
        return iter(self.names)

    def schema(self, name: str) -> dict[str, Any] | None:
        return {"type": "object"}

    def check_arguments(self, name: str, arguments: dict[str, Any]) -> str | None:
        return None if isinstance(arguments.get("a"), int) else "Expected `int` - at `$.a`"


def test_catalog_checks_arguments() -> None:
    events = run(
        [
            CallChunk(index=0, id="c1", name="add", arguments='{"a": "x"}'),
            CallChunk(index=1, id="c2", name="add", arguments='{"a": 3}'),
            CallChunk(index=2, id="c3", name="nope", arguments="{}"),
        ],
        tools=Catalog(),
    )
    tail = events[-3:]
    assert isinstance(tail[0], CallError) and tail[0].reason == "invalid_arguments"
    assert tail[0].message == "Expected `int` - at `$.a`"
    assert isinstance(tail[1], CallEnd) and tail[1].arguments == {"a": 3}
    assert isinstance(tail[2], CallError) and tail[2].reason == "unknown_tool"


def test_misuse_raises() -> None:
    calls = NativeCalls()
    calls.end()
    with pytest.raises(ParserStateError):
        calls.feed(CallChunk(index=0, name="x"))
    with pytest.raises(ParserStateError):
        calls.end()


def test_done_ends_the_call_in_that_feed() -> None:
    calls = NativeCalls(["add", "mul"])
    assert calls.feed(CallChunk(index=0, id="a", name="add", arguments='{"a": 1}')) == [
        CallStart(index=0, id="a", name="add"),
        ArgsDelta(index=0, id="a", delta='{"a": 1}'),
    ]
    first = calls.feed(CallChunk(index=0, done=True))
    assert first == [CallEnd(index=0, id="a", name="add", arguments={"a": 1}, raw='{"a": 1}')]
    # Ollama style: a whole call in one chunk starts and ends in one feed.
    whole = calls.feed(CallChunk(index=1, name="mul", arguments="{}", done=True))
    assert [type(e) for e in whole] == [CallStart, ArgsDelta, CallEnd]
    assert calls.end() == []  # nothing left open
    assert calls.calls == 2


def test_done_validates_at_once() -> None:
    calls = NativeCalls(["add"])
    calls.feed(CallChunk(index=0, id="a", name="add", arguments="{oops"))
    bad_json = calls.feed(CallChunk(index=0, done=True))
    assert len(bad_json) == 1 and isinstance(bad_json[0], CallError)
    assert bad_json[0].reason == "invalid_json" and bad_json[0].raw == "{oops"
    nameless = calls.feed(CallChunk(index=1, id="b", arguments="{}", done=True))
    assert [e.reason for e in nameless if isinstance(e, CallError)] == ["malformed"]
    unknown = calls.feed(CallChunk(index=2, id="c", name="rm", done=True))
    assert [e.reason for e in unknown if isinstance(e, CallError)] == ["unknown_tool"]
    assert calls.end() == []


def test_fragments_after_done_are_a_call_error_of_their_own() -> None:
    calls = NativeCalls(["add"])
    calls.feed(CallChunk(index=0, id="a", name="add", arguments="{}", done=True))
    assert calls.feed(CallChunk(index=0, done=True)) == []  # a repeated mark: nothing
    late = calls.feed(CallChunk(index=0, arguments='"x"}'))
    assert late == [
        CallError(
            index=1,
            id="call_1",
            name="add",
            raw='"x"}',
            reason="malformed",
            message="Part of a call to add arrived after that call was complete and was not "
            "used. Make each call complete, in one piece.",
        )
    ]
    again = calls.feed(CallChunk(index=0, id="a", arguments="!"))  # its own id: still late
    assert [(e.index, e.reason) for e in again if isinstance(e, CallError)] == [(2, "malformed")]
    fresh = calls.feed(CallChunk(index=0, id="b", name="add", arguments="{}"))  # a new id
    assert fresh[0] == CallStart(index=3, id="b", name="add")
    ends = calls.end()  # the ended calls stay ended
    assert ends == [CallEnd(index=3, id="b", name="add", arguments={}, raw="{}")]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(
    args=st.lists(
        st.dictionaries(st.text(max_size=5), json_values, max_size=4), min_size=1, max_size=3
    ),
    cuts=st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=40),
    index_zero=st.booleans(),
    marked=st.booleans(),
)
def test_append_only_any_split(
    args: list[dict[str, Any]], cuts: list[int], index_zero: bool, marked: bool
) -> None:
    """The ArgsDelta fragments of each call decode to exactly its CallEnd.arguments,
    whether calls are marked ``done`` as they complete or only ended at ``end``."""
    chunks: list[CallChunk] = []
    for n, arguments in enumerate(args):
        text = json.dumps(arguments)
        index = 0 if index_zero else n
        chunks.append(CallChunk(index=index, id=f"id{n}", name=f"t{n}"))
        pos, k = 0, 0
        while pos < len(text):
            size = cuts[k % len(cuts)]
            chunks.append(CallChunk(index=index, arguments=text[pos : pos + size]))
            pos, k = pos + size, k + 1
        if marked:
            chunks.append(CallChunk(index=index, done=True))
    events = run(chunks)
    ends = [e for e in events if isinstance(e, CallEnd)]
    assert [e.arguments for e in ends] == args
    for end in ends:
        deltas = "".join(e.delta for e in events if isinstance(e, ArgsDelta) and e.id == end.id)
        assert msgspec.json.decode(deltas) == end.arguments
        assert deltas == end.raw


@pytest.mark.parametrize("reason", ["error", "content_filter", "length", "max_tokens"])
def test_a_call_open_when_the_stream_is_cut_does_not_run(reason: str) -> None:
    """A call still open at a finish that cut the stream is ``unterminated``, never
    completed with what it happened to have (no arguments yet would be ``{}``)."""
    for arguments in ("", '{"path": "/tm', '{"path": "/tmp"'):
        calls = NativeCalls(["wipe"])
        started = calls.feed(CallChunk(index=0, id="c", name="wipe", arguments=arguments))
        (error,) = calls.end(reason)
        assert isinstance(started[0], CallStart) and isinstance(error, CallError)
        assert (error.reason, error.raw, error.name) == ("unterminated", arguments, "wipe")
        assert "cut off" in error.message


def test_what_is_whole_at_a_finish_may_run() -> None:
    whole = CallChunk(index=0, id="a", name="wipe", arguments='{"path": "/tmp"}')
    # out of tokens: a whole object ran to its end; a broken stream: nothing open runs
    assert isinstance(_ended(whole, "length"), CallEnd)
    assert isinstance(_ended(whole, "error"), CallError)
    for reason in (None, "stop", "tool_calls", "tool_use"):
        assert _ended(CallChunk(index=0, id="a", name="clock"), reason) == CallEnd(
            index=0, id="a", name="clock", arguments={}, raw="{}"
        )
    # a call the provider marked complete stays complete, whatever the finish
    calls = NativeCalls(["wipe"])
    done = calls.feed(CallChunk(index=0, id="a", name="wipe", arguments="{}", done=True))
    assert isinstance(done[-1], CallEnd) and calls.end("error") == []


def _ended(chunk: CallChunk, reason: str | None) -> ParserEvent:
    calls = NativeCalls(["wipe", "clock"])
    calls.feed(chunk)
    return calls.end(reason)[-1]


def test_arguments_nested_too_deeply_are_a_call_error() -> None:
    """Arguments nested deeper than the JSON decoder goes (a model stuck writing
    ``[[[[``) are invalid JSON for the model to fix, not a RecursionError."""
    deep = '{"x": ' + "[" * 5000 + "]" * 5000 + "}"
    for chunks, reason in (
        ([CallChunk(index=0, id="a", name="f", arguments=deep, done=True)], None),
        ([CallChunk(index=0, id="a", name="f", arguments=deep)], "stop"),
        ([CallChunk(index=0, id="a", name="f", arguments=deep[:-1])], "length"),
    ):
        calls = NativeCalls(["f"])
        events = [e for chunk in chunks for e in calls.feed(chunk)] + calls.end(reason)
        error = events[-1]
        assert isinstance(error, CallError), error
        assert error.reason in ("invalid_json", "unterminated") and error.raw.startswith('{"x"')


@pytest.mark.parametrize("reason", [None, "stop", "length"])
def test_a_lone_surrogate_half_in_arguments_is_a_call_error(reason: str | None) -> None:
    """Argument text holding a lone UTF-16 surrogate half (a model of the user's
    own, a scripted chunk) raised msgspec's ``UnicodeEncodeError`` out of
    ``feed``/``end`` and so out of the agent's run; it is invalid JSON for the
    model to fix, as the text parser makes it."""
    text = '{"path": "report-\udce9.txt"}'
    calls = NativeCalls(["f"])
    chunk = CallChunk(index=0, id="a", name="f", arguments=text, done=reason is None)
    events = calls.feed(chunk) + calls.end(reason)
    error = events[-1]
    assert isinstance(error, CallError), error
    assert error.raw == text and error.id == "a"
    if reason == "length":  # cut off: not whole, so it never runs
        assert error.reason == "unterminated"
    else:
        assert error.reason == "invalid_json" and "surrogate" in error.message


def test_extra_rides_on_the_call_end() -> None:
    """Data an API attached to a call (Gemini's thought signature), on any of its
    chunks, is on its CallEnd; a call without any encodes as before."""
    calls = NativeCalls(["f"])
    calls.feed(CallChunk(index=0, id="a", name="f", extra={"google": {"x": 1}}))
    calls.feed(CallChunk(index=0, arguments="{}", extra={"more": 2}))
    calls.feed(CallChunk(index=1, id="b", name="f", arguments="{}"))
    ends = [e for e in calls.end("stop") if isinstance(e, CallEnd)]
    assert [e.extra for e in ends] == [{"google": {"x": 1}, "more": 2}, None]
    assert b"extra" not in msgspec.json.encode(ends[1])
