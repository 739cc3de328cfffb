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

``functions.NAME`` is the tool ``NAME`` of a catalog that has it and has no
tool named ``functions.NAME`` itself (``tool_named``): OpenAI's namespace for
function tools, which gpt-oss (harmony's ``to=functions.get_weather``) and
Kimi K2 (``functions.get_weather:0``) are trained to write and write in the
prompt dialects' name fields too. The call's name is the catalog's, its raw
what the model wrote; with no catalog (``AnyTool``) a name stays as written.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from typing import Any, Protocol, runtime_checkable

from streamtools.errors import UsageError

__all__ = [
    "NAMESPACE", "AnyTool", "NamedTools", "ToolCatalog", "as_catalog", "name_prefixes",
    "tool_named", "unknown_tool_message",
]

NAMESPACE = "functions."  # OpenAI's namespace of function tools (see the docstring)


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


def tool_named(catalog: ToolCatalog, name: str) -> str | None:
    """The catalog's tool that ``name`` calls: ``name`` itself, or ``NAME`` for
    ``functions.NAME`` (see the module docstring); None when it names none."""
    if name in catalog:
        return name
    if name.startswith(NAMESPACE) and name[len(NAMESPACE) :] in catalog:
        return name[len(NAMESPACE) :]
    return None


@functools.lru_cache(maxsize=32)
def name_prefixes(names: tuple[str, ...]) -> frozenset[str]:
    """Every prefix of every name a call of these tools may give (``functions.``
    before one too): "still a possible name" is one lookup."""
    spelled = (*names, *(NAMESPACE + name for name in names))
    return frozenset(name[:k] for name in spelled for k in range(len(name) + 1))


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
