"""What the parser knows about tools: names, schemas, and argument checks.

Theory of operation
-------------------
The parser accepts three kinds of ``tools`` argument and folds them into one
object with the ``ToolCatalog`` shape:

* ``None``: every name is a tool (``AnyTool``); nothing is validated.
* an iterable of names: only those names are tools (``NamedTools``); unknown
  names become ``CallError(reason="unknown_tool")``, arguments are not checked.
* a ``ToolCatalog`` (``streamtools.tools.ToolRegistry`` is one): unknown names
  and arguments that fail ``check_arguments`` become call errors.

A catalog is recognised by its methods (``schema`` and ``check_arguments``),
not by inheritance, so the parser never imports the tools module.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Protocol, runtime_checkable

from streamtools.errors import UsageError

__all__ = ["AnyTool", "NamedTools", "ToolCatalog", "as_catalog", "unknown_tool_message"]


@runtime_checkable
class ToolCatalog(Protocol):
    """The tools a parser accepts; ``ToolRegistry`` satisfies it."""

    def __contains__(self, name: object) -> bool: ...

    def __iter__(self) -> Iterator[str]: ...

    def schema(self, name: str) -> dict[str, Any] | None:
        """JSON Schema of the parameters object of ``name``, or None."""
        ...

    def check_arguments(self, name: str, arguments: dict[str, Any]) -> str | None:
        """None when ``arguments`` are valid for ``name``, else a message for the model."""
        ...


class AnyTool:
    """The catalog used when no tools are given: every name is accepted."""

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def schema(self, name: str) -> dict[str, Any] | None:
        return None

    def check_arguments(self, name: str, arguments: dict[str, Any]) -> str | None:
        return None


class NamedTools:
    """A catalog of plain names: membership only, arguments are not checked."""

    def __init__(self, names: Iterable[str]) -> None:
        self._names = tuple(dict.fromkeys(names))
        self._set = frozenset(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._set

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def schema(self, name: str) -> dict[str, Any] | None:
        return None

    def check_arguments(self, name: str, arguments: dict[str, Any]) -> str | None:
        return None


def as_catalog(tools: Iterable[str] | ToolCatalog | None) -> ToolCatalog:
    """Fold the parser's ``tools`` argument into a catalog."""
    if tools is None:
        return AnyTool()
    if hasattr(tools, "check_arguments") and hasattr(tools, "schema"):
        return tools  # type: ignore[return-value]
    if isinstance(tools, str):  # a single name is a common slip; do not iterate its letters
        return NamedTools([tools])
    names = list(tools)
    for item in names:
        if not isinstance(item, str):
            # (a list of Tool objects failed only when a call named an unknown tool,
            # inside the message listing the names)
            raise UsageError(
                f"tools is tool names or a catalog (a ToolRegistry, which also checks "
                f"the arguments), got {type(item).__name__} {item!r:.60} in the list: "
                f"pass ToolRegistry([...]) or the names"
            )
    return NamedTools(names)


def unknown_tool_message(catalog: ToolCatalog, name: str) -> str:
    """Tell the model the name is wrong and list only the allowed names."""
    own = getattr(catalog, "unknown_tool_message", None)
    if callable(own):
        return str(own(name))
    names = list(catalog)
    if not names:
        return f"There is no tool named {name!r}. Answer without calling a tool."
    listed = ", ".join(names)
    return f"There is no tool named {name!r}. Call one of these tools by its exact name: {listed}."
