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
its first request), and only its answer is played (a recording of several
questions says how many model calls it holds after it), so any recording
that uses these two tools can be demoed with ``--fixture``, such as a
``streamtools chat --record`` session: it is played in the mode it was
recorded in, native tools when its first request sent them (``--hybrid`` when
they were only ``HybridAgent``'s tool selection), else the dialect its system
prompt shows (``streamtools.cli.replay.recorded_dialect``), else ``am_xml``. (Played in
``am_xml`` whatever it was, a ``--dialect hermes`` session showed each call as
malformed and a ``--native`` one as empty replies, repaired.) A recording that
calls tools it offered and the demo has not is refused (``foreign_calls``):
played, each of those calls would be an unknown tool and a repair, neither of
which happened.

The fixture is looked for inside the package first (``streamtools/fixtures``,
for a wheel that ships it), then in the source checkout's ``fixtures/``.
"""

from __future__ import annotations

import argparse
import ast
import math
import operator
import random
import re
import sys
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import anyio

import streamtools
from streamtools.cli import positive_number
from streamtools.errors import BudgetExceeded, ProviderError, RepairExhausted, UsageError
from streamtools.model import Chunk, ModelRequest
from streamtools.runtime import Agent, Replay, RunResult, record
from streamtools.runtime.console import ConsoleRenderer
from streamtools.runtime.hybrid import SELECT_TOOLS, HybridAgent
from streamtools.runtime.recording import Segment, load
from streamtools.tools import Tool, tool

__all__ = [
    "DEMO_TOOLS",
    "calculator",
    "check_fixture",
    "clock",
    "find_fixture",
    "foreign_calls",
    "play",
    "recorded_mode",
    "register",
]

FIXTURE = "demo.jsonl"
SYSTEM = "You are a concise assistant. Use the tools for arithmetic and for the current time."

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
# The biggest whole number a result may hold: Python writes no more than 4,300
# digits as text, and a model can nest powers ((9**256)**256)**256 into hours of work.
_MAX_BITS = 14_000
# a comma between digits, three digits before the next non-digit: 1,284.60
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


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
            if isinstance(op, ast.Pow | ast.Mult) and isinstance(a, int) and isinstance(b, int):
                if isinstance(op, ast.Pow):
                    bits = a.bit_length() * b
                else:
                    bits = a.bit_length() + b.bit_length()
                if bits > _MAX_BITS:
                    raise ValueError("result too large")
            result: float | int = _BINARY[type(op)](a, b)
            return result
        case ast.Call(func=ast.Name(id=name), args=args, keywords=[]) if name in _FUNCTIONS:
            values = [_evaluate(a) for a in args]
            if name == "round" and len(values) == 2 and abs(values[1]) > 308:
                # round(5, -10**8) works out 10**(10**8) first: hours
                raise ValueError("round(x, n) takes n from -308 to 308")
            called: float | int = _FUNCTIONS[name](*values)
            return called
    raise ValueError(f"unsupported expression: {ast.unparse(node)!r}")


def _without_thousands(expression: str) -> str:
    """``expression`` without thousands separators (``1,284.60``), except between a
    function's arguments: ``round(216.5469, 2)`` keeps its comma, and
    ``max(1,234)`` is max of 1 and 234, as Python reads it."""
    out: list[str] = []
    calls: list[bool] = []  # per open parenthesis: does it open a call's arguments?
    for i, ch in enumerate(expression):
        if ch == "(":
            before = expression[:i].rstrip()
            calls.append(bool(before) and (before[-1].isalnum() or before[-1] == "_"))
        elif ch == ")" and calls:
            calls.pop()
        elif ch == "," and not (calls and calls[-1]) and _THOUSANDS.match(expression, i):
            continue
        out.append(ch)
    return "".join(out)


@tool
def calculator(expression: str) -> float | int:
    """Evaluate an arithmetic expression exactly as written.

    Args:
        expression: Arithmetic such as ``(1284.60 * 1.18) / 7``; supports + - * / // % **,
            parentheses, sqrt, round, abs, min, max, pi and e.
    """
    value = _evaluate(ast.parse(_without_thousands(expression), mode="eval"))
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


def check_fixture(path: Path) -> list[Segment]:
    """The segments of the recording at ``path``; ``UsageError`` (one line, naming
    ``path``) unless it is a playable recording: unreadable, malformed, or with no
    model call in it (an empty file). ``streamtools replay`` reads its file so too.

    Checked before anything is printed or served, so a wrong ``--fixture`` is a
    clear message rather than a traceback from inside the event loop."""
    try:
        segments = load(path)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if not segments:
        if not path.stat().st_size:  # what ``record`` leaves when no model call was made
            raise UsageError(f"{path} is empty: no model call was recorded in it")
        raise UsageError(f"{path} has no model calls: not a streamtools recording")
    return segments


# how a dialect's system prompt defines a tool: am_xml's element, hermes' JSON
# line, and the others' Markdown heading under "# Tools"
_DEFINED = (
    re.compile(r'<am:tool name="([^"]+)"'),
    re.compile(r'\{"type": "function", "function": \{"name": "((?:[^"\\]|\\.)+)"'),
)
_TOOLS_SECTION = re.compile(r"^# Tools\n(.*?)(?=^# |\Z)", re.M | re.S)
_HEADING = re.compile(r"^## (.+)$", re.M)


def foreign_calls(segments: list[Segment], have: Iterable[str] | None = None) -> list[str]:
    """The tools a recording calls that it offered its model and the demo has
    not (a ``chat --record --mcp`` session's, ``record()`` of tools of one's
    own), sorted. The demo would answer each such call "unknown tool" and show
    a repair that never happened; a call of a tool the recording never offered
    (a model's invention) was answered so when it was recorded, and plays true.
    ``have``: the names of the tools the player runs (default: the demo's)."""
    from streamtools.cli.replay import segment_events

    mode = recorded_mode(segments)
    dialect = "am_xml" if mode.get("native") else str(mode["dialect"])
    offered: set[str] = set()
    called: set[str] = set()
    for segment in segments:
        request = segment.header.request
        if request is not None:
            offered.update(spec.name for spec in request.tools or ())
            for message in request.messages:
                if message.role == "system" and message.content:
                    for form in _DEFINED:
                        offered.update(form.findall(message.content))
                    for section in _TOOLS_SECTION.findall(message.content):
                        offered.update(h.strip() for h in _HEADING.findall(section))
        for _, event in segment_events(segment, dialect):
            name = getattr(event, "name", None)
            if isinstance(name, str):
                called.add(name)
    ours = {t.name for t in DEMO_TOOLS} if have is None else set(have)
    ours.add(SELECT_TOOLS)
    return sorted((called & offered) - ours)


def recorded_prompt(path: Path) -> str:
    """The user prompt of a recording: the last user message of its first request."""
    segments = load(path)
    request = segments[0].header.request if segments else None
    if request is not None:
        for message in reversed(request.messages):
            if message.role == "user":
                return message.content
    return AUTHOR_PROMPT


async def play(
    path: Path, *, speed: float | None, out: TextIO, color: bool | None = None
) -> RunResult:
    """Replay ``path`` through an Agent with the demo tools, rendering to ``out``."""
    prompt = recorded_prompt(path)
    model = Replay(path, speed=speed)
    mode = recorded_mode(model.segments)
    agent: Agent | HybridAgent
    if mode.pop("hybrid", False):
        agent = HybridAgent(model, DEMO_TOOLS, system=SYSTEM, **mode)
    else:
        agent = Agent(model, DEMO_TOOLS, system=SYSTEM, **mode)
    view = ConsoleRenderer(out, color=color)
    view.line(view.style("bold", f"you {view.prompt} ") + prompt)
    async with agent.stream(prompt) as events:
        async for event in events:
            view.render(event)
    assert events.result is not None
    if model.remaining:
        # a ``chat --record`` session of several questions: only the first is played
        # (the agent asks what it asks; the next questions are not the demo's to ask)
        left = f"{model.remaining} more model call{'s' if model.remaining > 1 else ''}"
        view.line(
            view.style("dim", f"(the recording holds {left} after this answer; ")
            + view.style("dim", f"streamtools replay {path} prints them all)")
        )
    return events.result


def recorded_mode(segments: list[Segment]) -> dict[str, Any]:
    """The agent arguments of the mode a recording was made in (see the module
    docstring): ``native=True``; or the ``dialect``, with ``hybrid=True`` when
    the first request offered only ``HybridAgent``'s tool selection."""
    from streamtools.cli.replay import recorded_dialect

    dialect = recorded_dialect(segments) or "am_xml"
    first = segments[0].header.request if segments else None
    if first is not None and first.tools:
        if [spec.name for spec in first.tools] == [SELECT_TOOLS]:
            return {"hybrid": True, "dialect": dialect}
        return {"native": True}
    return {"dialect": dialect}


# How fixtures/demo.jsonl was made (``streamtools demo --author PATH`` makes it
# again): these replies, played by a model with a first-token delay and a
# jittered token pace, through the real Agent and tools, wrapped in record().
AUTHOR_PROMPT = (
    "Dinner came to $1,284.60 for the seven of us. Add an 18% tip and tell me what "
    "each person pays, and log the time so I know when we settled up."
)
AUTHOR_REPLIES = [
    "I'll work out the total with the 18% tip first, and grab the current time for "
    "your log.\n\n"
    '<am:tool_call name="calculator">\n<expression>1284.60 * 1.18</expression>\n'
    "</am:tool_call>\n"
    '<am:tool_call name="clock">\n<timezone>UTC</timezone>\n</am:tool_call>',
    "With the tip, the bill comes to $1,515.83. Now I'll split that seven ways.\n\n"
    '<am:tool_call name="calculator">\n<expression>1515.828 / 7</expression>\n'
    "</am:tool_call>",
    "Here's the breakdown:\n\n"
    "- Bill: $1,284.60\n"
    "- Tip (18%): $231.23\n"
    "- Total: $1,515.83\n"
    "- **Each of the 7 people pays $216.55** (216.5469, rounded to the cent)\n\n"
    "Seven times $216.55 is $1,515.85, two cents over, so one person can pay $216.53. "
    "The settle-up time is the one the clock tool logged above.",
]


class _PacedScript:
    """A scripted model with a first-token delay and a jittered, token-like pace."""

    def __init__(self, replies: list[str], seed: int = 11) -> None:
        from streamtools.testing import ScriptedModel

        self.script = ScriptedModel(replies, seed=seed, chunk_sizes=(2, 6))
        self.rng = random.Random(seed)

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[Chunk]]:
        async with self.script.stream(request) as chunks:
            yield self._paced(chunks)

    async def _paced(self, chunks: AsyncIterator[Chunk]) -> AsyncIterator[Chunk]:
        await anyio.sleep(self.rng.uniform(0.35, 0.55))  # time to first token
        async for chunk in chunks:
            yield chunk
            await anyio.sleep(self.rng.uniform(0.012, 0.04))


async def author(path: Path) -> RunResult:
    """Record the demo session to ``path`` (takes as long as the session: ~6 s)."""
    model = record(_PacedScript(AUTHOR_REPLIES), path, provider="ScriptedModel, paced")
    agent = Agent(model, DEMO_TOOLS, dialect="am_xml", system=SYSTEM)
    return await agent.run(AUTHOR_PROMPT)


def _banner(view: ConsoleRenderer, path: Path, speed: float | None) -> None:
    pace = "instantly" if speed is None else f"at {speed:g}x the recorded pace"
    view.line(view.style("bold", "streamtools demo"))
    view.line(
        view.style("dim", f"The model is a REPLAY of {path.name}, played {pace}. ")
        + view.style("dim", "The parser, executor and tools (calculator, clock) run live here.")
    )


def _footer(view: ConsoleRenderer) -> None:
    view.line("")
    view.line("That model was a recording. Point the same loop at a live model:")
    # Ollama by its own API, with room for the tools' prompt: through its /v1 endpoint
    # the default context (4k on most machines) cuts that prompt without an error
    view.line(
        "  streamtools chat --provider ollama --model qwen3:8b"
        """ --extra-body '{"options": {"num_ctx": 16384}}'"""
    )
    view.line("      (Ollama; num_ctx: its default context cuts the tools' prompt silently)")
    view.line("  streamtools chat --base-url http://127.0.0.1:8080/v1 --model local")
    view.line("      (any OpenAI-compatible server: llama.cpp, vLLM, a gateway)")
    view.line("  streamtools chat --model gpt-4o-mini        (OpenAI; key from OPENAI_API_KEY)")
    view.line("  streamtools chat --help                     (Anthropic, native and hybrid modes)")


def _run(args: argparse.Namespace) -> int:
    if args.author is not None:
        result = anyio.run(author, args.author)
        print(f"recorded {result.turns} turns to {args.author}")
        return 0
    speed = None if args.instant else args.speed
    try:
        path = args.fixture or find_fixture()
    except UsageError as exc:  # not the user's doing: an install without its fixture
        print(f"streamtools demo: error: {exc}", file=sys.stderr)
        return 1
    segments = check_fixture(path)  # a wrong --fixture: UsageError, said by ``main`` (exit 2)
    foreign = foreign_calls(segments)
    if foreign:
        names = ", ".join(foreign)
        raise UsageError(
            f"{path} calls tools the demo does not have ({names}); the demo runs only "
            f"calculator and clock. streamtools replay {path} prints the recording's events; "
            f"streamtools ui --tools MODULE:ATTRIBUTE --fixture {path} plays it with your "
            "tools running"
        )
    color = {"auto": None, "always": True, "never": False}[args.color]
    view = ConsoleRenderer(sys.stdout, color=color)
    try:
        _banner(view, path, speed)
        anyio.run(lambda: play(path, speed=speed, out=sys.stdout, color=color))
        _footer(view)
    except (ProviderError, BudgetExceeded, RepairExhausted) as exc:
        # how the recorded session ended (a ``chat --record`` that hit an HTTP 401):
        # said in one line, as ``chat`` says it, not as a traceback
        view.newline()
        print(f"streamtools demo: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        view.line("(interrupted)")
        return 130
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="replay a recorded agent session live (no model, no network)",
        description="Replay a recorded tool-calling session through the real pipeline.",
    )
    # one pace: --instant beside --speed took over without a word (as in ``ui``)
    pace = parser.add_mutually_exclusive_group()
    pace.add_argument(
        "--speed", type=positive_number, default=1.0,
        help="pace multiplier (default 1, as recorded; 2 is twice as fast)",
    )
    pace.add_argument("--instant", action="store_true", help="no waits between chunks")
    parser.add_argument(
        "--fixture", type=Path, default=None, metavar="FILE",
        help="another recording with the demo's tools (calculator, clock), such as a "
        "`streamtools chat --record` session (default: the bundled demo.jsonl)",
    )
    parser.add_argument(
        "--color", choices=("auto", "always", "never"), default="auto",
        help="ANSI colour (default auto: on a terminal, unless NO_COLOR is set)",
    )
    parser.add_argument("--author", type=Path, default=None, help=argparse.SUPPRESS)
    parser.set_defaults(func=_run)
