"""Prompt size per dialect: full tool definitions vs hybrid one-line summaries.

Run: ``python bench/prompts.py``. Prints, for 5, 50 and 500 generated tools,
the characters of the system prompt with full definitions (protocol and
few-shot example included) and of the hybrid summary block (name + one line per
tool), per dialect. Characters, not tokens: no tokenizer is assumed; divide by
~4 for a rough token count with English-heavy BPE vocabularies.
"""

from __future__ import annotations

from typing import Any

from streamtools.model import ToolSpec
from streamtools.prompts import RENDERERS

SIZES = (5, 50, 500)
_KINDS: list[dict[str, Any]] = [
    {"type": "string", "description": "Free text to look for."},
    {"type": "integer", "minimum": 1, "default": 10, "description": "How many results."},
    {"type": "boolean", "default": False, "description": "Include archived items."},
    {"type": "array", "items": {"type": "string"}, "description": "Tags to filter by."},
    {"enum": ["asc", "desc"], "default": "desc", "description": "Sort order."},
]


def generated_tools(n: int) -> list[ToolSpec]:
    """``n`` realistic tools: dotted names, a two-sentence description, 2–5 parameters."""
    tools = []
    for i in range(n):
        count = 2 + i % 4
        props = {f"param_{j}": _KINDS[(i + j) % len(_KINDS)] for j in range(count)}
        tools.append(
            ToolSpec(
                name=f"svc{i % 7}.v1.action_{i}",
                description=(
                    f"Perform action number {i} on the service's records. "
                    "Returns the matching records as JSON, newest first."
                ),
                parameters={
                    "type": "object",
                    "properties": props,
                    "required": ["param_0"],
                },
            )
        )
    return tools


def main() -> None:
    header = ["dialect"] + [f"{n} {kind}" for n in SIZES for kind in ("full", "summary")]
    rows = []
    for name, renderer in RENDERERS.items():
        row = [name]
        for n in SIZES:
            tools = generated_tools(n)
            row.append(f"{len(renderer.system_prompt(tools)):,}")
            row.append(f"{len(renderer.tool_summaries(tools)):,}")
        rows.append(row)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    print("System prompt size in characters (full: definitions + protocol + example;")
    print("summary: the hybrid one-line-per-tool block)")
    print()
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("-|-".join("-" * w for w in widths))
    for row in rows:
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        print(" | ".join(cells))


if __name__ == "__main__":
    main()
