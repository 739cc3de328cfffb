"""The budget message counts turns in English: ``max_turns=1`` said "no final
answer after 1 turns". It names ``max_turns`` too, the option that allows more
(it did not: a new user could not tell what to raise)."""

from __future__ import annotations

import pytest

from streamtools.errors import BudgetExceeded
from streamtools.runtime import Agent
from streamtools.testing import ScriptedModel
from streamtools.tools import tool

pytestmark = pytest.mark.anyio

CALL = '<am:tool_call name="add"><a>2</a><b>3</b></am:tool_call>'


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.mark.parametrize(("max_turns", "said"), [(1, "1 turn"), (2, "2 turns")])
async def test_the_message_says_turn_or_turns(max_turns: int, said: str) -> None:
    model = ScriptedModel([CALL] * max_turns)
    with pytest.raises(BudgetExceeded) as caught:
        await Agent(model, [add], max_turns=max_turns).run("What is 2 + 3?")
    assert str(caught.value) == (
        f"no final answer after {said}: max_turns={max_turns} allows no more model calls; "
        "give a larger max_turns to allow more"
    )
    assert caught.value.turns == max_turns
