"""``python -m streamtools.mcp MODULE:NAME``: serve a registry's tools over MCP.

Theory of operation
-------------------
``NAME`` is a ``ToolRegistry``, a tool or function, or a list of tools /
functions in the importable module ``MODULE``. Over stdio by default (for
clients that start the server themselves, e.g. a desktop app's MCP settings);
``--http HOST:PORT`` serves streamable HTTP at ``--path`` instead.

When serving ends (the client closed stdin, Ctrl-C), the process exits at once
(``streamtools.cli.exit_if_threads_remain``) even if a sync tool is still
running in a worker thread that a cancelled call abandoned: Python cannot
stop that thread, and at exit it waits for every such thread, for ever for a
tool that hangs, while the client that closed stdin waits for the server to
end.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
from collections.abc import Sequence
from functools import partial
from typing import Any

import anyio

from streamtools.cli import exit_if_threads_remain, port
from streamtools.errors import StreamtoolsError, describe_exception
from streamtools.mcp.server import serve_http, serve_stdio
from streamtools.tools import ToolRegistry


def _load(target: str) -> ToolRegistry:
    """The tools ``MODULE:NAME`` names, as a registry; ``ValueError`` saying what
    is wrong (the module, the name, or what it holds) otherwise."""
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise ValueError(f"expected MODULE:NAME, got {target!r}")
    sys.path.insert(0, ".")  # like `python -m`, find modules of the current directory
    try:
        value: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot load {target}: {describe_exception(exc)}") from None
    if callable(value) and not isinstance(value, ToolRegistry):
        value = [value]  # one tool or function, as `streamtools ui --tools` takes it
    try:
        return value if isinstance(value, ToolRegistry) else ToolRegistry(value)
    except (TypeError, StreamtoolsError) as exc:
        raise ValueError(
            f"{target} is not a ToolRegistry, a tool or a list of tools: "
            + describe_exception(exc)
        ) from None


def _address(text: str) -> tuple[str, int]:
    """An ``argparse`` type: ``HOST:PORT`` or ``:PORT`` (host 127.0.0.1); an IPv6
    host as URLs write it, ``[::1]:8000`` (its brackets are no part of the name)."""
    host, colon, number = text.rpartition(":")
    if not colon:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host or "127.0.0.1", port(number)


def _path(text: str) -> str:
    """An ``argparse`` type: a URL path, ``/`` added in front if missing
    (``--path tools`` is ``/tools``; Starlette refused it with a traceback)."""
    return text if text.startswith("/") else "/" + text


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m streamtools.mcp", description="Serve streamtools tools over MCP."
    )
    parser.add_argument(
        "target", help="MODULE:NAME of a ToolRegistry, a tool or a list of tools"
    )
    parser.add_argument(
        "--name", default="streamtools", help="server name shown to clients (default streamtools)"
    )
    parser.add_argument(
        "--http", metavar="HOST:PORT", type=_address, help="serve streamable HTTP, not stdio"
    )
    parser.add_argument(
        "--path", default="/mcp", type=_path, help="HTTP path of the MCP endpoint (default /mcp)"
    )
    args = parser.parse_args(argv)
    try:
        # Over stdio, stdout is the wire: what the module prints while it is
        # imported (the SDK points stdout at stderr only once it serves) goes to
        # stderr, or the client's first line would be it, not JSON-RPC.
        with contextlib.redirect_stdout(sys.stderr if not args.http else sys.stdout):
            tools = _load(args.target)
    except ValueError as exc:
        parser.error(str(exc))  # exits 2, with the usage line
    if args.http:
        host, number = args.http

        def listening(url: str) -> None:  # stderr: stdout may be a pipe nobody reads
            print(f"{parser.prog}: serving MCP on {url}", file=sys.stderr, flush=True)

        run = partial(
            serve_http, tools, name=args.name, host=host, port=number, path=args.path,
            on_listening=listening,
        )
    else:
        run = partial(serve_stdio, tools, name=args.name)
    try:
        anyio.run(run)  # --http: uvicorn, so asyncio
    except KeyboardInterrupt:  # Ctrl-C is how a server in a terminal is stopped
        return 130
    except OSError as exc:
        if not args.http:
            raise
        # serve_http binds before serving: a port in use, an address not ours
        host, number = args.http
        shown = f"[{host}]" if ":" in host else host
        why = exc.strerror or str(exc)
        print(f"{parser.prog}: cannot listen on {shown}:{number}: {why}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    exit_code = main()
    exit_if_threads_remain(exit_code)
    raise SystemExit(exit_code)
