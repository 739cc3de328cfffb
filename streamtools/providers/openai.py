"""OpenAI-compatible chat completions over SSE (OpenAI, vLLM, llama.cpp, OpenRouter, …).

Theory of operation
-------------------
``POST {base_url}/chat/completions`` with ``stream: true``; the answer is an
SSE stream of ``chat.completion.chunk`` objects, read with httpx-sse and
decoded by one ``msgspec.json.Decoder`` into the few fields we use. Wire facts
honoured:

* ``data: [DONE]`` ends the stream. The ``finish_reason`` chunk may be followed
  by a usage chunk with empty ``choices`` (``stream_options.include_usage``), so
  the ``FinishChunk`` is held until ``[DONE]`` (or a clean end of stream after a
  finish reason, for servers that omit ``[DONE]``) and is always last.
* SSE comment lines (``: OPENROUTER PROCESSING``) and empty keep-alive events
  are skipped; httpx-sse drops comments already. So is an event whose data is
  no JSON object (``data: ping``, ``data: keep-alive``, ``data: "ping"``: the
  heartbeats some gateways send between chunks), which ended the answer as
  malformed JSON at the first one; data that begins as an object and is
  malformed still ends it so. A stream that ends without its finish after
  such data quotes the last of it (a gateway's error in plain words).
* Chunks a server ended with one newline, not the blank line that ends an
  SSE event, reach the decoder as one event of several lines; they are read
  one by one (``streamtools.providers.joined``): the answer ended in an error.
* The returned text never contains the stop string. vLLM names the one it hit in
  ``choices[0].stop_reason``, SGLang in ``choices[0].matched_stop``; that
  becomes ``FinishChunk.stop_sequence`` (SGLang's was not read).
  ``supports_stop=False`` (o-series, some gpt-5) sends no ``stop`` and cuts
  client-side (see ``streamtools.providers.base``), as the provider does
  from the first 400 that refuses ``stop`` on (``providers.refused_fields``);
  past the API's four stop strings, the rest are cut client-side too.
* Reasoning arrives as ``delta.reasoning_content`` (DeepSeek, vLLM),
  ``delta.reasoning`` (OpenRouter, Ollama's OpenAI endpoint), OpenRouter's
  ``delta.reasoning_details`` (text and summaries; read only when the delta
  has neither of the others, which carry the same text), or, from Mistral's
  reasoning models, as ``thinking`` parts of a ``content`` that is a list of
  parts (its ``text`` parts are the text): such a list was refused as
  malformed, ending the answer in an error at its first token.
* A refusal (``delta.refusal``: OpenAI's models under structured outputs or
  their safety rules) is what the model answered in place of ``content``, so
  it is text; it was dropped, and the answer looked empty.
* Tool-call deltas are passed on as ``CallChunk``, one ``index`` per call in
  the order the calls began (``openai_calls.ToolCallDeltas`` decides which
  call a delta belongs to: servers reuse index 0 for parallel calls, with or
  without ids, repeat the name with every delta, or stream it in pieces, and
  a few gateways interleave the deltas of parallel calls, whose chunks are
  then held so that each call's come out together). A server that sends
  ``arguments`` as an object instead of JSON text gets it re-encoded. The
  deprecated ``delta.function_call`` is one such call, on index 0; a
  ``tool_calls`` that is one object, not a list (Hugging Face TGI before
  huggingface/text-generation-inference#3086, 2025; its #2794 is open), is a
  list of one: it ended the answer as malformed JSON at the first delta. A delta
  for another call completes the previous one if its arguments are whole,
  the finish reason any other whose arguments are whole, and the end of the
  stream the rest: each gets a ``done`` chunk then, so it can run while the
  next is still being written (``ToolCallDeltas.finish`` and ``rest``).
  A ``length`` or ``content_filter`` finish does not: the call open then may
  have been cut short, and ``NativeCalls.end`` makes it ``unterminated``
  unless its arguments are a whole object. A new ``id`` without a name on
  the same index is the same call under a changed id (Poolside sends the
  name under one id and the arguments under another): its arguments
  continue the call, which keeps its first id, rather than completing it
  with none.
* A call's ``extra_content`` is kept (``CallChunk.extra``) and sent back on
  that call in the assistant message: Gemini 3's OpenAI-compatible endpoint
  puts the call's thought signature there and refuses the next request (400,
  "Function call is missing a thought_signature") without it; a call made on
  another server or model goes to Gemini 3 with Google's sentinel signature
  (``providers.openai_messages``).
* A reply's reasoning goes back on its assistant message, in the field it
  came in (``reasoning_content`` or ``reasoning``), to the server and model
  that streamed it (``ReasoningOrigin``: the first ``ReasoningChunk`` of a
  reply says where it came from, and the transcript keeps it): DeepSeek's
  thinking mode (V3.2 and later) and Kimi K2's thinking models answer 400
  ("reasoning_content must be passed back", "reasoning_content is missing in
  assistant tool call message") to a request whose past replies lack it: every
  reply between two user messages where the model called tools, in every
  later turn, not only the current tool loop (DeepSeek ignores it on the
  replies of a user turn without calls, so every reply's goes back); vLLM and
  SGLang give it to chat templates that keep reasoning between tool calls.
  Other servers refuse a field they do not know (OpenAI's API refuses any
  unknown message property; Groq refuses ``reasoning_content``, and
  ``reasoning`` for a model that does not reason, though another of its
  models streamed it), so a conversation begun on one server or model and
  continued on another sends the second none of it. (The first
  deepseek-reasoner, R1, refused ``reasoning_content`` in input; the name now
  stands for the thinking mode that requires it.) ``send_reasoning``
  overrides this (see ``OpenAIChat``).
* OpenRouter's ``reasoning_details`` go back, in order, as the message's
  ``reasoning_details`` with a reply's tool calls, as OpenRouter asks (signed
  and encrypted reasoning continues only so); they travel on the calls'
  ``extra`` under ``reasoning_details`` (see ``providers.openrouter``).
* A ``tool`` message that answers no native call of the assistant message
  before it (prompt dialects send results that way) goes as user text, which
  the API accepts (see ``streamtools.providers.bodies``).
* A UTF-16 surrogate pair split across two events (a JavaScript gateway
  escapes each half) is joined: see ``streamtools.providers.surrogates``.
* An in-band error (``data: {"error": …}`` or ``event: error``), as OpenRouter
  sends when an upstream fails mid-answer, ends the stream with an error finish.
  So does a finish reason of ``abort`` (vLLM's, when its engine drops a request:
  shut down, paused, preempted; followed by ``[DONE]`` as if the answer were
  whole) or ``error`` without an error object, with a message that names it;
  the call open then is not complete (``NativeCalls.end``: unterminated): it
  was passed on as a finish of its own, and the call ran on what had come.
* A finish reason of another API that a gateway passes on (Anthropic's
  ``max_tokens`` and ``tool_use``, Gemini's ``MAX_TOKENS`` and ``SAFETY``) is
  read as OpenAI's (``_reason``): it was passed on raw, and a call cut by
  ``MAX_TOKENS`` was not seen as cut.
* Groq puts the usage in ``x_groq.usage`` on the last chunk (without
  ``stream_options``, or where a gateway drops it), and Moonshot (Kimi) in
  ``choices[0].usage``; each is read as ``usage`` (Kimi's answers came
  without any ``UsageChunk``). The prompt-cache and reasoning counts come
  from ``prompt_tokens_details.cached_tokens`` (DeepSeek's
  ``prompt_cache_hit_tokens`` where it has none, and Moonshot's
  ``cached_tokens`` at the top level of ``usage``, which was not read, so
  Kimi's cache hits looked like none; OpenRouter's ``cache_write_tokens``
  beside it) and ``completion_tokens_details``; both are parts of the
  totals, as on ``UsageChunk``. A count with a fraction (OpenRouter weights
  some models' by cost: 14417.92) is rounded; it was refused as malformed
  JSON, and a whole answer ended in an error at its usage.
* ``usage`` counts the whole answer so far, so only the latest is passed on,
  once, just before the finish: OpenAI sends it once, after the finish reason,
  but Gemini's OpenAI endpoint (and vLLM's ``continuous_usage_stats``) send it
  with every chunk, and a ``UsageChunk`` per event made a consumer that adds
  them up (the proxy, a cost meter) count the answer once per chunk.
* A server that ignores ``stream: true`` and answers with a whole
  ``chat.completion`` is read as the stream it stands for
  (``streamtools.providers.whole``).
* One answer per request: ``n`` other than 1 (in ``extra_body`` or a request's
  ``extra``) is a ``UsageError`` before anything is sent, since the server would
  stream every choice's deltas into the one stream, mixed. A server that
  numbers its one choice otherwise (Foundry Local counts it up with every
  chunk) is read whatever the number, and one that sends other choices all the
  same is followed on choice 0 (``streamtools.providers.choices``).

Token counts (``count_tokens``): the chat API has no counting endpoint, but
the servers people run models on have a tokenizer beside it, at the server's
root (``base_url`` without its ``/v1``). vLLM's ``POST /tokenize`` takes the chat
messages, applies the model's chat template and answers ``count``. llama.cpp's
llama-server answers the same request with no ``count`` (its ``/tokenize``
reads ``content`` only), so the template is applied with ``POST
/apply-template`` and its ``prompt`` tokenized; the count is the length of
``tokens``. A server with neither (OpenAI itself, Ollama, most gateways)
answers 404 or 405, or something that is not a tokenizer's answer:
``TokenCountUnavailable``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from functools import partial
from typing import Any, Unpack

import msgspec
from httpx_sse import ServerSentEvent

from streamtools.errors import ProviderError, TokenCountUnavailable, UsageError
from streamtools.model import (
    Chunk,
    FinishChunk,
    ModelRequest,
    ReasoningChunk,
    ReasoningOrigin,
    TextChunk,
    ToolChoice,
    UsageChunk,
    UseTool,
    keyword_choice,
    sampling,
)
from streamtools.providers import whole
from streamtools.providers.base import (
    HTTPProvider,
    ProviderOptions,
    TransientStreamError,
    answer_field,
)
from streamtools.providers.bodies import (
    answerable_only,
    function_tools,
    json_schema_of,
    reasoning_server,
)
from streamtools.providers.callids import checked_limit, id_limit
from streamtools.providers.choices import Answer
from streamtools.providers.joined import Joined, joined, spliced_events
from streamtools.providers.openai_calls import Function, ToolCallDelta, ToolCallDeltas
from streamtools.providers.openai_finish import (
    CUT,
    error_text,
    event_error,
    failed_finish,
    finish_of,
    passing,
)
from streamtools.providers.openai_messages import message, signs_calls
from streamtools.providers.openrouter import reasoning_text
from streamtools.providers.refused_fields import refusals_retried
from streamtools.providers.schema_refusals import schema_refusals_retried
from streamtools.providers.surrogates import REASONING, TEXT, SurrogatePairs
from streamtools.providers.toolnames import OPENAI_NAMES
from streamtools.providers.toolschema import rule_for

__all__ = ["OpenAIChat"]


class _Part(msgspec.Struct):
    """A part of a ``content`` list (Mistral's reasoning models): ``text``, or
    ``thinking`` whose own parts (or string) are the reasoning."""

    type: str = ""
    text: str | None = None
    thinking: list[_Part] | str | None = None


class _Delta(msgspec.Struct):
    content: str | list[_Part] | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None
    # OpenRouter's, kept as sent (to go back: ``providers.openrouter``): ``reasoning.text``
    # (``text``), ``reasoning.summary`` (``summary``), ``reasoning.encrypted`` (``data``)
    reasoning_details: list[dict[str, Any]] | None = None
    # one call as an object, not a list: TGI before huggingface/text-generation-inference#3086
    tool_calls: list[ToolCallDelta] | ToolCallDelta | None = None
    refusal: str | None = None  # the model's refusal, in place of ``content``
    function_call: Function | None = None  # the legacy form of one call (``_tool_calls``)


def _reasoning(delta: _Delta) -> tuple[str | None, str | None]:
    """A delta's reasoning text, and the field it came in when that field can
    carry it back: ``reasoning_content``, ``reasoning``, or (only when neither
    is there: OpenRouter sends its text in both ``reasoning`` and
    ``reasoning_details``, which go back on their own) the text and summaries
    of ``reasoning_details``."""
    if delta.reasoning_content:
        return delta.reasoning_content, "reasoning_content"
    if delta.reasoning:
        return delta.reasoning, "reasoning"
    if not delta.reasoning_details:
        return None, None
    return reasoning_text(delta.reasoning_details), None


def _tool_calls(delta: _Delta) -> Sequence[ToolCallDelta]:
    """A delta's tool-call deltas: its list, one sent as an object (TGI's, see
    the module docstring), or a legacy ``function_call`` as the tool-call delta
    it stands for: one call, on index 0, without an id. Servers that still
    answer in the deprecated form (its finish reason ``function_call`` already
    read as ``tool_calls``) had the call itself dropped: a call finish with no
    call."""
    calls = delta.tool_calls
    if calls is None:  # most deltas: text only, no builtin call on them
        if delta.function_call is None:
            return ()
        return (ToolCallDelta(function=delta.function_call),)
    if isinstance(calls, ToolCallDelta):
        return (calls,)
    return calls


def _parts(parts: list[_Part]) -> list[tuple[bool, str]]:
    """A ``content`` list as (is reasoning, text) pieces, in order."""
    out: list[tuple[bool, str]] = []
    for part in parts:
        if part.type == "text" and part.text:
            out.append((False, part.text))
        elif part.type == "thinking" and part.thinking:
            thought = part.thinking
            if not isinstance(thought, str):
                thought = "".join(p.text or "" for p in thought if p.type == "text")
            if thought:
                out.append((True, thought))
    return out


class _Choice(msgspec.Struct):
    index: int | None = 0  # null is read as missing: choice 0
    delta: _Delta | None = None
    finish_reason: str | None = None
    stop_reason: str | int | None = None
    matched_stop: str | int | None = None  # SGLang's name for vLLM's stop_reason
    native_finish_reason: str | None = None  # OpenRouter: the upstream's (``openai_finish``)
    usage: _Usage | None = None  # Moonshot (Kimi): the usage, on the last chunk's choice


# a count as servers write it: OpenRouter's are weighted by cost for some models
# (14417.92), and an int-only field refused them, ending a whole answer in an error
_Count = int | float | None


def _whole(count: _Count) -> int | None:
    """A count as a whole number of tokens (a fraction rounded)."""
    return count if count is None or isinstance(count, int) else round(count)


class _PromptDetails(msgspec.Struct):
    cached_tokens: _Count = None
    cache_write_tokens: _Count = None  # OpenRouter's, from an upstream that bills writes


class _CompletionDetails(msgspec.Struct):
    reasoning_tokens: _Count = None


class _Usage(msgspec.Struct):
    prompt_tokens: _Count = None
    completion_tokens: _Count = None
    prompt_tokens_details: _PromptDetails | None = None
    completion_tokens_details: _CompletionDetails | None = None
    prompt_cache_hit_tokens: _Count = None  # DeepSeek's cached_tokens
    cached_tokens: _Count = None  # Moonshot (Kimi)'s, beside prompt_tokens

    def chunk(self) -> UsageChunk:
        """The counts as a ``UsageChunk``: ``prompt_tokens`` holds the cached ones."""
        prompt = self.prompt_tokens_details or _PromptDetails()
        cached = prompt.cached_tokens
        if cached is None:
            cached = self.prompt_cache_hit_tokens
            if cached is None:
                cached = self.cached_tokens
        done = self.completion_tokens_details or _CompletionDetails()
        return UsageChunk(
            input_tokens=_whole(self.prompt_tokens),
            output_tokens=_whole(self.completion_tokens),
            cache_read_tokens=_whole(cached),
            cache_write_tokens=_whole(prompt.cache_write_tokens),
            reasoning_tokens=_whole(done.reasoning_tokens),
        )


class _Groq(msgspec.Struct):
    usage: _Usage | None = None


class _Event(msgspec.Struct):
    choices: list[_Choice] | None = None
    usage: _Usage | None = None
    x_groq: _Groq | None = None  # Groq: the usage, on the last chunk
    error: Any = None


_decoder = msgspec.json.Decoder(_Event)
_MAX_STOPS = 4  # OpenAI's limit on ``stop``; servers that take more lose nothing (cut here)
# what a chat template reads, of the body ``stream`` sends (``count_tokens``)
_TEMPLATED = ("messages", "tools", "chat_template_kwargs")
_NO_ENDPOINT = frozenset({404, 405, 501})


def _tool_choice(choice: ToolChoice | str) -> Any:
    keyword = keyword_choice(choice)
    if keyword is not None:
        return keyword
    # UseTool (a tool may be named "none"), or an untyped caller's bare tool name
    name = choice.name if isinstance(choice, UseTool) else choice
    return {"type": "function", "function": {"name": name}}


def _check_n(body: Mapping[str, Any]) -> None:
    """``UsageError`` for a body that asks for several answers (see the module docstring)."""
    n = body.get("n")
    if n is not None and (n != 1 or isinstance(n, bool)):
        raise UsageError(
            f"n={n!r} asks for several answers; a stream carries one (send n requests instead)"
        )


class OpenAIChat(HTTPProvider):
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    ``stream_usage`` asks for the final usage chunk (``stream_options``); False
    never asks. ``max_tokens_field`` names the token limit field
    (``max_completion_tokens`` for o-series models). A server that refuses
    either field, or ``stop``, or ``parallel_tool_calls`` (sent as false for a
    request of one call per reply: ``ModelRequest.parallel_tool_calls``), is
    asked again without it, and not sent it after
    (``providers.refused_fields``; stop strings are then cut here).

    ``send_reasoning``: whether a past reply's reasoning goes back on its
    assistant message (native mode). None (the default): only a reply's
    whose reasoning this server and model streamed, in the field it came in
    (see the module docstring). True: whatever server or model streamed it,
    in the field it came in, and on a reply with calls and no such reasoning
    (one of another provider, or of a model that did not think) a single
    space in ``reasoning_content``: for a conversation begun elsewhere and
    continued on DeepSeek's or Kimi's thinking mode, or a gateway in front of
    one under another URL. False: none.

    ``call_id_limit``: the longest id of a past call the server takes; longer
    ones are shortened, the same way in every request (``providers.callids``).
    Default: 40 for OpenAI's API (``api.openai.com``) and Azure OpenAI, which
    refuse longer ids, Mistral's shape (nine letters and digits) for Mistral's
    API, and no limit elsewhere (a self-hosted server gets its own ids back).

    ``tool_schema``: what the server takes of a tool's JSON Schema in native
    mode (``providers.toolschema``): ``VERTEX`` for Vertex AI's endpoints,
    ``GEMINI`` for the Gemini API's and a model named gemini, ``OLLAMA`` for
    Ollama's port, else ``OPENAI``; set it for a gateway whose model name says
    neither.
    """

    _name = "OpenAI-compatible server"
    # ``parallel_tool_calls`` is sent (False once the server refused it)
    supports_parallel_tool_calls = True

    _tool_names = OPENAI_NAMES  # names it refuses go as ones it takes (``providers.toolnames``)
    default_base_url = "https://api.openai.com/v1"

    def __init__(
        self,
        model: str,
        *,
        stream_usage: bool = True,
        max_tokens_field: str = "max_tokens",
        send_reasoning: bool | None = None,
        call_id_limit: int | None = None,
        **options: Unpack[ProviderOptions],
    ) -> None:
        super().__init__(model, **options)
        _check_n(self.extra_body)
        self.call_id_limit = checked_limit(call_id_limit)
        self.stream_usage = stream_usage
        self.max_tokens_field = max_tokens_field
        self.send_reasoning = send_reasoning
        self.tool_schema = rule_for(self.base_url, model)  # ``providers.toolschema``

    def stream(self, request: ModelRequest) -> AbstractAsyncContextManager[AsyncIterator[Chunk]]:
        """Open the request and stream chunks; asked again without a field the
        server refuses (``providers.refused_fields``), or a tool schema keyword
        (``providers.toolschema``)."""
        opener = partial(schema_refusals_retried, self, super().stream)
        return refusals_retried(self, opener, request)

    def _url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def _whole(self, raw: bytes) -> bytes | None:
        return whole.chat_completion(raw)

    def _headers(self) -> dict[str, str]:
        headers = {"accept": "text/event-stream"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        return headers

    def _client_stops(self, request: ModelRequest) -> tuple[str, ...]:
        """Besides all of them when ``supports_stop`` is off, the stop strings past
        the API's four, cut here: the API answers more with a 400, and a user's
        four plus ``stop_at_call``'s marker make five."""
        return request.stop if not self.supports_stop else request.stop[_MAX_STOPS:]

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        server = reasoning_server(self.base_url, self.model)
        limit = id_limit(self.base_url, self.call_id_limit)
        sign = signs_calls(self.model)  # Gemini 3's thought signatures (``openai_messages``)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [
                message(m, server, self.send_reasoning, limit, sign)
                for m in answerable_only(request.messages)
            ],
            "stream": True,
        }
        if self.stream_usage:
            body["stream_options"] = {"include_usage": True}
        if request.stop and self.supports_stop:
            body["stop"] = list(request.stop[:_MAX_STOPS])
        if request.tools:
            body["tools"] = function_tools(request.tools, self.tool_schema)
            if request.tool_choice is not None:
                body["tool_choice"] = _tool_choice(request.tool_choice)
            if request.parallel_tool_calls is False and self.supports_parallel_tool_calls:
                body["parallel_tool_calls"] = False  # refused by some: ``refused_fields``
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.max_tokens is not None:
            body[self.max_tokens_field] = request.max_tokens
        # all of them by these names; top_k is an extension (vLLM, llama.cpp, Ollama,
        # OpenRouter) that OpenAI itself refuses, so it is only sent when asked for
        body.update(sampling(request))
        if request.response_format is not None:
            json_schema_of(request.response_format)  # the shape checked: UsageError
            body["response_format"] = request.response_format
        return body

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The base's body, refused if it asks for more than one answer (``n``)."""
        body = super().request_body(request)
        _check_n(body)
        return body

    async def count_tokens(self, request: ModelRequest) -> int:
        """The input tokens of ``request`` as the server's own tokenizer and chat
        template count them: vLLM's or llama.cpp's (see the module docstring).
        Raises ``TokenCountUnavailable`` for a server that has no tokenizer
        endpoint, and ``ProviderError`` as ``stream`` does for other failures."""
        sent = self.request_body(request)
        chat = {name: sent[name] for name in _TEMPLATED if name in sent}
        root = self.base_url.removesuffix("/").removesuffix("/v1")
        try:
            asked = {"model": self.model, **chat, "add_generation_prompt": True}
            answer = await self._post_json(f"{root}/tokenize", asked)
            count: int | None = answer_field(answer, "count", int)
            if count is not None:  # vLLM
                return count
            if answer_field(answer, "tokens", list) is None:  # not a tokenizer's answer
                raise TokenCountUnavailable(
                    f"{root}/tokenize answered neither count nor tokens: {answer!r:.200}"
                )
            # llama-server: it read no ``content``, so it counted nothing
            applied = await self._post_json(f"{root}/apply-template", chat)
            prompt = answer_field(applied, "prompt", str, f"{root}/apply-template")
            answer = await self._post_json(f"{root}/tokenize", {"content": prompt})
            return len(answer_field(answer, "tokens", list, f"{root}/tokenize"))
        except ProviderError as exc:
            if exc.status not in _NO_ENDPOINT:
                raise
            message = f"{self._name} at {root} has no tokenizer endpoint ({exc.status})"
            raise TokenCountUnavailable(message, status=exc.status, body=exc.body) from None

    async def _decode(
        self, events: AsyncIterator[ServerSentEvent], request: ModelRequest
    ) -> AsyncGenerator[Chunk, None]:
        finish: FinishChunk | None = None
        usage: list[Chunk] = []  # none, or the latest UsageChunk (see the module docstring)
        pairs = SurrogatePairs(_decoder, _Event)  # pairs split across events
        calls = ToolCallDeltas(pairs)  # which call each delta is of, and when it is done
        origin: ReasoningOrigin | None = None  # said once, on the first chunk it is of
        beat = ""  # the last data that was no JSON object (a heartbeat, or words)
        answer = Answer()  # which choice is the answer's
        pending: deque[str] = deque()  # events a server sent as one (``providers.joined``)
        source: AsyncIterator[ServerSentEvent] = events
        spliced: AsyncGenerator[ServerSentEvent, None] | None = None
        try:
            while True:
                try:
                    async for sse in source:
                        data = sse.data
                        if sse.event == "error":
                            sent = event_error(data)
                            said = f"{self._name} error event: {error_text(sent)}"
                            if passing(sent):  # asked again if nothing came yet (``base``)
                                raise TransientStreamError(said, [*calls.rest(), *usage])
                            for chunk in [*calls.rest(), *usage]:
                                yield chunk
                            yield FinishChunk(reason="error", message=said)
                            return
                        if not data or data.isspace():
                            continue
                        if data == "[DONE]":
                            whole = finish is None or finish.reason not in CUT
                            for chunk in [*calls.rest(complete=whole), *pairs.rest(), *usage]:
                                yield chunk
                            yield finish or FinishChunk(reason="stop")
                            return
                        try:
                            event = pairs.decode(data)
                        except (msgspec.DecodeError, msgspec.ValidationError):
                            if data.lstrip().startswith("{"):
                                if (lines := joined(data)) is None:
                                    raise  # a chunk, malformed
                                raise Joined(lines) from None  # read one by one (see below)
                            beat = data  # a heartbeat (see the module docstring)
                            continue
                        if event.error is not None:
                            if passing(event.error):
                                rest = [*calls.rest(), *usage]
                                raise TransientStreamError(error_text(event.error), rest)
                            for chunk in [*calls.rest(), *usage]:
                                yield chunk
                            yield FinishChunk(reason="error", message=error_text(event.error))
                            return
                        choices: Sequence[_Choice] = event.choices or ()
                        choice = choices[0] if choices else None
                        # (``choices[-1] is not choice``: several choices, without a call)
                        if choice is not None and (
                            choice.index != answer.index or choices[-1] is not choice
                        ):
                            choice = answer.pick(choices)  # ``providers.choices``
                        if choice is not None:
                            delta = choice.delta
                            if delta is not None:
                                if delta.reasoning_details:
                                    calls.details.add(delta.reasoning_details)
                                reasoning, field = _reasoning(delta)
                                if reasoning and (reasoning := pairs.join(REASONING, reasoning)):
                                    if field is not None and origin is None:
                                        server = reasoning_server(self.base_url, self.model)
                                        origin = ReasoningOrigin(field=field, server=server)
                                        yield ReasoningChunk(text=reasoning, origin=origin)
                                    else:
                                        yield ReasoningChunk(text=reasoning)
                                content = delta.content
                                if isinstance(content, list):  # Mistral: thinking and text parts
                                    for thought, piece in _parts(content):
                                        if thought and (piece := pairs.join(REASONING, piece)):
                                            yield ReasoningChunk(text=piece)
                                        elif not thought and (piece := pairs.join(TEXT, piece)):
                                            yield TextChunk(text=piece)
                                elif content and (text := pairs.join(TEXT, content)):
                                    yield TextChunk(text=text)
                                if delta.refusal and (text := pairs.join(TEXT, delta.refusal)):
                                    yield TextChunk(text=text)
                                for tc in _tool_calls(delta):
                                    for call_chunk in calls.feed(tc):
                                        yield call_chunk
                            if choice.finish_reason:
                                reason, sent = finish_of(
                                    choice.finish_reason, choice.native_finish_reason
                                )
                                # out of tokens or filtered: not complete by the wire's say-so;
                                # the finish reason decides (``NativeCalls.end``: unterminated)
                                for call_chunk in calls.finish(reason):
                                    yield call_chunk
                                stop = choice.stop_reason or choice.matched_stop
                                stop = stop if isinstance(stop, str) else None
                                failed = failed_finish(sent, self._name)
                                finish = FinishChunk(
                                    reason=reason, stop_sequence=stop, message=failed
                                )
                        counted = event.usage or (event.x_groq.usage if event.x_groq else None)
                        counted = counted or (choice.usage if choice is not None else None)
                        if counted is not None:
                            usage[:] = [counted.chunk()]
                except Joined as several:  # read on from their first, then the stream
                    pending.extend(several.lines)
                    if spliced is None:
                        source = spliced = spliced_events(pending, events)
                    continue
                break
        except Exception:  # a broken stream (the guard ends it): the held name goes out
            for chunk in calls.rest():
                yield chunk
            raise
        finally:
            if spliced is not None:
                await spliced.aclose()
        for chunk in calls.rest(complete=finish is not None and finish.reason not in CUT):
            yield chunk
        if finish is not None:
            for chunk in [*pairs.rest(), *usage]:
                yield chunk
            yield finish
        elif beat:
            said = " ".join(beat.split())[:300]
            message = f"{self._name} stream ended before the answer was complete; "
            yield FinishChunk(reason="error", message=f"{message}its last data was: {said}")
