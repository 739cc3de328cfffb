"""``streamtools ui``: a flag for the other mode (the offline replay, a live
model) is a usage error, not silently ignored."""

from __future__ import annotations

import argparse
import socket
from pathlib import Path

import anyio
import httpx
import pytest
from test_ui_support import read_ui_stream, serve

from streamtools.cli.ui import build_app, register
from streamtools.errors import UsageError
from streamtools.testing import FakeServer

LIVE = ("--base-url", "http://127.0.0.1:9/v1", "--model", "m")
CHAT = {"messages": [{"role": "user", "content": "hi"}]}


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    return parser.parse_args(["ui", *argv])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--native",), "--native is for a live model (--model)"),
        (("--system", "Be brief."), "--system is for a live model (--model)"),
        (("--api-key-env", "MY_KEY"), "--api-key-env is for a live model"),
        ((*LIVE, "--fixture", "x.jsonl"), "--fixture is for the offline replay, not a live model"),
        ((*LIVE, "--speed", "2"), "--speed is for the offline replay"),
        ((*LIVE, "--instant"), "--instant is for the offline replay"),
    ],
)
def test_a_flag_the_mode_does_not_use_is_a_usage_error(
    argv: tuple[str, ...], message: str
) -> None:
    """``streamtools ui --native`` served the offline replay in am_xml;
    ``--fixture`` with a live model played nothing: each flag was dropped
    without a word. (``build_app`` is what the command runs before it serves;
    ``streamtools.cli.main`` says a UsageError in one line, exit status 2.)"""
    with pytest.raises(UsageError) as info:
        build_app(parse(*argv))
    assert str(info.value).startswith(message)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ((*LIVE, "--native", "--dialect", "hermes"), "argument --dialect: not allowed with"),
        (("--speed", "2", "--instant"), "argument --instant: not allowed with argument --speed"),
    ],
)
def test_flags_that_exclude_each_other_are_refused(
    argv: tuple[str, ...], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--native --dialect hermes`` was native; ``--speed 2 --instant`` instant."""
    with pytest.raises(SystemExit) as info:
        parse(*argv)
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_the_defaults_still_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    """Offline: the demo recording in am_xml at its recorded pace; live: the key
    from OPENAI_API_KEY, in am_xml."""
    offline = parse("--instant")
    app, subtitle = build_app(offline)
    assert subtitle.startswith("offline: a replay of demo.jsonl")
    with serve(app) as server:
        reply = httpx.post(server.url + "/api/chat", json=CHAT, timeout=30)
    [card, *_] = read_ui_stream(reply.content).tool_parts
    assert card["toolName"] == "calculator"  # the demo's am_xml calls were parsed

    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    with FakeServer(["Hello."]) as model:
        app, subtitle = build_app(parse("--base-url", model.base_url, "--model", "m"))
        with serve(app) as server:
            reply = httpx.post(server.url + "/api/chat", json=CHAT, timeout=30)
        [received] = model.received
    assert subtitle.endswith(", am_xml dialect")
    assert read_ui_stream(reply.content).text == "Hello."
    assert received.headers["authorization"] == "Bearer sk-from-env"
    assert "am:tool_call" in str(received.body)  # the dialect's prompt


def test_an_api_key_env_that_is_not_set_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--api-key-env OPENROUTER_API_KEY`` with the variable unset (or the key
    itself pasted as the value) served without a key: every message a 401."""
    monkeypatch.delenv("ST_S16_UNSET_KEY", raising=False)
    with pytest.raises(UsageError) as info:
        build_app(parse(*LIVE, "--api-key-env", "ST_S16_UNSET_KEY"))
    assert str(info.value) == (
        "--api-key-env ST_S16_UNSET_KEY: no such environment variable is set "
        "(it names the variable that holds the key)"
    )
    pasted = "sk-proj-0123456789abcdef"
    with pytest.raises(UsageError) as info:
        build_app(parse(*LIVE, "--api-key-env", pasted))
    assert pasted not in str(info.value)  # a key pasted there is not echoed to the screen
    assert str(info.value).startswith("--api-key-env <24 characters, not shown>: ")

    monkeypatch.setenv("ST_S16_SET_KEY", "sk-set")
    with FakeServer(["Hello."]) as model:
        live = ("--base-url", model.base_url, "--model", "m")
        args = parse(*live, "--api-key-env", "ST_S16_SET_KEY")
        app, _ = build_app(args)
        with serve(app) as server:
            httpx.post(server.url + "/api/chat", json=CHAT, timeout=30)
        [received] = model.received
    assert received.headers["authorization"] == "Bearer sk-set"


FABLE = (
    'Adding. <am:tool_call name="calculator"><expression>2+2</expression></am:tool_call>'
    '<am:tool_result name="calculator">5</am:tool_result> So it is 5.'
)


def test_a_reply_ends_at_its_first_call_as_in_chat() -> None:
    """The live agent had no stop-at-call (``streamtools chat`` has): a model
    that went on past its call and wrote the result it expected had that
    shown on the page as its answer ("So it is 5.") before the tool ran."""
    with FakeServer([FABLE, "It is 4."]) as model:
        app, _ = build_app(parse("--base-url", model.base_url, "--model", "m"))
        with serve(app) as server:
            reply = httpx.post(server.url + "/api/chat", json=CHAT, timeout=30)
        first = model.requests[0]
    reader = read_ui_stream(reply.content)
    assert reader.errors == []
    assert reader.text == "Adding. It is 4."
    assert "</am:tool_call>" in first["stop"]
    [card] = reader.tool_parts
    assert card["output"] == "4"


def test_a_model_that_rejects_stop_is_served_with_and_without_no_stop() -> None:
    """A model that refuses the ``stop`` parameter (o-series, some gpt-5)
    needed ``--no-stop``, as in ``streamtools chat``: without it every reply
    was the 400. The provider now asks again without ``stop`` and cuts the
    reply at its first call client-side (``providers.refused_fields``);
    ``--no-stop`` still sends none from the start."""
    with FakeServer([FABLE, "It is 4.", FABLE, "It is 4."], reject_stop=True) as model:
        live = ("--base-url", model.base_url, "--model", "m")
        found, _ = build_app(parse(*live))
        told, _ = build_app(parse(*live, "--no-stop"))
        with serve(found) as server:
            before = httpx.post(server.url + "/api/chat", json=CHAT, timeout=30)
        refused = len(model.requests)
        with serve(told) as server:
            after = httpx.post(server.url + "/api/chat", json=CHAT, timeout=30)
        sent = model.requests
    for reply in (before, after):
        reader = read_ui_stream(reply.content)
        assert reader.errors == []
        assert reader.text == "Adding. It is 4."  # cut at the call, client-side
    # the refused request and the two of the answer, then --no-stop's two
    assert refused == 3
    assert [body.get("stop") for body in sent] == [["</am:tool_call>"], None, None, None, None]


def test_a_port_in_use_is_one_line_with_the_way_out(capsys: pytest.CaptureFixture[str]) -> None:
    """The default port taken (another ui still running) said ``[Errno 98]
    Address already in use`` and no more; ``--port 0`` was the way out."""
    from streamtools.cli import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        number = taken.getsockname()[1]
        assert main(["ui", "--port", str(number), "--instant"]) == 1
    captured = capsys.readouterr()
    assert captured.err == (
        f"streamtools ui: cannot listen on 127.0.0.1:{number}: Address already in use "
        "(--port 0 takes any free one)\n"
    )
    assert captured.out == ""


def test_a_recording_of_native_calls_is_replayed_with_its_calls(tmp_path: Path) -> None:
    """``streamtools chat --native --record`` makes a recording of native call
    chunks; ``streamtools ui --fixture`` played it through a dialect's agent,
    which has no use for them: the page showed the text after the call, and
    no call."""
    from streamtools.model import CallChunk, ChatMessage, FinishChunk, ModelRequest, TextChunk
    from streamtools.runtime import record
    from streamtools.testing import ScriptedModel

    path = tmp_path / "native.jsonl"
    call = CallChunk(index=0, id="call_a", name="calculator", arguments='{"expression": "6*7"}')
    model = record(
        ScriptedModel([[call, FinishChunk(reason="tool_calls")], [TextChunk(text="It is 42.")]]),
        path,
    )

    async def play() -> None:
        request = ModelRequest(messages=(ChatMessage(role="user", content="6*7?"),))
        for _ in range(2):
            async with model.stream(request) as chunks:
                async for _chunk in chunks:
                    pass

    anyio.run(play)
    app, _ = build_app(parse("--fixture", str(path), "--instant"))
    with serve(app) as server:
        reply = httpx.post(server.url + "/api/chat", json=CHAT, timeout=30)
    reader = read_ui_stream(reply.content)
    assert reader.errors == []
    assert reader.text == "It is 42."
    [card] = reader.tool_parts
    assert (card["toolName"], card["input"], card["output"]) == (
        "calculator", {"expression": "6*7"}, "42",
    )
