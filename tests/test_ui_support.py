"""Shared pieces of the UI tests: a real server in a thread, a scripted event
source, and a Python model of the AI SDK's UI message stream reader.

The reader model checks what the SDK's ``processUIMessageStream`` checks
(deltas only for open parts, tool chunks only for known calls) and builds the
same parts, so the Python tests can assert on what a browser would show; the
Node test then confirms it with the real package.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio
import msgspec
import uvicorn
from starlette.types import ASGIApp
from uvicorn_thread import QuickStop

from streamtools.events import Event, Final, Finish, TextDelta, TurnEnd, TurnStart
from streamtools.transcript import Transcript

Step = Event | float  # an event, or seconds to sleep before the next one
# a run of one turn that answers "Hello." and calls nothing
HELLO: list[Event] = [
    TurnStart(turn=1),
    TextDelta(text="Hello."),
    Finish(reason="stop"),
    TurnEnd(turn=1, reason="final"),
    Final(text="Hello.", turns=1),
]


class ScriptedSource:
    """An ``EventSource`` that plays a fixed list of events (with pauses) and
    records how each stream ended, so tests can see a server-side cancel."""

    def __init__(self, *scripts: Sequence[Step], fail: Exception | None = None) -> None:
        self.scripts = [list(s) for s in scripts]  # request n plays scripts[n] (or the last)
        self.fail = fail
        self.prompts: list[str | Transcript] = []
        self.completed = threading.Event()
        self.cancelled = threading.Event()

    @asynccontextmanager
    async def stream(self, prompt: str | Transcript) -> AsyncGenerator[AsyncIterator[Event], None]:
        script = self.scripts[min(len(self.prompts), len(self.scripts) - 1)]
        self.prompts.append(prompt)

        async def play() -> AsyncIterator[Event]:
            for step in script:
                if isinstance(step, float):
                    await anyio.sleep(step)
                else:
                    yield step
            if self.fail is not None:
                raise self.fail
            self.completed.set()

        events = play()
        try:
            yield events
        except anyio.get_cancelled_exc_class():
            self.cancelled.set()
            raise
        finally:
            await events.aclose()  # type: ignore[attr-defined]


class ThreadServer:
    """Uvicorn on 127.0.0.1, a free port, in a daemon thread; stopped on exit."""

    def __init__(self, app: ASGIApp) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        config = uvicorn.Config(
            app, log_level="warning", lifespan="off", timeout_graceful_shutdown=2
        )
        self.server = QuickStop(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]})
        self.thread.daemon = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ThreadServer:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("test server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()


@contextmanager
def serve(app: ASGIApp) -> Iterator[ThreadServer]:
    with ThreadServer(app) as server:
        yield server


def sse_data(body: bytes) -> list[str]:
    """The ``data:`` payloads of an SSE body, in order (comments skipped)."""
    out = []
    for block in body.decode().split("\n\n"):
        lines = [line[5:].lstrip() for line in block.split("\n") if line.startswith("data:")]
        if lines:
            out.append("\n".join(lines))
    return out


class ReaderError(AssertionError):
    """The chunk stream would make the AI SDK's reader throw."""


# the finish reasons both ai 6 and ai 5 (since 5.0.92) accept on ``finish``
FINISH_REASONS = ("stop", "length", "content-filter", "tool-calls", "error", "other")


class UIReader:
    """A model of the AI SDK's UI message stream reader: chunks in, parts out."""

    def __init__(self) -> None:
        self.parts: list[dict[str, Any]] = []
        self.open: dict[str, dict[str, Any]] = {}
        self.tools: dict[str, dict[str, Any]] = {}
        self.errors: list[str] = []
        self.data: list[dict[str, Any]] = []  # transient data parts (onData's)
        self.started = self.finished = False
        self.steps_open = 0
        self.finish_reason: str | None = None

    def feed(self, chunk: dict[str, Any]) -> None:
        kind = chunk["type"]
        if self.finished:
            raise ReaderError(f"{kind} after finish")
        if self.errors and kind != "finish":
            # the SDK's chat throws at an error chunk and reads no further
            raise ReaderError(f"{kind} after an error, which the SDK never reads")
        if kind != "start" and not self.started:
            raise ReaderError(f"{kind} before start")
        if kind == "start":
            self.started = True
        elif kind == "finish":
            if self.open:
                raise ReaderError(f"finish with open parts {sorted(self.open)}")
            if set(chunk) - {"type", "finishReason", "messageMetadata"}:
                raise ReaderError(f"finish with unknown keys {sorted(chunk)}")
            reason = chunk.get("finishReason")
            if reason is not None and reason not in FINISH_REASONS:
                raise ReaderError(f"finish reason {reason!r} is not one the SDK takes")
            self.finish_reason = reason
            self.finished = True
        elif kind == "start-step":
            if self.steps_open:
                raise ReaderError("start-step inside a step")
            self.steps_open += 1
            self.parts.append({"type": "step-start"})
        elif kind == "finish-step":
            if not self.steps_open:
                raise ReaderError("finish-step without a step")
            self.steps_open -= 1
        elif kind in ("text-start", "reasoning-start"):
            part = {"type": kind.split("-")[0], "text": ""}
            self.open[chunk["id"]] = part
            self.parts.append(part)
        elif kind in ("text-delta", "reasoning-delta"):
            if chunk["id"] not in self.open:
                raise ReaderError(f"{kind} for missing part {chunk['id']}")
            self.open[chunk["id"]]["text"] += chunk["delta"]
        elif kind in ("text-end", "reasoning-end"):
            if self.open.pop(chunk["id"], None) is None:
                raise ReaderError(f"{kind} for missing part {chunk['id']}")
        elif kind == "tool-input-start":
            if chunk["toolCallId"] in self.tools:
                raise ReaderError(f"duplicate tool call id {chunk['toolCallId']}")
            tool = {"toolName": chunk["toolName"], "state": "input-streaming", "raw": ""}
            self.tools[chunk["toolCallId"]] = tool
            self.parts.append({"type": "tool", "toolCallId": chunk["toolCallId"], **tool})
        elif kind.startswith("tool-"):
            self._tool(kind, chunk)
        elif kind == "error":
            self.errors.append(chunk["errorText"])
        elif kind.startswith("data-"):
            if set(chunk) - {"type", "id", "data", "transient"}:
                raise ReaderError(f"{kind} with unknown keys {sorted(chunk)}")
            # a transient one goes to useChat's onData only, never into the message
            (self.data if chunk.get("transient") else self.parts).append(chunk)
        else:
            raise ReaderError(f"unexpected chunk type {kind}")

    def _tool(self, kind: str, chunk: dict[str, Any]) -> None:
        call_id = chunk["toolCallId"]
        if call_id not in self.tools:
            raise ReaderError(f"{kind} for unknown tool call {call_id}")
        part = next(p for p in self.parts if p.get("toolCallId") == call_id)
        if kind == "tool-input-delta":
            part["raw"] += chunk["inputTextDelta"]
        elif kind == "tool-input-available":
            part.update(state="input-available", input=chunk["input"])
        elif kind == "tool-input-error":
            part.update(state="output-error", input=chunk["input"], errorText=chunk["errorText"])
        elif kind == "tool-output-available":
            part.update(state="output-available", output=chunk["output"])
        elif kind == "tool-output-error":
            part.update(state="output-error", errorText=chunk["errorText"])
        else:
            raise ReaderError(f"unexpected chunk type {kind}")

    @property
    def text(self) -> str:
        return "".join(p["text"] for p in self.parts if p["type"] == "text")

    @property
    def tool_parts(self) -> list[dict[str, Any]]:
        return [p for p in self.parts if p["type"] == "tool"]


def read_ui_stream(body: bytes) -> UIReader:
    """Read a whole UI message stream response body; it must end with [DONE]."""
    payloads = sse_data(body)
    if not payloads or payloads[-1] != "[DONE]":
        raise ReaderError("stream does not end with data: [DONE]")
    reader = UIReader()
    for payload in payloads[:-1]:
        reader.feed(msgspec.json.decode(payload))
    if not reader.finished:
        raise ReaderError("stream has no finish chunk")
    return reader


def test_reader_model_rejects_a_delta_for_a_part_never_started() -> None:
    reader = UIReader()
    reader.feed({"type": "start"})
    try:
        reader.feed({"type": "text-delta", "id": "t", "delta": "x"})
    except ReaderError as exc:
        assert "missing part t" in str(exc)
    else:
        raise AssertionError("the reader model accepted an orphan delta")
