"""Parameter types and defaults of ``@tool`` functions: what the schema says of them
and what validation lets through must agree."""

from __future__ import annotations

import dataclasses
import math
from typing import Annotated, Any, Literal, NotRequired, TypedDict

import msgspec
import pytest

from streamtools.events import CallEnd
from streamtools.parser import Parser
from streamtools.tools import ToolArgumentsError, ToolRegistry, tool

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


class Address(msgspec.Struct):
    street: str
    city: str = ""


@dataclasses.dataclass
class Item:
    sku: str
    qty: int = 1


class Contact(TypedDict):
    name: str
    phone: NotRequired[str]


class Box(msgspec.Struct, tag_field="kind", tag="box"):
    size: float


class Bag(msgspec.Struct, tag_field="kind", tag="bag"):
    volume: float


@tool
def ship(
    to: Address, items: list[Item], contact: Contact, parcel: Box | Bag | None = None
) -> str:
    """Ship items."""
    return "ok"


@tool
def relocate(address: Address) -> str:
    """Move house: the one Struct parameter is the arguments object."""
    return address.street


GOOD: dict[str, Any] = {
    "to": {"street": "1 Main St"},
    "items": [{"sku": "a"}],
    "contact": {"name": "Ann"},
}


@pytest.mark.parametrize(
    ("arguments", "detail"),
    [
        ({**GOOD, "to": {"street": "x", "zip": "0150"}}, "unknown field `zip` - at `$.to`"),
        ({**GOOD, "items": [{"sku": "a"}, {"sku": "b", "qyt": 2}]}, "`qyt` - at `$.items[1]`"),
        ({**GOOD, "contact": {"name": "Ann", "mail": "a@x"}}, "`mail` - at `$.contact`"),
        ({**GOOD, "parcel": {"kind": "bag", "volume": 2, "colour": "red"}}, "`colour`"),
    ],
)
def test_an_unknown_field_of_a_nested_type_is_refused(
    arguments: dict[str, Any], detail: str
) -> None:
    """A Struct, dataclass or TypedDict parameter dropped an unknown field (a
    model's misspelt ``qyt``: the value lost without a word), while the
    function's own parameters refused one; the schema said nothing either. Both
    now say the object is closed, and the model is told which names it may use."""
    with pytest.raises(ToolArgumentsError) as info:
        ship.validate(arguments)
    assert detail in info.value.detail
    assert "Allowed parameters at `$." in str(info.value)
    with pytest.raises(ToolArgumentsError):
        ship.validate(arguments, lenient=True)


def test_the_schema_says_nested_objects_are_closed() -> None:
    defs = ship.parameters["$defs"]
    assert ship.parameters["additionalProperties"] is False
    assert {name: d["additionalProperties"] for name, d in defs.items()} == {
        "Address": False, "Item": False, "Contact": False, "Box": False, "Bag": False
    }
    kwargs = ship.validate({**GOOD, "parcel": {"kind": "box", "size": 2}})
    assert kwargs["items"] == [Item(sku="a")] and kwargs["parcel"] == Box(size=2.0)
    # the one Struct parameter is the root: closed too
    assert relocate.parameters["additionalProperties"] is False
    with pytest.raises(ToolArgumentsError) as info:
        relocate.validate({"street": "x", "town": "y"})
    assert info.value.detail == "Object contains unknown field `town`"
    assert str(info.value).endswith("Allowed parameters at `$`: street, city.")
    assert relocate.validate({"street": "x"}) == {"address": Address(street="x")}


def test_a_schema_tool_refuses_only_the_keys_its_schema_refuses() -> None:
    a = {"type": "object", "properties": {"b": {"type": "number"}}}
    closed = {**a, "additionalProperties": False}
    schema = {"type": "object", "properties": {"a": a, "closed": closed}}
    echo = ToolRegistry().add_schema("echo", "Echo.", schema, fn=lambda **kw: kw)
    assert echo.validate({"a": {"b": 1, "c": 2}, "d": 3})["d"] == 3
    with pytest.raises(ToolArgumentsError, match="unknown field `c` - at `\\$.closed`"):
        echo.validate({"closed": {"b": 1, "c": 2}})


@tool
def scale(factor: float, points: list[float], limits: dict[str, float] | None = None) -> str:
    """Scale points."""
    return "ok"


@pytest.mark.parametrize(
    ("arguments", "detail"),
    [
        ({"factor": "nan", "points": []}, "got `nan` - at `$.factor`"),
        ({"factor": "-Infinity", "points": []}, "got `-Infinity` - at `$.factor`"),
        ({"factor": "1", "points": ["2", "inf"]}, "got `inf` - at `$.points[1]`"),
        ({"factor": 1, "points": [], "limits": {"x": "NaN"}}, "got `NaN` - at `$.limits[...]`"),
        ({"factor": math.nan, "points": []}, "got `nan` - at `$.factor`"),
    ],
)
def test_a_number_that_is_not_finite_is_refused(arguments: dict[str, Any], detail: str) -> None:
    """Lenient validation (am_xml's values are text) read "nan", "inf" and
    "infinity" as NaN and infinity (msgspec does, while it refuses "1e999" as out
    of range), and the tool got them: JSON has no such number, no schema can allow
    one, and a result or a proxied call writes it back as null."""
    with pytest.raises(ToolArgumentsError) as info:
        scale.validate(arguments, lenient=True)
    assert info.value.detail == "Expected a finite number, " + detail
    message = ToolRegistry([scale]).check_arguments("scale", arguments, lenient=True)
    assert message is not None and detail in message
    with pytest.raises(ToolArgumentsError) as info:
        scale.validate({"factor": "inf", "points": []}, lenient=True)
    assert str(info.value).endswith('`$.factor` must match this schema: {"type": "number"}')
    assert scale.validate({"factor": "1e3", "points": ["-2.5"]}, lenient=True) == {
        "factor": 1000.0, "points": [-2.5], "limits": None
    }


def test_the_first_number_that_is_not_finite_is_the_one_named() -> None:
    """Fields, array items and a free-form object's values alike are looked at in
    the order they were written, as msgspec names the first error it meets: of a
    free-form object's values, the last one was named."""
    limits = {"x": "1", "y": "NaN", "z": "inf"}
    with pytest.raises(ToolArgumentsError) as info:
        scale.validate({"factor": 1, "points": [], "limits": limits}, lenient=True)
    assert info.value.detail == "Expected a finite number, got `NaN` - at `$.limits[...]`"
    with pytest.raises(ToolArgumentsError) as info:
        scale.validate({"factor": 1, "points": ["2", "nan", "inf"]}, lenient=True)
    assert info.value.detail == "Expected a finite number, got `nan` - at `$.points[1]`"


@tool
def visit(place: Address | None = None, stops: list[Address] | None = None) -> str:
    """Visit a place."""
    return "ok"


@pytest.mark.parametrize(
    ("arguments", "hint"),
    [
        ({"place": {"street": 5}}, '`$.place.street` must match this schema: {"type": "string"}'),
        ({"place": {}}, '`$.place.street` must match this schema: {"type": "string"}'),
        ({"place": {"street": "x", "zip": 1}}, "Allowed parameters at `$.place`: street, city."),
        ({"stops": [{"street": []}]}, '`$.stops[0].street` must match this schema: {"type"'),
        ({"stops": [{"street": "x", "zip": 1}]}, "Allowed parameters at `$.stops[0]`: street,"),
    ],
)
def test_an_error_inside_an_optional_type_shows_the_schema_there(
    arguments: dict[str, Any], hint: str
) -> None:
    """Inside ``Address | None`` (``anyOf``) the path was not followed: no schema was
    shown, and an unknown field was answered 'Allowed parameters at `$.place`: (none)'."""
    with pytest.raises(ToolArgumentsError) as info:
        visit.validate(arguments)
    assert hint in str(info.value)


def test_a_schema_tool_gets_plain_json_with_every_key_its_schema_allows() -> None:
    """Only the top level kept the keys a schema tool's schema does not declare
    (an MCP server's tool is called with what is left), and an object under
    additionalProperties reached the function as one of the Structs it was
    converted into (``object(f0=1)``), which no server can be sent."""
    item = {"type": "object", "properties": {"a": {"type": "integer"}}}
    schema = {
        "type": "object",
        "properties": {"p": item, "items": {"type": "array", "items": item}},
        "additionalProperties": item,
    }
    echo = ToolRegistry().add_schema("echo", "Echo.", schema, fn=lambda **kw: kw)
    arguments = {"p": {"a": "1", "x": 2}, "items": [{"a": "2", "y": []}], "k": {"a": 3, "z": 4}}
    assert echo.validate(arguments, lenient=True) == {
        "p": {"a": 1, "x": 2}, "items": [{"a": 2, "y": []}], "k": {"a": 3, "z": 4}
    }
    free = ToolRegistry().add_schema(
        "free", "Free.", {"type": "object", "additionalProperties": item}
    )
    assert free.validate({"k": {"a": 1}}) == {"k": {"a": 1}}


def test_a_mutable_default_is_stated_in_the_schema() -> None:
    """A non-empty list or dict default (copied per call) was left out of the
    schema, so the model was not told what leaving the parameter out means."""

    @tool
    def tag(note: str, tags: list[str] = ["todo"], meta: dict[str, int] = {"v": 1}) -> str:  # noqa: B006
        """Tag a note."""
        return ",".join(tags)

    props = tag.parameters["properties"]
    assert props["tags"] == {"type": "array", "items": {"type": "string"}, "default": ["todo"]}
    assert props["meta"]["default"] == {"v": 1}
    kwargs = tag.validate({"note": "n"})
    kwargs["tags"].append("x")  # still a copy per call
    assert tag.validate({"note": "n"})["tags"] == ["todo"]


class _Box(msgspec.Struct, forbid_unknown_fields=True):
    side: int
    marks: list[int] = []


@pytest.mark.parametrize("lenient", [False, True])
def test_a_whole_float_is_an_integer_at_any_depth(lenient: bool) -> None:
    """``{"n": 5.0}`` for ``n: int`` was refused ("Expected `int`, got `float`")
    in strict validation, though JSON Schema counts 5.0 as an integer and models
    write it; lenient validation refused it in an integer ``Literal``. It is now
    the integer, in a nested Struct, a list, an ``int | None`` and a ``Literal``;
    a float parameter keeps its float, and the caller's dict is not changed."""

    @tool
    def draw(
        n: int, box: _Box, pick: Literal[1, 2] = 1, limit: int | None = None, scale: float = 1
    ) -> str:
        """Draw."""
        return ""

    arguments: dict[str, Any] = {
        "n": 5.0,
        "box": {"side": 2.0, "marks": [1.0, 2]},
        "pick": 2.0,
        "limit": -3.0,
        "scale": 2.0,
    }
    kwargs = draw.validate(arguments, lenient=lenient)
    assert kwargs == {
        "n": 5, "box": _Box(side=2, marks=[1, 2]), "pick": 2, "limit": -3, "scale": 2.0
    }
    assert [type(v) for v in (kwargs["n"], kwargs["box"].side, kwargs["pick"])] == [int] * 3
    assert type(kwargs["scale"]) is float
    assert arguments["n"] == 5.0 and type(arguments["box"]["marks"][0]) is float


@pytest.mark.parametrize("lenient", [False, True])
def test_a_fractional_float_is_still_refused_where_an_integer_is_expected(lenient: bool) -> None:
    @tool
    def draw(n: int, box: _Box) -> str:
        """Draw."""
        return ""

    with pytest.raises(ToolArgumentsError) as info:
        draw.validate({"n": 5.0, "box": {"side": 1, "marks": [1.0, 2.5]}}, lenient=lenient)
    assert info.value.detail == "Expected `int`, got `float` - at `$.box.marks[1]`"
    assert str(info.value).endswith('must match this schema: {"type": "integer"}')
    with pytest.raises(ToolArgumentsError) as info:
        draw.validate({"n": 5.5, "box": {"side": 1}}, lenient=lenient)
    assert info.value.detail == "Expected `int`, got `float` - at `$.n`"


def test_a_whole_float_is_an_integer_for_a_schema_tool_and_the_parser() -> None:
    """A schema tool (MCP) with ``"type": "integer"`` takes 5.0 as 5, strict (the
    parser's check, ``check_arguments``) and lenient alike; its function gets
    ``5``, and an undeclared key keeps what was sent. The parser's strict check
    and the executor agree: a hermes call with 5.0 ends as a call, 5.5 as an error."""
    registry = ToolRegistry()
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 0},
            "ids": {"type": "array", "items": {"type": ["integer", "null"]}},
            "mode": {"enum": [1, 2]},
        },
        "required": ["n"],
    }
    mcp_tool = registry.add_schema("count", "Count.", schema)
    sent = {"n": 5.0, "ids": [1.0, None], "mode": 2.0, "other": 1.0}
    for lenient in (False, True):
        kwargs = mcp_tool.validate(sent, lenient=lenient)
        assert kwargs == {"n": 5, "ids": [1, None], "mode": 2, "other": 1.0}
        assert type(kwargs["n"]) is int and type(kwargs["other"]) is float
    assert registry.check_arguments("count", sent) is None
    assert registry.check_arguments("count", {"n": -1.0}) == (
        "Invalid arguments for tool `count`: Expected `int` >= 0 - at `$.n`. "
        '`$.n` must match this schema: {"type": "integer", "minimum": 0}'
    )
    assert "Expected `int`, got `float` - at `$.n`" in str(
        registry.check_arguments("count", {"n": 5.5})
    )
    parser = Parser("hermes", registry)
    text = '<tool_call>{"name": "count", "arguments": {"n": 5.0}}</tool_call>'
    events = [*parser.feed(text), *parser.end()]
    ends = [e for e in events if isinstance(e, CallEnd)]
    assert len(ends) == 1 and ends[0].arguments == {"n": 5.0}


def test_a_type_without_integers_has_no_repair() -> None:
    """The repair costs nothing for tools with no integer in them, and nothing
    for valid arguments: it runs only after a conversion failed."""

    @tool
    def say(text: str, loud: float = 1.0) -> str:
        """Say."""
        return text

    assert say._integral is None
    with pytest.raises(ToolArgumentsError):
        say.validate({"text": 5.0})

    @tool
    def repeat(times: int) -> str:
        """Repeat."""
        return ""

    repair = repeat._integral
    assert repair is not None
    calls: list[Any] = []

    def counted(raw: Any) -> Any:
        calls.append(raw)
        return repair(raw)

    repeat._integral = counted
    assert repeat.validate({"times": 3}) == {"times": 3} and calls == []
    assert repeat.validate({"times": 3.0}) == {"times": 3} and len(calls) == 1


def test_a_dict_with_int_keys_takes_the_string_keys_json_has() -> None:
    """JSON keys are strings: a strict check (the parser's, for every JSON dialect)
    refused ``{"1": "a"}`` for a ``dict[int, str]`` ("Expected `int`, got `str` -
    at `key` in `$.names`"), so such a tool could never be called there."""

    @tool
    def label(names: dict[int, str]) -> str:
        """Label ids."""
        return repr(names)

    for lenient in (False, True):
        assert label.validate({"names": {"1": "a", "22": "b"}}, lenient=lenient) == {
            "names": {1: "a", 22: "b"}
        }
    with pytest.raises(ToolArgumentsError, match="at `key` in `\\$.names`"):
        label.validate({"names": {"x": "a"}})
    parser = Parser("hermes", ToolRegistry([label]))
    text = '<tool_call>{"name": "label", "arguments": {"names": {"1": "a"}}}</tool_call>'
    events = [*parser.feed(text), *parser.end()]
    assert [type(e).__name__ for e in events if isinstance(e, CallEnd)] == ["CallEnd"]


@dataclasses.dataclass
class _Options:
    depth: int = 1
    seen: list[str] = dataclasses.field(default_factory=list)


class _Frozen(msgspec.Struct, frozen=True):
    depth: int = 1


_SHARED_OPTIONS = _Options()
_FROZEN = _Frozen()


def test_a_mutable_default_of_any_type_is_a_copy_per_call() -> None:
    """A dataclass instance as a default (msgspec takes it as is) was one object
    for every call: what one call did to it reached the next (``seen`` grew with
    each). It is copied per call now, like a list or a Struct; the schema still
    states it. An immutable default (a frozen Struct) is not copied."""

    @tool
    def crawl(url: str, options: _Options = _SHARED_OPTIONS, frozen: _Frozen = _FROZEN) -> int:
        """Crawl a site."""
        options.seen.append(url)
        return len(options.seen)

    assert crawl.parameters["properties"]["options"]["default"] == {"depth": 1, "seen": []}
    assert [crawl.invoke(crawl.validate({"url": u})) for u in ("a", "b")] == [1, 1]
    assert _SHARED_OPTIONS.seen == []
    assert crawl.validate({"url": "a"})["frozen"] is _FROZEN
