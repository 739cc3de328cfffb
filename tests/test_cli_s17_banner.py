"""An interactive ``streamtools chat`` says where it talks: the first line named
the model and the wire but not the server, so a session without ``--base-url``
(OpenAI's hosted API, when a local server was meant) looked like any other
until its first question failed; and a ``--hybrid`` session read as a plain
dialect one."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from streamtools.testing import FakeServer

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a pty")


def first_line(*options: str) -> str:
    import pty

    master, slave = pty.openpty()  # stdin a terminal: the session is interactive
    argv = [sys.executable, "-m", "streamtools", "chat", "--color", "never", "--model", "m"]
    proc = subprocess.Popen(
        [*argv, *options], stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )
    os.close(slave)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        os.write(master, b"/quit\n")
        proc.communicate(timeout=30)
    finally:
        proc.kill()
        os.close(master)
    assert proc.returncode == 0
    return line.rstrip("\n")


def test_the_first_line_names_the_server() -> None:
    with FakeServer(["unused"]) as server:
        url = server.base_url
        line = first_line("--base-url", url)
    assert line == (
        f"streamtools chat: m via openai at {url} (am_xml dialect); "
        "/help for commands"
    )


def test_without_base_url_it_names_the_default() -> None:
    # nothing is sent before a question: the hosted default is only named
    line = first_line("--provider", "anthropic", "--dialect", "hermes")
    assert line.startswith("streamtools chat: m via anthropic at https://api.anthropic.com ")


def test_a_hybrid_session_says_so() -> None:
    with FakeServer(["unused"]) as server:
        line = first_line("--base-url", server.base_url, "--hybrid")
    assert "(tools picked natively, then the am_xml dialect)" in line
