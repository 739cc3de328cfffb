"""``am_xml`` (and the Qwen3-Coder form, which reads values the same way): an
array or object parameter written as JSON text whose strings hold raw newlines
or tabs (code written unescaped) was not JSON, so the value was a string the
schema refused; it is the array or object meant, as the JSON dialects read it.
Each case whole, a character at a time and at random cuts (``run_checked``)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from parser_cases import chunkings, run_checked, summary

from streamtools import tool
from streamtools.events import ArgsDelta, CallEnd
from streamtools.tools import ToolRegistry


@tool
def patch(files: list[str], meta: dict[str, str] | None = None, note: str = "") -> str:
    """Patch files."""
    return "ok"


REGISTRY = ToolRegistry([patch])
FILES = '["def f():\n\treturn 1", "b"]'
META = '{"k": "x\ty\r\n"}'
MEANT = {"files": ["def f():\n\treturn 1", "b"], "meta": {"k": "x\ty\r\n"}}

TEXTS = {
    "am_xml": f'<am:tool_call name="patch"><files>{FILES}</files><meta>{META}</meta>'
              "</am:tool_call>",
    "am_xml-parameter": f'<am:tool_call name="patch"><parameter name="files">\n{FILES}\n'
                        f'</parameter><parameter name="meta">{META}</parameter></am:tool_call>',
    "hermes-qwen": f"<tool_call>\n<function=patch>\n<parameter=files>\n{FILES}\n</parameter>\n"
                   f"<parameter=meta>\n{META}\n</parameter>\n</function>\n</tool_call>",
}


@pytest.mark.parametrize("case", sorted(TEXTS))
@pytest.mark.parametrize("schema", [True, False])
def test_an_array_or_object_with_raw_controls_in_its_strings_is_what_it_means(
    case: str, schema: bool
) -> None:
    tools: Any = REGISTRY if schema else ["patch"]
    for how, chunks in chunkings(TEXTS[case]):
        events = run_checked(case.split("-")[0], chunks, tools)
        assert summary(events)[0] == ("call", "patch", MEANT), how
        args = "".join(e.delta for e in events if isinstance(e, ArgsDelta))
        assert json.loads(args) == MEANT
        (end,) = [e for e in events if isinstance(e, CallEnd)]
        assert FILES in end.raw


def test_text_that_is_not_json_even_so_stays_a_string() -> None:
    text = '<am:tool_call name="patch"><files>["a\nb", oops]</files></am:tool_call>'
    events = run_checked("am_xml", [text], ["patch"])
    assert summary(events)[0] == ("call", "patch", {"files": '["a\nb", oops]'})
