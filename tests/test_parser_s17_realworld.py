"""More model output reported in bug reports against other streaming tool-call
parsers (vLLM, SGLang, llama.cpp, mlx-lm, Ollama, OpenHands, the AI SDK
middleware), beyond ``test_parser_s16_realworld``, as table cases for our
dialects: each run whole, a character at a time and at random cuts, the
invariants checked on every run (``run_checked``)."""

from __future__ import annotations

from typing import Any

import pytest
from parser_cases import Case, F, S, call, every_chunking, run_checked

from streamtools.events import CallEnd, CallError

TOOLS = ("search", "calc", "get_time", "get_weather", "bash", "read", "run_shell_command",
         "predict_x", "cronjob", "square_the_number", "str_replace_editor", "write_file")


class Catalog:
    """Tools with schemas, for the cases whose reading depends on a type."""

    schemas: dict[str, dict[str, Any]] = {
        "update_record": {"type": "object", "properties": {
            "id": {"type": "integer"},
            "metadata": {"anyOf": [{"type": "object"}, {"type": "null"}]},
            "label": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        }},
        "log_event": {"type": "object", "properties": {"day": {"type": "integer"}}},
    }

    def __contains__(self, name: object) -> bool:
        return name in self.schemas

    def __iter__(self) -> Any:
        return iter(self.schemas)

    def schema(self, name: str) -> dict[str, Any] | None:
        return self.schemas.get(name)

    def check_arguments(self, name: str, arguments: dict[str, Any]) -> str | None:
        day = arguments.get("day", 0)
        return None if isinstance(day, int) else "day must be an integer."


def _qwen(function: str, body: str) -> str:
    return f"<tool_call>\n<function={function}>\n{body}\n</function>\n</tool_call>"


GIT = "cd /home/gary/dev/opencode_rs && git status"
STATE = "/home/gary/dev/opencode_rs/.planning/STATE.md"

CASES: list[Case] = [
    # -- hermes ---------------------------------------------------------------------------
    # a literal </tool_call> in a string argument (vllm-project/vllm#45167: the call dropped)
    Case("closing-tag-in-a-string", "hermes",
         '<tool_call>\n{"name": "search", "arguments": {"q": "a </tool_call> b"}}\n</tool_call>',
         [call(S, q="a </tool_call> b"), F], TOOLS),
    # an unbalanced brace in a string (vllm-project/vllm#21544: partial JSON parsing failed)
    Case("unbalanced-brace-in-a-string", "hermes",
         '<tool_call>\n{"name": "run_shell_command", "arguments": {"command": '
         '"mkdir -p test/{test1,test2"}}\n</tool_call>',
         [call("run_shell_command", command="mkdir -p test/{test1,test2"), F], TOOLS),
    # numbers, an empty string and more, streamed (vllm-project/vllm#10395: the arguments
    # came out twice, run together)
    Case("mixed-arguments-streamed", "hermes",
         '<tool_call>\n{"name": "predict_x", "arguments": {"wd": 23, "sd": 0.8, "injection": '
         '"ZSJB39", "module_id": "M62121G9142"}}\n</tool_call>',
         [call("predict_x", wd=23, sd=0.8, injection="ZSJB39", module_id="M62121G9142"), F],
         TOOLS),
    # a call after one with empty arguments (vllm-project/vllm#47901: its arguments lost)
    Case("call-after-an-empty-one", "hermes",
         '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>\n<tool_call>\n'
         '{"name": "search", "arguments": {"q": "x"}}\n</tool_call>',
         [call("get_time"), ("text", "\n"), call(S, q="x"), F], TOOLS),
    # a call drafted inside <think>, then made after it: one call, the draft reasoning
    # (PrimeIntellect-ai/renderers#80 ran it twice; DESIGN §2.9: reasoning is not parsed
    # for calls, so one written only there, vllm-project/vllm#39056, stays reasoning)
    Case("call-drafted-in-reasoning", "hermes",
         '<think>\nI will call <tool_call>\n{"name": "search", "arguments": {"q": "draft"}}\n'
         '</tool_call>\n</think>\n<tool_call>\n{"name": "search", "arguments": {"q": "x"}}\n'
         "</tool_call>",
         [("think", '\nI will call <tool_call>\n{"name": "search", "arguments": '
                        '{"q": "draft"}}\n</tool_call>\n'), ("text", "\n"), call(S, q="x"), F],
         TOOLS),
    # -- the Qwen3-Coder form ---------------------------------------------------------------
    # text before and after, no newlines (sgl-project/sglang#40739: the text after dropped)
    Case("qwen-text-around-the-call", "hermes",
         "before<tool_call><function=get_weather><parameter=city>Paris</parameter></function>"
         "</tool_call>after",
         [("text", "before"), call("get_weather", city="Paris"), ("text", "after"), F], TOOLS),
    Case("qwen-text-around-the-call-am", "am_xml",
         "before<tool_call><function=get_weather><parameter=city>Paris</parameter></function>"
         "</tool_call>after",
         [("text", "before"), call("get_weather", city="Paris"), ("text", "after"), F], TOOLS),
    # Qwen3-Coder-Next's blocks back to back (pwilkin/llama.cpp#9: failed to parse)
    Case("qwen-blocks-back-to-back", "hermes",
         _qwen("bash", f"<parameter=command>\n{GIT}\n</parameter>\n<parameter=description>\n"
                       "Check git status\n</parameter>")
         + "\n" + _qwen("read", f"<parameter=filePath>\n{STATE}\n</parameter>"),
         [call("bash", command=GIT, description="Check git status"), ("text", "\n"),
          call("read", filePath=STATE), F], TOOLS),
    # <parameter=NAME=VALUE</parameter> (QwenLM/Qwen3-Coder#457, OpenHands: "a frequent issue")
    Case("qwen-parameter-value-joined-by-equals", "hermes",
         _qwen("str_replace_editor", "<parameter=command=create</parameter>\n"
                                     "<parameter=path>\n/a.py\n</parameter>"),
         [call("str_replace_editor", command="create", path="/a.py"), F], TOOLS),
    Case("qwen-parameter-value-joined-by-equals-am", "am_xml",
         _qwen("str_replace_editor", "<parameter=path=/a.py</parameter>"),
         [call("str_replace_editor", path="/a.py"), F], TOOLS),
    # Python's None for a nullable object (Qwen3.5's template writes it: vllm-project/vllm#38885)
    Case("qwen-python-none-for-null", "hermes",
         _qwen("update_record", "<parameter=id>\n42\n</parameter>\n<parameter=metadata>\nNone\n"
                                "</parameter>"),
         [call("update_record", id=42, metadata=None), F], extra={"catalog": True}),
    # (a nullable string keeps the text: "None" may be meant, an enum's value)
    Case("qwen-none-text-for-a-nullable-string", "hermes",
         _qwen("update_record", "<parameter=label>\nNone\n</parameter>"),
         [call("update_record", label="None"), F], extra={"catalog": True}),
    # a non-numeric integer (ml-explore/mlx-lm#1330: the whole call dropped): an error
    # the model can act on, with the raw text
    Case("qwen-non-numeric-integer", "hermes",
         _qwen("log_event", "<parameter=day>\n2026-01-15\n</parameter>"),
         [("error", "log_event", "invalid_arguments"), F], extra={"catalog": True}),
    # -- am_xml -------------------------------------------------------------------------------
    # hermes' JSON form in a Qwen model's tags (gpustack/gpustack#2660, Qwen3-Coder): it
    # was CallError(malformed), telling the model to write Qwen3-Coder's form
    Case("hermes-json-in-qwen-tags-am", "am_xml",
         'Squaring.\n<tool_call>\n{"name": "square_the_number", "arguments": {"input_num": '
         "1024}}\n</tool_call>",
         [("text", "Squaring.\n"), call("square_the_number", input_num=1024), F], TOOLS),
    Case("hermes-json-array-in-qwen-tags-am", "am_xml",
         '<tool_call>[{"name": "get_time", "arguments": {}}, {"name": "search", '
         '"arguments": {"q": "x"}}]</tool_call>',
         [call("get_time"), call(S, q="x"), F], TOOLS),
    Case("hermes-json-in-qwen-tags-am-stop", "am_xml",
         '<tool_call>\n{"name": "search", "arguments": {"q": "x"}}',
         [call(S, q="x"), F], TOOLS, finish_reason="stop"),
    # ... in a Markdown fence inside the tags, as Qwen2.5-Coder writes it in hermes
    # (test_parser_s16_realworld's fence-inside-the-tags)
    Case("hermes-json-fenced-in-qwen-tags-am", "am_xml",
         '<tool_call>\n```json\n{"name": "search", "arguments": {"q": "x"}}\n```\n'
         "</tool_call>", [call(S, q="x"), F], TOOLS),
    # an attribute besides the name (DeepSeek's DSML: NousResearch/hermes-agent#8965)
    Case("parameter-with-another-attribute", "am_xml",
         '<am:tool_call name="cronjob"><parameter name="action" string="true">list</parameter>'
         "</am:tool_call>",
         [call("cronjob", action="list"), F], TOOLS),
    # HTML in a string value, unescaped (minpeter/ai-sdk-tool-call-middleware#67)
    Case("html-in-a-string-value", "am_xml",
         '<am:tool_call name="write_file"><path>a.html</path><content>\n<html>\n  <head>'
         "<title>My Page</title></head>\n  <body>Hello world!</body>\n</html>\n</content>"
         "</am:tool_call>",
         [call("write_file", path="a.html", content="<html>\n  <head><title>My Page</title>"
               "</head>\n  <body>Hello world!</body>\n</html>"), F], TOOLS),
    # -- inline_json: Llama 3.x -----------------------------------------------------------------
    # Llama 3.3's bare call with "type": "function" first (waybarrios/vllm-mlx#580: it
    # leaked into the content)
    Case("llama-3.3-type-first", "inline_json",
         '{"type": "function", "name": "read", "parameters": {"path": "foo.py"}}',
         [call("read", path="foo.py"), F], TOOLS),
    # parallel calls after <|python_tag|> separated by a bare ";" (ai-dynamo/dynamo#9536,
    # Llama 3.3 70B) or a newline (vllm-project/vllm#49923: the second call corrupted)
    Case("llama-calls-separated-by-a-bare-semicolon", "inline_json",
         '<|python_tag|>{"name":"get_weather","arguments":{"location":"NYC"}};'
         '{"name":"get_time","arguments":{"timezone":"EST"}}',
         [call("get_weather", location="NYC"), ("text", ";"), call("get_time", timezone="EST"),
          F], TOOLS),
    Case("llama-calls-separated-by-a-newline", "inline_json",
         '{"name": "search", "parameters": {"q": "x"}}\n{"name": "get_time", "parameters": {}}',
         [call(S, q="x"), ("text", "\n"), call("get_time"), F], TOOLS),
    # braces in prose after a call stay text, the call stands (vllm-project/vllm#49923: the
    # call was dropped with them)
    Case("llama-call-then-braces-in-prose", "inline_json",
         '{"name": "search", "parameters": {"query": "x"}} I used {searchTool} for this; '
         'the args were {"query": "x"}.',
         [call(S, query="x"), ("text", ' I used {searchTool} for this; the args were '
                                       '{"query": "x"}.'), F], TOOLS),
    # -- the other JSON dialects: a call after one with empty arguments (vllm#47901) --------
    Case("call-after-an-empty-one-action", "json_action",
         '```json action\n{"tool": "get_time", "parameters": {}}\n```\n```json action\n'
         '{"tool": "search", "parameters": {"q": "x"}}\n```',
         [call("get_time"), ("text", "\n"), call(S, q="x"), F], TOOLS),
    Case("call-after-an-empty-one-inline", "inline_json",
         '{"tool": "get_time", "arguments": {}}\n{"tool": "search", "arguments": {"q": "x"}}',
         [call("get_time"), ("text", "\n"), call(S, q="x"), F], TOOLS),
    Case("call-after-an-empty-one-command", "command",
         '@tool get_time {}\n@tool search {"q": "x"}',
         [call("get_time"), ("text", "\n"), call(S, q="x"), F], TOOLS),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_reported_model_output(case: Case) -> None:
    tools: Any = Catalog() if case.extra.get("catalog") else list(case.tools)
    every_chunking(case.dialect, case.text, tools, case.expect, case.stop, case.finish_reason)


def test_the_hermes_form_in_am_xml_keeps_its_raw_text_and_names_am_xml_s_form() -> None:
    ok = '<tool_call>\n{"name": "search", "arguments": {"q": "x"}}\n</tool_call>'
    (end,) = [e for e in run_checked("am_xml", [ok], TOOLS) if isinstance(e, CallEnd)]
    assert end.raw == ok
    bad = '<tool_call>{"name": "search", "arguments": {"q": "x" </tool_call>'
    (error,) = [e for e in run_checked("am_xml", [bad], TOOLS) if isinstance(e, CallError)]
    assert error.reason == "invalid_json" and error.raw == bad
    assert '<am:tool_call name="TOOL">' in error.message


@pytest.mark.parametrize("tag", [
    "<parameter=command=a<b</parameter>",  # a "<" in the value: not that form
    "<parameter=command=a>b</parameter>",  # a ">" in it: the tag ends there
])
def test_a_joined_parameter_that_is_not_that_form_stays_out_of_place(tag: str) -> None:
    text = _qwen("str_replace_editor", tag)
    events = run_checked("hermes", [text], TOOLS, finish_reason="stop")
    (error,) = [e for e in events if isinstance(e, CallError)]
    assert error.reason == "malformed" and error.raw == text
