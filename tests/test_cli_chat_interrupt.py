"""Ctrl-C in an interactive ``streamtools chat``: during an answer it stops that
answer and the session goes on; at the prompt it leaves (exit status 130).

A real subprocess whose stdin is a terminal (a pty, so the session is
interactive), a FakeServer model that stalls mid-answer, and a real SIGINT.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from streamtools.testing.fake_server import FakeServer, Reply

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a pty and SIGINT")


def start_chat(base_url: str, *extra: str) -> tuple[subprocess.Popen[str], int]:
    import pty

    master, slave = pty.openpty()
    argv = [sys.executable, "-m", "streamtools", "chat", "--color", "never"]
    argv += ["--base-url", base_url, "--model", "m", *extra]
    proc = subprocess.Popen(
        argv, stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    os.close(slave)
    return proc, master


def say(master: int, line: str) -> None:
    os.write(master, line.encode() + b"\n")


def test_ctrl_c_during_an_answer_stops_it_and_the_session_goes_on() -> None:
    stalled = Reply(text="Let me think about that at some length.", stall_after=2)
    with FakeServer([stalled, "Second answer."]) as model:
        proc, master = start_chat(model.base_url)
        try:
            say(master, "first question")
            assert model.wait_stalled(30)  # mid-answer
            time.sleep(0.3)  # the first pieces are on screen
            proc.send_signal(signal.SIGINT)
            time.sleep(0.5)
            say(master, "second question")
            deadline = time.monotonic() + 30
            while len(model.requests) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            say(master, "/quit")
            out, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
            os.close(master)
        second = model.requests[1]["messages"] if len(model.requests) > 1 else None
    assert proc.returncode == 0, (out, err)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert "(stopped)" in out
    assert "Second answer." in out
    # the stopped exchange is left out, as a failed one is: the model sees the new question only
    assert second is not None
    assert [m["content"] for m in second if m["role"] == "user"] == ["second question"]


def test_ctrl_c_at_the_prompt_leaves_with_130() -> None:
    with FakeServer(["unused"]) as model:
        proc, master = start_chat(model.base_url)
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline().startswith("streamtools chat: m via openai")
            time.sleep(0.5)  # at the prompt
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
            os.close(master)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert model.requests == []


class Screen:
    """What the chat writes to stdout, read as it comes (a thread), so a test can
    wait for what the user would see before pressing a key."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.text = ""
        self._lock = threading.Lock()
        assert proc.stdout is not None
        self._thread = threading.Thread(target=self._read, args=(proc.stdout,), daemon=True)
        self._thread.start()

    def _read(self, stream: Any) -> None:
        while piece := stream.read(1):
            with self._lock:
                self.text += piece

    def wait_for(self, words: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if words in self.text:
                    return
            time.sleep(0.05)
        raise AssertionError(f"{words!r} never shown; the screen: {self.text!r}")

    def rest(self) -> str:
        self._thread.join(timeout=30)
        return self.text


def test_ctrl_c_during_an_mcp_tool_call_keeps_the_server_for_the_next_question() -> None:
    from mcp_servers.harness import memory_command

    slow = '<am:tool_call name="slow"><seconds>60</seconds></am:tool_call>'
    add = '<am:tool_call name="add"><a>40</a><b>2</b></am:tool_call>'
    with FakeServer([slow, add, "It is 42."]) as model:
        proc, master = start_chat(model.base_url, "--mcp", memory_command())
        screen = Screen(proc)
        try:
            screen.wait_for("you ")  # the MCP server is up: the prompt is shown
            say(master, "take your time")
            screen.wait_for("slow")  # the call is on screen: the tool runs (60 s)
            time.sleep(0.5)
            proc.send_signal(signal.SIGINT)
            screen.wait_for("(stopped)")
            say(master, "what is 40 + 2?")
            screen.wait_for("It is 42.")
            say(master, "/quit")
            proc.wait(timeout=30)
            out = screen.rest()
            err = proc.stderr.read() if proc.stderr is not None else ""
        finally:
            proc.kill()
            proc.wait(timeout=30)
            screen.rest()
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
            os.close(master)
        requests = model.requests
    assert proc.returncode == 0, (out, err)
    assert "(stopped)" in out and "It is 42." in out
    assert len(requests) == 3
    assert '<am:tool_result name="add">' in requests[2]["messages"][-1]["content"]
    assert "42" in requests[2]["messages"][-1]["content"]


@pytest.mark.anyio
async def test_a_second_ctrl_c_while_the_answer_stops_leaves() -> None:
    from streamtools.cli.chat import AnswerStopper

    stopper = AnswerStopper()
    assert stopper.stop() is False  # at the prompt: leave
    with anyio.CancelScope() as answer:
        stopper.answer = answer
        assert stopper.stop() is True and answer.cancel_called  # stop the answer
        assert stopper.stop() is False  # again, before it has stopped: leave
        await anyio.lowlevel.checkpoint()
    assert answer.cancelled_caught
