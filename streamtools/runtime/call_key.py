"""A call checked once: its tool's keyword arguments and its repeat key.

Theory of operation
-------------------
The agent needs two things of a call's arguments before it runs: the keyword
arguments its tool takes (``Tool.validate``), and a key that is equal for the
same call written another way (``5`` and ``5.0`` for an ``int``, ``"5"`` as a
prompt dialect writes it, a default written out or left out, key order), by
which repeated calls are found (``streamtools.runtime.repair``, rung 3).
``check_call`` gets both from one validation, and the executor runs the call
with those arguments (``Executor.attempt``): a tool's own checks (a Struct's
``__post_init__``, pydantic's validators) run once per call. They ran three
times (twice for the key, to see whether it was stable, once to run), four in a
prompt dialect, whose parser checks a call's arguments before it ends the call:
its check is the one validation there (``decoders.CheckedArguments``).

The key is the validated arguments as canonical JSON, less what the model did
not write and the tool filled in from a ``default_factory`` (a field that is not
required and has no ``default`` in the schema, absent from the arguments, at
any depth the schema describes): an id or a timestamp the tool made up is no
part of what was asked. Compared with it, the same call written the same way
was no repeat when the factory gave something new each time; and comparing two
validations to catch that missed a factory that changes now and then
(``int(time.time())``: equal within a second, so the key held a timestamp and
the same call a second later was a new call, run again).

Arguments the tool refuses, or whose converted value has no JSON form (a
pydantic model), are keyed as written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from streamtools.schema_nav import MAX_DEPTH, resolve
from streamtools.tools import Tool, ToolArgumentsError

__all__ = ["CheckedCall", "check_call"]

_encoder = msgspec.json.Encoder(order="sorted")


@dataclass(frozen=True, slots=True)
class CheckedCall:
    """One call's repeat key and, when its tool is known, what validation gave:
    the keyword arguments, or why the tool refused them."""

    signature: str
    kwargs: dict[str, Any] | None = None
    error: ToolArgumentsError | None = None


def check_call(
    name: str,
    arguments: dict[str, Any],
    tool: Tool | None,
    kwargs: dict[str, Any] | None = None,
) -> CheckedCall:
    """Validate ``arguments`` for ``tool`` once; see the module docstring.
    ``kwargs``: what a validation already done gave (the prompt parser's check,
    ``decoders.CheckedArguments``), used as it is."""
    if tool is None:
        return CheckedCall(_as_written(name, arguments))
    if kwargs is None:
        try:
            kwargs = tool.validate(arguments, lenient=True)
        except ToolArgumentsError as exc:
            return CheckedCall(_as_written(name, arguments), error=exc)
    try:
        taken = msgspec.to_builtins(kwargs)
        key = _encoder.encode(_asked(taken, arguments, tool.parameters))
    except Exception:  # no JSON form (a pydantic model): as written
        return CheckedCall(_as_written(name, arguments), kwargs=kwargs)
    return CheckedCall(name + "\x00" + key.decode(), kwargs=kwargs)


def _as_written(name: str, arguments: dict[str, Any]) -> str:
    try:
        return name + "\x00" + _encoder.encode(arguments).decode()
    except Exception:  # nested too deep to write out (the tool refused them, too)
        return name + "\x00" + "<arguments that cannot be written out>"


def _asked(taken: Any, written: dict[str, Any], parameters: dict[str, Any]) -> Any:
    """``taken`` (the validated keyword arguments as JSON data) without the
    values a ``default_factory`` filled in. A tool whose one parameter is a Struct
    takes the arguments as that Struct's fields: ``{"args": {...}}``."""
    props = parameters.get("properties")
    if isinstance(taken, dict) and len(taken) == 1 and isinstance(props, dict):
        [(key, inner)] = taken.items()
        if key not in props and isinstance(inner, dict):
            return {key: _strip(inner, written, parameters, parameters, 0)}
    return _strip(taken, written, parameters, parameters, 0)


def _strip(value: Any, written: Any, schema: Any, root: dict[str, Any], depth: int) -> Any:
    if depth > MAX_DEPTH:
        return value
    node = resolve(root, schema)
    if isinstance(value, dict) and isinstance(written, dict):
        props = node.get("properties")
        if not isinstance(props, dict):
            return value
        required = node.get("required", ())
        out = {}
        for key, item in value.items():
            sub = props.get(key)
            if key in written:
                out[key] = _strip(item, written[key], sub, root, depth + 1)
            elif not (isinstance(sub, dict) and key not in required and "default" not in sub):
                out[key] = item  # a default: the same whether written out or left out
        return out
    if isinstance(value, list) and isinstance(written, list) and len(value) == len(written):
        items = node.get("items")
        return [_strip(v, w, items, root, depth + 1) for v, w in zip(value, written, strict=True)]
    return value
