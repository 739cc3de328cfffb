"""Hypothesis properties for this session's new readings, as
``test_parser_s16b_properties`` holds them for the last one's: ``hermes``' JSON
form inside ``<tool_call>`` in ``am_xml`` (``am_xml_wrap.WrappedJsonBody``) and
the Qwen3-Coder form's ``<parameter=NAME=VALUE</parameter>``. Over generated
calls, whole, at random cuts and a character at a time (chunking invariance),
with ``run_checked``'s invariants after every delta, the arguments the text
means; and the same text cut off anywhere gives the same events every way."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given
from hypothesis import strategies as st
from test_parser_s16b_properties import SETTINGS, ends, runs

TOOLS = ["search", "calc", "write_file"]
NAME = st.sampled_from(["q", "path", "n", "flag"])
VALUE = st.one_of(st.text(max_size=8), st.integers(-5, 500), st.booleans(), st.none(),
                  st.lists(st.integers(0, 9), max_size=2))
ARGS = st.dictionaries(NAME, VALUE, max_size=3)
PROSE = st.sampled_from(["", "Let me check.\n", "ok "])
SPACE = st.sampled_from(["", "\n", " \n"])


def _hermes(name: str, args: dict[str, Any], key: str, sp: str) -> str:
    return (f'<tool_call>{sp}{{"name": "{name}", "{key}": '
            f"{msgspec.json.encode(args).decode()}}}{sp}</tool_call>")


def test_am_xml_reads_hermes_json_in_the_tags_at_any_cut() -> None:
    @SETTINGS
    @given(st.lists(st.tuples(PROSE, st.sampled_from(TOOLS), ARGS,
                              st.sampled_from(["arguments", "parameters"]), SPACE),
                    min_size=1, max_size=3),
           st.lists(st.integers(0, 10_000), max_size=20))
    def prop(calls: list[tuple[str, str, dict[str, Any], str, str]], points: list[int]) -> None:
        text = "".join(p + _hermes(n, a, k, sp) for p, n, a, k, sp in calls) + " done"
        events = runs("am_xml", text, points, TOOLS)
        assert ends(events) == [(n, a) for _, n, a, _, _ in calls]

    prop()


def test_am_xml_hermes_json_cut_off_anywhere_holds_the_invariants() -> None:
    @SETTINGS
    @given(st.sampled_from(TOOLS), ARGS, SPACE, st.integers(0, 10_000),
           st.sampled_from([None, "stop"]), st.lists(st.integers(0, 10_000), max_size=20))
    def prop(name: str, args: dict[str, Any], sp: str, end: int, finish: str | None,
             points: list[int]) -> None:
        text = _hermes(name, args, "arguments", sp)
        runs("am_xml", text[: end % (len(text) + 1)], points, TOOLS, finish)

    prop()


WORDS = st.from_regex(r"[A-Za-z0-9_./=-]{0,12}", fullmatch=True)


def test_qwen_joined_parameters_are_read_at_any_cut() -> None:
    @SETTINGS
    @given(st.dictionaries(NAME, WORDS, min_size=1, max_size=3), st.lists(st.booleans(),
           min_size=3, max_size=3), st.sampled_from(["hermes", "am_xml"]),
           st.lists(st.integers(0, 10_000), max_size=20))
    def prop(args: dict[str, str], joined: list[bool], dialect: str, points: list[int]) -> None:
        params = "".join(
            f"<parameter={k}={v}</parameter>\n" if j else f"<parameter={k}>\n{v}\n</parameter>\n"
            for (k, v), j in zip(args.items(), joined, strict=False)
        )
        text = f"<tool_call>\n<function=search>\n{params}</function>\n</tool_call>"
        events = runs(dialect, text, points, TOOLS)
        assert ends(events) == [("search", args)]

    prop()
