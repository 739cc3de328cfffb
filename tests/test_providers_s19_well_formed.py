"""Well-formed streams of tool-call deltas, as servers send them, are read as
the calls they hold, whatever their cuts: a guard over the rules added for
servers that number deltas oddly (60fd325: a nameless delta on the index of
a call whose arguments are whole continues the call begun last; 532b1d9:
blanks after a whole call's arguments stay that call's). Shapes: each call
on an index of its own or all on index 0 told apart by ids (OpenAI, vLLM,
SGLang's Gemma 4 parser); calls one after another or interleaved (gateways);
the id on every delta (LiteLLM), the name on every delta (MiniMax); the
arguments pretty-printed or compact, with blanks after them (JSON allows
them after a whole value) in a delta of their own or not; the whole
arguments sent once more at the end of a call (GPT-5 through gateways).
Sans-IO, as the provider reads them (``ToolCallDeltas`` then ``NativeCalls``)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_providers_interleaved import delta_events, one_call_at_a_time

from streamtools.events import CallEnd, CallError

Delta = tuple[int, str | None, str | None, str]

_VALUES = st.integers(-5, 10**6) | st.text("ab{}[]:,\" \n\\", max_size=6) | st.booleans()
_ARGS = st.dictionaries(st.sampled_from(["a", "b", "path"]), _VALUES, max_size=3)


def _pieces(text: str, data: st.DataObject) -> list[str]:
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=5))))
    cuts = [c for c in cuts if 0 < c < len(text)]
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


@settings(max_examples=400, deadline=None)
@given(
    calls=st.lists(st.tuples(_ARGS, st.sampled_from(["t", "u"])), min_size=1, max_size=4),
    shared_index=st.booleans(),
    ids=st.booleans(),
    interleaved=st.booleans(),
    id_every=st.booleans(),
    name_every=st.booleans(),
    indent=st.sampled_from([None, 2]),
    after=st.sampled_from(["", "\n", " \n"]),
    resend=st.booleans(),
    data=st.data(),
)
def test_a_well_formed_stream_gives_each_call_its_own_arguments(
    calls: list[tuple[dict[str, Any], str]],
    shared_index: bool,
    ids: bool,
    interleaved: bool,
    id_every: bool,
    name_every: bool,
    indent: int | None,
    after: str,
    resend: bool,
    data: st.DataObject,
) -> None:
    streams: list[list[Delta]] = []
    for n, (arguments, name) in enumerate(calls):
        index = 0 if shared_index else n
        text = json.dumps(arguments, indent=indent)
        pieces = _pieces(text, data) + ([after] if after else [])
        first = pieces.pop(0) if data.draw(st.booleans()) else ""
        call_id = f"id_{n}" if ids else None
        deltas: list[Delta] = [(index, call_id, name, first)]
        for piece in pieces:
            deltas.append((index, call_id if id_every else None,
                           name if name_every else None, piece))
        # (not with the name repeated and no id: the same text again is then a second,
        # identical call of the tool, the rule for servers that number calls by name alone)
        if resend and not shared_index and (ids or not name_every):
            deltas.append((index, None, None, text + after))  # all of it once more
        streams.append(deltas)
    sent: list[Delta] = []
    if interleaved and not shared_index:  # each call's own order kept
        while any(streams):
            which = data.draw(st.sampled_from([n for n, s in enumerate(streams) if s]))
            sent.append(streams[which].pop(0))
    else:
        sent = [d for deltas in streams for d in deltas]
    events = delta_events(sent, "tool_calls")
    assert [e for e in events if isinstance(e, CallError)] == []
    # without ids, the calls are told apart by index or name alone: the ids are NativeCalls'
    ends = [(e.id if ids else None, e.name, e.arguments)
            for e in events if isinstance(e, CallEnd)]
    expected = [(f"id_{n}" if ids else None, name, arguments)
                for n, (arguments, name) in enumerate(calls)]
    if interleaved and not shared_index:
        assert sorted(map(json.dumps, ends)) == sorted(map(json.dumps, expected))
    else:
        assert ends == expected
    one_call_at_a_time(events)


# the two shapes the property found read wrong after 532b1d9: blanks for a call
# already complete (the next one begun) were dropped without counting as sent,
# so its text resent whole afterwards left them over, a late part; and blanks
# with the call's own name repeated (MiniMax) were a late part too
BLANKS_THEN_RESENT: list[Delta] = [
    (0, "call_0", "t", ""), (0, None, None, '{"a": 1}'), (1, "call_1", "u", ""),
    (0, None, None, "\n"), (0, None, None, '{"a": 1}\n'), (1, None, None, '{"b": 2}'),
]
BLANKS_WITH_NAME: list[Delta] = [
    (0, "call_0", "t", '{"a": 1}'), (1, "call_1", "u", '{"b": '),
    (0, None, "t", "\n"), (1, None, "u", "2}"),
]


@pytest.mark.parametrize("deltas", [BLANKS_THEN_RESENT, BLANKS_WITH_NAME],
                         ids=["blanks-then-resent", "blanks-with-name"])
def test_blanks_after_a_complete_call_are_that_call_s(deltas: list[Delta]) -> None:
    events = delta_events(deltas, "tool_calls")
    assert [e for e in events if isinstance(e, CallError)] == []
    ends = [(e.id, e.name, e.arguments) for e in events if isinstance(e, CallEnd)]
    assert ends == [("call_0", "t", {"a": 1}), ("call_1", "u", {"b": 2})]
