"""Qwen3-Coder's form with a tag's ``>`` left out, the name ending its line
(``<parameter=path\\n/tmp/x\\n</parameter>``, ``<function=search\\n``), as
Qwen3-Coder and Qwen3.6 write it in long agent runs (ml-explore/mlx-lm#1881,
#1811): the call was ``CallError(malformed)`` quoting the tag up to the next
``>``, which does not say what is missing. The tag is the one it stands for,
its end of line the value's layout (``hermes_xml._UNENDED``)."""

from __future__ import annotations

import pytest
from parser_cases import F, call, every_chunking

TOOLS = ["search", "write_file"]
WRITE = call("write_file", path="/tmp/x", content="a\n  b")


@pytest.mark.parametrize("dialect", ["hermes", "am_xml"])
@pytest.mark.parametrize(
    "text",
    [
        "<tool_call>\n<function=write_file>\n<parameter=path\n/tmp/x\n</parameter>\n"
        "<parameter=content>\na\n  b\n</parameter>\n</function>\n</tool_call>",
        "<tool_call>\n<function=write_file\n<parameter=path>\n/tmp/x\n</parameter>\n"
        "<parameter=content\na\n  b\n</parameter>\n</function>\n</tool_call>",
        "<tool_call>\r\n<function='write_file' \r\n<parameter=\"path\"\t\r\n/tmp/x\r\n"
        "</parameter>\r\n<parameter=content>\na\n  b\n</parameter>\n</function>\n</tool_call>",
    ],
    ids=["parameter", "function-and-parameter", "quoted-crlf"],
)
def test_a_tag_whose_gt_was_left_out_is_the_tag(dialect: str, text: str) -> None:
    every_chunking(dialect, text, TOOLS, [WRITE, F])


def test_it_stands_between_text_and_stays_out_of_place_where_no_tag_is_due() -> None:
    text = (
        "Let me look.\n<tool_call>\n<function=search>\n<parameter=query\ncats\n</parameter>\n"
        "</function>\n</tool_call>\nDone."
    )
    every_chunking("hermes", text, TOOLS, [
        ("text", "Let me look.\n"), call("search", query="cats"), ("text", "\nDone."), F,
    ])
    # a parameter before any function, or a name with a space in it: still errors
    every_chunking("hermes", "<tool_call>\n<parameter=query\ncats\n</parameter>\n</tool_call>",
                   TOOLS, [("error", None, "malformed"), F])
    every_chunking("hermes", "<tool_call>\n<function=my tool\n</function>\n</tool_call>",
                   TOOLS, [("error", None, "malformed"), F])
