"""What a tool's return value reads as (``streamtools.results.format_result``):
values of other libraries' types, which the model must get as JSON, not as a
crash or a summary."""

from __future__ import annotations

import enum
import math

import pytest

from streamtools.results import format_result


class Float64(float):
    """A float subclass spelled as numpy spells its ``float64``: ``np.float64(nan)``."""

    def __repr__(self) -> str:
        return f"np.float64({float(self)!r})"


def test_a_float_subclass_that_is_not_finite_is_spelled_by_its_value() -> None:
    """A numpy ``float64`` NaN raised ``KeyError('np.float64(nan)')`` (the name was
    looked up by ``repr``): the tool's result was lost as ``unencodable_result``."""
    assert math.isnan(Float64("nan"))
    assert format_result(Float64("nan")) == "NaN"
    assert format_result(Float64("-inf")) == "-Infinity"


class UserId(int):
    """An int subclass, as a user's own type or numpy's ``int64`` (not one) reads."""


class Matrix:
    """An array type of another library: its values through ``tolist``, as numpy's,
    and a ``str`` that summarises them, as numpy's does past 1,000 items."""

    def __init__(self, rows: list[list[float]]) -> None:
        self.rows = rows

    def tolist(self) -> list[list[float]]:
        return self.rows

    def __str__(self) -> str:
        return "[[1.0 ... nan]]"


def test_numbers_of_subclasses_are_numbers_not_text() -> None:
    """msgspec encodes only exact ints and floats; a subclass went to ``str`` and
    reached the model as a string: ``{"id": "7"}``, ``{"mean": "np.float64(inf)"}``."""
    assert format_result({"id": UserId(7), "mean": Float64(2.5)}) == '{"id":7,"mean":2.5}'
    assert format_result({"mean": Float64("inf"), "n": 0}) == '{"mean":"Infinity","n":0}'
    assert format_result([Float64("nan"), Float64(1.5)]) == '["NaN",1.5]'


def test_an_array_is_its_values_not_its_summary() -> None:
    """An array reached the model as its ``str``: numpy's ``[0 1 2 ... 998 999]``
    drops all but six of a thousand values."""
    matrix = Matrix([[1.0, 2.0], [3.0, float("nan")]])
    assert format_result(matrix) == '[[1.0,2.0],[3.0,"NaN"]]'
    assert format_result({"m": matrix}) == '{"m":[[1.0,2.0],[3.0,"NaN"]]}'


def test_numpy_values_are_json() -> None:
    np = pytest.importorskip("numpy")
    assert format_result(np.arange(2000)) == "[" + ",".join(map(str, range(2000))) + "]"
    assert format_result({"n": np.int64(3), "x": np.float64("nan"), "ok": np.bool_(True)}) == (
        '{"n":3,"ok":true,"x":"NaN"}'
    )


class Unit(enum.Enum):
    CELSIUS = "c"


def test_keys_read_as_the_same_values_do() -> None:
    """An enum key read ``"Unit.CELSIUS"`` where the same member as a value reads
    ``"c"``; a numpy float key made the result unencodable (``TypeError``); a NaN
    key read ``"null"``."""
    assert format_result({Unit.CELSIUS: 1, "unit": Unit.CELSIUS}) == '{"c":1,"unit":"c"}'
    assert format_result({Float64(1.5): 1, "a": 2}) == '{"1.5":1,"a":2}'
    assert format_result({float("nan"): 1, "a": 2}) == '{"NaN":1,"a":2}'


def test_bytes_inside_a_result_that_are_text_read_as_text() -> None:
    """``{"stdout": proc.stdout, "code": 0}`` (a subprocess's output as bytes) was
    written in base64, ``{"stdout": "aGkK"}``, which the model cannot read; bytes
    alone were already read as text. Binary bytes stay base64."""
    assert format_result({"stdout": b"hi\n", "code": 0}) == '{"code":0,"stdout":"hi\\n"}'
    assert format_result([b"caf\xc3\xa9", (bytearray(b"ok"), 1)]) == '["café",["ok",1]]'
    assert format_result({"png": b"\x89PNG\xff"}) == '{"png":"iVBOR/8="}'
    rows = [{"id": 1, "name": "a"}]
    assert format_result(rows) == '[{"id":1,"name":"a"}]'


def test_other_collections_are_json_not_their_repr() -> None:
    """``dict.keys()``, a ``deque``, a ``range``, a ``mappingproxy`` reached the model
    as their Python repr in a string: ``"dict_keys(['b', 'a'])"``."""
    import collections
    import types

    d = {"b": 1, "a": 2}
    assert format_result(d.keys()) == '["b","a"]'
    assert format_result({"ids": d.values(), "q": collections.deque([3])}) == (
        '{"ids":[1,2],"q":[3]}'
    )
    assert format_result(range(3)) == "[0,1,2]"
    assert format_result(types.MappingProxyType(d)) == '{"a":2,"b":1}'
    assert format_result(collections.ChainMap({"x": d.items()})) == '{"x":[["b",1],["a",2]]}'


class Name(str):
    """A str subclass: text, never a sequence of characters."""


def test_a_str_subclass_inside_a_result_stays_text() -> None:
    assert format_result([Name("Ada"), {"n": Name("Bo")}]) == '["Ada",{"n":"Bo"}]'


def test_a_collection_holding_keys_json_lacks_is_still_a_result() -> None:
    """A deque holding a dict with a bool key raised ``TypeError`` (the hook's list
    was not walked for its keys), so the result was lost as unencodable."""
    import collections

    assert format_result(collections.deque([{False: None, 2: "b"}])) == '[{"2":"b","false":null}]'
