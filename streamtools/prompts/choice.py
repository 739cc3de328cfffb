"""What a model in a prompt dialect is told of a forced ``tool_choice``.

A native request carries the choice in its own field; a prompt dialect has
none, so the model is told in words: ``required`` asks for at least one call,
``UseTool(name)`` for a call to that tool. The Agent and the proxy both add the
sentence as a user message after the conversation, which ``project`` merges
into the last user message, where it weighs most (the system prompt, long and
cached, states no choice). Without it the model learns of the choice only from
the re-prompt after a reply without the call: one turn lost.

Core package: standard library only.
"""

from __future__ import annotations

from streamtools.model import ToolChoice, UseTool


def choice_instruction(choice: ToolChoice | None) -> str | None:
    """The sentence for a forced ``choice``; None for ``auto``, ``none`` or None."""
    if isinstance(choice, UseTool):  # a tool may be named "none"
        return f"In this reply you must call the tool `{choice.name}`."
    if choice == "required":
        return "In this reply you must call at least one of the tools."
    return None
