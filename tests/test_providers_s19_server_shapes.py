"""Streamed tool-call shapes servers and gateways sent in 2026, read right:
each case is the wire as the issue shows it, and the calls that must come out
(``OpenAIChat`` over a MockTransport, then ``NativeCalls``)."""

from __future__ import annotations

from typing import Any

import pytest
from provider_support import DONE, collect, mock, sse

from streamtools.events import CallEnd, CallError
from streamtools.model import CallChunk, FinishChunk
from streamtools.native import NativeCalls
from streamtools.providers import OpenAIChat

pytestmark = pytest.mark.anyio


def _ev(calls: list[dict[str, Any]] | None, finish: str | None = None) -> dict[str, Any]:
    delta = {"tool_calls": calls} if calls else {}
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def _fn(name: str | None = None, args: Any = None) -> dict[str, Any]:
    return {"name": name, "arguments": args}


PART = '{"command": "ls | head -100"'
WHOLE = '{"command": "ls | head -100", "description": "Run tests"}'
CASES: dict[str, tuple[list[dict[str, Any]], list[tuple[str, dict[str, Any]]]]] = {
    # vLLM's serializer gave the name and the first arguments as two entries of one
    # delta (vllm-project/vllm#42683, Kimi K2's parser)
    "vllm-42683-two-entries": ([
        _ev([{"index": 0, "id": "c1", "type": "function", "function": _fn("f")},
             {"index": 0, "function": _fn(None, '{"a": ')}]),
        _ev([{"index": 0, "function": _fn(None, "1}")}]),
        _ev(None, "tool_calls"),
    ], [("f", {"a": 1})]),
    # LiteLLM's proxy repeats the id (and type) on every chunk (BerriAI/litellm#20480)
    "litellm-20480-id-on-every-chunk": ([
        _ev([{"index": 0, "id": "call_abc", "type": "function",
              "function": _fn("search", '{"qu')}]),
        _ev([{"index": 0, "id": "call_abc", "type": "function", "function": _fn(None, 'ery":')}]),
        _ev([{"index": 0, "id": "call_abc", "type": "function", "function": _fn(None, '"hi"}')}]),
        _ev(None, "tool_calls"),
    ], [("search", {"query": "hi"})]),
    # SGLang's MiniMax-M2 parser: the name with empty arguments, then on another entry
    # the arguments cut short and sent again whole (sgl-project/sglang#23071)
    "sglang-23071-minimax": ([
        _ev([{"index": 0, "id": "call_x", "type": "function", "function": _fn("bash", "")}]),
        _ev([{"index": 1, "id": None, "type": "function", "function": _fn(None, PART)}]),
        _ev([{"index": 1, "function": _fn(None, WHOLE)}]),
        _ev(None, "tool_calls"),
    ], [("bash", {"command": "ls | head -100", "description": "Run tests"})]),
    # LiteLLM in front of Ollama: every call whole on index 0, no ids, arguments as
    # objects, finish stop (BerriAI/litellm#37792)
    "litellm-37792-ollama": ([
        _ev([{"index": 0, "function": _fn("weather", {"city": "Paris"})}]),
        _ev([{"index": 0, "function": _fn("weather", {"city": "Paris"})}]),
        _ev(None, "stop"),
    ], [("weather", {"city": "Paris"}), ("weather", {"city": "Paris"})]),
    # a proxy in front of Gemini that sends no index at all (AstrBotDevs/AstrBot#6692)
    "astrbot-6692-no-index": ([
        _ev([{"id": "a", "type": "function", "function": _fn("w", '{"city": "A"}')}]),
        _ev([{"id": "b", "type": "function", "function": _fn("w", '{"city": "B"}')}]),
        _ev(None, "tool_calls"),
    ], [("w", {"city": "A"}), ("w", {"city": "B"})]),
    # DeepSeek V4 behind an OpenAI-compatible endpoint: a second call's head on the
    # first call's index, its tail on an index of its own (agno-agi/agno#8880)
    "agno-8880-deepseek-v4": ([
        _ev([{"index": 0, "id": "c1", "type": "function", "function": _fn("f", '{"a": 1}')}]),
        _ev([{"index": 0, "id": "c2", "type": "function", "function": _fn("g", '{"b": ')}]),
        _ev([{"index": 1, "function": _fn(None, "2}")}]),
        _ev(None, "tool_calls"),
    ], [("f", {"a": 1}), ("g", {"b": 2})]),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_the_shape_gives_the_calls_the_model_wrote(anyio_backend: str, case: str) -> None:
    events, expected = CASES[case]
    chunks = await collect(OpenAIChat("m", client=mock(sse(*events, DONE)), max_retries=0))
    calls = NativeCalls()
    out = [e for c in chunks if isinstance(c, CallChunk) for e in calls.feed(c)]
    finish = [c for c in chunks if isinstance(c, FinishChunk)]
    assert len(finish) == 1 and finish[-1] is chunks[-1]
    out += calls.end(finish[0].reason)
    assert [e for e in out if isinstance(e, CallError)] == []
    assert [(e.name, e.arguments) for e in out if isinstance(e, CallEnd)] == expected
