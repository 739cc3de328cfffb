"""``functions.NAME``: OpenAI's namespace of function tools, which gpt-oss
(harmony's ``to=functions.get_weather``) and Kimi K2 (``functions.get_weather:0``)
are trained to write, and write in the prompt dialects' name fields too. With a
catalog that has ``get_weather`` and no ``functions.get_weather`` it was
``CallError(unknown_tool)``: the call lost. It is now the catalog's tool (the
call's name the real one, its raw what was written), in every form whose name
the catalog checks; a tool really named ``functions.x`` wins; with no catalog a
name stays as written."""

from __future__ import annotations

import pytest
from parser_cases import F, call, every_chunking, hold_bound, run_checked, summary
from test_parser_s16b_properties import fragments_hold

from streamtools.events import CallEnd, CallError, CallStart
from streamtools.parser import Parser
from streamtools.tools import ToolRegistry, tool


@tool
def get_weather(city: str, days: int = 1) -> str:
    """The forecast for a city."""
    return f"{city}: {days}"


@tool
def list_mailboxes() -> str:
    """The mailboxes."""
    return "inbox"


TOOLS = ToolRegistry([get_weather, list_mailboxes])
WEATHER = call("get_weather", city="Paris", days=3)
QWEN = (
    "<function=functions.get_weather>\n<parameter=city>\nParis\n</parameter>\n"
    "<parameter=days>\n3\n</parameter>\n</function>"
)

# (days is an integer parameter: in the XML forms it is 3, not "3", only when the
# schema of the tool the prefixed name resolves to is the one read)
CASES = [
    ("hermes", '<tool_call>{"name": "functions.get_weather", "arguments": '
               '{"city": "Paris", "days": 3}}</tool_call>ok'),
    ("hermes", f"<tool_call>\n{QWEN}\n</tool_call>ok"),
    ("hermes", f"Let me look.\n{QWEN}\nok"),
    ("hermes", "<tool_call>functions.get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris"
               "</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>ok"),
    ("hermes", '<function_calls>\n<invoke name="functions.get_weather">\n<parameter name='
               '"city">Paris</parameter>\n<parameter name="days">3</parameter>\n</invoke>\n'
               "</function_calls>ok"),
    ("am_xml", '<am:tool_call name="functions.get_weather"><city>Paris</city><days>3</days>'
               "</am:tool_call>ok"),
    ("am_xml", f"<tool_call>\n{QWEN}\n</tool_call>ok"),
    ("json_action", '```json action\n{"tool": "functions.get_weather", "parameters": '
                    '{"city": "Paris", "days": 3}}\n```ok'),
    ("inline_json", 'Sure: {"tool": "functions.get_weather", "arguments": '
                    '{"city": "Paris", "days": 3}}ok'),
    ("command", '@tool functions.get_weather {"city": "Paris", "days": 3}\nok'),
]


@pytest.mark.parametrize(("dialect", "text"), CASES)
def test_a_prefixed_name_calls_the_catalogs_tool(dialect: str, text: str) -> None:
    before = [("text", "Sure: ")] if text.startswith("Sure") else []
    before += [("text", "Let me look.\n")] if text.startswith("Let") else []
    after = ("text", "\nok") if dialect == "command" else ("text", "ok")
    every_chunking(dialect, text, TOOLS, [*before, WEATHER, after, F])


def test_json_object_reads_the_prefixed_name() -> None:
    text = '{"action": {"tool": "functions.get_weather", "args": {"city": "Paris", "days": 3}}}'
    every_chunking("json_object", text, TOOLS, [WEATHER, F])


def test_the_events_name_the_tool_and_the_raw_keeps_what_was_written() -> None:
    text = '<tool_call>{"name": "functions.get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
    events = run_checked("hermes", [text], TOOLS)
    start = next(e for e in events if isinstance(e, CallStart))
    end = next(e for e in events if isinstance(e, CallEnd))
    assert start.name == end.name == "get_weather"
    assert end.raw == text


def test_a_names_list_is_a_catalog_too() -> None:
    text = '<tool_call>{"name": "functions.search", "arguments": {"q": "a"}}</tool_call>'
    every_chunking("hermes", text, ["search"], [call("search", q="a"), F])


def test_a_tool_really_named_so_wins() -> None:
    text = '<tool_call>{"name": "functions.search", "arguments": {"q": "a"}}</tool_call>'
    every_chunking("hermes", text, ["search", "functions.search"],
                   [call("functions.search", q="a"), F])


def test_without_a_catalog_the_name_stays_as_written() -> None:
    text = '<tool_call>{"name": "functions.search", "arguments": {"q": "a"}}</tool_call>'
    every_chunking("hermes", text, None, [call("functions.search", q="a"), F])


def test_a_prefixed_unknown_name_is_still_unknown_and_the_message_names_the_tool() -> None:
    text = '<tool_call>{"name": "functions.get_wether", "arguments": {"city": "a"}}</tool_call>'
    every_chunking("hermes", text, TOOLS, [("error", "functions.get_wether", "unknown_tool"), F])
    error = next(e for e in run_checked("hermes", [text], TOOLS) if isinstance(e, CallError))
    assert "Did you mean `get_weather`?" in error.message


def test_inline_json_without_a_catalog_keeps_the_prefixed_name() -> None:
    text = 'x {"tool": "functions.search", "arguments": {}} y'
    every_chunking("inline_json", text, None,
                   [("text", "x "), call("functions.search"), ("text", " y"), F])


def test_glm_cut_at_the_stop_marker_after_a_prefixed_name() -> None:
    every_chunking("hermes", "<tool_call>functions.list_mailboxes", TOOLS,
                   [call("list_mailboxes"), F], finish_reason="stop")


def test_a_qwen_value_left_open_before_a_prefixed_next_call() -> None:
    text = (
        "<tool_call>\n<function=list_mailboxes>\n</function>\n"
        "<function=functions.get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "<parameter=days>\n3\n</function>\n<function=functions.list_mailboxes>\n</function>\n"
        "</tool_call>"
    )
    every_chunking("hermes", text, TOOLS, [call("list_mailboxes"), WEATHER,
                                           call("list_mailboxes"), F])


def test_prefixed_names_hold_their_invariants() -> None:
    pieces = [
        "<tool_call>", "</tool_call>", '{"name": "', "functions.", "functions", "get_weather",
        "search", '", "arguments": {"city": "P"}}', "<function=", ">", "</function>",
        '{"tool": "', "\n", " ok ", "<arg_key>city</arg_key>", "<arg_value>P</arg_value>",
    ]
    fragments_hold(pieces, ["hermes", "am_xml", "inline_json"], ["get_weather", "search"])


def test_inline_json_holds_a_prefixed_name_within_the_stated_bound() -> None:
    """The longest head the window reads, whitespace runs at their limit and
    ``functions.`` before the longest name, a character at a time: the most held
    is 152 + the name's length less its closing quote (core's docstring)."""
    ws = " " * 8
    name = "kom.memory.v1.search_memory"
    head = (f"<|python_tag|>{ws}{{{ws}\"type\"{ws}:{ws}\"function\"{ws},{ws}\"function\"{ws}:"
            f"{ws}{{{ws}\"name\"{ws}:{ws}\"functions.{name}")
    text = f'{head}", "arguments": {{}}}}}}'
    parser = Parser("inline_json", ["search", name])
    most = 0
    for c in text:
        parser.feed(c)
        most = max(most, parser.held)
    assert most == len(head) == 152 + len(name) - 1
    assert hold_bound(parser) == 152 + len(name)
    events = run_checked("inline_json", list(text), ["search", name])
    assert summary(events)[0] == ("call", name, {})
