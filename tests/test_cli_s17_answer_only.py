"""``streamtools chat`` into a pipe: ``--answer-only`` (the default for a question
given on the command line when stdout is not a terminal) writes only the
answer to stdout; tool activity and errors go to stderr. Before it, the whole
session (the echoed question, calls, results, turn rules) went to stdout, so
``streamtools chat … | other_tool`` fed all of it to the other tool."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from chat_support import args_for, reader

from streamtools.cli.chat import build_model, chat, make_agent
from streamtools.testing import FakeServer, Reply

CALL = '<am:tool_call name="calculator"><expression>2**10</expression></am:tool_call>'
ANSWER = "2**10 is 1024."


def _command(server: FakeServer, *extra: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "streamtools", "chat", "--base-url", server.base_url]
    return subprocess.run(
        [*argv, "--model", "m", "--color", "never", *extra],
        input=stdin,
        capture_output=True,  # stdout is a pipe, not a terminal
        text=True,
        timeout=60,
    )


def test_a_question_into_a_pipe_gets_only_the_answer() -> None:
    with FakeServer(["Let me compute. " + CALL, ANSWER]) as server:
        proc = _command(server, "what is 2**10?")
        asked = [request["messages"][-1]["content"] for request in server.requests]
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ANSWER + "\n"
    assert "calculator" in proc.stderr and "1024" in proc.stderr  # the call and its result
    assert "Let me compute." not in proc.stdout + proc.stderr  # no answer, not shown
    assert asked[0] == "what is 2**10?" and len(asked) == 2


def test_no_answer_only_keeps_the_session_on_stdout() -> None:
    with FakeServer([CALL, ANSWER]) as server:
        proc = _command(server, "--no-answer-only", "what is 2**10?")
    assert proc.returncode == 0, proc.stderr
    assert "what is 2**10?" in proc.stdout and "calculator" in proc.stdout
    assert ANSWER in proc.stdout


def test_lines_from_stdin_keep_the_session_unless_asked() -> None:
    """``chat < questions > session.txt`` kept the session, as README says: still so."""
    with FakeServer([ANSWER, ANSWER]) as server:
        whole = _command(server, stdin="what is 2**10?\n")
        only = _command(server, "--answer-only", stdin="what is 2**10?\n")
    assert whole.returncode == 0 and "what is 2**10?" in whole.stdout and ANSWER in whole.stdout
    assert only.returncode == 0 and only.stdout == ANSWER + "\n"


def test_a_failed_question_writes_nothing_to_stdout() -> None:
    with FakeServer([Reply(status=401, body='{"error": {"message": "bad key"}}')]) as server:
        proc = _command(server, "hi")
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "bad key" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.anyio
async def test_each_answer_of_a_session_is_one_block_on_out(anyio_backend: str) -> None:
    async with FakeServer([CALL, "It is 1024.\n", "Bye."]) as server:
        args = args_for(server)
        out, err = io.StringIO(), io.StringIO()
        code = await chat(
            make_agent(build_model(args), args), reader(["2**10?\n", "bye\n"]), out,
            color=False, prompt=False, err=err, answer_only=True,
        )
    assert code == 0
    assert out.getvalue() == "It is 1024.\nBye.\n"
    assert "calculator" in err.getvalue() and "2**10?" not in err.getvalue()


class _Terminal(io.StringIO):
    """A UTF-8 terminal, as far as the renderer can tell."""

    @property
    def encoding(self) -> str:  # type: ignore[override]  # (a plain attribute in typeshed)
        return "utf-8"

    def isatty(self) -> bool:
        return True


@pytest.mark.anyio
@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "pipe"])
async def test_an_answers_control_characters_are_not_obeyed_by_a_terminal(
    anyio_backend: str, terminal: bool
) -> None:
    """``--answer-only`` wrote the answer as it came, so on a terminal a model's
    escape sequence (here OSC 52, which sets the clipboard) was obeyed; a pipe
    still gets the text as the model wrote it."""
    answer = "Done.\x1b]52;c;ZXZpbA==\x07 Really."
    async with FakeServer([answer]) as server:
        args = args_for(server)
        out = _Terminal() if terminal else io.StringIO()
        code = await chat(
            make_agent(build_model(args), args), reader(["hi\n"]), out,
            color=False, prompt=False, err=io.StringIO(), answer_only=True,
        )
    assert code == 0
    if terminal:
        assert "\x1b" not in out.getvalue() and "\x07" not in out.getvalue()
        assert out.getvalue() == "Done.␛]52;c;ZXZpbA==␇ Really.\n"
    else:
        assert out.getvalue() == answer + "\n"


def test_stderr_holds_the_tools_at_work_and_nothing_else() -> None:
    """Each answer came framed on stderr by turn rules and a final-answer rule,
    noise in a pipeline; an answer with no tool now leaves stderr empty."""
    with FakeServer(["<think>hmm</think>Plain.", CALL, ANSWER]) as server:
        plain = _command(server, "hi")
        tooled = _command(server, "what is 2**10?")
    assert plain.returncode == 0 and plain.stdout == "Plain.\n"
    assert plain.stderr == ""
    assert tooled.returncode == 0 and tooled.stdout == ANSWER + "\n"
    lines = tooled.stderr.splitlines()
    assert len(lines) == 2, lines
    assert "calculator" in lines[0] and '"2**10"' in lines[0]  # the call
    assert "calculator" in lines[1] and "1024" in lines[1]  # its result
