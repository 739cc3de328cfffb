"""Built-in tools' items (Responses) and blocks (Anthropic), as text the model reads.

A conversation replayed from another backend (OpenAI's own API, a gateway
that runs hosted tools) carries the items of tools the upstream model does not
have: a ``web_search_call``, a ``code_interpreter_call`` with its logs, a shell
command and what it printed. Refused with a 400, they stopped the conversation
for good: every later request holds them. So each becomes what it tells, or is
left out when it tells the model nothing it can use (``note``):

* a call of a hosted or client-run built-in tool (``web_search_call``,
  ``file_search_call``, ``code_interpreter_call``, ``image_generation_call``,
  ``computer_call``, ``local_shell_call``, ``shell_call``, ``apply_patch_call``,
  ``mcp_call``, ``program``) and an output that answers one
  (``computer_call_output``, ``local_shell_call_output``,
  ``shell_call_output``, ``apply_patch_call_output``, ``program_output``) is a
  bracketed note in the assistant's turn, in its place: ``[web_search_call:
  search: weather in Paris]``, with the text it carries (the query, the code
  and its logs, the command and its output, the files found). An image in it
  (a screenshot, a generated image) is the placeholder a pasted one gets. Not
  a call in the dialect: the model was not given these tools, and a call of
  one in its history would have it call them again.
* a ``compaction`` item (the earlier conversation, encrypted by OpenAI's
  ``/responses/compact``) is a note on the user's side, where the history it
  stands for began: the model cannot read it, but learns that there was more.
* ``reasoning`` (its summary, content or ``encrypted_content``: reasoning the
  proxy gave, ``reasoning_item``, or another model's; the chat templates of
  reasoning models drop past reasoning too), ``compaction_trigger`` and
  ``configuration_update`` (requests to the API that served them),
  ``mcp_list_tools``, ``mcp_approval_request`` / ``mcp_approval_response`` and
  ``tool_search_call`` are left out: they list or grant tools the model does not
  have here. (A ``tool_search_output`` declares the tools it found: the wire
  reads it as ``additional_tools``.)

Any other type is a 400 that names it, as is ``item_reference`` (stored state).

Anthropic's server tools leave blocks in an assistant message the same way
(``block_note``): a ``server_tool_use`` or ``mcp_tool_use`` block and the
``*_tool_result`` block after it (a web search's titles and URLs, its pages
being encrypted; a fetched page's text; code execution's output) are notes too,
as is the result of a server tool not named here (the advisor's advice: its
text, else its content as JSON), and a tool search's result is left out.

A field of an unexpected shape is shown as JSON, never refused: a note only
informs the model.
"""

from __future__ import annotations

import shlex
from typing import Any

import msgspec

from streamtools.proxy.request import AssistantTurn, RequestError, media_text, omitted

__all__ = ["COMPACTION", "add_note", "block_note", "note", "reasoning_item"]

_SILENT = frozenset(
    {
        "reasoning",
        "compaction_trigger",
        "configuration_update",
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_approval_response",
        "tool_search_call",
    }
)
COMPACTION = "compaction"
_IMAGE = omitted("input_image")
_COMPACTED = "the earlier conversation, compacted into an encrypted form this model cannot read"


def _show(value: Any) -> str:
    """A field's value as text: a string as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    return msgspec.json.encode(value).decode()


def _web_search(item: dict[str, Any]) -> list[tuple[str, Any]]:
    action = item.get("action")
    if not isinstance(action, dict):
        return [("action", action)] if action is not None else []
    kind = action.get("type")
    if kind == "search":
        queries = action.get("queries")
        query = "; ".join(map(_show, queries)) if isinstance(queries, list) and queries else None
        lines = [("search", action.get("query") or query)]
        sources = action.get("sources")
        if isinstance(sources, list) and sources:
            urls = [s.get("url") if isinstance(s, dict) else s for s in sources]
            lines.append(("sources", " ".join(map(_show, urls))))
        return lines
    if kind == "open_page":
        return [("open_page", action.get("url"))]
    if kind == "find_in_page":
        return [("find_in_page", action.get("pattern")), ("url", action.get("url"))]
    return [("action", action)]


def _file_search(item: dict[str, Any]) -> list[tuple[str, Any]]:
    queries = item.get("queries")
    lines: list[tuple[str, Any]] = [
        ("queries", "; ".join(map(_show, queries)) if isinstance(queries, list) else queries)
    ]
    for result in item.get("results") or []:
        if isinstance(result, dict):
            lines.append((f"result ({_show(result.get('filename'))})", result.get("text")))
    return lines


def _code_interpreter(item: dict[str, Any]) -> list[tuple[str, Any]]:
    lines: list[tuple[str, Any]] = [("code", item.get("code"))]
    for out in item.get("outputs") or []:
        kind = out.get("type") if isinstance(out, dict) else None
        if kind == "logs":
            lines.append(("logs", out.get("logs")))
        elif kind == "image":
            lines.append(("image", _IMAGE))
    return lines


def _computer(item: dict[str, Any]) -> list[tuple[str, Any]]:
    actions = item.get("actions")
    listed = actions if isinstance(actions, list) else []
    return [("action", a) for a in [item.get("action"), *listed] if a is not None]


def _shell(item: dict[str, Any]) -> list[tuple[str, Any]]:
    action = item.get("action")
    if not isinstance(action, dict):
        return [("action", action)]
    command, commands = action.get("command"), action.get("commands")
    if isinstance(command, list) and all(isinstance(c, str) for c in command):
        return [("command", shlex.join(command))]  # local_shell: one argv
    if isinstance(commands, list):
        return [("command", c) for c in commands]
    return [("action", action)]


def _shell_output(item: dict[str, Any]) -> list[tuple[str, Any]]:
    chunks = item.get("output")
    if not isinstance(chunks, list):  # local_shell_call_output: a string
        return [("output", chunks)]
    lines: list[tuple[str, Any]] = []
    for chunk in chunks:
        if not isinstance(chunk, dict):
            lines.append(("output", chunk))
            continue
        for stream in ("stdout", "stderr"):
            if chunk.get(stream):
                lines.append((stream, chunk[stream]))
        outcome = chunk.get("outcome")
        if isinstance(outcome, dict) and outcome.get("type") == "exit":
            lines.append(("exit code", outcome.get("exit_code")))
        elif isinstance(outcome, dict) and outcome.get("type") == "timeout":
            lines.append(("outcome", "timed out"))
    return lines


def _patch(item: dict[str, Any]) -> list[tuple[str, Any]]:
    op = item.get("operation")
    if not isinstance(op, dict):
        return [("operation", op)]
    operation = f"{_show(op.get('type'))} {_show(op.get('path'))}"
    return [("operation", operation), ("diff", op.get("diff"))]


def _mcp(item: dict[str, Any]) -> list[tuple[str, Any]]:
    tool = f"{_show(item.get('server_label'))}.{_show(item.get('name'))}"
    return [
        ("tool", tool),
        ("arguments", item.get("arguments")),
        ("output", item.get("output")),
        ("error", item.get("error")),
    ]


def _fields(*names: str) -> Any:
    return lambda item: [(n, item.get(n)) for n in names]


_NOTES: dict[str, Any] = {
    "web_search_call": _web_search,
    "file_search_call": _file_search,
    "code_interpreter_call": _code_interpreter,
    "image_generation_call": lambda item: [
        ("prompt", item.get("revised_prompt")),
        ("image", _IMAGE if item.get("result") else None),
    ],
    "computer_call": _computer,
    "computer_call_output": lambda item: [("screenshot", _IMAGE)],
    "local_shell_call": _shell,
    "local_shell_call_output": _shell_output,
    "shell_call": _shell,
    "shell_call_output": _shell_output,
    "apply_patch_call": _patch,
    "apply_patch_call_output": _fields("status", "output"),
    "mcp_call": _mcp,
    "program": _fields("code"),
    "program_output": _fields("result"),
    COMPACTION: lambda item: [("", _COMPACTED)],
}


def add_note(turn: AssistantTurn, text: str) -> None:
    """``text`` (a note) in ``turn``, on lines of its own."""
    apart = turn.written and not turn.texts[-1].endswith("\n")
    turn.text(("\n" if apart else "") + text + "\n")


def note(item: dict[str, Any], kind: Any, where: str) -> str:
    """The note the model reads for a built-in tool's ``item`` of type
    ``kind`` (module docstring), or "" for one that is left out."""
    if isinstance(kind, str) and kind in _SILENT:  # a list as the type is not hashable
        return ""
    describe = _NOTES.get(kind) if isinstance(kind, str) else None
    if describe is None:
        if kind == "item_reference":
            raise RequestError(
                f"{where}: item_reference is not supported (the proxy keeps no state: "
                "send the whole conversation as 'input')"
            )
        raise RequestError(
            f"{where}: items of type {kind!r} are not supported: the proxy reads messages, "
            "function and custom tool calls and their outputs, and the items of built-in tools"
        )
    return _format(kind, describe(item))


def _format(kind: str, pairs: list[tuple[str, Any]]) -> str:
    """``[kind: label: value]``, one line per pair when there are several."""
    lines = [
        f"{label}: {_show(value).rstrip()}" if label else _show(value)
        for label, value in pairs
        if value is not None
    ]
    if not lines:
        return f"[{kind}]"
    if len(lines) == 1 and "\n" not in lines[0]:
        return f"[{kind}: {lines[0]}]"
    return f"[{kind}:\n" + "\n".join(lines) + "\n]"


# -- Anthropic's server tools: blocks of an assistant message ---------------------


def _server_tool_use(block: dict[str, Any]) -> list[tuple[str, Any]]:
    return [("tool", block.get("name")), ("input", block.get("input"))]


def _web_search_result(block: dict[str, Any]) -> list[tuple[str, Any]]:
    content = block.get("content")
    if not isinstance(content, list):  # an error: {"type": …_error, "error_code"}
        return [("error", content.get("error_code") if isinstance(content, dict) else content)]
    found = [r for r in content if isinstance(r, dict)]  # the page text is encrypted
    return [("result", f"{_show(r.get('title'))} {_show(r.get('url'))}") for r in found]


def _web_fetch_result(block: dict[str, Any]) -> list[tuple[str, Any]]:
    content = block.get("content")
    if not isinstance(content, dict) or "error_code" in content:
        return [("error", content.get("error_code") if isinstance(content, dict) else content)]
    document = content.get("content")
    text = media_text(document) if isinstance(document, dict) else None
    return [("url", content.get("url")), ("content", text)]


def _execution_result(block: dict[str, Any]) -> list[tuple[str, Any]]:
    content = block.get("content")
    if not isinstance(content, dict):
        return [("content", content)]
    if "error_code" in content:
        return [("error", content["error_code"])]
    # a file viewed by the text editor is its text; output files are ids only
    text = content.get("content") if isinstance(content.get("content"), str) else None
    picked = [(k, content.get(k)) for k in ("stdout", "stderr", "return_code")]
    return [(k, v) for k, v in [*picked, ("content", text)] if v not in (None, "")]


def _mcp_result(block: dict[str, Any]) -> list[tuple[str, Any]]:
    content = block.get("content")
    if isinstance(content, list):
        content = "\n".join(_show(b.get("text") if isinstance(b, dict) else b) for b in content)
    return [("error" if block.get("is_error") else "output", content)]


_BLOCKS: dict[str, Any] = {
    "server_tool_use": _server_tool_use,
    "mcp_tool_use": lambda b: [("tool", f"{_show(b.get('server_name'))}.{_show(b.get('name'))}"),
                               ("input", b.get("input"))],
    "web_search_tool_result": _web_search_result,
    "web_fetch_tool_result": _web_fetch_result,
    "code_execution_tool_result": _execution_result,
    "bash_code_execution_tool_result": _execution_result,
    "text_editor_code_execution_tool_result": _execution_result,
    "mcp_tool_result": _mcp_result,
}


def block_note(block: dict[str, Any], kind: Any) -> str | None:
    """The note the model reads for a server tool's block of type ``kind`` in an
    assistant message (Anthropic's ``server_tool_use``, its ``*_tool_result``
    blocks, ``mcp_tool_use`` / ``mcp_tool_result``), "" for one left out (a tool
    search's result: tools the model does not have here), None for a type that
    is not a server tool's."""
    if kind == "tool_search_tool_result":
        return ""
    describe = _BLOCKS.get(kind) if isinstance(kind, str) else None
    if describe is None and isinstance(kind, str) and kind.endswith("_tool_result"):
        describe = _other_result  # a server tool's result this module does not know
    return None if describe is None else _format(kind, describe(block))


def _other_result(block: dict[str, Any]) -> list[tuple[str, Any]]:
    """The result of another server tool (the advisor's ``advisor_tool_result``,
    ``{"type": "advisor_result", "text": …}``, or one Anthropic adds later): its
    text where it has one, else its content as JSON. Refused with a 400 as an
    unknown block, a conversation that once had it could not go on."""
    content = block.get("content")
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return [("result", content["text"])]
    return [("result", content)]


def reasoning_item(item_id: str, text: str, status: str) -> dict[str, Any]:
    """The model's reasoning as a Responses output item: ``reasoning_text``
    content, no summary (the text is the reasoning itself, which Codex shows
    with ``show_raw_agent_reasoning``)."""
    content = [{"type": "reasoning_text", "text": text}] if text else []
    return {"id": item_id, "type": "reasoning", "status": status, "summary": [],
            "content": content}
