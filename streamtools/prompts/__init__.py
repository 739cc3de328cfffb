"""The render side of every dialect: what the model is told, and how history is written.

Theory of operation
-------------------
One ``Renderer`` per dialect (``am_xml``, ``json_action``, ``hermes``,
``inline_json``, ``json_object``, ``command``), each in its own module, all
stateless singletons looked up by name with ``get_renderer``. ``project``
turns a ``Transcript`` into the ``ChatMessage`` list of a request; it is the
only code that does so (see ``streamtools.prompts.project`` for its rules).

The parse side of each dialect lives in ``streamtools.parser``; the two meet
only through text, which the round-trip tests hold them to: what a renderer
writes for a call, the parser reads back as the same call.

Core package: standard library and msgspec only.
"""

from __future__ import annotations

from streamtools.errors import UnknownDialectError
from streamtools.prompts.am_xml import AmXmlRenderer
from streamtools.prompts.command import CommandRenderer
from streamtools.prompts.hermes import HermesRenderer
from streamtools.prompts.inline_json import InlineJsonRenderer
from streamtools.prompts.json_action import JsonActionRenderer
from streamtools.prompts.json_object import JsonObjectRenderer
from streamtools.prompts.project import NO_RESULT, project
from streamtools.prompts.renderer import Renderer, summary_line

__all__ = ["NO_RESULT", "RENDERERS", "Renderer", "get_renderer", "project", "summary_line"]

RENDERERS: dict[str, Renderer] = {
    r.name: r
    for r in (
        AmXmlRenderer(),
        JsonActionRenderer(),
        HermesRenderer(),
        InlineJsonRenderer(),
        JsonObjectRenderer(),
        CommandRenderer(),
    )
}


def get_renderer(dialect: str) -> Renderer:
    """The renderer of ``dialect``; ``UnknownDialectError`` names the choices."""
    try:
        return RENDERERS[dialect]
    except KeyError:
        raise UnknownDialectError.of(dialect, RENDERERS) from None
