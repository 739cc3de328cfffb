"""Hypothesis properties over every dialect: chunking invariance, conservation,
append-only arguments, bounded hold-back (checked after every delta by
``run_checked``), round trips of generated calls, and a fuzz property whose
only outcomes are events or our own errors."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from parser_cases import feed_all, merge, run_checked

from streamtools.errors import ParserStateError, SizeLimitExceeded, StreamtoolsError
from streamtools.events import CallEnd, CallError, Finish, ReasoningDelta, TextDelta
from streamtools.parser import DIALECTS, Parser, express
from streamtools.parser.markers import MarkerScan
from streamtools.prompts import get_renderer
from streamtools.transcript import ToolCall

DIALECT_NAMES = sorted(DIALECTS)
TOOLS = ["search", "calc", "kom.memory.v1.search_memory"]
SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

COMMON = [
    " ", "\n", "x", "yz", "`", "👋🏽", "你好", "<", ">", "{", "}", '"', "\\", ":", ",",
    "<think>", "</think>", "<thi", "STOP", "ST", "[", "]", "1", "-", "true", "null",
]
# the other XML call forms hermes and am_xml read: the <function_calls>/<invoke>
# block (plain, DeepSeek's DSML tokens, MiniMax's wrapper), GLM's arg_key/arg_value,
# Qwen3-Coder's opener left out (a bare <function=)
XML_FORMS = [
    "<function_calls>", '<invoke name="search">', '<invoke name="nope">', "</invoke>",
    "</function_calls>", '<parameter name="q">', '<parameter name="q" string="false">',
    "<\uff5cDSML\uff5cfunction_calls>", '<\uff5cDSML\uff5cinvoke name="search">',
    "</\uff5cDSML\uff5cinvoke>", "<minimax:tool_call>", "</minimax:tool_call>", "<invoke",
    "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "search\n", "<function",
    "<parameter=q=x",
]

FRAGMENTS = {
    "am_xml": [
        '<am:tool_call name="search">', '<am:tool_call name="calc">', "<am:tool_call",
        "</am:tool_call>", "</am:tool_", "<q>", "</q>", "<a>", "</a>", "<![CDATA[", "]]>",
        "&amp;", "&lt;", "&#x41;", "&", "<am:request_tools>", "</am:request_tools>",
        '<am:tool_call name="nope">', "/>",
        # Qwen3-Coder's form, which its models write out of habit
        "<tool_call>", "</tool_call>", "<tool_", "<function=search>", "<function=nope>",
        "</function>", "<parameter=q>\n", "\n</parameter>", "</param", "<|im_end|>",
        *XML_FORMS,
    ],
    "hermes": [
        "<tool_call>", "</tool_call>", "<tool_", '{"name": "search", "arguments": ',
        '{"name": "nope"', '"arguments"', '{"q": "a"}', '"\\u00e9"', '"\\ud83d\\ude00"',
        # Qwen3-Coder's form
        "<function=search>", "<function=calc>\n", "<function=nope>", "</function>",
        "<parameter=q>\n", "<parameter=a>", "\n</parameter>", "</parameter>", "<parameter=",
        "</param", "<|im_end|>", *XML_FORMS,
    ],
    "json_action": [
        "```json action\n", "```", "```json", '{"tool": "calc", "parameters": ', '{"a": 1}',
        '"parameters"', "\r\n",
    ],
    "inline_json": [
        '{"tool": "search", "arguments": ', '{"tool":"calc"', '{"tool": "nope"', '"tool"',
        '{"q": [1, 2]}', '"arguments"',
        # Llama 3.x's and OpenAI's shapes (read for catalog tools), and Llama's tag
        '{"type": "function", "name": "search", "parameters": ', '{"type": "function", ',
        '"function": {', '{"name": "calc", "arguments": ', "<|python_tag|>",
    ],
    "json_object": [
        '{"thought": "', '"final": {"content": "', '"action": {"tool": "search", "args": ',
        '{"q": "\\n"}', '"}', "}}", "```json\n", "```",
    ],
    "command": ["@tool search ", "@tool calc", "@tool ", "\n@tool ", '{"a": 1}', "@to"],
}


# characters the other generators rarely draw: raw lone surrogate halves (a stream
# read by a lenient JSON decoder), NUL, separators and spaces JSON does not allow,
# a BOM, and escapes of surrogates (parser-only: the runtime and proxy fuzz draw
# ``model_replies``, whose text came through a provider)
ODD = ["\ud83d", "\ude00", "\x00", "\u2028", "\ufeff", "\u00a0", "\r\n", "\t", " " * 9,
       "\\ud83d", "\\ude00", "\\u00"]


def texts(dialect: str) -> st.SearchStrategy[str]:
    pieces = st.sampled_from(COMMON + FRAGMENTS[dialect] + ODD) | st.text(max_size=4)
    return st.lists(pieces, max_size=40).map("".join)


def model_replies(
    dialect: str, calls: Sequence[tuple[str, dict[str, Any]]]
) -> st.SearchStrategy[str]:
    """Whole replies for the runtime and proxy fuzz: ``texts``' pieces plus each of
    ``calls`` rendered in the dialect, whole (twice as likely) and cut in half."""
    renderer = get_renderer(dialect)
    pieces = COMMON + FRAGMENTS[dialect]
    for name, arguments in calls:
        text = renderer.render_call(ToolCall(id="i", name=name, arguments=arguments))
        pieces += [text, text, text[: len(text) // 2], text[len(text) // 2 :]]
    return st.lists(st.sampled_from(pieces) | st.text(max_size=4), max_size=20).map("".join)


def cut(text: str, points: list[int]) -> list[str]:
    marks = sorted({p % (len(text) + 1) for p in points} | {0, len(text)})
    return [text[a:b] for a, b in zip(marks, marks[1:], strict=False)]


def stop_sets(dialect: str) -> st.SearchStrategy[tuple[str, ...]]:
    """No stop strings, a plain one, and ones that overlap each other, a marker or
    a think tag (the first to end decides, whatever the chunking)."""
    marker = DIALECTS[dialect].markers[0]
    sets = [(), ("STOP",), ("STOP", "ST"), ("OP", "STOP"), ("<th",), ("i>",), ("\n<think>",),
            (marker[:2],), (marker[1:4], "STOP"), (marker + "x",),
            # a marker inside a stop string: it ends first, and where it is prose
            # (quoted, its body rejected) the stop string that began before it counts
            ("`" + marker + "`",), ("`" + marker, "STOP"), ("z" + marker,)]
    return st.sampled_from([tuple(stop for stop in stops if stop) for stops in sets])


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_chunking_invariance_and_invariants(dialect: str) -> None:
    @SETTINGS
    @given(texts(dialect), st.lists(st.integers(0, 10_000), max_size=30), stop_sets(dialect))
    def prop(text: str, points: list[int], stops: tuple[str, ...]) -> None:
        whole = run_checked(dialect, [text], TOOLS, stops)
        chunked = run_checked(dialect, cut(text, points), TOOLS, stops)
        chars = run_checked(dialect, list(text), TOOLS, stops)
        assert merge(whole) == merge(chunked) == merge(chars)

    prop()


def _tagged(text: str) -> str:
    """What a ``think_open`` parser reads ``text`` as: the reply after the
    template's ``<think>``, that tag written again where only whitespace is
    before it (markup, as the template's is)."""
    body = text.lstrip()
    if body.startswith("<think>"):
        text = text[: len(text) - len(body)] + body[len("<think>") :]
    return "<think>" + text


def _meets_the_tag(stop: str) -> bool:
    """A stop string that overlaps the template's ``<think>``, which the reply
    does not hold: it can cut a tagged reply where it cannot cut the reply."""
    return stop in "<think>" or any(stop.startswith("<think>"[k:]) for k in range(7))


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_think_open_is_the_reply_after_a_think_tag(dialect: str) -> None:
    """``think_open``: every invariant holds (chunking, conservation, hold-back,
    calls, checked by ``run_checked``), and the events are those of the same
    reply after a ``<think>`` tag without it (a tag the reply writes again at its
    start is dropped as markup): a call-like marker before ``</think>`` is
    reasoning, and an unclosed reply is all reasoning."""

    @SETTINGS
    @given(texts(dialect), st.lists(st.integers(0, 10_000), max_size=30), stop_sets(dialect),
           st.sampled_from(["", " ", "\n", "<think>", "\n<think>\n", "</think>"]))
    def prop(text: str, points: list[int], stops: tuple[str, ...], head: str) -> None:
        text = head + text
        whole = run_checked(dialect, [text], TOOLS, stops, think_open=True)
        chunked = run_checked(dialect, cut(text, points), TOOLS, stops, think_open=True)
        chars = run_checked(dialect, list(text), TOOLS, stops, think_open=True)
        assert merge(whole) == merge(chunked) == merge(chars)
        opened = text.lstrip().startswith("<think>")
        if any(_meets_the_tag(stop) for stop in stops) or (opened and stops):
            return  # a stop string may cut one where it cannot cut the other
        assert merge(whole) == merge(run_checked(dialect, [_tagged(text)], TOOLS, stops))

    prop()


@pytest.mark.parametrize("dialect", sorted(set(DIALECT_NAMES) - {"json_object"}))
def test_a_stop_string_is_never_visible_text(dialect: str) -> None:
    """A stop string taken from the text itself ends visible text wherever it is
    not inside a call, as a provider would cut it: no text or reasoning shows it.
    (Not one with a marker after its first character: the marker ends first and
    wins, and when its body turns out to be prose, the text before it has been
    released already.)"""
    markers = [*DIALECTS[dialect].markers, "<think>", "</think>"]

    @SETTINGS
    @given(texts(dialect), st.integers(0, 400), st.integers(1, 30),
           st.lists(st.integers(0, 10_000), max_size=30), st.booleans(), st.booleans(),
           st.booleans())
    def prop(
        text: str, at: int, size: int, points: list[int], named: bool, at_marker: bool,
        think_open: bool,
    ) -> None:
        if not text or "think>" in text:  # think tags are markup: not in visible text
            return
        at %= len(text)
        if at_marker:  # where a marker begins, if there is one: the harder case
            at = min((k for m in markers if (k := text.find(m)) >= 0), default=at)
        stop = text[at : at + size]
        if any(m in stop[1:] for m in markers):
            return
        events = run_checked(
            dialect, cut(text, points), TOOLS if named else None, stop, think_open=think_open
        )
        for e in merge(events):
            if isinstance(e, TextDelta | ReasoningDelta):
                assert stop not in e.text

    prop()


@pytest.mark.parametrize("dialect", sorted(set(DIALECT_NAMES) - {"json_object"}))
def test_a_stop_string_around_a_quoted_marker_is_never_visible_text(dialect: str) -> None:
    """A stop string with a marker after its first character, a backtick before
    the marker (quoted syntax, prose): the marker ends first but opens nothing, so
    the stop string counts, as for a provider, whatever the chunking (the text
    before the marker was held as the stop string's start). Not a fence: after a
    backtick it still opens a body (``test_parser_s16_stops`` has the stop
    strings that begin before a body later rejected). Not
    ``json_object``, as in the test above: its text is inside its reply object, a
    body, where stop strings do not apply (a stop string put inside the object's
    ``thought`` showed as reasoning)."""
    tags = [t for t in (*DIALECTS[dialect].markers, "<think>", "</think>") if t[0] != "`"]

    @SETTINGS
    @given(texts(dialect), st.sampled_from(tags), st.sampled_from(["`", "say `", "\n`"]),
           st.sampled_from(["", "`", "` x"]), st.lists(st.integers(0, 10_000), max_size=30),
           st.integers(0, 400))
    def prop(
        text: str, tag: str, before: str, after: str, points: list[int], at: int
    ) -> None:
        stop = before + tag + after
        at %= len(text) + 1
        text = text[:at] + stop + text[at:]
        whole = run_checked(dialect, [text], TOOLS, stop)
        chunked = run_checked(dialect, cut(text, points), TOOLS, stop)
        chars = run_checked(dialect, list(text), TOOLS, stop)
        assert merge(whole) == merge(chunked) == merge(chars)
        for e in merge(whole):
            if isinstance(e, TextDelta | ReasoningDelta):
                assert stop not in e.text

    prop()


def _assert_holds_whole(body: Any, buffer: str) -> None:
    """``fast`` without its set lookup holds ``buffer`` whole and changes nothing."""
    holds, body.holds = body.holds, frozenset()
    before = {k: v for k, v in vars(body).items() if k != "rest"}
    assert body.fast(buffer) == [], buffer
    assert body.rest == buffer
    assert {k: v for k, v in vars(body).items() if k != "rest"} == before, buffer
    body.holds = holds


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_a_body_holds_whole_every_text_its_hold_set_names(
    dialect: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A JSON body's ``holds`` lets ``fast`` hold a buffer by one set lookup: in
    every state a call passes through, each text the set names must be one the
    rest of ``fast`` holds whole too, doing nothing else."""
    monkeypatch.setattr(express, "ENABLED", False)  # the general machine's paths
    renderer = get_renderer(dialect)
    replies = [
        renderer.render_call(ToolCall(id="i", name="search", arguments={"q": "a b", "n": 2})),
        renderer.render_call(ToolCall(id="i", name="calc", arguments={})),
    ]
    checked = 0
    for reply in replies:
        for variant in (reply, reply.replace(" ", "").replace("\n", " ")):
            parser = Parser(dialect, TOOLS)
            for char in "x " + variant + " y":
                body = parser._body
                if body is not None and not parser._held:
                    for text in sorted(getattr(body, "holds", ())):
                        _assert_holds_whole(body, text)
                        checked += 1
                parser.feed(char)
    if dialect in ("hermes", "json_action", "inline_json"):  # the envelope heads at least
        assert checked > 100


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_a_body_holds_by_set_only_what_it_would_hold_anyway(dialect: str) -> None:
    """The same, for the buffers that arrive, at random cuts of random replies."""

    @SETTINGS
    @given(model_replies(dialect, [("search", {"q": "a b", "n": 2})]),
           st.lists(st.integers(0, 10_000), max_size=30))
    def prop(text: str, points: list[int]) -> None:
        parser = Parser(dialect, TOOLS)
        for delta in cut(text, points):
            body = parser._body
            buffer = parser._held + delta
            if body is not None and buffer in getattr(body, "holds", ()):
                _assert_holds_whole(body, buffer)
            parser.feed(delta)

    prop()


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=3),
    max_leaves=8,
)
JSON_ARGS = st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=4)


def render(dialect: str, name: str, args: dict[str, Any]) -> str:
    body = msgspec.json.encode(args).decode()
    if dialect == "hermes":
        return f'<tool_call>{{"name": "{name}", "arguments": {body}}}</tool_call>'
    if dialect == "json_action":
        return f'```json action\n{{"tool": "{name}", "parameters": {body}}}\n```'
    if dialect == "inline_json":
        return f'{{"tool": "{name}", "arguments": {body}}}'
    if dialect == "command":
        return f"@tool {name} {body}"
    raise AssertionError(dialect)


PROSE = st.text(st.characters(blacklist_characters="{<@`\r"), max_size=12)


@pytest.mark.parametrize("dialect", ["hermes", "json_action", "inline_json", "command"])
def test_generated_json_calls_round_trip(dialect: str) -> None:
    @SETTINGS
    @given(st.lists(st.tuples(PROSE, st.sampled_from(TOOLS), JSON_ARGS), min_size=1,
                    max_size=3), st.lists(st.integers(0, 10_000), max_size=20))
    def prop(calls: list[tuple[str, str, dict[str, Any]]], points: list[int]) -> None:
        sep = "\n" if dialect == "command" else ""
        text = "".join(f"{prose}{sep}{render(dialect, name, args)}{sep}"
                       for prose, name, args in calls)
        for chunks in (cut(text, points), list(text)):
            events = run_checked(dialect, chunks, TOOLS)
            ends = [e for e in events if isinstance(e, CallEnd)]
            assert [(e.name, e.arguments) for e in ends] == [(n, a) for _, n, a in calls]

    prop()


AM_VALUE = st.text(st.characters(blacklist_categories=["Cs", "Cc"]), max_size=10).map(
    lambda v: "v" + v.strip()
)


def test_generated_am_xml_calls_round_trip() -> None:
    @SETTINGS
    @given(st.dictionaries(st.from_regex(r"[a-z_][a-z0-9_]{0,5}", fullmatch=True), AM_VALUE,
                           max_size=4), st.sampled_from(["none", "whole", "tail"]),
           st.lists(st.integers(0, 10_000)),
           # as Qwen models may wrap it: in their template's <tool_call> tags (markup)
           st.sampled_from([("", ""), ("<tool_call>\n", "\n</tool_call>"), ("<tool_call>", "")]))
    def prop(
        args: dict[str, str], cdata: str, points: list[int], wrap: tuple[str, str]
    ) -> None:
        def enc(v: str) -> str:
            if cdata == "none" or "]]>" in v:
                return html.escape(v, quote=False)
            # CDATA for the whole value, or after escaped text (a value's text
            # streams as it comes, then the CDATA section takes over)
            k = len(v) // 2 if cdata == "tail" else 0
            return html.escape(v[:k], quote=False) + f"<![CDATA[{v[k:]}]]>"

        body = "".join(f"<{k}>{enc(v)}</{k}>" for k, v in args.items())
        call = f'{wrap[0]}<am:tool_call name="search">{body}</am:tool_call>{wrap[1]}'
        text = f"Now {call} ok"
        for chunks in (cut(text, points), list(text)):
            events = run_checked("am_xml", chunks, TOOLS)
            assert [e.arguments for e in events if isinstance(e, CallEnd)] == [args]
            prose = "".join(e.text for e in events if isinstance(e, TextDelta))
            assert prose.split() == ["Now", "ok"]  # (the tags are no text)

    prop()


# a Qwen3-Coder parameter value: any text (markup, entities, newlines) but a CR, which
# would make the layout newline after it a CRLF; "v" first, so that no value is JSON
QWEN_VALUE = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\r"),
                     max_size=12).map(lambda v: "v" + v)


@pytest.mark.parametrize("dialect", ["hermes", "am_xml"])
def test_generated_qwen_calls_round_trip(dialect: str) -> None:
    """hermes and am_xml read Qwen3-Coder's form: whatever the values and the
    cuts, each call's arguments are the values written, the layout newlines dropped."""
    @SETTINGS
    @given(st.lists(st.tuples(PROSE, st.sampled_from(TOOLS), st.dictionaries(
               st.from_regex(r"[a-z_][a-z0-9_]{0,5}", fullmatch=True), QWEN_VALUE, max_size=4)),
               min_size=1, max_size=3),
           st.sampled_from(["", "\n", "\n\n"]), st.sampled_from(["</tool_call>", "", "<|im_end|>"]),
           st.lists(st.integers(0, 10_000), max_size=20))
    def prop(
        calls: list[tuple[str, str, dict[str, str]]], gap: str, last: str, points: list[int]
    ) -> None:
        def qwen(name: str, args: dict[str, str]) -> str:
            params = "".join(f"<parameter={k}>\n{v}\n</parameter>{gap}" for k, v in args.items())
            return f"<tool_call>{gap}<function={name}>{gap}{params}</function>{gap}</tool_call>"

        text = "".join(prose + qwen(name, args) for prose, name, args in calls)
        # the last call's closing marker as a model or provider may leave it: removed
        # as a stop string, or a template's end token in its place
        text = text.removesuffix("</tool_call>") + last
        for chunks in (cut(text, points), list(text)):
            events = run_checked(dialect, chunks, TOOLS, finish_reason="stop")
            ends = [e for e in events if isinstance(e, CallEnd)]
            assert [(e.name, e.arguments) for e in ends] == [(n, a) for _, n, a in calls]
        # written back into the history (the prompt side, unchanged: the raw text as
        # the model wrote it, closed), each reads back as the same call
        renderer = get_renderer(dialect)
        for e in ends:
            call = ToolCall(id="c", name=e.name, arguments=e.arguments, raw=e.raw)
            again = run_checked(dialect, [renderer.render_call(call)], TOOLS)
            assert [(a.name, a.arguments) for a in again if isinstance(a, CallEnd)] == [
                (e.name, e.arguments)
            ]

    prop()


# Qwen3-Coder's form built whole (blocks of several calls, values with tags' starts,
# typed and untyped, closed in every way the parser reads), then cut anywhere
_QWEN_PIECE = st.sampled_from(["x", "1.5", "null", "[1]", "a<b", "</param", "\n", "\r\n",
                               "</tool_call>", "</function>", '"', "&amp;"])
_QWEN_BLOCK = st.tuples(
    st.sampled_from(["", "ok ", "\n"]),
    st.lists(st.tuples(
        st.sampled_from(["search", "calc", "nope"]),
        st.lists(st.tuples(st.sampled_from(["q", "a", "b"]),
                           st.lists(_QWEN_PIECE, max_size=3).map("".join)), max_size=2),
        st.sampled_from(["\n", ""])), min_size=1, max_size=2),
    st.sampled_from(["</tool_call>", "</tool_call >", "<|im_end|>", ""]),
)


@pytest.mark.parametrize("dialect", ["hermes", "am_xml"])
def test_qwen_form_chunking_invariance(dialect: str) -> None:
    from test_parser import SchemaCatalog

    @SETTINGS
    @given(st.lists(_QWEN_BLOCK, min_size=1, max_size=3), st.integers(0, 10_000),
           st.sampled_from([None, "stop"]), st.booleans(),
           st.lists(st.integers(0, 10_000), max_size=20))
    def prop(blocks: list[Any], end: int, finish: str | None, schemas: bool,
             points: list[int]) -> None:
        text = "".join(
            prose + "<tool_call>\n" + "".join(
                f"<function={name}>{gap}"
                + "".join(f"<parameter={k}>{gap}{v}{gap}</parameter>{gap}" for k, v in params)
                + f"</function>{gap}" for name, params, gap in calls
            ) + close
            for prose, calls, close in blocks
        )
        text = text[: end % (len(text) + 1)]  # cut off anywhere, or whole
        tools = SchemaCatalog() if schemas else TOOLS
        whole = run_checked(dialect, [text], tools, finish_reason=finish)
        chunked = run_checked(dialect, cut(text, points), tools, finish_reason=finish)
        chars = run_checked(dialect, list(text), tools, finish_reason=finish)
        assert merge(whole) == merge(chunked) == merge(chars)

    prop()


# the Markdown fences a json_object reply may be wrapped in (envelope markup)
FENCES = [("", ""), ("```json\n", "\n```"), ("```\n", "```"), ("```JSON  \r\n", "\n\n```")]


def test_json_object_conserves_meaning() -> None:
    """Whatever the cuts, with or without a Markdown fence around the object: the
    reasoning is the thought, the text the final content, the call the action."""
    @SETTINGS
    @given(st.text(max_size=20), st.one_of(st.text(max_size=20), JSON_ARGS),
           st.lists(st.integers(0, 10_000), max_size=20), st.sampled_from(FENCES))
    def prop(
        thought: str, result: str | dict[str, Any], points: list[int], fence: tuple[str, str]
    ) -> None:
        if isinstance(result, str):
            reply = {"thought": thought, "final": {"content": result}}
        else:
            reply = {"thought": thought, "action": {"tool": "calc", "args": result}}
        text = msgspec.json.encode(reply).decode()
        reply_text = " \n" + fence[0] + text + fence[1] + "\n"
        events = run_checked("json_object", cut(reply_text, points), TOOLS)
        reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
        visible = "".join(e.text for e in events if isinstance(e, TextDelta))
        ends = [e for e in events if isinstance(e, CallEnd)]
        assert reasoning == thought
        if isinstance(result, str):
            assert visible == result and ends == []
        else:
            assert visible == "" and [(e.name, e.arguments, e.raw) for e in ends] == [
                ("calc", result, text)
            ]

    prop()


def test_am_xml_typed_parameter_by_schema() -> None:
    from test_parser import SchemaCatalog

    @SETTINGS
    @given(st.one_of(st.integers(-10**9, 10**9).map(str), st.floats(allow_nan=False,
           allow_infinity=False).map(repr), st.text(max_size=6)),
           st.lists(st.integers(0, 10_000), max_size=10))
    def prop(value: str, points: list[int]) -> None:
        text = f'<am:tool_call name="calc"><a>{html.escape(value, quote=False)}</a></am:tool_call>'
        events = run_checked("am_xml", cut(text, points), SchemaCatalog())
        last = events[-2]
        try:
            number = msgspec.json.decode(value.strip())
        except msgspec.DecodeError:
            number = None
        if isinstance(number, int | float) and not isinstance(number, bool):
            assert isinstance(last, CallEnd) and last.arguments == {"a": number}
        else:
            assert isinstance(last, CallError) and last.reason == "invalid_arguments"

    prop()


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_fuzz_only_events_or_our_errors(dialect: str) -> None:
    @settings(max_examples=80, deadline=None)
    @given(st.text(max_size=120) | texts(dialect), st.lists(st.integers(0, 500)),
           st.sampled_from([None, 8, 64]), st.sampled_from([None, "stop", "length"]),
           st.booleans())
    def prop(
        text: str, points: list[int], cap: int | None, reason: str | None, think_open: bool
    ) -> None:
        p = Parser(dialect, TOOLS if len(text) % 2 else None, ["STOP"], max_buffer=cap,
                   think_open=think_open)
        try:
            feed_all(p, cut(text, points), reason)
        except SizeLimitExceeded:
            assert cap is not None
            with pytest.raises(ParserStateError):
                p.feed("x")
        except StreamtoolsError as exc:  # pragma: no cover - would be a bug
            raise AssertionError(f"unexpected error {exc!r}") from exc

    prop()


def test_feed_after_end_is_caller_misuse() -> None:
    p = Parser("hermes")
    p.end()
    with pytest.raises(ParserStateError, match="ENDED"):
        p.feed("x")
    with pytest.raises(ParserStateError):
        p.end()


def test_stop_split_across_deltas_and_later_input_ignored() -> None:
    p = Parser("am_xml", stop=["\nObservation:"])
    first = p.feed("Answer\nObs")
    assert first == [TextDelta(text="Answer")]  # the partial stop string is held
    events = first + p.feed("ervation: 42")
    assert p.stopped and p.feed("more") == []
    events += p.end()
    assert merge(events) == [
        TextDelta(text="Answer"),
        Finish(reason="stop", stop_sequence="\nObservation:"),
    ]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text("ab`\n", min_size=1, max_size=5), min_size=1, max_size=6),
    st.text("ab`\n", max_size=30),
)
def test_marker_pattern_matches_as_the_longest_first_alternation(
    markers: list[str], text: str
) -> None:
    # the scan's pattern is factored by common prefixes (for speed); it must find
    # what the plain alternation, longest marker first, finds: where, and which
    ordered = sorted(set(markers), key=len, reverse=True)
    plain = re.compile("|".join(re.escape(m) for m in ordered))
    found = [(m.start(), m.group()) for m in MarkerScan(markers).rx.finditer(text)]
    assert found == [(m.start(), m.group()) for m in plain.finditer(text)]
