"""``streamtools ui --mcp`` at a terminal says that it is starting the MCP
servers, before the wait (a first ``npx -y`` run downloads its server)."""

from __future__ import annotations

import os
import select
import signal
import sys
import time

import pytest
from mcp_servers.harness import memory_command

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal")


def test_a_terminal_is_told_the_mcp_servers_are_starting() -> None:
    """It printed nothing until the servers had loaded: up to a minute of
    silence at the terminal for a server that npx downloads first."""
    import pty

    argv = [sys.executable, "-m", "streamtools", "ui", "--port", "0", "--instant"]
    argv += ["--mcp", memory_command(), "--mcp-timeout", "30"]
    pid, fd = pty.fork()
    if pid == 0:  # the child: the command, its stdout and stderr the terminal
        try:
            os.execv(sys.executable, argv)
        finally:
            os._exit(127)  # never back into pytest in a forked child
    seen = b""
    try:
        deadline = time.monotonic() + 60  # bounds the wait for the command
        while b"serving on" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if ready:
                try:
                    seen += os.read(fd, 4096)
                except OSError:  # the terminal closed: the command ended
                    break
    finally:
        os.kill(pid, signal.SIGINT)
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    text = seen.decode(errors="replace")
    assert "serving on" in text, text
    starting = text.index("streamtools ui: starting 1 MCP server (up to 30s; --mcp-timeout)")
    assert starting < text.index("serving on")
    assert os.waitstatus_to_exitcode(status) == 130
