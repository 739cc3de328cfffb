"""Per-parameter descriptions from a function's docstring, for ``@tool``.

The first paragraph is the tool's description. An ``Args:`` (also
``Arguments``, ``Parameters``, ``Params``) section gives each parameter's: Google
style (``name (type): text``, continued on deeper-indented lines) or NumPy style
(the section title over a ``---`` rule, then ``name : type`` lines with the text
indented below). The section ends at a blank line (Google), at the next titled
section (NumPy), or where the indentation falls back.

Core module: standard library only.
"""

from __future__ import annotations

import re

__all__ = ["parse_docstring"]

_SECTION = re.compile(r"^(Args|Arguments|Parameters|Params)\s*:?\s*$")
_NUMPY_RULE = re.compile(r"^-{3,}\s*$")
_GOOGLE_ITEM = re.compile(r"^(\*{0,2}\w+)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")
_NUMPY_ITEM = re.compile(r"^(\w+)\s*(?::.*)?$")


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """First paragraph (joined into one line) and per-parameter descriptions."""
    lines = doc.splitlines()
    first: list[str] = []
    for line in lines:
        if not line.strip() or _SECTION.match(line.strip()):
            break
        first.append(line.strip())
    params: dict[str, str] = {}
    for i, line in enumerate(lines):
        if not _SECTION.match(line.strip()):
            continue
        numpy = i + 1 < len(lines) and bool(_NUMPY_RULE.match(lines[i + 1].strip()))
        body = lines[i + (2 if numpy else 1) :]
        base = None
        current = None
        for n, raw in enumerate(body):
            if not raw.strip():
                if numpy:
                    continue
                break
            if numpy and n + 1 < len(body) and _NUMPY_RULE.match(body[n + 1].strip()):
                break  # the next NumPy section ("Returns" over a rule) begins
            indent = len(raw) - len(raw.lstrip())
            if base is None:
                base = indent
            if indent < base or (not numpy and indent == 0 and raw.strip().endswith(":")):
                break
            text = raw.strip()
            item = (_NUMPY_ITEM if numpy else _GOOGLE_ITEM).match(text)
            if indent == base and item:
                current = item.group(1).lstrip("*")
                params[current] = "" if numpy else item.group(3).strip()
            elif current is not None:
                params[current] = (params[current] + " " + text).strip()
        break
    return " ".join(first), {k: v for k, v in params.items() if v}
