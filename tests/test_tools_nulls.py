"""A null for an optional parameter: the parameter left out, its default used."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from streamtools.events import ToolFailed, ToolResult
from streamtools.model import CallChunk, FinishChunk
from streamtools.runtime import Agent
from streamtools.testing import ScriptedModel
from streamtools.tools import ToolArgumentsError, ToolRegistry, tool

pytestmark = pytest.mark.anyio


@tool
def forecast(city: str, days: int = 3, unit: str | None = "C", detailed: bool = False) -> str:
    """A forecast."""
    return f"{city} {days} {unit} {detailed}"


@pytest.mark.parametrize("lenient", [False, True])
def test_a_null_for_a_parameter_with_a_default_is_the_default(lenient: bool) -> None:
    """``"days": null`` was refused ("Expected `int`, got `null`"), and the model
    sent back to write again a call whose meaning was plain."""
    args = {"city": "Paris", "days": None, "detailed": None}
    kwargs = forecast.validate(args, lenient=lenient)
    assert kwargs == {"city": "Paris", "days": 3, "unit": "C", "detailed": False}
    assert args == {"city": "Paris", "days": None, "detailed": None}  # not changed


def test_a_null_a_parameter_takes_is_kept_and_a_required_one_refused() -> None:
    kwargs = forecast.validate({"city": "Paris", "unit": None})
    assert kwargs["unit"] is None  # null is a value it takes: not its default
    with pytest.raises(ToolArgumentsError, match=r"got `null` - at `\$\.city`"):
        forecast.validate({"city": None})


def test_other_errors_still_come_out_with_nulls_and_floats_mended() -> None:
    with pytest.raises(ToolArgumentsError, match=r"Expected `str`, got `int` - at `\$\.city`"):
        forecast.validate({"city": 5, "days": None})
    kwargs = forecast.validate({"city": "Oslo", "days": 4.0, "detailed": None})
    assert kwargs["days"] == 4 and type(kwargs["days"]) is int and kwargs["detailed"] is False


class Query(msgspec.Struct):
    text: str
    limit: int = 10


def test_a_struct_argument_and_a_schema_tool_take_nulls_so_too() -> None:
    @tool
    def search(query: Query) -> str:
        """Search."""
        return query.text

    assert search.validate({"text": "x", "limit": None}) == {"query": Query(text="x")}
    registry = ToolRegistry()
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"q": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["q"],
    }
    remote = registry.add_schema("remote", "A remote tool.", schema)
    kwargs = remote.validate({"q": "x", "n": None})
    assert kwargs == {"q": "x"}  # what a server is sent: n left out, not null
    assert registry.check_arguments("remote", {"q": None}) is not None


async def test_a_native_call_with_nulls_runs() -> None:
    script: list[Any] = [
        [
            CallChunk(
                index=0,
                id="c1",
                name="forecast",
                arguments='{"city": "Rome", "days": null, "unit": null, "detailed": null}',
            ),
            FinishChunk(reason="tool_calls"),
        ],
        "Sunny.",
    ]
    async with Agent(ScriptedModel(script), [forecast], native=True).stream("x") as stream:
        outcomes = [e async for e in stream if isinstance(e, ToolResult | ToolFailed)]
    assert outcomes == [ToolResult(index=0, id="c1", name="forecast", content="Rome 3 None False")]
