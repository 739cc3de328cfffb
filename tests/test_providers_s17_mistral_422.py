"""Mistral's API answers a request it cannot validate with a 422 whose
``message`` is an object holding FastAPI's list of problems; the error quoted
the whole body as JSON. It now says each problem at its path, as for
FastAPI's own 422 (a real server on 127.0.0.1)."""

from __future__ import annotations

import json

import pytest
from provider_support import collect

from streamtools.errors import ProviderError
from streamtools.providers import OpenAIChat
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio

MISTRAL_422 = {
    "object": "error",
    "message": {"detail": [
        {"type": "extra_forbidden", "loc": ["body", "messages", 0, "user", "tool_calls"],
         "msg": "Extra inputs are not permitted", "input": None},
        {"type": "missing", "loc": ["body", "model"], "msg": "Field required", "input": {}},
    ]},
    "type": "invalid_request_error",
    "param": None,
    "code": None,
}


async def test_mistral_s_422_is_said_problem_by_problem(anyio_backend: str) -> None:
    reply = Reply(status=422, body=json.dumps(MISTRAL_422), content_type="application/json")
    async with FakeServer([reply], wire="openai") as server:
        provider = OpenAIChat("m", base_url=server.base_url, max_retries=0, stream_usage=False)
        with pytest.raises(ProviderError) as info:
            await collect(provider)
    assert str(info.value) == (
        "OpenAI-compatible server answered HTTP 422: "
        "Extra inputs are not permitted at body.messages.0.user.tool_calls; "
        "Field required at body.model"
    )
    assert info.value.body is not None and "extra_forbidden" in info.value.body
