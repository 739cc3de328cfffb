"""Model output reported in bug reports against other streaming tool-call
parsers (vLLM, SGLang, Ollama, llama.cpp, mlx-lm, oMLX, dynamo), as table
cases for our dialects: each run whole, a character at a time and at random
cuts, the invariants checked on every run (``run_checked``)."""

from __future__ import annotations

from typing import Any

import pytest
from parser_cases import Case, F, S, call, every_chunking, run_checked
from test_parser import SchemaCatalog

from streamtools.events import ArgsDelta, CallEnd, CallError

TOOLS = ("search", "calc", "get_weather", "get_time", "get_db_config", "write_file",
         "ThinQ_Connect", "get_current_weather")


def _qwen(function: str, body: str, close: str = "</function>\n</tool_call>") -> str:
    return f"<tool_call>\n<function={function}>\n{body}\n{close}"


CASES: list[Case] = [
    # -- hermes ---------------------------------------------------------------------------
    # Granite 4 writes the arguments as a JSON string (vllm-project/vllm#54964)
    Case("granite-arguments-as-a-string", "hermes",
         '<tool_call>{"name": "get_db_config", "arguments": "{\\n  \\"param\\": '
         '\\"max_connections\\"\\n}"}</tool_call>',
         [call("get_db_config", param="max_connections"), F], TOOLS),
    # a tool without parameters, streamed (vllm-project/vllm#28806: its {} was dropped)
    Case("parameterless", "hermes", '<tool_call>\n{"name": "get_time", "arguments": {}}\n'
         "</tool_call>", [call("get_time"), F], TOOLS),
    Case("parameterless-no-arguments-key", "hermes",
         '<tool_call>\n{"name": "get_time"}\n</tool_call>', [call("get_time"), F], TOOLS),
    # several calls in one block (vllm-project/vllm#32638, qwen3-next)
    Case("two-objects-in-one-block", "hermes",
         '<tool_call>\n{"name": "get_time", "arguments": {}}\n'
         '{"name": "search", "arguments": {"q": "x"}}\n</tool_call>',
         [call("get_time"), call(S, q="x"), F], TOOLS),
    Case("an-array-in-one-block", "hermes",
         '<tool_call>[{"name": "get_time", "arguments": {}}, '
         '{"name": "search", "arguments": {"q": "x"}}]</tool_call>',
         [call("get_time"), call(S, q="x"), F], TOOLS),
    # Llama's key (raullenchai/Rapid-MLX#703)
    Case("parameters-key", "hermes",
         '<tool_call>{"name": "search", "parameters": {"q": "x"}}</tool_call>',
         [call(S, q="x"), F], TOOLS),
    # a chat template's end token inside a string argument is content
    # (NAVER-Cloud-HyperCLOVA-X/hcx-vllm-plugin#5: the call was dropped)
    Case("end-token-in-a-string", "hermes",
         '<tool_call>{"name": "search", "arguments": {"q": "a <|im_end|> b"}}</tool_call>',
         [call(S, q="a <|im_end|> b"), F], TOOLS),
    # the provider cut the stream at </tool_call>, its stop string (vllm-project/vllm#13459)
    Case("closing-tag-removed", "hermes",
         '<tool_call>{"name": "search", "arguments": {"q": "x"}}',
         [call(S, q="x"), F], TOOLS, finish_reason="stop"),
    # "arguments": null for a tool without parameters (sgl-project/sglang#37921 wedged on it)
    Case("arguments-null", "hermes", '<tool_call>{"name": "get_time", "arguments": null}'
         "</tool_call>", [call("get_time"), F], TOOLS),
    # OpenAI's shape inside the tags, its arguments a JSON string
    Case("openai-function-object", "hermes",
         '<tool_call>{"type": "function", "function": {"name": "search", "arguments": '
         '"{\\"q\\": \\"x\\"}"}}</tool_call>', [call(S, q="x"), F], TOOLS),
    # a Markdown fence inside the tags (Qwen2.5-Coder)
    Case("fence-inside-the-tags", "hermes",
         '<tool_call>\n```json\n{"name": "search", "arguments": {"q": "x"}}\n```\n'
         "</tool_call>", [call(S, q="x"), F], TOOLS),
    # two blocks in one delta (speculative decoding; sgl-project/sglang#37634 lost the 2nd)
    Case("two-blocks-back-to-back", "hermes",
         '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
         '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>',
         [call("get_weather", city="Paris"), call("get_weather", city="Oslo"), F], TOOLS),
    # a brace too many after the complete object: markup (test_parser_s18_json_slips)
    Case("a-brace-too-many", "hermes",
         '<tool_call>{"name": "search", "arguments": {"q": "x"}}}</tool_call>',
         [call(S, q="x"), F], TOOLS),
    # a raw newline in a JSON string (Qwen3-Coder, small Llamas; ml-explore/mlx-lm#1712
    # reads it with strict=False): the text the model meant, the ArgsDelta stream
    # carrying it escaped (run_checked decodes their concatenation), raw as written
    Case("raw-newline-in-a-string", "hermes",
         '<tool_call>{"name": "write_file", "arguments": {"content": "a\nb"}}</tool_call>',
         [call("write_file", content="a\nb"), F], TOOLS),
    # -- the Qwen3-Coder form, in hermes and am_xml ---------------------------------------
    # the last value's </parameter> left out before </function> (vllm-project/vllm#57699:
    # the value was lost)
    Case("qwen-value-closed-by-the-function", "hermes",
         _qwen("ThinQ_Connect", '<parameter=body>\n{"airConJobMode": "AIR_CLEAN", '
               '"windStrength": "HIGH", "monitoringEnabled": true}'),
         [call("ThinQ_Connect", body={"airConJobMode": "AIR_CLEAN", "windStrength": "HIGH",
                                      "monitoringEnabled": True}), F], TOOLS),
    Case("qwen-value-closed-by-the-function-am", "am_xml",
         _qwen("search", "<parameter=q>\ncats"), [call(S, q="cats"), F], TOOLS),
    Case("qwen-value-closed-by-the-function-stop", "hermes",
         _qwen("search", "<parameter=q>\ncats", "</function>\n"), [call(S, q="cats"), F], TOOLS,
         finish_reason="stop"),
    # cut by the token limit there: nothing says the value was over
    Case("qwen-value-closed-by-the-function-length", "hermes",
         _qwen("search", "<parameter=q>\ncats", "</function>\n"),
         [("error", S, "unterminated"), ("finish", "length", None)], TOOLS,
         finish_reason="length"),
    # the function's end inside a value that goes on is content (jundot/omlx#2588)
    Case("qwen-value-holds-the-closing-tags", "hermes",
         _qwen("write_file", "<parameter=path>\nnotes.xml\n</parameter>\n<parameter=content>\n"
               "<function=demo>\n</function>\n</tool_call>\n</parameter>"),
         [call("write_file", path="notes.xml",
               content="<function=demo>\n</function>\n</tool_call>"), F], TOOLS),
    Case("qwen-value-holds-the-closing-tags-then-more", "hermes",
         _qwen("write_file", "<parameter=content>\nx\n</function>\n</tool_call>\nmore\n"
               "</parameter>"),
         [call("write_file", content="x\n</function>\n</tool_call>\nmore"), F], TOOLS),
    # a value's </parameter> left out before the next parameter (vllm-project/vllm#37829:
    # the next parameter was swallowed into the value)
    Case("qwen-value-closed-by-the-next-parameter", "hermes",
         _qwen("get_current_weather", "<parameter=city>\nDallas\n<parameter=state>\nTX\n"
               "</parameter>"),
         [call("get_current_weather", city="Dallas", state="TX"), F], TOOLS),
    Case("qwen-value-closed-by-the-next-parameter-am", "am_xml",
         _qwen("calc", "<parameter=a>\n1\n<parameter=b>\n2\n</parameter>"),
         [call("calc", a=1, b=2), F], extra={"catalog": True}),
    Case("qwen-empty-value-closed-by-the-next-parameter", "hermes",
         _qwen("calc", "<parameter=a>\n<parameter=b>\n2\n</parameter>"),
         [call("calc", a="", b="2"), F]),  # (no schema: text)
    # not the next parameter: one the schema does not declare, one given already, a tag
    # in the middle of a line
    Case("qwen-undeclared-tag-in-a-value", "hermes",
         _qwen(S, "<parameter=q>\na\n<parameter=zzz>\nb\n</parameter>"),
         [call(S, q="a\n<parameter=zzz>\nb"), F], extra={"catalog": True}),
    Case("qwen-given-tag-in-a-value", "hermes",
         _qwen(S, "<parameter=q>\na\n<parameter=q>\nb\n</parameter>"),
         [call(S, q="a\n<parameter=q>\nb"), F], extra={"catalog": True}),
    Case("qwen-mid-line-tag-in-a-value", "hermes",
         _qwen("calc", "<parameter=a>\n1 <parameter=b>2\n</parameter>"),
         [("error", "calc", "invalid_arguments"), F], extra={"catalog": True}),
    # the arguments as one JSON object: <function=NAME>{…}</function> (Llama 3.1's function
    # form, mudler/LocalAI#4671), <function>NAME</function> then the object (Gemma 3,
    # Qwen3.6: madroidmaq/mlx-omni-server#126); a </function> in a string is content
    Case("function-tag-json-arguments", "hermes",
         '<tool_call>\n<function=search>{"q": "a</function>"}</function>\n</tool_call>',
         [call(S, q="a</function>"), F], TOOLS),
    Case("function-tag-json-arguments-am", "am_xml",
         '<tool_call><function=search>{"q": "x"}</function></tool_call>',
         [call(S, q="x"), F], TOOLS),
    Case("function-element-name-then-json", "hermes",
         '<tool_call>\n<function>search</function>\n{"q": "lsof -i :10240"}\n</tool_call>',
         [call(S, q="lsof -i :10240"), F], TOOLS),
    Case("function-element-name-then-json-stop", "am_xml",
         '<tool_call><function>search</function>{"q": "x"}', [call(S, q="x"), F], TOOLS,
         finish_reason="stop"),
    Case("function-tag-invalid-json", "hermes",
         '<tool_call><function=search>{"q": x}</function></tool_call> ok',
         [("error", S, "invalid_json"), ("text", " ok"), F], TOOLS),
    Case("function-tag-json-then-parameters", "hermes",
         '<tool_call><function=search>{"q": "x"}<parameter=q>y</parameter></function>'
         "</tool_call>", [("error", S, "malformed"), F], TOOLS),
    Case("function-element-without-a-name", "hermes",
         "<tool_call><function> </function>{}</tool_call> ok",
         [("error", None, "malformed"), ("text", " ok"), F], TOOLS),
    # a tag naming no parameter (vllm-project/vllm#55495: leaked into the arguments)
    Case("qwen-parameter-tag-without-a-name", "hermes",
         _qwen(S, "<parameter=\nx\n</parameter>"), [("error", S, "malformed"), F], TOOLS),
    # an empty value of a string parameter is the empty string (sgl-project/sglang#36835)
    Case("qwen-empty-value", "hermes", _qwen(S, "<parameter=q></parameter>"),
         [call(S, q=""), F], TOOLS),
    # -- am_xml's <parameter name=…> form ---------------------------------------------------
    # closed with </NAME> (the name attribute's value), the next parameter swallowed
    # (anthropics/claude-code#83088)
    Case("am-parameter-closed-by-its-name", "am_xml",
         '<am:tool_call name="write_file"><parameter name="content">long text</content>\n'
         '<parameter name="path">a.txt</parameter></am:tool_call>',
         [call("write_file", content="long text", path="a.txt"), F], TOOLS),
    Case("am-parameter-closed-by-its-name-last", "am_xml",
         '<am:tool_call name="search"><parameter name="q">cats</q>\n</am:tool_call>',
         [call(S, q="cats"), F], TOOLS),
    # </parameter> left out before the next parameter's tag, in either element form
    Case("am-parameter-closed-by-the-next", "am_xml",
         '<am:tool_call name="calc"><parameter name="a">\n1\n<parameter name="b">2'
         "</parameter></am:tool_call>", [call("calc", a=1, b=2), F], extra={"catalog": True}),
    Case("am-element-closed-by-the-next-parameter", "am_xml",
         '<am:tool_call name="calc"><a>\n1\n<parameter name="b">2</parameter></am:tool_call>',
         [call("calc", a=1, b=2), F], extra={"catalog": True}),
    # content after all: </NAME> that more text follows, a tag the schema does not declare
    Case("am-closing-name-in-a-value", "am_xml",
         '<am:tool_call name="search"><parameter name="q">see </q> tag</parameter>'
         "</am:tool_call>", [call(S, q="see </q> tag"), F], TOOLS),
    Case("am-undeclared-parameter-tag-in-a-value", "am_xml",
         '<am:tool_call name="search"><parameter name="q">\na\n<parameter name="zzz">b'
         "</parameter></am:tool_call>",
         [call(S, q='a\n<parameter name="zzz">b'), F], extra={"catalog": True}),
    # -- json_object: the reply object in a Markdown fence (langchain-ai/langchain#23297,
    # microsoft/essex-toolkit#437, redis/agent-memory-server#236), prose before it
    Case("object-in-a-json-fence", "json_object",
         '```json\n{"thought": "look", "action": {"tool": "search", "args": {"q": "x"}}}\n```',
         [("think", "look"), call(S, q="x"), F], TOOLS),
    Case("object-in-a-bare-fence", "json_object",
         '```\n{"thought": "t", "final": {"content": "hi"}}\n```',
         [("think", "t"), ("text", "hi"), F], TOOLS),
    Case("prose-then-a-fenced-object", "json_object",
         'Let me analyze this...\n\n```json\n{"thought": "t", "final": {"content": "hi"}}\n```',
         [("text", "Let me analyze this..."), ("think", "t"), ("text", "hi"), F], TOOLS),
    # -- inline_json -----------------------------------------------------------------------
    # calls separated by ";" (Llama 3.x; ai-dynamo/dynamo#9536) or by a space (Ollama,
    # sgomez/ollama-ai-provider#11), in a Markdown fence (ollama/ollama#13519)
    Case("calls-separated-by-a-semicolon", "inline_json",
         '{"tool":"get_weather","arguments":{"location":"NYC"}};'
         '{"tool":"get_time","arguments":{}}',
         [call("get_weather", location="NYC"), ("text", ";"), call("get_time"), F], TOOLS),
    Case("calls-separated-by-a-space", "inline_json",
         '{\n  "tool": "get_weather",\n  "arguments": {"location": "SF"}\n} {\n  "tool": '
         '"get_time",\n  "arguments": {}\n}',
         [call("get_weather", location="SF"), ("text", " "), call("get_time"), F], TOOLS),
    Case("call-in-a-fence", "inline_json",
         '```json\n{"tool": "search", "arguments": {"q": "x"}}\n```',
         [("text", "```json\n"), call(S, q="x"), ("text", "\n```"), F], TOOLS),
    # JSON that names no tool of ours stays text (rapid-mlx's "Alice" false match)
    Case("json-with-a-name-key-in-prose", "inline_json", 'Here is a user: {"name": "Alice"}',
         [("text", 'Here is a user: {"name": "Alice"}'), F], TOOLS),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_reported_model_output(case: Case) -> None:
    tools: Any = SchemaCatalog() if case.extra.get("catalog") else list(case.tools)
    every_chunking(case.dialect, case.text, tools, case.expect, case.stop, case.finish_reason)


def test_a_raw_newline_streams_escaped_and_raw_stays_as_written() -> None:
    text = '<tool_call>{"name": "write_file", "arguments": {"content": "a\nb"}}</tool_call>'
    events = run_checked("hermes", [text], TOOLS)
    (end,) = [e for e in events if isinstance(e, CallEnd)]
    assert end.arguments == {"content": "a\nb"} and end.raw == text
    args = "".join(e.delta for e in events if isinstance(e, ArgsDelta))
    assert args == '{"content": "a\\nb"}'


def test_a_closing_tag_with_an_escaped_slash_is_named_in_the_error() -> None:
    """GPT models writing the ``<invoke>`` form escape ``/`` as JSON does
    (kdeps/kdeps#872): ``<\\/q>`` closes nothing, and the error says so."""
    text = '<am:tool_call name="search"><q>x<\\/q><\\/am:tool_call>'
    events = run_checked("am_xml", [text], TOOLS, finish_reason="stop")
    (error,) = [e for e in events if isinstance(e, CallError)]
    assert error.reason == "unterminated" and error.raw == text
    assert "A closing tag has no backslash: </q>, not <\\/q>." in error.message
