"""``streamtools ui``: offline on a replay (no network), as a real process too."""

from __future__ import annotations

import argparse
import signal
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import httpx
import msgspec
import pytest
from test_ui_support import read_ui_stream, serve, sse_data

from streamtools.cli.ui import build_source, register
from streamtools.errors import UsageError
from streamtools.model import ChatMessage, ModelRequest
from streamtools.runtime import record
from streamtools.testing import ScriptedModel
from streamtools.ui import create_app

PROMPT = "What is 12 * 7?"
CHAT = {"messages": [{"role": "user", "content": "anything: a replay answers its own question"}]}


@pytest.fixture
def recording(tmp_path: Path) -> Path:
    """A two-call hermes session using the demo's calculator, recorded with record()."""
    path = tmp_path / "session.jsonl"
    model = record(
        ScriptedModel(
            [
                'Computing.<tool_call>{"name": "calculator", '
                '"arguments": {"expression": "12 * 7"}}</tool_call>',
                "12 * 7 = 84.",
            ]
        ),
        path,
    )

    async def play() -> None:
        request = ModelRequest(messages=(ChatMessage(role="user", content=PROMPT),))
        for _ in range(2):
            async with model.stream(request) as chunks:
                async for _chunk in chunks:
                    pass

    anyio.run(play)
    return path


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    return parser.parse_args(["ui", *argv])


def test_offline_source_replays_the_recording_with_live_tools(recording: Path) -> None:
    args = parse("--fixture", str(recording), "--instant", "--dialect", "hermes")
    source, subtitle, suggestion = build_source(args)
    assert subtitle.startswith("offline: a replay of session.jsonl")
    assert suggestion == PROMPT
    app = create_app(source, subtitle=subtitle, suggestion=suggestion)
    with serve(app) as server:
        page = httpx.get(server.url + "/").text
        # Each POST is a new conversation: the replay starts over every time.
        bodies = [httpx.post(server.url + "/api/chat", json=CHAT, timeout=30) for _ in range(2)]
    assert '{"suggestion": "What is 12 * 7?"}' in page
    for response in bodies:
        reader = read_ui_stream(response.content)
        assert reader.errors == []
        assert reader.text == "Computing.12 * 7 = 84."
        [card] = reader.tool_parts
        assert (card["toolName"], card["input"], card["output"]) == (
            "calculator",
            {"expression": "12 * 7"},
            "84",
        )


def test_a_bad_fixture_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from streamtools.cli import main

    missing = tmp_path / "nope.jsonl"
    assert main(["ui", "--port", "0", "--fixture", str(missing)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("streamtools ui: error: cannot read ") and str(missing) in line

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"bad\n')
    assert main(["ui", "--port", "0", "--fixture", str(bad)]) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        f"streamtools ui: error: {bad}:1: invalid JSON: Input data was truncated\n"
    )
    assert "serving" not in captured.out


TOOLS_MODULE = """
from streamtools.tools import tool

@tool
def hello(name: str) -> str:
    \"\"\"Greet someone.\"\"\"
    return "hi " + name

TOOLS = [hello]
NUMBER = 5
"""


def test_tools_come_from_a_module_in_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``streamtools ui --tools mytools:TOOLS`` next to ``mytools.py`` failed with a
    ModuleNotFoundError traceback: the ``streamtools`` script does not put the
    current directory on ``sys.path`` (``python -m`` does), which uvicorn adds for
    its app. A missing module or attribute, or a value that is not tools, was a
    traceback too, the last one at every request; all are usage errors at start."""
    from streamtools.cli import main

    (tmp_path / "ui_cli_tools.py").write_text(TOOLS_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    monkeypatch.delitem(sys.modules, "ui_cli_tools", raising=False)
    # (a live model: the offline demo replay calls tools --tools replaces, refused)
    source, _, _ = build_source(parse("--tools", "ui_cli_tools:TOOLS", "--model", "m"))
    assert list(source.make().registry) == ["hello"]
    for spec, error in [
        ("no_such_module_here:TOOLS", "no module named 'no_such_module_here'"),
        ("ui_cli_tools:MISSING", "'ui_cli_tools' has no 'MISSING'"),
        ("ui_cli_tools:NUMBER", "expected a ToolRegistry, a tool, or a list of tools"),
        ("ui_cli_tools", "--tools expects module:attribute, got 'ui_cli_tools'"),
    ]:
        assert main(["ui", "--port", "0", "--tools", spec]) == 2
        captured = capsys.readouterr()
        assert captured.err.startswith("streamtools ui: ") and error in captured.err
        assert "Traceback" not in captured.err and "serving" not in captured.out
    monkeypatch.delitem(sys.modules, "ui_cli_tools", raising=False)


def test_live_mode_needs_a_model_and_its_url_defaults_per_provider() -> None:
    # as in ``streamtools chat``: --base-url defaults per --provider
    with pytest.raises(UsageError, match=r"--base-url is for a live model \(--model\)"):
        build_source(parse("--base-url", "http://127.0.0.1:9/v1"))
    _source, subtitle, _ = build_source(parse("--model", "m", "--provider", "ollama"))
    assert subtitle == "m at http://127.0.0.1:11434, am_xml dialect"
    _source, subtitle, suggestion = build_source(
        parse("--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--native")
    )
    assert (subtitle, suggestion) == ("m at http://127.0.0.1:9/v1, native tool calls", None)


def test_the_command_serves_on_a_free_port_and_stops(recording: Path) -> None:
    argv = [sys.executable, "-m", "streamtools", "ui", "--port", "0", "--instant"]
    argv += ["--fixture", str(recording), "--dialect", "hermes"]
    argv += ["--cors-origin", "http://localhost:3000"]
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    ) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line.startswith("streamtools ui: serving on http://127.0.0.1:"), line
            url = line.split()[4].rstrip("/")
            origin = {"Origin": "http://localhost:3000"}  # a useChat app's dev server
            response = httpx.post(url + "/api/chat", json=CHAT, headers=origin, timeout=30)
            assert read_ui_stream(response.content).text == "Computing.12 * 7 = 84."
            assert response.headers["access-control-allow-origin"] == origin["Origin"]
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback here")
def test_an_ipv6_host_is_served_and_announced_in_brackets() -> None:
    """``--host ::1`` was bound with an IPv4 socket: 'Address family for hostname
    not supported', though uvicorn (and the proxy) serve IPv6."""
    argv = [sys.executable, "-m", "streamtools", "ui", "--host", "::1", "--port", "0"]
    argv += ["--instant"]
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line.startswith("streamtools ui: serving on http://[::1]:"), line
            url = line.split()[4].rstrip("/")
            response = httpx.post(url + "/api/chat", json=CHAT, timeout=30)
            assert read_ui_stream(response.content).errors == []
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def test_ctrl_c_mid_answer_ends_the_stream_and_exits_at_once() -> None:
    """SIGINT while a browser waits for an answer: the stream ends properly (an
    error saying why, ``finish``, ``[DONE]``) and the server exits without
    waiting for the answer or printing a traceback."""
    argv = [sys.executable, "-m", "streamtools", "ui", "--port", "0", "--speed", "0.01"]
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        try:
            assert proc.stdout is not None and proc.stderr is not None
            url = proc.stdout.readline().split()[4].rstrip("/")
            timeout = httpx.Timeout(30, read=5)  # keep-alives come every 15 s
            with httpx.stream("POST", url + "/api/chat", json=CHAT, timeout=timeout) as response:
                parts = response.iter_bytes()
                body = next(parts)  # the answer has started (the replay is 100x slower)
                proc.send_signal(signal.SIGINT)
                body += b"".join(parts)
            # the answer would take about 700 s more: a server that waited for it
            # fails here (the bound stops a hang; no time is asserted)
            code = proc.wait(timeout=10)
            err = proc.stderr.read()
        finally:
            proc.kill()
    assert read_ui_stream(body).errors == ["the server is shutting down"]
    assert code == 130
    assert "Traceback" not in err and "ERROR" not in err


@pytest.mark.parametrize(("flags", "reason"), [((), "stop"), (("--no-finish-reason",), None)])
def test_no_finish_reason_leaves_it_out_for_an_older_ai_5_client(
    recording: Path, flags: tuple[str, ...], reason: str | None
) -> None:
    """ai 5 before 5.0.92 refuses a finish chunk with finishReason (a strict
    schema); the encoder could leave it out, but neither create_app nor the
    command could ask it to."""
    from streamtools.cli.ui import build_app

    args = parse("--fixture", str(recording), "--instant", "--dialect", "hermes", *flags)
    app, _ = build_app(args)
    with serve(app) as server:
        response = httpx.post(server.url + "/api/chat", json=CHAT, timeout=30)
    chunks = [msgspec.json.decode(d) for d in sse_data(response.content)[:-1]]
    assert chunks[-1]["type"] == "finish"
    assert chunks[-1].get("finishReason") == reason
    assert read_ui_stream(response.content).text == "Computing.12 * 7 = 84."


def test_ctrl_c_exits_at_once_though_a_sync_tool_still_blocks() -> None:
    """Stopping the agent abandons a sync tool's worker thread (Python cannot
    stop it), and the interpreter waited for it at exit: the stream ended, but
    the command never did while the tool blocked."""
    from mcp_servers.harness import HERE

    from streamtools.testing import FakeServer

    call = 'Calling. <am:tool_call name="stuck"></am:tool_call>'
    with FakeServer([call, "never asked"]) as model:
        argv = [sys.executable, "-m", "streamtools", "ui", "--port", "0"]
        argv += ["--base-url", model.base_url, "--model", "m", "--tools", "registry_tools:stuck"]
        pipe = subprocess.PIPE
        with subprocess.Popen(argv, cwd=HERE, stdout=pipe, stderr=pipe, text=True) as proc:
            try:
                assert proc.stdout is not None and proc.stderr is not None
                url = proc.stdout.readline().split()[4].rstrip("/")
                timeout = httpx.Timeout(30, read=20)
                with httpx.stream("POST", url + "/api/chat", json=CHAT, timeout=timeout) as reply:
                    parts, body = reply.iter_bytes(), b""
                    while b"tool-input-available" not in body:  # until the tool runs
                        body += next(parts)
                    proc.send_signal(signal.SIGINT)
                    body += b"".join(parts)
                code = proc.wait(timeout=20)  # bounds the hang the test is about
                err = proc.stderr.read()
            finally:
                proc.kill()
    assert read_ui_stream(body).errors == ["the server is shutting down"]
    assert code == 130
    assert "Traceback" not in err
