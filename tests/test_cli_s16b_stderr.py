"""``streamtools chat``'s errors go to stderr, the session to stdout.

An exchange's error (``error: …``) and a stream that broke (``stream error …``)
were printed on stdout with the answer: ``streamtools chat … > session.txt``
put them in the file and showed nothing on the terminal, and a script could not
tell them from the model's text."""

from __future__ import annotations

import io
import subprocess
import sys

from streamtools.events import StreamError, TextDelta
from streamtools.runtime.console import ConsoleRenderer
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply


def run_chat(base_url: str, lines: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "streamtools", "chat", "--color", "never"]
    argv += ["--model", "m", "--base-url", base_url, "--timeout", "30"]
    return subprocess.run(argv, input=lines, capture_output=True, text=True, timeout=60)


def test_a_failed_exchange_is_said_on_stderr_and_the_session_goes_on() -> None:
    replies: list[str | Reply] = [
        Reply(status=401, body='{"error": {"message": "bad key"}}'),
        Reply(text="hello there friend", cut_after=2),
        "Fine now.",
    ]
    with FakeServer(replies) as server:
        proc = run_chat(server.base_url, "first\nsecond\nthird\n")
    assert proc.returncode == 1  # piped input, exchanges failed
    first, hint, second = proc.stderr.splitlines()
    assert first == "error: OpenAI-compatible server answered HTTP 401: bad key"
    assert hint.startswith("hint: the server ")  # what to do about a 401: test_cli_s17_hints
    assert second.startswith("  stream error (stream): connection cut by the server")
    assert "error" not in proc.stdout
    assert "Fine now." in proc.stdout and "third" in proc.stdout


def test_an_error_on_err_ends_the_answer_s_line_first() -> None:
    out, err = io.StringIO(), io.StringIO()
    view = ConsoleRenderer(out, color=False, err=err)
    view.render(TextDelta(text="half a line"))
    view.render(StreamError(kind="stream", message="cut"))
    view.error("gone")
    # the answer's line is ended first: on a terminal the error starts a line
    assert out.getvalue() == "half a line\n"
    assert err.getvalue() == "  stream error (stream): cut\nerror: gone\n"
    alone = io.StringIO()  # without err, errors go where the rest goes
    view = ConsoleRenderer(alone, color=False)
    view.render(TextDelta(text="half"))
    view.error("gone")
    assert alone.getvalue() == "half\nerror: gone\n"
