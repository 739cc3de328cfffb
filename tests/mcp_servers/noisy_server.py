"""An MCP server that prints debug lines to stdout, the transport itself, as a
careless server does; the client must skip them. Plain JSON-RPC over stdio (a
2025-06-18 handshake, no SDK: the SDK's own servers send ``print`` to stderr)."""

from __future__ import annotations

import json
import sys
from typing import Any

SHOUT = {
    "name": "shout",
    "description": "Say a word loudly.",
    "inputSchema": {"type": "object", "properties": {"word": {"type": "string"}}},
}


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request: dict[str, Any]) -> Any:
    method = request["method"]
    if method == "initialize":
        info = {"name": "noisy", "version": "1"}
        return {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": info}
    if method == "tools/list":
        return {"tools": [SHOUT]}
    if method == "tools/call":
        word = request["params"]["arguments"]["word"]
        print(f"DEBUG: shout called with {word}", flush=True)
        print("<html>not json either</html>", flush=True)
        return {"content": [{"type": "text", "text": word.upper()}]}
    return {}


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        if "id" in request:
            send({"jsonrpc": "2.0", "id": request["id"], "result": answer(request)})


if __name__ == "__main__":
    main()
