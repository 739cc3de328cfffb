"""A user's tools, as the README defines them: sync and async, defaults, a Struct."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, assert_type

import msgspec

from streamtools import FunctionTool, Tool, ToolRegistry, tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def get_weather(city: str, days: int = 3, units: Literal["c", "f"] = "c") -> str:
    """Get the weather forecast for a city."""
    return f"{city}: sunny for {days} days in {units}"


class Query(msgspec.Struct):
    """What to search for."""

    text: str
    limit: int = 5


@tool(name="kom.memory.v1.search_memory", timeout=10)
async def search_memory(query: Query) -> list[str]:
    """Search the long-term memory."""
    return [query.text] * query.limit


def plain(x: float) -> float:
    """Not decorated."""
    return x


wrapped = tool(plain, name="plain_tool")

tools = ToolRegistry([add, get_weather, search_memory])
tools.add(plain)

# calling a tool calls the function, with its own signature
assert_type(add(2, 3), int)
assert_type(get_weather("Oslo"), str)
assert_type(get_weather("Oslo", days=2, units="f"), str)
assert_type(wrapped(1.5), float)
# options given to a tool already made keep its type
assert_type(tool(add, repeatable=True)(1, 2), int)


def wrong_calls() -> None:
    """A call the function would refuse is an error (an unused ignore, were it untyped)."""
    add("2", 3)  # type: ignore[arg-type]
    get_weather("Oslo", units="k")  # type: ignore[arg-type]
    add(1, 2, 3)  # type: ignore[call-arg]


async def use_async() -> list[str]:
    found = await search_memory(Query(text="cats", limit=2))
    assert_type(found, list[str])
    return found


# a list of tools of different signatures is still a list of tools
listed = [add, get_weather, search_memory]
registry = ToolRegistry(listed)
registry.add(wrapped)
assert_type(registry.get("add"), Tool | None)


def call_twice(t: FunctionTool[Callable[[int, int], int]]) -> int:
    return t(1, 2) + t(3, 4)


assert_type(call_twice(add), int)


# a tool is a Tool: its metadata is typed
def describe(t: Tool) -> str:
    return f"{t.name}: {t.description} {t.parameters['required']}"


described = [describe(add), describe(search_memory), describe(wrapped)]
kwargs = get_weather.validate({"city": "Oslo", "days": "5"}, lenient=True)
message: str | None = tools.check_arguments("get_weather", {"city": "Oslo"})

# a registry's add as a decorator keeps the function's type, as @tool does
notes = ToolRegistry()


@notes.add
def add_note(text: str, pinned: bool = False) -> str:
    """Keep a note."""
    return text


assert_type(add_note("milk", pinned=True), str)
assert_type(notes.add(add)(1, 2), int)
assert_type(call_twice(notes.add(add)), int)
assert_type(notes.add(wrapped)(2.0), float)


def wrong_note() -> None:
    add_note(3)  # type: ignore[arg-type]
