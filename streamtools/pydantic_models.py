"""Pydantic models as tool parameter types, without importing pydantic.

Theory of operation
-------------------
Tools are described and validated through msgspec (``streamtools.tools``), which
knows nothing of pydantic. A pydantic (v2) model is a custom type to msgspec,
and msgspec asks two hooks about custom types: ``schema_hook`` for the JSON
Schema, ``dec_hook`` to build the value. This module answers both for pydantic
models, wherever one appears (a parameter, a list of them, a field of a
Struct), so a tool may take the models an application already has:

* the schema is the model's own ``model_json_schema()``, its ``$defs`` lifted
  to the root of the tool's schema (``described``, for ``schema.schema_of``),
  where its ``#/$defs/...`` references point;
* the value is ``model_validate(obj)``, in pydantic's default (lax) mode, as the
  model's authors expect it to be read; a failure is a ``ValueError`` whose
  message lists each error's location and pydantic's words, which msgspec
  turns into its ``ValidationError`` at the parameter's path, and the tool
  into the message the model is shown.

A model is recognised by its methods (``model_json_schema``, ``model_validate``,
``model_fields``), so this module, like the rest of the core, imports nothing
beyond the standard library: pydantic is the application's dependency, not ours.
"""

from __future__ import annotations

from typing import Any

__all__ = ["described", "is_model", "validated"]


def is_model(tp: Any) -> bool:
    """Whether ``tp`` is a pydantic (v2) model class."""
    return (
        isinstance(tp, type)
        and callable(getattr(tp, "model_json_schema", None))
        and callable(getattr(tp, "model_validate", None))
        and hasattr(tp, "model_fields")
    )


def described(tp: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """``tp``'s JSON Schema and its ``$defs`` apart, if it is a pydantic model
    (``schema.schema_of``'s ``describe``), else None."""
    if not is_model(tp):
        return None
    schema = dict(tp.model_json_schema(ref_template="#/$defs/{model}"))
    return schema, schema.pop("$defs", {})


def validated(model: Any, obj: Any) -> Any:
    """``model.model_validate(obj)``; a ``ValueError`` listing the errors if it fails
    (pydantic's own text is long: a title line, the input repeated, a link)."""
    try:
        return model.model_validate(obj)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        errors = getattr(exc, "errors", None)
        if not callable(errors):
            raise
        parts = []
        for error in errors(include_url=False, include_input=False):
            where = ".".join(str(step) for step in error.get("loc", ()))
            parts.append(f"{where}: {error.get('msg', '')}" if where else error.get("msg", ""))
        raise ValueError("; ".join(parts) or str(exc)) from None
