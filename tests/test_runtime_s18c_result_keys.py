"""A tool's dict result whose keys spell alike in JSON keeps every value.

``format_result`` writes a dict with keys that are not all str through
``json_ready``, which spelled each key as JSON does: ``1`` and ``"1"`` both
became ``"1"``, and the dict kept the last, so the model read one value where
the tool returned two (``{1: "a", "1": "b"}`` was ``{"1":"b"}``). So did
``None`` and ``"null"``, ``True`` and ``"true"``, two enums of one value, and
the same inside a dataclass (``to_builtins(str_keys=True)`` merged them first).
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

import msgspec
import pytest

from streamtools.results import format_result


class Colour(enum.Enum):
    RED = 1


class Size(enum.Enum):
    SMALL = 1


@dataclasses.dataclass
class Report:
    counts: dict[Any, str]


CASES: dict[str, dict[Any, str]] = {
    "int and str": {1: "a", "1": "b"},
    "str first": {"1": "b", 1: "a"},
    "None and null": {None: "a", "null": "b", True: "c", "true": "d"},
    "two enums": {Colour.RED: "a", Size.SMALL: "b", "1": "c"},
    "a renamed key taken": {1: "a", "1": "b", "1 (int)": "c"},
}


@pytest.mark.parametrize("value", CASES.values(), ids=list(CASES))
def test_every_value_reaches_the_model(value: dict[Any, str]) -> None:
    decoded = msgspec.json.decode(format_result(value))
    assert isinstance(decoded, dict)
    assert sorted(decoded.values()) == sorted(value.values())
    # a str key is written as it is
    for key, item in value.items():
        if isinstance(key, str):
            assert decoded[key] == item


def test_the_other_key_names_its_type() -> None:
    assert format_result({1: "a", "1": "b"}) == '{"1":"b","1 (int)":"a"}'


def test_inside_a_dataclass_too() -> None:
    decoded = msgspec.json.decode(format_result(Report(counts={1: "a", "1": "b"})))
    assert decoded == {"counts": {"1": "b", "1 (int)": "a"}}


def test_keys_that_do_not_clash_are_spelled_as_before() -> None:
    assert format_result({2024: 1.5, "x": None}) == '{"2024":1.5,"x":null}'
    assert format_result({None: 1, True: 2}) == '{"null":1,"true":2}'
