"""`streamtools demo` and `streamtools replay`: the recorded session through the whole pipeline."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from streamtools.cli import main
from streamtools.cli.demo import calculator, clock, find_fixture, play, recorded_prompt
from streamtools.events import (
    CallEnd,
    CallError,
    Finish,
    ReasoningDelta,
    StreamError,
    TextDelta,
    ToolResult,
    TurnEnd,
    TurnStart,
    decode_event,
)
from streamtools.model import CallChunk, FinishChunk, ReasoningChunk, TextChunk
from streamtools.runtime import ConsoleRenderer
from streamtools.runtime.recording import (
    Failure,
    Header,
    encode_chunk,
    encode_failure,
    encode_header,
    load,
)
from streamtools.transcript import ToolResultMessage

FIXTURE = find_fixture()


def test_demo_runs_instantly_and_shows_the_whole_session(
    capsys: pytest.CaptureFixture[str],
) -> None:
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    assert main(["demo", "--instant", "--color", "never"]) == 0
    out = capsys.readouterr().out
    assert "The model is a REPLAY of demo.jsonl, played instantly." in out
    assert "you › Dinner came to $1,284.60" in out
    assert [int(n) for n in re.findall(r"─── turn (\d) ───", out)] == [1, 2, 3]
    # Calls with their arguments, results computed live by the local tools.
    assert '  → calculator {"expression": "1284.60 * 1.18"}\n' in out
    assert "  ← calculator: 1515.828\n" in out
    assert "  ← calculator: 216.5468571429\n" in out
    assert re.search(rf"  ← clock: {today} \d\d:\d\d:\d\d UTC \(\w+day\)\n", out)
    assert "**Each of the 7 people pays $216.55**" in out
    assert "─── final answer after 3 turns" in out
    assert "streamtools chat --provider ollama --model qwen3:8b" in out
    assert "\x1b[" not in out  # --color never (and not a TTY anyway)


@pytest.mark.anyio
async def test_play_streams_through_the_agent_on_both_backends() -> None:
    out = io.StringIO()
    result = await play(FIXTURE, speed=None, out=out, color=True)
    assert result.turns == 3
    assert result.text.startswith("Here's the breakdown:")
    assert "\x1b[36m" in out.getvalue()  # calls coloured when asked
    # The transcript holds the live results, paired to the recorded calls.
    contents = [m.content for m in result.transcript.messages if isinstance(m, ToolResultMessage)]
    assert contents[0] == "1515.828" and contents[2] == "216.5468571429"


def test_fixture_is_a_realistic_recording() -> None:
    segments = load(FIXTURE)
    assert len(segments) == 3
    assert recorded_prompt(FIXTURE).startswith("Dinner came to $1,284.60")
    for segment in segments:
        offsets = [c.t for c in segment.chunks]
        assert offsets == sorted(offsets)
        assert 0.2 < offsets[0] < 1.0  # a first-token delay
    total = sum(s.chunks[-1].t for s in segments)
    assert 4.0 < total < 10.0


def test_replay_prints_events(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(FIXTURE)]) == 0
    human = capsys.readouterr().out.splitlines()
    assert human[0] == "+  0.000s  turn_start   turn=1"
    assert any(line.split()[2:4] == ["call_end", "index=1"] for line in human)

    assert main(["replay", str(FIXTURE), "--json"]) == 0
    events = [decode_event(line) for line in capsys.readouterr().out.splitlines()]
    calls = [e for e in events if isinstance(e, CallEnd)]
    assert [(c.name, c.arguments) for c in calls] == [
        ("calculator", {"expression": "1284.60 * 1.18"}),
        ("clock", {"timezone": "UTC"}),
        ("calculator", {"expression": "1515.828 / 7"}),
    ]
    assert sum(isinstance(e, TurnStart) for e in events) == 3


def test_replay_reports_a_missing_or_bad_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # exit 2, like argparse and `streamtools demo --fixture` for a wrong file
    assert main(["replay", str(tmp_path / "nope.jsonl")]) == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type":"text","text":"x","t":0}\n')
    assert main(["replay", str(bad)]) == 2
    assert "chunk before the first header" in capsys.readouterr().err
    # an empty file (a ``chat --record`` session left at once) printed nothing and
    # exited 0, where ``demo --fixture`` of it says what is wrong: both say so now
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"\n")
    assert main(["replay", str(empty)]) == 2
    assert capsys.readouterr().err == (
        f"streamtools replay: error: {empty} has no model calls: not a streamtools recording\n"
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        ('{"bad\n', "invalid JSON"),
        ('{"type":"text","text":"x","t":0}\n', "chunk before the first header"),
        ("\n", "has no model calls"),
    ],
)
def test_demo_reports_a_bad_fixture_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    path = tmp_path / "fixture.jsonl"
    if content is not None:
        path.write_text(content)
    assert main(["demo", "--instant", "--fixture", str(path)]) == 2
    captured = capsys.readouterr()
    [line] = captured.err.splitlines()
    assert line.startswith("streamtools demo: ") and message in line
    assert str(path) in line
    assert "Traceback" not in captured.err and captured.out == ""


def test_demo_tools() -> None:
    assert calculator.fn is not None and clock.fn is not None
    assert calculator.fn("(1284.60 * 1.18) / 7") == pytest.approx(216.5468571429)
    assert calculator.fn("2 ** 10 + sqrt(16)") == 1028
    assert calculator.fn("1,000 / 4") == 250
    with pytest.raises(ValueError, match="unsupported expression"):
        calculator.fn("__import__('os')")
    with pytest.raises(ValueError, match="exponent too large"):
        calculator.fn("9 ** 9 ** 9")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(\w+\)", clock.fn())
    assert clock.fn("Mars/Olympus").startswith("unknown time zone 'Mars/Olympus'; in UTC it is")


def test_console_degrades_to_ascii() -> None:
    class Ascii(io.StringIO):
        encoding = "ascii"

    out = Ascii()
    view = ConsoleRenderer(out)
    view.render(TurnStart(turn=1))
    view.render(CallEnd(index=0, id="c", name="f", arguments={}, raw=""))
    view.render(TextDelta(text="done ✓"))
    assert out.getvalue() == "--- turn 1 ---\n\ndone ?"
    assert view.color is False


def test_console_shows_control_characters_instead_of_obeying_them() -> None:
    # model text and a tool result (a fetched page) that try to clear the screen,
    # set the window title, ring the bell and overwrite the line
    hostile = "a\x1b[2Jb\x1b]0;pwned\x07c\rd\x9be\tf\n"

    class Utf8(io.StringIO):
        encoding = "utf-8"

    out = Utf8()
    view = ConsoleRenderer(out, color=True)
    view.render(TextDelta(text=hostile))
    view.render(ToolResult(index=0, id="c", name="fetch", content=hostile))
    view.render(StreamError(kind="upstream", message=hostile))
    shown = out.getvalue()
    own = shown.replace("\x1b[32m", "").replace("\x1b[31m", "").replace("\x1b[0m", "")
    assert "\x1b" not in own and "\x07" not in own and "\r" not in own and "\x9b" not in own
    assert "a␛[2Jb␛]0;pwned␇cd\ufffde\tf\n" in shown  # every other character kept
    assert "fetch: a␛[2Jb␛]0;pwned␇cd\ufffde f" in own
    assert "\x1b[32m" in shown  # the renderer's own colours still work


def test_replay_into_a_closed_pipe_is_quiet() -> None:
    with subprocess.Popen(
        [sys.executable, "-m", "streamtools", "replay", str(FIXTURE)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        proc.stdout.close()  # the reader leaves, as `| head -1` does
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 0
    assert b"turn_start" in first
    assert err == ""


def test_replay_shows_a_call_that_raised(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a recorded failure (here a connection cut inside a call) is shown with its
    # message, and the open call is unterminated, not a reply that ended "stop"
    data = (
        encode_header(Header(turn=1))
        + encode_chunk(TextChunk(text='<am:tool_call name="add"><a>2'), 0.1)
        + encode_failure(Failure(message="connection reset", status=None, t=0.2))
    )
    path = tmp_path / "failed.jsonl"
    path.write_bytes(data)
    assert main(["replay", str(path), "--json"]) == 0
    events = [decode_event(line) for line in capsys.readouterr().out.splitlines()]
    error = next(e for e in events if isinstance(e, StreamError))
    assert error.message == "connection reset"
    (bad,) = [e for e in events if isinstance(e, CallError)]
    assert bad.reason == "unterminated"
    assert isinstance(events[-1], TurnEnd) and events[-1].reason == "error"
    assert isinstance(events[-2], Finish) and events[-2].reason == "error"


def test_replay_shows_a_native_call_as_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A native-mode recording's call was decoded against an empty tool list,
    so ``replay`` showed every native call as ``call_error`` (unknown_tool, "The
    tools you can call are: (none)"); it is shown as it was, as text calls are."""
    data = (
        encode_header(Header(turn=1))
        + encode_chunk(CallChunk(index=0, id="x", name="add", arguments='{"a": 1,'), 0.1)
        + encode_chunk(CallChunk(index=0, arguments=' "b": 2}'), 0.2)
        + encode_chunk(FinishChunk(reason="tool_calls"), 0.3)
    )
    path = tmp_path / "native.jsonl"
    path.write_bytes(data)
    assert main(["replay", str(path), "--json"]) == 0
    events = [decode_event(line) for line in capsys.readouterr().out.splitlines()]
    assert not any(isinstance(e, CallError) for e in events)
    (end,) = [e for e in events if isinstance(e, CallEnd)]
    assert (end.id, end.name, end.arguments) == ("x", "add", {"a": 1, "b": 2})


def test_replay_shows_signed_thinking_as_its_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An Anthropic thinking block ends with a chunk that carries its signature
    and no text: replay shows the reasoning, with no empty delta for it."""
    data = (
        encode_header(Header(turn=1))
        + encode_chunk(ReasoningChunk(text="hmm"), 0.1)
        + encode_chunk(ReasoningChunk(text="", signature="sig"), 0.2)
        + encode_chunk(TextChunk(text="Hi"), 0.3)
        + encode_chunk(FinishChunk(reason="stop"), 0.4)
    )
    path = tmp_path / "thinking.jsonl"
    path.write_bytes(data)
    assert main(["replay", str(path), "--json"]) == 0
    events = [decode_event(line) for line in capsys.readouterr().out.splitlines()]
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["hmm"]


def test_calculator_keeps_the_commas_between_a_functions_arguments() -> None:
    """Commas were all stripped as thousands separators, so ``round(216.5469, 2)``
    was a syntax error, ``min(1,2)`` was ``min(12)`` and ``round(2.5,1)`` was
    ``round(2.51)``, 3: the advertised two-argument functions never worked, or
    silently gave a wrong answer. Only a separator outside a call's arguments goes."""
    assert calculator.fn is not None
    assert calculator.fn("round(216.5469, 2)") == 216.55
    assert calculator.fn("round(2.5,1)") == 2.5
    assert calculator.fn("min(1,2)") == 1
    assert calculator.fn("max(3, 4)") == 4
    with pytest.raises(TypeError):  # in a call's arguments a comma separates them
        calculator.fn("round(1,515.828 / 7, 2)")
    assert calculator.fn("1,000,000 + 1") == 1_000_001
    assert calculator.fn("(1,000 + 1,284.60) * 2") == pytest.approx(4569.2)
    assert calculator.fn("round((1,284.60 * 1.18) / 7, 2)") == 216.55


@pytest.mark.parametrize("expression", ["((9**256)**256)**256", "round(5, -10**8)"])
def test_calculator_refuses_work_a_model_could_make_endless(expression: str) -> None:
    """A model (in ``chat``, or a browser's user through ``ui``) could nest powers or
    round an integer to -10**8 digits: hours of CPU in a thread the tool timeout
    cannot stop. They are refused at once."""
    assert calculator.fn is not None
    with pytest.raises(ValueError, match="too large|round"):  # raised before any work
        calculator.fn(expression)


def test_demo_of_a_session_that_failed_says_so_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recording whose model call raised (a ``chat --record`` session that hit
    an HTTP 401) replays as that ``ProviderError``; ``demo --fixture`` printed
    it as a traceback and exited 1. It is now said in one line, as ``chat``
    says a provider's error, and the command still exits 1."""
    data = encode_header(Header(turn=1)) + encode_failure(
        Failure(message="invalid api key", status=401, opened=False)
    )
    path = tmp_path / "failed.jsonl"
    path.write_bytes(data)
    assert main(["demo", "--instant", "--color", "never", "--fixture", str(path)]) == 1
    captured = capsys.readouterr()
    assert "streamtools demo: error: invalid api key" in captured.err
    assert "Traceback" not in captured.err + captured.out


def test_replay_reads_a_recording_saved_with_a_byte_order_mark_and_crlf(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recording opened and saved again by a Windows editor (UTF-8 with a byte
    order mark, CRLF line ends) was refused: "line 1: invalid JSON ... (byte 0)"."""
    assert main(["replay", str(FIXTURE)]) == 0
    expected = capsys.readouterr().out
    saved = tmp_path / "saved.jsonl"
    saved.write_bytes(b"\xef\xbb\xbf" + FIXTURE.read_bytes().replace(b"\n", b"\r\n"))
    assert main(["replay", str(saved)]) == 0
    assert capsys.readouterr().out == expected
