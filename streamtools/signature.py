"""Reading a tool's function: which callable's annotations and docstring describe
it, its default name, and its annotations evaluated (``tool`` in ``streamtools.tools``
reads a function with these).

A callable object is read through its ``__call__`` (named after its class), a
``functools.partial`` through its function. Annotations are evaluated with the
function's globals, then, for a name only a local scope defines (``from
__future__ import annotations`` in a test), with the locals of the scopes the
function is defined in, when they are among the callers (``type_hints``).

Core module: standard library only.
"""

from __future__ import annotations

import functools
import inspect
import sys
import types
import typing
from collections.abc import Callable
from typing import Any

__all__ = ["annotated", "annotated_text", "default_name", "doc_of", "type_hints"]


def annotated_text(hint: Any) -> str | None:
    """The description an ``Annotated`` hint gives as a plain string
    (``Annotated[str, "The city"]``, as LangChain's and AutoGen's tools write
    it), which msgspec ignores; ``msgspec.Meta(description=…)`` comes first."""
    if typing.get_origin(hint) is not typing.Annotated:
        return None
    texts = [m.strip() for m in hint.__metadata__ if isinstance(m, str) and m.strip()]
    return " ".join(texts) or None


def annotated(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The function whose annotations (and docstring) describe ``fn``'s parameters:
    a ``functools.partial``'s function, a callable object's ``__call__``; ``fn``
    itself for a function or method. ``inspect.signature(fn)`` still decides
    which parameters there are (a partial's bound ones, an object's ``self``,
    are not)."""
    if isinstance(fn, functools.partial):
        return annotated(fn.func)
    if inspect.isroutine(fn) or isinstance(fn, type):
        return fn
    call = getattr(type(fn), "__call__", None)  # noqa: B004 - a callable object's method
    return call if inspect.isroutine(call) else fn


def default_name(fn: Callable[..., Any]) -> str:
    """A partial's function's name; a callable object's class name."""
    if isinstance(fn, functools.partial):
        return default_name(fn.func)
    name = getattr(fn, "__name__", None)
    return name if isinstance(name, str) and name else type(fn).__name__


def doc_of(fn: Callable[..., Any], source: Callable[..., Any]) -> str:
    """The docstring to read: ``fn``'s own unless it is a partial's (which describes
    ``functools.partial``), else the annotated function's."""
    own = None if isinstance(fn, functools.partial) else inspect.getdoc(fn)
    return own or inspect.getdoc(source) or ""


def type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """``fn``'s annotations, evaluated. A string annotation (``from __future__
    import annotations``) naming a class defined in a local scope (a Struct
    declared in the function that declares the tool, as tests do) is not in
    ``fn``'s globals: such names are then looked up as Python itself would
    have, in the scopes that enclose ``fn``'s definition, when one of them is
    still running among the callers of ``tool`` (the function that declares
    the tool, or registers it right there). Only those: an unrelated local of
    the same name in some other caller (a ``Point`` of its own, where a tool
    made by a factory that has returned is registered) would give the tool a
    wrong schema without a word; the name is then left undefined."""
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except NameError as exc:
        missing = exc
    module, scopes = enclosing_scopes(fn)
    found: dict[str, dict[str, Any]] = {}
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if frame.f_globals.get("__name__") == module and code.co_qualname in scopes:
            found.setdefault(code.co_qualname, dict(frame.f_locals))  # the nearest call
        frame = frame.f_back
    if not found:
        raise missing
    localns: dict[str, Any] = {}
    for qualname in scopes:  # outermost first: an inner scope's name shadows
        localns.update(found.get(qualname, {}))
    try:
        return typing.get_type_hints(fn, localns=localns, include_extras=True)
    except NameError:
        raise missing from None


def enclosing_scopes(fn: Callable[..., Any]) -> tuple[str | None, list[str]]:
    """The name of ``fn``'s module and the qualified names of the scopes
    ``fn`` is defined in, outermost first: ``make.<locals>.norm`` is defined in
    ``make``, a method ``f.<locals>.C.m`` in ``f`` and in the class body ``f.<locals>.C``."""
    target = inspect.unwrap(getattr(fn, "__func__", fn))
    parts = str(getattr(target, "__qualname__", "")).split(".")[:-1]
    scopes = [".".join(parts[: i + 1]) for i, part in enumerate(parts) if part != "<locals>"]
    return getattr(target, "__module__", None), scopes
