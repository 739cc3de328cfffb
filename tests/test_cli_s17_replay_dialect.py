"""``streamtools replay FILE`` reads a recording in the dialect its own system
prompt shows. It read every recording in ``am_xml`` unless told ``--dialect``,
so a session recorded with ``streamtools chat --dialect hermes --record`` was
printed with its calls as plain text."""

from __future__ import annotations

import io
from pathlib import Path

import msgspec
import pytest

from streamtools.cli import main
from streamtools.cli.replay import print_recording, recorded_dialect
from streamtools.model import CallChunk
from streamtools.parser import DIALECTS
from streamtools.prompts import get_renderer
from streamtools.runtime import Agent, record
from streamtools.runtime.recording import load
from streamtools.testing import ScriptedModel
from streamtools.tools import tool

pytestmark = pytest.mark.anyio

WRITTEN = [name for name in DIALECTS if name != "text"]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def _recorded(path: Path, dialect: str) -> None:
    renderer = get_renderer(dialect)
    call = renderer.format_call("add", {"a": 2, "b": 3})
    answer = renderer.render_final("It is 5.")
    model = record(ScriptedModel([call, answer]), path)
    await Agent(model, [add], dialect=dialect).run("What is 2 + 3?")


def _texts(arguments: object) -> dict[str, str]:
    assert isinstance(arguments, dict)
    return {key: str(value) for key, value in arguments.items()}


def _events(path: Path, dialect: str | None) -> list[dict[str, object]]:
    out = io.StringIO()
    print_recording(path, dialect, as_json=True, out=out)
    return [msgspec.json.decode(line) for line in out.getvalue().splitlines()]


@pytest.mark.parametrize("dialect", WRITTEN)
async def test_each_dialect_is_read_from_the_recording(
    tmp_path: Path, dialect: str, anyio_backend: str
) -> None:
    path = tmp_path / f"{dialect}.jsonl"
    await _recorded(path, dialect)
    assert recorded_dialect(load(path)) == dialect
    calls = [e for e in _events(path, None) if e["type"] == "call_end"]
    # (read with no tool list: am_xml's values stay the text they were written as)
    assert [(c["name"], _texts(c["arguments"])) for c in calls] == [("add", {"a": "2", "b": "3"})]


async def test_the_dialect_given_still_wins(tmp_path: Path, anyio_backend: str) -> None:
    path = tmp_path / "command.jsonl"
    await _recorded(path, "command")
    assert not [e for e in _events(path, "json_action") if e["type"] == "call_end"]
    assert main(["replay", str(path), "--json", "--dialect", "command"]) == 0


async def test_a_native_recording_is_read_as_before(tmp_path: Path, anyio_backend: str) -> None:
    path = tmp_path / "native.jsonl"
    reply = [CallChunk(index=0, id="c1", name="add", arguments='{"a": 2, "b": 3}')]
    model = record(ScriptedModel([reply, "It is 5."]), path)
    await Agent(model, [add], native=True).run("What is 2 + 3?")
    assert recorded_dialect(load(path)) is None
    calls = [e for e in _events(path, None) if e["type"] == "call_end"]
    assert [c["name"] for c in calls] == ["add"]


def test_the_demo_recording_is_am_xml() -> None:
    from streamtools.cli.demo import find_fixture

    assert recorded_dialect(load(find_fixture())) == "am_xml"


async def test_a_prompt_that_shows_two_forms_names_none(tmp_path: Path, anyio_backend: str) -> None:
    path = tmp_path / "mixed.jsonl"
    system = 'Never write <tool_call>{"name": …}</tool_call>; that is another protocol.'
    model = record(ScriptedModel(["Hi."]), path)
    await Agent(model, [add], dialect="am_xml", system=system).run("hi")
    assert recorded_dialect(load(path)) is None
