"""Chat requests from a browser, turned into a ``Transcript``.

Theory of operation
-------------------
The endpoint is stateless: every POST carries the whole conversation, as a
chat UI keeps it. Two body shapes are accepted, told apart per message:

- the AI SDK ``useChat`` form: ``{"id", "messages": [UIMessage…], "trigger",
  …}`` where each message has ``role`` and ``parts`` (``text``, ``reasoning``,
  ``step-start``, tool parts ``tool-<name>`` / ``dynamic-tool`` with
  ``toolCallId``, ``input``, ``state``, ``output`` or ``errorText``);
- a simple form: ``{"messages": [{"role": "user", "content": "…"}, …]}``.

An assistant UI message spans several model turns, separated by
``step-start`` parts; each step becomes one ``AssistantMessage`` (its text,
reasoning and calls) followed by the ``ToolResultMessage`` of each call that
has an output, so the agent's history reads as if it had produced it (a
reasoning part's ``providerMetadata`` gives the reply's ``reasoning_origin``
back, as ``aisdk`` sent it: DeepSeek's and Kimi's thinking modes need the
reasoning of past tool-call replies back, and only their own; a client of
``/api/events`` finds it as the reasoning event's ``origin`` and sends it back
the same way, since calls come back only as parts): each
call keeps its place among the step's text (``ToolCall.offset``), as the
agent's own transcript does.
A call's ``input`` that is not an object (the model's text of a malformed or
cut-off call, as a ``tool-input-error`` gave it) is kept as text
(``ToolCall.arguments_text``), as the proxy keeps such a call. A file a user
attached (``useChat``'s ``sendMessage({text, files})``: a ``file`` part, a
``data:`` URL) was skipped, so the model answered as if nothing had been
attached; it is now part of the user's text, where it was among the parts: a
text file (``text/*``, JSON, XML, YAML, or a file of another type or none whose
bytes are UTF-8 text: a browser calls a ``.ts`` file ``video/mp2t``) as a
line naming it and then its text,
any other file as a line naming it, its type and size, which a text model
cannot read but can say so. A call the user denied (ai 6's tool approval,
``output-denied``, from a front end whose history holds one) is a call with an
error result saying so, and the user's reason. Other parts this server cannot
use (sources, data parts, an assistant's files) are skipped; a
call that never got an output is dropped with its result, since a transcript
must not hold a call without a result.

Validation is at this boundary, with msgspec; anything malformed raises
``ChatRequestError`` whose message names the problem (the endpoint answers
400 with it). The conversation must end with a user message.

A browser's ``EventSource`` can only GET, so ``parse_chat_query`` reads the
same conversation from a query string: ``prompt=TEXT`` (one user message)
or ``messages=JSON`` (the ``messages`` array of a POST body, either shape).
"""

from __future__ import annotations

import binascii
from collections.abc import Sequence
from typing import Any, Literal, TypeVar
from urllib.parse import unquote_to_bytes

import msgspec

from streamtools.model import ReasoningOrigin
from streamtools.results import decode_json
from streamtools.transcript import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    Transcript,
    UserMessage,
)
from streamtools.ui.aisdk import METADATA_KEY

__all__ = ["ChatRequestError", "parse_chat_query", "parse_chat_request"]

_json = msgspec.json.Encoder()
T = TypeVar("T")


class ChatRequestError(ValueError):
    """The request body is not a conversation this endpoint understands."""


class _Part(msgspec.Struct, kw_only=True):
    type: str
    text: str | None = None
    toolCallId: str | None = None
    toolName: str | None = None
    input: Any = None
    rawInput: Any = None  # a static tool part's input that failed (``tool-input-error``)
    output: Any = None
    errorText: str | None = None
    state: str | None = None
    providerMetadata: Any = None  # a reasoning part's: ``_origin``; others are not read
    approval: Any = None  # a denied call's (``output-denied``): ``{"approved", "reason"}``
    url: str | None = None  # a file part's (``data:`` URL, or where it is)
    mediaType: str | None = None
    filename: str | None = None


class _Message(msgspec.Struct, kw_only=True):
    role: Literal["system", "user", "assistant"]
    parts: list[_Part] | None = None
    content: str | None = None


class _Body(msgspec.Struct, kw_only=True):
    messages: list[_Message]


_decoder = msgspec.json.Decoder(_Body)
_messages_decoder = msgspec.json.Decoder(list[_Message])


def parse_chat_request(body: bytes) -> Transcript:
    """The conversation in ``body`` (JSON) as a new transcript."""
    parsed = _decode(_decoder, body, "request body", "invalid chat request")
    return _transcript(parsed.messages)


def parse_chat_query(params: Sequence[tuple[str, str]]) -> Transcript:
    """The conversation in a GET request's query parameters (decoded pairs, in
    order): one ``prompt`` or one ``messages``; any other parameter (a cache
    buster) is ignored."""
    given = [(key, value) for key, value in params if key in ("prompt", "messages")]
    if len(given) != 1:
        raise ChatRequestError(
            "give the conversation as one `prompt` or one `messages` query parameter"
        )
    key, value = given[0]
    if key == "prompt":
        return Transcript(messages=[UserMessage(content=value)])
    what = "the `messages` query parameter"
    invalid = "invalid `messages` query parameter"
    return _transcript(_decode(_messages_decoder, value.encode(), what, invalid))


def _decode(decoder: msgspec.json.Decoder[T], data: bytes, what: str, invalid: str) -> T:
    try:
        # read again with U+FFFD for lone surrogate halves if it has any: a browser's
        # JSON.stringify writes one of a string cut inside an emoji
        return decode_json(decoder.decode, data)
    except msgspec.ValidationError as exc:
        raise ChatRequestError(f"{invalid}: {exc}") from None
    except msgspec.DecodeError as exc:
        raise ChatRequestError(f"{what} is not valid JSON: {exc}") from None
    except RecursionError:  # deeper than msgspec goes (about a thousand levels)
        raise ChatRequestError(f"{what} is nested too deeply") from None
    except UnicodeDecodeError as exc:  # msgspec's error for bytes in a string that are not UTF-8
        raise ChatRequestError(f"{what} is not valid UTF-8: {exc.reason}") from None


def _transcript(messages: list[_Message]) -> Transcript:
    transcript = Transcript()
    for n, message in enumerate(messages):
        if message.parts is not None:
            transcript.messages.extend(_from_parts(message, n))
        elif message.content is not None:
            transcript.messages.append(_from_content(message.role, message.content))
        else:
            raise ChatRequestError(
                f"message {n} has neither `parts` nor `content` - at `$.messages[{n}]`"
            )
    if not transcript.messages or not isinstance(transcript.messages[-1], UserMessage):
        raise ChatRequestError("the conversation must end with a user message")
    return transcript


def _from_content(role: str, content: str) -> Message:
    if role == "system":
        return SystemMessage(content=content)
    if role == "user":
        return UserMessage(content=content)
    return AssistantMessage(text=content)


def _from_parts(message: _Message, n: int) -> list[Message]:
    parts = message.parts or []
    if message.role != "assistant":
        return [_from_content(message.role, _user_text(parts))]
    out: list[Message] = []
    step: list[_Part] = []
    for part in [*parts, _Part(type="step-start")]:  # a sentinel closes the last step
        if part.type == "step-start":
            out.extend(_from_step(step, n))
            step = []
        else:
            step.append(part)
    return out


def _user_text(parts: list[_Part]) -> str:
    """A user's (or system) message's text: its text parts, and the files
    attached (see the module docstring) each in a paragraph of its own."""
    pieces: list[str] = []
    text: list[str] = []
    for part in parts:
        if part.type == "text":
            text.append(part.text or "")
        elif part.type == "file":
            if text:
                pieces.append("".join(text))
                text = []
            pieces.append(_file_text(part))
    if text:
        pieces.append("".join(text))
    return "\n\n".join(pieces)


_TEXT_TYPES = ("application/json", "application/xml", "application/yaml", "application/x-yaml")


def _text_kind(media_type: str) -> bool | None:
    """True for a text type; False for a picture or sound (never read as text);
    None when the bytes must tell: a browser names many source files by another
    type (``.ts`` is ``video/mp2t``, ``.sql`` ``application/sql``) or by none."""
    kind = media_type.split(";", 1)[0].strip().lower()
    if kind.startswith("text/") or kind in _TEXT_TYPES or kind.endswith(("+json", "+xml")):
        return True
    if kind.startswith(("image/", "audio/")):
        return False
    return None


def _file_text(part: _Part) -> str:
    """One attached file as the model reads it: a text file's text after a line
    naming it; any other file a line naming it, its type and size (a ``data:``
    URL) or where it is (an ``http(s)`` URL)."""
    name = part.filename or "unnamed"
    media_type = part.mediaType or "application/octet-stream"
    url = part.url or ""
    if not url.startswith("data:"):
        where = f" <{url}>" if url.startswith(("http://", "https://")) else ""
        return f"[file: {name}{where}, {media_type}]"
    header, _, payload = url.partition(",")
    encoded = header.lower().endswith(";base64")
    kind = _text_kind(media_type)
    if kind is not False:
        try:
            data = binascii.a2b_base64(payload) if encoded else unquote_to_bytes(payload)
            text = data.decode("utf-8")
            # of a type that does not say: text if it is UTF-8 with no NUL (binary
            # formats have some, or bytes UTF-8 refuses, within their first bytes)
            if kind or (text and "\x00" not in text):
                return f"[file: {name}, {media_type}]\n{text}"
        except (binascii.Error, UnicodeDecodeError):
            pass  # not text after all: said as a file the model cannot read
    size = len(payload.rstrip("=")) * 3 // 4 if encoded else len(unquote_to_bytes(payload))
    return f"[file: {name}, {media_type}, {size} bytes]"


def _from_step(parts: list[_Part], n: int) -> list[Message]:
    text: list[str] = []
    reasoning: list[str] = []
    origin: ReasoningOrigin | None = None
    calls: list[ToolCall] = []
    offsets: list[int] = []  # the length of the step's text before each call
    results: list[ToolResultMessage] = []
    for part in parts:
        if part.type == "text":
            text.append(part.text or "")
        elif part.type == "reasoning":
            reasoning.append(part.text or "")
            origin = _origin(part, n) or origin
        elif part.type == "dynamic-tool" or part.type.startswith("tool-"):
            name = part.toolName if part.type == "dynamic-tool" else part.type[len("tool-") :]
            if not name or not part.toolCallId:
                raise ChatRequestError(
                    f"tool part without a name or `toolCallId` - at `$.messages[{n}].parts`"
                )
            result = _result(part, name)
            if result is None:
                continue
            calls.append(_call(part.toolCallId, name, part))
            offsets.append(sum(map(len, text)))
            results.append(result)
    if not (text or reasoning or calls):
        return []
    # a call with text after it keeps its place (``ToolCall.offset``), so that a
    # dialect writes the reply back in the model's order; None is after the text
    whole = "".join(text)
    placed = tuple(
        msgspec.structs.replace(c, offset=n) if n < len(whole) else c
        for c, n in zip(calls, offsets, strict=True)
    )
    assistant = AssistantMessage(
        text=whole, calls=placed, reasoning="".join(reasoning), reasoning_origin=origin
    )
    return [assistant, *results]


def _origin(part: _Part, n: int) -> ReasoningOrigin | None:
    """Where a reasoning part's reply's reasoning came from, as the stream gave
    it (``aisdk.origin_metadata``): ``OpenAIChat`` sends the reasoning back to
    that server only. Another provider's metadata is not ours to read."""
    meta = part.providerMetadata
    ours = meta.get(METADATA_KEY) if isinstance(meta, dict) else None
    if not isinstance(ours, dict) or ours.get("reasoningOrigin") is None:
        return None
    try:
        return msgspec.convert(ours["reasoningOrigin"], ReasoningOrigin)
    except msgspec.ValidationError as exc:
        raise ChatRequestError(
            f"invalid reasoning origin: {exc} - at `$.messages[{n}].parts`"
        ) from None


def _call(call_id: str, name: str, part: _Part) -> ToolCall:
    """The part's call. ``input`` is the arguments object; anything else is text
    kept as written (``ToolCall.arguments_text``), which a dialect writes back in
    its call form: a ``tool-input-error`` (the model's malformed or cut-off call)
    comes back from the client with the model's text as ``input`` (``rawInput`` on
    a static tool part), and read as ``{}`` the model would see a clean call it
    never made next to an error about it. That text is also the call's ``raw``
    (``CallError.raw``): in a prompt dialect it is the model's whole markup
    (``<tool_call>{…``), which the dialect writes back as it was when it is its
    own (``Renderer.render_call``) rather than inside a new call; in native mode
    it is the arguments text. A string holding a JSON object (a client that kept
    the arguments as OpenAI sends them) is that object."""
    value = part.input if part.input is not None else part.rawInput
    if value is None:
        return ToolCall(id=call_id, name=name, arguments={})
    if isinstance(value, dict):
        return ToolCall(id=call_id, name=name, arguments=value)
    text = value if isinstance(value, str) else _json.encode(value).decode()
    if not text.strip():
        return ToolCall(id=call_id, name=name, arguments={})
    try:
        decoded = msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError):
        decoded = None
    if isinstance(decoded, dict):
        return ToolCall(id=call_id, name=name, arguments=decoded)
    return ToolCall(id=call_id, name=name, arguments={}, arguments_text=text, raw=text)


def _result(part: _Part, name: str) -> ToolResultMessage | None:
    call_id = part.toolCallId or ""
    if part.state == "output-available":
        output = part.output
        content = output if isinstance(output, str) else _json.encode(output).decode()
        return ToolResultMessage(call_id=call_id, name=name, content=content)
    if part.state == "output-error":
        return ToolResultMessage(
            call_id=call_id, name=name, content=part.errorText or "error", is_error=True
        )
    if part.state == "output-denied":
        # ai 6's tool approval: the user said no, and the model is told so (with the
        # reason given), as the SDK's own server tells it; dropped, the call vanished
        # and the model asked again for what the user had refused
        approval = part.approval if isinstance(part.approval, dict) else {}
        reason = approval.get("reason")
        told = "The user denied this tool call; it was not run."
        if isinstance(reason, str) and reason.strip():
            told += f" Their reason: {reason.strip()}"
        return ToolResultMessage(call_id=call_id, name=name, content=told, is_error=True)
    return None
