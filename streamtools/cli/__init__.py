"""The ``streamtools`` command: ``demo | replay | chat | proxy | ui``.

Each subcommand lives in its own module of this package and exposes
``register(subparsers)``, which adds its parser and sets ``func`` (a callable
taking the parsed ``argparse.Namespace`` and returning an exit code). Modules
are imported lazily by name so that ``streamtools demo`` never imports the
proxy's or the UI's optional dependencies.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import math
import os
import shlex
import sys
import threading
import time
from collections.abc import Sequence
from importlib import metadata
from typing import Any
from urllib.parse import urlsplit
from urllib.request import url2pathname

from streamtools.errors import UsageError

__all__ = [
    "LOG_LEVELS", "at_least", "exit_if_threads_remain", "finite_number", "http_url", "json_object",
    "log_level", "main", "port", "positive_number",
]

# uvicorn's log levels (``--log-level``); it fails with a KeyError on any other
LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")

# name -> (module, one-line help); the module's register() builds the rest.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("streamtools.cli.demo", "replay a recorded agent session live (no model, no network)"),
    "replay": ("streamtools.cli.replay", "print the events of a recording"),
    "chat": ("streamtools.cli.chat", "chat with a live model, with tools"),
    "proxy": ("streamtools.cli.proxy", "serve OpenAI/Anthropic-compatible tool calling"),
    "ui": ("streamtools.cli.ui", "serve a chat page for an agent"),
}


def json_object(text: str) -> dict[str, Any]:
    """An ``argparse`` type: a JSON object (``--extra-body``, ``--upstream-body``)."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("must be a JSON object")
    return value


def at_least(low: int) -> Any:
    """An ``argparse`` type: a whole number of at least ``low`` (``--workers``: 1)."""

    def whole(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value

    return whole


def finite_number(text: str) -> float:
    """An ``argparse`` type: a finite number (``--temperature``, ``--top-p``). ``float``
    alone takes ``nan`` and ``inf``, which JSON cannot carry: the request body would
    say ``null`` (msgspec's spelling of them) and the server would sample at its default."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
    return value


def positive_number(text: str) -> float:
    """An ``argparse`` type: a finite number above zero (``--timeout``, ``--speed``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def port(text: str) -> int:
    """An ``argparse`` type: a TCP port, 0 (any free one) to 65535."""
    value: int = at_least(0)(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, got {value}")
    return value


def http_url(text: str) -> str:
    """An ``argparse`` type: an http(s) URL with a host (``--upstream``, ``--base-url``).
    Checked here: httpx would refuse each request, and an empty one would fall
    back to a provider's public default."""
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise argparse.ArgumentTypeError(
            f"expected an http:// or https:// URL with a host, got {text!r}"
        )
    try:
        parts.port  # noqa: B018 - reading it checks it (ValueError out of range)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None
    return text


def log_level(text: str) -> str:
    """An ``argparse`` type: one of ``LOG_LEVELS``, in any case."""
    if text.lower() not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(
            f"expected one of {', '.join(LOG_LEVELS)}, got {text!r}"
        )
    return text.lower()


def _build_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    from streamtools import __version__

    parser = argparse.ArgumentParser(
        prog="streamtools", description="Reliable, streaming tool calling for any LLM."
    )
    # what a bug report asks for first; an unknown argument, an exit 2, without it
    parser.add_argument("--version", action="version", version=f"streamtools {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = next((a for a in argv if not a.startswith("-")), None)
    for name, (module, help_text) in SUBCOMMANDS.items():
        if wanted == name:
            try:
                mod = importlib.import_module(module)
            except ModuleNotFoundError as exc:
                print(_missing(exc, name), file=sys.stderr)
                raise SystemExit(2) from exc  # as ``main`` says it: a usage error
            mod.register(sub)
        else:
            sub.add_parser(name, help=help_text)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = _build_parser(args_list)
    args = parser.parse_args(args_list)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2 if args.command is None else 1
    try:
        code: int = func(args)
        sys.stdout.flush()  # a closed pipe surfaces here, not at interpreter exit
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, as CLI tools do, and
        # point stdout at /dev/null so the final flush at exit cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except UsageError as exc:
        # what the flags asked for cannot work (a provider refusing an api_key
        # with a line break, say): said as argparse says it, not as a traceback
        print(f"streamtools {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        # commands import their server (uvicorn) or MCP only when they run
        print(_missing(exc, args.command), file=sys.stderr)
        return 2
    if argv is None:  # run as the program, not called by code that goes on
        exit_if_threads_remain(code)
    return code


def exit_if_threads_remain(code: int) -> None:
    """Exit with ``code`` at once if threads other than this one still run; else return.

    When a command ends (Ctrl-C, a server stopped), a sync tool still blocking
    in its worker thread was abandoned, since Python cannot stop a thread; but
    the interpreter waits at exit for every such thread, for ever for a tool
    that hangs. A moment's grace lets threads that are ending anyway end; then
    what was written is flushed and the process leaves without waiting
    (``os._exit``: the abandoned tool dies with it)."""
    others = [t for t in threading.enumerate() if t is not threading.current_thread()]
    grace = time.monotonic() + 0.5
    for thread in others:
        if not thread.daemon:
            thread.join(max(0.0, grace - time.monotonic()))
    if any(t.is_alive() and not t.daemon for t in others):
        _flush_output()
        os._exit(code)


def _flush_output() -> None:
    """Write out what logging and the standard streams still buffer, as the
    interpreter would at exit; never raise. A flush into a pipe whose reader
    went away (``| head``) raised BrokenPipeError out of ``exit_if_threads_remain``
    before its ``os._exit``, and ``sys.stdout`` may be None (pythonw, a program
    that dropped it): then the interpreter waited at exit for the thread after
    all. The original streams are flushed too, in case ``sys.stdout`` was
    replaced. Atexit handlers are not run: one may wait for the very thread
    that hangs."""
    logging.shutdown()  # flushes and closes every handler, catching their errors
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if stream is None:
            continue
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader gone, a stream closed: nothing to keep
            pass


# the extra that brings each optional package (a command's own extra for its server)
_EXTRAS = {"mcp": "mcp", "starlette": None, "uvicorn": None}


def _missing(exc: ModuleNotFoundError, command: str) -> str:
    """What to install for a missing optional package; ``exc`` again if it is not one."""
    top = (exc.name or "").partition(".")[0]
    if top not in _EXTRAS or (_EXTRAS[top] is None and command not in ("proxy", "ui")):
        raise exc
    extra = _EXTRAS[top] or command
    return (
        f"streamtools {command}: error: missing optional dependency {top!r} "
        f"(the {extra!r} extra); install it with: {_install_line(extra)}"
    )


def _install_line(extra: str) -> str:
    """The pip line that adds ``extra`` to this copy of streamtools. Never ``pip
    install 'streamtools[extra]'``: streamtools is installed from a clone, and the
    package of that name on PyPI is another project. Installed from a local
    directory (the ``direct_url.json`` pip records, PEP 610), that directory,
    with ``-e`` when it was editable, so the line works from anywhere; else
    (run from a source tree, installed from elsewhere) the clone's own line."""
    try:
        recorded = metadata.distribution("streamtools").read_text("direct_url.json")
        origin = json.loads(recorded) if recorded else None
    except (metadata.PackageNotFoundError, ValueError):
        origin = None
    if isinstance(origin, dict) and isinstance(origin.get("dir_info"), dict):
        url = origin.get("url")
        if isinstance(url, str) and url.startswith("file:"):
            where = url2pathname(urlsplit(url).path)
            editable = "-e " if origin["dir_info"].get("editable") is True else ""
            return f"pip install {editable}{shlex.quote(f'{where}[{extra}]')}"
    return f"pip install -e '.[{extra}]' (in the streamtools clone)"


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
