"""Test helpers for users of streamtools and for its own tests.

``ScriptedModel`` plays given replies as a model would stream them. To play
back or make recordings of real sessions, see ``streamtools.runtime.Replay``
and ``streamtools.runtime.record``.
"""

from __future__ import annotations

from streamtools.testing.fake_server import FakeServer
from streamtools.testing.scripted import ScriptedModel

__all__ = ["FakeServer", "ScriptedModel"]
