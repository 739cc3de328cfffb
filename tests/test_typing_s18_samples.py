"""User code as the README writes it type-checks under ``mypy --strict``, with
the precise types ``assert_type`` states (``tests/typing_samples``): a tool made
with ``@tool`` keeps its function's signature (calling it was ``Any``), event
unions narrow, ``run()`` returns a ``RunResult``."""

from __future__ import annotations

import inspect
import sys
import typing
from pathlib import Path

import pytest

from streamtools.model import ToolChoice
from streamtools.runtime.agent import Agent
from streamtools.runtime.hybrid import AgentOptions, HybridAgent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Tokenizer

SAMPLES = Path(__file__).with_name("typing_samples")


def test_the_user_samples_pass_mypy_strict(tmp_path: Path) -> None:
    api = pytest.importorskip("mypy.api")
    files = sorted(str(path) for path in SAMPLES.glob("*.py"))
    assert len(files) >= 4
    # mypy's main raises the recursion limit to 2**14 for good: put it back, or later
    # tests that rely on the default (a body nested too deeply) see another interpreter
    limit = sys.getrecursionlimit()
    try:
        out, err, status = api.run(
            ["--strict", "--no-error-summary", "--cache-dir", str(tmp_path / "cache"), *files]
        )
    finally:
        sys.setrecursionlimit(limit)
    assert (out, err, status) == ("", "", 0)


def test_hybrid_agent_options_are_the_agent_keywords_it_passes_on() -> None:
    """``HybridAgent(**agent_kwargs: Unpack[AgentOptions])``: the TypedDict names
    every keyword of ``Agent`` but those the hybrid sets itself, with its type."""
    agent = inspect.signature(Agent).parameters
    own = set(inspect.signature(HybridAgent).parameters) | {"native", "offer"}
    keywords = {n for n, p in agent.items() if p.kind is p.KEYWORD_ONLY and n not in own}
    options = typing.get_type_hints(AgentOptions)
    assert set(options) == keywords
    hints = typing.get_type_hints(Agent.__init__)
    assert {name: hints[name] for name in keywords} == options


def test_literal_attributes_are_declared() -> None:
    """An attribute assigned a Literal-typed value without a declaration is
    inferred by pyright with its literals widened (``agent.tool_choice`` read as
    ``UseTool | str``, ``server.tokenizer`` as ``str | None``, where mypy reads
    the Literals): they are declared with their types."""
    assert typing.get_type_hints(Agent)["tool_choice"] == ToolChoice
    assert typing.get_type_hints(FakeServer)["tokenizer"] == Tokenizer | None
