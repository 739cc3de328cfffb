"""streamtools ``@tool`` functions, served over MCP by the tests (``registry``)."""

from __future__ import annotations

import threading

import anyio.lowlevel

from streamtools.tools import ToolRegistry, tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(name="kom.memory.v1.search_memory")
async def search_memory(query: str, limit: int = 3) -> list[str]:
    """Search the notes.

    Args:
        query: a word to look for
        limit: how many notes at most
    """
    await anyio.lowlevel.checkpoint()
    notes = ["Miso is a cat", "tea at five", "Miso likes tuna"]
    return [n for n in notes if query.lower() in n.lower()][:limit]


@tool
def divide(a: float, b: float) -> float:
    """Divide a by b."""
    return a / b


@tool
def weather(city: str) -> dict[str, object]:
    """Current weather of a city."""
    return {"city": city, "temp_c": 21}


registry = ToolRegistry([add, search_memory, divide, weather])


@tool
def chatty(word: str) -> str:
    """Print a debug line (to stdout, the stdio transport), then answer."""
    print("debug: chatty called with", word)
    return word.upper()


chatty_tools = [chatty]


@tool
def stuck() -> str:
    """A blocking tool that never returns (a hung network call)."""
    threading.Event().wait()
    return "never"


stuck_tools = [stuck, add]
