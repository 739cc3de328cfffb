"""``streamtools ui``: serve the chat page for an agent on 127.0.0.1.

Theory of operation
-------------------
Offline by default: each conversation turn POSTed by the page runs a fresh
``Agent`` whose model is a ``Replay`` of the demo recording (the same file
and the same two live tools, ``calculator`` and ``clock``, as
``streamtools demo``), so the page works with no network and no key. The
replay answers the recorded question whatever is typed, which the page's
subtitle says, and calls the recorded tools only: the subtitle names the tools
given (``--tools``' others, ``--mcp``'s servers') that it never calls
(``_never_called``); the recorded question is offered as a suggestion.

With ``--model`` the agent talks to a live model instead, set up by the
options of ``streamtools chat`` (``streamtools.cli.model_options``, shared:
``--base-url``, ``--provider``, ``--api-key`` or ``--api-key-env``,
``--dialect``, ``--native`` or ``--hybrid``, ``--think-open``, ``--no-stop``,
``--system``, the sampling options, ``--extra-body``, ``--max-turns``,
``--timeout``, ``--tool-timeout``), with the same defaults; ``--system`` defaults to chat's
prompt, which is about the example tools, only with those tools. chat's
``--record`` (one file for every tab's conversation at once) and ``--color``
(a terminal's) are not taken. ``--dialect`` also names the dialect of a
``--fixture`` recording (the demo's is ``am_xml``); one that holds native
call chunks is replayed natively. A flag of the mode not chosen (a live
model's offline, ``--fixture``, ``--speed`` or ``--instant`` live) is a usage
error (``_refuse_unused``), so the defaults of those are None. Tools are the demo
tools unless ``--tools module:attribute`` names a ``ToolRegistry``, a tool
or a list of tools/functions, in a module of the current directory or
installed; they are checked at start (``model_options.load_tools``, as for
``streamtools chat``). A ``--fixture`` that calls tools it offered and the
page does not have is refused
(``_refuse_foreign``, as ``streamtools demo`` does), and so is the demo's own
recording once ``--tools`` leaves out the two tools it calls; with ``--mcp``,
once its servers are loaded, before the URL is announced.

``--mcp`` / ``--mcp-url`` (with ``--mcp-header`` and ``--mcp-timeout``, parsed
and loaded by ``streamtools.cli.mcp_options``, as for ``streamtools chat``) add
the tools of MCP servers, for either model: their sessions are opened before
the URL is announced and last as long as the server, which is why uvicorn's
``serve`` runs inside our own ``anyio.run`` (what ``uvicorn.Server.run`` does,
with the sessions around it), and Ctrl-C and SIGTERM are ours, not uvicorn's,
for the whole run: they give up a load, or shut the server down, and the
sessions are closed before the command ends (130 after Ctrl-C; killed by
SIGTERM, as uvicorn alone ends). A server that cannot be loaded is one line on
stderr and exit status 1.

The agent is built per request (``PerRequestAgent``): a replay must start
from its first segment for every conversation, and a fresh agent keeps
concurrent browser tabs apart.

The socket is bound before uvicorn starts so that ``--port 0`` works and the
printed URL is the real one.
"""

from __future__ import annotations

import argparse
import signal
import socket
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio

from streamtools.cli import at_least, log_level, port, positive_number
from streamtools.cli.mcp_options import MCPNotLoaded, add_mcp_options, mcp_session, wants_mcp
from streamtools.cli.model_options import (
    LIVE_ONLY,
    add_model_options,
    add_tool_timeout,
    add_tools_option,
    build_model,
    check_model_options,
    load_tools,
    make_agent,
    setting,
)
from streamtools.cli.model_options import SYSTEM as CHAT_SYSTEM
from streamtools.cli.proxy import listen
from streamtools.errors import UsageError
from streamtools.events import Event
from streamtools.transcript import Transcript

__all__ = ["PerRequestAgent", "build_app", "build_source", "register"]


class PerRequestAgent:
    """An ``EventSource`` that builds a new agent (from ``make``) for each stream."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make

    def stream(self, prompt: str | Transcript) -> AbstractAsyncContextManager[AsyncIterator[Event]]:
        events: AbstractAsyncContextManager[AsyncIterator[Event]] = self.make().stream(prompt)
        return events


def build_source(
    args: argparse.Namespace, tools: Any = None
) -> tuple[PerRequestAgent, str, str | None]:
    """The agent source, a subtitle for the page, and a suggested first message.
    ``tools``: what the agents are given (default: what ``--tools`` names)."""
    from streamtools.runtime import Agent

    if tools is None:
        tools = load_tools(args.tools)
    if args.model is not None:
        replay_only = ("fixture", "speed", "instant")
        _refuse_unused(args, replay_only, "the offline replay, not a live model")
        check_model_options(args)
        model = build_model(args)  # UsageError: an --api-key-env that is not set
        # chat's system prompt is about the example tools: not for tools of your own
        system = CHAT_SYSTEM if args.tools is None else None

        def live() -> Any:
            return make_agent(model, args, tools, system=system)

        if args.native:
            mode = "native tool calls"
        else:
            hybrid = ", tools picked natively" if args.hybrid else ""
            mode = f"{setting(args, 'dialect')} dialect{hybrid}"
        return PerRequestAgent(live), f"{args.model} at {model.base_url}, {mode}", None

    _refuse_unused(args, LIVE_ONLY, "a live model (--model)")
    from streamtools.cli.demo import SYSTEM, check_fixture, find_fixture, recorded_prompt
    from streamtools.model import CallChunk
    from streamtools.runtime import Replay

    path: Path = args.fixture or find_fixture()
    segments = check_fixture(path)  # UsageError: ``_run`` reports it in one line
    # The demo's recording too, once --tools replaces the demo's tools: it calls them
    if (args.fixture is not None or args.tools is not None) and not wants_mcp(args):
        # (an MCP server's tools are known once it is loaded: ``_run`` checks then)
        _refuse_foreign(path, segments, tools, args.tools, args.fixture is None)
    speed = None if args.instant else args.speed or 1.0
    # A recording of native tool calls (``streamtools chat --native --record``) is
    # replayed natively: a dialect's agent has no use for call chunks, and its
    # calls vanished from the page (the text after them alone was shown).
    native = any(isinstance(timed.chunk, CallChunk) for s in segments for timed in s.chunks)

    def replay() -> Any:
        return Agent(
            Replay(path, speed=speed), tools, dialect=args.dialect or "am_xml", native=native,
            system=SYSTEM, tool_timeout=setting(args, "tool_timeout"),
        )

    subtitle = (
        f"offline: a replay of {path.name} (tools run live); it answers the recorded question"
    )
    subtitle += _never_called(segments, tools, wants_mcp(args))
    return PerRequestAgent(replay), subtitle, recorded_prompt(path)


def _never_called(segments: list[Any], tools: Any, mcp: bool) -> str:
    """The end of the replay's subtitle that names the tools given that the
    recording never calls (``--tools``' others, ``--mcp``'s servers'), or "":
    the page offered them, and the replay, whatever was typed, went on calling
    the recorded tools only, without a word that it would."""
    from streamtools.cli.demo import foreign_calls
    from streamtools.tools import ToolRegistry

    called = foreign_calls(segments, ())  # every tool it calls that it offered
    have = list(tools) if isinstance(tools, ToolRegistry) else [t.name for t in tools]
    idle = [name for name in have if name not in called]
    if mcp:
        idle.append("the MCP servers' tools")
    if not idle:
        return ""
    calls = f"{' and '.join(called)} only" if called else "no tool"
    return f", calling {calls}, never {', '.join(idle)} (a live model: --model)"


def _refuse_foreign(
    path: Path, segments: list[Any], tools: Any, spec: str | None, demo: bool = False
) -> None:
    """A ``UsageError`` for a recording that calls tools it offered and this
    command does not run (``streamtools.cli.demo.foreign_calls``): played, each
    such call showed as an unknown tool and a repair, neither of which happened.
    ``demo``: the recording is the default one, which ``--tools`` left without
    its tools; the way out is a live model or a recording of the user's tools."""
    from streamtools.cli.demo import foreign_calls
    from streamtools.tools import ToolRegistry

    have = list(tools) if isinstance(tools, ToolRegistry) else [t.name for t in tools]
    foreign = foreign_calls(segments, have)
    if foreign:
        runs = f"--tools {spec} gives" if spec is not None else "the offline replay runs"
        raise UsageError(
            f"{path} calls tools the page would not have ({', '.join(foreign)}); {runs} "
            f"only {', '.join(have) or 'none'} (--tools or --mcp give it others). "
            + (
                "For your tools, serve a live model (--model NAME, with --base-url or "
                "--provider as for streamtools chat), or --fixture FILE, a recording of "
                "them (streamtools.runtime.record)"
                if demo
                else f"streamtools replay {path} prints the recording's events"
            )
        )


def _refuse_unused(args: argparse.Namespace, names: tuple[str, ...], purpose: str) -> None:
    """A ``UsageError`` for the first of the options ``names`` given on the command
    line (their defaults are None or False): each is for ``purpose``, which this
    run is not, and was ignored without a word (``--native`` on the offline
    replay, ``--fixture`` with a live model)."""
    for name in names:
        if getattr(args, name) not in (None, False):
            flag = "--" + name.replace("_", "-")
            raise UsageError(f"{flag} is for {purpose}")


def build_app(args: argparse.Namespace, tools: Any = None) -> tuple[Any, str]:
    """The Starlette app the command serves, and the page's subtitle (``tools``:
    as ``build_source``)."""
    from streamtools.browser_guard import LOOPBACK_NAMES, is_loopback
    from streamtools.ui.app import create_app

    # UsageError (a missing or malformed --fixture, --tools that are not tools):
    # ``streamtools.cli.main`` says it in one line, exit status 2
    source, subtitle, suggestion = build_source(args, tools)
    app = create_app(
        source,
        title=args.title,
        subtitle=subtitle,
        suggestion=suggestion,
        cors_origins=args.cors_origin,
        finish_reason=not args.no_finish_reason,
        max_body=args.max_body,
        # on a loopback address, only its own names: not a name an attacker's DNS
        # points there, whose pages the browser would take as this server's own
        hosts=LOOPBACK_NAMES if is_loopback(args.host) else None,
    )
    return app, subtitle


def _origin(text: str) -> str:
    """An ``argparse`` type: ``*`` or an origin, ``scheme://host[:port]``; a
    trailing ``/`` (as copied from the address bar) is dropped. A browser's
    ``Origin`` has no path, so one with a path, or no scheme, matched nothing."""
    if text == "*":
        return text
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise argparse.ArgumentTypeError(f"expected * or http(s)://host[:port], got {text!r}")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise argparse.ArgumentTypeError(
            f"an origin is scheme://host[:port], without a path: got {text!r}"
        )
    return f"{parts.scheme}://{parts.netloc}"


def _run(args: argparse.Namespace) -> int:
    import uvicorn

    tools = load_tools(args.tools)
    if wants_mcp(args):
        # the MCP tools join a registry of this command's own, not the demo's
        # list or the registry --tools names
        from streamtools.tools import ToolRegistry

        tools = tools.subset(tools) if isinstance(tools, ToolRegistry) else ToolRegistry(tools)
    app, subtitle = build_app(args, tools)
    # An IPv6 address (--host ::1, --host ::) needs an IPv6 socket, and brackets in
    # the URL, as uvicorn's own binding does it; an IPv4 socket refused it.
    host = f"[{args.host}]" if ":" in args.host else args.host
    sock = listen(args.host, args.port, "ui")  # a port in use: one line, as for the proxy
    if sock is None:
        return 1
    port = sock.getsockname()[1]
    url = f"http://{host}:{port}/"
    streams = app.state.shutdown

    # Signals are ours while we run (``stop_on_signals``), not uvicorn's: its
    # handlers are in place only while it serves, and it raises a SIGTERM again
    # once it has shut down, which killed the process before the MCP sessions
    # around it were closed (a stdio server died of a broken pipe, with a
    # traceback on our stderr); one that came while they loaded killed it too.
    # (Only the main thread has signal handlers; Windows has no asyncio ones.)
    ours = threading.current_thread() is threading.main_thread() and sys.platform != "win32"

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            # End the chat streams under way (ui.Shutdown): a graceful shutdown
            # waits for every response, and an answer may take minutes.
            streams.close()
            await super().shutdown(sockets)

        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            if ours:
                yield
            else:
                with super().capture_signals():
                    yield

    config = uvicorn.Config(app, log_level=args.log_level, lifespan="off")
    server = Server(config)
    received: list[int] = []

    async def serve() -> int:
        # The MCP servers' sessions (--mcp, --mcp-url) last as long as the server:
        # loaded before the URL is announced, closed when it has shut down.
        serving = False

        async def stop_on_signals(run: anyio.CancelScope, *, task_status: Any) -> None:
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                task_status.started()
                async for signum in signals:
                    received.append(signum)
                    if not serving:
                        run.cancel()  # still loading the MCP servers: give up
                    elif server.should_exit and signum == signal.SIGINT:
                        server.force_exit = True  # a second Ctrl-C, as uvicorn takes it
                    else:
                        server.should_exit = True  # shut down, then close the sessions

        code = 0
        # An exception is raised below, as itself: out of the task group it came
        # wrapped in a group, which ``main`` does not say in one line (a missing
        # MCP extra) but as a traceback.
        failure: Exception | None = None
        async with anyio.create_task_group() as tg:
            with anyio.CancelScope() as run:
                if ours:
                    await tg.start(stop_on_signals, run)
                try:
                    async with mcp_session(args, tools, "ui"):
                        if args.model is None and (
                            args.fixture is not None or args.tools is not None
                        ):
                            # with the MCP servers' tools known, the check build_source
                            # could not make: UsageError, said by ``main`` (exit 2)
                            from streamtools.cli.demo import check_fixture, find_fixture

                            path = args.fixture or find_fixture()
                            _refuse_foreign(
                                path, check_fixture(path), tools, args.tools,
                                args.fixture is None,
                            )
                        print(f"streamtools ui: serving on {url}  ({subtitle})", flush=True)
                        serving = True
                        await server.serve(sockets=[sock])
                except MCPNotLoaded as exc:
                    print(exc, file=sys.stderr)
                    code = 1
                except Exception as exc:
                    failure = exc
            tg.cancel_scope.cancel()
        if failure is not None:
            raise failure
        return code

    try:
        # what uvicorn.Server.run does, with the MCP sessions around it
        code = anyio.run(serve, backend_options={"loop_factory": config.get_loop_factory()})
    except KeyboardInterrupt:  # Ctrl-C before the signals were ours, or on Windows
        return 130
    finally:
        sock.close()
    if received and received[0] == signal.SIGTERM:
        signal.raise_signal(signal.SIGTERM)  # end as killed by it, as uvicorn would have
    return 130 if received else code


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "ui",
        help="serve a chat page for an agent",
        description="Serve a self-contained chat page (and the AI SDK UI message stream at "
        "/api/chat) for an agent. Offline on the demo replay unless --model names a live one.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=port, default=8500, help="port (default 8500; 0: any)")
    live = parser.add_argument_group(
        "live model, as for streamtools chat (default: the offline demo replay)"
    )
    add_model_options(
        live,
        model_required=False,
        dialect_help="how tools are described and called in the text, also of a --fixture "
        "recording (default am_xml)",
        system_help="system prompt (default: streamtools chat's, about the example tools; "
        "none with --tools)",
        tool_timeout=False,  # the replay's tools run live too: below, for either model
    )
    add_tools_option(parser)
    add_tool_timeout(parser)
    add_mcp_options(parser.add_argument_group("tools from MCP servers (with either model)"))
    offline = parser.add_argument_group("offline replay")
    offline.add_argument(
        "--fixture",
        type=Path,
        default=None,
        help="a recording (chat --record, record()) to play instead of the demo's, with the "
        "tools run live; one calling tools the page does not have is refused",
    )
    pace = offline.add_mutually_exclusive_group()
    pace.add_argument(
        "--speed", type=positive_number, default=None, help="pace multiplier (default 1)"
    )
    pace.add_argument("--instant", action="store_true", help="no waits between chunks")
    parser.add_argument("--title", default="streamtools", help="page title (default streamtools)")
    parser.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        type=_origin,
        metavar="ORIGIN",
        help="a front end's origin that may call the endpoints (http://localhost:3000; "
        "repeat for more; * for any)",
    )
    parser.add_argument(
        "--max-body",
        type=at_least(1),
        default=4 * 1024 * 1024,  # create_app's (not imported here: Starlette loads late)
        metavar="BYTES",
        help="request body limit in bytes (default 4 MiB; attached files count)",
    )
    parser.add_argument(
        "--no-finish-reason",
        action="store_true",
        help="leave finishReason out of the finish chunk (ai 5 clients older than 5.0.92)",
    )
    parser.add_argument(
        "--log-level", type=log_level, default="warning", help="uvicorn log level (default warning)"
    )
    parser.set_defaults(func=_run)
