"""A string parameter whose schema lists its values (an enum, a ``Literal``, a
``const``) or gives it a format (a date, a UUID) is not free text: written
pretty-printed in an XML call form (``<unit>\\n    celsius\\n  </unit>``), it
was ``"    celsius\\n  "``, which the schema refused, so a plain value cost a
repair turn. It is now the value (``xml_values.WORD``). A free-text string keeps
its spaces (only one layout newline per side goes), as Qwen3-Coder's template
and vLLM's parsers have it (vllm-project/vllm#48753)."""

from __future__ import annotations

import datetime
import enum
import uuid
from typing import Any, Literal

import msgspec
import pytest
from parser_cases import F, call, every_chunking

from streamtools import tool
from streamtools.tools import ToolRegistry


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Options(msgspec.Struct):
    mode: Literal["fast", "slow"]


@tool
def paint(
    color: Color,
    day: datetime.date,
    job: uuid.UUID,
    unit: Literal["celsius", "fahrenheit"],
    label: Literal["a b", "c"],
    options: Options | None = None,
    note: str = "",
) -> str:
    """Paint."""
    return ""


TOOLS = ToolRegistry([paint])
JOB = "12345678-1234-5678-1234-567812345678"
PRETTY = {
    "color": "\n    red\n  ",
    "day": "\n    2026-11-23\n  ",
    "job": f" {JOB} ",
    "unit": '\n    "celsius"\n  ',
    "label": " a b\n",
    "note": "\n    keep me  \n  ",
}
WANT = {
    "color": "red", "day": "2026-11-23", "job": JOB, "unit": "celsius", "label": "a b",
    "note": "    keep me  \n  ",
}


def _qwen(values: dict[str, str], name: str = "paint") -> str:
    params = "".join(f"<parameter={k}>{v}</parameter>\n" for k, v in values.items())
    return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"


def _glm(values: dict[str, str], name: str = "paint") -> str:
    pairs = "".join(
        f"<arg_key>{k}</arg_key><arg_value>{v}</arg_value>\n" for k, v in values.items()
    )
    return f"<tool_call>{name}\n{pairs}</tool_call>"


def _invoke(values: dict[str, str]) -> str:
    params = "".join(
        f'<parameter name="{k}" string="true">{v}</parameter>\n' for k, v in values.items()
    )
    return f'<function_calls>\n<invoke name="paint">\n{params}</invoke>\n</function_calls>'


def _am(values: dict[str, str], name: str = "paint") -> str:
    params = "".join(f"  <{k}>{v}</{k}>\n" for k, v in values.items())
    return f'<am:tool_call name="{name}">\n{params}</am:tool_call>'


@pytest.mark.parametrize(
    ("dialect", "form"),
    [("hermes", _qwen), ("hermes", _glm), ("hermes", _invoke), ("am_xml", _am)],
    ids=["qwen", "glm", "invoke", "am_xml"],
)
def test_pretty_printed_listed_and_formatted_values_are_the_values(
    dialect: str, form: Any
) -> None:
    every_chunking(dialect, form(PRETTY), TOOLS, [call("paint", **WANT), F])


def test_a_nested_listed_value_is_the_value_too() -> None:
    text = (
        '<am:tool_call name="paint"><color>blue</color><day>2026-01-02</day>'
        f"<job>{JOB}</job><unit>fahrenheit</unit><label>c</label>"
        "<options>\n  <mode>\n    slow\n  </mode>\n</options></am:tool_call>"
    )
    want = call(
        "paint", color="blue", day="2026-01-02", job=JOB, unit="fahrenheit", label="c",
        options={"mode": "slow"},
    )
    every_chunking("am_xml", text, TOOLS, [want, F])


def test_a_value_not_listed_still_goes_to_the_schema_check() -> None:
    # neither the text nor its stripped or unquoted form is listed: the model's
    # text (without its layout newlines) is what the check names
    text = _qwen({"color": "\n  green\n", "day": "2026-11-23", "job": JOB, "unit": "kelvin",
                  "label": "'c"})
    every_chunking("hermes", text, TOOLS, [("error", "paint", "invalid_arguments"), F])


@tool
def pace(mode: Literal["fast", "slow"] | None = None, at: datetime.date | None = None) -> str:
    """Pace."""
    return ""


@pytest.mark.parametrize(
    ("dialect", "form"), [("hermes", _qwen), ("hermes", _glm), ("am_xml", _am)],
    ids=["qwen", "glm", "am_xml"],
)
def test_a_listed_value_that_may_be_null(dialect: str, form: Any) -> None:
    # ``Literal[...] | None``: laid out with spaces it is the value; ``null`` is null
    registry = ToolRegistry([pace])
    text = form({"mode": "\n    slow\n  ", "at": " 2026-11-23\n"}, "pace")
    every_chunking(dialect, text, registry, [call("pace", mode="slow", at="2026-11-23"), F])
    text = form({"mode": "\n  null\n", "at": "null"}, "pace")
    every_chunking(dialect, text, registry, [call("pace", mode=None, at=None), F])
