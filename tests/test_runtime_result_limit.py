"""Tool results too long for any model's context are cut, with a note saying so."""

from __future__ import annotations

import pytest

from streamtools.errors import UsageError
from streamtools.events import CallEnd, ToolFailed, ToolResult
from streamtools.runtime import Agent
from streamtools.runtime.executor import Executor
from streamtools.testing import ScriptedModel
from streamtools.tools import ToolRegistry, tool
from streamtools.transcript import ToolResultMessage

pytestmark = pytest.mark.anyio

BIG = "".join(f"line {n}\n" for n in range(200_000))  # about 2.2 million characters


def call(name: str) -> CallEnd:
    return CallEnd(index=0, id="c0", name=name, arguments={}, raw="")


@tool
def dump() -> str:
    """Print a huge log."""
    return BIG


@tool
def explode() -> str:
    """Fail with a huge message."""
    raise RuntimeError(BIG)


def test_a_text_over_the_limit_keeps_its_start_and_end_around_a_note() -> None:
    from streamtools.results import cut_to_limit

    text = "a" * 3000 + "b" * 3000 + "c" * 4000
    cut = cut_to_limit(text, 4000)
    assert cut.startswith("a" * 3000 + "\n[... 6,000 characters cut here: the result was 10,000")
    assert cut.endswith("]\n" + "c" * 1000)
    assert len(cut) < 4000 + 200
    assert cut_to_limit(text, 10_000) == text
    assert cut_to_limit(text, None) == text


async def test_a_huge_result_reaches_the_model_cut() -> None:
    """2 MB of log went whole into the transcript and every later request."""
    model = ScriptedModel(['<am:tool_call name="dump"></am:tool_call>', "It is long."])
    result = await Agent(model, [dump]).run("show the log")
    message = result.transcript.messages[2]
    assert isinstance(message, ToolResultMessage)
    assert len(message.content) < 100_000 + 200
    assert message.content.startswith("line 0\nline 1\n")
    assert message.content.endswith("line 199999\n")
    assert f"the result was {len(BIG):,} characters" in message.content
    sent = "\n".join(str(m.content) for m in model.requests[1].messages)
    assert len(sent) < 110_000


async def test_a_huge_error_is_cut_too_and_the_limit_can_be_changed_or_lifted() -> None:
    failed = await Executor(ToolRegistry([explode])).execute(call("explode"))
    assert isinstance(failed, ToolFailed) and failed.kind == "exception"
    assert failed.message.startswith("Tool 'explode' raised RuntimeError: line 0\n")
    assert len(failed.message) < 100_000 + 200
    small = await Executor(ToolRegistry([dump]), max_result_chars=5000).execute(call("dump"))
    assert isinstance(small, ToolResult) and len(small.content) < 5000 + 200
    whole = await Executor(ToolRegistry([dump]), max_result_chars=None).execute(call("dump"))
    assert isinstance(whole, ToolResult) and whole.content == BIG


@pytest.mark.parametrize("bad", [0, 999, 1.5e6, "big"])
def test_the_limit_is_checked_when_the_agent_is_made(bad: object) -> None:
    with pytest.raises(UsageError, match="max_result_chars"):
        Agent(ScriptedModel([]), [dump], max_result_chars=bad)  # type: ignore[arg-type]
