"""The JSON value scanner's remembered path (``feed_run``) against its loop
(``feed``): for any text cut anywhere, two scanners, one taking each piece
without a closing bracket through ``feed_run``, agree after every piece on
where they stopped, their state, stack, error and examined count."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamtools.parser import jsonscan
from streamtools.parser.jsonscan import ValueScanner

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)
# broken JSON too: what a model writes by mistake
NOISE = st.lists(
    st.sampled_from(['"', ",", ":", " ", "{", "[", "\\", "\\u00", "tru", "1.", "x", "\n", "'"]),
    max_size=6,
).map("".join)


def snapshot(scanner: ValueScanner, end: int) -> tuple[object, ...]:
    state = (scanner.state, scanner.is_key, list(scanner.stack), scanner.error)
    return (end, *state, scanner.examined)


def agree(text: str, steps: list[int]) -> None:
    loop, remembered = ValueScanner(), ValueScanner()
    held = ""
    bounds, at = [], 0
    for step in steps or [len(text)]:
        at += step
        if at >= len(text):
            break
        bounds.append(at)
    bounds.append(len(text))
    start = 0
    for end in bounds:
        piece = held + text[start:end]
        start = end
        a = loop.feed(piece, 0)
        if "}" in piece or "]" in piece:
            b = remembered.feed(piece, 0)
        else:
            before = snapshot(remembered, 0)[1:-1]
            b = remembered.feed_run(piece)
            if b < 0:  # a syntax error: nothing taken, and the loop reports it
                assert loop.error is not None and snapshot(remembered, 0)[1:-1] == before
                return
        assert snapshot(remembered, b) == snapshot(loop, a), repr(piece)
        if loop.error is not None or loop.done:
            return
        held = piece[a:]


@SETTINGS
@given(JSON, NOISE, st.integers(0, 100), st.lists(st.integers(1, 6), max_size=60))
def test_feed_run_does_what_feed_does(value: object, noise: str, at: int, steps: list[int]) -> None:
    text = json.dumps(value, ensure_ascii=False)
    if noise:
        at %= len(text) + 1
        text = text[:at] + noise + text[at:]
    agree(text, steps)
    agree(text, steps)  # the same pieces again: now from the table


def test_same_piece_in_an_object_and_in_an_array() -> None:
    # ", " after a value asks for a key in an object and a value in an array
    for text in ('{"a": 1, "b": [2, 3, {"c": 4, "d": 5}], "e": 6}', '[1, {"a": 2, "b": 3}, 4]'):
        agree(text, [1] * len(text))
        agree(text, [2] * len(text))
        agree(text, [3] * len(text))


def test_table_is_bounded_and_keeps_working(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonscan, "_RUNS", {})
    monkeypatch.setattr(jsonscan, "_RUNS_MAX", 8)
    for i in range(50):
        scanner = ValueScanner()
        scanner.feed("{", 0)
        assert scanner.feed_run(f'"k{i}": "v') == len(f'"k{i}": "v')
        assert len(jsonscan._RUNS) <= 8
    scanner = ValueScanner()
    scanner.feed("{", 0)
    scanner.feed_run('"k49": "v')  # remembered: a hit gives the same state
    assert scanner.state == jsonscan.IN_STRING and not scanner.is_key and scanner.stack == ["}"]


def test_long_and_failing_pieces_are_not_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonscan, "_RUNS", {})
    scanner = ValueScanner()
    scanner.feed("{", 0)
    scanner.feed_run('"a_key_longer_than_sixteen": 1')
    bad = ValueScanner()
    bad.feed("{", 0)
    assert bad.feed_run("'a': 1") == -1
    assert bad.error is None and bad.stack == ["}"]
    assert jsonscan._RUNS == {}


_AFTER_THE_END = """
from streamtools.parser.jsonscan import ValueScanner
failed = ValueScanner()
failed.feed("[1,]", 0)
assert failed.error is not None
print(failed.feed("2", 0), failed.feed("}", 0), failed.error)
whole = ValueScanner()
whole.feed('{"a": 1} ', 0)
print(whole.feed("2", 0), whole.done)
"""


def test_a_scanner_that_failed_or_ended_reads_nothing_more() -> None:
    """Fed again after an error (a caller that did not check ``error``: the
    Ollama reader once did), the loop matched no state and never advanced: the
    client spun at full CPU past every timeout. It returns where it began; the
    error stays the first one. Run in a child so that a relapse fails, not hangs."""
    out = subprocess.run(
        [sys.executable, "-c", _AFTER_THE_END], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    failed, ended = out.stdout.splitlines()
    assert failed == "0 0 a comma before ']' (JSON allows no trailing comma)"
    assert ended == "0 True"
