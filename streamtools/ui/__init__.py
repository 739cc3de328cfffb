"""Serve an agent to a browser: SSE of our events, the AI SDK UI message
stream, a Starlette endpoint and a self-contained chat page.

The encoders (``UIMessageStreamEncoder``, ``encode_sse_event``) and the pump
need only anyio and msgspec; the Starlette pieces (``chat_endpoint``,
``create_app``, ``EventStreamResponse``) are imported on first use, so that
the ``ui`` extra (``pip install -e '.[ui]'`` in the clone) is needed only for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from streamtools.ui.aisdk import UI_MESSAGE_STREAM_HEADERS, UIMessageStreamEncoder, encode_ui_chunk
from streamtools.ui.messages import ChatRequestError, parse_chat_request
from streamtools.ui.sse import (
    KEEPALIVE,
    EventsFramer,
    EventSource,
    EventSourceFramer,
    UIMessageFramer,
    encode_sse_event,
    pump,
)

if TYPE_CHECKING:
    from streamtools.ui.app import (
        EventStreamResponse,
        Shutdown,
        chat_endpoint,
        chat_page,
        create_app,
        no_stream_to_resume,
    )

__all__ = [
    "KEEPALIVE",
    "UI_MESSAGE_STREAM_HEADERS",
    "ChatRequestError",
    "EventSource",
    "EventSourceFramer",
    "EventStreamResponse",
    "EventsFramer",
    "Shutdown",
    "UIMessageFramer",
    "UIMessageStreamEncoder",
    "chat_endpoint",
    "chat_page",
    "create_app",
    "encode_sse_event",
    "encode_ui_chunk",
    "no_stream_to_resume",
    "parse_chat_request",
    "pump",
]

_STARLETTE = {
    "EventStreamResponse",
    "Shutdown",
    "chat_endpoint",
    "chat_page",
    "create_app",
    "no_stream_to_resume",
}


def __getattr__(name: str) -> Any:
    if name in _STARLETTE:
        from streamtools.ui import app

        return getattr(app, name)
    raise AttributeError(f"module 'streamtools.ui' has no attribute {name!r}")
