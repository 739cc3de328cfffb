"""A model that writes several JSON objects one after another as one call's
arguments (``{"q": "a"}{"q": "b"}``: one call per object meant; Gemini 3 in
NousResearch/hermes-agent#72488, others in BerriAI/litellm#40582) got
``invalid_json`` saying "trailing characters (byte 10)" and "send the arguments
as one JSON object", which does not tell it what it did. The message now says
so, and asks for one call per object; nothing runs (which object was meant is
not known: often the same call repeated). Over FakeServer, OpenAI wire."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from provider_support import DONE, read_sse, sse

from streamtools.events import CallEnd, CallError
from streamtools.model import CallChunk, FinishChunk
from streamtools.native import NativeCalls

pytestmark = pytest.mark.anyio


def _body(args: str) -> str:
    call = {"index": 0, "id": "c1", "type": "function",
            "function": {"name": "search", "arguments": args}}
    chunks: list[Any] = [
        {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    return sse(*chunks, DONE)


@pytest.mark.parametrize("args, count", [
    ('{"q": "a"}{"q": "b"}', 2),
    ('{"q": "}{"} \n{"q": "b"}\n{"q": "c"}', 3),
])
async def test_objects_in_a_row_are_told_as_such(
    anyio_backend: str, args: str, count: int
) -> None:
    chunks = await read_sse(_body(args), "http")
    finish = chunks[-1]
    assert isinstance(finish, FinishChunk)
    native = NativeCalls(["search"])
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    events += native.end(finish.reason)
    assert not any(isinstance(e, CallEnd) for e in events)
    [error] = [e for e in events if isinstance(e, CallError)]
    assert (error.reason, error.raw) == ("invalid_json", args)
    assert error.message == (
        f"The arguments of search are {count} JSON objects one after another, and a call "
        "takes one, so nothing ran. To call search more than once, make one call for "
        "each object."
    )


@pytest.mark.parametrize("args", ['{"q": "a"}x', '{"q": "a"}[1]', '{"q": "a"}{"q":', '{"q"'])
def test_other_bad_json_keeps_the_decoders_words(args: str) -> None:
    native = NativeCalls(["search"])
    native.feed(CallChunk(index=0, id="c1", name="search", arguments=args))
    [error] = native.end("tool_calls")
    assert isinstance(error, CallError) and error.reason == "invalid_json"
    assert "are not valid JSON" in error.message


_objects = st.dictionaries(st.text(max_size=5), st.text(max_size=5) | st.integers(), max_size=3)


@settings(max_examples=60)
@given(st.lists(_objects, min_size=2, max_size=4), st.sampled_from(["", " ", "\n"]))
def test_any_objects_in_a_row_are_counted(objects: list[dict[str, Any]], gap: str) -> None:
    raw = gap.join(json.dumps(o) for o in objects)
    native = NativeCalls(["search"])
    native.feed(CallChunk(index=0, id="c1", name="search", arguments=raw))
    [error] = native.end("tool_calls")
    assert isinstance(error, CallError)
    assert f"are {len(objects)} JSON objects one after another" in error.message
