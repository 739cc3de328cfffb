"""Recording and replay of model streams (DESIGN §7).

Theory of operation
-------------------
A recording is a JSONL file made of one *segment* per model call. A segment
is a header line, then one line per chunk::

    {"type":"header","format":"streamtools.recording","version":1,
     "provider":"OpenAIChat","turn":1,"request":{...ModelRequest...}}
    {"type":"text","text":"The ans","t":0.412}
    {"type":"finish","reason":"stop","stop_sequence":null,"t":0.950}

A chunk line is the chunk itself (the ``streamtools.model`` chunk types,
tagged by ``type``) plus ``t``: seconds since the request was sent, so the
first offset is the time to first token. A single-call recording is exactly
"a header, then chunks"; a multi-turn session is several segments in order.

``record(model, path)`` wraps any model: it writes ``path`` anew with
one segment per ``stream()`` call *as the stream goes*: the header when the
stream opens, then each chunk's line as the chunk arrives, so that the file
always holds everything received so far and a recording process that dies
mid-stream (SIGKILL, a crash) leaves a recording of the session up to that
point. Each line is one ``write`` to the file opened for appending, done
synchronously: no ``await`` between two lines, so two streams' lines never
interleave, and a write of a line into the OS's cache costs less than a trip
to a worker thread would; it is not ``fsync``-ed (a power cut may lose the
last lines; a killed process does not). Segments are in the order of the
calls (the header's ``turn``): while a stream opened earlier is still open,
a later one's lines are held and written when the earlier one closes. Over
a file that holds an earlier recording, the lines are kept in memory until the
model first answers, so that a re-record that fails before then keeps it.

A stream that *fails* (the model raised on opening, as for an HTTP 401, or
while streaming, as for a connection reset) ends its segment with an error
line, the exception as a ``ProviderError`` carries it::

    {"type":"error","message":"connection reset","status":null,"body":null,
     "opened":true,"t":1.204,"retryable":false,"retry_after":null,"should_retry":null}

and ``Replay`` raises that ``ProviderError`` at the same point (on opening
the stream when ``opened`` is false, else after the chunks before it), so a
replayed run fails as the recorded one did instead of taking the chunks it
got for a whole reply. Only the model's own failures are recorded, not an
exception of the code consuming the stream.

A file whose last line has no line end and is not whole JSON was cut while
it was being written (the process died mid-write, the disk filled up): the
recording holds what came before the cut, and the cut ends the stream it fell
in as the providers end a live stream cut short, with
``FinishChunk(reason="error")`` whose message says where the file was cut,
after the chunks of its whole lines. A cut after a segment that had ended
(its finish or error line), or in a header, is one more call that fails on
opening (a ``Failure``). ``record`` marks its headers ``"live": true``
(written as the stream went): a file whose *last* segment is so marked and has
neither a finish nor an error line is read as cut at its end the same way
(that errored finish after its chunks), since that is how ``record`` leaves a
file when its process is killed mid-stream. A stream its consumer closed
before the model finished it, at the end of a file, reads so too: the
recording holds no more of it (a consumer that stops where the recorded one
stopped never reads that finish). A segment without the mark (a file written
by hand, or by an older ``record``, which wrote a stream when it closed) ends
where its lines end, as before. Only the last line may be cut so: a bad line anywhere
else, or a whole last line (a line end, or whole JSON, ends it) that is not a
recording line, is a ``UsageError`` naming the line.

Text that UTF-8 cannot carry (a lone surrogate half in a chunk, a request, a
model's error message) is written as U+FFFD, as ``Transcript.encode`` writes
it; an escaped lone half in a line written by other means is read so too.

``Replay(path, speed=...)`` is a model that plays segment *n* for its *n*-th
``stream()`` call, whatever the request (the requests it received are kept in
``requests``, as ``ScriptedModel`` does). ``match_requests=True`` checks each
request against the one the segment's header holds, as a cassette library
matches requests: a test whose agent now asks something else (a changed
system prompt, other tools, another tool result) fails with a ``UsageError``
naming the first difference, instead of passing on answers to questions no
longer asked. A header with no request (``Header()``) matches any. ``speed=None`` plays instantly (a
checkpoint every few chunks, so it stays cancellable); ``1.0`` at the recorded pace;
``2.0`` twice as fast. Timing is measured from the open of each stream
against the recorded offsets, so slow consumers do not accumulate drift.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import msgspec

from streamtools.errors import ProviderError, UsageError, describe_exception
from streamtools.model import Chunk, FinishChunk, Model, ModelRequest, keyword_choice
from streamtools.prompts import RENDERERS
from streamtools.results import decode_json, encode_json

__all__ = [
    "FORMAT",
    "VERSION",
    "Failure",
    "Header",
    "Replay",
    "Segment",
    "TimedChunk",
    "load",
    "record",
    "refuse_overwrite",
]

FORMAT = "streamtools.recording"
_INSTANT_BATCH = 16
VERSION = 1


class Header(msgspec.Struct, tag_field="type", tag="header", frozen=True, kw_only=True):
    """The first line of a segment: what was asked, of which provider."""

    format: str = FORMAT
    version: int = VERSION
    provider: str = ""
    turn: int = 1
    request: ModelRequest | None = None
    #: written as the stream went (by ``record``): if this is the file's last
    #: segment and it holds no end (a finish or error line), it was cut there
    live: bool = False


class _Offset(msgspec.Struct):
    t: float = 0.0


class TimedChunk(msgspec.Struct, frozen=True):
    """A chunk and its offset in seconds from the request."""

    t: float
    chunk: Chunk


class Failure(msgspec.Struct, tag_field="type", tag="error", frozen=True, kw_only=True):
    """How a recorded stream failed: raised on opening (``opened`` false) or while
    streaming, ``t`` seconds after the request; replayed as a ``ProviderError``
    with the recorded one's ``status``, ``body`` and retry advice (``retryable``,
    ``retry_after``, ``should_retry``: what a caller reads to wait and ask again)."""

    message: str
    status: int | None = None
    body: str | None = None
    opened: bool = True
    t: float = 0.0
    retryable: bool = False
    retry_after: float | None = None
    should_retry: bool | None = None

    @classmethod
    def of(cls, exc: Exception, *, opened: bool, t: float) -> Failure:
        if isinstance(exc, ProviderError):
            return cls(
                message=str(exc),
                status=exc.status,
                body=exc.body,
                opened=opened,
                t=t,
                retryable=exc.retryable,
                retry_after=exc.retry_after,
                should_retry=exc.should_retry,
            )
        return cls(message=describe_exception(exc), opened=opened, t=t)

    def error(self) -> ProviderError:
        return ProviderError(
            self.message,
            status=self.status,
            body=self.body,
            retryable=self.retryable,
            retry_after=self.retry_after,
            should_retry=self.should_retry,
        )


class Segment(msgspec.Struct, frozen=True):
    """One model call of a recording; ``failure`` when its stream raised."""

    header: Header
    chunks: list[TimedChunk]
    failure: Failure | None = None


_line_decoder: msgspec.json.Decoder[Header | Chunk | Failure] = msgspec.json.Decoder(
    Header | Chunk | Failure
)
_offset_decoder = msgspec.json.Decoder(_Offset)
_HEADER_START = b'{"type":"header"'  # how ``encode_header`` begins a line


def encode_header(header: Header) -> bytes:
    return encode_json(header) + b"\n"


def encode_chunk(chunk: Chunk, t: float) -> bytes:
    data: dict[str, Any] = msgspec.to_builtins(chunk)
    data["t"] = round(t, 4)
    return encode_json(data) + b"\n"


def encode_failure(failure: Failure) -> bytes:
    return encode_json(msgspec.structs.replace(failure, t=round(failure.t, 4))) + b"\n"


def parse(data: bytes, *, source: str = "<recording>") -> list[Segment]:
    """Split recording bytes into segments; a malformed line is a ``UsageError``.
    A byte order mark (a file saved again by a Windows editor) is no part of it."""
    segments: list[Segment] = []
    data = data.removeprefix(b"\xef\xbb\xbf")
    lines = data.splitlines()
    # the number of a last line with no line end: one that does not decode was cut
    cut = len(lines) if not data.endswith((b"\n", b"\r")) else 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            # an escaped lone surrogate half (a recording written by other means) is
            # read as U+FFFD, as ``Transcript.decode`` and the proxy read one
            item, offset = decode_json(_read_line, line)
        except msgspec.ValidationError as exc:
            raise UsageError(f"{source}:{number}: not a recording line: {exc}") from exc
        except (msgspec.DecodeError, UnicodeDecodeError) as exc:
            if number == cut:
                _end_at_cut(segments, line, f"{source}:{number}")
                break
            if isinstance(exc, UnicodeDecodeError):  # msgspec's error for bytes not UTF-8
                raise UsageError(f"{source}:{number}: not UTF-8: {exc}") from None
            raise UsageError(f"{source}:{number}: invalid JSON: {exc}") from exc
        except RecursionError:  # deeper than msgspec goes (about a thousand levels)
            raise UsageError(f"{source}:{number}: JSON nested too deeply") from None
        if isinstance(item, Header):
            if item.format != FORMAT or item.version > VERSION:
                raise UsageError(
                    f"{source}:{number}: unsupported recording {item.format!r} v{item.version}"
                )
            segments.append(Segment(header=item, chunks=[]))
        elif not segments:
            raise UsageError(f"{source}:{number}: chunk before the first header line")
        elif segments[-1].failure is not None:
            raise UsageError(f"{source}:{number}: a line after the stream's error line")
        elif isinstance(item, Failure):
            segments[-1] = msgspec.structs.replace(segments[-1], failure=item)
        else:
            segments[-1].chunks.append(TimedChunk(t=offset, chunk=item))
    if segments and segments[-1].header.live and not _ended(segments[-1]):
        _end_unfinished(segments[-1], source)
    return segments


def _ended(segment: Segment) -> bool:
    """Whether a segment holds its stream's end: an error line, or a finish
    (which usage may follow)."""
    return segment.failure is not None or any(
        isinstance(timed.chunk, FinishChunk) for timed in reversed(segment.chunks)
    )


def _end_unfinished(segment: Segment, source: str) -> None:
    """End a file's last segment that holds no end of its stream (see the module
    docstring) with an errored finish, as a live stream cut short ends."""
    message = (
        f"{source} ends in the middle of call {segment.header.turn}'s stream (the "
        "recording stopped while the stream was open, as when its process was killed): "
        "the stream ends at its last recorded chunk"
    )
    t = segment.chunks[-1].t if segment.chunks else 0.0
    segment.chunks.append(TimedChunk(t=t, chunk=FinishChunk(reason="error", message=message)))


def _end_at_cut(segments: list[Segment], line: bytes, where: str) -> None:
    """End the recording at a last line cut while it was written (see the module
    docstring): the open segment ends there, or a new call fails on opening."""
    message = (
        f"the recording ends mid-line at {where} (cut while it was written, as by a "
        "process that died): the stream ends at its last whole line"
    )
    last = segments[-1] if segments else None
    if (
        last is None
        or last.failure is not None
        or (last.chunks and isinstance(last.chunks[-1].chunk, FinishChunk))
        or line.lstrip().startswith(_HEADER_START)
    ):
        turn = last.header.turn + 1 if last is not None else 1
        failure = Failure(message=message, opened=False)
        segments.append(Segment(header=Header(turn=turn), chunks=[], failure=failure))
    else:
        t = last.chunks[-1].t if last.chunks else 0.0
        last.chunks.append(TimedChunk(t=t, chunk=FinishChunk(reason="error", message=message)))


def _read_line(line: bytes) -> tuple[Header | Chunk | Failure, float]:
    try:
        item = _line_decoder.decode(line)
    except msgspec.ValidationError:
        item = _named_choice_header(line)
    return item, _offset_decoder.decode(line).t


def _named_choice_header(line: bytes) -> Header:
    """A header recorded before ``UseTool``, whose request names its tool choice
    as a bare string (``"tool_choice": "search"``): read as ``UseTool("search")``.
    Anything else raises the decoder's ``ValidationError`` again."""
    data = msgspec.json.decode(line)
    request = data.get("request") if isinstance(data, dict) else None
    choice = request.get("tool_choice") if isinstance(request, dict) else None
    if isinstance(choice, str) and keyword_choice(choice) is None:
        request["tool_choice"] = {"name": choice}  # type: ignore[index]
        return msgspec.convert(data, Header)
    return _line_decoder.decode(line)  # type: ignore[return-value]


def load(path: str | Path) -> list[Segment]:
    """Read a recording file (synchronously; call it before the event loop, or in a thread)."""
    p = Path(path)
    return parse(p.read_bytes(), source=str(p))


class Replay:
    """A model that plays a recording back: instantly, at recorded pace, or scaled."""

    def __init__(
        self, path: str | Path, *, speed: float | None = None, match_requests: bool = False
    ) -> None:
        if speed is not None and not speed > 0:  # (NaN is not > 0 either)
            raise UsageError(f"speed must be positive or None (instant), got {speed!r}")
        self.path = Path(path)
        self.speed = speed
        self.match_requests = match_requests
        try:
            self.segments = load(self.path)
        except FileNotFoundError as exc:
            raise FileNotFoundError(_not_found(self.path)) from exc
        self.requests: list[ModelRequest] = []

    @property
    def remaining(self) -> int:
        """Segments not played yet."""
        return len(self.segments) - len(self.requests)

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[Chunk]]:
        turn = len(self.requests)
        if turn >= len(self.segments):
            calls = f"{len(self.segments)} model call{'' if len(self.segments) == 1 else 's'}"
            raise UsageError(
                f"{self.path} holds {calls}; call {turn + 1} has none: "
                "the run asked more than the recorded one did (record it again, or replay "
                "it with match_requests=True to see where the requests first differ)"
            )
        segment = self.segments[turn]
        recorded = segment.header.request
        if self.match_requests and recorded is not None:
            old, new = _plain(recorded), _plain(request)
            difference = _difference(old, new, "request")
            if difference is not None:
                raise UsageError(
                    f"{self.path}: call {turn + 1} was recorded for another request "
                    f"({difference}{_stop_at_call(difference, old, new)}); record it "
                    "again, or replay it without match_requests"
                )
        self.requests.append(request)
        start = anyio.current_time()
        if segment.failure is not None and not segment.failure.opened:
            await self._wait(0, start, segment.failure.t)
            raise segment.failure.error()
        played = self._play(segment, start)
        try:
            yield played
        finally:
            await played.aclose()

    async def _play(self, segment: Segment, start: float) -> AsyncGenerator[Chunk, None]:
        for n, timed in enumerate(segment.chunks):
            await self._wait(n, start, timed.t)
            yield timed.chunk
        if segment.failure is not None:
            await self._wait(len(segment.chunks), start, segment.failure.t)
            raise segment.failure.error()

    async def _wait(self, n: int, start: float, t: float) -> None:
        """Until offset ``t`` (item ``n`` of the segment) at the replay's speed."""
        if self.speed is None:
            # Instant: a checkpoint every few chunks keeps the stream
            # cancellable and fair to other tasks without paying a
            # scheduler round trip per chunk.
            if n % _INSTANT_BATCH == 0:
                await anyio.lowlevel.checkpoint()
        else:
            wait = start + t / self.speed - anyio.current_time()
            await anyio.sleep(max(0.0, wait))


def _not_found(path: Path) -> str:
    """A missing recording, said with where it was looked for: a relative path is
    read from the working directory, which under pytest is where pytest was
    started, seldom the test's own directory."""
    said = f"Replay: no recording at {path.absolute()}"
    if path.is_absolute():
        return said
    return (
        f"{said} (a relative path is read from the working directory, {Path.cwd()}); "
        f"for a file next to the test, give Path(__file__).parent / {path.as_posix()!r}"
    )


def _stop_at_call(difference: str, recorded: Any, sent: Any) -> str:
    """What to change when the stop strings differ by a dialect's closing marker,
    which ``stop_at_call=True`` sends (``streamtools chat`` records so): else ""."""
    if not difference.startswith("request.stop"):
        return ""
    markers = {r.stop_marker for r in RENDERERS.values() if r.stop_marker}
    old = markers.intersection(recorded.get("stop") or ())
    new = markers.intersection(sent.get("stop") or ())
    if old - new:
        return (
            "; it was recorded with stop_at_call=True, which sends the call's closing "
            "marker as stop: make the Agent with stop_at_call=True too"
        )
    if new - old:
        return "; it was recorded without stop_at_call: make the Agent without it too"
    return ""


def _plain(request: ModelRequest) -> Any:
    """The request as a recording holds it (JSON builtins; U+FFFD for a lone half)."""
    return msgspec.json.decode(encode_json(request))


def _difference(recorded: Any, sent: Any, where: str) -> str | None:
    """Where two JSON values first differ, said for a person, or None."""
    if recorded == sent:
        return None
    if isinstance(recorded, dict) and isinstance(sent, dict):
        for key in [*recorded, *(k for k in sent if k not in recorded)]:
            found = _difference(recorded.get(key), sent.get(key), f"{where}.{key}")
            if found is not None:
                return found
    if isinstance(recorded, list) and isinstance(sent, list):
        for n, (old, new) in enumerate(zip(recorded, sent, strict=False)):
            found = _difference(old, new, f"{where}[{n}]")
            if found is not None:
                return found
        return f"{where}: {len(recorded)} recorded, {len(sent)} sent"
    if isinstance(recorded, str) and isinstance(sent, str):
        at = next(
            (n for n, (a, b) in enumerate(zip(recorded, sent, strict=False)) if a != b),
            min(len(recorded), len(sent)),
        )
        lo = max(0, at - 20)
        return (
            f"{where} differs at character {at}: recorded {recorded[lo : at + 20]!r}, "
            f"sent {sent[lo : at + 20]!r}"
        )
    return f"{where}: recorded {_short(recorded)}, sent {_short(sent)}"


def _short(value: Any) -> str:
    text = encode_json(value).decode()
    return text if len(text) <= 80 else text[:77] + "..."


class _Recorder:
    """Wraps a model; appends one segment per stream to ``path`` as the stream goes,
    in the order of the calls. Streams open at once (two agents sharing the model)
    may close in another order: only the earliest open call's lines go to the file
    as they come; a later call's are held until every call before it has closed,
    since ``Replay`` plays segment n for its n-th call."""

    def __init__(self, model: Model, path: Path, provider: str | None) -> None:
        self.model = model
        self.path = path
        self.turns = 0
        self.provider = provider or type(model).__name__
        self._held: dict[int, list[bytes]] = {}  # by turn: lines not written yet
        self._closed: set[int] = set()  # turns closed, not yet passed by ``_live``
        self._live = 1  # the turn whose lines are written as they come
        self._cut: set[int] = set()  # turns whose stream ended with an error finish
        # Over an earlier recording, the file's lines wait here until the model
        # has answered once (``_keep``): a re-record whose model fails (a 401, a
        # server down) leaves the earlier recording as it was. None: written.
        with path.open("ab") as f:  # a path that cannot be written fails now
            self._pending: list[bytes] | None = [] if f.tell() else None

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[Chunk]]:
        self.turns += 1
        turn = self.turns
        self._held[turn] = []
        header = Header(provider=self.provider, turn=turn, request=request, live=True)
        self._add(turn, encode_header(header))
        start = anyio.current_time()
        opened = False
        try:
            async with self.model.stream(request) as chunks:
                opened = True
                tapped = self._tap(chunks, turn, start)
                try:
                    yield tapped
                finally:
                    await tapped.aclose()
        except Exception as exc:
            if not opened:  # the model refused the request (an HTTP error status…)
                failure = Failure.of(exc, opened=False, t=anyio.current_time() - start)
                self._add(turn, encode_failure(failure))
            raise
        else:
            if turn not in self._cut:  # an answer, or one its consumer stopped reading
                self._keep()
        finally:
            # Synchronous, so a stream cut by cancellation is kept too.
            self._cut.discard(turn)
            self._close(turn)

    def _add(self, turn: int, line: bytes) -> None:
        if turn == self._live:
            self._append(line)
        else:
            self._held[turn].append(line)

    def _close(self, turn: int) -> None:
        """The stream of ``turn`` closed: if it was the live one, the next calls'
        held lines go to the file, up to the first call still open (now live)."""
        self._closed.add(turn)
        while self._live in self._closed:
            self._closed.remove(self._live)
            del self._held[self._live]
            self._live += 1
            held = self._held.get(self._live)
            if held:
                self._append(b"".join(held))
                held.clear()

    def _append(self, data: bytes) -> None:
        if self._pending is not None:
            self._pending.append(data)
            return
        # Opened per write, not kept open: a recorder has no close of its own, and
        # a file left to the garbage collector is a ResourceWarning.
        with self.path.open("ab") as f:
            f.write(data)

    def _keep(self) -> None:
        """The model has answered: the new recording replaces the earlier one,
        its lines so far written at once and the next ones as they come."""
        if self._pending is not None:
            data = b"".join(self._pending)
            self._pending = None
            self.path.write_bytes(data)

    async def _tap(
        self, chunks: AsyncIterator[Chunk], turn: int, start: float
    ) -> AsyncGenerator[Chunk, None]:
        iterator = aiter(chunks)
        while True:
            try:
                chunk = await anext(iterator)
            except StopAsyncIteration:
                return
            except Exception as exc:  # the model's stream failed (not its consumer)
                failure = Failure.of(exc, opened=True, t=anyio.current_time() - start)
                self._add(turn, encode_failure(failure))
                raise
            self._add(turn, encode_chunk(chunk, anyio.current_time() - start))
            if isinstance(chunk, FinishChunk):
                if chunk.reason == "error":  # a stream cut short, as providers end one
                    self._cut.add(turn)
                else:
                    self._keep()
            yield chunk


def record(model: Model, path: str | Path, *, provider: str | None = None) -> Model:
    """Wrap ``model`` so that every stream it plays is written to ``path`` as it goes.

    A new (or empty) file is written from the first line on. A file that holds an
    earlier recording (a golden file recorded again) is left as it is until the
    model first answers: a stream that finishes, or that its consumer stops
    reading, other than with an error. Then the file is replaced by the new
    recording, the calls before that answer included, and written as it goes.
    So a re-record whose model fails before any answer (a wrong key, a server
    down, a stream cut short) keeps the earlier recording, as a cassette library
    saves nothing it did not record; once the model has answered, a process
    killed mid-stream leaves everything received so far, as on a new file.

    A file that is there and holds something else (``notes.txt`` for
    ``notes.jsonl``) is a ``UsageError`` naming it, left as it is
    (``refuse_overwrite``).

    ``provider`` names the source in the header lines (default: the model's class name).
    """
    refuse_overwrite(Path(path))
    recorder: Model = _Recorder(model, Path(path), provider)
    return recorder


def refuse_overwrite(path: Path, *, by: str = "record()") -> None:
    """A ``UsageError`` when ``path`` holds something other than a recording (it
    is not empty, and its first line is no recording's header), which ``by``
    (what would write it: ``record()``, ``--record``) would write over. No
    file, an empty one, or an earlier recording: nothing to say; a file that
    cannot be read is left for the writing to say why. Empty means of
    whitespace only: a file that begins with a blank line and goes on (notes, a
    Markdown file) is no recording, whose header is its first line."""
    try:
        with path.open("rb") as file:
            first = file.readline(1 << 24)
            blank = not first.strip()
            while blank and (more := file.read(1 << 16)):
                blank = not more.strip()
    except OSError:
        return
    if blank:
        return
    try:
        header = msgspec.json.decode(first)
    except msgspec.DecodeError:
        header = None
    if not (isinstance(header, dict) and header.get("format") == FORMAT):
        raise UsageError(
            f"{path} is not a streamtools recording: {by} would write over it "
            "(name a new file, or an earlier recording)"
        )
