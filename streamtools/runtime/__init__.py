"""The async runtime: recording/replay, the tool executor and the agent loop."""

from __future__ import annotations

from streamtools.runtime.recording import Replay, record

__all__ = ["Replay", "record"]
