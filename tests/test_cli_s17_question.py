"""``streamtools chat --model m "$QUESTION"`` with the variable empty asked
nothing, answered nothing, said nothing and exited 0; it is a usage error."""

from __future__ import annotations

import pytest

from streamtools.cli import main


@pytest.mark.parametrize("question", ["", "   ", "\n"])
def test_an_empty_question_is_a_usage_error(
    question: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["chat", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", question])
    assert code == 2
    assert capsys.readouterr().err == "streamtools chat: error: the question is empty\n"
