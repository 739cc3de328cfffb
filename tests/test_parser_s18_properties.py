"""Hypothesis properties for the forms this session's parser commits read:
listed and formatted string values laid out with spaces (``xml_values.WORD``),
Qwen3-Coder tags whose ``>`` was left out at a line's end, GLM closing tokens
repeated where nothing is open, and JSON calls with a ``}`` too many. Each
generated reply is run whole, at random cuts and a character at a time
(``runs``: chunking invariance and ``run_checked``'s invariants), and its calls
are the ones the well-formed reply would give."""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from hypothesis import given
from hypothesis import strategies as st
from test_parser_s16b_properties import SETTINGS, ends, runs

from streamtools import tool
from streamtools.tools import ToolRegistry


@tool
def paint(unit: Literal["celsius", "fahrenheit"], note: str = "") -> str:
    """Paint."""
    return ""


REGISTRY = ToolRegistry([paint])
SPACE = st.text(alphabet=" \t\n", max_size=4)
NOTE = st.from_regex(r"[a-z][a-z ]{0,6}[a-z]", fullmatch=True)
POINTS = st.lists(st.integers(0, 10_000), max_size=15)


def _form(form: str, values: dict[str, str]) -> tuple[str, str]:
    """The call of ``paint`` with ``values`` written in ``form``: (dialect, text)."""
    if form == "qwen":
        body = "".join(f"<parameter={k}>{v}</parameter>\n" for k, v in values.items())
        return "hermes", f"<tool_call>\n<function=paint>\n{body}</function>\n</tool_call>"
    if form == "glm":
        body = "".join(
            f"<arg_key>{k}</arg_key><arg_value>{v}</arg_value>" for k, v in values.items()
        )
        return "hermes", f"<tool_call>paint\n{body}</tool_call>"
    if form == "invoke":
        body = "".join(f'<parameter name="{k}">{v}</parameter>' for k, v in values.items())
        return "am_xml", f'<function_calls><invoke name="paint">{body}</invoke></function_calls>'
    body = "".join(f"<{k}>{v}</{k}>" for k, v in values.items())
    return "am_xml", f'<am:tool_call name="paint">{body}</am:tool_call>'


@SETTINGS
@given(st.sampled_from(["qwen", "glm", "invoke", "am_xml"]),
       st.sampled_from(["celsius", "fahrenheit"]), SPACE, SPACE, st.sampled_from(["", '"']),
       NOTE, POINTS)
def test_a_listed_value_laid_out_with_spaces_is_the_value(
    form: str, unit: str, before: str, after: str, quote: str, note: str, points: list[int]
) -> None:
    dialect, text = _form(form, {"unit": f"{before}{quote}{unit}{quote}{after}", "note": note})
    assert ends(runs(dialect, "ok " + text + " done", points, REGISTRY)) == [
        ("paint", {"unit": unit, "note": note})
    ]


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(["search", "write_file"]),
                          st.dictionaries(st.sampled_from(["q", "path", "n"]), NOTE, max_size=3),
                          st.lists(st.booleans(), min_size=4, max_size=4)),
                min_size=1, max_size=2),
       POINTS)
def test_qwen_tags_whose_gt_was_left_out_read_as_the_tags(
    calls: list[tuple[str, dict[str, str], list[bool]]], points: list[int]
) -> None:
    def tag(element: str, name: str, left_out: bool) -> str:
        return f"<{element}={name}\n" if left_out else f"<{element}={name}>\n"

    text = "".join(
        "<tool_call>\n" + tag("function", name, drop[0])
        + "".join(tag("parameter", k, drop[1 + i % 3]) + f"{v}\n</parameter>\n"
                  for i, (k, v) in enumerate(args.items()))
        + "</function>\n</tool_call>\n"
        for name, args, drop in calls
    )
    got = ends(runs("hermes", text, points, ["search", "write_file"]))
    assert got == [(name, args) for name, args, _ in calls]


@SETTINGS
@given(st.sampled_from(["list_dir", "list_mailboxes"]),
       st.dictionaries(st.sampled_from(["path", "depth"]), NOTE, max_size=2),
       st.lists(st.integers(0, 2), min_size=5, max_size=5), st.sampled_from(["hermes", "am_xml"]),
       POINTS)
def test_glm_closing_tokens_repeated_where_nothing_is_open_are_layout(
    name: str, args: dict[str, str], extra: list[int], dialect: str, points: list[int]
) -> None:
    text = f"<tool_call>{name}" + "</arg_value>" * extra[0]
    for i, (k, v) in enumerate(args.items()):
        text += f"\n<arg_key>{k}</arg_key>" + "</arg_key>" * extra[1 + i]
        text += f"\n<arg_value>{v}</arg_value>" + "</arg_value>" * extra[3 + i]
    text += "\n</tool_call> after"
    assert ends(runs(dialect, text, points, ["list_dir", "list_mailboxes"])) == [(name, args)]


@SETTINGS
@given(st.dictionaries(st.sampled_from(["q", "n"]), st.one_of(NOTE, st.integers(), st.none()),
                       max_size=2),
       st.integers(0, 3), st.sampled_from(["", " ", "\n"]),
       st.sampled_from(["hermes", "json_action"]), POINTS)
def test_closing_braces_too_many_after_a_json_call_are_markup(
    args: dict[str, Any], extra: int, gap: str, dialect: str, points: list[int]
) -> None:
    call = msgspec.json.encode({"name": "search", "arguments": args}).decode()
    braces = gap.join("}" * extra)
    if dialect == "hermes":
        text = f"<tool_call>{call}{braces}\n</tool_call>ok"
    else:
        call = msgspec.json.encode({"tool": "search", "parameters": args}).decode()
        text = f"```json action\n{call}{braces}\n```ok"
    assert ends(runs(dialect, text, points, ["search"])) == [("search", args)]
