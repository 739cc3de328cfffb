"""An MCP server (the SDK's ``MCPServer``, stdio) whose tools ask the user
something mid-call (``elicitation/create``), for the elicitation tests.

``book(room)`` asks, in form mode, for a name and a number of nights and says
what came back (``ctx.elicit``: a request sent mid-call, 2025 servers only);
``reserve(room)`` asks the same through the SDK's resolvers (on 2026-07-28 an
``InputRequiredResult``, the call made again with the answer); ``login()``
asks, in URL mode, to open a page and says the answer; ``files()`` refuses
its first call until the user opens a page (``UrlElicitationRequiredError``). ``python
asking_server.py legacy`` plays a server from before 2026-07-28 (the
``initialize`` handshake, the request sent to the client mid-call); without
it the server speaks what the client offers.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from mcp.shared.exceptions import UrlElicitationRequiredError
from mcp.types import ElicitRequestURLParams
from pydantic import BaseModel


class Booking(BaseModel):
    name: str
    nights: int = 1


server: MCPServer[Any] = MCPServer("asking")


@server.tool()
async def book(room: str, ctx: Context[Any, Any]) -> str:
    """Book a room, asking who for."""
    answer = await ctx.elicit(f"Who is room {room} for?", schema=Booking)
    if answer.action == "accept":
        return f"booked {room} for {answer.data.name}, {answer.data.nights} nights"
    return f"not booked: {answer.action}"


def who(room: str) -> Elicit[Booking]:
    return Elicit(f"Who is room {room} for?", Booking)


@server.tool()
def reserve(room: str, answer: Annotated[ElicitationResult[Booking], Resolve(who)]) -> str:
    """Book a room, asking who for (the SDK's resolvers: any protocol version)."""
    if answer.action == "accept":
        return f"booked {room} for {answer.data.name}, {answer.data.nights} nights"
    return f"not booked: {answer.action}"


@server.tool()
async def login(ctx: Context[Any, Any]) -> str:
    """Log in, on a page of the server's."""
    answer = await ctx.elicit_url("Sign in to go on", "https://example.com/login", "e-1")
    return f"login: {answer.action}"


opened: list[str] = []


@server.tool()
def files() -> str:
    """List the user's files, once they have signed in (URL mode, 2025-11-25:
    the call is refused until the user opens the page; a second call runs)."""
    if not opened:
        opened.append("auth-001")
        page = ElicitRequestURLParams(
            mode="url", message="Authorization required for your files",
            url="https://example.com/oauth/authorize", elicitation_id="auth-001",
        )
        raise UrlElicitationRequiredError([page])
    return "a.txt b.txt"


if __name__ == "__main__":
    if sys.argv[1:] == ["legacy"]:
        import anyio
        from changing_server import serve_legacy_stdio  # type: ignore[import-not-found]

        anyio.run(serve_legacy_stdio, server)
    else:
        server.run("stdio")
