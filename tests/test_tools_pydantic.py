"""Pydantic models as tool parameter types (``streamtools.pydantic_models``)."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pydantic
import pytest

from streamtools.errors import ToolDefinitionError
from streamtools.events import CallEnd, CallError, Final, Retry, ToolFailed, ToolResult
from streamtools.parser import Parser
from streamtools.runtime import Agent
from streamtools.schema import resolve
from streamtools.testing import ScriptedModel
from streamtools.tools import ToolArgumentsError, ToolRegistry, tool


class Address(pydantic.BaseModel):
    city: str
    zip: str | None = None


class User(pydantic.BaseModel):
    """A user of the shop."""

    name: str = pydantic.Field(description="Full name")
    age: int = 0
    address: Address | None = None


@tool
def greet(user: User, loud: bool = False) -> str:
    """Greet a user."""
    city = user.address.city if user.address is not None else "nowhere"
    return f"{'HI' if loud else 'hi'} {user.name} ({user.age}) from {city}"


@tool
def register(user: User) -> str:
    """Register a user."""
    assert isinstance(user, User)
    return f"registered {user.name}"


def test_a_model_parameter_is_described_by_its_own_schema() -> None:
    props = greet.parameters["properties"]
    user = resolve(greet.parameters, props["user"])
    assert user["description"] == "A user of the shop."
    assert user["properties"]["name"]["description"] == "Full name"
    assert user["required"] == ["name"]
    # the model's nested definitions are lifted to the tool schema's root, where
    # its references point
    address = user["properties"]["address"]["anyOf"][0]
    assert resolve(greet.parameters, address)["properties"]["city"]["type"] == "string"
    assert greet.parameters["required"] == ["user"]
    assert props["loud"] == {"type": "boolean", "default": False}
    json.dumps(greet.parameters)  # plain JSON


def test_a_model_parameter_is_validated_by_pydantic_into_the_model() -> None:
    kwargs = greet.validate({"user": {"name": "Ann", "age": 3, "address": {"city": "Oslo"}}})
    assert isinstance(kwargs["user"], User) and isinstance(kwargs["user"].address, Address)
    assert greet(**kwargs) == "hi Ann (3) from Oslo"
    with pytest.raises(ToolArgumentsError) as info:
        greet.validate({"user": {"name": "Ann", "age": "old", "address": {"zip": 1}}})
    message = str(info.value)
    # each error, where it is and what pydantic says, short enough for a model
    assert "age: Input should be a valid integer" in message
    assert "address.city: Field required" in message
    assert "$.user" in message and "errors.pydantic.dev" not in message


def test_a_single_model_parameter_is_the_tools_parameters() -> None:
    """As for a single Struct parameter: the model writes the model's fields."""
    assert set(register.parameters["properties"]) == {"name", "age", "address"}
    assert "$defs" in register.parameters
    kwargs = register.validate({"name": "Bo", "age": 7})
    assert register(**kwargs) == "registered Bo"
    with pytest.raises(ToolArgumentsError, match="name: Field required"):
        register.validate({"age": 7})


def test_models_inside_other_types() -> None:
    class Team(msgspec.Struct):
        title: str
        lead: User

    @tool
    def form(members: list[User], team: Team) -> int:
        """Form a team."""
        assert all(isinstance(m, User) for m in members) and isinstance(team.lead, User)
        return len(members)

    items = form.parameters["properties"]["members"]["items"]
    assert resolve(form.parameters, items)["properties"]["age"]["type"] == "integer"
    kwargs = form.validate(
        {"members": [{"name": "A"}, {"name": "B"}], "team": {"title": "t", "lead": {"name": "C"}}}
    )
    assert form(**kwargs) == 2
    with pytest.raises(ToolArgumentsError, match=r"\$\.members\[1\]"):
        form.validate({"members": [{"name": "A"}, {"age": 1}], "team": {"title": "t", "lead": {}}})


def test_two_types_of_one_name_are_refused_when_the_tool_is_made() -> None:
    """Two models that each hold a different ``Item`` (from two modules) meet only
    in the tool's schema, where one ``$defs`` entry would describe both."""
    sku_item = pydantic.create_model("Item", sku=(str, ...))
    price_item = pydantic.create_model("Item", price=(float, ...))
    box = pydantic.create_model("Box", item=(sku_item, ...))
    crate = pydantic.create_model("Crate", item=(price_item, ...))

    def pack(box: Any, crate: Any) -> None:
        """Pack."""

    pack.__annotations__ = {"box": box, "crate": crate, "return": None}
    with pytest.raises(ToolDefinitionError, match="'Item'"):
        tool(pack)
    pack.__annotations__ = {"box": box, "crate": box, "return": None}
    assert '"sku"' in json.dumps(tool(pack).parameters)  # one Item twice is one Item


def test_the_parser_types_am_xml_values_by_the_models_schema() -> None:
    registry = ToolRegistry([register])
    p = Parser("am_xml", registry)
    text = '<am:tool_call name="register"><name>5</name><age>7</age></am:tool_call>'
    events = p.feed(text) + p.end()
    ends = [e for e in events if isinstance(e, CallEnd)]
    assert [e.arguments for e in ends] == [{"name": "5", "age": 7}]


@pytest.mark.anyio
async def test_an_agent_runs_a_tool_taking_a_model_and_reports_a_bad_one() -> None:
    def call(**arguments: Any) -> str:
        body = json.dumps({"name": "greet", "arguments": arguments})
        return f"<tool_call>{body}</tool_call>"

    model = ScriptedModel(
        [
            call(user={"name": "Ann", "age": "x"}),
            call(user={"name": "Ann", "age": 30}, loud=True),
            "Done.",
        ]
    )
    agent = Agent(model, [greet], dialect="hermes")
    async with agent.stream("Greet Ann") as stream:
        events = [e async for e in stream]
    # the bad call is refused where it is read (the catalog validates with the
    # tool's own types) and the model is told pydantic's words
    errors = [e for e in events if isinstance(e, CallError)]
    assert [e.reason for e in errors] == ["invalid_arguments"]
    assert "age: Input should be a valid integer" in errors[0].message
    retries = [e for e in events if isinstance(e, Retry)]
    assert len(retries) == 1 and "age: Input should be a valid integer" in retries[0].message
    assert not [e for e in events if isinstance(e, ToolFailed)]
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.content for r in results] == ["HI Ann (30) from nowhere"]
    assert events[-1] == Final(text="Done.", turns=3)
