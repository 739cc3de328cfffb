"""``streamtools ui --mcp/--mcp-url``: the chat page's agent gets the tools of
MCP servers, with the flags and meaning of ``streamtools chat``; the sessions
last as long as the server (a real ``streamtools ui`` process, a FakeServer
model, real MCP servers)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from mcp_servers.harness import MEMORY_SERVER, memory_command, memory_http_server
from test_ui_support import read_ui_stream

from streamtools.testing import FakeServer

CHAT = {"messages": [{"role": "user", "content": "which process?"}]}
PID = '<am:tool_call name="mem.pid"></am:tool_call>'


@contextmanager
def ui(base_url: str, *flags: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``streamtools ui`` against ``base_url``, its URL once it serves; stopped at the end."""
    argv = [sys.executable, "-m", "streamtools", "ui", "--port", "0"]
    argv += ["--base-url", base_url, "--model", "m", *flags]
    pipe = subprocess.PIPE
    with subprocess.Popen(argv, stdout=pipe, stderr=pipe, text=True) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line.startswith("streamtools ui: serving on http://127.0.0.1:"), line
            yield line.split()[4].rstrip("/"), proc
        finally:
            proc.kill()
            proc.wait(timeout=10)


def run_ui(base_url: str, *flags: str) -> subprocess.CompletedProcess[str]:
    """``streamtools ui`` that is expected to end by itself."""
    argv = [sys.executable, "-m", "streamtools", "ui", "--port", "0"]
    return subprocess.run(
        [*argv, "--base-url", base_url, "--model", "m", *flags],
        capture_output=True, text=True, timeout=60,
    )


def lingering_server(marker: Path) -> str:
    """The memory server over stdio that, once its client closes stdin, takes a
    moment, then writes ``marker``: it exists when the client has waited for the
    server to end, and not yet when the client just went away."""
    script = (  # its build(), not its main, which ends the process at once
        f"import runpy, time; runpy.run_path({MEMORY_SERVER!r})['build']().run('stdio'); "
        f"time.sleep(0.5); open({str(marker)!r}, 'w').close()"
    )
    return f'{sys.executable} -c "{script}"'


def test_ui_gives_the_agent_an_mcp_servers_tools_and_closes_it_on_shutdown(
    tmp_path: Path,
) -> None:
    """``streamtools ui`` had no ``--mcp``: an MCP server's tools could be used
    from ``streamtools chat`` only."""
    marker = tmp_path / "closed"
    with FakeServer([PID, "Done."]) as model:
        with ui(model.base_url, "--mcp", "mem=" + lingering_server(marker)) as (url, proc):
            reply = httpx.post(url + "/api/chat", json=CHAT, timeout=30)
            proc.send_signal(signal.SIGINT)
            code = proc.wait(timeout=20)
            closed = marker.exists()  # at once: the server ended before the command
            assert proc.stderr is not None
            err = proc.stderr.read()
        offered = str(model.requests[0])
    reader = read_ui_stream(reply.content)
    assert reader.errors == []
    [card] = reader.tool_parts
    assert card["toolName"] == "mem.pid" and str(card["output"]).isdigit()
    assert "mem.search_memory" in offered and "calculator" in offered  # MCP + the demo's
    assert code == 130
    assert closed
    assert "Traceback" not in err


def test_sigterm_closes_the_mcp_sessions_before_the_command_ends(tmp_path: Path) -> None:
    """uvicorn shuts down on SIGTERM (``kill``, ``docker stop``, systemd), then
    raises it again: the default handler killed the command there and then,
    before the MCP sessions were closed, and the stdio server died of a broken
    pipe with a traceback on the command's stderr."""
    marker = tmp_path / "closed"
    with FakeServer(["unused"]) as model:
        with ui(model.base_url, "--mcp", lingering_server(marker)) as (_url, proc):
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=20)
            closed = marker.exists()  # at once: the server ended before the command
            assert proc.stderr is not None
            err = proc.stderr.read()
    assert code == -signal.SIGTERM  # ends as killed by it, as uvicorn alone does
    assert closed
    assert "Traceback" not in err and "BrokenPipeError" not in err


def test_ui_takes_an_mcp_url() -> None:
    add = '<am:tool_call name="add"><a>40</a><b>2</b></am:tool_call>'
    with memory_http_server() as (mcp_url, _), FakeServer([add, "42."]) as model:
        with ui(model.base_url, "--mcp-url", mcp_url) as (url, _proc):
            reply = httpx.post(url + "/api/chat", json=CHAT, timeout=30)
    [card] = read_ui_stream(reply.content).tool_parts
    assert card["toolName"] == "add"
    assert json.loads(card["output"]) == {"sum": 42}  # the server's structured result, as text


def test_ui_reports_an_mcp_server_it_cannot_load_in_one_line_and_serves_nothing() -> None:
    with FakeServer(["unused"]) as model:
        proc = run_ui(model.base_url, "--mcp", "no-such-mcp-server-command")
        clash = run_ui(model.base_url, "--mcp", memory_command(), "--mcp", memory_command())
    assert proc.returncode == 1
    assert proc.stdout == ""  # never said it was serving
    [line] = proc.stderr.splitlines()
    assert line.startswith(
        "streamtools ui: MCP server 'no-such-mcp-server-command' could not be loaded"
    )
    assert clash.returncode == 1
    assert clash.stderr.rstrip().endswith(
        "give the server a namespace (streamtools ui: --mcp NAME=COMMAND)"
    )
    assert model.requests == []
