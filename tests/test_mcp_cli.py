"""``streamtools chat --mcp/--mcp-url``: a live chat (FakeServer model, real subprocess)
gets the tools of real MCP servers; ``python -m streamtools.mcp`` serves a registry."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_servers.harness import memory_command, memory_http_server

from streamtools.mcp.__main__ import main as mcp_main
from streamtools.testing import FakeServer

SEARCH = 'Looking. <am:tool_call name="search_memory"><query>miso</query></am:tool_call>'
ADD = '<am:tool_call name="add"><a>40</a><b>2</b></am:tool_call>'


def run_chat(base_url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """The chat, asked one question. The bound stops a hang only: three Pythons
    start (the chat, its MCP server, a slow server's own wait besides), which a
    loaded machine takes long over, and 60 s cut a run that was working."""
    argv = [sys.executable, "-m", "streamtools", "chat", "--base-url", base_url, "--model", "m"]
    return subprocess.run(
        [*argv, "--color", "never", *extra],
        input="who is Miso?\n",
        capture_output=True,
        text=True,
        timeout=240,
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
    assert "give the server a namespace (streamtools chat: --mcp NAME=COMMAND)" in clash.stderr


def slow_command(seconds: float) -> str:
    """The memory server, started after ``seconds``: a first ``npx -y`` or ``uvx``
    run, which downloads the server before it starts."""
    from mcp_servers.harness import MEMORY_SERVER

    script = (
        f"import runpy, sys, time; time.sleep({seconds}); sys.argv = [sys.argv[0]]; "
        f"runpy.run_path({MEMORY_SERVER!r}, run_name='__main__')"
    )
    return f'{sys.executable} -c "{script}"'


def test_chat_waits_for_a_server_that_starts_slowly() -> None:
    """``mcp_tools``' 10 s load timeout gave up on a first ``npx -y`` run that
    was still downloading, and chat had no way to wait longer."""
    with FakeServer([SEARCH, "Miso is your cat."]) as model:
        proc = run_chat(model.base_url, "--mcp", slow_command(11))
    assert proc.returncode == 0, proc.stderr
    assert "Miso is your cat." in proc.stdout


def test_chat_mcp_timeout_bounds_the_wait() -> None:
    with FakeServer(["unused"]) as model:
        proc = run_chat(model.base_url, "--mcp", slow_command(30), "--mcp-timeout", "1")
    assert proc.returncode == 1
    assert "did not answer the handshake and tool listing within 1s" in proc.stderr
    assert model.requests == []


def test_a_chat_mcp_command_runs_with_the_users_environment(tmp_path: Path) -> None:
    """The SDK starts a stdio server with a few variables only (HOME, PATH…):
    ``--mcp "npx -y @modelcontextprotocol/server-github"`` never saw the token
    exported in the user's shell, as the command typed there would have."""
    (tmp_path / "envtools.py").write_text(
        "import os\n"
        "from streamtools import tool\n\n"
        "@tool\n"
        "def secret() -> str:\n"
        '    """The token the server was given."""\n'
        '    return os.environ.get("ST_TEST_TOKEN", "<unset>")\n'
    )
    server = f"{sys.executable} -m streamtools.mcp envtools:secret"
    call = '<am:tool_call name="secret"></am:tool_call>'
    with FakeServer([call, "Done."]) as model:
        argv = [sys.executable, "-m", "streamtools", "chat", "--base-url", model.base_url]
        proc = subprocess.run(
            [*argv, "--model", "m", "--color", "never", "--mcp", server],
            input="which token?\n", capture_output=True, text=True, timeout=60,
            cwd=tmp_path, env={**os.environ, "ST_TEST_TOKEN": "ghp_example"},
        )
        assert proc.returncode == 0, proc.stderr
        result = model.requests[1]["messages"][-1]["content"]
    assert '<am:tool_result name="secret">ghp_example</am:tool_result>' in result


def token_gate() -> Any:
    """``registry`` over HTTP, answering 401 to any request without the token."""
    from mcp_servers.registry_tools import registry
    from starlette.responses import JSONResponse

    from streamtools.mcp import http_app

    inner = http_app(registry)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers", []))
        if scope["type"] == "http" and headers.get(b"authorization") != b"Bearer s3cret":
            refused = JSONResponse({"error": "invalid_token"}, status_code=401)
            return await refused(scope, receive, send)
        await inner(scope, receive, send)

    return app


def test_chat_sends_mcp_headers_to_an_http_server() -> None:
    """A remote MCP server that wants a token could not be used from chat: no
    way to give --mcp-url a header."""
    from mcp_servers.harness import asgi_server

    with asgi_server(token_gate) as base, FakeServer([ADD, "42."]) as model:
        url = base + "/mcp"
        token = ["--mcp-header", "Authorization: Bearer s3cret"]
        refused = run_chat(model.base_url, "--mcp-url", url)
        proc = run_chat(model.base_url, "--mcp-url", url, *token)
        result = model.requests[1]["messages"][-1]["content"] if proc.returncode == 0 else ""
        model.push(ADD, "42.")
        as_mcp = run_chat(model.base_url, "--mcp", url, *token)  # a URL given to --mcp
    assert refused.returncode == 1
    assert "HTTP 401 Unauthorized" in refused.stderr
    assert proc.returncode == 0, proc.stderr
    assert result.startswith('<am:tool_result name="add">42</am:tool_result>')
    assert as_mcp.returncode == 0, as_mcp.stderr


@pytest.mark.parametrize("value", ["no colon", ": no name", "Bad Name: x", "X-A: b\nX-B: c"])
def test_a_malformed_mcp_header_is_a_usage_error(value: str) -> None:
    from streamtools.cli import main

    with pytest.raises(SystemExit) as info:
        main(["chat", "--model", "m", "--mcp-header", value])
    assert info.value.code == 2


def test_two_servers_with_the_same_tools_get_namespaces_from_the_command_line() -> None:
    """Two servers with the same tool names (two filesystem servers, one per
    root) clashed, and the advice, "give the server a namespace", had no flag
    (the advice naming it: test_chat_with_an_mcp_url_and_a_clash_with_a_command)."""
    add = '<am:tool_call name="b.add"><a>40</a><b>2</b></am:tool_call>'
    with FakeServer([add, "42."]) as model:
        proc = run_chat(
            model.base_url, "--mcp", "a=" + memory_command(), "--mcp", "b=" + memory_command()
        )
        offered = str(model.requests[0]) if model.requests else ""
        result = model.requests[1]["messages"][-1]["content"] if len(model.requests) > 1 else ""
    assert proc.returncode == 0, proc.stderr
    assert "a.search_memory" in offered and "b.search_memory" in offered
    assert result.startswith('<am:tool_result name="b.add">{\n  "sum": 42\n}</am:tool_result>')


def test_chat_reports_a_server_that_does_not_start() -> None:
    with FakeServer(["unused"]) as model:
        proc = run_chat(model.base_url, "--mcp", "no-such-mcp-server-command")
    assert proc.returncode == 1
    assert "streamtools chat: MCP server 'no-such-mcp-server-command' could not be loaded" in (
        proc.stderr
    )
    assert model.requests == []


def test_chat_reports_a_command_line_with_an_unclosed_quote() -> None:
    # shlex's ValueError came out as a traceback
    with FakeServer(["unused"]) as model:
        proc = run_chat(model.base_url, "--mcp", "python 'server.py")
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        "streamtools chat: cannot read the MCP server command \"python 'server.py\": "
        "No closing quotation"
    )
    assert model.requests == []


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["no_such_module_xyz:tools"], "cannot load no_such_module_xyz:tools: ModuleNotFoundError"),
        (["os:no_such_name"], "cannot load os:no_such_name: AttributeError"),
        (["os:sep"], "os:sep is not a ToolRegistry, a tool or a list of tools"),
        (["no-colon"], "expected MODULE:NAME, got 'no-colon'"),
        (["--http", "abc", "os:getcwd"], "argument --http: expected HOST:PORT, got 'abc'"),
        (["--http", ":99999", "os:getcwd"], "argument --http: a port is 0 to 65535"),
    ],
)
def test_serve_refuses_what_it_cannot_serve_with_a_usage_error(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        mcp_main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "usage: python -m streamtools.mcp" in err
    assert message in err
    assert "Traceback" not in err


@pytest.mark.parametrize("target", ["registry_tools:add", "registry_tools:add.fn"])
def test_one_tool_or_function_is_served_as_streamtools_ui_takes_it(
    target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``streamtools ui --tools`` takes a single tool; this refused one with
    ``TypeError: 'Tool' object is not iterable``."""
    from streamtools.mcp.__main__ import _load

    monkeypatch.setattr(sys, "path", list(sys.path))  # _load adds "." to it
    tools = _load("mcp_servers." + target)
    assert list(tools) == ["add"]
    add = tools.get("add")
    assert add is not None and add.fn is not None and add.fn(a=40, b=2) == 42


def test_a_server_printing_junk_to_stdout_is_one_warning_not_tracebacks() -> None:
    noisy = f"{sys.executable} {Path(__file__).parent / 'mcp_servers' / 'noisy_server.py'}"
    shout = '<am:tool_call name="shout"><word>hi</word></am:tool_call>'
    with FakeServer([shout, "Said it."]) as model:
        proc = run_chat(model.base_url, "--mcp", noisy)
        result = model.requests[1]["messages"][-1]["content"]
    assert proc.returncode == 0, proc.stderr
    assert '<am:tool_result name="shout">HI</am:tool_result>' in result  # the call went through
    assert "Traceback" not in proc.stderr and "validation error" not in proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if "not MCP JSON-RPC" in line]
    assert len(warnings) == 1 and "'DEBUG: shout called with hi'" in warnings[0]


def test_ctrl_c_stops_the_server_without_a_traceback() -> None:
    argv = [sys.executable, "-m", "streamtools.mcp", "registry_tools:registry"]
    initialize = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
    with subprocess.Popen(
        argv, cwd=Path(__file__).parent / "mcp_servers",
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    ) as proc:
        try:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps(initialize).encode() + b"\n")
            proc.stdin.flush()
            assert json.loads(proc.stdout.readline())["id"] == 1  # serving
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=10)
        finally:
            proc.kill()
    assert proc.returncode == 130
    assert b"Traceback" not in err and b"KeyboardInterrupt" not in err


def test_the_stdio_server_ends_when_its_client_leaves_a_blocked_sync_tool_behind() -> None:
    """A sync tool runs in a worker thread that a cancelled call abandons (Python
    cannot stop it): the server stopped serving when stdin closed, then the
    process waited at exit for that thread, for ever for a tool that hangs. A
    client that closes stdin and waits for the server to end waited with it."""
    from mcp_servers.harness import HERE

    argv = [sys.executable, "-m", "streamtools.mcp", "registry_tools:stuck_tools"]
    pipe = subprocess.PIPE
    with subprocess.Popen(argv, cwd=HERE, stdin=pipe, stdout=pipe, stderr=pipe, text=True) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        stdin, stdout = proc.stdin, proc.stdout

        def send(method: str, **fields: object) -> None:
            stdin.write(json.dumps({"jsonrpc": "2.0", "method": method, **fields}) + "\n")
            stdin.flush()

        try:
            client = {"name": "t", "version": "1"}
            hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}
            send("initialize", id=1, params=hello)
            assert json.loads(stdout.readline())["id"] == 1
            send("notifications/initialized")
            send("tools/call", id=2, params={"name": "stuck", "arguments": {}})
            send("tools/call", id=3, params={"name": "add", "arguments": {"a": 1, "b": 2}})
            assert json.loads(stdout.readline())["id"] == 3  # the stuck call is running
            send("notifications/cancelled", params={"requestId": 2})
            stdin.close()
            code = proc.wait(timeout=20)  # bounds the hang the test is about
        finally:
            proc.kill()
    assert code == 0


def test_http_on_a_port_in_use_is_one_line_and_exit_status_1() -> None:
    """uvicorn's bind failure left as its sys.exit(3) inside our task group: 50
    lines of exception-group traceback after its own log line."""
    from mcp_servers.harness import HERE

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        argv = [sys.executable, "-m", "streamtools.mcp", "registry_tools:registry"]
        proc = subprocess.run(
            [*argv, "--http", address], cwd=HERE, capture_output=True, text=True, timeout=60
        )
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"python -m streamtools.mcp: cannot listen on {address}: ")
    assert len(proc.stderr.splitlines()) == 1, proc.stderr


@pytest.mark.parametrize(
    ("flags", "path"),
    [([], "/mcp"), (["--path", "tools"], "/tools"), (["--path", "/a/b"], "/a/b")],
    ids=["default", "no-slash", "slash"],
)
def test_http_says_where_it_serves_so_that_port_0_can_be_used(
    flags: list[str], path: str
) -> None:
    """It said nothing: with ``--http 127.0.0.1:0`` (any free port, which the
    flag takes) there was no way to know where the server was. ``--path tools``
    (no slash) was a Starlette AssertionError traceback."""
    from mcp import Client
    from mcp_servers.harness import HERE

    argv = [sys.executable, "-m", "streamtools.mcp", "registry_tools:registry", *flags]
    pipe = subprocess.PIPE
    with subprocess.Popen(
        [*argv, "--http", "127.0.0.1:0"], cwd=HERE, stdout=pipe, stderr=pipe, text=True
    ) as proc:
        try:
            err = proc.stderr
            assert err is not None
            line: list[str] = []
            reader = threading.Thread(target=lambda: line.append(err.readline()))
            reader.start()
            reader.join(timeout=30)  # bounds the silence the test is about
            assert line and line[0].startswith("python -m streamtools.mcp: serving MCP on ")
            url = line[0].split()[-1]
            assert url.startswith("http://127.0.0.1:") and url.endswith(path)
            assert url.count("/") == 2 + path.count("/")

            async def names() -> list[str]:
                async with Client(url) as client:
                    return [t.name for t in (await client.list_tools()).tools]

            assert anyio.run(names) == ["add", "kom.memory.v1.search_memory", "divide", "weather"]
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=20)
            finally:
                proc.kill()


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("[::1]:8000", ("::1", 8000)),  # an IPv6 address is written in brackets before a port
        ("::1:8000", ("::1", 8000)),
        ("localhost:8000", ("localhost", 8000)),
        (":8000", ("127.0.0.1", 8000)),
    ],
)
def test_http_address_takes_an_ipv6_host_in_brackets(text: str, address: tuple[str, int]) -> None:
    """``[::1]:8000`` kept its brackets in the host name: 'Name or service not known'."""
    from streamtools.mcp.__main__ import _address

    assert _address(text) == address


def test_what_the_tools_module_prints_at_import_never_reaches_the_stdio_wire(
    tmp_path: Path,
) -> None:
    """The module was imported before the SDK points stdout at stderr: its print()
    at import time was the first line the client read, as a broken message."""
    module = tmp_path / "loud_tools.py"
    module.write_text(
        "from streamtools.tools import ToolRegistry, tool\n"
        "print('loading loud_tools')\n"
        "@tool\n"
        "def hello() -> str:\n"
        "    '''Say hi.'''\n"
        "    return 'hi'\n"
        "registry = ToolRegistry([hello])\n",
        encoding="utf-8",
    )
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
    hello["clientInfo"] = {"name": "t", "version": "1"}
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}
    proc = subprocess.run(
        [sys.executable, "-m", "streamtools.mcp", "loud_tools:registry"],
        cwd=tmp_path,
        input=json.dumps(initialize) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    first = proc.stdout.splitlines()[0]
    assert json.loads(first)["id"] == 1, first
    assert "loading loud_tools" in proc.stderr
