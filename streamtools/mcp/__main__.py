"""``python -m streamtools.mcp MODULE:NAME``: serve a registry's tools over MCP.

Theory of operation
-------------------
``NAME`` is a ``ToolRegistry`` or a list of tools / functions in the importable
module ``MODULE``. Over stdio by default (for clients that start the server
themselves, e.g. a desktop app's MCP settings); ``--http HOST:PORT`` serves
streamable HTTP at ``--path`` instead.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from functools import partial
from typing import Any

import anyio

from streamtools.mcp.server import serve_http, serve_stdio


def _load(target: str) -> Any:
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise SystemExit(f"expected MODULE:NAME, got {target!r}")
    sys.path.insert(0, ".")  # like `python -m`, find modules of the current directory
    value = importlib.import_module(module_name)
    for part in attr.split("."):
        value = getattr(value, part)
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m streamtools.mcp", description="Serve streamtools tools over MCP."
    )
    parser.add_argument("target", help="MODULE:NAME of a ToolRegistry or a list of tools")
    parser.add_argument("--name", default="streamtools", help="server name shown to clients")
    parser.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP, not stdio")
    parser.add_argument("--path", default="/mcp", help="HTTP path of the MCP endpoint")
    args = parser.parse_args(argv)
    tools = _load(args.target)
    if args.http:
        host, _, port = args.http.rpartition(":")
        run = partial(serve_http, tools, name=args.name, host=host or "127.0.0.1",
                      port=int(port), path=args.path)
        anyio.run(run)  # uvicorn: asyncio
    else:
        anyio.run(partial(serve_stdio, tools, name=args.name))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
