"""GLM's form with a closing token repeated where nothing is open: GLM 5.2
writes ``<tool_call>tool_12</arg_value>`` for a call without arguments
(fw-ai-external/python-sdk#119), GLM-4.7 ``<arg_key>path</arg_key></arg_key>
<arg_value>`` (vllm-project/vllm#54971). Each was ``CallError(malformed)``, the
call lost for a stray token the model cannot be told to avoid; it closes
nothing and is layout (``xml_glm``)."""

from __future__ import annotations

from typing import Any

import pytest
from parser_cases import F, call, every_chunking

TOOLS = ["list_mailboxes", "list_dir"]


@pytest.mark.parametrize("dialect", ["hermes", "am_xml"])
@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("<tool_call>list_mailboxes</arg_value></tool_call>ok", call("list_mailboxes")),
        ("<tool_call>list_mailboxes</arg_value>\n</tool_call>ok", call("list_mailboxes")),
        (
            "<tool_call>list_dir<arg_key>path</arg_key></arg_key><arg_value>/tmp/x</arg_value>"
            "</arg_value>\n</tool_call>ok",
            call("list_dir", path="/tmp/x"),
        ),
        (
            "<tool_call>list_dir\n<arg_key>path</arg_key>\n</arg_key>\n</arg_key>"
            "<arg_value>/tmp/x</arg_value>\n</tool_call>ok",
            call("list_dir", path="/tmp/x"),
        ),
    ],
    ids=["no-arguments", "no-arguments-newline", "key-closed-twice", "key-closed-three-times"],
)
def test_a_repeated_closing_token_is_layout(
    dialect: str, text: str, expect: tuple[Any, ...]
) -> None:
    every_chunking(dialect, text, TOOLS, [expect, ("text", "ok"), F])


def test_a_value_with_no_opening_token_is_read_since_a79321c() -> None:
    # was pinned as malformed here; GLM-4.7 writes it (test_parser_s19_glm_bare_value)
    text = "<tool_call>list_dir<arg_key>path</arg_key>/tmp/x</arg_value></tool_call>"
    every_chunking("hermes", text, TOOLS, [call("list_dir", path="/tmp/x"), F])


@pytest.mark.parametrize("dialect", ["hermes", "am_xml"])
@pytest.mark.parametrize("tail", ["", "\n", " \n"])
def test_a_call_without_arguments_whose_closing_marker_the_provider_removed(
    dialect: str, tail: str
) -> None:
    # hermes' stop marker is </tool_call>: a GLM call of a tool without parameters
    # arrives as <tool_call>NAME and ends with "stop"; it was malformed
    text = f"Checking.\n<tool_call>list_mailboxes{tail}"
    every_chunking(dialect, text, TOOLS, [("text", "Checking.\n"), call("list_mailboxes"), F],
                   finish_reason="stop")


@pytest.mark.parametrize(
    ("text", "finish", "reason"),
    [
        ("<tool_call>list_mailboxes", None, "malformed"),  # the stream broke: no call
        ("<tool_call>list_mailboxes", "length", "malformed"),
        ("<tool_call>Sure", "stop", "malformed"),  # no tool of the catalog: maybe prose
        ("<tool_call>list the mailboxes", "stop", "malformed"),
    ],
)
def test_other_ends_after_a_name_stay_errors(
    text: str, finish: str | None, reason: str
) -> None:
    expect = [("error", None, reason), ("finish", finish or "stop", None)]
    every_chunking("hermes", text, TOOLS, expect, finish_reason=finish)
