"""Programs that are not working MCP servers, for the load-error tests.

``python broken_server.py MODE``: ``garbage`` writes lines that are not
JSON-RPC and then waits; ``silent`` reads stdin and never answers; ``exit``
exits at once with status 3. No SDK import, so each starts in milliseconds.
"""

from __future__ import annotations

import sys


def main(mode: str) -> int:
    if mode == "exit":
        return 3
    if mode == "garbage":
        for _ in range(5):
            print("this is not JSON-RPC {{{", flush=True)
    sys.stdin.read()  # until the client closes our stdin
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
