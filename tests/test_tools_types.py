"""Parameter types and defaults of ``@tool`` functions: what the schema says of them
and what validation lets through must agree."""

from __future__ import annotations

import math
from typing import Annotated, Any

import msgspec

from streamtools.tools import tool

_MISSING: Any = object()


def test_an_object_annotation_is_any_json_value() -> None:
    """``object`` was refused at definition ('unsupported annotation ... type
    <class 'object'> is not supported', msgspec having no schema for it) while
    ``Any`` worked; it is any JSON value, ``{}``, wherever it appears."""

    @tool
    def store(
        key: str,
        value: object,
        extra: list[object],
        note: Annotated[object, msgspec.Meta(description="Anything")] = None,
    ) -> str:
        """Store a value."""
        return repr((key, value, extra, note))

    props = store.parameters["properties"]
    assert props["value"] == {}
    assert props["extra"] == {"type": "array", "items": {}}
    assert props["note"] == {"description": "Anything", "default": None}
    arguments = {"key": "k", "value": {"a": [1, None]}, "extra": ["x", 2.5, True]}
    assert store.validate(arguments) == {**arguments, "note": None}
    assert store.validate({**arguments, "value": "text"}, lenient=True)["value"] == "text"


def test_a_default_json_cannot_state_is_left_out_of_the_schema() -> None:
    """A sentinel default failed at definition as 'unsupported annotation:
    Encoding objects of type object is unsupported', though the annotation was
    fine; NaN and infinity went into the schema, where JSON writes them as null.
    Such a default is left out of the schema, the parameter stays optional, and
    the function gets the default itself (the same sentinel)."""

    @tool
    def fetch(url: str, retries: int | None = _MISSING, limit: float = math.inf) -> str:
        """Fetch a page."""
        return repr((retries is _MISSING, limit))

    props = fetch.parameters["properties"]
    assert props["retries"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert props["limit"] == {"type": "number"}
    assert fetch.parameters["required"] == ["url"]
    kwargs = fetch.validate({"url": "u"})
    assert kwargs["retries"] is _MISSING and kwargs["limit"] == math.inf
    assert fetch.invoke(kwargs) == "(True, inf)"
    assert fetch.validate({"url": "u", "retries": None, "limit": 2})["retries"] is None
