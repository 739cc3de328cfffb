"""``streamtools chat --tools MODULE:ATTRIBUTE``: your own tools, as ``ui`` takes them.

``ui`` had ``--tools`` and chat did not: a chat with your own tools needed
them served over MCP. chat takes it now, with ui's loader (checked before
anything starts) and its semantics: the named tools replace the example
tools, and chat's system prompt, about those, is left out."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from streamtools.cli import main
from streamtools.cli.chat import EXAMPLES, register
from streamtools.testing import FakeServer

TOOLS = '''
from streamtools import ToolRegistry, tool

@tool
def shout(text: str) -> str:
    """Say it loudly."""
    return text.upper() + "!"

registry = ToolRegistry([shout])
'''
CALL = '<am:tool_call name="shout"><text>hello</text></am:tool_call>'


def _chat(server: FakeServer, *extra: str) -> int:
    argv = ["chat", "--base-url", server.base_url, "--model", "m", "--answer-only", *extra]
    return main(argv)


def test_chat_offers_and_runs_the_named_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "s18b_chat_tools.py").write_text(TOOLS)
    monkeypatch.chdir(tmp_path)  # found in the current directory, as for ui
    monkeypatch.syspath_prepend(str(tmp_path))
    with FakeServer([CALL, "It said HELLO!"]) as server:
        code = _chat(server, "--tools", "s18b_chat_tools:registry", "shout hello")
        sent = list(server.requests)
    out = capsys.readouterr().out
    assert code == 0 and out == "It said HELLO!\n"
    system = sent[0]["messages"][0]
    assert system["role"] == "system"
    assert '<am:tool name="shout"' in system["content"]
    assert "calculator" not in system["content"]  # neither the tool nor chat's prompt about it
    assert "HELLO!" in str(sent[1]["messages"][-1]["content"])  # the tool ran


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("no_such_module_s18b:tools", "--tools no_such_module_s18b:tools: no module named"),
        ("s18b_chat_tools:nothing", "--tools s18b_chat_tools:nothing: 's18b_chat_tools' has no"),
        ("s18b_chat_tools", "--tools expects module:attribute"),
    ],
)
def test_a_bad_spec_is_a_usage_error_before_anything_starts(
    spec: str,
    said: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "s18b_chat_tools.py").write_text(TOOLS)
    monkeypatch.syspath_prepend(str(tmp_path))
    record = tmp_path / "session.jsonl"
    with FakeServer(["never"]) as server:
        code = _chat(server, "--tools", spec, "--record", str(record), "hi")
        sent = len(server.requests)
    assert code == 2 and sent == 0
    assert said in capsys.readouterr().err
    assert not record.exists()


def test_help_says_the_default_and_the_ollama_example_gives_room() -> None:
    subparsers = argparse.ArgumentParser().add_subparsers()
    register(subparsers)
    chat = subparsers.choices["chat"]
    assert chat.parse_args(["--model", "m"]).tools is None
    (action,) = [a for a in chat._actions if "--tools" in a.option_strings]
    assert "default: the example tools" in (action.help or "")
    (native,) = [line for line in EXAMPLES.splitlines() if "--provider ollama" in line]
    assert "num_ctx" in native
