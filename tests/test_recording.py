"""ScriptedModel, record() and Replay: what goes in comes back out, at the right pace;
any recording reads back exactly as it was written (a hypothesis property)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamtools.errors import ProviderError, UsageError
from streamtools.model import (
    CallChunk,
    ChatMessage,
    Chunk,
    FinishChunk,
    Model,
    ModelRequest,
    ReasoningChunk,
    TextChunk,
    UsageChunk,
    UseTool,
)
from streamtools.runtime import Agent, Replay, record
from streamtools.runtime.recording import (
    Failure,
    Header,
    encode_chunk,
    encode_failure,
    encode_header,
    load,
    parse,
)
from streamtools.testing import ScriptedModel
from streamtools.transcript import Transcript, UserMessage

pytestmark = pytest.mark.anyio

REQ = ModelRequest(messages=(ChatMessage(role="user", content="hi"),))


async def collect(model: Model, request: ModelRequest = REQ) -> list[Chunk]:
    async with model.stream(request) as chunks:
        return [c async for c in chunks]


def text_of(chunks: list[Chunk]) -> str:
    return "".join(c.text for c in chunks if isinstance(c, TextChunk))


async def test_scripted_plays_replies_in_order_and_records_requests() -> None:
    model = ScriptedModel(["Hello there, world.", "second"], seed=3)
    first = await collect(model)
    assert text_of(first) == "Hello there, world."
    assert all(1 <= len(c.text) <= 6 for c in first if isinstance(c, TextChunk))
    assert len(first) > 4
    assert first[-1] == FinishChunk(reason="stop")
    other = ModelRequest(messages=(ChatMessage(role="user", content="again"),))
    assert text_of(await collect(model, other)) == "second"
    assert model.requests == [REQ, other]
    assert model.remaining == 0
    assert model.open_streams == 0
    with pytest.raises(UsageError, match="request 3 has none"):
        await collect(model)


async def test_scripted_seed_changes_split_not_text() -> None:
    a = await collect(ScriptedModel(["x" * 60], seed=1))
    b = await collect(ScriptedModel(["x" * 60], seed=2))
    assert text_of(a) == text_of(b)
    assert [len(c.text) for c in a if isinstance(c, TextChunk)] != [
        len(c.text) for c in b if isinstance(c, TextChunk)
    ]


async def test_scripted_honours_stop_like_a_provider() -> None:
    reply = 'Sure. <am:tool_call name="clock"></am:tool_call> trailing'
    request = ModelRequest(messages=REQ.messages, stop=("</am:tool_call>", "never"))
    chunks = await collect(ScriptedModel([reply]), request)
    assert text_of(chunks) == 'Sure. <am:tool_call name="clock">'
    assert chunks[-1] == FinishChunk(reason="stop", stop_sequence="</am:tool_call>")
    ignoring = await collect(ScriptedModel([reply], honor_stop=False), request)
    assert text_of(ignoring) == reply


async def test_scripted_chunk_replies_get_a_finish() -> None:
    given: list[Chunk] = [TextChunk(text="a"), CallChunk(index=0, id="c1", name="f")]
    assert await collect(ScriptedModel([given])) == [*given, FinishChunk(reason="stop")]
    done: list[Chunk] = [TextChunk(text="a"), FinishChunk(reason="length")]
    assert await collect(ScriptedModel([done])) == done


async def test_record_then_replay_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    script: list[list[Chunk]] = [
        [TextChunk(text="Hi ✓ "), TextChunk(text="你好"), UsageChunk(input_tokens=3)],
        [CallChunk(index=0, id="c", name="f", arguments='{"a":1}'), FinishChunk(reason="x")],
    ]
    inner = ScriptedModel(script, delay=0.01)
    recorder = record(inner, path)
    played = [await collect(recorder), await collect(recorder)]
    segments = load(path)
    assert [s.header.turn for s in segments] == [1, 2]
    assert segments[0].header.provider == "ScriptedModel"
    assert segments[0].header.request == REQ
    offsets = [t.t for t in segments[0].chunks]
    assert offsets == sorted(offsets) and offsets[0] > 0
    replay = Replay(path)
    assert [await collect(replay), await collect(replay)] == played
    assert replay.requests == [REQ, REQ]
    with pytest.raises(UsageError, match="call 3 has none"):
        await collect(replay)


async def test_record_keeps_a_stream_cut_early(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    recorder = record(ScriptedModel(["abcdefghijklmnop"], chunk_sizes=(2, 2)), path)
    async with recorder.stream(REQ) as chunks:
        async for chunk in chunks:
            assert chunk == TextChunk(text="ab")
            break
    [segment] = load(path)
    # the last stream of the file, closed before the model finished it: the
    # recording holds no more of it, so it ends there in error
    kept, end = [t.chunk for t in segment.chunks]
    assert kept == TextChunk(text="ab")
    assert isinstance(end, FinishChunk) and end.reason == "error"


def _timed_file(path: Path) -> None:
    lines = [encode_header(Header(provider="test", request=REQ))]
    lines += [encode_chunk(TextChunk(text=str(i)), 0.05 * i) for i in range(1, 5)]
    lines.append(encode_chunk(FinishChunk(reason="stop"), 0.2))
    path.write_bytes(b"".join(lines))


@pytest.mark.parametrize("speed", [1.0, 4.0])
async def test_replay_paced_follows_offsets(tmp_path: Path, speed: float) -> None:
    path = tmp_path / "timed.jsonl"
    _timed_file(path)
    replay = Replay(path, speed=speed)
    start = anyio.current_time()
    seen: list[float] = []
    async with replay.stream(REQ) as chunks:
        async for _ in chunks:
            seen.append(anyio.current_time() - start)
    # Never early: each chunk arrives no sooner than its scaled offset.
    expected = [0.05 * i / speed for i in range(1, 5)] + [0.2 / speed]
    assert all(s >= e - 0.002 for s, e in zip(seen, expected, strict=True))


async def test_replay_instant_and_cancellable(tmp_path: Path) -> None:
    path = tmp_path / "timed.jsonl"
    _timed_file(path)
    assert text_of(await collect(Replay(path))) == "1234"
    slow = Replay(path, speed=0.001)  # 200 s if it were waited for
    with anyio.move_on_after(0.05) as scope:
        await collect(slow)
    assert scope.cancelled_caught


def test_bad_recordings_are_reported(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="chunk before the first header"):
        parse(b'{"type":"text","text":"x","t":0}\n')
    with pytest.raises(UsageError, match=":2: invalid JSON"):
        parse(encode_header(Header()) + b"{nope\n")
    with pytest.raises(UsageError, match=":2: JSON nested too deeply"):
        parse(encode_header(Header()) + b"[" * 5000 + b"]" * 5000 + b"\n")
    with pytest.raises(UsageError, match="unsupported recording"):
        parse(b'{"type":"header","format":"other","version":1}\n')
    for speed in (0, -1.0, float("nan")):
        with pytest.raises(UsageError, match="speed must be positive"):
            Replay(tmp_path / "x", speed=speed)


async def test_a_lone_surrogate_half_is_recorded_as_u_fffd(tmp_path: Path) -> None:
    """A model's chunk (or the request) holding a lone surrogate half, which
    UTF-8 cannot carry: the recorder raised ``UnicodeEncodeError`` out of the
    stream, ending the run. It is written as U+FFFD, as ``Transcript.encode``
    writes one, and a pair stays its character."""
    path = tmp_path / "half.jsonl"
    inner = ScriptedModel([[TextChunk(text="report-\udce9 \U0001f600")]])
    prompt = Transcript()
    prompt.add(UserMessage(content="open report-\udce9"))  # ``add`` keeps the half
    result = await Agent(record(inner, path)).run(prompt)
    assert result.text == "report-\udce9 \U0001f600"  # the run itself is as the model wrote
    [segment] = load(path)
    assert [t.chunk for t in segment.chunks][0] == TextChunk(text="report-\ufffd \U0001f600")
    assert segment.header.request is not None
    assert "open report-\ufffd" in segment.header.request.messages[-1].content


def test_a_line_not_utf8_or_with_an_escaped_lone_half() -> None:
    """Bytes that are not UTF-8 in a line's string raised msgspec's raw
    ``UnicodeDecodeError``: a ``UsageError`` naming the line now. An escaped
    lone half (``\\udce9``, a line written by other means) was refused as
    "truncated" JSON: it is read as U+FFFD, as ``Transcript.decode`` reads it."""
    header = encode_header(Header())
    with pytest.raises(UsageError, match=":2: not UTF-8"):
        parse(header + b'{"type":"text","text":"caf\xe9","t":0}\n')
    [segment] = parse(header + b'{"type":"text","text":"a\\udce9 \\ud83d\\ude00","t":0.5}\n')
    assert segment.chunks[0].chunk == TextChunk(text="a\ufffd \U0001f600")
    assert segment.chunks[0].t == 0.5


def test_a_recording_that_names_its_tool_choice_as_a_bare_string_still_loads() -> None:
    """Recordings written before ``UseTool`` carry a named choice as a string."""
    old = (
        b'{"type":"header","format":"streamtools.recording","version":1,"provider":"p",'
        b'"turn":1,"request":{"messages":[{"role":"user","content":"hi"}],'
        b'"tool_choice":"search"},"t":0}\n{"type":"text","text":"x","t":0.1}\n'
    )
    [segment] = parse(old)
    assert segment.header.request is not None
    assert segment.header.request.tool_choice == UseTool("search")
    assert [c.chunk for c in segment.chunks] == [TextChunk(text="x")]
    keyword = old.replace(b'"search"', b'"required"')
    [segment] = parse(keyword)
    assert segment.header.request is not None
    assert segment.header.request.tool_choice == "required"
    with pytest.raises(UsageError, match="not a recording line"):
        parse(old.replace(b'"search"', b"7"))


_text = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=8)
_chunk = st.one_of(
    st.builds(TextChunk, text=_text),
    st.builds(ReasoningChunk, text=_text),
    st.builds(
        CallChunk,
        index=st.integers(0, 2**40),
        id=st.none() | _text,
        name=st.none() | _text,
        arguments=_text,
        done=st.booleans(),
    ),
    st.builds(
        UsageChunk,
        input_tokens=st.none() | st.integers(0, 2**40),
        output_tokens=st.none() | st.integers(0, 2**40),
    ),
    st.builds(
        FinishChunk, reason=_text, stop_sequence=st.none() | _text, message=st.none() | _text
    ),
)
_request = st.builds(
    ModelRequest,
    messages=st.lists(
        st.builds(ChatMessage, role=st.sampled_from(["system", "user"]), content=_text),
        max_size=3,
    ).map(tuple),
    stop=st.lists(_text, max_size=2).map(tuple),
    temperature=st.none() | st.floats(0, 2),
    max_tokens=st.none() | st.integers(1, 9999),
    extra=st.dictionaries(_text, st.integers() | _text, max_size=2),
)


@settings(max_examples=100, deadline=None)
@given(
    segments=st.lists(
        st.tuples(_request, st.lists(st.tuples(_chunk, st.floats(0, 1e4)), max_size=6)),
        max_size=3,
    ),
    provider=_text,
)
def test_any_recording_reads_back_as_written(
    segments: list[tuple[ModelRequest, list[tuple[Chunk, float]]]], provider: str
) -> None:
    data = b""
    for turn, (request, chunks) in enumerate(segments, start=1):
        data += encode_header(Header(provider=provider, turn=turn, request=request))
        data += b"".join(encode_chunk(chunk, t) for chunk, t in chunks)
    back = parse(data)
    assert len(back) == len(segments)
    for segment, (request, chunks) in zip(back, segments, strict=True):
        assert (segment.header.request, segment.header.provider) == (request, provider)
        assert [c.chunk for c in segment.chunks] == [chunk for chunk, _ in chunks]
        assert [c.t for c in segment.chunks] == [round(t, 4) for _, t in chunks]


class _Failing:
    """A model that fails as providers do: on opening (an HTTP error status) or
    after some text (a connection reset)."""

    def __init__(self, *, on_open: bool) -> None:
        self.on_open = on_open

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[Chunk]]:
        if self.on_open:
            raise ProviderError("HTTP 401: bad key", status=401, body='{"error":"bad key"}')

        async def chunks() -> AsyncIterator[Chunk]:
            yield TextChunk(text="The answer is")
            raise ProviderError("the connection was reset")

        yield chunks()


async def test_a_failed_stream_replays_as_the_same_failure(tmp_path: Path) -> None:
    """A recorded stream that raised replays as that ``ProviderError`` at the
    same point, not as a stream that ended normally: an agent replaying it
    fails as the recorded run did, instead of answering with a fragment (or
    with nothing, for an error on opening)."""
    for on_open in (True, False):
        path = tmp_path / f"failed-{on_open}.jsonl"
        with pytest.raises(ProviderError) as recorded:
            await Agent(record(_Failing(on_open=on_open), path)).run("hi")
        [segment] = load(path)
        assert segment.failure is not None and segment.failure.opened is not on_open
        with pytest.raises(ProviderError) as replayed:
            await Agent(Replay(path)).run("hi")
        assert str(replayed.value) == str(recorded.value)
        assert (replayed.value.status, replayed.value.body) == (
            recorded.value.status,
            recorded.value.body,
        )
    replay = Replay(tmp_path / "failed-False.jsonl")
    got: list[Chunk] = []
    with pytest.raises(ProviderError, match="reset"):
        async with replay.stream(REQ) as chunks:
            async for chunk in chunks:
                got.append(chunk)
    assert got == [TextChunk(text="The answer is")]


class _RateLimited:
    """A model refused as a provider does after its own retries: HTTP 429 with
    the server's advice."""

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[Chunk]]:
        raise ProviderError(
            "HTTP 429: rate limited",
            status=429,
            body='{"error":"slow down"}',
            retryable=True,
            retry_after=20.0,
            should_retry=True,
        )
        yield  # pragma: no cover - never reached


async def test_a_replayed_failure_keeps_its_retry_advice(tmp_path: Path) -> None:
    """A recorded 429 replayed as a ``ProviderError`` that was not ``retryable``
    and had no ``retry_after``, so an app that waits and asks again on a rate
    limit (or a test of that code, replaying a recording) did neither."""
    path = tmp_path / "limited.jsonl"
    with pytest.raises(ProviderError) as recorded:
        await Agent(record(_RateLimited(), path)).run("hi")
    with pytest.raises(ProviderError) as replayed:
        await Agent(Replay(path)).run("hi")
    advice = ("retryable", "retry_after", "should_retry", "status", "body")
    assert [getattr(replayed.value, a) for a in advice] == [
        getattr(recorded.value, a) for a in advice
    ]
    assert replayed.value.retry_after == 20.0 and replayed.value.retryable is True
    # a line written before these fields existed still reads, without advice
    old = encode_header(Header(request=REQ)) + b'{"type":"error","message":"reset","t":0.5}\n'
    [segment] = parse(old)
    assert segment.failure is not None and segment.failure.error().retryable is False


async def test_the_consumers_own_error_is_not_recorded_as_the_models(tmp_path: Path) -> None:
    path = tmp_path / "consumer.jsonl"
    recorder = record(ScriptedModel(["abc"]), path)
    with pytest.raises(KeyError):
        async with recorder.stream(REQ) as chunks:
            async for _ in chunks:
                raise KeyError("mine")
    [segment] = load(path)
    assert segment.failure is None and len(segment.chunks) == 2  # "a", then the end
    assert segment.chunks[0].chunk == TextChunk(text="abc")


def test_nothing_may_follow_a_streams_error_line() -> None:
    data = encode_header(Header(request=REQ)) + encode_failure(Failure(message="reset"))
    [segment] = parse(data)
    assert segment.failure == Failure(message="reset")
    with pytest.raises(UsageError, match=":3: a line after the stream's error line"):
        parse(data + encode_chunk(TextChunk(text="x"), 0.1))


async def test_concurrent_streams_are_recorded_in_the_order_they_were_opened(
    tmp_path: Path,
) -> None:
    """Segments were appended as their streams closed: two streams open at once
    (two agents sharing a recorded model), the second finishing first, were
    written second-first, and ``Replay``, which plays segment n for its n-th
    call, gave the first call the second's reply. Segments now follow the
    order of the calls, as the header's ``turn`` numbers them."""
    path = tmp_path / "both.jsonl"
    recorder = record(ScriptedModel(["first reply", "second reply"]), path)
    async with recorder.stream(REQ) as first:
        async with recorder.stream(REQ) as second:
            assert text_of([c async for c in second]) == "second reply"
        # held until the call opened before it is done: the file holds the first
        # call's header only (read as a stream cut there)
        [first_only] = load(path)
        assert first_only.header.turn == 1 and not any(
            isinstance(t.chunk, TextChunk) for t in first_only.chunks
        )
        assert text_of([c async for c in first]) == "first reply"
    assert [s.header.turn for s in load(path)] == [1, 2]
    replay = Replay(path)
    assert text_of(await collect(replay)) == "first reply"
    assert text_of(await collect(replay)) == "second reply"
