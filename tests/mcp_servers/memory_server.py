"""A small MCP server written with the official SDK, used by the MCP tests.

Run ``python memory_server.py`` to serve over stdin/stdout, or
``python memory_server.py http-fd FD`` to serve streamable HTTP at ``/mcp`` on
the listening socket FD.

The tools cover what a client must convert: plain text, structured content,
an image, a tool error (``isError``), a crash mid-call and a slow call.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

PNG_BYTES = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4  # 1032 bytes, content irrelevant

NOTES = ["the cat is called Miso", "the meeting moved to Tuesday", "Miso likes tuna"]


def build() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("memory", instructions="A tiny memory store for tests.")

    @server.tool()
    def search_memory(query: str, limit: int = 5) -> str:
        """Search stored notes for a word."""
        hits = [note for note in NOTES if query.lower() in note.lower()][:limit]
        return "\n".join(hits) if hits else "no match"

    @server.tool()
    def add(a: int, b: int) -> dict[str, int]:
        """Add two integers."""
        return {"sum": a + b}

    @server.tool()
    def snapshot() -> Image:
        """Return a PNG picture."""
        return Image(data=PNG_BYTES, format="png")

    @server.tool()
    def fail(reason: str) -> str:
        """Always fails with the given reason."""
        raise ToolError(f"refused: {reason}")

    @server.tool()
    def pid() -> int:
        """The server's process id."""
        return os.getpid()

    @server.tool()
    def crash() -> str:
        """Kill the server process in the middle of the call."""
        sys.stdout.flush()
        os._exit(7)

    @server.tool()
    async def slow(seconds: float) -> str:
        """Sleep, then answer."""
        await anyio.sleep(seconds)
        return f"slept {seconds}"

    return server


def serve_http_on_fd(fd: int) -> None:
    """Serve streamable HTTP on a socket the parent bound and listens on (no port race)."""
    import uvicorn

    app = build().streamable_http_app()
    uvicorn.run(app, fd=fd, log_level="warning", timeout_graceful_shutdown=1)


def main(mode: str) -> None:
    if mode == "http-fd":
        serve_http_on_fd(int(sys.argv[2]))
    else:
        build().run("stdio")
        exit_at_once()


def exit_at_once() -> None:
    """End the process now that the client closed stdin and every answer is out:
    the interpreter's teardown of the SDK's modules takes 0.3-1 s, which every
    test that stops a stdio server waited for (the SDK's client waits for the
    process to end)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "stdio")
