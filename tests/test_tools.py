"""Typed tools: schema from annotations, validation at the boundary, the allowlist."""

from __future__ import annotations

import datetime
import socket
from collections.abc import Callable
from typing import Annotated, Any, Literal

import msgspec
import pytest

from streamtools.errors import ToolDefinitionError, UsageError
from streamtools.events import CallEnd, CallError
from streamtools.model import ToolSpec
from streamtools.parser import Parser
from streamtools.prompts import get_renderer
from streamtools.results import format_result
from streamtools.tools import Tool, ToolArgumentsError, ToolRegistry, tool
from streamtools.transcript import ToolCall

pytestmark = pytest.mark.anyio


class Location(msgspec.Struct):
    """A place on Earth."""

    city: str
    country: str = "FR"


@tool(name="weather.v1.forecast")
async def forecast(
    loc: Location,
    days: int = 3,
    units: Literal["c", "f"] = "c",
    tags: list[str] = ["x"],  # noqa: B006 - copied per call by the tool
) -> str:
    """Get the weather forecast.

    Uses the national service.

    Args:
        loc: Where to forecast.
        days (int): How many days
            ahead.

    Returns:
        A summary.
    """
    return f"{loc.city}:{days}:{units}:{','.join(tags)}"


class Query(msgspec.Struct):
    """Search arguments."""

    q: Annotated[str, msgspec.Meta(description="What to look for")]
    limit: int = 5


@tool
def search(args: Query) -> list[str]:
    """Search the notes.

    Parameters
    ----------
    args : Query
        Ignored here: the Struct describes itself.
    """
    return [args.q] * args.limit


def test_function_tool_schema() -> None:
    assert isinstance(forecast, Tool)
    assert forecast.name == "weather.v1.forecast"
    assert forecast.is_async is True
    assert forecast.description == "Get the weather forecast."
    p = forecast.parameters
    assert "$ref" not in p
    assert p["type"] == "object"
    assert p["required"] == ["loc"]
    assert p["properties"]["loc"] == {
        "$ref": "#/$defs/Location",
        "description": "Where to forecast.",
    }
    assert p["properties"]["days"] == {
        "type": "integer",
        "default": 3,
        "description": "How many days ahead.",
    }
    assert p["properties"]["units"]["enum"] == ["c", "f"]
    assert p["$defs"]["Location"]["required"] == ["city"]
    assert p["additionalProperties"] is False
    assert forecast.spec() == ToolSpec(
        name="weather.v1.forecast", description="Get the weather forecast.", parameters=p
    )


def test_struct_argument_tool() -> None:
    assert search.is_async is False
    assert search.description == "Search the notes."
    assert search.parameters["properties"]["q"] == {
        "type": "string",
        "description": "What to look for",
    }
    assert search.parameters["required"] == ["q"]
    kwargs = search.validate({"q": "hi", "limit": 2})
    assert kwargs == {"args": Query(q="hi", limit=2)}
    assert search.invoke(kwargs) == ["hi", "hi"]
    assert search(Query(q="a", limit=1)) == ["a"]  # the Tool still calls like the function


async def test_async_invoke_and_defaults() -> None:
    kwargs = forecast.validate({"loc": {"city": "Paris"}})
    assert kwargs == {"loc": Location(city="Paris"), "days": 3, "units": "c", "tags": ["x"]}
    assert await forecast.invoke(kwargs) == "Paris:3:c:x"
    # a mutable default is copied per call, never shared
    forecast.validate({"loc": {"city": "P"}})["tags"].append("y")
    assert forecast.validate({"loc": {"city": "P"}})["tags"] == ["x"]


def test_lenient_converts_strings_strict_does_not() -> None:
    kwargs = forecast.validate({"loc": {"city": "Oslo"}, "days": "5"}, lenient=True)
    assert kwargs["days"] == 5
    with pytest.raises(ToolArgumentsError) as info:
        forecast.validate({"loc": {"city": "Oslo"}, "days": "5"})
    assert info.value.path == "$.days"
    assert info.value.detail == "Expected `int`, got `str` - at `$.days`"
    assert str(info.value) == (
        "Invalid arguments for tool `weather.v1.forecast`: Expected `int`, got `str` - at "
        '`$.days`. `$.days` must match this schema: {"type": "integer", "default": 3, '
        '"description": "How many days ahead."}'
    )


def test_errors_name_the_path_and_show_the_schema() -> None:
    with pytest.raises(ToolArgumentsError) as info:
        forecast.validate({"loc": {"country": "NO"}})
    assert info.value.path == "$.loc.city"
    assert "missing required field `city`" in str(info.value)
    assert '`$.loc.city` must match this schema: {"type": "string"}' in str(info.value)
    with pytest.raises(ToolArgumentsError) as info:
        forecast.validate({"days": 1})
    assert info.value.path == "$.loc"
    assert '"required": ["city"]' in str(info.value)  # the $ref is shown resolved
    with pytest.raises(ToolArgumentsError) as info:
        forecast.validate({"loc": {"city": "x"}, "dayz": 1})
    assert str(info.value).endswith("Allowed parameters at `$`: loc, days, units, tags.")
    with pytest.raises(ToolArgumentsError) as info:
        forecast.validate({"loc": {"city": "x"}, "units": "kelvin"})
    assert "Invalid enum value 'kelvin' - at `$.units`" in str(info.value)


def test_arguments_that_fail_never_reach_the_function() -> None:
    seen: list[int] = []

    @tool
    def record(n: int) -> None:
        """Record n."""
        seen.append(n)

    reg = ToolRegistry([record])
    assert reg.check_arguments("record", {"n": "x"}, lenient=True) is not None
    with pytest.raises(ToolArgumentsError):
        record.validate({"n": "x"}, lenient=True)
    assert seen == []


def test_unsupported_annotations_fail_at_registration() -> None:
    with pytest.raises(ToolDefinitionError, match="'bad'.*unsupported annotation.*socket"):

        @tool
        def bad(s: socket.socket) -> None:
            """Nope."""

    with pytest.raises(ToolDefinitionError, match="parameter 'x' has no type annotation"):
        tool(name="ident")(lambda x: x)
    with pytest.raises(ToolDefinitionError, match="tools take named parameters only"):

        @tool
        def star(*items: int) -> None:
            """Nope."""

    with pytest.raises(ToolDefinitionError, match="invalid tool name"):
        tool(name="has space")(forecast.fn)  # type: ignore[type-var]
    with pytest.raises(ToolDefinitionError, match="invalid tool name"):
        tool(name="-x")(forecast.fn)  # type: ignore[type-var]


@pytest.mark.parametrize("dialect", ["am_xml", "json_action", "hermes", "inline_json",
                                     "json_object", "command"])
def test_a_tool_name_may_begin_with_a_digit(dialect: str) -> None:
    """MCP servers and both APIs take ``2fa_code``; the registry refused it, so
    an MCP server's tool was left out with a warning. Its calls read back in
    every dialect."""
    registry = ToolRegistry()
    registry.add_schema("2fa_code", "A code.", {"type": "object", "properties": {}}, lambda: 1)
    renderer = get_renderer(dialect)
    assert renderer.name_problem("2fa_code") is None
    text = renderer.render_call(ToolCall(id="c", name="2fa_code", arguments={"n": "x"}))
    parser = Parser(dialect, registry)
    [end] = [e for e in parser.feed(text) + parser.end() if isinstance(e, CallEnd | CallError)]
    assert isinstance(end, CallEnd) and end.name == "2fa_code" and end.arguments == {"n": "x"}


def test_optional_and_rich_types() -> None:
    @tool
    def book(day: datetime.date, note: str | None = None, seats: int = 1) -> str:
        """Book a table."""
        return f"{day}"

    assert book.parameters["properties"]["day"] == {"type": "string", "format": "date"}
    assert book.parameters["required"] == ["day"]
    assert book.validate({"day": "2026-11-21"}) == {
        "day": datetime.date(2026, 11, 21),
        "note": None,
        "seats": 1,
    }


def test_registry_is_an_allowlist() -> None:
    reg = ToolRegistry([forecast, search])
    assert list(reg) == ["weather.v1.forecast", "search"]
    assert len(reg) == 2 and "search" in reg and "other" not in reg
    assert reg.get("search") is search
    assert reg.schema("search") == search.parameters and reg.schema("x") is None
    assert reg.specs() == [forecast.spec(), search.spec()]
    assert reg.check_arguments("search", {"q": "a"}) is None
    assert reg.unknown_tool_message("rm") == (
        "Unknown tool `rm`. The only tools you may call are: `weather.v1.forecast`, `search`."
    )
    assert reg.check_arguments("rm", {}) == reg.unknown_tool_message("rm")
    sub = reg.subset(["search", "missing"])
    assert list(sub) == ["search"]
    assert "weather" not in sub.unknown_tool_message("x")
    assert "no tools are available" in ToolRegistry().unknown_tool_message("x")
    with pytest.raises(ToolDefinitionError, match="already registered"):
        reg.add_schema("search", "Another search", {})


def test_remove_takes_a_tool_out_and_frees_its_name() -> None:
    reg = ToolRegistry([forecast, search])
    assert reg.remove("search") is search and reg.remove("search") is None
    assert list(reg) == ["weather.v1.forecast"] and reg.specs() == [forecast.spec()]
    assert reg.unknown_tool_message("search").endswith("are: `weather.v1.forecast`.")
    changed = reg.add_schema("search", "Search, version 2", {"type": "object"})
    assert reg.get("search") is changed and changed.description == "Search, version 2"


def test_plain_function_is_decorated_on_add() -> None:
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    reg = ToolRegistry([add])
    t = reg.get("add")
    assert t is not None and t.description == "Add two integers."
    assert t.invoke(t.validate({"a": "2", "b": 3}, lenient=True)) == 5


def test_add_schema_tools() -> None:
    reg = ToolRegistry()
    calls: list[dict[str, Any]] = []
    schema = {
        "type": "object",
        "properties": {
            "my-key": {"type": "integer", "minimum": 0},
            "mode": {"enum": ["fast", "slow"]},
            "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
            "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["my-key"],
        "$defs": {"Item": {"type": "object", "properties": {"id": {"type": "integer"}}}},
    }
    t = reg.add_schema("mcp.files.read", "Read a file", schema, lambda **kw: calls.append(kw))
    assert reg.schema("mcp.files.read") == schema
    assert t.validate({"my-key": "3", "extra": True}, lenient=True) == {"my-key": 3, "extra": True}
    assert t.validate({"my-key": 1, "items": [{"id": 2}]}) == {"my-key": 1, "items": [{"id": 2}]}
    assert reg.check_arguments("mcp.files.read", {"my-key": -1}) == (
        "Invalid arguments for tool `mcp.files.read`: Expected `int` >= 0 - at `$.my-key`. "
        '`$.my-key` must match this schema: {"type": "integer", "minimum": 0}'
    )
    msg = reg.check_arguments("mcp.files.read", {"my-key": 1, "items": [{"id": "x"}]})
    assert msg is not None and "`$.items[0].id`" in msg
    assert reg.check_arguments("mcp.files.read", {"my-key": 1, "mode": "medium"}) is not None
    t.invoke(t.validate({"my-key": 4}))
    assert calls == [{"my-key": 4}]
    bare = reg.add_schema("noop", "No arguments", {})
    assert bare.parameters == {"type": "object", "properties": {}}
    with pytest.raises(UsageError, match="schema-only"):
        bare.invoke({})
    with pytest.raises(ToolDefinitionError):
        reg.add_schema("arr", "x", {"type": "array"})


def test_format_result() -> None:
    assert format_result("plain <b>") == "plain <b>"
    assert format_result({"b": 1, "a": [1, 2]}) == '{"a":[1,2],"b":1}'
    assert format_result(None) == "null"
    assert format_result(Location(city="Oslo")) == '{"city":"Oslo","country":"FR"}'
    assert format_result({"when": object}).startswith('{"when":"<class')
    assert format_result("é".encode()) == "é"
    assert format_result(b"\xff") == '"/w=="'  # binary: base64

    class Model:
        def model_dump(self, *, mode: str) -> dict[str, str]:
            return {"mode": mode}

    assert format_result([Model()]) == '[{"mode":"json"}]'


def test_format_result_non_str_keys_and_mixed_sets() -> None:
    # Keys become JSON's own spelling of the scalar; str(k) for anything else.
    assert format_result({2024: 1.5, 1999: 2}) == '{"1999":2,"2024":1.5}'
    assert format_result({"a": {True: None, None: 1}}) == '{"a":{"null":1,"true":null}}'
    assert format_result({(1, 2): "pair"}) == '{"(1, 2)":"pair"}'
    # A set of mixed types cannot be sorted; it is ordered by each item's JSON instead.
    assert format_result({1, "a", 2.5}) == '["a",1,2.5]'
    assert format_result([{3: {"x", 2}}]) == '[{"3":["x",2]}]'
    assert format_result({1: {10, 9}}) == '{"1":[9,10]}'  # sortable sets sort as before
    # What msgspec cannot encode at all becomes its str() (never an exception).
    text = format_result({1: object()})
    assert text.startswith('{"1":"<object object at')
    assert format_result({"b": 1, "a": 2}) == '{"a":2,"b":1}'  # fast path unchanged


def test_format_result_falls_back_to_repr_when_str_fails() -> None:
    class Opaque:
        def __str__(self) -> str:
            raise RuntimeError("no str")

        def __repr__(self) -> str:
            return "Opaque()"

    assert format_result({1: Opaque()}) == '{"1":"Opaque()"}'


def test_numpy_docstring_and_no_parameters() -> None:
    @tool
    def scale(a: int, b: str = "x") -> None:
        """Scale a thing
        by a factor.

        Parameters
        ----------
        a : int
            The first
            thing.
        b : str, optional
            Second.

        Returns
        -------
        None
            Nothing at all.
        """

    assert scale.description == "Scale a thing by a factor."
    props = scale.parameters["properties"]
    assert props["a"]["description"] == "The first thing."
    assert props["b"]["description"] == "Second."

    @tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    assert ping.parameters == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }
    assert ping.invoke(ping.validate({})) == "pong"


class _Checked(msgspec.Struct):
    x: int

    def __post_init__(self) -> None:
        assert self.x >= 0, "x must not be negative"


def test_a_types_own_check_is_an_arguments_error_not_a_crash() -> None:
    """A Struct's ``__post_init__`` may raise anything (an ``assert`` here); the
    parser checks arguments as calls close, so this must not escape ``feed``."""
    from streamtools.events import CallError
    from streamtools.parser import Parser

    @tool
    def plot(p: _Checked) -> int:
        """Plot a point."""
        return p.x

    with pytest.raises(ToolArgumentsError, match="AssertionError: x must not be negative"):
        plot.validate({"x": -1})
    parser = Parser("am_xml", ToolRegistry([plot]))
    events = parser.feed('<am:tool_call name="plot"><x>-1</x></am:tool_call>') + parser.end()
    (error,) = [e for e in events if isinstance(e, CallError)]
    assert error.reason == "invalid_arguments" and "AssertionError" in error.message


def test_a_struct_declared_in_the_function_that_declares_the_tool() -> None:
    """This module has ``from __future__ import annotations``: the annotation is
    the string ``"Point"``, a class only the enclosing function knows. It was a
    ``ToolDefinitionError`` (name 'Point' is not defined); the callers' scopes
    now resolve it, when the tool is declared there or registered from there."""

    class Point(msgspec.Struct):
        x: int
        y: int = 0

    @tool
    def norm(p: Point, scale: int = 1) -> int:
        """Manhattan norm of a point."""
        return (abs(p.x) + abs(p.y)) * scale

    assert norm.invoke(norm.validate({"p": {"x": "3", "y": -4}}, lenient=True)) == 7
    assert norm.parameters["properties"]["p"] == {"$ref": "#/$defs/Point"}

    def shift(p: Point) -> int:
        """Shift a point."""
        return p.x + 1

    registry = ToolRegistry([shift])  # decorated inside the registry
    found = registry.get("shift")
    assert found is not None and found.invoke(found.validate({"x": 1})) == 2


class _Greeter:
    """Greet someone."""

    def __init__(self, greeting: str) -> None:
        self.greeting = greeting

    def __call__(self, name: str, times: int = 1) -> str:
        return " ".join([f"{self.greeting}, {name}"] * times)


class _Annotated:
    label: str  # a class annotation, not a parameter

    def __call__(self, n: int) -> int:
        """Double a number."""
        return n * 2


def test_callable_objects_and_partials_are_tools() -> None:
    """A callable object was refused ('is not a module, class, method, or
    function'), or, when its class had annotations of its own, read those as its
    parameters' ('parameter n has no type annotation'); a ``functools.partial``
    was refused too, and without ``name=`` had the name ''. Their parameters now
    come from ``__call__`` / the wrapped function, the name from the class /
    function, the description from the docstring that describes them."""
    import functools

    greeter = tool(_Greeter("Hello"))
    assert greeter.name == "_Greeter" and greeter.description == "Greet someone."
    assert greeter.parameters["required"] == ["name"]
    assert greeter.invoke(greeter.validate({"name": "Ada", "times": 2})) == (
        "Hello, Ada Hello, Ada"
    )

    doubler = tool(name="double")(_Annotated())
    assert list(doubler.parameters["properties"]) == ["n"]
    assert doubler.description == "Double a number."
    assert doubler.invoke(doubler.validate({"n": 4})) == 8

    def power(base: int, exponent: int) -> int:
        """Raise a number to a power.

        Args:
            base: The number.
            exponent: The power.
        """
        return int(base**exponent)

    square = tool(functools.partial(power, exponent=2))
    assert square.name == "power"
    assert square.description == "Raise a number to a power."
    assert square.parameters["properties"]["base"]["description"] == "The number."
    assert square.invoke(square.validate({"base": 5})) == 25
    cube = tool(name="three_to_the")(functools.partial(power, 3))
    assert list(cube.parameters["properties"]) == ["exponent"]
    assert cube.invoke(cube.validate({"exponent": 2})) == 9


def test_sphinx_fields_and_keyword_sections_describe_parameters() -> None:
    """Sphinx fields were not read, and with no blank line before them they
    became part of the description (``'Book a room. :param room: …'``); a
    Google ``Keyword Args:`` section, or a ``Returns:`` right under the
    summary, was read the same way."""

    @tool
    def book(room: str, hours: int = 1, *, note: str = "") -> str:
        """Book a room.
        :param room: The room's name,
            as on its door.
        :param int hours: How long.
        :returns: the booking id
        """
        return room

    assert book.description == "Book a room."
    props = book.parameters["properties"]
    assert props["room"]["description"] == "The room's name, as on its door."
    assert props["hours"]["description"] == "How long."
    assert "description" not in props["note"]

    @tool
    def send(to: str, *, cc: str = "", urgent: bool = False) -> None:
        """Send a message.
        Args:
            to: Who gets it.

        Keyword Args:
            cc: Who gets a copy.
            urgent (bool): Flag it.

        Returns:
            Nothing.
        """

    assert send.description == "Send a message."
    props = send.parameters["properties"]
    assert [props[k].get("description") for k in ("to", "cc", "urgent")] == [
        "Who gets it.",
        "Who gets a copy.",
        "Flag it.",
    ]


def _make_norm() -> Callable[..., int]:
    """A tool whose annotation names a Struct of this factory's own, returned undecorated."""

    class Point(msgspec.Struct):
        x: int

    def norm(p: Point) -> int:
        """The x of a point."""
        return p.x

    return norm


def test_a_callers_unrelated_local_does_not_resolve_an_annotation() -> None:
    """The string annotation ``"Point"`` of a tool made by a factory that has
    returned was looked up in any caller's locals: registered where another
    ``Point`` (``name: str``) was a local, the tool took that one's schema and
    refused ``{"p": {"x": 3}}``. Only the scopes that enclose the tool's
    definition are consulted now; none is running, so the name is undefined."""

    class Point(msgspec.Struct):
        name: str

    assert Point(name="unrelated").name == "unrelated"
    with pytest.raises(ToolDefinitionError, match="name 'Point' is not defined"):
        tool(_make_norm())


def test_a_struct_of_an_enclosing_scope_and_of_the_defining_one() -> None:
    class Outer(msgspec.Struct):
        x: int

    def declare() -> Tool:
        class Inner(msgspec.Struct):
            y: int

        def add(a: Outer, b: Inner) -> int:
            """Add."""
            return a.x + b.y

        return tool(add)

    added = declare()
    assert added.invoke(added.validate({"a": {"x": 1}, "b": {"y": 2}})) == 3


def test_tool_takes_a_function_with_options() -> None:
    """``tool(fn, name=...)`` works at run time and, since its overload was
    added, type-checks (``mypy --strict`` over the tests, in test_static)."""

    def add(a: int, b: int) -> int:
        return a + b

    named: Tool = tool(add, name="math.add", description="Add two numbers.")
    assert (named.name, named.description) == ("math.add", "Add two numbers.")
    assert named.invoke(named.validate({"a": 1, "b": 2})) == 3


def test_format_result_spells_infinities_and_nan_instead_of_null() -> None:
    """JSON has no NaN or infinity, and msgspec writes them as ``null``: a
    calculator's ``1e308 * 10`` reached the model as ``null``, a mean over no
    data as nothing at all. They are now spelled as JavaScript and Python's
    ``json`` spell them: bare for a number alone, as strings inside JSON."""
    import math
    from dataclasses import dataclass

    @dataclass
    class Stats:
        mean: float
        n: int | None

    assert format_result(math.inf) == "Infinity"
    assert format_result(-math.inf) == "-Infinity"
    assert format_result(math.nan) == "NaN"
    assert format_result({"lo": -math.inf, "none": None, "x": 1.5}) == (
        '{"lo":"-Infinity","none":null,"x":1.5}'
    )
    assert format_result([Stats(mean=math.nan, n=None)]) == '[{"mean":"NaN","n":null}]'
    assert format_result({2024: math.inf}) == '{"2024":"Infinity"}'  # rebuilt keys too
    assert format_result({"n": None, "x": 0.5}) == '{"n":null,"x":0.5}'  # nulls stay null


def test_format_result_writes_ints_over_python_s_digit_limit_in_full() -> None:
    """``str()`` refuses an int of over 4,300 digits (``sys.set_int_max_str_digits``),
    and so did msgspec: a calculator's ``factorial(2000)`` was reported as an
    unencodable result. Such an int is now written out, as a JSON number, alone,
    nested or as a key, without lifting the process-wide limit."""
    import sys
    from enum import IntEnum

    limit = sys.get_int_max_str_digits()
    big = 10**5000
    assert format_result(big) == "1" + "0" * 5000
    assert format_result(-(big - 1)) == "-" + "9" * 5000
    assert format_result({"n": [big, 1]}) == '{"n":[1' + "0" * 5000 + ",1]}"
    assert format_result({big: "key"}) == '{"1' + "0" * 5000 + '":"key"}'
    assert format_result(7**20000)[-6:] == f"{7**20000 % 10**6:06d}"
    assert len(format_result(7**20000)) == 16902  # 20000 * log10(7), rounded up

    class Huge(IntEnum):
        ONE = 1
        BIG = 10**4400

    assert format_result([Huge.BIG]) == "[1" + "0" * 4400 + "]"
    assert sys.get_int_max_str_digits() == limit


def test_parameters_named_with_two_leading_underscores() -> None:
    """``__x`` made ``tool`` fail with msgspec's "RuntimeError: Failed to get offset
    for '__x'" (the name is mangled in the Struct class it defines), and a
    parameter named ``__struct_fields__`` hid msgspec's own attribute, so every
    call of the tool raised TypeError out of ``validate``. Both keep their names
    in the schema and reach the function."""

    def f(__x: int = 1, x_: int = 2, __struct_fields__: str = "a") -> str:
        return f"{__x} {x_} {__struct_fields__}"

    made = tool(f)
    assert list(made.parameters["properties"]) == ["__x", "x_", "__struct_fields__"]
    kwargs = made.validate({"__x": 5, "__struct_fields__": "z"})
    assert kwargs == {"__x": 5, "x_": 2, "__struct_fields__": "z"}
    assert made.invoke(kwargs) == "5 2 z"
    with pytest.raises(ToolArgumentsError, match=r"at `\$\.__x`"):
        made.validate({"__x": "five"})


def test_an_unknown_tool_close_to_a_known_one_is_named() -> None:
    """A misspelt or miscased name (``Add``, ``get_wether``) was told only the list
    of allowed names; the one it most likely meant is named now."""

    @tool
    def get_weather(city: str) -> str:
        """Weather."""
        return city

    registry = ToolRegistry([get_weather, search])
    assert registry.unknown_tool_message("get_wether") == (
        "Unknown tool `get_wether`. Did you mean `get_weather`? "
        "The only tools you may call are: `get_weather`, `search`."
    )
    assert "Did you mean `search`?" in registry.unknown_tool_message("Search")
    assert "Did you mean" not in registry.unknown_tool_message("rm_rf")
