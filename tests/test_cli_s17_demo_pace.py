"""``streamtools demo --speed 2 --instant``: two paces at once. ``--instant``
took over without a word; the two now exclude each other, as they do for
``streamtools ui``."""

from __future__ import annotations

import pytest

from streamtools.cli import main


def test_speed_and_instant_together_are_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["demo", "--speed", "2", "--instant"])
    assert raised.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_each_alone_is_taken(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--instant", "--color", "never"]) == 0
    assert "played instantly" in capsys.readouterr().out
