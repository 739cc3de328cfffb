"""The default request body limit is 32 MiB, what Anthropic's API takes, not 8 MiB.

Claude Code sends the whole conversation each turn, pasted screenshots and
screenshot tools' images included, as base64. Past the proxy's 8 MiB a
session got a 413 for that request and every later one, where Anthropic's API
takes up to 32 MB; the images never go upstream (the model reads a
placeholder), so only the proxy's limit stood in the way."""

from __future__ import annotations

import base64
from typing import Any

from test_proxy import _anthropic, serve

from streamtools.proxy import ProxyConfig, create_app
from streamtools.testing import FakeServer

_MIB = 1024 * 1024


def test_a_conversation_of_12_mib_of_screenshots_goes_through() -> None:
    image = base64.b64encode(b"\x89PNG" + bytes(9 * _MIB)).decode()  # 12 MiB as base64
    source = {"type": "base64", "media_type": "image/png", "data": image}
    messages: Any = [{"role": "user", "content": [
        {"type": "image", "source": source}, {"type": "text", "text": "What is this?"},
    ]}]
    with FakeServer(["A screenshot, I cannot see it."]) as upstream:
        with serve(create_app(ProxyConfig(upstream=upstream.base_url))) as url:
            answer = _anthropic(url).messages.create(model="m", max_tokens=50, messages=messages)
        sent = upstream.requests[0]["messages"][-1]["content"]
    assert answer.content[0].type == "text"
    assert "[image omitted: this model reads text only]" in sent and len(sent) < 1000

