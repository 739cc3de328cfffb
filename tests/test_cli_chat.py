"""`streamtools chat` against FakeServer: piped stdin, in-process and as a real subprocess."""

from __future__ import annotations

import argparse
import io
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from chat_support import args_for, reader

from streamtools.cli import main
from streamtools.cli.chat import build_model, chat, make_agent
from streamtools.providers import AnthropicMessages, OllamaChat, OpenAIChat
from streamtools.runtime import Replay
from streamtools.runtime.recording import load
from streamtools.testing import FakeServer, ScriptedModel
from streamtools.testing.fake_server import FakeCall, Reply, Wire

pytestmark = pytest.mark.anyio

CALL = 'Computing. <am:tool_call name="calculator"><expression>2**10</expression></am:tool_call>'


@pytest.mark.parametrize("wire", ["openai", "anthropic", "ollama"])
async def test_session_keeps_one_conversation(anyio_backend: str, wire: Wire) -> None:
    replies = [CALL, "2**10 is 1024.", "You asked about 2**10."]
    async with FakeServer(replies, wire=wire) as server:
        args = args_for(server)
        out = io.StringIO()
        code = await chat(
            make_agent(build_model(args), args),
            reader(["what is 2**10?\n", "\n", "what did I ask?\n"]),
            out,
            color=False,
            prompt=False,
        )
        third = server.requests[2]
    text = out.getvalue()
    assert code == 0
    assert "you > what is 2**10?" in text
    assert "calculator" in text and "<- calculator: 1024" in text
    assert "2**10 is 1024." in text and "You asked about 2**10." in text
    assert "what is 2**10?" in str(third)  # the second question carries the first exchange


async def test_extra_body_joins_ollamas_options(anyio_backend: str) -> None:
    async with FakeServer(["Hi."], wire="ollama") as server:
        body = '{"options": {"num_ctx": 16384}, "keep_alive": "30m"}'
        args = args_for(server, "--extra-body", body, "--temperature", "0.3")
        out = io.StringIO()
        await chat(make_agent(build_model(args), args), reader(["hi\n"]), out, color=False)
        sent = server.requests[0]
    assert "Hi." in out.getvalue()
    assert sent["options"]["num_ctx"] == 16384 and sent["keep_alive"] == "30m"
    assert sent["options"]["temperature"] == 0.3 and sent["options"]["stop"]  # kept


async def test_native_mode_and_reset(anyio_backend: str) -> None:
    call = Reply(calls=(FakeCall(name="clock", arguments={"timezone": "UTC"}),))
    replies: list[str | Reply] = [call, "It is now.", "Fresh start."]
    async with FakeServer(replies) as server:
        args = args_for(server, "--native", "--top-p", "0.8", "--top-k", "20", "--seed", "3")
        out = io.StringIO()
        await chat(
            make_agent(build_model(args), args),
            reader(["time?\n", "/reset\n", "hello\n", "/quit\n", "never read\n"]),
            out,
            color=False,
            prompt=False,
        )
        first, _, third = server.requests
    assert [t["function"]["name"] for t in first["tools"]] == ["calculator", "clock"]
    assert (first["top_p"], first["top_k"], first["seed"]) == (0.8, 20, 3)
    assert "<- clock:" in out.getvalue() and "(conversation cleared)" in out.getvalue()
    assert "time?" not in str(third["messages"])


async def test_provider_error_is_printed_and_the_session_goes_on(anyio_backend: str) -> None:
    replies: list[str | Reply] = [
        Reply(status=404, body='{"error": {"message": "model m not found"}}'),
        "Hi!",
    ]
    async with FakeServer(replies) as server:
        args = args_for(server)
        out = io.StringIO()
        code = await chat(
            make_agent(build_model(args), args),
            reader(["first question\n", "two\n"]),
            out,
            color=False,
        )
        second = server.requests[1]
    assert code == 0
    assert "error: OpenAI-compatible server answered HTTP 404: model m not found" in out.getvalue()
    assert "Hi!" in out.getvalue()
    users = [m["content"] for m in second["messages"] if m["role"] == "user"]
    assert users == ["two"]  # the failed exchange was dropped


async def test_an_error_s_control_characters_are_shown_not_obeyed(anyio_backend: str) -> None:
    """A failed exchange's message quotes the server's error body (or, for
    ``RepairExhausted``, what the model wrote): its escape sequences went to the
    terminal as they were, where the events' text is shown as ``␛``."""
    body = '{"error": {"message": "\\u001b]0;pwned\\u0007\\u001b[2J gone"}}'
    async with FakeServer([Reply(status=404, body=body)]) as server:
        args = args_for(server)
        out = io.StringIO()
        await chat(make_agent(build_model(args), args), reader(["hi\n"]), out, color=False)
    assert "\x1b" not in out.getvalue() and "\x07" not in out.getvalue()
    assert "]0;pwned" in out.getvalue()  # as ␛]0;pwned␇, or ?]0;pwned? in ASCII


async def test_piped_session_with_a_failed_exchange_exits_1(anyio_backend: str) -> None:
    # as sqlite3 reading a pipe: the later lines still run, the status tells the script
    replies: list[str | Reply] = [Reply(status=404, body="no such model"), "Hi!"]
    async with FakeServer(replies) as server:
        args = args_for(server)
        out = io.StringIO()
        code = await chat(
            make_agent(build_model(args), args),
            reader(["first\n", "second\n"]),
            out,
            color=False,
            prompt=False,
        )
    assert code == 1
    assert "error: " in out.getvalue() and "Hi!" in out.getvalue()


async def test_piped_session_without_failures_exits_0(anyio_backend: str) -> None:
    async with FakeServer(["Hi!"]) as server:
        args = args_for(server)
        out = io.StringIO()
        code = await chat(
            make_agent(build_model(args), args), reader(["hi\n"]), out, color=False, prompt=False
        )
    assert code == 0 and "Hi!" in out.getvalue()


def test_subprocess_with_the_server_down_exits_1() -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.run(
        [
            sys.executable, "-m", "streamtools", "chat", "--color", "never", "--model", "m",
            "--base-url", f"http://127.0.0.1:{port}/v1",
        ],
        input="hi\n/quit\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "error: cannot connect" in proc.stderr and "Traceback" not in proc.stderr
    assert "error" not in proc.stdout  # errors go to stderr


def test_build_model_picks_provider_and_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ak")
    monkeypatch.delenv("STREAMTOOLS_API_KEY", raising=False)
    parser = argparse.ArgumentParser()
    from streamtools.cli import chat as chat_module

    chat_module.register(parser.add_subparsers())
    anthropic = build_model(parser.parse_args(["chat", "--model", "c", "--provider", "anthropic"]))
    assert isinstance(anthropic, AnthropicMessages) and anthropic.api_key == "ak"
    assert anthropic.base_url == "https://api.anthropic.com"
    ollama = build_model(parser.parse_args(["chat", "--model", "q", "--provider", "ollama"]))
    assert isinstance(ollama, OllamaChat) and ollama.base_url == "http://127.0.0.1:11434"
    openai = build_model(parser.parse_args(["chat", "--model", "g", "--no-stop"]))
    assert isinstance(openai, OpenAIChat) and openai.supports_stop is False


def test_native_and_hybrid_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["chat", "--model", "m", "--native", "--hybrid"])
    assert code == 2 and "exclude" in capsys.readouterr().err


def test_a_record_file_that_cannot_be_written_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--record`` into a missing directory raised FileNotFoundError out of the
    command, a traceback; it is a one-line error and exit 2, before any request."""
    target = tmp_path / "missing" / "session.jsonl"
    code = main(["chat", "--model", "m", "--record", str(target)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.startswith(f"streamtools chat: error: cannot write {target}: ")


def test_subprocess_with_piped_stdin_and_record(tmp_path: Path) -> None:
    recording = tmp_path / "session.jsonl"
    with FakeServer([CALL, "2**10 is 1024."]) as server:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "streamtools",
                "chat",
                "--base-url",
                server.base_url,
                "--model",
                "m",
                "--record",
                str(recording),
                "--color",
                "never",
            ],
            input="what is 2**10?\n",
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 0, proc.stderr
    assert "1024" in proc.stdout and "Traceback" not in proc.stderr
    segments = load(recording)
    assert len(segments) == 2
    assert Replay(recording).remaining == 2


async def test_hybrid_mode(anyio_backend: str) -> None:
    select = Reply(calls=(FakeCall(name="select_tools", arguments={"names": ["calculator"]}),))
    replies: list[str | Reply] = [select, CALL, "1024."]
    async with FakeServer(replies) as server:
        args = args_for(server, "--hybrid")
        out = io.StringIO()
        await chat(make_agent(build_model(args), args), reader(["2**10?\n"]), out, color=False)
        first, second, _ = server.requests
    assert [t["function"]["name"] for t in first["tools"]] == ["select_tools"]
    assert '<am:tool name="calculator"' in second["messages"][0]["content"]
    text = out.getvalue()  # the selection request is named, not counted as a turn
    assert "<- calculator: 1024" in text
    assert "final answer after tool selection and 2 turns" in text


def test_think_open_flag_reaches_the_agent(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    from streamtools.cli import chat as chat_module

    chat_module.register(parser.add_subparsers())
    model = ScriptedModel([])  # the agent is only built, never run
    agent = make_agent(model, parser.parse_args(["chat", "--model", "m", "--think-open"]))
    assert agent.think_open is True
    argv = ["chat", "--model", "m", "--think-open", "--hybrid"]
    assert make_agent(model, parser.parse_args(argv)).agent_kwargs["think_open"] is True
    assert make_agent(model, parser.parse_args(["chat", "--model", "m"])).think_open is False
    argv = ["chat", "--model", "m", "--native", "--think-open"]
    assert make_agent(model, parser.parse_args(argv)).think_open is True


async def test_a_byte_order_mark_before_the_first_line_is_not_sent(anyio_backend: str) -> None:
    """A file saved with a byte order mark (Windows Notepad) and piped in sent
    U+FEFF to the model before the first question, and a first line `/quit`
    was taken as a question."""
    async with FakeServer(["Hi."]) as server:
        args = args_for(server)
        out = io.StringIO()
        code = await chat(
            make_agent(build_model(args), args),
            reader(["\ufeffhello\r\n", "/quit\n", "after quit\n"]),
            out,
            color=False,
            prompt=False,
        )
        assert len(server.requests) == 1
        sent = server.requests[0]["messages"][-1]["content"]
    assert code == 0
    assert sent == "hello"

    async with FakeServer(["unused"]) as server:
        args = args_for(server)
        lines = reader(["\ufeff/quit\n", "a question\n"])
        code = await chat(make_agent(build_model(args), args), lines, out, prompt=False)
        assert server.requests == []


async def test_a_read_of_the_next_line_ends_at_once_when_cancelled(
    anyio_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C at the prompt cancels the session, but the line was read in a worker
    thread that cancellation waits for: the command hung until Enter (an open
    pipe: for ever), where the README promises exit status 130. Here nobody types;
    a watchdog sends a line after 20 s, so that the old wait ends too."""
    import os
    import threading

    from streamtools.cli.chat import _stdin_line

    read_end, write_end = os.pipe()
    typed = threading.Event()

    def watchdog() -> None:
        if not typed.wait(20):
            os.write(write_end, b"typed by the watchdog\n")

    with os.fdopen(read_end, encoding="utf-8") as stdin:  # a pipe: never blocks to open
        monkeypatch.setattr(sys, "stdin", stdin)
        guard = threading.Thread(target=watchdog)
        guard.start()
        try:
            with anyio.move_on_after(0.3) as scope:  # the Ctrl-C
                line = await _stdin_line()
            nobody_typed = not typed.is_set() and guard.is_alive()
        finally:
            typed.set()
            guard.join()
            os.close(write_end)  # the reader left behind sees the end of input
    assert scope.cancelled_caught, line
    assert nobody_typed
