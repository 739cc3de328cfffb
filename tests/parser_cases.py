"""Shared case table and checkers for the parser tests.

Each case is run whole, one character at a time and at seeded random cuts; the
checkers assert the invariants of DESIGN §2 on every run.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from streamtools.events import (
    ArgsDelta,
    CallEnd,
    CallError,
    CallStart,
    Finish,
    ParserEvent,
    ReasoningDelta,
    TextDelta,
)
from streamtools.parser import Parser

Summary = list[tuple[Any, ...]]


def feed_all(
    parser: Parser, chunks: Iterable[str], finish_reason: str | None = None
) -> list[ParserEvent]:
    events: list[ParserEvent] = []
    for chunk in chunks:
        events += parser.feed(chunk)
    events += parser.end(finish_reason)
    return events


def random_cuts(text: str, rng: random.Random, low: int = 1, high: int = 6) -> list[str]:
    out, i = [], 0
    while i < len(text):
        k = rng.randint(low, high)
        out.append(text[i : i + k])
        i += k
    return out


def phase_cuts(text: str, size: int) -> Iterator[list[tuple[int, int]]]:
    """``text`` cut every ``size`` characters, once per phase of the cuts against
    it: each time, the (start, end) of every piece."""
    for offset in range(size):
        cuts = [0, *range(offset or size, len(text), size), len(text)]
        yield list(zip(cuts, cuts[1:], strict=False))


def chunkings(text: str, seed: int = 0) -> Iterator[tuple[str, list[str]]]:
    yield "whole", [text]
    yield "chars", list(text)
    rng = random.Random(seed)
    for n in range(3):
        yield f"cuts{n}", random_cuts(text, rng, 1, 1 + 4 * (n + 1))
    yield "empties", [piece for c in text for piece in (c, "")]


def merge(events: Sequence[ParserEvent]) -> list[ParserEvent]:
    """Merge adjacent text, reasoning and argument deltas (chunking-dependent splits)."""
    out: list[ParserEvent] = []
    for e in events:
        last = out[-1] if out else None
        if isinstance(e, TextDelta) and isinstance(last, TextDelta):
            out[-1] = TextDelta(text=last.text + e.text)
        elif isinstance(e, ReasoningDelta) and isinstance(last, ReasoningDelta):
            out[-1] = ReasoningDelta(text=last.text + e.text)
        elif isinstance(e, ArgsDelta) and isinstance(last, ArgsDelta) and last.id == e.id:
            out[-1] = ArgsDelta(index=e.index, id=e.id, delta=last.delta + e.delta)
        else:
            out.append(e)
    return out


def summary(events: Sequence[ParserEvent]) -> Summary:
    out: Summary = []
    for e in merge(events):
        match e:
            case TextDelta():
                out.append(("text", e.text))
            case ReasoningDelta():
                out.append(("think", e.text))
            case CallStart() | ArgsDelta():
                pass
            case CallEnd():
                out.append(("call", e.name, e.arguments))
            case CallError():
                out.append(("error", e.name, e.reason))
            case Finish():
                out.append(("finish", e.reason, e.stop_sequence))
    return out


def reconstruct(events: Sequence[ParserEvent]) -> str:
    """Text + reasoning + raw of every call, in order."""
    parts: list[str] = []
    for e in events:
        if isinstance(e, TextDelta | ReasoningDelta):
            parts.append(e.text)
        elif isinstance(e, CallEnd | CallError):
            parts.append(e.raw)
    return "".join(parts)


_THINK_TAG = re.compile(r"</?think>")


def untag(text: str) -> str:
    """Think tags are markup (documented in core): conservation holds for every
    other character. Where the tags go is pinned by the table cases."""
    prev = None
    while prev != text:  # removing a tag can join the halves of another
        prev, text = text, _THINK_TAG.sub("", text)
    return text


def check_conservation(text: str, events: Sequence[ParserEvent]) -> None:
    finish = events[-1]
    assert isinstance(finish, Finish)
    got = untag(reconstruct(events))
    if finish.stop_sequence is None:
        assert got == untag(text)
        return
    stop = finish.stop_sequence
    cuts = [m.start() for m in re.finditer(re.escape(stop), text)]
    assert any(untag(text[:k]) == got for k in cuts), (got, text)


def check_calls(events: Sequence[ParserEvent]) -> None:
    """Append-only arguments, ordering, ids and indexes, one final Finish."""
    assert isinstance(events[-1], Finish)
    assert not any(isinstance(e, Finish) for e in events[:-1])
    args: dict[str, list[str]] = {}
    open_ids: set[str] = set()
    closed: set[str] = set()
    next_index = 0
    for e in events:
        if isinstance(e, CallStart):
            assert e.index == next_index and e.id == f"call_{e.index}"
            next_index += 1
            open_ids.add(e.id)
            args[e.id] = []
        elif isinstance(e, ArgsDelta):
            assert e.id in open_ids and e.delta
            args[e.id].append(e.delta)
        elif isinstance(e, CallEnd | CallError):
            if e.id not in open_ids:
                assert isinstance(e, CallError) and e.index == next_index
                next_index += 1
            assert e.id not in closed
            closed.add(e.id)
            open_ids.discard(e.id)
            assert e.raw
            if isinstance(e, CallEnd):
                assert msgspec.json.decode("".join(args[e.id])) == e.arguments
            else:
                assert e.message and e.reason in {
                    "invalid_json", "unknown_tool", "invalid_arguments", "unterminated",
                    "malformed",
                }
    assert not open_ids, "every started call ends with CallEnd or CallError"


def hold_bound(parser: Parser) -> int:
    syntax = parser.syntax
    markers = [*syntax.markers, "<think>", "</think>", *parser._stops]
    bound = max(len(m) for m in markers) - 1
    names = list(parser._ctx.catalog)
    if syntax.name == "inline_json" and names:
        # the bound inline_json states (``functions.`` before a name: 10 more)
        bound = max(bound, 152 + max(map(len, names)))
    elif syntax.hold_bound is not None:
        bound = max(bound, syntax.hold_bound)
    return bound


def run_checked(
    dialect: str,
    chunks: Sequence[str],
    tools: Any = None,
    stop: str | Sequence[str] = (),
    finish_reason: str | None = None,
    think_open: bool = False,
) -> list[ParserEvent]:
    """Feed, checking hold-back and the fast path after every delta; check invariants."""
    parser = Parser(dialect, tools, stop, think_open=think_open)
    bound = hold_bound(parser)
    events: list[ParserEvent] = []
    for chunk in chunks:
        fast = parser.held == 0 and parser._mode == 0 and not parser.syntax.drop_outer_whitespace
        # (where ``<think>`` may open, the dialect's quiet markers start markers too)
        scan = parser._text
        if parser._quiet and parser.syntax.quiet_markers:
            scan = parser._qtext or parser._quiet_text()
        got = parser.feed(chunk)
        if fast and chunk and scan.start_rx.search(chunk) is None:
            assert got == [TextDelta(text=chunk)]
        assert parser.held <= bound
        events += got
    events += parser.end(finish_reason)
    check_calls(events)
    if dialect != "json_object":
        check_conservation("".join(chunks), events)
    return events


@dataclass(frozen=True)
class Case:
    id: str
    dialect: str
    text: str
    expect: Summary
    tools: Any = ("search", "calc", "kom.memory.v1.search_memory")
    stop: str | tuple[str, ...] = ()  # a str is one stop string
    finish_reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    think_open: bool = False  # the reply begins inside reasoning (the template wrote <think>)


F = ("finish", "stop", None)
S = "search"


def every_chunking(
    dialect: str,
    text: str,
    tools: Any,
    expect: Summary,
    stop: str | Sequence[str] = (),
    finish_reason: str | None = None,
    think_open: bool = False,
    *,
    with_finish: bool = True,
) -> None:
    """A table case: ``text`` fed whole, a character at a time and at random cuts
    (``chunkings``), each run checked (``run_checked``), gives the ``expect``ed
    summary (all of it, or all but the finish) and, merged, the same events
    (chunking invariance, ArgsDelta included)."""
    results = []
    for how, chunks in chunkings(text):
        events = run_checked(dialect, chunks, tools, stop, finish_reason, think_open)
        got = summary(events)
        if with_finish:
            assert got == expect, how
        else:
            assert got[:-1] == expect[:-1], (how, finish_reason)
        results.append(merge(events))
    assert all(r == results[0] for r in results)


def call(name: str, **args: Any) -> tuple[Any, ...]:
    return ("call", name, args)


def _hermes(name: str, args: str) -> str:
    return f'<tool_call>{{"name": "{name}", "arguments": {args}}}</tool_call>'


EMOJI = "héllo 👋🏽 你好 🇫🇷"

CASES: list[Case] = [
    # -- am_xml ------------------------------------------------------------------
    Case("am-basic", "am_xml", 'Hi <am:tool_call name="calc"><a>5</a><b>x</b></am:tool_call> ok',
         [("text", "Hi "), call("calc", a="5", b="x"), ("text", " ok"), F]),
    Case("am-dotted-name", "am_xml",
         '<am:tool_call name="kom.memory.v1.search_memory"><q>x</q></am:tool_call>',
         [call("kom.memory.v1.search_memory", q="x"), F]),
    Case("am-close-in-cdata", "am_xml",
         '<am:tool_call name="search"><q><![CDATA[a </am:tool_call> <q> ]] b]]></q>'
         "</am:tool_call>",
         [call(S, q="a </am:tool_call> <q> ]] b"), F]),
    Case("am-cdata-after-text", "am_xml",
         '<am:tool_call name="search"><q>abc <![CDATA[x y]]> def</q></am:tool_call>',
         [call(S, q="abc x y def"), F]),
    Case("am-close-in-other-param", "am_xml",
         '<am:tool_call name="search"><code>x = "</am:tool_call>"</code></am:tool_call>',
         [call(S, code='x = "</am:tool_call>"'), F]),
    Case("am-entities-json-values", "am_xml",
         '<am:tool_call name="calc"><e>a &lt;b&gt; &amp; &#65;&#x42; &bogus; & x</e>'
         '<l>[1, {"k": null}]</l><o>{"n": [true]}</o><t>true</t><w>trueish</w>'
         "<n>-1.5e3</n><z>0123</z></am:tool_call>",
         [call("calc", e="a <b> & AB &bogus; & x", l=[1, {"k": None}], o={"n": [True]},
               t="true", w="trueish", n="-1.5e3", z="0123"), F]),  # no schema: text
    Case("am-layout-newlines", "am_xml",
         '<am:tool_call name="calc">\n  <code>\n  x = 1\n\n</code>\n</am:tool_call>',
         [call("calc", code="  x = 1\n"), F]),
    # a model writing CRLF: the layout newline is "\r\n", not its "\n" half (the value
    # was '\r\nls -la\r', a command with a stray CR); a CR that ends no newline is content
    Case("am-layout-crlf", "am_xml",
         '<am:tool_call name="search">\r\n<q>\r\nls -la\r\n</q>\r\n<p><![CDATA[\r\na\r\nb\r\n]]>'
         "</p><r>x\r</r><t>\r\n\r\n</t></am:tool_call>",
         [call(S, q="ls -la", p="a\r\nb", r="x\r", t=""), F]),
    Case("am-layout-crlf-string-schema", "am_xml",
         '<am:tool_call name="search"><q>\r\n  ls\r\n\r\n</q></am:tool_call>',
         [call(S, q="  ls\r\n"), F], extra={"catalog": True}),
    # a surrogate pair as two code units (an emoji a provider sent as two escaped
    # halves): one character whether a delta cuts it or not; a lone half is U+FFFD
    Case("am-surrogate-pair-halves", "am_xml",
         '<am:tool_call name="search"><q>a\ud83d\ude00b \ud83d</q></am:tool_call>',
         [call(S, q="a\U0001f600b \ufffd"), F]),
    Case("am-parameter-form", "am_xml",
         '<am:tool_call name="search"><parameter name="q">hi</parameter></am:tool_call>',
         [call(S, q="hi"), F]),
    Case("am-name-inside-another-attribute", "am_xml",
         '<am:tool_call id="a name=\'calc\'" name="search"><parameter note=" name=\'x\'" '
         'name="q">a</parameter></am:tool_call>',
         [call(S, q="a"), F]),
    Case("am-unquoted-name", "am_xml",
         '<am:tool_call name=search><parameter name=q>a</parameter></am:tool_call>'
         "<am:tool_call name=calc/>",
         [call(S, q="a"), call("calc"), F]),
    Case("am-empty-args", "am_xml", '<am:tool_call name="search"></am:tool_call>',
         [call(S), F]),
    Case("am-self-closing", "am_xml", 'a<am:tool_call name="search"/>b',
         [("text", "a"), call(S), ("text", "b"), F]),
    Case("am-json-body", "am_xml", '<am:tool_call name="search">{"q": 1}</am:tool_call>',
         [call(S, q=1), F]),
    Case("am-unknown-tool", "am_xml", '<am:tool_call name="nope"><a>1</a></am:tool_call>x',
         [("error", "nope", "unknown_tool"), ("text", "x"), F]),
    Case("am-no-name", "am_xml", "<am:tool_call><a>1</a></am:tool_call>",
         [("error", None, "malformed"), F]),
    Case("am-stray-text", "am_xml", '<am:tool_call name="search">just words</am:tool_call>',
         [("error", S, "malformed"), F]),
    Case("am-open-at-end", "am_xml", 'x <am:tool_call name="search"><q>abc',
         [("text", "x "), ("error", S, "unterminated"), F]),
    Case("am-open-at-end-length", "am_xml", '<am:tool_call name="search"><q>a</q>',
         [("error", S, "unterminated"), ("finish", "length", None)], finish_reason="length"),
    Case("am-stop-removed-marker", "am_xml", 'Let me. <am:tool_call name="search"><q>a</q>\n',
         [("text", "Let me. "), call(S, q="a"), F], finish_reason="stop"),
    Case("am-unclosed-then-next", "am_xml",
         '<am:tool_call name="search"><q>1</q>\n<am:tool_call name="calc"><a>2</a></am:tool_call>',
         [call(S, q="1"), call("calc", a="2"), F]),  # (test_parser_s20_unclosed_forms)
    Case("am-orphan-close", "am_xml", "text </am:tool_call> more",
         [("text", "text </am:tool_call> more"), F]),
    Case("am-misspelled", "am_xml",
         '<am:tool_calls name="search"><q>a</q></am:tool_calls> <am:toolcall name="x">',
         [("text", '<am:tool_calls name="search"><q>a</q></am:tool_calls> '
           '<am:toolcall name="x">'), F]),
    Case("am-backticks", "am_xml", 'Use `<am:tool_call name="search">` to search.',
         [("text", 'Use `<am:tool_call name="search">` to search.'), F]),
    Case("am-request-tools", "am_xml", "Need more: <am:request_tools>web.fetch, fs.read"
         "</am:request_tools>",
         [("text", "Need more: "), call("am:request_tools", tools=["web.fetch", "fs.read"]), F]),
    Case("am-request-tools-closing-tag-with-space", "am_xml",
         "<am:request_tools>a, b</am:request_tools\n>x <y</am:request_tools",
         [call("am:request_tools", tools=["a", "b"]), ("text", "x <y</am:request_tools"), F]),
    # models write the list as JSON too; split on commas it gave '["a"' and '"b"]'
    Case("am-request-tools-json-list", "am_xml",
         '<am:request_tools>\n["web.fetch", "a, b", " fs.read "]\n</am:request_tools>',
         [call("am:request_tools", tools=["web.fetch", "a, b", "fs.read"]), F]),
    Case("am-request-tools-not-json", "am_xml", "<am:request_tools>[a, b</am:request_tools>",
         [call("am:request_tools", tools=["[a", "b"]), F]),
    Case("am-two-calls-text", "am_xml",
         'a<am:tool_call name="search"><q>1</q></am:tool_call>b'
         '<am:tool_call name="calc"><x>2</x></am:tool_call>c',
         [("text", "a"), call(S, q="1"), ("text", "b"), call("calc", x="2"), ("text", "c"), F]),
    Case("am-emoji", "am_xml", f'{EMOJI}<am:tool_call name="search"><q>{EMOJI}</q>'
         f"</am:tool_call>{EMOJI}",
         [("text", EMOJI), call(S, q=EMOJI), ("text", EMOJI), F]),
    # text outside the parameter elements is malformed (it would be lost otherwise)
    Case("am-value-cut-by-close-tag", "am_xml",
         '<am:tool_call name="calc"><a>{"s": "</a>"}</a></am:tool_call>x',
         [("error", "calc", "malformed"), ("text", "x"), F]),
    Case("am-text-between-params", "am_xml",
         '<am:tool_call name="calc"><a>1</a>garbage<b>2</b></am:tool_call>',
         [("error", "calc", "malformed"), F]),
    Case("am-text-after-params", "am_xml",
         '<am:tool_call name="calc"><a>1</a> and more\n</am:tool_call>',
         [("error", "calc", "malformed"), F]),
    Case("am-text-before-params", "am_xml",
         '<am:tool_call name="calc">note: <a>1</a></am:tool_call>',
         [("error", "calc", "malformed"), F]),
    Case("am-stray-close-tag", "am_xml",
         '<am:tool_call name="calc"><a>x</a></a></am:tool_call>',
         [("error", "calc", "malformed"), F]),
    Case("am-json-body-and-params", "am_xml",
         '<am:tool_call name="calc">{"a": 1}<b>2</b></am:tool_call>',
         [("error", "calc", "malformed"), F]),
    # a child tag longer than the limit is stray text however the deltas fall (whole,
    # it was once read as a parameter named by its 600 characters)
    Case("am-child-tag-too-long", "am_xml",
         '<am:tool_call name="search"><' + "a" * 600 + ">x</am:tool_call>",
         [("error", S, "malformed"), F]),
    Case("am-whitespace-comment-between-params", "am_xml",
         '<am:tool_call name="calc">\n  <a>1</a>\n\t <!-- note -->\r\n<b>x</b>  \n</am:tool_call>',
         [call("calc", a="1", b="x"), F]),
    Case("am-stray-text-stop-removed-marker", "am_xml",
         '<am:tool_call name="calc"><a>1</a>oops', [("error", "calc", "malformed"), F],
         finish_reason="stop"),
    # cut inside the opening tag: a call by then (whitespace after the marker), so
    # an unterminated one; the bare marker at the end is still prose
    Case("am-cut-in-opening-tag", "am_xml", 'Let me check. <am:tool_call name="sea',
         [("text", "Let me check. "), ("error", None, "unterminated"),
          ("finish", "length", None)], finish_reason="length"),
    # whitespace before a closing tag's ">", as XML allows; a chat template's special
    # token where the closing tag is due
    Case("am-closing-tags-with-space", "am_xml",
         '<am:tool_call name="calc"><a>5</a\n><b>x</b  ></am:tool_call >ok',
         [call("calc", a="5", b="x"), ("text", "ok"), F]),
    Case("am-closing-tag-with-too-much-space", "am_xml",
         '<am:tool_call name="search"><q>x</q' + " " * 9 + "></q></am:tool_call>",
         [call(S, q="x</q" + " " * 9 + ">"), F]),
    Case("am-special-token-before-close", "am_xml",
         '<am:tool_call name="search"><q>x</q><|im_end|></am:tool_call>', [call(S, q="x"), F]),
    Case("am-special-token-ends-the-turn", "am_xml",
         '<am:tool_call name="search">\n<q>x</q>\n<|im_end|>', [call(S, q="x"), F],
         finish_reason="stop"),
    Case("am-bare-marker-at-end", "am_xml", "Write <am:tool_call",
         [("text", "Write <am:tool_call"), F]),
    Case("am-stop-plain-string", "am_xml", "Hello Observation\nObservation: junk",
         [("text", "Hello Observation"), ("finish", "stop", "\nObservation:")],
         stop="\nObservation:"),
    # overlapping stop strings and markers: the first to end decides, as a provider
    # and text arriving a character at a time see it
    Case("stop-inside-a-longer-stop", "hermes", "Hello STOP now",
         [("text", "Hello "), ("finish", "stop", "ST")], stop=("STOP", "ST")),
    Case("stop-ending-inside-another", "hermes", "xABCDy",
         [("text", "xA"), ("finish", "stop", "BC")], stop=("ABCD", "BC")),
    Case("stop-before-a-marker-ends", "json_action",
         'Run:\n```json action\n{"tool": "search", "parameters": {}}\n```',
         [("text", "Run:\n"), ("finish", "stop", "```")], stop="```"),
    Case("stop-before-think-ends", "hermes", "a<think>b</think>c",
         [("text", "a"), ("finish", "stop", "<th")], stop="<th"),
    Case("think-ends-before-a-stop", "hermes", "\n<think>X</think>",
         [("text", "\n"), ("think", "X"), F], stop="\n<think>X"),
    # after visible text <think> is prose, so the stop string holding it counts
    Case("prose-think-in-a-stop", "hermes", "a\n<think>X</think>",
         [("text", "a"), ("finish", "stop", "\n<think>X")], stop="\n<think>X"),
    # a stop string that begins with a whole marker: the marker ends first, but where
    # it turns out to be prose (its body rejected, a backtick before it) the stop
    # string counts, as it does for a provider
    Case("stop-beginning-with-a-rejected-marker", "inline_json", 'say {"q": 1} more',
         [("text", "say "), ("finish", "stop", '{"q')], stop='{"q'),
    Case("stop-beginning-with-a-rejected-name", "inline_json", 'a {"tool": "sex"} b',
         [("text", "a "), ("finish", "stop", '{"tool": "se')], stop='{"tool": "se'),
    Case("stop-beginning-with-a-marker-not-there", "inline_json", 'say {"qx": 1} {"q',
         [("text", 'say {"qx": 1} {"q'), F], stop='{"qu'),
    Case("stop-beginning-with-a-marker-after-a-call", "inline_json",
         'a {"tool": "search", "arguments": {}} b {"q": 1}',
         [("text", "a "), call(S), ("text", " b "), ("finish", "stop", '{"q')], stop='{"q'),
    Case("stop-beginning-with-a-quoted-marker", "inline_json", 'say `{"q": 1}`',
         [("text", "say `"), ("finish", "stop", '{"q')], stop='{"q'),
    Case("am-stop-beginning-with-a-rejected-marker", "am_xml", "say <am:tool_calls> x",
         [("text", "say "), ("finish", "stop", "<am:tool_calls")], stop="<am:tool_calls"),
    Case("command-stop-beginning-with-a-marker-mid-line", "command", "say @tool x y",
         [("text", "say "), ("finish", "stop", "@tool x")], stop="@tool x"),
    Case("stop-beginning-with-a-quoted-think-tag", "hermes", "say `<think>hi</think>",
         [("text", "say `"), ("finish", "stop", "<think>hi")], stop="<think>hi"),
    Case("am-think", "am_xml",
         '<think>maybe <am:tool_call name="search"><q>x</q></am:tool_call>?</think>Answer',
         [("think", 'maybe <am:tool_call name="search"><q>x</q></am:tool_call>?'),
          ("text", "Answer"), F]),
    # -- think_open: the chat template wrote <think> (DeepSeek-R1, QwQ): the reply
    # begins inside reasoning, and a call-like marker in it is reasoning too
    Case("open-hermes-call-in-reasoning", "hermes",
         "plan " + _hermes(S, "{}") + "</think>Sure. " + _hermes(S, '{"q": 1}'),
         [("think", "plan " + _hermes(S, "{}")), ("text", "Sure. "), call(S, q=1), F],
         think_open=True),
    Case("open-am-xml", "am_xml",
         'maybe <am:tool_call name="search"><q>x</q></am:tool_call>?</think>\n\nAnswer',
         [("think", 'maybe <am:tool_call name="search"><q>x</q></am:tool_call>?'),
          ("text", "\n\nAnswer"), F], think_open=True),
    # some templates and models write the tag as well: it is markup, not reasoning
    Case("open-tag-written-anyway", "hermes", "<think>\nhm</think>ok",
         [("think", "\nhm"), ("text", "ok"), F], think_open=True),
    Case("open-tag-after-whitespace", "am_xml", "\n \n<think>a</think>b",
         [("think", "\n \na"), ("text", "b"), F], think_open=True),
    Case("open-tag-later-is-reasoning", "hermes", "x <think>y</think>\n<think>w</think>v",
         [("think", "x <think>y"), ("text", "\n"), ("think", "w"), ("text", "v"), F],
         think_open=True),
    Case("open-tag-after-the-answer-is-text", "hermes", "x</think>z<think>w</think>v",
         [("think", "x"), ("text", "z<think>w</think>v"), F], think_open=True),
    Case("open-tag-twice", "hermes", "<think><think>a</think>b",
         [("think", "<think>a"), ("text", "b"), F], think_open=True),
    # </think> never came (cut by max_tokens): all of it was reasoning, as an
    # unclosed <think> is; no call in it runs
    Case("open-never-closed", "hermes", "I will call " + _hermes(S, "{}"),
         [("think", "I will call " + _hermes(S, "{}")), ("finish", "length", None)],
         finish_reason="length", think_open=True),
    Case("open-start-of-tag-at-end", "hermes", "  <thi", [("think", "  <thi"), F],
         think_open=True),
    Case("open-start-of-tag-then-more", "hermes", "<this</think>x",
         [("think", "<this"), ("text", "x"), F], think_open=True),
    Case("open-closed-at-once", "am_xml", "</think>Hi", [("text", "Hi"), F], think_open=True),
    Case("open-empty", "am_xml", "", [F], think_open=True),
    Case("open-backtick-close-is-reasoning", "hermes", "`</think>` ends it</think>x",
         [("think", "`</think>` ends it"), ("text", "x"), F], think_open=True),
    Case("open-stop-in-reasoning", "hermes", "ab STOP cd</think>x",
         [("think", "ab "), ("finish", "stop", "STOP")], stop="STOP", think_open=True),
    Case("open-stop-in-leading-space", "hermes", " \n\n<think>x",
         [("think", " "), ("finish", "stop", "\n\n")], stop="\n\n", think_open=True),
    Case("open-stop-before-the-tag-ends", "hermes", "<think>a</think>b",
         [("finish", "stop", "<th")], stop="<th", think_open=True),
    Case("open-tag-ends-before-a-stop", "hermes", "<think>ab</think>c",
         [("think", "ab"), ("text", "c"), F], stop="<think>abc", think_open=True),
    Case("open-json-action", "json_action",
         '```json action\n{"tool": "search", "parameters": {}}\n```\n</think>'
         '```json action\n{"tool": "calc", "parameters": {"a": 1}}\n```',
         [("think", '```json action\n{"tool": "search", "parameters": {}}\n```\n'),
          call("calc", a=1), F], think_open=True),
    Case("open-inline-json", "inline_json",
         'say {"tool": "search", "arguments": {}}</think>Done {"tool": "calc", "arguments": {}}',
         [("think", 'say {"tool": "search", "arguments": {}}'), ("text", "Done "), call("calc"),
          F], think_open=True),
    Case("open-command", "command", "hm\n@tool search {}\n</think>\n@tool calc {}\nok",
         [("think", "hm\n@tool search {}\n"), ("text", "\n"), call("calc"), ("text", "\nok"),
          F], think_open=True),
    Case("open-json-object", "json_object",
         'The user wants {"final": "no"}.\n</think>\n\n{"final": {"content": "x"}}',
         [("think", 'The user wants {"final": "no"}.\n'), ("text", "x"), F], think_open=True),
    # -- hermes --------------------------------------------------------------------
    Case("hermes-basic", "hermes", "Hi " + _hermes(S, '{"q": "x", "n": [1, 2.5e-3]}') + " ok",
         [("text", "Hi "), call(S, q="x", n=[1, 2.5e-3]), ("text", " ok"), F]),
    Case("hermes-close-in-string", "hermes", _hermes(S, '{"q": "</tool_call> \\" }"}'),
         [call(S, q='</tool_call> " }'), F]),
    Case("hermes-nested", "hermes", _hermes(S, '{"a": {"b": [{"c": {}}, []]}, "d": null}'),
         [call(S, a={"b": [{"c": {}}, []]}, d=None), F]),
    Case("hermes-args-first", "hermes",
         '<tool_call>{"arguments": {"q": 1}, "name": "search"}</tool_call>',
         [call(S, q=1), F]),
    Case("hermes-openai-shape", "hermes",
         '<tool_call>{"type": "function", "function": {"name": "search", "arguments": '
         '"{\\"q\\": 2}"}}</tool_call>',
         [call(S, q=2), F]),
    Case("hermes-empty-args", "hermes", '<tool_call>{"name": "search"}</tool_call>',
         [call(S), F]),
    Case("hermes-invalid-json", "hermes",
         '<tool_call>{"name": "search", "arguments": {"q": \'x\'}}</tool_call>after'
         + _hermes("calc", "{}"),
         [("error", S, "invalid_json"), ("text", "after"), call("calc"), F]),
    Case("hermes-unknown", "hermes", _hermes("nope", "{}"), [("error", "nope", "unknown_tool"), F]),
    Case("hermes-unterminated", "hermes", '<tool_call>{"name": "search", "arguments": {"q"',
         [("error", S, "unterminated"), F]),
    Case("hermes-stop-removed-marker", "hermes", '<tool_call>{"name": "search", "arguments": {}}',
         [call(S), F], finish_reason="stop"),
    Case("hermes-stream-broke", "hermes", '<tool_call>{"name": "search", "arguments": {}}',
         [("error", S, "unterminated"), F]),
    Case("hermes-anthropic-stop-sequence", "hermes", '<tool_call>{"name": "search"}',
         [call(S), ("finish", "stop_sequence", None)], finish_reason="stop_sequence"),
    Case("hermes-orphan-close", "hermes", "a </tool_call> b", [("text", "a </tool_call> b"), F]),
    Case("hermes-misspelled", "hermes", "<tool_cal>{}</tool_cal> <toolcall>",
         [("text", "<tool_cal>{}</tool_cal> <toolcall>"), F]),
    Case("hermes-backticks", "hermes", "Write `<tool_call>` then JSON.",
         [("text", "Write `<tool_call>` then JSON."), F]),
    Case("hermes-not-json", "hermes", "<tool_call>search(q=1)</tool_call>x",
         [("error", None, "malformed"), ("text", "x"), F]),
    Case("hermes-trailing-junk", "hermes",
         '<tool_call>{"name": "search", "arguments": {}} junk</tool_call>',
         [("error", S, "malformed"), F]),
    # the model forgot </tool_call> and went on to its next call: that call is parsed
    # (it was swallowed into the first one's error), and the first, complete, runs
    # (it was unterminated until s19); a <tool_call> inside a broken object's strings
    # still is not a call
    # model quirks: a stuttered opening tag, whitespace before the closing tag's ">",
    # a chat template's special token where </tool_call> is due
    Case("hermes-stuttered-open", "hermes", "<tool_call>\n" + _hermes(S, '{"q": 1}') + " ok",
         [call(S, q=1), ("text", " ok"), F]),
    Case("hermes-close-with-space", "hermes",
         _hermes(S, '{"q": 1}')[:-1] + " >" + _hermes("calc", "{}")[:-1] + "\n\t>!",
         [call(S, q=1), call("calc"), ("text", "!"), F]),
    Case("hermes-close-with-too-much-space", "hermes",
         _hermes(S, "{}")[:-1] + " " * 9 + ">", [("error", S, "malformed"), F]),
    Case("hermes-special-token-before-close", "hermes",
         _hermes(S, '{"q": 1}')[:-12] + "<|im_end|>\n</tool_call>",
         [call(S, q=1), F]),
    Case("hermes-special-token-ends-the-turn", "hermes",
         "<tool_call>\n" + _hermes(S, '{"q": 1}')[11:-12] + "\n<|im_end|>",
         [call(S, q=1), F], finish_reason="stop"),
    Case("hermes-special-token-then-prose", "hermes",
         _hermes(S, "{}")[:-12] + "<|im_end|>Done.", [("error", S, "malformed"), F]),
    Case("hermes-unclosed-then-next", "hermes",
         '<tool_call>\n{"name": "search", "arguments": {"q": "a"}}\n<tool_call>\n'
         '{"name": "calc", "arguments": {"a": 1}}\n</tool_call>ok',
         [call(S, q="a"), call("calc", a=1), ("text", "ok"), F]),
    Case("hermes-unclosed-then-next-at-stop", "hermes",
         _hermes(S, "{}")[:-12] + "<tool_call>" + _hermes("calc", "{}")[11:-12],
         [call(S), call("calc"), F], finish_reason="stop"),
    Case("hermes-broken-then-open-in-string", "hermes",
         '<tool_call>{"name": "search", "arguments": {\'q\': "<tool_call>'
         + '{\\"name\\": \\"calc\\"}"}}</tool_call>',
         [("error", S, "invalid_json"), F]),
    Case("hermes-two-in-one", "hermes", _hermes(S, '{"q": 1}') + "\n" + _hermes("calc", "{}"),
         [call(S, q=1), ("text", "\n"), call("calc"), F]),
    Case("hermes-unicode-escapes", "hermes", _hermes(S, '{"q": "\\ud83d\\ude00 \\u00e9 \\n"}'),
         [call(S, q="😀 é \n"), F]),
    Case("hermes-lone-surrogate", "hermes", _hermes(S, '{"q": "\\ud83d\\u0041"}'),
         [("error", S, "invalid_json"), F]),
    Case("hermes-think", "hermes", "<think>plan " + _hermes(S, "{}") + "</think>"
         + _hermes(S, "{}"),
         [("think", "plan " + _hermes(S, "{}")), call(S), F]),
    Case("hermes-stop", "hermes", "Thought: x\nObservation: y", [("text", "Thought: x"),
         ("finish", "stop", "\nObservation:")], stop=("\nObservation:",)),
    Case("hermes-stop-in-think", "hermes", "<think>ab STOP cd</think>", [("think", "ab "),
         ("finish", "stop", "STOP")], stop=("STOP",)),
    Case("hermes-invalid-arguments-schema", "hermes", _hermes("calc", '{"a": "x"}'),
         [("error", "calc", "invalid_arguments"), F], extra={"catalog": True}),
    # -- json_action -----------------------------------------------------------------
    Case("action-basic", "json_action",
         'Sure.\n```json action\n{"tool": "search", "parameters": {"q": "x```y"}}\n```\nDone',
         [("text", "Sure.\n"), call(S, q="x```y"), ("text", "\nDone"), F]),
    Case("action-two", "json_action",
         '```json action\n{"tool": "search", "parameters": {}}\n```\n'
         '```json action\r\n{"tool": "calc", "arguments": {"a": 1}}\n```',
         [call(S), ("text", "\n"), call("calc", a=1), F]),
    # a block left open, then the next one: its opening fence ended the first call and
    # the rest of its line, the call and the fence were text (the call lost)
    Case("action-unclosed-then-next", "json_action",
         '```json action\n{"tool": "search", "parameters": {"q": "a"}}\n```json action\n'
         '{"tool": "calc", "parameters": {"a": 1}}\n```json action\r\n{"tool": "search"}'
         "\n```\nok",
         [call(S, q="a"), call("calc", a=1), call(S), ("text", "\nok"), F]),
    Case("action-broken-then-next", "json_action",
         '```json action\n{"tool": "search", "parameters": {q: 1}}\n```json action\n'
         '{"tool": "calc", "parameters": {}}\n```',
         [("error", S, "invalid_json"), call("calc"), F]),
    Case("action-fence-then-json-prose", "json_action",
         '```json action\n{"tool": "search"}\n```json actions\n```json action',
         [call(S), ("text", "json actions\n```json action"), F]),
    Case("action-fence-then-think", "json_action",
         '```json action\n{"tool": "search"}\n```<think>x</think>y',
         [call(S), ("think", "x"), ("text", "y"), F]),
    Case("action-fence-then-cut", "json_action",
         '```json action\n{"tool": "search"}\n```json act',
         [call(S), ("text", "json act"), F]),
    # a stop string in the text held after a call's fence, when the stream ends there:
    # that text was never scanned and its first character was let through unchecked
    Case("action-special-token-ends-the-turn", "json_action",
         '```json action\n{"tool": "search", "parameters": {"q": 1}}\n<|im_end|>',
         [call(S, q=1), F], finish_reason="stop"),
    Case("action-special-token-then-fence", "json_action",
         '```json action\n{"tool": "search", "parameters": {}}<|eot_id|>\n```<|x', [call(S),
         ("text", "<|x"), F]),
    Case("action-fence-then-stop-at-end", "json_action",
         '```json action\n{"tool": "search"}\n```json action\r',
         [call(S), ("finish", "stop", "json action\r")], stop="json action\r"),
    Case("action-plain-fence", "json_action", "```json\n{}\n```\n```json actions\n{}\n```",
         [("text", "```json\n{}\n```\n```json actions\n{}\n```"), F]),
    Case("action-invalid", "json_action",
         '```json action\n{"tool": "search", "parameters": {q: 1}}\n```tail',
         [("error", S, "invalid_json"), ("text", "tail"), F]),
    Case("action-no-fence-at-end", "json_action", '```json action\n{"tool": "search"}',
         [call(S), F], finish_reason="stop"),
    Case("action-no-fence-stream-broke", "json_action", '```json action\n{"tool": "search"}',
         [("error", S, "unterminated"), F]),
    Case("action-cut", "json_action", '```json action\n{"tool": "search", "par',
         [("error", S, "unterminated"), F]),
    # -- inline_json -----------------------------------------------------------------
    Case("inline-basic", "inline_json",
         'I will {"tool": "search", "arguments": {"q": "{x}"}} and done.',
         [("text", "I will "), call(S, q="{x}"), ("text", " and done."), F]),
    Case("inline-other-json", "inline_json", 'Data: {"a": 1} {"tool": "nope", "arguments": {}}',
         [("text", 'Data: {"a": 1} {"tool": "nope", "arguments": {}}'), F]),
    Case("inline-two-and-text", "inline_json",
         '{"tool":"search","arguments":{}}x{"tool" : "calc" , "arguments" : {"a":[1]}}',
         [call(S), ("text", "x"), call("calc", a=[1]), F]),
    Case("inline-invalid", "inline_json", '{"tool": "search", "arguments": {"q": 1} oops',
         [("error", S, "invalid_json"), ("text", "oops"), F]),
    Case("inline-unterminated", "inline_json", 'x {"tool": "search", "arguments": {"q": ',
         [("text", "x "), ("error", S, "unterminated"), F]),
    Case("inline-undecided-at-end", "inline_json", 'x {"tool": "sea',
         [("text", 'x {"tool": "sea'), F]),
    # -- json_object -----------------------------------------------------------------
    Case("object-action", "json_object",
         '\n{"thought": "I \\ud83d\\ude00 need", "action": {"tool": "search", "args": {"q": 1}}}\n',
         [("think", "I 😀 need"), call(S, q=1), F]),
    Case("object-final", "json_object",
         '{"thought": "ok", "final": {"content": "The answer\\n is \\"42\\" 你好"}}  ',
         [("think", "ok"), ("text", 'The answer\n is "42" 你好'), F]),
    Case("object-final-string", "json_object", '{"final": "plain"}', [("text", "plain"), F]),
    # a text member that is neither a string nor JSON: the scanner's message, whatever
    # the chunking (a piece starting with a quote, after its "{", was once read as a string)
    Case("object-final-object-broken", "json_object", '{"final":{"content":{""}}}',
         [("error", None, "invalid_json"), F]),
    Case("object-thought-object-broken", "json_object", '{"thought":{"a" 1}}',
         [("error", None, "invalid_json"), F]),
    Case("object-final-object", "json_object", '{"final":{"content":{"a": ["x", 1]}}}',
         [("text", '{"a": ["x", 1]}'), F]),
    Case("object-neither", "json_object", '{"answer": 1}', [("error", None, "malformed"), F]),
    Case("object-invalid", "json_object", '{"action": {"tool": "search", "args": {,}}} tail',
         [("error", S, "invalid_json"), F]),
    Case("object-prose", "json_object", "I think the answer is 4.",
         [("text", "I think the answer is 4."), F]),
    Case("object-think-first", "json_object",
         '<think>hm</think>\n{"final": {"content": "x"}}', [("think", "hm"), ("text", "x"), F]),
    # a Markdown fence around the reply object is envelope markup
    Case("object-fenced-final", "json_object", '```json\n{"final": {"content": "Hello"}}\n```',
         [("text", "Hello"), F]),
    Case("object-fenced-action", "json_object",
         'Here:\n```JSON \r\n\n  {"action": {"tool": "search", "args": {"q": 1}}}```\n',
         [("text", "Here:"), call(S, q=1), F]),
    Case("object-plain-fence", "json_object", '```\n{"final": "a"}\n```',
         [("text", "a"), F]),
    Case("object-fence-not-closed", "json_object", '```json\n{"final": "a"}  ',
         [("text", "a"), F]),
    Case("object-fence-then-prose", "json_object", '```json\n{"final": "a"}\n```\nBye',
         [("text", "a\nBye"), F]),
    Case("object-fence-half-closed", "json_object", '```json\n{"final": "a"}\n``',
         [("text", "a``"), F]),
    Case("object-fence-other-language", "json_object", "```python\nx = 1\n```\n",
         [("text", "```python\nx = 1\n```"), F]),
    Case("object-fence-rejected-then-object", "json_object",
         '```python\nx = 1\n``` then\n {"final": "a"}',
         [("text", "```python\nx = 1\n``` thena"), F]),
    Case("object-fence-too-long", "json_object", "```" + " " * 30 + '{"final": "a"}',
         [("text", "```a"), F]),
    Case("object-fence-prose-inside", "json_object", '```json\nnote {"final": "a"}```',
         [("text", "```json\nnotea```"), F]),
    # -- command ---------------------------------------------------------------------
    Case("command-basic", "command", '@tool search {"q": 1}\nthen text',
         [call(S, q=1), ("text", "\nthen text"), F]),
    Case("command-no-args", "command", "x\n@tool  search\n@tool calc",
         [("text", "x\n"), call(S), ("text", "\n"), call("calc"), F], finish_reason="stop"),
    Case("command-cut-at-length", "command", "@tool calc",
         [("error", "calc", "unterminated"), ("finish", "length", None)], finish_reason="length"),
    Case("command-mid-line", "command", "say @tool search {}",
         [("text", "say @tool search {}"), F]),
    Case("command-bad", "command", "@tool search now\n@tool \nok",
         [("error", S, "malformed"), ("text", "\n"), ("error", None, "malformed"),
          ("text", "\nok"), F]),
    Case("command-multiline-json", "command", '@tool calc {\n  "a": [1,\n 2]\n} ok',
         [call("calc", a=[1, 2]), ("text", " ok"), F]),
    Case("command-invalid", "command", '@tool calc {"a": tru} x',
         [("error", "calc", "invalid_json"), ("text", "tru} x"), F]),
    Case("command-unknown", "command", "@tool rm {}", [("error", "rm", "unknown_tool"), F]),
    # a call that ends because the next line starts another: that line is at a line
    # start however the deltas fell (once it was text when "@" came alone)
    Case("command-after-a-broken-one", "command", '@tool search {\n@tool calc {"a": 1}\nok',
         [("error", S, "invalid_json"), call("calc", a=1), ("text", "\nok"), F]),
]
