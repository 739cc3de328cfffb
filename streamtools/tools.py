"""Typed tools: Python functions (or foreign JSON Schemas) as callable, validated tools.

Theory of operation
-------------------
``@tool`` reads a function once, at registration, and keeps three things:

* a **name** (the function's, or one given; dots allowed: ``kom.memory.v1.search``),
* a **description** (the docstring's first paragraph; ``Args:``/``Parameters``
  sections, Google or NumPy style, or Sphinx ``:param x:`` fields supply
  per-parameter descriptions: ``streamtools.docstrings``; so does a string in a
  parameter's ``Annotated``, before the docstring),
* an **argument type**: a msgspec Struct generated from the signature
  (``defstruct``; defaults make a field optional, unknown fields are refused), or
  the function's own Struct when it takes exactly one Struct-typed parameter.
  A pydantic model is described by its own schema and validated by pydantic,
  as a parameter or as the one parameter (``streamtools.pydantic_models``).
  ``object`` is any JSON value, as ``Any`` is. A default that JSON cannot state
  (a sentinel ``object()``, NaN) is left out of the schema and given as is, and a
  mutable one is copied per call (``streamtools.defaults``).

A callable object is read through its ``__call__`` (named after its class), a
``functools.partial`` through its function (the parameters it binds are left
out, or keep their bound value as a default). Annotations are evaluated with
the function's globals, then, for a name only a local scope defines (``from
__future__ import annotations`` in a test), with the locals of the scopes the
function is defined in, when they are among ``tool``'s callers
(``streamtools.signature``).

The JSON Schema the model sees is derived from that same type
(``streamtools.schema.schema_of``: msgspec's ``schema_components``, root without
``$ref``, nested types under ``$defs``). Because schema and validator come from
one type they cannot drift. Anything msgspec cannot describe fails here, as
``ToolDefinitionError``, rather than when the model first calls the tool.

Validation (``Tool.validate``) is ``msgspec.convert`` into the argument type:
strict by default, lenient (``"5"`` -> ``5``, ``"true"`` -> ``True``) for dialects
that carry every value as text (XML). msgspec's error already names the path
(``$.days``); ``streamtools.schema.explain`` adds the schema snippet at that
path, so the model is told exactly what shape to produce. Arguments that fail
never reach the function. A float with no fractional part where an integer is
expected (``5.0``: JSON Schema counts it as an integer, and models write it) is
taken as that integer, strict or lenient, at any depth; ``5.5`` is refused
(``streamtools.schema.integral_repair``, run only after a conversion failed).
A ``null`` for a parameter that has a default and does not take null is that
parameter left out, its default used (``Tool._mended``): models write one for
each optional parameter they leave alone (OpenAI's strict mode has them write
every parameter), and refusing it cost a repair turn for a call that was clear.

Two things ``convert`` lets through are refused after it
(``streamtools.schema.value_check``), so that schema and validation agree: a key
no field declares in a nested Struct, dataclass or TypedDict (msgspec drops it
unless the Struct forbids unknown fields; a model's misspelt field would lose
its value without a word, where a misspelt parameter is refused), and the
schema says ``additionalProperties: false`` of each such object; and a number
that is not finite (lenient conversion reads ``"nan"`` and ``"inf"`` as such,
while JSON has no such number and writes it back as ``null``).

Tools that come from elsewhere (an MCP server, a proxy request) arrive as a name,
a description and a JSON Schema: ``ToolRegistry.add_schema`` has
``streamtools.schema.type_from_schema`` translate it into a msgspec type, so
validation speaks the same language (see that module for the subset it covers).

``ToolRegistry`` is the allowlist of a run and satisfies the parser's
``ToolCatalog`` protocol (``__contains__``, ``__iter__``, ``schema``,
``check_arguments``). An unknown name is refused with the allowed names only.

Core module: standard library and msgspec only.
"""

from __future__ import annotations

import copy
import difflib
import inspect
import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

import msgspec

from streamtools import defaults
from streamtools.docstrings import parse_docstring
from streamtools.errors import (
    StreamtoolsError,
    ToolDefinitionError,
    UsageError,
    describe_exception,
)
from streamtools.model import ToolSpec
from streamtools.pydantic_models import described, is_model, validated
from streamtools.schema import (
    ValueCheck,
    arguments_from,
    closed_objects,
    explain,
    integral_repair,
    schema_of,
    type_from_schema,
    value_check,
)
from streamtools.signature import annotated, annotated_text, default_name, doc_of, type_hints

__all__ = ["FunctionTool", "Tool", "ToolArgumentsError", "ToolRegistry", "tool"]

# the function a FunctionTool calls; covariant and unbounded, so that a list of tools of
# different signatures is still a list of tools to mypy (FunctionTool[function])
_F_co = TypeVar("_F_co", covariant=True)
_F = TypeVar("_F", bound=Callable[..., Any])

# the names OpenAI's, Anthropic's and MCP's tools take (a digit may come first:
# MCP servers name tools "2fa_code"), but for a first "-" or "."
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}$")


class ToolArgumentsError(StreamtoolsError, ValueError):
    """Arguments do not match a tool's schema, or a check of the tool's own types
    (a Struct's ``__post_init__``) refused them. ``str(exc)`` is the message for the
    model; ``path`` is msgspec's path (``$.days``; ``$`` for a check of the tool's
    own), ``detail`` msgspec's error or the check's ``"TypeName: message"``."""

    def __init__(self, tool: str, detail: str, path: str, message: str) -> None:
        super().__init__(message)
        self.tool = tool
        self.detail = detail
        self.path = path


class Tool:
    """A named, described, validated callable. Calling the Tool calls the function."""

    __slots__ = (
        "name", "description", "parameters", "fn", "is_async", "repeatable", "timeout",
        "isolated", "sequential", "_type", "_wrap", "_check", "_integral",
    )

    def __init__(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any],
        fn: Callable[..., Any] | None,
        arg_type: Any,
        wrap: Callable[[Any, dict[str, Any]], dict[str, Any]],
        check: ValueCheck | None = None,
    ) -> None:
        self.name = name
        self.description = description
        self.parameters = parameters
        self.fn = fn
        self.is_async = fn is not None and _is_async(fn)
        # Its result may change between identical calls (a job's status, a clock): the
        # agent runs a repeat of it rather than take it for a loop (``runtime.repair``).
        self.repeatable = False
        # Seconds a call may take, for this tool only (None: the agent's ``tool_timeout``;
        # ``math.inf``: no limit).
        self.timeout: float | None = None
        # An async tool run in a worker thread, in an event loop of its own, so that
        # a call past its timeout can be abandoned (``runtime.executor``).
        self.isolated = False
        # Its calls run alone, in their place in a reply (``runtime.turn``): a write.
        self.sequential = False
        self._type = arg_type
        self._wrap = wrap  # turns the converted value into kwargs for ``fn``
        self._check = check  # what convert lets through (``schema.value_check``)
        self._integral = integral_repair(arg_type)  # 5.0 where an int is expected

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r})"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._require_fn()(*args, **kwargs)

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)

    def validate(self, arguments: dict[str, Any], *, lenient: bool = False) -> dict[str, Any]:
        """Return the keyword arguments for ``fn``; raise ``ToolArgumentsError``.

        A whole number written as a float (``5.0``) is an integer, as JSON Schema
        counts it: where msgspec refuses one, the arguments are converted again
        with ``5`` in its place (``schema.integral_repair``); ``5.5`` stays an error.
        Any other failure while checking them (an exception from a Struct's own
        check, a RecursionError on arguments nested too deep) is a
        ``ToolArgumentsError`` too, so that it goes back to the model as one."""
        try:
            try:
                value = _convert(arguments, self._type, lenient)
            except msgspec.ValidationError as exc:
                arguments, value = self._mended(arguments, exc, lenient)
            problem = self._check(arguments, lenient) if self._check is not None else None
            if problem is None:
                return self._wrap(value, arguments)
        except msgspec.ValidationError as exc:
            raise self._error(str(exc)) from None
        except Exception as exc:
            # A user's own check (a Struct's __post_init__) refused them, or the
            # arguments could not be taken apart at all (a RecursionError from
            # arguments nested thousands deep): either way the arguments are what
            # failed, so the caller gets a ToolArgumentsError, never something else.
            detail = describe_exception(exc)
            message = f"Invalid arguments for tool `{self.name}`: {detail}."
            raise ToolArgumentsError(self.name, detail, "$", message) from None
        raise self._error(problem)

    def _mended(
        self, arguments: dict[str, Any], exc: msgspec.ValidationError, lenient: bool
    ) -> tuple[dict[str, Any], Any]:
        """The arguments, and their value, after conversion failed with ``exc``,
        mended where the model's meaning is plain: a ``null`` for a parameter
        that has a default and takes no null is that parameter left out (models
        write ``"days": null`` for an optional parameter they leave alone, as
        OpenAI's strict mode has every parameter written), and a whole number
        written as a float is that integer (see the class docstring). Raises
        the failure that remains."""
        required = self.parameters.get("required", ())
        integral = self._integral
        for _ in range(len(arguments) + 2):  # one null dropped, or the floats, each time
            key = _refused_null(str(exc), arguments, required)
            if key is not None:
                arguments = {k: v for k, v in arguments.items() if k != key}
            else:
                fixed = integral(arguments) if integral is not None else None
                if fixed is None:
                    break
                arguments, integral = fixed, None
            try:
                return arguments, _convert(arguments, self._type, lenient)
            except msgspec.ValidationError as again:
                exc = again
        raise exc

    def invoke(self, kwargs: dict[str, Any]) -> Any:
        """Call the function: its value, or an awaitable when it is async."""
        return self._require_fn()(**kwargs)

    def _require_fn(self) -> Callable[..., Any]:
        if self.fn is None:
            raise UsageError(f"tool {self.name!r} has no function to call (schema-only tool)")
        return self.fn

    def _error(self, detail: str) -> ToolArgumentsError:
        path, hint = explain(self.parameters, detail)
        text = f"Invalid arguments for tool `{self.name}`: {detail}."
        if hint:
            text += " " + hint
        return ToolArgumentsError(self.name, detail, path, text)



class FunctionTool(Tool, Generic[_F_co]):
    """The ``Tool`` that ``@tool`` makes of a function ``_F_co``: calling it calls
    the function, and a type checker checks the call against the function's own
    signature and return type (an async function's call is its coroutine)."""

    __slots__ = ()

    if TYPE_CHECKING:  # Tool.__call__ runs it; its type is the function's
        __call__: _F_co  # type: ignore[assignment]


_NULL_AT = re.compile(r"got `null` - at `\$\.([A-Za-z_][A-Za-z0-9_]*)`$")


def _refused_null(message: str, arguments: dict[str, Any], required: Any) -> str | None:
    """The top-level parameter whose ``null`` msgspec refused (``message``), when
    it is one that may be left out (not in the schema's ``required``), else None."""
    found = _NULL_AT.search(message)
    if found is None:
        return None
    key = found.group(1)
    if key in required or key not in arguments or arguments[key] is not None:
        return None
    return key


# an option ``tool`` was not given: a function's tool has the default (False, None),
# a Tool given to it keeps its own
_UNSET: Any = object()


# A Tool given to ``tool`` keeps its kind (a FunctionTool keeps its type, a
# schema tool stays one); the overlap mypy reports is a Tool typed only as a
# callable, taken for a function.
@overload
def tool(
    fn: FunctionTool[_F],
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    repeatable: bool = False,
    timeout: float | None = None,
    isolated: bool = False,
    sequential: bool = False,
) -> FunctionTool[_F]: ...
@overload
def tool(  # type: ignore[overload-overlap]
    fn: Tool,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    repeatable: bool = False,
    timeout: float | None = None,
    isolated: bool = False,
    sequential: bool = False,
) -> Tool: ...
@overload
def tool(
    fn: _F,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    repeatable: bool = False,
    timeout: float | None = None,
    isolated: bool = False,
    sequential: bool = False,
) -> FunctionTool[_F]: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    repeatable: bool = False,
    timeout: float | None = None,
    isolated: bool = False,
    sequential: bool = False,
) -> Callable[[_F], FunctionTool[_F]]: ...
def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    repeatable: bool = _UNSET,
    timeout: float | None = _UNSET,
    isolated: bool = _UNSET,
    sequential: bool = _UNSET,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a typed function (sync or async) into a ``Tool``; usable bare or with options.
    The tool is a ``FunctionTool``: a type checker reads a direct call of it
    (``add(2, 3)``) as a call of the function, its parameters and return type.

    ``repeatable=True``: the same call may give another result each time (a job's
    status, a clock, a queue), so the agent runs it again when the model repeats
    it (polling), instead of taking the repeat for a loop (``Tool.repeatable``).
    ``timeout``: the seconds a call of this tool may take, in place of the
    agent's ``tool_timeout`` (a build that takes minutes beside tools that take
    a second; ``math.inf``: no limit).
    ``isolated=True``: an async tool runs in a worker thread, in an event loop of
    its own, so that a call that outlives its timeout is abandoned, as a sync
    tool's thread is, instead of holding the run: for code that swallows
    cancellation (a task it starts that never ends). It must not use objects of
    the caller's event loop (a client, a lock made outside the tool).
    ``sequential=True``: a call of the tool runs alone, in its place in the
    model's reply (a write, a command): the calls before it finish first and
    those after it wait for it, so a read written after a write sees it.
    A ``Tool`` given to it is returned as it is, or, with anything asked of it
    (``tool(add, name="plus", repeatable=True)``), as a copy that has what was
    asked and keeps the rest: the tool itself, which other registries may
    hold, is not changed."""
    given = {"repeatable": repeatable, "timeout": timeout, "isolated": isolated,
             "sequential": sequential}
    options = {key: value for key, value in given.items() if value is not _UNSET}
    if timeout is not _UNSET and timeout is not None and not timeout > 0:  # NaN, 0, < 0
        raise ToolDefinitionError(
            f"timeout must be a positive number of seconds or None, got {timeout!r}"
        )

    def made(f: Callable[..., Any]) -> Tool:
        if isinstance(f, Tool):
            if name is None and description is None and not options:
                return f
            made_tool = copy.copy(f)
            if name is not None:
                _check_name(name)
            made_tool.name = name or f.name
            made_tool.description = f.description if description is None else description
        else:
            made_tool = _from_function(f, name, description)
        for key, value in options.items():
            setattr(made_tool, key, value)
        return made_tool

    return made(fn) if fn is not None else made


def _from_function(fn: Callable[..., Any], given_name: str | None, description: str | None) -> Tool:
    source = annotated(fn)
    name = given_name or default_name(fn)
    if name == "<lambda>":
        raise ToolDefinitionError("a lambda has no name to call it by: tool(fn, name=...)")
    _check_name(name)
    summary, param_docs = parse_docstring(doc_of(fn, source))
    try:
        sig = inspect.signature(fn)
        hints = type_hints(source)
    except (TypeError, ValueError, NameError) as exc:
        raise ToolDefinitionError(f"tool {name!r}: cannot read the signature: {exc}") from exc
    params = list(sig.parameters.values())
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
            raise ToolDefinitionError(
                f"tool {name!r}: parameter {p.name!r} is {p.kind.description}; "
                "tools take named parameters only"
            )
        if p.name not in hints:
            # a lambda's cannot be annotated: "annotate it" is advice it cannot take
            fix = ("a lambda's cannot have one: write the tool as a def, or give its JSON "
                   "Schema (ToolRegistry.add_schema(name, description, schema, fn=...))"
                   if getattr(fn, "__name__", "") == "<lambda>"
                   else "annotate it so its JSON Schema can be generated")
            raise ToolDefinitionError(
                f"tool {name!r}: parameter {p.name!r} has no type annotation; {fix}"
            )
    single = params[0] if len(params) == 1 else None
    stated: dict[str, Any] = {}  # mutable defaults, which msgspec's schema does not state
    struct = hints[single.name] if single is not None else None
    if single is not None and (
        (isinstance(struct, type) and issubclass(struct, msgspec.Struct)) or is_model(struct)
    ):
        arg_type: Any = struct
        key = single.name

        def wrap(value: Any, _raw: dict[str, Any]) -> dict[str, Any]:
            return {key: value}
    else:
        # A name with two leading underscores cannot be a Struct field as it is:
        # ``__x`` is mangled in the class msgspec makes (it fails to define), and
        # ``__struct_fields__`` would hide what msgspec reads. Such a field gets a
        # plain attribute name, and keeps its own as the JSON name (``rename``).
        attrs = {p.name: p.name for p in params}
        for pname in attrs:
            if pname.startswith("__"):
                attr = pname.lstrip("_") + "_"
                while attr in attrs or attr in attrs.values():
                    attr += "_"
                attrs[pname] = attr
        fields: list[Any] = []
        for p in params:
            if p.default is p.empty:
                fields.append((attrs[p.name], hints[p.name]))
            else:
                default = defaults.field_default(p.default)
                fields.append((attrs[p.name], hints[p.name], default))
                if default is not p.default and defaults.in_json(p.default):  # copied per call
                    stated[p.name] = msgspec.to_builtins(p.default, str_keys=True)
        renamed = {attr: pname for pname, attr in attrs.items() if attr != pname}
        try:
            arg_type = msgspec.defstruct(
                f"{name}.arguments",
                fields,
                kw_only=True,
                forbid_unknown_fields=True,
                rename=renamed or None,
            )
        except TypeError as exc:
            raise ToolDefinitionError(f"tool {name!r}: {exc}") from exc

        def wrap(value: Any, _raw: dict[str, Any]) -> dict[str, Any]:
            return {pname: getattr(value, attr) for pname, attr in attrs.items()}

    parameters = closed_objects(_schema_of(name, arg_type))
    props = parameters.get("properties", {})
    for pname, value in stated.items():
        props[pname].setdefault("default", value)
    if arg_type is not struct:  # the parameters are the properties
        for p in params:
            text = annotated_text(hints[p.name])
            if text and "description" not in props[p.name]:
                props[p.name]["description"] = text
    for pname, text in param_docs.items():
        if pname in props and "description" not in props[pname]:
            props[pname]["description"] = text
    desc = description if description is not None else summary
    check = value_check(arg_type, closed=True)
    return FunctionTool(name, desc, parameters, fn, arg_type, wrap, check)


def _convert(arguments: dict[str, Any], arg_type: Any, lenient: bool) -> Any:
    """``arguments`` converted into ``arg_type``. Their keys come from JSON (or
    XML), where every key is a string: ``str_keys`` reads ``{"1": "a"}`` into a
    ``dict[int, str]``, which a strict conversion from a Python dict refuses, so
    that a tool taking one could never be called from a JSON dialect."""
    return msgspec.convert(
        arguments, arg_type, strict=not lenient, str_keys=True, dec_hook=_from_model
    )


def _from_model(tp: Any, obj: Any) -> Any:
    """msgspec's ``dec_hook``: a pydantic model is read by pydantic (see
    ``streamtools.pydantic_models``); other custom types are msgspec's to refuse."""
    if is_model(tp):
        return validated(tp, obj)
    if tp is object:  # any JSON value, which msgspec hands here once a hook is given
        return obj
    raise NotImplementedError


def _schema_of(name: str, arg_type: Any) -> dict[str, Any]:
    try:
        return schema_of(arg_type, described)
    except (TypeError, ValueError) as exc:
        detail = str(exc).replace("\n", " ")
        raise ToolDefinitionError(f"tool {name!r}: unsupported annotation: {detail}") from exc


def _is_async(fn: Callable[..., Any]) -> bool:
    call = getattr(fn, "__call__", None)  # noqa: B004 - callable objects with async __call__
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)


def _closest(name: str, names: list[str]) -> str | None:
    """The name ``name`` most likely misspells (compared without case), or None."""
    if not isinstance(name, str) or len(name) > 200:
        return None
    lowered = {n.lower(): n for n in names}
    found = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.8) or (
        # in OpenAI's namespace, ``functions.get_wether``, as the parser reads it
        difflib.get_close_matches(name.lower()[10:], list(lowered), n=1, cutoff=0.8)
        if name.startswith("functions.") else []
    )
    return lowered[found[0]] if found else None


def _check_name(name: str) -> None:
    if not _NAME.match(name):
        raise ToolDefinitionError(
            f"invalid tool name {name!r}: use letters, digits, '_', '-' and '.', "
            "not starting with '-' or '.', at most 128 characters"
        )


class ToolRegistry:
    """An ordered set of tools by name: the allowlist of a run (a ``ToolCatalog``)."""

    def __init__(self, tools: Iterable[Tool | Callable[..., Any]] = ()) -> None:
        if isinstance(tools, Tool) or (callable(tools) and not isinstance(tools, Iterable)):
            # one tool where a list is expected ("'Tool' object is not iterable"); a list,
            # as Agent SDKs take, for ``Agent``, ``HybridAgent`` and the registry alike
            name = getattr(tools, "name", None) or getattr(tools, "__name__", "tool")
            kind = "tool" if isinstance(tools, Tool) else "function"
            raise UsageError(
                f"tools is a list of tools or functions (or a ToolRegistry), got the single "
                f"{kind} {name!r}: pass [{name}]"
            )
        self._tools: dict[str, Tool] = {}
        for item in tools:
            self.add(item)

    # the added tool is returned, so ``@registry.add`` keeps a function's type as ``@tool``
    # does (a FunctionTool); the overlap mypy reports is ``tool``'s (see there)
    @overload
    def add(self, tool_or_fn: FunctionTool[_F]) -> FunctionTool[_F]: ...
    @overload
    def add(self, tool_or_fn: Tool) -> Tool: ...  # type: ignore[overload-overlap]
    @overload
    def add(self, tool_or_fn: _F) -> FunctionTool[_F]: ...
    def add(self, tool_or_fn: Tool | Callable[..., Any]) -> Tool:
        """Register a Tool or a function (decorated on the fly) and return the tool:
        as a decorator (``@registry.add``) it makes the function a ``FunctionTool``
        of its own signature, as ``@tool`` does. Names are unique."""
        item = tool_or_fn if isinstance(tool_or_fn, Tool) else tool(tool_or_fn)
        if item.name in self._tools and self._tools[item.name] is not item:
            raise ToolDefinitionError(f"a tool named {item.name!r} is already registered")
        self._tools[item.name] = item
        return item

    def add_schema(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any],
        fn: Callable[..., Any] | None = None,
    ) -> Tool:
        """Register a tool described by a JSON Schema (MCP, a proxy request…).
        ``fn`` receives the validated arguments as keyword arguments."""
        _check_name(name)
        if not isinstance(parameters, dict) or parameters.get("type", "object") != "object":
            raise ToolDefinitionError(f"tool {name!r}: parameters must be a JSON Schema object")
        params = {"type": "object", "properties": {}, **parameters}
        arg_type = type_from_schema(params)
        check = value_check(arg_type, closed=False)  # the schema says which objects are closed
        return self.add(Tool(name, description, params, fn, arg_type, arguments_from, check))

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def remove(self, name: str) -> Tool | None:
        """Take a tool out (a server withdrew it); return it, or None if there was
        none. To change a tool, remove it and add the new one: ``add`` refuses a
        second tool under a name in use. An agent sees the change at its next turn."""
        return self._tools.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._tools))

    def __len__(self) -> int:
        return len(self._tools)

    def specs(self) -> list[ToolSpec]:
        return [t.spec() for t in self._tools.values()]

    def schema(self, name: str) -> dict[str, Any] | None:
        found = self._tools.get(name)
        return None if found is None else found.parameters

    def check_arguments(
        self, name: str, arguments: dict[str, Any], lenient: bool = False
    ) -> str | None:
        """None when the call is valid, else the message that tells the model what to fix."""
        found = self._tools.get(name)
        if found is None:
            return self.unknown_tool_message(name)
        try:
            found.validate(arguments, lenient=lenient)
        except ToolArgumentsError as exc:
            return str(exc)
        return None

    def subset(self, names: Iterable[str]) -> ToolRegistry:
        """The named tools, in registry order; names not registered are ignored (a
        model may ask for tools that do not exist: the allowlist decides)."""
        wanted = set(names)
        return ToolRegistry(t for n, t in self._tools.items() if n in wanted)

    def unknown_tool_message(self, name: str) -> str:
        """What a call to an unknown tool is told: the allowed names, and the one
        it most likely meant when one is close (``Add``, ``get_wether``): among
        many tools a list alone leaves the model to spot its own typo."""
        if not self._tools:
            return f"Unknown tool `{name}`: no tools are available here. Answer without tools."
        allowed = ", ".join(f"`{n}`" for n in self._tools)
        meant = _closest(name, list(self._tools))
        hint = f" Did you mean `{meant}`?" if meant is not None else ""
        return f"Unknown tool `{name}`.{hint} The only tools you may call are: {allowed}."
