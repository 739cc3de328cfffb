"""What an MCP server logs to its client (``notifications/message``), in our log.

Theory of operation
-------------------
A server may send log messages to its client, at the spec's eight levels
(``debug`` to ``emergency``): a warning that a file was skipped, an error
behind a failed call. The SDK's client drops them unless given a callback, so
they were lost, and a misbehaving server gave nothing to go on but its
stderr (NousResearch/hermes-agent#57416 forwarded them to its log for that
reason, after opencode did). They now go to the ``streamtools.mcp.server``
logger at the matching Python level, one line each naming the server (and
the server's own logger name, if it gives one), its data as text, cut at
``_MAX_CHARS``.

A server of 2026-07-28 sends them only for requests that ask, at a level the
request names; the client asks at the level the ``streamtools.mcp.server``
logger lets through when the session opens (``wanted_level``), so that nothing
is sent that would be dropped: by default Python logs warnings and above. A
server of an earlier version sends what it sends; what the logger's level
filters out costs nothing more than the notification.
"""

from __future__ import annotations

import logging

import msgspec
from mcp.client.session import LoggingFnT
from mcp.types import LoggingLevel, LoggingMessageNotificationParams

__all__ = ["log_callback", "wanted_level"]

logger = logging.getLogger("streamtools.mcp.server")

# Long data (a dump, a traceback) is cut here: a log line, not a transcript.
_MAX_CHARS = 2000

_LEVELS: dict[str, int] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


def wanted_level() -> LoggingLevel:
    """The spec's level matching what ``streamtools.mcp.server`` lets through now."""
    level = logger.getEffectiveLevel()
    if level <= logging.DEBUG:
        return "debug"
    if level <= logging.INFO:
        return "info"
    if level <= logging.WARNING:
        return "warning"
    if level <= logging.ERROR:
        return "error"
    return "critical"


def _text(data: object) -> str:
    if isinstance(data, str):
        text = data
    else:
        try:
            text = msgspec.json.encode(data).decode()
        except (TypeError, msgspec.EncodeError):
            text = repr(data)
    return text if len(text) <= _MAX_CHARS else text[:_MAX_CHARS] + "… (cut)"


def log_callback(label: str) -> LoggingFnT:
    """The SDK's logging callback for the server ``label``."""

    async def logged(params: LoggingMessageNotificationParams) -> None:
        level = _LEVELS.get(params.level, logging.WARNING)
        if not logger.isEnabledFor(level):
            return
        source = f" [{params.logger}]" if params.logger else ""
        logger.log(level, "MCP server %r%s: %s", label, source, _text(params.data))

    return logged
