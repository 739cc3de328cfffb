"""The async runtime: the agent loop, the tool executor, recording and replay.

``Agent`` runs a model with tools until it answers (``agent.stream`` for the
events, ``agent.run`` for the result); ``event_stream`` is the stream under
``agent.stream``, for any run that emits events; ``Executor`` runs single
calls; ``Replay`` and ``record`` play back and make recordings of model streams;
``ConsoleRenderer`` draws events in a terminal. Runtime code uses anyio only,
so asyncio and trio both work.
"""

from __future__ import annotations

from streamtools.runtime.agent import Agent
from streamtools.runtime.console import ConsoleRenderer
from streamtools.runtime.executor import Executor
from streamtools.runtime.recording import Replay, record
from streamtools.runtime.stream import EventStream, RunResult, event_stream
from streamtools.runtime.turn import Emit

__all__ = [
    "Agent",
    "ConsoleRenderer",
    "Emit",
    "EventStream",
    "Executor",
    "Replay",
    "RunResult",
    "event_stream",
    "record",
]
