"""An agent's ``tool_choice``: what it is, whether a run may start with it, and
whether it has been met (DESIGN §5).

``agent_choice`` reads the option as the agent is made (a keyword, or the
``UseTool`` a bare tool name stands for); ``check_choice`` refuses, as a run
starts, a named tool the registry does not hold then; ``choice_met`` says when
a forced choice has been satisfied, after which a native request goes back to
``auto`` and a prompt dialect's instruction is no longer sent (see
``streamtools.runtime.agent``).
"""

from __future__ import annotations

from streamtools.errors import UsageError
from streamtools.model import ToolChoice, UseTool, keyword_choice
from streamtools.runtime.repair import RepairState
from streamtools.tools import ToolRegistry

__all__ = ["agent_choice", "check_choice", "choice_met"]


def agent_choice(choice: str | UseTool) -> ToolChoice:
    """The agent's ``tool_choice`` as a request carries it: a keyword, or the
    ``UseTool`` a bare tool name stands for. Whether the tool exists is checked
    when a run starts (``check_choice``): the registry may be filled later."""
    keyword = keyword_choice(choice)
    if keyword is not None:
        return keyword
    name = choice.name if isinstance(choice, UseTool) else choice
    if not isinstance(name, str) or not name:
        raise UsageError(
            f"tool_choice must be auto, none, required or a tool name, got {choice!r}"
        )
    return UseTool(name)


def check_choice(choice: ToolChoice, registry: ToolRegistry) -> None:
    """Raise ``UsageError`` when ``choice`` names a tool ``registry`` does not
    hold. Called as a run starts, before any request: a tool added after the
    agent was made (an MCP server's, loaded later) counts, and a run that could
    only ask the model in vain for a call to no tool does not begin."""
    if isinstance(choice, UseTool) and choice.name not in registry:
        names = ", ".join(sorted(registry)) or "none"
        raise UsageError(
            f"tool_choice must be auto, none, required or a tool name: no tool is named "
            f"{choice.name!r} when the run starts (tools: {names})"
        )


def choice_met(choice: ToolChoice, repair: RepairState) -> bool:
    """Whether a forced ``tool_choice`` is satisfied: ``required`` by any call run,
    ``UseTool(name)`` by a call to that tool only (in a prompt dialect the model
    may call another first, which does not make ``name``'s call needless)."""
    if isinstance(choice, UseTool):
        return choice.name in repair.tools_run
    return repair.calls_run > 0
