"""Shared by the reasoning-echo tests: a chat-completions server on 127.0.0.1
that refuses what DeepSeek's thinking mode or OpenAI's API refuses, and the
SSE of a thinking model's replies."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from streamtools.tools import tool

MODEL = "deepseek-v4-pro"
# what the OpenAI API takes on an assistant message: anything else is refused
_OPENAI_ASSISTANT = {"role", "content", "tool_calls", "name", "refusal", "audio", "function_call"}


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def sse(deltas: list[dict[str, Any]], finish: str) -> bytes:
    events = [{"choices": [{"index": 0, "delta": d}]} for d in deltas]
    events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    lines = [f"data: {json.dumps(e)}\n\n" for e in events] + ["data: [DONE]\n\n"]
    return "".join(lines).encode()


def call(call_id: str, a: int, b: int) -> dict[str, Any]:
    args = json.dumps({"a": a, "b": b})
    return {
        "tool_calls": [
            {"index": 0, "id": call_id, "type": "function",
             "function": {"name": "multiply", "arguments": args}}
        ]
    }  # fmt: skip


def deepseek_check(streamed: dict[str, str]) -> Callable[[dict[str, Any]], str | None]:
    """DeepSeek's thinking mode: every past reply with calls carries the
    reasoning it was streamed with (``streamed``: by call id), in every turn."""

    def check(body: dict[str, Any]) -> str | None:
        for n, m in enumerate(body["messages"]):
            if m.get("role") != "assistant" or not m.get("tool_calls"):
                continue
            sent = streamed.get(m["tool_calls"][0]["id"])
            if sent is not None and m.get("reasoning_content") != sent:
                return (
                    "The `reasoning_content` in the thinking mode must be passed back "
                    f"to the API (message {n})."
                )
        return None

    return check


def openai_check(body: dict[str, Any]) -> str | None:
    """OpenAI's API: no property it does not know on an assistant message."""
    for n, m in enumerate(body["messages"]):
        extra = set(m) - _OPENAI_ASSISTANT if m.get("role") == "assistant" else set()
        if extra:
            return f"messages[{n}]: Additional properties are not allowed ({sorted(extra)})"
    return None


class Server:
    """A chat-completions server on 127.0.0.1 that streams ``replies`` in
    order and answers 400 to a request ``check`` refuses; runs out: 500."""

    def __init__(self, replies: list[bytes], check: Callable[[dict[str, Any]], str | None]):
        self.replies = deque(replies)
        self.check = check
        self.bodies: list[dict[str, Any]] = []
        self.refused: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                outer.bodies.append(body)
                why = outer.check(body)
                if why is None and not outer.replies:
                    why = "no reply left"
                if why is not None:
                    outer.refused.append(why)
                    data = json.dumps({"error": {"message": why, "type": "invalid_request_error"}})
                    self._send(400, "application/json", data.encode())
                    return
                self._send(200, "text/event-stream", outer.replies.popleft())

            def _send(self, status: int, ctype: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.thread = threading.Thread(target=self.http.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.http.server_address[1]}/v1"

    def __enter__(self) -> Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.shutdown()
        self.http.server_close()
        self.thread.join(5)


STREAMED = {"call_a": "I need 6*7 first.", "call_b": "Now 42 squared."}


def two_tool_turns() -> list[bytes]:
    """A thinking model's three replies: a call, another call, the answer."""
    return [
        sse([{"reasoning_content": "I need 6*7 "}, {"reasoning_content": "first."},
              call("call_a", 6, 7)], "tool_calls"),
        sse([{"reasoning_content": STREAMED["call_b"]}, call("call_b", 42, 42)],
             "tool_calls"),
        sse([{"reasoning_content": "Done."}, {"content": "1764"}], "stop"),
    ]  # fmt: skip


def mock(replies: list[bytes], seen: list[dict[str, Any]]) -> httpx.AsyncClient:
    queue = deque(replies)

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=queue.popleft()
        )

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


