"""One name per thing in ``streamtools.testing``: ``scripted.Reply`` (what a
``ScriptedModel`` plays, a type alias) and ``fake_server.Reply`` (the class that
scripts a ``FakeServer`` answer, which README documents) shared a name, so a test
importing both got whichever it imported last."""

from __future__ import annotations

import importlib

import pytest

import streamtools.testing
from streamtools.errors import ProviderError
from streamtools.model import ChatMessage, ModelRequest, TextChunk
from streamtools.testing import (
    FakeCall,
    FakeServer,
    Reply,
    ScriptedModel,
    ScriptedReply,
    fake_server,
    scripted,
)

MODULES = ["scripted", "fake_server", "fake_wire", "fake_whole"]


def test_a_name_exported_twice_is_one_thing() -> None:
    seen: dict[str, tuple[str, object]] = {}
    for name in MODULES:
        module = importlib.import_module(f"streamtools.testing.{name}")
        for public in getattr(module, "__all__", []):
            value = getattr(module, public)
            if public in seen:
                where, before = seen[public]
                assert value is before, f"{public} of {name} is not the {public} of {where}"
            seen[public] = (name, value)
    for public in streamtools.testing.__all__:
        value = getattr(streamtools.testing, public)
        if public in seen:
            assert value is seen[public][1]


def test_the_package_names_each_helper_once() -> None:
    assert Reply is fake_server.Reply and FakeCall is fake_server.FakeCall
    assert FakeServer is fake_server.FakeServer and ScriptedModel is scripted.ScriptedModel
    assert ScriptedReply is scripted.ScriptedReply
    assert not hasattr(scripted, "Reply")


@pytest.mark.anyio
async def test_scripted_replies_of_every_kind_play() -> None:
    replies: list[ScriptedReply] = ["Hi", lambda request: "again", ProviderError("HTTP 429")]
    model = ScriptedModel(replies)
    request = ModelRequest(messages=(ChatMessage(role="user", content="hi"),))
    for want in ("Hi", "again"):
        async with model.stream(request) as chunks:
            got = "".join([c.text async for c in chunks if isinstance(c, TextChunk)])
        assert got == want
    with pytest.raises(ProviderError, match="429"):
        async with model.stream(request):
            pass  # pragma: no cover
