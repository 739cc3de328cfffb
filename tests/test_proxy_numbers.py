"""Numbers in a request: integers past 64 bits go upstream exactly as written, and
one too long to read is a 400 that says so."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from test_proxy import A_WEATHER, USER, WEATHER, proxy

# 2**72, and one of the 65-bit integers msgspec before 0.19 decoded wrongly (#701)
BIG = ["4722366482869645213696", "19933688932870350000"]


def past_call_bodies(number: str) -> dict[str, Any]:
    """A conversation whose past call had ``{"n": number}``, in each API."""
    arguments = '{"n": ' + number + "}"
    call = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": arguments}}
    return {
        "chat/completions": {"model": "m", "tools": [WEATHER], "messages": [
            *USER,
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        ]},
        "messages": {"model": "m", "max_tokens": 50, "tools": [A_WEATHER], "messages": [
            *USER,
            {"role": "assistant", "content": [{"type": "tool_use", "id": "c1",
                                               "name": "weather", "input": {"n": 0}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1",
                                          "content": "sunny"}]},
        ]},
        "responses": {"model": "m", "tools": [{"type": "function", **WEATHER["function"]}],
                      "input": [
            *USER,
            {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": arguments},
            {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
        ]},
    }


@pytest.mark.parametrize("number", BIG)
def test_a_big_integer_in_a_past_call_goes_upstream_as_written(number: str) -> None:
    bodies = past_call_bodies(number)
    with proxy(["ok"] * 3) as (url, upstream):
        for path, body in bodies.items():
            raw = json.dumps(body)
            if path == "messages":  # an input object: the body's own number
                raw = raw.replace('"input": {"n": 0}', '"input": {"n": ' + number + "}")
            response = httpx.post(
                f"{url}/v1/{path}", content=raw, timeout=10,
                headers={"content-type": "application/json"},
            )
            assert response.status_code == 200, (path, response.text)
        for sent in upstream.requests:
            text = json.dumps(sent["messages"])
            assert f"<n>{number}</n>" in text and "e+" not in text


def test_an_integer_too_long_to_read_is_a_400_that_says_so() -> None:
    """It said 'not valid JSON', which it is: the client looked for a syntax error."""
    raw = json.dumps({"model": "m", "messages": USER, "seed": 0}).replace(
        '"seed": 0', '"seed": ' + "9" * 5000
    )
    with proxy(["ok"]) as (url, _):
        response = httpx.post(
            f"{url}/v1/chat/completions", content=raw, timeout=10,
            headers={"content-type": "application/json"},
        )
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    assert "number too large to read" in message and "not valid JSON" not in message
