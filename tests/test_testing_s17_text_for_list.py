"""``ScriptedModel("It is 5.")`` and ``FakeServer("Hello!")``: one text where a
list of replies goes. A str is iterable, so each character became a reply of
its own: the first request was answered "I", the next "t", and a test failed
far from its cause. ``FakeServer(models="m")`` listed the models m, and so on.
Each is now refused when it is made, saying how to write it."""

from __future__ import annotations

import pytest

from streamtools.errors import UsageError
from streamtools.testing import FakeServer, ScriptedModel


def test_scripted_model_refuses_one_text() -> None:
    with pytest.raises(UsageError) as raised:
        ScriptedModel("It is 5.")  # a str is a Sequence[str]: type checkers let it by
    assert str(raised.value) == (
        "ScriptedModel takes a list of replies, one per request, not one text: "
        "ScriptedModel(['It is 5.'])"
    )
    assert ScriptedModel(["It is 5."]).replies == ["It is 5."]


def test_fake_server_refuses_one_text_and_one_model_name() -> None:
    with pytest.raises(ValueError, match=r"not one text: FakeServer\(\['Hello!'\]\)"):
        FakeServer("Hello!")
    with pytest.raises(ValueError, match=r"models=\['m'\]"):
        FakeServer(["Hello!"], models="m")
    with FakeServer(["Hello!"], models=["m"]) as server:
        assert server.models == ("m",)
