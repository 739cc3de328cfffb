"""Per-parameter descriptions from docstrings (``streamtools.docstrings``), as
``@tool`` puts them in a tool's schema."""

from __future__ import annotations

from typing import Annotated

import msgspec

from streamtools.docstrings import parse_docstring
from streamtools.tools import tool


def test_a_google_section_goes_on_past_a_blank_line_inside_it() -> None:
    """A blank line in an ``Args:`` section (a parameter's second paragraph) ended
    the section: every parameter after it lost its description."""

    @tool
    def search(query: str, limit: int = 5) -> list[str]:
        """Search the notes.

        Args:
            query: What to look for.

                Words in quotes are matched as a phrase.
            limit: How many notes at most.

        Returns:
            The notes found.
        """
        return [query] * limit

    props = search.parameters["properties"]
    assert props["query"]["description"] == (
        "What to look for. Words in quotes are matched as a phrase."
    )
    assert props["limit"]["description"] == "How many notes at most."
    # items level with the title still end at the blank line: what follows is prose
    doc = "Summary.\nArgs:\na: the a\n\nb: not a parameter's text\n"
    assert parse_docstring(doc) == ("Summary.", {"a": "the a"})


def test_a_google_type_with_parentheses_of_its_own() -> None:
    """``x (tuple(int, int)): …`` did not match (the type stopped at the first
    ``)``): the parameter had no description."""
    doc = "Move.\n\nArgs:\n    to (tuple(int, int)): Where to.\n    fast (bool): How.\n"
    assert parse_docstring(doc) == ("Move.", {"to": "Where to.", "fast": "How."})


def test_numpy_parameters_named_together() -> None:
    """NumPy's ``x, y : float`` (several parameters, one text) was not read."""

    @tool
    def move(x: float, y: float, speed: float = 1.0) -> str:
        """Move the pen.

        Parameters
        ----------
        x, y : float
            Where to, in millimetres.
        speed : float
            How fast.
        """
        return f"{x},{y}"

    props = move.parameters["properties"]
    assert [props[k]["description"] for k in ("x", "y", "speed")] == [
        "Where to, in millimetres.",
        "Where to, in millimetres.",
        "How fast.",
    ]


def test_a_string_in_annotated_describes_the_parameter() -> None:
    """``Annotated[str, "The city"]`` (LangChain's and AutoGen's way) was ignored:
    the parameter had no description. ``msgspec.Meta``'s description comes first,
    the string before the docstring's."""

    @tool
    def weather(
        city: Annotated[str, "The city, e.g. Oslo."],
        days: Annotated[int, msgspec.Meta(ge=1, description="Days ahead."), "ignored"] = 1,
        units: Annotated[str, "Units."] = "c",
    ) -> str:
        """Get the weather.

        Args:
            units: From the docstring.
        """
        return city

    props = weather.parameters["properties"]
    assert props["city"]["description"] == "The city, e.g. Oslo."
    assert props["days"]["description"] == "Days ahead."
    assert props["units"]["description"] == "Units."
