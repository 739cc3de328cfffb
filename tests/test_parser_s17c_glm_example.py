"""GLM's call form: what ``xml_glm`` finds wrong in a call written in it (text
where ``<arg_value>`` is due, a key too long) was told with Qwen3-Coder's form
(``<function=TOOL>``) or the JSON form as the example to follow; a model that
wrote GLM's form is shown GLM's form."""

from __future__ import annotations

import pytest

from streamtools.events import CallError, ParserEvent
from streamtools.parser import Parser

NO_VALUE = "<tool_call>get_weather\n<arg_key>city</arg_key>\nParis\n</tool_call>"
LONG_KEY = "<tool_call>get_weather\n<arg_key>" + "k" * 300 + "</arg_key>\n</tool_call>"


def _events(dialect: str, text: str, whole: bool) -> list[ParserEvent]:
    parser = Parser(dialect, tools=["get_weather"])
    pieces = [text] if whole else list(text)
    out = [e for piece in pieces for e in parser.feed(piece)]
    return out + parser.end(finish_reason="stop")


@pytest.mark.parametrize("dialect", ["hermes", "am_xml"])
@pytest.mark.parametrize("whole", [True, False])
@pytest.mark.parametrize(
    ("text", "says"),
    [
        (NO_VALUE, "Text where <arg_value> is due after </arg_key> in the call to get_weather"),
        (LONG_KEY, "A key in <arg_key> longer than 256 characters"),
    ],
    ids=["no-value", "long-key"],
)
def test_a_glm_call_gone_wrong_is_shown_glms_form(
    dialect: str, whole: bool, text: str, says: str
) -> None:
    errors = [e for e in _events(dialect, text, whole) if isinstance(e, CallError)]
    assert len(errors) == 1
    error = errors[0]
    assert (error.reason, error.name, error.raw) == ("malformed", "get_weather", text)
    assert error.message.startswith(f"{says} is out of place. Write <tool_call>TOOL\n")
    assert "<arg_key>PARAM</arg_key>\n<arg_value>value</arg_value>" in error.message
    assert "<function=" not in error.message and "JSON" not in error.message


# what hermes_xml itself says of a GLM call (text between the pairs, a call cut
# off, arguments the schema refuses) showed Qwen3-Coder's form as well
STRAY = (
    "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
    "stray words\n</tool_call>"
)
CUT = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Par"


@pytest.mark.parametrize("dialect", ["hermes", "am_xml"])
@pytest.mark.parametrize("whole", [True, False])
@pytest.mark.parametrize("text", [STRAY, CUT], ids=["stray-text", "cut-off"])
def test_the_body_s_own_errors_show_glms_form_too(dialect: str, whole: bool, text: str) -> None:
    parser = Parser(dialect, tools=["get_weather"])
    pieces = [text] if whole else list(text)
    events = [e for piece in pieces for e in parser.feed(piece)] + parser.end()
    errors = [e for e in events if isinstance(e, CallError)]
    assert len(errors) == 1, events
    assert "<arg_key>PARAM</arg_key>\n<arg_value>value</arg_value>" in errors[0].message
    assert "<function=" not in errors[0].message
