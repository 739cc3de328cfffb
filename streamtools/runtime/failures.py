"""What the model is told of a tool's exception, and whether the call may pass if
made again (see ``streamtools.runtime.executor``).

The exception's type and message; for an exception group (an async tool's
failed task group raises one) the exceptions in it too; a ``StopIteration``
the tool raised as itself, not as the ``RuntimeError`` PEP 479 makes of it.
The traceback (``include_tracebacks=True``) starts at the tool's own code: the
frames above it (the executor's, anyio's, the worker thread's: ten for a sync
tool) say nothing about the error and spend the model's context on the
install's paths. Frames below the tool's (a library it calls, anyio included)
stay.
"""

from __future__ import annotations

import os
import sys
import threading
import traceback

import anyio

from streamtools.errors import describe_exception

__all__ = ["describe_failure", "grouped", "may_pass", "unmasked"]


def describe_failure(name: str, exc: BaseException, *, tracebacks: bool = False) -> str:
    """The tool error for tool ``name`` raising ``exc``, with its traceback when
    ``tracebacks`` (it can leak paths and source to the model)."""
    exc = unmasked(exc)
    text = f"Tool {name!r} raised {describe_exception(exc)}"
    if isinstance(exc, BaseExceptionGroup):
        text += ": " + grouped(exc)
    if tracebacks:
        shown = traceback.TracebackException.from_exception(exc)
        shown.stack = _from_the_tool(shown.stack)
        text += "\n" + "".join(shown.format()).rstrip()
    return text


def _from_the_tool(stack: traceback.StackSummary) -> traceback.StackSummary:
    """``stack`` without its leading frames of the machinery that called the
    tool, nor this runtime's anywhere (``Stoppable`` passes what the tool awaits
    through); all of it when nothing else is left (the machinery raised)."""
    frames = list(stack)
    while frames and _machinery(frames[0].filename):
        del frames[0]
    frames = [f for f in frames if not f.filename.startswith(_RUNTIME + os.sep)]
    return traceback.StackSummary.from_list(frames) if frames else stack


def _machinery(filename: str) -> bool:
    return filename.startswith(_MACHINERY) or any(
        filename.startswith(d) for d in _loaded_dirs(("trio", "outcome", "uvloop"))
    )


def _loaded_dirs(names: tuple[str, ...]) -> list[str]:
    """The package directories of ``names`` that are imported (not imported here)."""
    dirs = []
    for name in names:
        module = sys.modules.get(name)
        file = getattr(module, "__file__", None)
        if isinstance(file, str):
            dirs.append(os.path.dirname(file) + os.sep)
    return dirs


_RUNTIME = os.path.dirname(os.path.abspath(__file__))
_STDLIB = os.path.dirname(os.path.abspath(threading.__file__))
# This runtime (the executor, stoppable); Tool.invoke; anyio; of the standard
# library asyncio, the thread pool and threading (not all of it: site-packages,
# where a tool of an installed package lives, may be inside it).
_MACHINERY = (
    _RUNTIME + os.sep,
    os.path.join(os.path.dirname(_RUNTIME), "tools.py"),
    os.path.dirname(os.path.abspath(anyio.__file__)) + os.sep,
    os.path.join(_STDLIB, "asyncio") + os.sep,
    os.path.join(_STDLIB, "concurrent") + os.sep,
    os.path.abspath(threading.__file__),
)


# What a tool raises to say its arguments are wrong (a date it cannot read, a
# division by zero, argparse refusing a command line): the same call fails the
# same way again. An ``OSError`` never is (requests' ``JSONDecodeError`` is a
# ``ValueError`` too, raised for a gateway's error page that may pass).
_SETTLED = (ValueError, TypeError, ArithmeticError, NotImplementedError, SystemExit)


def may_pass(exc: BaseException) -> bool:
    """Whether a call that raised ``exc`` might succeed if made again with the same
    arguments: False for what says the arguments are wrong (``ValueError``,
    ``TypeError``, ``ArithmeticError``, ``NotImplementedError``, ``SystemExit``),
    True for anything else (a connection error, an error of the tool's own
    class: what it means is not known). An exception group may pass when any
    exception in it may."""
    if isinstance(exc, BaseExceptionGroup):
        return any(may_pass(e) for e in exc.exceptions)
    exc = unmasked(exc)
    return isinstance(exc, OSError) or not isinstance(exc, _SETTLED)


# What PEP 479 makes of a StopIteration leaving a coroutine or a generator: a
# tool's own ``next(it)`` on an exhausted iterator reaches us through the
# coroutine that awaits it (an async tool, the worker thread's future) so.
_PEP_479 = frozenset(
    f"{kind} raised {name}"
    for kind in ("coroutine", "generator", "async generator")
    for name in ("StopIteration", "StopAsyncIteration")
)


def unmasked(exc: BaseException) -> BaseException:
    """The ``StopIteration`` a tool raised, rather than the ``RuntimeError``
    ("coroutine raised StopIteration") Python wraps it in on its way out: the
    model is told what the tool did, not what the coroutine machinery did with
    it. A ``RuntimeError`` of the tool's own (its own message) is left as it is."""
    cause = exc.__cause__
    if (
        type(exc) is RuntimeError
        and isinstance(cause, StopIteration | StopAsyncIteration)
        and str(exc) in _PEP_479
    ):
        return cause
    return exc


_GROUPED_SHOWN = 5


def grouped(group: BaseExceptionGroup[BaseException]) -> str:
    """The exceptions inside ``group`` (nested groups flattened), as the model
    needs them: an async tool whose task group failed raises an
    ``ExceptionGroup`` whose own message ("unhandled errors in a TaskGroup (1
    sub-exception)") says nothing of what went wrong. At most ``_GROUPED_SHOWN``."""
    leaves: list[BaseException] = []
    pending: list[BaseException] = [group]
    while pending:
        exc = pending.pop(0)
        if isinstance(exc, BaseExceptionGroup):
            pending[:0] = exc.exceptions  # depth first, in order
        else:
            leaves.append(exc)
    shown = "; ".join(describe_exception(unmasked(e)) for e in leaves[:_GROUPED_SHOWN])
    if len(leaves) > _GROUPED_SHOWN:
        shown += f"; and {len(leaves) - _GROUPED_SHOWN} more"
    return shown
