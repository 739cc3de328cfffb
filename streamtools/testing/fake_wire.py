"""The wire formats ``FakeServer`` speaks: a scripted reply encoded as a real server sends it.

Theory of operation
-------------------
A reply is first made provider-neutral (``reply_chunks``: ``Chunk`` objects,
with the request's stop strings honoured as a server would: the text ends
before the earliest one, which is not sent, and calls after it are dropped),
then encoded for one wire (``encode``), one event per list item, so that the
server can send each in its own HTTP chunk and inject faults between them:

* ``openai``: chat-completion SSE chunks after a leading ``: OPENROUTER
  PROCESSING`` comment, ``delta.content`` / reasoning / ``tool_calls`` deltas
  (a call chunk's ``extra`` as the call's ``extra_content``, where Gemini puts
  its thought signature), a finish chunk, a usage chunk with empty
  ``choices`` when the request asked for one, and ``data: [DONE]``. The
  reasoning goes in ``reasoning_field``: ``reasoning_content`` (DeepSeek,
  vLLM; the default), ``reasoning`` (Ollama's OpenAI endpoint, Groq), or
  ``reasoning_details``, as OpenRouter streams it: the text in ``reasoning``
  and again as a ``reasoning.text`` fragment of ``reasoning_details`` (the
  block's ``index``; a chunk's ``signature`` on the fragment that ends its
  block), a redacted block as ``reasoning.encrypted`` with its data;
* ``anthropic``: ``message_start``, a ``ping``, ``thinking`` (closed by a
  ``signature_delta``: a ``ReasoningChunk``'s own signature, else a fake one),
  ``redacted_thinking`` / ``text`` / ``tool_use`` content blocks with their
  deltas and ``content_block_stop``, ``message_delta`` (``stop_reason``,
  ``stop_sequence``, usage) and ``message_stop``;
* ``ollama``: NDJSON lines of ``message.content`` / ``message.thinking``,
  whole tool calls (object arguments, no id, each on its own line at the end)
  and a ``done`` line with ``done_reason`` (never ``tool_calls``, as Ollama)
  and token counts.

On the anthropic and ollama wires, which name a call once as it begins, a
call's id and name go out with its first chunk whichever of its chunks held
them (a recording made with ``OpenAIChat`` names a call on its second chunk).

Error bodies (``error_body``) and in-band error events (``inband_error``)
have each wire's own shape. A ``FinishChunk(reason="error")`` among the
chunks (a recording of a stream that broke) is sent as the wire's in-band
error with its message, and ends the reply there: it was a ``stop`` finish
on Ollama's wire and an error without its words on the others, so a test
replaying a recorded failure through the server saw another failure, or none.
Text is cut into token-like pieces by ``token_pieces`` (up to four non-space
characters with their leading space), so a test can predict which piece holds
a given word.

Pure functions, standard library and msgspec only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from streamtools.model import (
    CallChunk,
    Chunk,
    FinishChunk,
    ReasoningChunk,
    TextChunk,
    UsageChunk,
)
from streamtools.providers.openrouter import DETAILS

__all__ = [
    "ANTHROPIC_STOP",
    "CONTENT_TYPES",
    "NEUTRAL_FINISH",
    "TOKENIZER_PATHS",
    "REASONING_FIELDS",
    "FakeCall",
    "ReasoningField",
    "Reply",
    "WIRES",
    "Wire",
    "anthropic_input",
    "anthropic_output",
    "encode",
    "chat_template",
    "error_body",
    "inband_error",
    "json_text",
    "named_calls",
    "openai_usage",
    "reply_chunks",
    "prompt_tokens",
    "request_problem",
    "request_stops",
    "token_pieces",
]

Wire = Literal["openai", "anthropic", "ollama"]
#: where an ``openai`` wire streams reasoning (see the module docstring)
ReasoningField = Literal["reasoning_content", "reasoning", "reasoning_details"]
REASONING_FIELDS: tuple[ReasoningField, ...] = (
    "reasoning_content",
    "reasoning",
    "reasoning_details",
)
_PIECE = re.compile(r"\s*\S{1,4}|\s+")


def token_pieces(text: str) -> list[str]:
    """Split text the way a tokenizer streams it: short pieces with leading spaces."""
    return _PIECE.findall(text)


class FakeCall(msgspec.Struct, frozen=True, kw_only=True):
    """A native tool call in a scripted reply; ``id`` defaults per wire format."""

    name: str
    arguments: dict[str, Any] | str = {}
    id: str | None = None


class Reply(msgspec.Struct, frozen=True, kw_only=True):
    """One scripted answer, and the faults to inject while sending it.

    ``status`` >= 400 answers with that status, ``body`` (default: the wire's
    JSON error shape) and ``retry_after`` seconds. ``cut_after=n`` sends n events
    then half of the next and drops the connection; ``error_after=n`` sends an
    in-band error event after n events; ``stall_after=n`` sends n events then
    nothing for ``stall`` seconds (then goes on; ``FakeServer.resume`` or the
    server stopping ends it), ``stall_before=text`` the same before the first
    event that contains ``text``; ``delay`` sleeps before each event. ``raw``
    is sent verbatim with ``content_type``. ``drop`` closes the connection
    after reading the request, without a response (a server closing a kept-alive
    connection just as the client reuses it).
    ``index_zero`` (openai) puts every parallel call on index 0, differing by id;
    ``interleave`` (openai) sends the parallel calls' deltas in turn (a piece
    of each call, then the next piece of each), as some gateways do.
    ``usage`` is the reply's token counts as the server reports them, prompt
    cache and reasoning counts too, each in its wire's fields (``UsageChunk``'s
    meanings: ``input_tokens`` all the input); a count it leaves None is the
    fake's own (input: a quarter of the request's JSON, output: the chunks
    sent) or, for the others, not sent.
    ``finish`` (default: ``tool_calls`` with calls, else ``stop``) may be said
    in either API's words: each wire sends the reason it corresponds to
    (``max_tokens`` is ``length`` on the openai and ollama wires, ``length``
    is ``max_tokens`` on the anthropic wire).
    """

    text: str = ""
    reasoning: str = ""
    calls: tuple[FakeCall, ...] = ()
    finish: str | None = None
    status: int = 200
    body: str | None = None
    retry_after: float | None = None
    headers: dict[str, str] = {}
    content_type: str | None = None
    raw: bytes | None = None
    cut_after: int | None = None
    error_after: int | None = None
    stall_after: int | None = None
    stall_before: str | None = None
    stall: float = 30.0
    delay: float = 0.0
    index_zero: bool = False
    interleave: bool = False
    drop: bool = False
    usage: UsageChunk | None = None


def prompt_tokens(body: dict[str, Any]) -> int:
    """A count of an Anthropic request's input tokens, as the fake counts them:
    the ``token_pieces`` of its system prompt and of its messages' text."""
    texts: list[str] = []

    def add(content: Any) -> None:
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    add(block.get("text"))
                    add(block.get("content"))  # a tool_result's

    add(body.get("system"))
    for message in body.get("messages") or ():
        if isinstance(message, dict):
            add(message.get("content"))
    return sum(len(token_pieces(text)) for text in texts)


def chat_template(messages: Any) -> str:
    """The prompt a chat template makes of OpenAI-style ``messages``, as the fake
    applies one (ChatML, then the generation prompt): what a fake tokenizer
    counts (``FakeServer(tokenizer=...)``)."""
    turns = [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
    text = "".join(
        f"<|im_start|>{m.get('role')}\n{m.get('content') or ''}<|im_end|>\n" for m in turns
    )
    return text + "<|im_start|>assistant\n"


# the tokenizer endpoints an "openai" fake may serve at its root (``tokenizer=``)
TOKENIZER_PATHS = frozenset({"/tokenize", "/apply-template"})


def _is_stops(value: Any, *, single: bool) -> bool:
    """Whether ``value`` is what an API takes as stop strings: null, a list of
    strings, or (where ``single``) one string."""
    if value is None or (single and isinstance(value, str)):
        return True
    return isinstance(value, list) and all(isinstance(s, str) for s in value)


def request_problem(wire: Wire, path: str, body: dict[str, Any]) -> str | None:
    """Why a real server would refuse ``body`` with a 400, for the fields the
    fake reads, or None.

    Checked before anything is read, so that a request with ``"stop": 7`` or
    Ollama ``options`` that are not an object is answered 400 in the wire's
    error shape (as the API would) rather than crashing the handler thread and
    dropping the connection. Fields the fake never reads are not checked.
    """
    model = body.get("model")
    if model is not None and not isinstance(model, str):
        return "'model' must be a string"
    if wire == "openai":
        if path in TOKENIZER_PATHS:
            content = body.get("content")
            if content is not None and not isinstance(content, str):
                return "'content' must be a string"
            if not isinstance(body.get("messages", []), list):
                return "'messages' must be an array"
            return None
        if not _is_stops(body.get("stop"), single=True):
            return "'stop' must be a string or an array of strings"
        if not isinstance(body.get("stream_options") or {}, dict):
            return "'stream_options' must be an object"
    elif wire == "anthropic":
        if not _is_stops(body.get("stop_sequences"), single=False):
            return "stop_sequences: Input should be a valid list of strings"
        if not isinstance(body.get("messages", []), list):
            return "messages: Input should be a valid list"
    else:
        options = body.get("options")
        if options is not None and not isinstance(options, dict):
            return "json: cannot unmarshal options into Go value of type map[string]interface {}"
        if not _is_stops((options or {}).get("stop"), single=True):
            return 'option "stop" must be of type array'
    return None


def request_stops(wire: Wire, body: dict[str, Any]) -> list[str]:
    """The request's stop strings (``body`` passed ``request_problem``)."""
    if wire == "openai":
        stop = body.get("stop")
    elif wire == "anthropic":
        stop = body.get("stop_sequences")
    else:
        stop = (body.get("options") or {}).get("stop")
    if isinstance(stop, str):
        return [stop]
    return [s for s in stop or () if isinstance(s, str) and s]


def reply_chunks(reply: Reply, wire: Wire, body: dict[str, Any]) -> list[Chunk]:
    """The reply as provider-neutral chunks, with the request's stop honoured."""
    text, calls, stop_hit = reply.text, reply.calls, None
    for stop in request_stops(wire, body):
        pos = text.find(stop)
        if pos >= 0:
            text, stop_hit, calls = text[:pos], stop, ()
    out: list[Chunk] = [ReasoningChunk(text=p) for p in token_pieces(reply.reasoning)]
    out += [TextChunk(text=p) for p in token_pieces(text)]
    per_call: list[list[CallChunk]] = []
    for n, call in enumerate(calls):
        args = call.arguments
        args_text = args if isinstance(args, str) else msgspec.json.encode(args).decode()
        prefix = "toolu_fake_" if wire == "anthropic" else "call_fake_"
        index = 0 if reply.index_zero else n
        mine = [CallChunk(index=index, id=call.id or f"{prefix}{n}", name=call.name)]
        mine += [CallChunk(index=index, arguments=p) for p in token_pieces(args_text)]
        per_call.append(mine)
    if reply.interleave and wire == "openai":
        rounds = max((len(mine) for mine in per_call), default=0)
        out += [mine[i] for i in range(rounds) for mine in per_call if i < len(mine)]
    else:
        out += [chunk for mine in per_call for chunk in mine]
    reason = reply.finish or ("tool_calls" if calls else "stop")
    if wire != "anthropic":  # which says its own reasons as scripted (``ANTHROPIC_STOP``)
        reason = NEUTRAL_FINISH.get(reason, reason)
    given = reply.usage or UsageChunk()
    counted = UsageChunk(input_tokens=len(json.dumps(body)) // 4, output_tokens=len(out))
    out.append(
        msgspec.structs.replace(
            given,
            input_tokens=counted.input_tokens if given.input_tokens is None else given.input_tokens,
            output_tokens=(
                counted.output_tokens if given.output_tokens is None else given.output_tokens
            ),
        )
    )
    out.append(FinishChunk(reason=reason, stop_sequence=stop_hit))
    return out


def openai_usage(c: UsageChunk) -> dict[str, Any]:
    """A chat completion's ``usage`` for ``c``: the cache and reasoning counts in
    ``prompt_tokens_details`` (with OpenRouter's ``cache_write_tokens``) and
    ``completion_tokens_details``, each only when ``c`` has it."""
    usage: dict[str, Any] = {
        "prompt_tokens": c.input_tokens or 0,
        "completion_tokens": c.output_tokens or 0,
    }
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    prompt = {"cached_tokens": c.cache_read_tokens, "cache_write_tokens": c.cache_write_tokens}
    if prompt := {k: v for k, v in prompt.items() if v is not None}:
        usage["prompt_tokens_details"] = prompt
    if c.reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": c.reasoning_tokens}
    return usage


def anthropic_input(c: UsageChunk) -> dict[str, int]:
    """A message's input counts for ``c``, as the API says them: ``input_tokens``
    without the cache's, which go in their own fields (only when ``c`` has them)."""
    read, wrote = c.cache_read_tokens, c.cache_write_tokens
    usage = {"input_tokens": max(0, (c.input_tokens or 0) - (read or 0) - (wrote or 0))}
    if read is not None:
        usage["cache_read_input_tokens"] = read
    if wrote is not None:
        usage["cache_creation_input_tokens"] = wrote
    return usage


def anthropic_output(c: UsageChunk) -> dict[str, Any]:
    """A message's output counts for ``c``: the thinking part only when ``c`` has it."""
    usage: dict[str, Any] = {"output_tokens": c.output_tokens or 0}
    if c.reasoning_tokens is not None:
        usage["output_tokens_details"] = {"thinking_tokens": c.reasoning_tokens}
    return usage


_SURROGATE = re.compile("[\ud800-\udfff]")


def json_text(data: Any) -> str:
    """JSON text with non-ASCII characters as they are, except surrogate halves
    (a scripted reply or the request's ``model`` may hold a lone one), escaped as
    ``\\udXXX`` as a real server's JSON encoder writes them: raw, they cannot be
    encoded as UTF-8 and the reply could not be sent at all."""
    text = json.dumps(data, ensure_ascii=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json_text(data)}\n\n".encode()


def _openrouter_reasoning(c: ReasoningChunk, index: int) -> dict[str, Any]:
    """A reasoning chunk as OpenRouter streams it, in block ``index`` (see the
    module docstring), of format ``unknown``."""
    detail: dict[str, Any]
    if c.redacted is not None:
        detail = {"type": "reasoning.encrypted", "data": c.redacted, "format": "unknown"}
        return {"reasoning": None, "reasoning_details": [{**detail, "index": index}]}
    detail = {"type": "reasoning.text", "text": c.text, "format": "unknown", "index": index}
    if c.signature is not None:
        detail["signature"] = c.signature
    return {"reasoning": c.text, "reasoning_details": [detail]}


def _openai_frames(
    chunks: Sequence[Chunk], body: dict[str, Any], field: ReasoningField = "reasoning_content"
) -> list[bytes]:
    model = body.get("model", "fake")
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model}
    want_usage = bool((body.get("stream_options") or {}).get("include_usage"))

    def frame(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return _sse({**base, "choices": [choice]})

    frames = [b": OPENROUTER PROCESSING\n\n", frame({"role": "assistant", "content": ""})]
    usage = None
    block = 0  # the index of OpenRouter's reasoning block under way
    for c in chunks:
        if isinstance(c, TextChunk):
            frames.append(frame({"content": c.text}))
        elif isinstance(c, ReasoningChunk) and field == "reasoning_details":
            frames.append(frame(_openrouter_reasoning(c, block)))
            block += c.signature is not None or c.redacted is not None
        elif isinstance(c, ReasoningChunk):
            frames.append(frame({field: c.text}))
        elif isinstance(c, CallChunk):
            call: dict[str, Any] = {"index": c.index, "function": {"arguments": c.arguments}}
            if c.id is not None:
                call["id"], call["type"] = c.id, "function"
            if c.name is not None:
                call["function"]["name"] = c.name
            content = {k: v for k, v in (c.extra or {}).items() if k != DETAILS}
            if content:  # as Gemini attaches a call's thought signature
                call["extra_content"] = content
            frames.append(frame({"tool_calls": [call]}))
        elif isinstance(c, UsageChunk):
            usage = openai_usage(c)
        elif c.reason == "error":
            return [*frames, inband_error("openai", c.message)]
        else:
            frames.append(frame({}, c.reason))
    if want_usage and usage is not None:
        frames.append(_sse({**base, "choices": [], "usage": usage}))
    frames.append(b"data: [DONE]\n\n")
    return frames


# our finish reasons as the API's stop reasons (``AnthropicMessages`` reads them back)
ANTHROPIC_STOP = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
# a scripted ``Reply.finish`` in Anthropic's words as the OpenAI reason it
# corresponds to, which the openai and ollama wires send (``"max_tokens"`` is no
# OpenAI finish reason; Ollama's done_reason is ``stop`` or ``length``); OpenAI's
# own reasons, and any other word, go out as they are
NEUTRAL_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


def _event(kind: str, **fields: Any) -> bytes:
    """One Anthropic event: the SSE event name repeats the JSON ``type``."""
    return _sse({"type": kind, **fields}, kind)


def _anthropic_frames(chunks: Sequence[Chunk], body: dict[str, Any]) -> list[bytes]:
    usage = next((c for c in chunks if isinstance(c, UsageChunk)), UsageChunk())
    message: dict[str, Any] = {"id": "msg_fake", "type": "message", "role": "assistant"}
    message["content"] = []
    message |= {"model": body.get("model", "fake"), "stop_reason": None, "stop_sequence": None}
    message["usage"] = {**anthropic_input(usage), "output_tokens": 1}
    frames = [_event("message_start", message=message), _event("ping")]
    block, kind = -1, ""  # the open content block: its index and what it holds

    def close() -> None:
        if kind == "thinking":  # a thinking block ends with its signature
            delta = {"type": "signature_delta", "signature": "fake-signature"}
            frames.append(_event("content_block_delta", index=block, delta=delta))
        if kind:
            frames.append(_event("content_block_stop", index=block))

    def open_block(new: str, content: dict[str, Any]) -> None:
        nonlocal block, kind
        close()
        block, kind = block + 1, new
        frames.append(_event("content_block_start", index=block, content_block=content))

    for c in chunks:
        if isinstance(c, ReasoningChunk) and c.redacted is not None:
            open_block("redacted", {"type": "redacted_thinking", "data": c.redacted})
        elif isinstance(c, ReasoningChunk) and c.signature is not None:
            if kind != "thinking":
                open_block("thinking", {"type": "thinking", "thinking": ""})
            deltas = [{"type": "thinking_delta", "thinking": c.text}] if c.text else []
            deltas.append({"type": "signature_delta", "signature": c.signature})  # its own
            frames += [_event("content_block_delta", index=block, delta=d) for d in deltas]
            frames.append(_event("content_block_stop", index=block))
            kind = ""
        elif isinstance(c, TextChunk | ReasoningChunk):
            new, field = ("text", "text") if isinstance(c, TextChunk) else ("thinking", "thinking")
            if kind != new:
                open_block(new, {"type": new, field: ""})
            delta = {"type": f"{new}_delta", field: c.text}
            frames.append(_event("content_block_delta", index=block, delta=delta))
        elif isinstance(c, CallChunk):
            if c.name is not None or kind != f"tool{c.index}":
                tool = {"type": "tool_use", "id": c.id or f"toolu_{c.index}", "name": c.name or ""}
                open_block(f"tool{c.index}", {**tool, "input": {}})
            if c.arguments:
                delta = {"type": "input_json_delta", "partial_json": c.arguments}
                frames.append(_event("content_block_delta", index=block, delta=delta))
        elif isinstance(c, FinishChunk) and c.reason == "error":
            return [*frames, inband_error("anthropic", c.message)]
        elif isinstance(c, FinishChunk):
            close()
            kind = ""
            reason = "stop_sequence" if c.stop_sequence else ANTHROPIC_STOP.get(c.reason, c.reason)
            end = {"stop_reason": reason, "stop_sequence": c.stop_sequence}
            out = anthropic_output(usage)
            frames += [_event("message_delta", delta=end, usage=out), _event("message_stop")]
    return frames


def _object(arguments: str) -> Any:
    """A call's arguments as Ollama sends them: decoded JSON, never a string."""
    try:
        return json.loads(arguments)
    except ValueError:
        message = f"Ollama sends a call's arguments as JSON; {arguments!r} is not JSON"
        raise ValueError(message) from None


def _ollama_frames(chunks: Sequence[Chunk], body: dict[str, Any]) -> list[bytes]:
    model = body.get("model", "fake")
    stamp = "2026-01-01T00:00:00Z"

    def line(message: dict[str, Any], **extra: Any) -> bytes:
        data = {"model": model, "created_at": stamp, "message": message, "done": False, **extra}
        return (json_text(data) + "\n").encode()

    frames: list[bytes] = []
    calls: list[tuple[int, str, list[str]]] = []  # (index, name, argument pieces)
    usage = UsageChunk()
    for c in chunks:
        if isinstance(c, TextChunk):
            frames.append(line({"role": "assistant", "content": c.text}))
        elif isinstance(c, ReasoningChunk):
            frames.append(line({"role": "assistant", "content": "", "thinking": c.text}))
        elif isinstance(c, CallChunk):
            if c.name is not None or not calls or calls[-1][0] != c.index:
                calls.append((c.index, c.name or "", []))
            calls[-1][2].append(c.arguments)
        elif isinstance(c, UsageChunk):
            usage = c
        elif c.reason == "error":
            return [*frames, inband_error("ollama", c.message)]
        else:
            for _, name, parts in calls:
                call = {"function": {"name": name, "arguments": _object("".join(parts) or "{}")}}
                frames.append(line({"role": "assistant", "content": "", "tool_calls": [call]}))
            reason = "length" if c.reason == "length" else "stop"  # ollama never says tool_calls
            frames.append(
                line(
                    {"role": "assistant", "content": ""},
                    done=True,
                    done_reason=reason,
                    total_duration=1000,
                    prompt_eval_count=usage.input_tokens or 0,
                    eval_count=usage.output_tokens or 0,
                )
            )
    return frames


_FRAMES = {"openai": _openai_frames, "anthropic": _anthropic_frames, "ollama": _ollama_frames}
WIRES: tuple[Wire, ...] = ("openai", "anthropic", "ollama")
CONTENT_TYPES: dict[Wire, str] = {
    "openai": "text/event-stream",
    "anthropic": "text/event-stream",
    "ollama": "application/x-ndjson",
}


def encode(
    wire: Wire,
    chunks: Sequence[Chunk],
    body: dict[str, Any],
    *,
    reasoning_field: ReasoningField = "reasoning_content",
) -> list[bytes]:
    """``chunks`` as ``wire`` sends them for a request with ``body``, one event per
    item; ``reasoning_field``: where the ``openai`` wire puts reasoning."""
    if wire == "openai":
        return _openai_frames(chunks, body, reasoning_field)
    return _FRAMES[wire](named_calls(chunks), body)


def named_calls(chunks: Sequence[Chunk]) -> list[Chunk]:
    """``chunks`` with each call's id and name on its first chunk and on no other.

    A wire that names a call once, when it begins (Anthropic's ``tool_use``
    block, Ollama's whole call), needs both there; a recording made with
    ``OpenAIChat`` has the id on a chunk of its own and the name on the next,
    with the arguments. Chunks belong to calls as ``NativeCalls`` reads them: the
    latest call on their index, unless their id is another or that call is done
    (a bare repeated completion mark still belongs to it). A call that never had
    a name gets ``""``, so that it still begins there."""
    owners: list[int | None] = []
    ids: list[str | None] = []
    names: list[str | None] = []
    done: list[bool] = []
    latest: dict[int, int] = {}  # index -> its latest call
    for c in chunks:
        if not isinstance(c, CallChunk):
            owners.append(None)
            continue
        n = latest.get(c.index)
        if n is not None and done[n]:  # only a bare repeated completion mark is its
            if c.name or c.arguments or (c.id and c.id != ids[n]):
                n = None
        elif n is not None and c.id and ids[n] and c.id != ids[n]:
            n = None
        if n is None:
            n = latest[c.index] = len(ids)
            ids.append(None)
            names.append(None)
            done.append(False)
        ids[n] = ids[n] or c.id
        names[n] = names[n] or c.name
        done[n] = done[n] or c.done
        owners.append(n)
    out: list[Chunk] = []
    begun: set[int] = set()
    for c, n in zip(chunks, owners, strict=True):
        if isinstance(c, CallChunk) and n is not None:
            first = n not in begun
            begun.add(n)
            name = (names[n] or "") if first else None
            c = msgspec.structs.replace(c, id=ids[n] if first else None, name=name)
        out.append(c)
    return out


def error_body(wire: Wire, status: int, message: str) -> str:
    if wire == "openai":
        data: Any = {"error": {"message": message, "type": "fake_error", "code": status}}
    elif wire == "anthropic":
        data = {"type": "error", "error": {"type": "fake_error", "message": message}}
    else:
        data = {"error": message}
    return json.dumps(data)


def inband_error(wire: Wire, message: str | None = None) -> bytes:
    """The wire's in-band error event, saying ``message`` (default: what each
    server says for a typical failure)."""
    if wire == "openai":
        default = {"message": "upstream failed mid-answer", "code": 502}
        return _sse({"error": {"message": message} if message else default})
    if wire == "anthropic":
        kind = "api_error" if message else "overloaded_error"
        return _event("error", error={"type": kind, "message": message or "Overloaded"})
    return (json_text({"error": message or "model runner stopped unexpectedly"}) + "\n").encode()
