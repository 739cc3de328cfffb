"""The parser as the README feeds it, and the proxy's app made in code."""

from __future__ import annotations

from typing import assert_type

from streamtools import CallEnd, ParserEvent, TextDelta, ToolRegistry, tool
from streamtools.parser import DIALECTS, Parser
from streamtools.proxy import ProxyConfig, create_app


@tool
def calculator(a: int, b: int) -> int:
    """Add."""
    return a + b


parser = Parser("am_xml", tools=["calculator"], stop=["\nObservation:"])
reply = 'Let me add. <am:tool_call name="calculator"><a>5</a><b>3</b></am:tool_call> Done.'
events: list[ParserEvent] = []
for i in range(0, len(reply), 4):
    events += parser.feed(reply[i : i + 4])
events += parser.end(finish_reason="stop")
text = "".join(e.text for e in events if isinstance(e, TextDelta))
calls = [e for e in events if isinstance(e, CallEnd)]
assert_type(calls, list[CallEnd])
checked = Parser("hermes", tools=ToolRegistry([calculator]), think_open=True)
names: list[str] = sorted(DIALECTS)

app = create_app(ProxyConfig(upstream="http://127.0.0.1:11434/v1", dialect="hermes"))
