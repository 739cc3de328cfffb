"""The proxy's streamed answers, read event by event as a recording client reads
them, hold the invariants of the APIs they imitate, and the non-streamed answer
to the same upstream reply carries the same content.

Whatever the upstream writes (prose, whole, cut and broken calls, calls to
tools the client lacks, in every dialect, at any chunking, with a client stop
string or the token limit): OpenAI chunks share one ``id``, ``created`` and
``model``, begin with the ``role`` chunk, number parallel calls from 0 with the
call's ``id`` only on its first delta, and end with one finish chunk, then the
usage chunk (``choices: []``) only when ``include_usage`` asked for it, then
``[DONE]``. Anthropic events open, fill and close one content block at a time
at indices 0, 1, 2…, each block's deltas of its own kind, and end with
``message_delta`` and ``message_stop``. Responses events have
``sequence_number`` 0, 1, 2…, begin ``created`` then ``in_progress``, name the
open item's ``item_id`` and ``output_index`` in every event about it, and end
with a response whose ``output`` is exactly the items streamed as done."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import jiter
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_parser_properties import FRAGMENTS, model_replies
from test_proxy_fuzz import CALLS, SCHEMA

from streamtools.model import FinishChunk, TextChunk
from streamtools.proxy import ProxyConfig, create_app
from streamtools.testing import ScriptedModel

USER = [{"role": "user", "content": "hi"}]
SEARCH = "kom.memory.v1.search"
OPENAI_TOOLS = [
    {"type": "function", "function": {"name": n, "description": "d", "parameters": SCHEMA}}
    for n in ("weather", SEARCH)
]
ANTHROPIC_TOOLS = [
    {"name": n, "description": "d", "input_schema": SCHEMA} for n in ("weather", SEARCH)
]
RESPONSES_TOOLS = [
    {"type": "custom", "name": "weather", "description": "d"},
    {
        "type": "namespace",
        "name": "kom.memory.v1",
        "description": "d",
        "tools": [{"type": "function", "name": "search", "description": "d", "parameters": SCHEMA}],
    },
]


def _events(raw: str) -> list[tuple[str | None, str]]:
    """(SSE event name, data) of each event; comment lines (keep-alives) skipped."""
    out = []
    for block in raw.split("\n\n"):
        lines = [line for line in block.split("\n") if line and not line.startswith(":")]
        if not lines:
            continue
        fields = dict(line.split(": ", 1) for line in lines)
        out.append((fields.get("event"), fields["data"]))
    return out


def _openai(raw: str, include_usage: bool) -> tuple[str, list[tuple[str, str]], str]:
    """Checks an OpenAI chunk stream; its text, calls (name, arguments) and finish."""
    datas = [data for _, data in _events(raw)]
    assert datas[-1] == "[DONE]"
    chunks = [json.loads(d) for d in datas[:-1]]
    assert len({(c["id"], c["created"], c["model"]) for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    finishes = [c for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]]
    assert len(finishes) == 1
    if include_usage:
        assert chunks[-1]["choices"] == [] and chunks[-2] is finishes[0]
        assert all(c["usage"] is None for c in chunks[:-1]) and chunks[-1]["usage"]
    else:
        assert chunks[-1] is finishes[0] and all("usage" not in c for c in chunks)
    text, calls = "", list[list[str]]()
    for chunk in chunks:
        for choice in chunk["choices"]:
            text += choice["delta"].get("content") or ""
            for delta in choice["delta"].get("tool_calls", []):
                if "id" in delta:  # a new call: the next index
                    assert delta["index"] == len(calls) and delta["function"]["name"]
                    calls.append([delta["function"]["name"], ""])
                assert delta["index"] == len(calls) - 1  # fragments of the last call only
                calls[-1][1] += delta["function"]["arguments"]
    return text, [(n, a) for n, a in calls], finishes[0]["choices"][0]["finish_reason"]


def _anthropic(raw: str) -> tuple[list[tuple[str, Any]], dict[str, Any]]:
    """Checks an Anthropic event stream; its blocks (type, text or input) and end."""
    events = [(name, json.loads(data)) for name, data in _events(raw)]
    assert [n for n, _ in events[:1] + events[-2:]] == [
        "message_start", "message_delta", "message_stop"
    ]
    blocks: list[tuple[str, list[str]]] = []
    open_block = None
    for name, data in events:
        assert data["type"] == name
        if name == "content_block_start":
            assert open_block is None and data["index"] == len(blocks)
            open_block = data["index"]
            blocks.append((data["content_block"]["type"], []))
        elif name == "content_block_delta":
            assert data["index"] == open_block
            kind, parts = blocks[open_block]
            delta = data["delta"]
            assert delta["type"] == ("text_delta" if kind == "text" else "input_json_delta")
            parts.append(delta["text"] if kind == "text" else delta["partial_json"])
        elif name == "content_block_stop":
            assert data["index"] == open_block
            open_block = None
    assert open_block is None
    end = events[-2][1]["delta"]
    uses = ["".join(p) for kind, p in blocks if kind == "tool_use"]
    if end["stop_reason"] != "max_tokens":  # no call cut off: each input is whole JSON
        assert all(isinstance(json.loads(u), dict) for u in uses)
    read = [  # a cut call's input as the SDK reads it: the whole values of its JSON
        (kind, "".join(p) if kind == "text" else jiter.from_json(
            "".join(p).encode() or b"{}", partial_mode=True
        ))
        for kind, p in blocks
    ]
    return read, end


def _responses(raw: str) -> dict[str, Any]:
    """Checks a Responses event stream; the response it ends with."""
    events = [json.loads(data) for _, data in _events(raw)]
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert [e["type"] for e in events[:2]] == ["response.created", "response.in_progress"]
    done: list[dict[str, Any]] = []
    item: dict[str, Any] | None = None
    for event in events[2:-1]:
        if event["type"] == "response.output_item.added":
            assert item is None and event["output_index"] == len(done)
            item = event["item"]
        elif event["type"] == "response.output_item.done":
            assert item is not None and event["item"]["id"] == item["id"]
            assert event["output_index"] == len(done)
            done.append(event["item"])
            item = None
        else:
            assert item is not None
            assert (event["item_id"], event["output_index"]) == (item["id"], len(done))
    assert item is None
    final = events[-1]
    assert final["type"] in ("response.completed", "response.incomplete")
    response: dict[str, Any] = final["response"]
    assert response["id"] == events[0]["response"]["id"] and response["output"] == done
    return response


def _without_ids(response: dict[str, Any]) -> tuple[Any, ...]:
    """A response's content, not its ids (random per answer)."""
    output = [
        {k: v for k, v in o.items() if k not in ("id", "call_id")} for o in response["output"]
    ]
    return response["status"], response["incomplete_details"], output


async def _both(client: httpx.AsyncClient, path: str, body: dict[str, Any]) -> tuple[str, Any]:
    """The streamed answer's text and the non-streamed answer's body (None if
    it failed: the stream then failed too, by an error event)."""
    streamed = await client.post(path, json={**body, "stream": True})
    assert streamed.status_code == 200
    whole = await client.post(path, json=body)
    if whole.status_code != 200:
        assert whole.status_code == 502 and '"error"' in streamed.text
        return streamed.text, None
    return streamed.text, whole.json()


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    data=st.data(),
    dialect=st.sampled_from(sorted(FRAGMENTS)),
    seed=st.integers(0, 99),
    stop=st.sampled_from([None, ["END"], ["\n\n"], ["e"]]),
    length=st.booleans(),
    parallel=st.booleans(),
    include_usage=st.booleans(),
)
def test_streams_hold_their_apis_invariants_and_match_the_whole_answers(
    data: st.DataObject,
    dialect: str,
    seed: int,
    stop: list[str] | None,
    length: bool,
    parallel: bool,
    include_usage: bool,
) -> None:
    script: list[Any] = [data.draw(model_replies(dialect, CALLS)) for _ in range(2)]
    if length:  # the upstream's token limit ends each reply, often inside a call
        script = [[TextChunk(text=reply), FinishChunk(reason="length")] for reply in script]
    app = create_app(
        ProxyConfig(dialect=dialect, ping_interval=0),
        model_factory=lambda model, key: ScriptedModel(script, seed=seed, chunk_sizes=(1, 9)),
    )
    stops = {"stop": stop} if stop else {}

    async def run() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://proxy") as client:
            streamed, whole = await _both(client, "/v1/chat/completions", {
                "model": "m", "messages": USER, "tools": OPENAI_TOOLS, **stops,
                "parallel_tool_calls": parallel,
                "stream_options": {"include_usage": include_usage},
            })
            if whole is not None:
                message = whole["choices"][0]["message"]
                calls = [(c["function"]["name"], c["function"]["arguments"])
                         for c in message.get("tool_calls", [])]
                assert _openai(streamed, include_usage) == (
                    message["content"] or "", calls, whole["choices"][0]["finish_reason"]
                )
            choice = {"type": "auto", "disable_parallel_tool_use": not parallel}
            streamed, whole = await _both(client, "/v1/messages", {
                "model": "m", "messages": USER, "tools": ANTHROPIC_TOOLS, "max_tokens": 99,
                "tool_choice": choice, **({"stop_sequences": stop} if stop else {}),
            })
            if whole is not None:
                blocks = [(b["type"], b.get("text", b.get("input"))) for b in whole["content"]]
                end = {k: whole[k] for k in ("stop_reason", "stop_sequence")}
                assert _anthropic(streamed) == (blocks, end)
            streamed, whole = await _both(client, "/v1/responses", {
                "model": "m", "input": "hi", "tools": RESPONSES_TOOLS,
                "parallel_tool_calls": parallel,
            })
            if whole is not None:
                assert _without_ids(_responses(streamed)) == _without_ids(whole)

    anyio.run(run)
