"""Anthropic-defined client tools: the input schemas the proxy shows the model.

Theory of operation
-------------------
Anthropic's Messages API lets a client declare some tools by ``type`` and
``name`` alone (``{"type": "bash_20250124", "name": "bash"}``): the client runs
them, Anthropic defines their input. A plain upstream knows nothing of them, so
``client_tool`` gives each known type the input schema and a description that
Anthropic documents (its tool-use docs; the anthropic SDK's
``ToolBash20250124Param``, ``ToolTextEditor*Param``, ``MemoryTool20250818Param``,
``BetaToolComputerUse*Param`` and the memory tool's command types), and the tool
then goes through the proxy as any custom tool does: shown in the dialect's
prompt, its calls come back as ``tool_use`` blocks under the declared name.

Versions differ where the docs say they do: the text editors before
``text_editor_20250429`` also have ``undo_edit``; the memory tool's ``insert``
takes ``insert_text`` where the text editor's takes ``new_str``; computer use
gained actions in ``computer_20250124`` and ``zoom`` in ``computer_20251124``
(when the declaration's ``enable_zoom`` is true). A computer tool's display
size (``display_width_px``, ``display_height_px``, ``display_number``) is
told the model in its description.

``None`` means the type is not one of these: the caller refuses it (a server
tool the upstream cannot run), but for a web search (``web_search_20250305``),
which is left out: Claude Code's WebSearch tool asks ``/v1/messages`` with that
tool alone ("Perform a web search for the query: …"), and a 400 failed each
search with an API error (https://github.com/anthropics/claude-code/issues/43950
shows one). With no tool left, the model is told that no search was run
(``NO_WEB_SEARCH``), so that it says so rather than writing results from
memory; Claude Code shows such an answer as a search that found nothing ("Did 0
searches", https://github.com/router-for-me/CLIProxyAPI/issues/121), and its
model goes on with another tool. Claude Code (2.1.274 on) forces that tool,
``tool_choice: {"type": "tool", "name": "web_search"}``, which named a tool no
longer there: a 400 again, as gateways that drop the tool met it
(https://github.com/BerriAI/litellm/issues/25477). ``unforced`` makes a choice
that forces a tool the proxy leaves out (``LEFT_OUT``), or ``any`` when they
are all the request declares, ``auto``.
"""

from __future__ import annotations

from typing import Any

from streamtools.model import ToolSpec

WEB_SEARCH = "web_search_"  # the type of Anthropic's web search tools, by its prefix
NO_WEB_SEARCH = (
    "[No web search was run: this model cannot search the web. Say so, and do not write "
    "search results from memory.]"
)


# server tools left out, not refused: a tool search (every tool is shown,
# ``defer_loading`` or not: nothing to search), the advisor (Claude Code
# declares it in every request once an advisor model is set), a web search
LEFT_OUT = ("tool_search_tool_", "advisor_", WEB_SEARCH)


def unforced(choice: Any, tools: Any) -> Any:
    """The request's ``tool_choice``, ``auto`` if it forces a tool left out
    (see the module docstring)."""
    if not isinstance(choice, dict) or not isinstance(tools, list):
        return choice
    gone = [t.get("name") for t in tools
            if isinstance(t, dict) and str(t.get("type")).startswith(LEFT_OUT)]
    kind = choice.get("type")
    if kind == "tool" and choice.get("name") in gone or kind == "any" and len(gone) == len(tools):
        return {k: v for k, v in choice.items() if k not in ("type", "name")} | {"type": "auto"}
    return choice


def web_search_only(raw: Any) -> bool:
    """Whether a request's ``tools`` are web search tools and nothing else."""
    return bool(raw) and isinstance(raw, list) and all(
        isinstance(t, dict) and str(t.get("type")).startswith(WEB_SEARCH) for t in raw
    )


def _string(about: str) -> dict[str, Any]:
    return {"type": "string", "description": about}


def _integer(about: str) -> dict[str, Any]:
    return {"type": "integer", "description": about}


def _ints(about: str, count: int) -> dict[str, Any]:
    return {
        "type": "array", "items": {"type": "integer"},
        "minItems": count, "maxItems": count, "description": about,
    }


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


_BASH = (
    "Run a command in a persistent bash shell (state such as the working directory "
    "and environment variables is kept between calls), or restart the shell.",
    _object(
        {
            "command": _string(
                "The bash command to run. Required unless the tool is being restarted."
            ),
            "restart": {
                "type": "boolean",
                "description": "Specifying true will restart this tool. "
                "Otherwise, leave this unspecified.",
            },
        },
        [],
    ),
)

_PATH = _string("Absolute path to the file or directory.")


def _editor(undo: bool) -> tuple[str, dict[str, Any]]:
    commands = ["view", "create", "str_replace", "insert"] + (["undo_edit"] if undo else [])
    about = (
        "View, create and edit plain-text files. `view` shows a file with line numbers "
        "(or lists a directory); `create` writes a new file with `file_text`; "
        "`str_replace` replaces `old_str`, which must occur exactly once, with `new_str`; "
        "`insert` inserts `new_str` after line `insert_line` (0: at the top)"
        + ("; `undo_edit` undoes the last edit of the file." if undo else ".")
    )
    return about, _object(
        {
            "command": {"type": "string", "enum": commands, "description": "The command to run."},
            "path": _PATH,
            "file_text": _string("For `create`: the content of the new file."),
            "old_str": _string(
                "For `str_replace`: the text to replace, exactly as in the file, "
                "whitespace included."
            ),
            "new_str": _string("For `str_replace`: the new text; for `insert`: the text."),
            "insert_line": _integer("For `insert`: the line to insert after (0: at the top)."),
            "view_range": _ints(
                "For `view` of a file: [start, end] line numbers, from 1; -1 reads to the end.", 2
            ),
        },
        ["command", "path"],
    )


_MEMORY = (
    "Your memory directory (/memories), kept across conversations: check it before "
    "starting a task and record what you learn as you go. `view` shows a file or lists "
    "a directory; `create` writes a file with `file_text`; `str_replace` replaces "
    "`old_str` with `new_str`; `insert` inserts `insert_text` at line `insert_line`; "
    "`delete` removes a file or directory; `rename` moves `old_path` to `new_path`.",
    _object(
        {
            "command": {
                "type": "string",
                "enum": ["view", "create", "str_replace", "insert", "delete", "rename"],
                "description": "The command to run.",
            },
            "path": _string("The file or directory, under /memories (all commands but `rename`)."),
            "view_range": _ints("For `view`: an optional [start, end] line range.", 2),
            "file_text": _string("For `create`: content to write to the file."),
            "old_str": _string("For `str_replace`: text to search for and replace."),
            "new_str": _string("For `str_replace`: text to replace with."),
            "insert_line": _integer("For `insert`: line number where text should be inserted."),
            "insert_text": _string("For `insert`: text to insert at the line."),
            "old_path": _string("For `rename`: current path of the file or directory."),
            "new_path": _string("For `rename`: new path for the file or directory."),
        },
        ["command"],
    ),
)

_ACTIONS_2024 = [
    "key", "type", "mouse_move", "left_click", "left_click_drag", "right_click",
    "middle_click", "double_click", "screenshot", "cursor_position",
]
_ACTIONS_2025 = _ACTIONS_2024 + [
    "hold_key", "left_mouse_down", "left_mouse_up", "triple_click", "scroll", "wait",
]


def _computer(tool: dict[str, Any], newer: bool, zoom: bool) -> tuple[str, dict[str, Any]]:
    actions = _ACTIONS_2025 if newer else _ACTIONS_2024
    if zoom and tool.get("enable_zoom") is True:
        actions = actions + ["zoom"]
    width, height = tool.get("display_width_px"), tool.get("display_height_px")
    number = tool.get("display_number")
    screen = ""
    if isinstance(width, int) and isinstance(height, int):
        screen = f" The display is {width}x{height} pixels"
        screen += f" (X11 display :{number})." if isinstance(number, int) else "."
    properties: dict[str, Any] = {
        "action": {"type": "string", "enum": actions, "description": "The action to perform."},
        "coordinate": _ints("(x, y): pixels from the left and the top edge of the screen.", 2),
        "text": _string(
            "For `type`: the text to type; for `key` and `hold_key` (and with clicks and "
            "`scroll`, keys to hold down): a key or combination such as `ctrl+s`."
        ),
    }
    if newer:
        properties |= {
            "scroll_direction": {
                "type": "string", "enum": ["up", "down", "left", "right"],
                "description": "For `scroll`: the direction.",
            },
            "scroll_amount": _integer("For `scroll`: the number of wheel clicks."),
            "duration": {"type": "number", "description": "For `hold_key` and `wait`: seconds."},
        }
        properties["start_coordinate"] = _ints("For `left_click_drag`: where the drag starts.", 2)
    if "zoom" in actions:
        properties["region"] = _ints("For `zoom`: [x1, y1, x2, y2], the area to view.", 4)
    about = (
        "Use a mouse and keyboard to control the computer's screen, and take "
        "screenshots to see it." + screen
    )
    return about, _object(properties, ["action"])


def client_tool(tool: dict[str, Any]) -> ToolSpec | None:
    """The tool ``tool`` (a request's declaration, with a string ``name``)
    declares, if its ``type`` is a known Anthropic-defined client tool."""
    kind = tool.get("type")
    found: tuple[str, dict[str, Any]] | None
    if kind in ("bash_20241022", "bash_20250124"):
        found = _BASH
    elif kind in ("text_editor_20241022", "text_editor_20250124"):
        found = _editor(undo=True)
    elif kind in ("text_editor_20250429", "text_editor_20250728"):
        found = _editor(undo=False)
    elif kind == "memory_20250818":
        found = _MEMORY
    elif kind == "computer_20241022":
        found = _computer(tool, newer=False, zoom=False)
    elif kind in ("computer_20250124", "computer_20251124"):
        found = _computer(tool, newer=True, zoom=kind == "computer_20251124")
    else:
        found = None
    if found is None:
        return None
    return ToolSpec(name=tool["name"], description=found[0], parameters=found[1])


KNOWN = (
    "bash_20250124, text_editor_20250728 (and their earlier versions), "
    "memory_20250818, computer_20250124, computer_20251124"
)
