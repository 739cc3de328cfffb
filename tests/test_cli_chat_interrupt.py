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
import time

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


def test_ctrl_c_during_an_mcp_tool_call_keeps_the_server_for_the_next_question() -> None:
    from mcp_servers.harness import memory_command

    slow = '<am:tool_call name="slow"><seconds>60</seconds></am:tool_call>'
    add = '<am:tool_call name="add"><a>40</a><b>2</b></am:tool_call>'
    with FakeServer([slow, add, "It is 42."]) as model:
        proc, master = start_chat(model.base_url, "--mcp", memory_command())
        try:
            say(master, "take your time")
            deadline = time.monotonic() + 30
            while not model.requests and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(1.5)  # the call went out and the tool sleeps
            proc.send_signal(signal.SIGINT)
            time.sleep(0.5)
            say(master, "what is 40 + 2?")
            while len(model.requests) < 3 and time.monotonic() < deadline + 30:
                time.sleep(0.05)
            say(master, "/quit")
            out, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
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
