"""The render side shared by every dialect: what the model is told, and how history reads.

Theory of operation
-------------------
A ``Renderer`` writes everything a prompt-based dialect puts in front of the
model. ``system_prompt`` is assembled from four parts, in this order:

1. the caller's own system prompt (``base``), untouched;
2. the tool definitions, in the dialect's natural form (``tool_definitions``);
3. the protocol: how to call, when to stop, how results come back
   (``instructions``);
4. a multi-step example built from the *actual* tools (``example``): call ->
   result -> next call -> result -> final answer, with argument values derived
   from each schema (defaults, enums, formats), so the model sees its own tools
   used with its own parameter names rather than an unrelated toy.

Each dialect module subclasses ``Renderer`` and supplies the syntax: tool
definitions, ``call_form`` (the call with placeholders, which the instructions
and the format reminder both show), ``format_call`` (a past call as the model
would have written it; ``format_call_text``, one whose arguments are text that is
not a JSON object), ``render_result`` / ``render_error`` (escaped for the
dialect) and the continuation. ``protocol`` lays the instructions out the same
way for every dialect (intro, call form, the dialect's rules, how results come
back, when to answer instead), so the dialects differ only where their syntax
does. The four JSON-family dialects share two result forms, each a base class
in ``streamtools.prompts.results``. ``read_result`` is the inverse of
``render_result``/``render_error``; tests use it to prove escaping is lossless.

Escaping rule: a tool's output is data. Whatever it contains (closing tags,
fences, a forged call, ``<think>``, ``]]>``), the rendered text must not contain
anything the dialect's parser would take as markup, and ``read_result`` must
give the output back verbatim. Each dialect states how it achieves this.
Nor may anything a tool or a model wrote carry a chat template's special token
(``<|im_end|>``) into the prompt, where a server's tokenizer would read it as
one: ``streamtools.prompts.special_tokens`` says how each place defuses it.

Core module: standard library and msgspec only.
"""

from __future__ import annotations

import functools
import json
import math
import operator
import re
from collections.abc import Callable, Sequence
from typing import Any, Literal

from streamtools.errors import ToolDefinitionError
from streamtools.model import ToolSpec
from streamtools.prompts.self_contained import self_contained
from streamtools.prompts.special_tokens import (
    SPECIAL_TOKEN,
    defuse_json,
    defuse_text,
    holds_special_token,
)
from streamtools.schema import MAX_DEPTH, alternatives, resolve
from streamtools.transcript import ToolCall

__all__ = [
    "REASONING_TAG",
    "ReadResult",
    "Renderer",
    "example_arguments",
    "json_text",
    "listed",
    "mapping",
    "spoken",
    "summary_line",
    "unended",
]

ReadResult = tuple[str, str, bool]  # (tool name, content, is_error)

_SUMMARY_MAX = 100


def json_text(value: Any, *, escape: str = "", indent: int | None = None) -> str:
    """JSON text with the characters in ``escape`` written as ``\\uXXXX``.

    Those characters can then only appear inside the text as escapes, so a JSON
    string can carry ``<``, a backtick or ``{`` without any of them being seen
    as markup; decoding gives the original back. A chat template's special
    token never appears in it either (``defuse_json``), whatever ``escape`` is.
    """
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    for ch in escape:
        text = text.replace(ch, f"\\u{ord(ch):04x}")
    return defuse_json(text)


# Reasoning tags any parser may honour: text carrying one is never shown raw.
REASONING_TAG = r"<\s*/?\s*(?:think|reasoning)"


def summary_line(spec: ToolSpec) -> str:
    """One line for hybrid selection: the description's first sentence, bounded."""
    text = " ".join(spec.description.split())
    match = re.match(r"(.+?[.!?])(\s|$)", text)
    line = match.group(1) if match else text
    if len(line) > _SUMMARY_MAX:
        line = line[: _SUMMARY_MAX - 1].rstrip() + "…"
    return line


def listed(value: Any) -> list[Any]:
    """``value`` if it is a list, else empty: schemas from elsewhere can be malformed."""
    return value if isinstance(value, list) else []


def mapping(value: Any) -> dict[str, Any]:
    """``value`` if it is a dict, else empty (see ``listed``)."""
    return value if isinstance(value, dict) else {}


def example_value(schema: Any, name: str, root: dict[str, Any], depth: int = 0) -> Any:
    """A plausible value for ``schema``: default, first enum, or by type and format,
    within the bounds ``ToolRegistry`` checks (``_BOUNDS``, lengths, item counts)."""
    node = resolve(root, schema)
    for key in ("default", "const"):
        if key in node:
            return node[key]
    for key in ("enum", "examples"):
        if isinstance(node.get(key), list) and node[key]:
            return node[key][0]
    options = [o for o in alternatives(root, node) if o.get("type") != "null"]
    if options and depth <= MAX_DEPTH:  # (``json_type`` reads them the same way)
        return example_value(options[0], name, root, depth + 1)
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "integer":
        return _example_integer(node)
    if kind == "number":
        return _example_number(node)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    if kind == "array":
        if depth > 3:
            return []
        return [example_value(node.get("items"), name, root, depth + 1)] * _item_count(node)
    if kind == "object" or "properties" in node:
        return {} if depth > 3 else example_arguments(node, root, depth + 1)
    fmt = node.get("format")
    if fmt == "date":
        return _sized("2026-01-15", node)
    if fmt == "date-time":
        return _sized("2026-01-15T09:30:00Z", node)
    # (a name that ends in "_" or "-", or none, left a trailing space: text a
    # reader trims, which am_xml then wrote in CDATA and its typed reading trimmed)
    words = name.replace("_", " ").replace("-", " ")
    return _sized(f"example {words}".rstrip(), node)


# The bounds ``ToolRegistry`` checks (``schema._type``): an example call outside
# them taught the model a call its tool refuses (a ``maximum`` of 2 showed 3, a
# ``maxLength`` of 2 showed "example country"), and showed it succeeding.
_BOUNDS: dict[str, Callable[[Any, Any], bool]] = {
    "minimum": operator.ge,
    "exclusiveMinimum": operator.gt,
    "maximum": operator.le,
    "exclusiveMaximum": operator.lt,
}
_MOST_PADDING = 1000  # a minLength or minItems beyond this is left unmet, not written out


def _bound(value: Any) -> int | float | None:
    """A numeric bound to compare with: an integer of any size (exact; JSON has
    them and ``math.isfinite`` overflows on ``10**400``) or a finite float; an
    infinite bound (a JSON parser reads ``1e400`` so) or another value, None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if isinstance(value, int) or math.isfinite(value) else None


def _first_allowed(node: dict[str, Any], candidates: list[Any]) -> Any:
    """The first candidate within every bound of ``node``; the first one when
    none is (bounds that no value meets are the schema's own contradiction)."""
    bounds = [(test, _bound(node.get(key))) for key, test in _BOUNDS.items()]
    for value in candidates:  # Python compares an int of any size with a float exactly
        if all(test(value, b) for test, b in bounds if b is not None):
            return value
    return candidates[0]


def _example_integer(node: dict[str, Any]) -> int:
    """3, or the integer after a lower bound; else the nearest one within the bounds."""
    low = _bound(node.get("minimum", node.get("exclusiveMinimum")))
    candidates = [3 if low is None else max(3, int(low) + 1)]
    for key, nearest in (("maximum", math.floor), ("exclusiveMaximum", lambda b: math.ceil(b) - 1)):
        if (b := _bound(node.get(key))) is not None:
            candidates.append(nearest(b))
    for key, nearest in (("minimum", math.ceil), ("exclusiveMinimum", lambda b: math.floor(b) + 1)):
        if (b := _bound(node.get(key))) is not None:
            candidates.append(nearest(b))
    return int(_first_allowed(node, candidates))


def _float_bound(node: dict[str, Any], key: str) -> float | None:
    """``node[key]`` as a float bound (None where none is, or an integer no float reaches)."""
    b = _bound(node.get(key))
    try:
        return None if b is None else float(b)
    except OverflowError:
        return None


def _example_number(node: dict[str, Any]) -> float:
    """2.5, else a number within the bounds (between two, or one past one)."""
    lows = [b for k in ("minimum", "exclusiveMinimum") if (b := _float_bound(node, k)) is not None]
    highs = [b for k in ("maximum", "exclusiveMaximum") if (b := _float_bound(node, k)) is not None]
    candidates = [2.5]
    if lows and highs:
        candidates.append((max(lows) + min(highs)) / 2)
    candidates += [max(lows) + 1] if lows else []
    candidates += [min(highs) - 1] if highs else []
    return float(_first_allowed(node, candidates))


def _length(node: dict[str, Any], key: str) -> int | None:
    value = node.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _sized(text: str, node: dict[str, Any]) -> str:
    """``text`` cut to ``maxLength``, or padded to ``minLength`` (within reason)."""
    most, least = _length(node, "maxLength"), _length(node, "minLength")
    if most is not None:
        text = text[:most]
    if least is not None and len(text) < least <= _MOST_PADDING:
        text = text.ljust(least, "x")
    return text


def _item_count(node: dict[str, Any]) -> int:
    """One item, or as many as ``minItems`` asks (within reason), or none if
    ``maxItems`` is 0."""
    most, least = _length(node, "maxItems"), _length(node, "minItems")
    count = least if least is not None and 1 < least <= _MOST_PADDING else 1
    return min(count, most) if most is not None else count


def example_arguments(
    schema: dict[str, Any], root: dict[str, Any] | None = None, depth: int = 0
) -> dict[str, Any]:
    """Arguments for an example call: every required parameter (or the first one)."""
    root = schema if root is None else root
    props = mapping(schema.get("properties"))
    required = [k for k in listed(schema.get("required")) if isinstance(k, str) and k in props]
    keys = required or list(props)[:1]
    return {k: example_value(props[k], k, root, depth) for k in keys}


class Renderer:
    """Base of the six dialect renderers; subclasses fill in the syntax."""

    name: str = ""
    stop_marker: str | None = None
    #: what ends a call, restored on a past call written without it (``render_call``)
    call_close: str | None = None
    #: how results travel in prompt mode: inside a user message, or as tool messages
    results_role: Literal["user", "tool"] = "user"
    #: how a call of this dialect begins; a ``raw`` that does not was written in
    #: another dialect (a transcript carried across dialects) and is not reused
    raw_start: re.Pattern[str] = re.compile(r"(?!)")
    #: every reply has the dialect's shape, tools or not: always state the protocol
    format_always: bool = False
    #: the dialect allows one call per reply (``project`` splits multi-call replies)
    one_call_per_reply: bool = False
    #: a call is recognised only at the start of a line (``command``)
    calls_start_lines: bool = False
    #: the call syntax with placeholders, as the instructions and the reminder show it
    call_form: str = ""
    #: what the dialect calls a tool ("function" where the definitions say so)
    tool_word: str = "tool"
    #: what a reply without calls must not contain ("answer … without any tool call")
    call_noun: str = "tool call"
    #: how results come back: one rule of the instructions
    results_rule: str = ""

    # --- the system prompt ---------------------------------------------------

    def system_prompt(
        self,
        tools: Sequence[ToolSpec],
        *,
        base: str | None = None,
        few_shot: bool = True,
        more_tools: Sequence[ToolSpec] = (),
    ) -> str:
        """The whole system prompt. ``more_tools`` (hybrid mode) are listed as
        one-line summaries after the full definitions of ``tools``.
        ``ToolDefinitionError`` for a tool whose name the dialect cannot write
        (``check_tools``)."""
        self.check_tools([*tools, *more_tools])
        parts = [base.strip()] if base and base.strip() else []
        if tools:
            parts.append(self.tool_definitions(tools))
            parts.append(self.instructions())
            if few_shot:
                parts.append(self.example(tools))
        elif self.format_always:
            parts.append(self.instructions_without_tools())
        if more_tools:
            parts.append(self.tool_summaries(more_tools))
        return "\n\n".join(parts)

    def name_problem(self, name: str) -> str | None:
        """Why the dialect's parser would not read a call of a tool named ``name``
        back as that call (what the model is told to write loses or breaks the
        name), or None when it would. Names from ``ToolRegistry`` (letters,
        digits, ``_``, ``-``, ``.``) suit every dialect; names from elsewhere (a
        proxy request, a ``ToolSpec`` built by hand) may not. A name that is
        empty, or holds a line break or another character that does not print,
        is refused in every dialect: the definitions (``## name`` headings, the
        hybrid summaries' ``- name:`` lines) would break where it stands. So is
        one holding a chat template's special token (``<|im_end|>``), which a
        server would read as that token in the definitions and in every call."""
        if not name:
            return "it is empty"
        if not name.isprintable():
            return "it holds a line break or another character that does not print"
        if holds_special_token(name):
            return "it holds a chat template's special token (such as <|im_end|>)"
        return None

    def check_tools(self, tools: Sequence[ToolSpec]) -> None:
        """Refuse, with ``ToolDefinitionError``, a tool the model could not call in
        this dialect (``name_problem``): offered anyway, every call of it would
        fail to parse, and the model would be told to fix what it wrote right."""
        for spec in tools:
            problem = self.name_problem(spec.name)
            if problem is not None:
                raise ToolDefinitionError(
                    f"tool {spec.name!r} cannot be offered in the {self.name} dialect: "
                    f"{problem}; rename it (letters, digits, '_', '-' and '.' suit every "
                    "dialect) or use another dialect"
                )

    def tool_definitions(self, tools: Sequence[ToolSpec]) -> str:
        """Default form for the JSON dialects: a heading per tool, its description,
        and its parameters as compact JSON Schema, references inlined
        (``self_contained``)."""
        lines = ["# Tools", "", "You can use these tools."]
        for spec in tools:
            lines += ["", f"## {spec.name}"]
            if spec.description.strip():
                lines.append(_description_line(spec.description))
            lines.append("Parameters (JSON Schema): " + json_text(self_contained(spec.parameters)))
        return "\n".join(lines)

    def instructions(self) -> str:
        raise NotImplementedError

    def instructions_without_tools(self) -> str:
        """The reply format when no tool is offered (``format_always`` dialects
        only: the others say nothing then)."""
        return self.instructions()

    def protocol(self, intro: str, *rules: str) -> str:
        """Instructions in the one shape all dialects share: heading, ``intro``, the
        call form, the dialect's own ``rules``, how results come back, and when to
        answer instead of calling."""
        answer = (
            f"Call only the {self.tool_word}s defined under # Tools, and only when you need one. "
            f"When you have what you need, answer in plain text without any {self.call_noun}."
        )
        lines = [f"# How to call a {self.tool_word}", "", intro, "", self.call_form, ""]
        lines += [f"- {rule}" for rule in (*rules, self.results_rule, answer)]
        return "\n".join(lines)

    def tool_summaries(self, tools: Sequence[ToolSpec]) -> str:
        """Hybrid selection: each tool as ``- name: one line``."""
        lines = [f"- {t.name}: {defuse_text(summary_line(t))}" for t in tools]
        return (
            "# More tools\n\nThese tools exist, but their definitions are not shown. "
            + self.request_instructions()
            + "\n\n"
            + "\n".join(lines)
        )

    def request_instructions(self) -> str:
        # Only am_xml has a way to ask for definitions mid-run (am:request_tools);
        # promising one here would make a model end its run asking in plain text.
        return "You cannot call them until their definitions are added."

    def example(self, tools: Sequence[ToolSpec]) -> str:
        """A worked example: call, result, a second call, result, final answer."""
        first = tools[0]
        second = tools[1] if len(tools) > 1 else tools[0]
        calls = [
            ToolCall(id="call_0", name=first.name, arguments=example_arguments(first.parameters)),
            ToolCall(id="call_1", name=second.name, arguments=example_arguments(second.parameters)),
        ]
        if calls[1].name == calls[0].name:
            varied = _vary(calls[1].arguments, second.parameters)  # a repeat teaches a loop
            if varied is None:
                calls.pop()
            else:
                calls[1] = ToolCall(id="call_1", name=second.name, arguments=varied)
        lines = [
            "# Example",
            "",
            "An illustration of the protocol only: the request, values and results are made up.",
            "",
            "User: " + _request(calls),
        ]
        for n, call in enumerate(calls):
            thought = f"{'First' if n == 0 else 'Next'}, I will use `{call.name}`."
            lines.append(f"Assistant: {self.render_reply(thought, [call])}")
            result = self.render_result(call.name, f"(output of {call.name})", call_id=call.id)
            lines.append(f"Result: {result}")
        lines.append(
            "Assistant: "
            + self.render_final("Here is the answer, based on what the tools returned.")
        )
        return "\n".join(lines)

    # --- history ------------------------------------------------------------

    def render_call(self, call: ToolCall) -> str:
        """The text the model would write for ``call``. When ``call.raw`` is set (and
        is in this dialect, and holds no special token: ``_reusable``) it is used
        as written, with the closing marker restored if a stop sequence removed it
        (``_closed``); otherwise the canonical form is generated, with any special
        token defused (``defuse_call``)."""
        if call.raw is not None and self._reusable(call):
            return self._closed(call.raw)
        if call.arguments_text is not None:
            return self.defuse_call(self.format_call_text(call.name, call.arguments_text))
        return self.defuse_call(self.format_call(call.name, call.arguments))

    def defuse_call(self, text: str) -> str:
        """A call we wrote, with any special token in it defused. In the JSON
        dialects one can stand only in a JSON string, where ``defuse_json`` keeps
        the value, or in text that is not read back as a value (a past call's
        ``arguments_text``, ``command``'s bare name), where ``\\u003c`` is a
        visible spelling of ``<``."""
        return defuse_json(text)

    def _closed(self, raw: str) -> str:
        """``raw`` ending with the call's closing marker (``call_close``): as written
        when the marker is there, in any form the parser reads (``</tool_call >``),
        else restored. A stop sequence removed it, or the model ended its turn
        where it was due with a chat template's special token (``<|im_end|>``),
        which the parser reads as layout there. The token is left out: written
        back, a server that reads special tokens in the history would end the
        turn in the middle of it."""
        marker = self.call_close
        if marker is None:
            return raw
        token = _SPECIAL_END.search(raw)
        if token is not None:
            raw = raw[: token.start()]
        elif _closing(marker).search(raw) is not None:
            return raw
        return raw + marker

    def format_call(self, name: str, arguments: dict[str, Any]) -> str:
        raise NotImplementedError

    def format_call_text(self, name: str, arguments: str) -> str:
        """A past call whose arguments are not a JSON object (``ToolCall.arguments_text``:
        cut off by a token limit, a broken call a client kept): the call's form with
        the text as written where the object goes, escaped only as far as the
        dialect needs to keep the call's markup whole. The model reads back what it
        wrote, next to the result the client gave it."""
        raise NotImplementedError

    def render_reply(
        self, text: str, calls: Sequence[ToolCall], *, unparsed: bool = False
    ) -> str:
        """A whole past assistant reply: its visible text and its calls, each call
        where it stood in the text (``ToolCall.offset``; after the text when None).

        When every call has its raw text in this dialect, the reply is written back
        as the model wrote it: the text and the raw calls in order, nothing inserted
        between them (a newline only where the dialect needs a call to begin a
        line, between two calls, and after text ending in a backtick, which would
        make the call read as quoted syntax). Otherwise the canonical calls go on
        lines of their own, between the pieces of text. The text is ``spoken``
        (its special tokens defused). ``unparsed`` (``AssistantMessage.unparsed``):
        the text holds a failed call's raw text, written back as it is."""
        if not calls:
            return spoken(text) if unparsed else self.render_final(text)
        # the text before each call, then after the last
        *before, last = _pieces(text, calls)
        pieces = [*map(defuse_text, before), spoken(last)]
        if not all(self._reusable(c) for c in calls):
            parts = [pieces[0].rstrip("\n")] if pieces[0].strip() else []
            for call, after in zip(calls, pieces[1:], strict=True):
                parts.append(self.render_call(call))
                if after.strip():
                    parts.append(after.strip("\n"))
            return "\n".join(parts)
        # Whitespace alone before the first call separated it from nothing written
        # (a transcript without offsets keeps all text apart from the calls)
        out = pieces[0] if pieces[0].strip() else ""
        for n, call in enumerate(calls):
            if n:
                out += pieces[n]
            apart = n > 0 or self.calls_start_lines or out.endswith("`")
            if out and apart and not out.endswith("\n"):
                out += "\n"
            out += self.render_call(call)
        return out + pieces[-1] if pieces[-1].strip() else out

    def _reusable(self, call: ToolCall) -> bool:
        """Whether ``call.raw`` is written back as it is: it is in this dialect, and
        holds no special token but one ending it (which ``_closed`` leaves out).
        Elsewhere in a raw call a token may stand outside a JSON string, or in
        CDATA, or where the parser took it as layout, and no spelling of it is
        sure to read back the same: the canonical form is written instead."""
        raw = call.raw
        return (
            raw is not None
            and self.raw_start.match(raw) is not None
            and not holds_special_token(_SPECIAL_END.sub("", raw))
        )

    def render_final(self, text: str) -> str:
        """A reply without calls, as the dialect wants a final answer written
        (``spoken``: its special tokens defused)."""
        return spoken(text)

    def render_result(self, name: str, content: str, *, call_id: str) -> str:
        raise NotImplementedError

    def render_error(self, name: str, message: str, *, call_id: str) -> str:
        raise NotImplementedError

    def read_result(self, text: str) -> ReadResult | None:
        """Inverse of ``render_result``/``render_error`` (None if ``text`` is neither)."""
        raise NotImplementedError

    def continuation(self) -> str:
        return (
            "Continue with the task: call another tool if you still need one, "
            "otherwise give your final answer."
        )

    def format_reminder(self) -> str:
        """The exact call syntax again, for a model that got it wrong."""
        return f"Write each {self.tool_word} call exactly in this form:\n{self.call_form}"


# a chat template's special token ending the text, and the whitespace after it:
# the parsers' own ``calls.SPECIAL_TOKEN`` (where a closing marker is due, layout),
# so that every token they read as a model's end of turn (Gemma 4's ``<turn|>``,
# DeepSeek's ``<｜end▁of▁sentence｜>`` too, not only ``<|im_end|>``) is left out
_SPECIAL_END = re.compile(rf"(?:{SPECIAL_TOKEN.pattern})\s*\Z")


def _description_line(description: str) -> str:
    """A tool's description on the one line under its ``## name`` heading: its
    whitespace collapsed, special tokens defused, and a leading ``#`` escaped
    (``\\#``, as Markdown writes a literal one). Descriptions are often Markdown
    (an MCP server's ``# Fetch`` title); collapsed onto one line, such a title
    read as a heading of the prompt's own, a section beside ``# Tools`` that
    the tools after it seemed to belong to."""
    line = defuse_text(" ".join(description.split()))
    return "\\" + line if line.startswith("#") else line


def unended(text: str) -> str:
    """A past reply's text without a special token ending it (a server that does
    not strip the one the model ended its turn with), as ``Renderer._closed``
    leaves it out of a call: written back, it would end the turn where it is."""
    return _SPECIAL_END.sub("", text)


def spoken(text: str) -> str:
    """A past reply's visible text as it goes back into a prompt in plain text:
    ``unended``, and any other special token defused (``defuse_text``). A
    model's words may quote a tool's output, and a server that reads special
    tokens in the history would take a quoted ``<|im_start|>system`` as a turn."""
    return defuse_text(unended(text))


@functools.cache
def _closing(marker: str) -> re.Pattern[str]:
    """``marker`` ending a text, as the parsers read it: a tag may have whitespace
    before its ``>`` (``</tool_call >``, at most 8 characters, as XML allows)."""
    if marker.endswith(">"):
        return re.compile(re.escape(marker[:-1]) + r"[ \t\r\n]{0,8}>\s*\Z")
    return re.compile(re.escape(marker) + r"\s*\Z")


def _request(calls: Sequence[ToolCall]) -> str:
    # Bracketed: a stand-in for the user's words, which the model must not echo.
    names = [c.name for c in calls]
    if len(names) == 1:
        return f"(a request that needs `{names[0]}`)"
    if names[0] == names[1]:
        return f"(a request that needs `{names[0]}` twice)"
    return f"(a request that needs `{names[0]}`, then `{names[1]}`)"


# what a changed example value could break (``_vary`` leaves such a value alone)
_CONSTRAINED = ("enum", "const", "format", "pattern", "maximum", "exclusiveMaximum", "maxLength")


def _vary(arguments: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any] | None:
    """The same arguments with one free string or number changed (None if impossible)."""
    props = mapping(schema.get("properties"))
    for key, value in arguments.items():
        prop = resolve(schema, props.get(key))
        if any(k in prop for k in _CONSTRAINED):
            continue  # changing a constrained value could make the example invalid
        if isinstance(value, str):
            return {**arguments, key: "another " + value.removeprefix("example ")}
        if isinstance(value, int | float) and not isinstance(value, bool):
            return {**arguments, key: value + 1}
    return None


def _pieces(text: str, calls: Sequence[ToolCall]) -> list[str]:
    """``text`` cut where the calls stood: before the first call, between each two,
    after the last. Offsets are clamped into the text and kept in order."""
    pieces: list[str] = []
    start = 0
    for call in calls:
        at = len(text) if call.offset is None else min(max(call.offset, start), len(text))
        pieces.append(text[start:at])
        start = at
    pieces.append(text[start:])
    return pieces
