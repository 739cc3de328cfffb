"""``streamtools chat --mcp/--mcp-url``: a live chat (FakeServer model, real subprocess)
gets the tools of real MCP servers; ``python -m streamtools.mcp`` serves a registry."""

from __future__ import annotations

import subprocess
import sys

from mcp_servers.harness import memory_command, memory_http_server

from streamtools.testing import FakeServer

SEARCH = 'Looking. <am:tool_call name="search_memory"><query>miso</query></am:tool_call>'
ADD = '<am:tool_call name="add"><a>40</a><b>2</b></am:tool_call>'


def run_chat(base_url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "streamtools", "chat", "--base-url", base_url, "--model", "m"]
    return subprocess.run(
        [*argv, "--color", "never", *extra],
        input="who is Miso?\n",
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_chat_with_an_mcp_command() -> None:
    with FakeServer([SEARCH, "Miso is your cat."]) as model:
        proc = run_chat(model.base_url, "--mcp", memory_command())
    assert proc.returncode == 0, proc.stderr
    assert "Miso is your cat." in proc.stdout
    offered = str(model.requests[0])
    assert "search_memory" in offered and "calculator" in offered  # MCP + example tools
    assert "the cat is called Miso" in str(model.requests[1])


def test_chat_with_an_mcp_url_and_a_clash_with_a_command() -> None:
    with memory_http_server() as (url, _), FakeServer([ADD, "42."]) as model:
        proc = run_chat(model.base_url, "--mcp-url", url)
        assert proc.returncode == 0, proc.stderr
        result = model.requests[1]["messages"][-1]["content"]
        assert result.startswith('<am:tool_result name="add">{\n  "sum": 42\n}</am:tool_result>')

        clash = run_chat(model.base_url, "--mcp", memory_command(), "--mcp-url", url)
    assert clash.returncode == 1
    assert "clashes with another tool of that name" in clash.stderr


def test_chat_reports_a_server_that_does_not_start() -> None:
    with FakeServer(["unused"]) as model:
        proc = run_chat(model.base_url, "--mcp", "no-such-mcp-server-command")
    assert proc.returncode == 1
    assert "streamtools chat: MCP server 'no-such-mcp-server-command' could not be loaded" in (
        proc.stderr
    )
    assert model.requests == []
