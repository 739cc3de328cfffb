"""The run's errors survive pickle and copy (a worker process sends one back)."""

from __future__ import annotations

import copy
import pickle

import pytest

from streamtools.errors import BudgetExceeded, RepairExhausted, StreamtoolsError
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
    ],
    ids=["BudgetExceeded", "RepairExhausted"],
)
def test_errors_with_required_keywords_pickle_and_copy(error: StreamtoolsError) -> None:
    """pickle and ``copy`` rebuild an exception as ``cls(*args)``, which raised
    TypeError for these two (``turns`` and ``reason`` are required keywords):
    an error sent back from a worker process could not be read."""
    error.add_note("while answering a test")
    for again in (pickle.loads(pickle.dumps(error)), copy.copy(error), copy.deepcopy(error)):
        assert type(again) is type(error)
        assert str(again) == str(error) and again.args == error.args
        assert vars(again) == vars(error)
        assert again.__notes__ == ["while answering a test"]
