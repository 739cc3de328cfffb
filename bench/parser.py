"""Parser benchmark: prints every figure of issue 2 side by side in one run.

    python bench/parser.py            # full run (about a minute or two)
    python bench/parser.py --quick    # smaller corpora, a few seconds

Seeded corpora of prose and calls for every dialect, split into deltas of 1-6
characters like BPE tokens. Figures: µs per delta and MB/s for each dialect on a
mixed corpus (about a third of the text inside calls); plain text (the fast
path); the floor (a bare ``for d in deltas: out.append(d)`` loop in a function);
a naive baseline that re-parses the whole buffer on every delta (regex + JSON,
the cheapest form of what many parsers do) at 4/64/256 KB, sampled at evenly
spaced deltas because running it on every delta of 256 KB takes minutes; time
per MB at 100 KB vs 10 MB and for one 5 MB argument; the largest hold-back seen.
``json_object``'s corpus is one long final answer (its reply is one object);
it is also run with CJK and emoji written as ``\\uXXXX`` escapes, the
escape-decoding path.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections.abc import Callable

from streamtools.events import TextDelta
from streamtools.parser import DIALECTS, Parser

MIXED_TARGET = 30.0  # x floor per delta, mixed corpus (issue 2)
PLAIN_TARGET = 10.0  # x floor per delta, plain text (the fast path)
LINEAR_TARGET = 1.3  # time per MB, large / small
SPEEDUP_TARGET = 1000.0  # vs the naive re-parse at 256 KB

PROSE_WORDS = (
    "the model answers with some prose and then calls a tool when it needs data about "
    "weather prices maps files or memory, 你好 世界, émoji 👋 and numbers 42 3.14"
).split()
CALLS: dict[str, Callable[[random.Random], str]] = {
    "am_xml": lambda r: (
        f'<am:tool_call name="search"><query>{_words(r, 12)}</query><limit>{r.randint(1, 99)}'
        f"</limit></am:tool_call>"
    ),
    "hermes": lambda r: (
        '<tool_call>{"name": "search", "arguments": {"query": "'
        + _words(r, 12)
        + f'", "limit": {r.randint(1, 99)}}}}}</tool_call>'
    ),
    "json_action": lambda r: (
        '```json action\n{"tool": "search", "parameters": {"query": "'
        + _words(r, 12)
        + f'", "limit": {r.randint(1, 99)}}}}}\n```'
    ),
    "inline_json": lambda r: (
        '{"tool": "search", "arguments": {"query": "' + _words(r, 12)
        + f'", "limit": {r.randint(1, 99)}}}}}'
    ),
    "command": lambda r: (
        '\n@tool search {"query": "' + _words(r, 12) + f'", "limit": {r.randint(1, 99)}}}\n'
    ),
}


def _words(r: random.Random, n: int) -> str:
    return " ".join(r.choice(PROSE_WORDS) for _ in range(n))


def corpus(dialect: str, size: int, seed: int = 7, *, ascii_escapes: bool = False) -> str:
    """Prose and calls, about a third of the characters inside calls. JSON strings
    carry CJK and emoji as themselves, as the other dialects' calls do and models
    write them; ``ascii_escapes`` writes them as ``\\uXXXX`` (``json_object`` only)."""
    r = random.Random(seed)
    if dialect == "json_object":  # the whole reply is one object: a long final answer
        words = _words(r, max(1, size // 7))
        content = json.dumps(words, ensure_ascii=ascii_escapes)[1:-1]
        return '{"thought": "' + _words(r, 20) + '", "final": {"content": "' + content + '"}}'
    parts, total, make = [], 0, CALLS[dialect]
    while total < size:
        piece = make(r) if r.random() < 0.3 else _words(r, 25) + ". "
        parts.append(piece)
        total += len(piece)
    return "".join(parts)[:size] if dialect == "json_object" else "".join(parts)


def deltas(text: str, seed: int = 3) -> list[str]:
    r = random.Random(seed)
    out, i = [], 0
    while i < len(text):
        k = r.randint(1, 6)
        out.append(text[i : i + k])
        i += k
    return out


def floor_loop(ds: list[str]) -> float:
    def run() -> None:
        out: list[str] = []
        for d in ds:
            out.append(d)

    return best(run, repeat=25)  # cheap, and the ratios all hang on it: take the best of many


class _Minimal:
    """The least a parser method can do per delta: return a new list of one event."""

    def feed(self, delta: str) -> list[TextDelta]:
        return [TextDelta(text=delta)]


def irreducible_loop(ds: list[str]) -> float:
    """A method call + one event Struct + one list per delta: the cost no parser
    written in CPython can go below while returning ``list[Event]``."""

    def run() -> None:
        feed = _Minimal().feed
        for d in ds:
            feed(d)

    return best(run, repeat=25)


def verdict(value: float, target: float) -> str:
    return "PASS" if value <= target else "MISS"


def parse_loop(dialect: str, ds: list[str], tools: list[str] | None = None) -> tuple[float, int]:
    holds = [0]

    def run() -> None:
        p = Parser(dialect, tools)
        feed = p.feed
        for d in ds:
            feed(d)
        p.end()
        holds[0] = max(holds[0], p.max_held)

    # the best of up to 15 runs, as the floor is the best of many: on a shared
    # machine the best of a few runs of one side against the best of many of the
    # other would count the machine's other load as the parser's
    return best(run, repeat=15, budget=4.0), holds[0]


def best(fn: Callable[[], None], repeat: int = 5, budget: float = 2.0) -> float:
    times: list[float] = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
        if sum(times) > budget:
            break
    return min(times)


_NAIVE_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)


def naive_reparse(buffer: str) -> tuple[list[str], list[object]]:
    """What a re-parse-per-delta parser does on every delta: the whole buffer again."""
    text = _NAIVE_CALL.split(buffer)
    calls = []
    for body in text[1::2]:
        try:
            calls.append(json.loads(body))
        except ValueError:
            calls.append(None)
    return text[::2], calls


def naive_per_delta(ds: list[str], samples: int) -> float:
    """Mean cost of one naive delta, sampled at evenly spaced positions."""
    prefix_ends: list[int] = []
    total = 0
    for d in ds:
        total += len(d)
        prefix_ends.append(total)
    text = "".join(ds)
    step = max(1, len(ds) // samples)
    picked = range(step - 1, len(ds), step)
    t = time.perf_counter()
    for k in picked:
        naive_reparse(text[: prefix_ends[k]])
    return (time.perf_counter() - t) / len(picked)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller corpora (seconds)")
    args = ap.parse_args(argv)
    quick = args.quick
    mixed_size = 200_000 if quick else 1_000_000
    big = 2_000_000 if quick else 10_000_000
    arg_size = 1_000_000 if quick else 5_000_000

    print(f"python {sys.version.split()[0]}  quick={quick}  deltas of 1-6 characters\n")
    base_ds = deltas(corpus("hermes", mixed_size))
    floors: list[float] = []
    leasts: list[float] = []

    def sample_floor() -> None:
        # sampled before every row and the best kept: on a shared machine a single
        # sample taken under load would flatter every ratio
        floors.append(floor_loop(base_ds) / len(base_ds))
        leasts.append(irreducible_loop(base_ds) / len(base_ds))

    Row = tuple[str, float, float | None, float, int, int]  # label, per, target, MB/s, hold, bound

    def measure(
        label: str, dialect: str, text: str, tools: list[str] | None = None,
        target: float | None = None,
    ) -> Row:
        sample_floor()
        ds = deltas(text)
        secs, hold = parse_loop(dialect, ds, tools)
        p = Parser(dialect, tools)
        markers = [*p.syntax.markers, "<think>", "</think>"]
        longest_marker = max(map(len, markers)) - 1
        if dialect == "inline_json" and tools:
            # the bound inline_json states with a catalog (its docstring: 142 + L, L the
            # longest name and 10 for a ``functions.`` prefix)
            bound = max(longest_marker, 152 + max(map(len, tools)))
        else:
            bound = max(p.syntax.hold_bound or 0, longest_marker)
        return label, secs / len(ds), target, len(text.encode()) / secs / 1e6, hold, bound

    def show(r: Row) -> float:
        label, per, target, mbs, hold, bound = r
        x = per / min(floors)
        goal = f"{'<=' + format(target, '.0f'):>8}{verdict(x, target):>6}" if target else " " * 14
        held = f"{hold:6d}{bound:6d}{'' if hold <= bound else ' MISS'}"
        print(f"{label:<28}{per * 1e6:10.3f}{x:10.1f}{goal}{mbs:8.1f}{held}")
        return 1 / mbs  # seconds per MB

    def row(label: str, dialect: str, text: str, tools: list[str] | None = None) -> float:
        return show(measure(label, dialect, text, tools))

    table = [
        measure(f"mixed {dialect}", dialect, corpus(dialect, mixed_size), ["search"], MIXED_TARGET)
        for dialect in sorted(DIALECTS)
    ]
    # the same answer with CJK and emoji as \uXXXX escapes: the escape-decoding path
    escaped = corpus("json_object", mixed_size, ascii_escapes=True)
    table.append(measure("json_object, \\u escapes", "json_object", escaped, ["search"]))
    plain = " ".join(random.Random(1).choice(PROSE_WORDS) for _ in range(mixed_size // 6))
    table.append(measure("plain text (fast path)", "am_xml", plain, target=PLAIN_TARGET))
    # dialects with a second marker-start character ("`", "{", "@") test it too
    table.append(measure("plain text, json_action", "json_action", plain, target=PLAIN_TARGET))
    sample_floor()
    floor, least = min(floors), min(leasts)
    print(f"floor (bare loop):                {floor * 1e9:8.1f} ns/delta  (best of "
          f"{len(floors)} samples; worst {max(floors) * 1e9:.1f})")
    print(f"irreducible: call+event+list = {least * 1e9:.1f} ns ({least / floor:.1f}x floor;"
          " the least any feed() returning list[Event] costs here)\n")
    print(f"{'corpus':<28}{'µs/delta':>10}{'x floor':>10}{'target':>8}{'':>6}{'MB/s':>8}"
          f"{'hold':>6}{'bound':>6}")
    for r in table:
        show(r)

    print("\nlinearity: seconds per MB")
    for dialect in ("hermes", "am_xml"):
        small = row(f"{dialect} 100 KB", dialect, corpus(dialect, 100_000), ["search"])
        large = row(f"{dialect} {big // 1_000_000} MB", dialect, corpus(dialect, big), ["search"])
        print(f"  {dialect}: {small:.3f} s/MB at 100 KB, {large:.3f} s/MB at {big // 10**6} MB"
              f" -> ratio {large / small:.2f} (target <= {LINEAR_TARGET}: "
              f"{verdict(large / small, LINEAR_TARGET)})")
    value = _words(random.Random(5), arg_size // 6)[:arg_size]
    wrap = {
        "hermes": '<tool_call>{{"name": "w", "arguments": {{"v": "{}"}}}}</tool_call>',
        "am_xml": '<am:tool_call name="w"><v>{}</v></am:tool_call>',
    }
    for dialect, template in wrap.items():
        make = template.format
        small = row(f"{dialect} 100 KB argument", dialect, make(value[:100_000]))
        large = row(f"{dialect} {arg_size // 10**6} MB argument", dialect, make(value))
        print(f"  {dialect}: one argument {small:.3f} s/MB at 100 KB, {large:.3f} s/MB at "
              f"{arg_size // 10**6} MB -> ratio {large / small:.2f} (target <= {LINEAR_TARGET}: "
              f"{verdict(large / small, LINEAR_TARGET)})")

    print("\none delta: a whole reply fed at once (a non-streamed answer, an instant replay)")
    for dialect in ("hermes", "inline_json"):
        per_mb = []
        sizes = (big // 10, big)
        for size in sizes:
            text = corpus(dialect, size)

            def whole(text: str = text, dialect: str = dialect) -> None:
                p = Parser(dialect, ["search"])
                p.feed(text)
                p.end()

            per_mb.append(best(whole, repeat=3) / (len(text) / 1e6))
        ratio = per_mb[1] / per_mb[0]
        print(f"  {dialect}: {per_mb[0]:.3f} s/MB at {sizes[0] / 1e6:g} MB in one delta, "
              f"{per_mb[1]:.3f} s/MB at {sizes[1] / 1e6:g} MB -> ratio {ratio:.2f} "
              f"(target <= {LINEAR_TARGET}: {verdict(ratio, LINEAR_TARGET)})")

    print("\nnaive re-parse of the whole buffer per delta (hermes, sampled) vs incremental")
    print(f"{'size':<10}{'naive µs/delta':>16}{'ours µs/delta':>15}{'speed-up':>10}")
    for kb in (4, 64, 256):
        text = corpus("hermes", kb * 1024)
        ds = deltas(text)
        naive = naive_per_delta(ds, samples=60 if quick else 300)
        ours = parse_loop("hermes", ds, ["search"])[0] / len(ds)
        goal = f"  (target >= {SPEEDUP_TARGET:.0f}x: {verdict(SPEEDUP_TARGET, naive / ours)})"
        print(f"{kb:>4} KB  {naive * 1e6:16.1f}{ours * 1e6:15.3f}{naive / ours:9.0f}x"
              f"{goal if kb == 256 else ''}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
