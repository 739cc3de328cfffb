"""A tool parameter's Python default as the default of its argument field.

``tools`` makes a msgspec Struct of a function's parameters; each default
becomes a field default here (``field_default``). One value serves every call
only when no call can change it (``immutable``); any other default is copied
per call, never shared between calls, nor between calls running at the same
time. A default JSON cannot state as itself (``in_json``: a sentinel
``object()``, NaN) is given as is by a factory, so that the schema leaves it
out.

Core module: standard library and msgspec only.
"""

from __future__ import annotations

import copy
import datetime
import decimal
import enum
import uuid
from typing import Any

import msgspec

from streamtools.results import holds_non_finite

__all__ = ["field_default", "immutable", "in_json"]


def field_default(value: Any) -> Any:
    """A parameter's default as a field default. msgspec refuses non-empty mutable
    defaults: they are copied per call instead, as is any other mutable default
    (a dataclass instance). A default JSON cannot state (a
    sentinel ``object()``, a function, NaN or infinity, which msgspec would write
    as ``null``) is given as is, each call, by a factory: the schema then leaves
    it out (the parameter stays optional) rather than failing to be made or
    stating a wrong default."""
    try:
        msgspec.defstruct("probe", [("x", Any, value)])
    except TypeError:
        return msgspec.field(default_factory=lambda: copy.deepcopy(value))
    if not in_json(value):
        return msgspec.field(default_factory=lambda: value)
    if not immutable(value):
        # msgspec takes a mutable object it does not know as such (a dataclass
        # instance) as is: one instance for every call, which a call that changes
        # it would hand on to the next, and to calls running at the same time
        return msgspec.field(default_factory=lambda: copy.deepcopy(value))
    return value


_IMMUTABLE = (
    str, bytes, int, float, complex, type(None), enum.Enum, datetime.date, datetime.time,
    datetime.timedelta, decimal.Decimal, uuid.UUID,
)


def immutable(value: Any) -> bool:
    """Whether one ``value`` can serve every call: a scalar, a frozen Struct, or
    a tuple or frozenset of such."""
    if isinstance(value, _IMMUTABLE):
        return True
    if isinstance(value, msgspec.Struct):
        return bool(value.__struct_config__.frozen) and all(
            immutable(getattr(value, f)) for f in value.__struct_fields__
        )
    if isinstance(value, tuple | frozenset):
        return all(immutable(item) for item in value)
    return False


def in_json(value: Any) -> bool:
    """Whether ``value`` is written in JSON as itself (as msgspec writes a schema's
    ``default``): not an object msgspec cannot encode, no NaN or infinity in it."""
    try:
        plain = msgspec.to_builtins(value, str_keys=True)
    except (TypeError, ValueError, OverflowError):
        return False
    return not holds_non_finite(plain)
