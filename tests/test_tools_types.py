"""Parameter types and defaults of ``@tool`` functions: what the schema says of them
and what validation lets through must agree."""

from __future__ import annotations

from typing import Annotated

import msgspec

from streamtools.tools import tool


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
