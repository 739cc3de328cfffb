"""``streamtools chat``: talk to a live model, with tools, in the terminal.

Theory of operation
-------------------
One ``Agent`` over one provider (``--provider openai|anthropic|ollama``
against ``--base-url``), with the demo's example tools (``calculator`` and
``clock``) or those ``--tools MODULE:ATTRIBUTE`` names (``ui``'s flag, the same
loader: ``model_options.load_tools``, checked before anything starts; chat's
system prompt, about the example tools, is then left out), keeps one
``Transcript`` across the whole session: each line the
user types is appended to it and the agent runs to its answer, drawn live by
the demo's ``ConsoleRenderer`` (text as it streams, calls as their arguments
grow, results as they land) on stdout; a failed exchange's error, and a
stream that broke, on stderr, as a command's errors go (``chat … > session.txt``
keeps the session and shows the errors; a script reads them apart). Tools
are described in the prompt in
``--dialect`` (default ``am_xml``, with the stop-at-call trick) or sent
natively with ``--native``; ``--hybrid`` lets the model pick tools natively
from one-line summaries, then continues in the dialect. These model options
are ``streamtools.cli.model_options``'s, shared with ``streamtools ui``.

Input is read line by line from stdin in a thread (``_stdin_line``), so the same code
serves a terminal and a pipe (``echo "what is 2**10?" | streamtools chat …``).
``/reset`` clears the conversation, ``/quit`` (or end of input) leaves,
``/help`` lists them; any other line that is one ``/word`` is refused as an
unknown command rather than sent to the model (``_COMMAND``). A
provider error is printed and the session goes on (the failed turn's reply
is not kept). Ctrl-C in an interactive session stops the answer in progress
and the session goes on, the stopped exchange left out as a failed one is
(a rambling answer or a slow tool should not cost the whole conversation,
as in other terminal chats); at the prompt, or with piped input, Ctrl-C
leaves (``AnswerStopper``).

Exit status, as ``sqlite3`` reading a script from a pipe: 0 when every
exchange got its answer; 1 when input was piped (no prompt shown) and any
exchange failed (the server down, a budget or the repairs run out), after
the remaining lines have still been tried, so a script can tell; 130 on
Ctrl-C (at the prompt, or with piped input); 2 for a usage error; SIGTERM
ends the session (the MCP sessions closed first), then the command, as killed
by it. An
interactive session ends with 0 whatever failed on the way: the person at
the terminal saw each error.

``--mcp COMMAND`` and ``--mcp-url URL`` (both repeatable, with
``--mcp-header`` and ``--mcp-timeout``; ``streamtools.cli.mcp_options``, shared
with ``streamtools ui``) add the tools of MCP servers to the session's tools for
the whole session; a server that cannot be loaded is reported and the command
exits with 1.

A question given on the command line (``streamtools chat … "what is 2**10?"``)
is the whole session: asked, answered, done (stdin is not read), with the exit
status of piped input. ``--answer-only`` writes to stdout only each answer's
text (the agent's ``Final``), once the answer is complete, one per exchange;
the tools at work (calls, results, retries) and errors go to stderr, with the
prompt when there is one; the text of turns that end in calls (no answer),
reasoning and the turn rules are not shown; so ``chat … "q" | other_tool``
gets the answer and nothing else. It is the default for a question given on
the command line when stdout is not a terminal (as ``llm "q"`` and ``ollama
run MODEL "q"`` write only the answer to a pipe); ``--no-answer-only`` keeps
the whole session on stdout there. Lines read from stdin keep the session on
stdout unless ``--answer-only`` is given (``chat < questions > session.txt``
keeps the session, as it always did).

``--record FILE`` wraps the provider with ``streamtools.runtime.record``: the
session is written as a recording that ``streamtools replay FILE`` (or
``Replay`` in a test) plays back. A FILE that is there and is not a recording
(not empty, no recording's header on its first line) is refused
(``refuse_overwrite``): a typo's ``--record notes.txt`` replaced the file.
``--no-stop`` is for models that reject the ``stop`` parameter (the cut
happens client-side).
"""

from __future__ import annotations

import argparse
import re
import signal
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO

import anyio
import anyio.from_thread
import anyio.lowlevel

from streamtools.cli import model_options
from streamtools.cli.mcp_options import MCPNotLoaded, add_mcp_options, mcp_session, wants_mcp
from streamtools.cli.model_options import (
    SYSTEM,
    add_model_options,
    add_tools_option,
    build_model,
    load_tools,
    setting,
)
from streamtools.errors import BudgetExceeded, ProviderError, RepairExhausted, UsageError
from streamtools.events import (
    ArgsDelta,
    CallEnd,
    CallError,
    CallStart,
    Final,
    Retry,
    StreamError,
    TextDelta,
    ToolFailed,
    ToolProgress,
    ToolResult,
)
from streamtools.model import Model
from streamtools.runtime import record
from streamtools.runtime.console import ConsoleRenderer
from streamtools.runtime.recording import refuse_overwrite
from streamtools.tools import ToolRegistry
from streamtools.transcript import Transcript

__all__ = ["SYSTEM", "build_model", "chat", "make_agent", "register"]

EXAMPLES = """examples:
  # Ollama, native API: its default context is short for the tools' prompt, which is cut
  # without an error, so give it room (num_ctx)
  streamtools chat --provider ollama --model qwen3:8b --extra-body '{"options": {"num_ctx": 16384}}'
  # Ollama, OpenAI API: it takes no num_ctx; start it with OLLAMA_CONTEXT_LENGTH=16384
  streamtools chat --base-url http://127.0.0.1:11434/v1 --model qwen3:8b
  streamtools chat --base-url http://127.0.0.1:8000/v1 --model Qwen/Qwen2.5-7B-Instruct  # vLLM
  streamtools chat --base-url http://127.0.0.1:8080/v1 --model local    # llama.cpp server
  streamtools chat --base-url https://openrouter.ai/api/v1 --model meta-llama/llama-3.3-70b-instruct
  streamtools chat --provider anthropic --model claude-sonnet-4-6 --native
"""

ReadLine = Callable[[], Awaitable[str | None]]


def make_agent(model: Model, args: argparse.Namespace, tools: Any = None) -> Any:
    """The agent of the session (``model_options.make_agent``) with ``tools``
    (default: what ``--tools`` names, else the example tools). chat's system
    prompt is about the example tools: with ``--tools`` there is none but
    ``--system``, as for ``streamtools ui``."""
    if tools is None:
        tools = load_tools(args.tools)
    system = SYSTEM if args.tools is None else None
    return model_options.make_agent(model, args, tools, system=system)


class AnswerStopper:
    """Where Ctrl-C goes in an interactive session: ``answer`` is the cancel scope
    of the answer in progress (None at the prompt), which ``stop`` cancels; with
    no answer in progress ``stop`` says False, and the session leaves. So does a
    second Ctrl-C while the answer is still being stopped (a tool or server slow
    to let go): whoever presses it twice wants out."""

    def __init__(self) -> None:
        self.answer: anyio.CancelScope | None = None

    def stop(self) -> bool:
        if self.answer is None or self.answer.cancel_called:
            return False
        self.answer.cancel()
        return True


async def chat(
    agent: Any,
    read_line: ReadLine,
    out: TextIO,
    *,
    color: bool | None = None,
    prompt: bool = True,
    stopper: AnswerStopper | None = None,
    err: TextIO | None = None,
    answer_only: bool = False,
    advise: Callable[[Exception], str | None] | None = None,
) -> int:
    """Run the session until end of input or ``/quit``; returns the exit code: 1 when
    an exchange failed in a session without ``prompt`` (piped input), else 0.
    ``stopper.stop()`` stops the answer in progress; the session goes on.
    Errors are written to ``err`` if given (else to ``out``). With ``answer_only``,
    ``out`` gets each answer's text only, and the rest of the session goes to
    ``err`` (else ``sys.stderr``). ``advise(exc)``: what to do about a failed
    exchange (``model_options.advice``), said on a line after its error."""
    answers = out if answer_only else None
    if answer_only:
        out = err = err if err is not None else sys.stderr
    view = ConsoleRenderer(out, color=color, err=err)
    you = "you › " if view.call_arrow == "→" else "you > "  # the renderer knows the encoding
    transcript = Transcript()
    failed = False
    first = True
    while True:
        if prompt:
            view.newline()
            view.write(view.style("bold", you))
            out.flush()
        line = await read_line()
        if first and line is not None:
            # a file saved with a byte order mark (Windows Notepad), piped in: the
            # mark is no part of the first question (nor of a first ``/quit``)
            line, first = line.removeprefix("\ufeff"), False
        if line is None or line.strip() in ("/quit", "/exit"):
            view.newline()
            return 1 if failed and not prompt else 0
        text = line.strip()
        if not text:
            continue
        if not prompt and answers is None:  # the session's transcript shows each line
            view.line(view.style("bold", you) + text)  # (a command too: what it answers)
        if text == "/reset":
            transcript = Transcript()
            view.line(view.style("dim", "(conversation cleared)"))
            continue
        if _COMMAND.fullmatch(text):  # /help, or a command mistyped: not for the model
            reply = f"unknown command {text}; /help"
            if text in ("/help", "/?"):
                # Ctrl-C stops an answer only where there is a prompt to go back to
                reply = COMMANDS
                if stopper is not None:
                    reply += "; Ctrl-C stops an answer in progress"
            view.line(view.style("dim", reply))
            continue
        kept = len(transcript.messages)
        with anyio.CancelScope() as answer:
            if stopper is not None:
                stopper.answer = answer
            said = None  # the last stream error shown, which the failure may repeat
            final: str | None = None
            try:
                async with agent.stream(_with_user(transcript, text)) as events:
                    async for event in events:
                        if isinstance(event, Final):
                            final = event.text
                        if answers is None or isinstance(event, _ACTIVITY):
                            view.render(event)
                        if isinstance(event, StreamError):
                            said = event.message
                if answers is not None and final is not None:
                    view.newline()
                    out.flush()  # the activity before the answer, where both are one terminal
                    _answer(answers, final)
            except (ProviderError, BudgetExceeded, RepairExhausted) as exc:
                del transcript.messages[kept:]  # forget the failed exchange
                failed = True
                if str(exc) != said:  # a stream that broke was just said, in red
                    view.error(str(exc))
                hint = advise(exc) if advise is not None else None
                if hint:
                    _say(view, err, "hint: " + hint)
            finally:
                if stopper is not None:
                    stopper.answer = None
        if answer.cancelled_caught:
            del transcript.messages[kept:]  # as a failed one: no half answer in the history
            view.newline()
            view.line(view.style("dim", "(stopped)"))
        view.newline()


def _say(view: ConsoleRenderer, err: TextIO | None, text: str) -> None:
    """A line of our own after an error, where the error went."""
    if err is None:
        view.line(view.style("dim", text))
    else:
        err.write(text + "\n")
        err.flush()


# what ``--answer-only`` shows on stderr: the tools at work and what went wrong;
# not the text (the answer is on stdout, a preamble is no answer), reasoning, nor
# the turn and final-answer rules, which framed every answer with noise
_ACTIVITY = (
    CallStart, ArgsDelta, CallEnd, CallError, ToolProgress, ToolResult, ToolFailed, Retry,
    StreamError,
)


def _answer(out: TextIO, text: str) -> None:
    """An answer, for ``--answer-only``: as the model wrote it into a pipe or a
    file, for the program that reads it; to a terminal as the session shows text,
    its control characters shown, never obeyed (a model's escape sequence would
    retitle the window or set the clipboard)."""
    if _is_terminal(out):
        view = ConsoleRenderer(out, color=False)
        view.render(TextDelta(text=text))
        view.newline()
        return
    out.write(text if text.endswith("\n") else text + "\n")
    out.flush()


def _is_terminal(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):  # no such method; a closed stream
        return False


COMMANDS = "/reset clears the conversation, /quit (or Ctrl-D) leaves"
# A line that is one word after a slash is a command, such as the /help a new user
# tries first, which went to the model as a question; a path (/etc/hosts) or a
# sentence starting with a slash is still a message.
_COMMAND = re.compile(r"/(?:\?|[A-Za-z]+)")


def _with_user(transcript: Transcript, text: str) -> Transcript:
    transcript.user(text)
    return transcript


def _lines(lines: list[str]) -> ReadLine:
    """A session's input given as lines (a question on the command line): each in
    turn, then the end of input."""
    queue = list(lines)

    async def read() -> str | None:
        await anyio.lowlevel.checkpoint()
        return queue.pop(0) if queue else None

    return read


async def _stdin_line() -> str | None:
    """The next line of stdin; None at its end. Read in a daemon thread of its own:
    Ctrl-C at the prompt cancels the session while the read waits, and a worker
    thread cannot be stopped (cancellation waited for the line, so the command
    hung until Enter, or for ever on an open pipe; abandoned, it still held the
    process at exit). A cancelled read is left behind in its thread, which dies
    with the process."""
    token = anyio.lowlevel.current_token()
    done = anyio.Event()
    read: list[str] = []
    failed: list[BaseException] = []

    def reader() -> None:
        try:
            read.append(sys.stdin.readline())
        except BaseException as exc:  # raised again in the waiting task
            failed.append(exc)
        try:
            anyio.from_thread.run_sync(done.set, token=token)
        except RuntimeError:  # the event loop has ended: nobody waits for the line
            pass

    threading.Thread(target=reader, name="streamtools chat: stdin", daemon=True).start()
    await done.wait()
    if failed:
        raise failed[0]
    return read[0] or None  # "" is end of input; a blank line is "\n"


def _run(args: argparse.Namespace) -> int:
    # usage errors are said by ``streamtools.cli.main`` in one line, exit status 2
    model_options.check_model_options(args)
    wants_mcp(args)  # a UsageError for an MCP option with no server to apply to
    # --tools: checked before anything starts (UsageError), as ``ui`` does; the
    # session's registry is its own, which the MCP servers' tools join
    given = load_tools(args.tools)
    own = given.subset(given) if isinstance(given, ToolRegistry) else ToolRegistry(given)
    model: Model = build_model(args)
    if args.record is not None:
        refuse_overwrite(args.record, by="--record")
        try:
            # creates the file now; an earlier recording stays until the model answers
            model = record(model, args.record)
        except OSError as exc:  # a file the flag names but cannot be written: a usage error
            raise UsageError(f"cannot write {args.record}: {exc.strerror or exc}") from None
    color = {"auto": None, "always": True, "never": False}[args.color]
    question: str | None = args.question
    if question is not None and not question.strip():
        # ``chat "$QUESTION"`` with the variable unset: no question was asked, and
        # the command answered nothing and said nothing, with exit status 0
        raise UsageError("the question is empty")
    interactive = question is None and sys.stdin.isatty()
    answer_only: bool = args.answer_only
    if answer_only is None:  # a one-shot question into a pipe: the answer, as ``llm`` writes
        answer_only = question is not None and not sys.stdout.isatty()
    if interactive:
        # where the session goes: without --base-url, a hosted API a user who meant a
        # local server would not expect (the URL was said only by a failure)
        mode = "native tools" if args.native else f"{setting(args, 'dialect')} dialect"
        if args.hybrid:
            mode = f"tools picked natively, then the {mode}"
        via = setting(args, "provider")
        url = args.base_url or model_options.DEFAULT_URLS[via]
        print(
            f"streamtools chat: {args.model} via {via} at {url} ({mode}); /help for commands",
            file=sys.stderr if answer_only else sys.stdout,
        )
    read_line = _stdin_line if question is None else _lines([question])

    # Ctrl-C stops an answer only in a terminal session, where there is a prompt to go back to
    stopper = AnswerStopper() if interactive and sys.platform != "win32" else None

    async def conversation() -> int:
        # --mcp / --mcp-url: the servers' tools join the session's tools
        try:
            async with mcp_session(args, own, "chat") as tools:
                agent = make_agent(model, args, tools)
                return await chat(
                    agent, read_line, sys.stdout, color=color, prompt=interactive,
                    stopper=stopper, err=sys.stderr, answer_only=answer_only,
                    advise=lambda exc: model_options.advice(exc, args),
                )
        except MCPNotLoaded as exc:
            print(exc, file=sys.stderr)
            return 1

    # SIGTERM (kill, timeout(1), a service manager) ends the session as Ctrl-C
    # does with piped input: the MCP sessions are closed first (the default
    # handler killed the command inside them, and a stdio server died of a
    # broken pipe, its traceback on our stderr), then the command ends as
    # killed by it. (Only the main thread has signal handlers; Windows has no
    # asyncio ones.)
    catch_term = sys.platform != "win32" and threading.current_thread() is threading.main_thread()
    terminated: list[bool] = []

    async def session() -> int:
        if stopper is None and not catch_term:
            return await conversation()
        code = 130  # unless the conversation ends first
        async with anyio.create_task_group() as tg:

            async def on_signals(*, task_status: Any) -> None:
                wanted = [signal.SIGTERM] if catch_term else []
                if stopper is not None:
                    wanted.append(signal.SIGINT)
                with anyio.open_signal_receiver(*wanted) as received:
                    task_status.started()
                    async for signum in received:
                        if signum == signal.SIGTERM:
                            terminated.append(True)
                        else:
                            assert stopper is not None  # SIGINT is ours only with one
                            if stopper.stop():  # an answer stopped: the session goes on
                                continue
                            print()  # at the prompt: leave
                        tg.cancel_scope.cancel()
                        return

            await tg.start(on_signals)
            # The conversation's exception is raised below, as itself: out of the
            # task group it came wrapped in a group, which ``main`` does not say in
            # one line (a missing MCP extra, a closed pipe) but as a traceback.
            failure: Exception | None = None
            try:
                code = await conversation()
            except Exception as exc:
                failure = exc
            tg.cancel_scope.cancel()
        if failure is not None:
            raise failure
        return code

    try:
        code = anyio.run(session)
    except KeyboardInterrupt:
        print()
        return 130
    if terminated:
        signal.raise_signal(signal.SIGTERM)
    return code


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "chat",
        help="chat with a live model, with tools",
        description="Interactive chat with a live model and example tools (calculator, clock), "
        "or your own (--tools).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "question",
        nargs="?",
        default=None,
        help="ask this one question and leave (stdin is not read)",
    )
    add_model_options(
        parser,
        system_help="system prompt, before the tools' definitions (default: one that tells "
        "the model to use the calculator and the clock; none with --tools)",
    )
    add_tools_option(parser)
    parser.add_argument(
        "--answer-only",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="stdout gets only each answer's text; tool activity and errors go to stderr "
        "(default: on for a QUESTION when stdout is not a terminal)",
    )
    parser.add_argument(
        "--record",
        type=Path,
        default=None,
        metavar="FILE",
        help="save the session for `streamtools replay FILE`",
    )
    add_mcp_options(parser)
    parser.add_argument(
        "--color", choices=("auto", "always", "never"), default="auto",
        help="ANSI colour (default auto: on a terminal, unless NO_COLOR is set)",
    )
    parser.set_defaults(func=_run)
