"""The Qwen3-Coder form (hermes, and am_xml's ``<tool_call>``) with a value's
``</parameter>`` left out, found by this session's properties
(``test_parser_s16b_properties``); each case whole, a character at a time and
at random cuts, with ``run_checked``'s invariants."""

from __future__ import annotations

from typing import Any

import pytest
from parser_cases import F, call, chunkings, run_checked, summary

TOOLS = ["search", "calc"]


def _block(*calls: str, close: str = "</tool_call>") -> str:
    return "<tool_call>\n" + "\n".join(calls) + "\n" + close


def _expect(dialect: str, text: str, expect: list[Any], finish: str | None = None) -> None:
    for how, chunks in chunkings(text):
        assert summary(run_checked(dialect, chunks, TOOLS, finish_reason=finish)) == expect, how


@pytest.mark.parametrize("dialect", ["hermes", "am_xml"])
def test_a_value_left_open_before_the_block_s_next_call_ends_at_its_function(
    dialect: str,
) -> None:
    """It swallowed the block's next call (its text the value's, the call lost
    without a word): ``</function>`` and ``<function=KNOWN>`` after it end the
    value, as ``</function></tool_call>`` does."""
    text = _block("<function=search>\n<parameter=q>\ncats\n</function>",
                  "<function=calc>\n<parameter=a>\n1\n</parameter>\n</function>")
    _expect(dialect, text, [call("search", q="cats"), call("calc", a="1"), F])
    # both left open, the first with two values
    text = _block("<function=search>\n<parameter=q>\nx\n<parameter=n>\n2\n</function>",
                  "<function=search>\n<parameter=q>\ny\n</function>")
    _expect(dialect, text, [call("search", q="x", n="2"), call("search", q="y"), F])


@pytest.mark.parametrize("dialect", ["hermes", "am_xml"])
def test_a_function_tag_of_no_tool_in_a_value_is_content(dialect: str) -> None:
    value = "a\n</function>\n<function=nope>\nb"
    text = _block(f"<function=search>\n<parameter=q>\n{value}\n</parameter>\n</function>")
    _expect(dialect, text, [call("search", q=value), F])
    # nor a tag that names nothing, even where any name is a tool (no catalog)
    value = "a\n</function>\n<function=>\nb"
    text = _block(f"<function=search>\n<parameter=q>\n{value}\n</parameter>\n</function>")
    for how, chunks in chunkings(text):
        assert summary(run_checked(dialect, chunks, None)) == [call("search", q=value), F], how
    # and a </function> followed by anything else
    value = "a</function> and <function=search b"
    text = _block(f"<function=search>\n<parameter=q>\n{value}\n</parameter>\n</function>")
    _expect(dialect, text, [call("search", q=value), F])


@pytest.mark.parametrize("dialect", ["hermes", "am_xml"])
def test_a_value_left_open_then_the_end_of_turn_token_ends_as_the_closed_form_does(
    dialect: str,
) -> None:
    """``</function>`` then ``<|im_end|>`` (a server that leaves the token in the
    text) after a value left open was an unterminated call, though the same call
    with its ``</parameter>`` completes: it completes too, under the same
    condition (the provider stopped the turn)."""
    open_ = "<tool_call>\n<function=search>\n<parameter=q>\ncats\n</function>\n<|im_end|>"
    closed = open_.replace("cats\n", "cats\n</parameter>\n")
    for text in (open_, closed):
        _expect(dialect, text, [call("search", q="cats"), F], "stop")
        _expect(dialect, text, [("error", "search", "unterminated"), ("finish", "length", None)],
                "length")
