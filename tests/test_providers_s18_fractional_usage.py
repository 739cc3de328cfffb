"""Token counts with a fraction, as OpenRouter sends them for models it bills
by a cost-weighted count (BerriAI/litellm#28024: ``output_tokens`` 14417.92),
are rounded. An int-only usage refused them as malformed JSON, so an answer
that had streamed whole, finish and all, ended in an error at its usage."""

from __future__ import annotations

import pytest
from provider_support import DONE, collect, mock, sse, text_of, usage_of

from streamtools.model import FinishChunk, UsageChunk
from streamtools.providers import OpenAIChat
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio

USAGE = {
    "prompt_tokens": 12.0,
    "completion_tokens": 14417.92,
    "total_tokens": 14429.92,
    "prompt_tokens_details": {"cached_tokens": 3.4},
    "completion_tokens_details": {"reasoning_tokens": 20.5001},
    "cost": 0.0361,
}
BODY = sse(
    {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Here."}}]},
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop",
                  "native_finish_reason": "STOP"}]},
    {"choices": [], "usage": USAGE},
    DONE,
)
WANT = UsageChunk(input_tokens=12, output_tokens=14418, cache_read_tokens=3,
                  reasoning_tokens=21)


async def test_fractional_counts_over_http(anyio_backend: str) -> None:
    reply = Reply(raw=BODY.encode(), content_type="text/event-stream")
    async with FakeServer([reply], wire="openai") as server:
        chunks = await collect(OpenAIChat("m", base_url=server.base_url, max_retries=0))
    assert text_of(chunks) == "Here."
    assert usage_of(chunks) == WANT
    assert chunks[-1] == FinishChunk(reason="stop")


async def test_fractional_counts_of_a_whole_answer(anyio_backend: str) -> None:
    # a gateway that ignored stream: true, with the same usage
    answer = (
        '{"object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop", '
        '"message": {"role": "assistant", "content": "Here."}}], "usage": '
        '{"prompt_tokens": 12.0, "completion_tokens": 14417.92, '
        '"prompt_tokens_details": {"cached_tokens": 3.4}, '
        '"completion_tokens_details": {"reasoning_tokens": 20.5001}}}'
    )
    client = mock(answer, ctype="application/json")
    chunks = await collect(OpenAIChat("m", client=client, max_retries=0))
    assert text_of(chunks) == "Here."
    assert usage_of(chunks) == WANT
    assert chunks[-1] == FinishChunk(reason="stop")
