"""The core imports no I/O library (DESIGN §1); the events round-trip as JSON."""

from __future__ import annotations

import ast
from pathlib import Path

import streamtools
from streamtools.events import (
    ArgsDelta,
    CallEnd,
    CallError,
    CallStart,
    Event,
    Finish,
    TextDelta,
    decode_event,
    encode_events,
)

PACKAGE = Path(streamtools.__file__).parent
CORE = [
    "events.py",
    "model.py",
    "errors.py",
    "tools.py",
    "defaults.py",  # tools.py makes its parameters' defaults with it
    "signature.py",  # tools.py reads functions with it
    "docstrings.py",
    "results.py",
    "pydantic_models.py",  # tools.py imports it: pydantic itself never
    "schema.py",
    "schema_nav.py",  # schema.py imports it
    "transcript.py",
    "native.py",
    "parser",
    "prompts",
]
FORBIDDEN = {"anyio", "asyncio", "httpx", "httpx_sse", "trio", "socket", "starlette", "uvicorn"}


def _core_files() -> list[Path]:
    files: list[Path] = []
    for name in CORE:
        path = PACKAGE / name
        if path.is_dir():
            files.extend(sorted(path.rglob("*.py")))
        elif path.exists():
            files.append(path)
    return files


def test_core_imports_no_io_library() -> None:
    files = _core_files()
    assert len(files) >= 4
    offenders: list[str] = []
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                if name.split(".")[0] in FORBIDDEN:
                    offenders.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert offenders == []


def test_events_round_trip_as_json_lines() -> None:
    events: list[Event] = [
        TextDelta(text="Hi ✓ 你好"),
        CallStart(index=0, id="call_0", name="kom.memory.v1.search"),
        ArgsDelta(index=0, id="call_0", delta='{"q": "x"}'),
        CallEnd(index=0, id="call_0", name="kom.memory.v1.search", arguments={"q": "x"}, raw="r"),
        CallError(index=1, id="call_1", name=None, raw="<x", reason="malformed", message="m"),
        Finish(reason="stop", stop_sequence="\nObservation:"),
    ]
    lines = encode_events(events).splitlines()
    assert lines[0] == b'{"type":"text","text":"Hi \xe2\x9c\x93 \xe4\xbd\xa0\xe5\xa5\xbd"}'
    assert [decode_event(line) for line in lines] == events
