"""Runtime benchmarks: loop overhead over the parser, and eager dispatch on a timed replay.

Run: ``python bench/runtime.py [--dialect am_xml] [--kb 256] [--backend asyncio|trio]``

1. Throughput. One recorded session (a long reply with calls, then a long
   final answer) in token-sized chunks, played by an instant ``Replay``:
   events per second through the whole ``Agent`` loop (decoding, dispatch,
   executor, transcript, projection, the event stream to a consumer) against
   the same chunks fed to the ``Parser`` alone. The ratio is what the loop
   costs on top of parsing.
2. Eager dispatch. A replay at recorded pace whose reply holds two calls, the
   second finishing well after the first; each tool sleeps the same time.
   The timeline shows the first tool starting before the second call has
   finished streaming, and the turn ending about one tool duration after the
   last call, not two: total ~ max, not sum.

Figures are printed; nothing is asserted.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import anyio

from streamtools.events import ToolResult
from streamtools.model import ChatMessage, FinishChunk, ModelRequest, TextChunk
from streamtools.parser import Parser
from streamtools.prompts import get_renderer
from streamtools.runtime import Agent, Replay
from streamtools.runtime.recording import Header, encode_chunk, encode_header
from streamtools.tools import ToolRegistry, tool
from streamtools.transcript import ToolCall

PROSE = (
    "The quarterly figures show steady growth across every region, with the strongest "
    "gains in the north where the new distribution centre opened in the spring. "
)


def call_text(dialect: str, name: str, arguments: dict[str, object], n: int) -> str:
    return get_renderer(dialect).render_call(
        ToolCall(id=f"c{n}", name=name, arguments=arguments, raw=None)
    )


def tokens(text: str, rng: random.Random) -> list[str]:
    out, pos = [], 0
    while pos < len(text):
        size = rng.randint(2, 6)
        out.append(text[pos : pos + size])
        pos += size
    return out


def write_recording(path: Path, replies: list[list[tuple[float, str]]]) -> None:
    request = ModelRequest(messages=(ChatMessage(role="user", content="bench"),))
    lines: list[bytes] = []
    for turn, reply in enumerate(replies, start=1):
        lines.append(encode_header(Header(provider="bench", turn=turn, request=request)))
        last = 0.0
        for t, text in reply:
            lines.append(encode_chunk(TextChunk(text=text), t))
            last = t
        lines.append(encode_chunk(FinishChunk(reason="stop"), last))
    path.write_bytes(b"".join(lines))


@tool
async def lookup(key: str) -> str:
    """Return a fixed value."""
    return f"value of {key}"


async def throughput(dialect: str, kb: int, workdir: Path) -> None:
    rng = random.Random(7)
    size = kb * 1024
    first = ""
    n = 0
    while len(first) < size // 2:
        first += PROSE * 8 + call_text(dialect, "lookup", {"key": f"k{n}"}, n) + "\n"
        n += 1
    final = (PROSE * (size // 2 // len(PROSE) + 1))[: size // 2]
    chunks1, chunks2 = tokens(first, rng), tokens(final, rng)
    path = workdir / "throughput.jsonl"
    write_recording(path, [[(0.0, c) for c in chunks1], [(0.0, c) for c in chunks2]])

    # Best of three runs each: the machine is shared, the minimum is the signal.
    parser_s = loop_s = float("inf")
    parsed = looped = 0
    for _ in range(3):
        start = time.perf_counter()
        parsed = 0
        for chunks in (chunks1, chunks2):
            parser = Parser(dialect, ToolRegistry([lookup]))
            for c in chunks:
                parsed += len(parser.feed(c))
            parsed += len(parser.end("stop"))
        parser_s = min(parser_s, time.perf_counter() - start)

        agent = Agent(Replay(path), [lookup], dialect=dialect, max_concurrency=64)
        start = time.perf_counter()
        looped = 0
        async with agent.stream("bench") as events:
            async for _ in events:
                looped += 1
        loop_s = min(loop_s, time.perf_counter() - start)

    total_chunks = len(chunks1) + len(chunks2)
    print(f"throughput ({dialect}, {kb} KB in {total_chunks} chunks, {n} calls)")
    print(f"  parser alone : {parsed:8d} events  {parsed / parser_s:12,.0f} events/s")
    print(f"  whole loop   : {looped:8d} events  {looped / loop_s:12,.0f} events/s")
    print(f"  overhead     : loop takes {loop_s / parser_s:.2f}x the parser's time")


async def eager(dialect: str, workdir: Path, tool_s: float = 0.5) -> None:
    started: dict[str, float] = {}
    origin = 0.0

    @tool
    async def slow(name: str) -> str:
        """Sleep, then answer."""
        started[name] = anyio.current_time() - origin
        await anyio.sleep(tool_s)
        return f"{name} done"

    # Call A closes at ~0.1 s; then 0.5 s of prose; call B closes at ~0.7 s.
    rng = random.Random(3)
    a = call_text(dialect, "slow", {"name": "A"}, 0)
    b = call_text(dialect, "slow", {"name": "B"}, 1)
    reply: list[tuple[float, str]] = []
    t = 0.05
    for piece in [*tokens(a, rng), *tokens(PROSE * 2, rng), *tokens(b, rng)]:
        reply.append((t, piece))
        t += 0.6 / 60 if len(reply) > 8 else 0.005
    b_end = reply[-1][0]  # the last chunk of call B: the reply ends there
    path = workdir / "eager.jsonl"
    write_recording(path, [reply, [(0.05, "Both done.")]])

    agent = Agent(Replay(path, speed=1.0), [slow], dialect=dialect)
    ends: dict[str, float] = {}
    turn1_end = 0.0
    origin = anyio.current_time()
    async with agent.stream("bench") as events:
        async for event in events:
            now = anyio.current_time() - origin
            if isinstance(event, ToolResult):
                ends[event.content.split()[0]] = now
            if type(event).__name__ == "TurnEnd" and not turn1_end:
                turn1_end = now
    print(f"eager dispatch ({dialect}, two calls, each tool sleeps {tool_s:.2f} s)")
    print(f"  tool A started at   {started['A']:.3f} s")
    print(f"  call B finished at  {b_end:.3f} s (recorded offset of its last chunk)")
    print(f"  tool B started at   {started['B']:.3f} s")
    print(f"  turn 1 ended at     {turn1_end:.3f} s")
    print(
        f"  tools after stream: {turn1_end - b_end:.3f} s  (max {tool_s:.2f}, sum {2 * tool_s:.2f})"
    )
    print(f"  A overlapped the stream: {started['A'] < b_end}")


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        await throughput(args.dialect, args.kb, Path(tmp))
        print()
        await eager(args.dialect, Path(tmp))


if __name__ == "__main__":
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--dialect", default="am_xml")
    cli.add_argument("--kb", type=int, default=256)
    cli.add_argument("--backend", default="asyncio", choices=("asyncio", "trio"))
    parsed = cli.parse_args()
    anyio.run(main, parsed, backend=parsed.backend)
