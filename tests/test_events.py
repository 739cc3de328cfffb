"""Events as JSON lines: ``encode_events`` and ``decode_event`` on text UTF-8 cannot carry."""

from __future__ import annotations

import pytest

from streamtools import Agent, tool
from streamtools.events import (
    CallEnd,
    Event,
    Final,
    TextDelta,
    ToolResult,
    decode_event,
    encode_events,
)
from streamtools.testing import ScriptedModel

pytestmark = pytest.mark.anyio


@tool
def listing() -> str:
    """List the files."""
    return "report-\udce9.txt"  # a file name that is not UTF-8, as os.listdir gives it


async def test_events_with_a_lone_surrogate_half_encode_as_u_fffd(anyio_backend: str) -> None:
    """A run whose model wrote a lone surrogate half (a scripted reply, a model of
    the user's own) made ``encode_events`` raise ``UnicodeEncodeError``, so a
    golden file of the run could not be written at all; the half is written as
    U+FFFD, as ``Transcript.encode`` and the UI's event stream write it."""
    model = ScriptedModel(['<am:tool_call name="listing"></am:tool_call>', "Found report-\udce9."])
    async with Agent(model, [listing], dialect="am_xml").stream("What is there?") as stream:
        events = [event async for event in stream]
    lines = encode_events(events).splitlines()
    read = [decode_event(line) for line in lines]
    assert len(read) == len(events)
    texts = "".join(e.text for e in read if isinstance(e, TextDelta))
    assert texts == "Found report-\ufffd."
    assert [e.text for e in read if isinstance(e, Final)] == ["Found report-\ufffd."]
    assert [e.content for e in read if isinstance(e, ToolResult)] == ["report-\ufffd.txt"]
    # everything else comes back as it was
    assert [e for e in read if not isinstance(e, TextDelta | Final)] == [
        e for e in events if not isinstance(e, TextDelta | Final)
    ]


def test_a_call_s_text_and_keys_are_made_valid_too() -> None:
    event = CallEnd(index=0, id="c", name="f", arguments={"k\ud800": ["v\udfff"]}, raw="<\ud83d>")
    (line,) = encode_events([event]).splitlines()
    valid = {"k\ufffd": ["v\ufffd"]}
    expected = CallEnd(index=0, id="c", name="f", arguments=valid, raw="<\ufffd>")
    assert decode_event(line) == expected


@pytest.mark.parametrize("as_str", [False, True])
def test_decode_reads_an_escaped_lone_half_as_u_fffd(as_str: bool) -> None:
    """A JSON string cut inside an emoji by a JavaScript client escapes a lone
    half (``"\\ud83d"``), which msgspec refuses ("Input data was truncated");
    a whole pair is its character."""
    line = b'{"type":"text","text":"a \\ud83d b \\ud83d\\ude00"}'
    expected: Event = TextDelta(text="a \ufffd b \U0001f600")
    assert decode_event(line.decode() if as_str else line) == expected
    assert decode_event("{\"type\":\"text\",\"text\":\"x\udce9\"}") == TextDelta(text="x\ufffd")
