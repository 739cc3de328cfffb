"""An MCP server over stdio that writes its JSON-RPC by hand, so that it can get it wrong.

``python raw_server.py`` answers the handshake (protocol 2025-06-18) and lists
its tools: ``ok`` works; ``null_message`` answers with an error whose
``message`` is null; ``no_result`` answers with a null ``result``;
``wrong_id`` answers under an id that no request had. With
``invalid-tools``, the listing also holds tools whose definitions are not
valid MCP: ``array_input`` (its input schema is an array schema),
``no_schema`` (its input schema is a string) and one without a name. With
``duplicate-tools``, ``ok`` is listed twice (the second with another
description). With ``bad-handshake``, it answers the ``initialize`` request with an error that
has no message. With ``bad-content``, the tools answer with content blocks the
SDK cannot read beside ones it can (``BAD_CONTENT``). With ``tool-extras``, the
tools have fields no call needs that are not valid MCP (``EXTRAS_TOOLS``); their
calls answer with their name and arguments as JSON text. With ``asks``, a call of
the tool named by a method of the client's, ``/`` written ``_`` (``roots_list``,
``sampling_createMessage``, ``elicitation_create``, ``ping``) first sends the
client that request (as a 2025-06-18 server may, in the middle of a call) and
answers the call with the client's answer as JSON text. ``strict-asks`` is
``asks`` from a strict 2025-06-18 server (the Java SDK's): an ``initialize``
whose ``elicitation`` capability holds any field (the 2025-11-25 ``form``,
``url``) is refused with -32603, as it refuses them; ``refusing-asks`` refuses
any ``elicitation`` capability (-32602). Both write each ``initialize``'s
``elicitation`` capability to stderr, one JSON line each. No SDK import.
"""

from __future__ import annotations

import json
import sys
from typing import Any

OBJECT = {"type": "object", "properties": {}}
TOOLS: list[dict[str, Any]] = [
    {"name": "ok", "description": "Works.", "inputSchema": OBJECT},
    {"name": "null_message", "inputSchema": OBJECT},
    {"name": "no_result", "inputSchema": OBJECT},
    {"name": "wrong_id", "inputSchema": OBJECT},
]
INVALID_TOOLS: list[dict[str, Any]] = [
    {"name": "array_input", "inputSchema": {"type": "array", "items": {"type": "string"}}},
    {"name": "no_schema", "inputSchema": "none at all"},
    {"description": "A tool without a name.", "inputSchema": OBJECT},
]

# ``bad-content``: each tool's result
BAD_CONTENT: dict[str, dict[str, Any]] = {
    "no_mime": {
        "content": [{"type": "text", "text": "the chart:"}, {"type": "image", "data": "YWJj"}]
    },
    "newer_type": {"content": [{"type": "text", "text": "rows:"}, {"type": "table", "rows": [1]}]},
    "null_text": {"content": [{"type": "text", "text": None}, {"type": "text", "text": "kept"}]},
    "structured_only": {"structuredContent": {"temp": 18}},
    "fine": {"content": [{"type": "text", "text": "all good"}]},
    "hopeless": {"content": "a string, not a list"},
}
# ``tool-extras``: tools with fields no call needs that are not valid MCP
QUERY = {"type": "object", "properties": {"q": {"type": "string"}}}
EXTRAS_TOOLS: list[dict[str, Any]] = [
    {"name": "list_files", "description": "Files.", "inputSchema": QUERY,
     "outputSchema": {"type": "array", "items": {"type": "string"}}},
    {"name": "iconic", "description": "Has a bad icon.", "inputSchema": QUERY,
     "icons": [{"src": 5}], "title": 7},
    {"name": "no_input", "description": "Input is wrong.", "inputSchema": {"type": "array"},
     "outputSchema": {"type": "array"}},
]


def answer(message: dict[str, Any], mode: str) -> dict[str, Any] | None:
    if "id" not in message:
        return None  # a notification
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
    method = message.get("method")
    if method == "initialize":
        offered = message["params"]["capabilities"].get("elicitation")
        if mode in ("strict-asks", "refusing-asks"):
            print(json.dumps(offered), file=sys.stderr, flush=True)
        if mode == "bad-handshake":
            reply["error"] = {"code": -32603}
        elif mode == "strict-asks" and offered:
            field = next(iter(offered))
            said = f'Unrecognized field "{field}" (class McpSchema$ClientCapabilities$Elicitation)'
            reply["error"] = {"code": -32603, "message": said}
        elif mode == "refusing-asks" and offered is not None:
            reply["error"] = {"code": -32602, "message": 'Unrecognized field "elicitation"'}
        else:
            reply["result"] = {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "1"},
            }
    elif method == "tools/list":
        tools = TOOLS[:1] + INVALID_TOOLS + TOOLS[1:] if mode == "invalid-tools" else TOOLS
        if mode == "duplicate-tools":
            tools = [*TOOLS, {"name": "ok", "description": "Again.", "inputSchema": OBJECT}]
        elif mode == "bad-content":
            tools = [{"name": n, "inputSchema": OBJECT} for n in BAD_CONTENT]
        elif mode == "tool-extras":
            tools = EXTRAS_TOOLS
        reply["result"] = {"tools": tools}
    elif method == "tools/call":
        name = message["params"]["name"]
        if mode == "bad-content":
            reply["result"] = BAD_CONTENT[name]
        elif mode == "tool-extras":
            text = json.dumps([name, message["params"].get("arguments")])
            reply["result"] = {"content": [{"type": "text", "text": text}]}
        elif name == "null_message":
            reply["error"] = {"code": -32000, "message": None}
        elif name == "no_result":
            reply["result"] = None
        elif name == "wrong_id":
            reply["id"] = 9999
            reply["error"] = {"code": -32603, "message": "lost track"}
        else:
            reply["result"] = {"content": [{"type": "text", "text": f"{name} ran"}]}
    else:
        reply["result"] = {}
    return reply


# ``asks``: the requests a server may send its client, and their params
ASKS: dict[str, dict[str, Any]] = {
    "roots/list": {},
    "sampling/createMessage": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
        "maxTokens": 5,
    },
    "elicitation/create": {
        "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
    "ping": {},
}


def ask(message: dict[str, Any]) -> dict[str, Any]:
    """Send the client the request the called tool names; the call's reply holds its answer."""
    method = message["params"]["name"].replace("_", "/")
    request_id = f"srv-{message['id']}"
    request = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": ASKS[method]}
    print(json.dumps(request), flush=True)
    for line in sys.stdin:
        got = json.loads(line)
        if got.get("id") == request_id and "method" not in got:
            text = json.dumps({k: v for k, v in got.items() if k in ("result", "error")})
            return {"content": [{"type": "text", "text": text}]}
    raise SystemExit(0)


def main(mode: str) -> int:
    for line in sys.stdin:
        message = json.loads(line)
        if mode.endswith("asks") and message.get("method") == "tools/list":
            names = [method.replace("/", "_") for method in ASKS]
            tools = [{"name": name, "inputSchema": OBJECT} for name in names]
            reply: dict[str, Any] | None = {
                "jsonrpc": "2.0", "id": message["id"], "result": {"tools": tools}
            }
        elif mode.endswith("asks") and message.get("method") == "tools/call":
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": ask(message)}
        else:
            reply = answer(message, mode)
        if reply is not None:
            print(json.dumps(reply), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1] if len(sys.argv) > 1 else "tools"))
