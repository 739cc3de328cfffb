"""streamtools' errors survive pickle and copy (a worker process sends one back)."""

from __future__ import annotations

import copy
import pickle

import pytest

from streamtools.errors import BudgetExceeded, ProviderError, RepairExhausted, StreamtoolsError
from streamtools.tools import ToolArgumentsError
from streamtools.transcript import Transcript


def history() -> Transcript:
    transcript = Transcript()
    transcript.user("What is 2 + 3?")
    transcript.assistant("Adding.")
    return transcript


@pytest.mark.parametrize(
    "error",
    [
        BudgetExceeded("no final answer after 8 turns", turns=8, transcript=history()),
        RepairExhausted("still failed: bad call", reason="call_error", turns=3),
        ToolArgumentsError("add", "Expected `int`", "$.a", "Invalid arguments for `add`"),
        ProviderError("HTTP 429", status=429, body="{}", retryable=True, retry_after=2.0),
    ],
    ids=["BudgetExceeded", "RepairExhausted", "ToolArgumentsError", "ProviderError"],
)
def test_errors_pickle_and_copy(error: StreamtoolsError) -> None:
    """pickle and ``copy`` rebuild an exception as ``cls(*args)``, which raised
    TypeError for the first three (``turns`` and ``reason`` are required
    keywords, ``ToolArgumentsError`` takes four arguments): an error sent back
    from a worker process could not be read."""
    error.add_note("while answering a test")
    for again in (pickle.loads(pickle.dumps(error)), copy.copy(error), copy.deepcopy(error)):
        assert type(again) is type(error)
        assert str(again) == str(error) and again.args == error.args
        assert vars(again) == vars(error)
        assert again.__notes__ == ["while answering a test"]
