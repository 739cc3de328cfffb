"""``streamtools chat`` walked as a new user would, against FakeServer."""

from __future__ import annotations

import io
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

import pytest
from chat_support import args_for, reader
from test_ui_s16_mcp import lingering_server

from streamtools.cli.chat import build_model, chat, make_agent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio


async def test_a_stream_cut_mid_answer_is_said_once(anyio_backend: str) -> None:
    """The renderer shows the agent's ``StreamError`` ("stream error (stream):
    connection cut …"), then the ``ProviderError`` that ends the exchange, with
    the same message, was printed again as ``error: connection cut …``."""
    async with FakeServer([Reply(text="hello there friend", cut_after=2), "Hi."]) as server:
        args = args_for(server, "--timeout", "30")
        out = io.StringIO()
        code = await chat(
            make_agent(build_model(args), args), reader(["hi\n", "again\n"]), out,
            color=False, prompt=False,
        )
    text = out.getvalue()
    assert code == 1  # piped input, an exchange failed
    lines = [line for line in text.splitlines() if "connection cut by the server" in line]
    assert len(lines) == 1, text
    assert lines[0].startswith("  stream error (stream): ")
    assert "Hi." in text  # the session went on


async def test_a_failure_the_stream_did_not_say_is_still_printed(anyio_backend: str) -> None:
    async with FakeServer([Reply(status=401, body='{"error": {"message": "bad key"}}')]) as server:
        args = args_for(server)
        out = io.StringIO()
        code = await chat(
            make_agent(build_model(args), args), reader(["hi\n"]), out, color=False, prompt=False
        )
    assert code == 1
    assert "error: OpenAI-compatible server answered HTTP 401: bad key" in out.getvalue()


async def test_help_and_a_mistyped_command_are_not_sent_to_the_model(anyio_backend: str) -> None:
    """``/help``, the first thing a new user tries, went to the model as a
    question (a turn spent, an answer made up), as did a mistyped ``/rest``."""
    async with FakeServer(["Paths are text."]) as server:
        args = args_for(server)
        out = io.StringIO()
        lines = ["/help\n", "/rest\n", "/etc/hosts is a file?\n", "/quit\n"]
        code = await chat(
            make_agent(build_model(args), args), reader(lines), out, color=False, prompt=False
        )
        asked = [request["messages"][-1]["content"] for request in server.requests]
    text = out.getvalue()
    assert code == 0
    assert "/reset clears the conversation, /quit (or Ctrl-D) leaves" in text
    assert "unknown command /rest; /help" in text
    assert asked == ["/etc/hosts is a file?"]  # a path is a message: only it went


def _lines(stream: IO[str]) -> queue.Queue[str]:
    """The lines ``stream`` gives, read by a thread ("" at its end): a test waits
    for one with a bound (``queue.get(timeout=…)``) where ``readline`` could hang."""
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        try:
            for line in stream:
                lines.put(line)
        except (OSError, ValueError):  # closed by the test once the command ended
            pass
        lines.put("")

    threading.Thread(target=read, daemon=True).start()
    return lines


def _wait_for_line(lines: queue.Queue[str], start: str) -> None:
    """Until a line that starts with ``start``: a minute, a machine however busy."""
    seen: list[str] = []
    while not seen or not seen[-1].startswith(start):
        try:
            seen.append(lines.get(timeout=60))
        except queue.Empty:
            raise AssertionError(f"no line starting {start!r} within 60 s: {seen}") from None
        assert seen[-1], f"the command ended before a line starting {start!r}: {seen}"


@pytest.mark.parametrize("asked", [True, False], ids=["mid-answer", "waiting-for-input"])
def test_sigterm_closes_the_mcp_sessions_before_the_command_ends(
    tmp_path: Path, asked: bool
) -> None:
    """SIGTERM (kill, timeout(1)) killed the command inside its MCP sessions:
    the stdio server died of a broken pipe, its traceback on the terminal."""
    marker = tmp_path / "closed"
    # mid-answer: a 10 s answer; waiting for input: one exchange answered, then the
    # command waits for the next line (a fixed 3 s sleep, "the MCP server loaded",
    # sent the signal while a loaded machine still started the server)
    reply = Reply(text="slow " * 100, delay=0.1) if asked else "Hello."
    with FakeServer([reply]) as model:
        argv = [sys.executable, "-m", "streamtools", "chat", "--base-url", model.base_url]
        argv += ["--model", "m", "--color", "never", "--mcp", lingering_server(marker)]
        pipe = subprocess.PIPE
        with subprocess.Popen(argv, stdin=pipe, stdout=pipe, stderr=pipe, text=True) as proc:
            try:
                assert proc.stdin is not None and proc.stdout is not None
                lines = _lines(proc.stdout)
                proc.stdin.write("hi\n")
                proc.stdin.flush()
                _wait_for_line(lines, "you › hi")  # the question, echoed
                if asked:
                    for _ in range(600):  # until the answer streams (a minute at most)
                        if model.requests:
                            break
                        time.sleep(0.1)
                    assert model.requests, "the question never reached the model"
                else:
                    _wait_for_line(lines, "─── final answer")
                proc.send_signal(signal.SIGTERM)
                code = proc.wait(timeout=60)
                closed = marker.exists()  # at once: the server ended before the command
                assert proc.stderr is not None
                err = proc.stderr.read()
            finally:
                proc.kill()
    assert code == -signal.SIGTERM
    assert closed
    assert "Traceback" not in err and "BrokenPipeError" not in err
