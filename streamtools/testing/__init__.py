"""Test helpers for users of streamtools and for its own tests.

``ScriptedModel`` plays given replies as a model would stream them; each is a
``ScriptedReply`` (text, chunks, an exception, or a function of the request).
``FakeServer`` serves replies over HTTP; each is text or a ``Reply`` (text,
reasoning, native calls as ``FakeCall``, and faults: an error status, a cut
connection, a stall), the names ``streamtools.testing.fake_server`` defines.
To play back or make recordings of real sessions, see
``streamtools.runtime.Replay`` and ``streamtools.runtime.record``.
"""

from __future__ import annotations

from streamtools.testing.fake_server import FakeCall, FakeServer, Reply
from streamtools.testing.scripted import ScriptedModel, ScriptedReply

__all__ = ["FakeCall", "FakeServer", "Reply", "ScriptedModel", "ScriptedReply"]
