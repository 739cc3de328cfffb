"""``streamtools demo``: a recorded agent session, replayed live through the real pipeline.

Theory of operation
-------------------
Nothing here is staged. The model is a ``Replay`` of ``fixtures/demo.jsonl``
(an ``am_xml`` session recorded through ``record()``): its chunks arrive at
the recorded pace (``--speed`` scales it, ``--instant`` drops the waits) and
go through the same ``Agent`` as a live model's would: the parser turns the
text into events, calls are dispatched eagerly to the two local tools below
(``calculator`` and ``clock``), whose results are computed now, on this
machine, then projected back for the next turn. ``ConsoleRenderer`` draws
the events as they come.

Because the model's words are recorded and the tools are live, the recorded
answer never restates the clock's reading; it points at it.

The user prompt shown is the one in the recording (the last user message of
its first request), so any ``am_xml`` recording that uses these two tools
can be demoed with ``--fixture``.

The fixture is looked for inside the package first (``streamtools/fixtures``,
for a wheel that ships it), then in the source checkout's ``fixtures/``.
"""

from __future__ import annotations

import argparse
import ast
import math
import operator
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import anyio

import streamtools
from streamtools.errors import UsageError
from streamtools.runtime import Agent, Replay, RunResult
from streamtools.runtime.console import ConsoleRenderer
from streamtools.runtime.recording import load
from streamtools.tools import Tool, tool

__all__ = ["DEMO_TOOLS", "calculator", "clock", "find_fixture", "play", "register"]

FIXTURE = "demo.jsonl"
SYSTEM = "You are a concise assistant. Use the tools for arithmetic and for the current time."
FALLBACK_PROMPT = "Split a $1,284.60 dinner bill seven ways with an 18% tip, and log the time."

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sqrt": math.sqrt,
    "round": round,
    "abs": abs,
    "min": min,
    "max": max,
}
_CONSTANTS = {"pi": math.pi, "e": math.e}


def _evaluate(node: ast.AST) -> float | int:
    """Arithmetic only: numbers, + - * / // % **, parentheses, a few functions."""
    match node:
        case ast.Expression(body=body):
            return _evaluate(body)
        case ast.Constant(value=int() | float() as number) if not isinstance(number, bool):
            return number
        case ast.Name(id=name) if name in _CONSTANTS:
            return _CONSTANTS[name]
        case ast.UnaryOp(op=ast.USub(), operand=operand):
            return -_evaluate(operand)
        case ast.UnaryOp(op=ast.UAdd(), operand=operand):
            return _evaluate(operand)
        case ast.BinOp(left=left, op=op, right=right) if type(op) in _BINARY:
            a, b = _evaluate(left), _evaluate(right)
            if isinstance(op, ast.Pow) and abs(b) > 256:
                raise ValueError("exponent too large")
            result: float | int = _BINARY[type(op)](a, b)
            return result
        case ast.Call(func=ast.Name(id=name), args=args, keywords=[]) if name in _FUNCTIONS:
            called: float | int = _FUNCTIONS[name](*(_evaluate(a) for a in args))
            return called
    raise ValueError(f"unsupported expression: {ast.unparse(node)!r}")


@tool
def calculator(expression: str) -> float | int:
    """Evaluate an arithmetic expression exactly as written.

    Args:
        expression: Arithmetic such as ``(1284.60 * 1.18) / 7``; supports + - * / // % **,
            parentheses, sqrt, round, abs, min, max, pi and e.
    """
    value = _evaluate(ast.parse(expression.replace(",", ""), mode="eval"))
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return round(value, 10) if isinstance(value, float) else value


@tool
def clock(timezone: str = "UTC") -> str:
    """The current date and time in a time zone.

    Args:
        timezone: An IANA time zone name such as ``Europe/Paris``; defaults to UTC.
    """
    try:
        zone: Any = UTC if timezone.upper() == "UTC" else ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        return f"unknown time zone {timezone!r}; in UTC it is {_now(UTC, 'UTC')}"
    return _now(zone, timezone)


def _now(zone: Any, label: str) -> str:
    return datetime.now(zone).strftime(f"%Y-%m-%d %H:%M:%S {label} (%A)")


DEMO_TOOLS: list[Tool] = [calculator, clock]


def find_fixture(name: str = FIXTURE) -> Path:
    """The demo recording: shipped in the package, or in the source checkout."""
    here = Path(streamtools.__file__).resolve().parent
    for candidate in (here / "fixtures" / name, here.parent / "fixtures" / name):
        if candidate.is_file():
            return candidate
    raise UsageError(f"demo recording {name!r} not found next to {here}")


def recorded_prompt(path: Path) -> str:
    """The user prompt of a recording: the last user message of its first request."""
    segments = load(path)
    request = segments[0].header.request if segments else None
    if request is not None:
        for message in reversed(request.messages):
            if message.role == "user":
                return message.content
    return FALLBACK_PROMPT


async def play(
    path: Path, *, speed: float | None, out: TextIO, color: bool | None = None
) -> RunResult:
    """Replay ``path`` through an Agent with the demo tools, rendering to ``out``."""
    prompt = recorded_prompt(path)
    agent = Agent(Replay(path, speed=speed), DEMO_TOOLS, dialect="am_xml", system=SYSTEM)
    view = ConsoleRenderer(out, color=color)
    view.line(view.style("bold", "you › ") + prompt)
    async with agent.stream(prompt) as events:
        async for event in events:
            view.render(event)
    assert events.result is not None
    return events.result


def _banner(view: ConsoleRenderer, path: Path, speed: float | None) -> None:
    pace = "instantly" if speed is None else f"at {speed:g}x the recorded pace"
    view.line(view.style("bold", "streamtools demo"))
    view.line(
        view.style("dim", f"The model is a REPLAY of {path.name}, played {pace}. ")
        + view.style("dim", "The parser, executor and tools (calculator, clock) run live here.")
    )


def _footer(view: ConsoleRenderer) -> None:
    view.line("")
    view.line("That model was a recording. Point the same loop at a live endpoint:")
    view.line("  streamtools chat --base-url http://127.0.0.1:11434/v1 --model qwen2.5:7b")
    view.line(
        "  (any OpenAI-compatible server: Ollama, vLLM, llama.cpp, a gateway; "
        "see `streamtools chat --help`)"
    )


def _run(args: argparse.Namespace) -> int:
    speed = None if args.instant else args.speed
    if speed is not None and speed <= 0:
        print("streamtools demo: --speed must be positive", file=sys.stderr)
        return 2
    try:
        path = args.fixture or find_fixture()
    except UsageError as exc:
        print(f"streamtools demo: {exc}", file=sys.stderr)
        return 1
    color = {"auto": None, "always": True, "never": False}[args.color]
    view = ConsoleRenderer(sys.stdout, color=color)
    _banner(view, path, speed)
    anyio.run(lambda: play(path, speed=speed, out=sys.stdout, color=color))
    _footer(view)
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="replay a recorded agent session live (no model, no network)",
        description="Replay a recorded tool-calling session through the real pipeline.",
    )
    parser.add_argument("--speed", type=float, default=1.0, help="pace multiplier (default 1)")
    parser.add_argument("--instant", action="store_true", help="no waits between chunks")
    parser.add_argument("--fixture", type=Path, default=None, help="another recording to play")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    parser.set_defaults(func=_run)
