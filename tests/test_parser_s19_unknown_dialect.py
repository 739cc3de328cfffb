"""An unknown dialect is said in one message wherever the name is looked up.

The parser said ``choose one of am_xml, command, …`` (sorted, no colon) and the
renderers ``choose one of: am_xml, json_action, …`` (in their own order), so the
same mistake read differently from ``Parser`` and from ``Agent``."""

from __future__ import annotations

import pytest

from streamtools.errors import UnknownDialectError
from streamtools.parser import Parser
from streamtools.parser.dialects import DIALECTS
from streamtools.prompts import RENDERERS, get_renderer
from streamtools.runtime import Agent
from streamtools.testing import ScriptedModel

SAID = (
    "unknown dialect 'xml'; choose one of: "
    "am_xml, command, hermes, inline_json, json_action, json_object"
)


def test_parser_renderers_and_agent_say_it_alike() -> None:
    assert set(DIALECTS) == set(RENDERERS)  # the list said is both lists
    for make in (
        lambda: Parser("xml"),
        lambda: get_renderer("xml"),
        lambda: Agent(ScriptedModel([]), dialect="xml"),
    ):
        with pytest.raises(UnknownDialectError) as caught:
            make()
        assert str(caught.value) == SAID
