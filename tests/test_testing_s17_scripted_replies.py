"""``ScriptedModel`` given what it cannot play (a ``FakeServer`` ``Reply``, which
``streamtools.testing`` exports beside it; a dict; None) raised ``TypeError:
'Reply' object is not iterable`` from deep inside the agent's turn (mypy says
so ahead, untyped code did not). It is now a ``UsageError`` that names the
reply and says what a reply may be."""

from __future__ import annotations

from typing import Any

import pytest

from streamtools.errors import ProviderError, UsageError
from streamtools.model import ChatMessage, ModelRequest, TextChunk
from streamtools.runtime import Agent
from streamtools.testing import Reply, ScriptedModel

REQ = ModelRequest(messages=(ChatMessage(role="user", content="hi"),))


def test_a_fake_server_reply_is_refused_when_the_model_is_made() -> None:
    with pytest.raises(UsageError, match=r"ScriptedModel reply 2 is Reply\(") as info:
        ScriptedModel(["fine", Reply(text="Hi")])  # type: ignore[list-item]
    assert "scripts a FakeServer's HTTP answer" in str(info.value)
    assert "TextChunk" in str(info.value)


@pytest.mark.parametrize("bad", [None, {"text": "Hi"}, 42, b"bytes"])
def test_anything_else_that_is_no_reply_is_refused(bad: object) -> None:
    with pytest.raises(UsageError, match="a reply is text, a list of chunks, an exception"):
        ScriptedModel([bad])  # type: ignore[list-item]


def test_a_list_holding_what_is_no_chunk_is_refused() -> None:
    with pytest.raises(UsageError, match=r"reply 1: 'Hi' among its chunks is neither"):
        ScriptedModel([[TextChunk(text="a"), "Hi"]])  # type: ignore[list-item]


@pytest.mark.anyio
async def test_a_functions_answer_is_checked_when_the_request_comes(anyio_backend: str) -> None:
    def answer(request: ModelRequest) -> Any:  # (untyped code, as far as mypy sees)
        return Reply(text="Hi")

    model = ScriptedModel([answer])
    with pytest.raises(UsageError, match="ScriptedModel reply 1 is Reply"):
        await Agent(model).run("hi")


@pytest.mark.anyio
async def test_what_may_be_played_still_plays(anyio_backend: str) -> None:
    model = ScriptedModel(
        ["Hi.", [TextChunk(text="a"), ProviderError("cut")], lambda request: "again", ()]
    )
    for want in ("Hi.", "a"):
        got = ""
        try:
            async with model.stream(REQ) as chunks:
                async for chunk in chunks:
                    got += chunk.text if isinstance(chunk, TextChunk) else ""
        except ProviderError:
            pass
        assert got == want
    assert (await Agent(model).run("x")).text == "again"
