"""What real models write when asked for a dialect, and the parser's answer.

Each case is a spelling models (and the users of other tool-call parsers) are
known to produce: accepted where the intent is unambiguous and nothing is lost,
a ``CallError`` that says what to fix where accepting could run something the
model did not mean. Run like the main table (tests/parser_cases.py): whole, one
character at a time, at random cuts and with empty deltas, every run checked for
conservation, append-only arguments, hold-back and the fast path.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from parser_cases import Case, F, S, call, every_chunking, run_checked, summary

# the stand-in ToolRegistry, with schemas (search: q string; calc: a number, b integer)
from test_parser import SchemaCatalog

from streamtools.events import ArgsDelta, CallEnd, CallError, CallStart
from streamtools.parser import Parser, calls
from streamtools.prompts import special_tokens

MODEL_CASES: list[Case] = [
    # -- the arguments under another key ------------------------------------------
    # Anthropic's tool_use shape ("input") and LangChain's ("args"): read as the
    # arguments; before, hermes ignored both and ran the tool with {}
    Case("hermes-args-as-input", "hermes",
         '<tool_call>\n{"name": "search", "input": {"q": "x"}}\n</tool_call>',
         [call(S, q="x"), F]),
    Case("hermes-args-as-args", "hermes",
         '<tool_call>{"name": "search", "args": {"q": "x"}}</tool_call>',
         [call(S, q="x"), F]),
    Case("hermes-function-parameters", "hermes",
         '<tool_call>{"function": {"name": "search", "parameters": {"q": "x"}}}</tool_call>',
         [call(S, q="x"), F]),
    Case("action-args-as-input", "json_action",
         '```json action\n{"tool": "search", "input": {"q": "x"}}\n```',
         [call(S, q="x"), F]),
    Case("inline-args-as-input", "inline_json",
         'ok {"tool": "search", "input": {"q": "x"}} done',
         [("text", "ok "), call(S, q="x"), ("text", " done"), F]),
    Case("object-args-as-input", "json_object",
         '{"thought": "t", "action": {"tool": "search", "input": {"q": "x"}}}',
         [("think", "t"), call(S, q="x"), F]),
    # an object under a key no dialect reads, and no arguments: the call would run
    # without them (it did, with {}); it is an error naming the key
    Case("hermes-args-under-unread-key", "hermes",
         '<tool_call>{"name": "search", "options": {"q": "x"}}</tool_call>',
         [("error", S, "malformed"), F]),
    Case("action-args-under-unread-key", "json_action",
         '```json action\n{"tool": "search", "kwargs": {"q": "x"}}\n```',
         [("error", S, "malformed"), F]),
    Case("object-args-under-unread-key", "json_object",
         '{"action": {"tool": "search", "params": {"q": "x"}}}',
         [("error", S, "malformed"), F]),
    # other objects next to the arguments are still ignored, as other members are
    Case("hermes-other-object-and-args", "hermes",
         '<tool_call>{"name": "search", "meta": {"a": 1}, "arguments": {"q": "x"}}</tool_call>',
         [call(S, q="x"), F]),
    Case("hermes-other-object-in-envelope-and-args", "hermes",
         '<tool_call>{"type": "function", "function": {"name": "search", "arguments": '
         '{"q": "x"}}, "extra": {"a": 1}}</tool_call>',
         [call(S, q="x"), F]),
    # two argument objects: one would be dropped; they were sent as one broken text
    # ('trailing characters (byte 11)')
    Case("hermes-args-twice", "hermes",
         '<tool_call>{"name": "search", "arguments": {"q": "x"}, "input": {"q": "y"}}'
         "</tool_call>",
         [("error", S, "malformed"), F]),
    Case("inline-args-twice", "inline_json",
         '{"tool": "search", "arguments": {"q": "x"}, "args": "{}"}',
         [("error", S, "malformed"), F]),
    # -- json_object: a reply with a thought and nothing the dialect reads ----------
    # (the call was lost without a word: the thought counted as the answer)
    Case("object-flat-call", "json_object",
         '{"thought": "t", "tool": "search", "args": {"q": "x"}}',
         [("think", "t"), ("error", None, "malformed"), F]),
    Case("object-langchain-action", "json_object",
         '{"thought": "t", "action": "search", "action_input": {"q": "x"}}',
         [("think", "t"), ("error", None, "malformed"), F]),
    Case("object-final-answer-key", "json_object",
         '{"thought": "t", "final_answer": "done"}',
         [("think", "t"), ("error", None, "malformed"), F]),
    Case("object-empty-final", "json_object", '{"thought": "t", "final": ""}',
         [("think", "t"), F]),
    # -- hermes: the object in a Markdown fence inside the tags ---------------------
    # (Qwen2.5-Coder and others; it was "<tool_call> must contain one JSON object")
    Case("hermes-fenced-json", "hermes",
         'a <tool_call>\n```json\n{"name": "search", "arguments": {"q": "x"}}\n```\n</tool_call> b',
         [("text", "a "), call(S, q="x"), ("text", " b"), F]),
    Case("hermes-fenced-plain-crlf", "hermes",
         '<tool_call>\r\n``` JSON\r\n{"name": "search", "arguments": {}}```</tool_call>',
         [call(S), F]),
    Case("hermes-fenced-stop-removed-marker", "hermes",
         '<tool_call>```json\n{"name": "search", "arguments": {"q": "x"}}\n```\n',
         [call(S, q="x"), F], finish_reason="stop"),
    Case("hermes-fenced-two", "hermes",
         '<tool_call>```json\n{"name": "search", "arguments": {}}\n```</tool_call>\n'
         '<tool_call>\n```\n{"name": "calc", "arguments": {"a": 1}}\n```\n</tool_call>',
         [call(S), ("text", "\n"), call("calc", a=1), F]),
    # the fence left open: the closing tag still ends the call
    Case("hermes-fence-not-closed", "hermes",
         '<tool_call>```json\n{"name": "search", "arguments": {}}\n</tool_call>',
         [call(S), F]),
    # a fence of another language, a fence that never opened, a second fence: not a call
    Case("hermes-fence-other-language", "hermes",
         '<tool_call>```python\nsearch(q="x")\n```</tool_call>ok',
         [("error", None, "malformed"), ("text", "ok"), F]),
    Case("hermes-closing-fence-alone", "hermes",
         '<tool_call>{"name": "search", "arguments": {}}\n```\n</tool_call>',
         [("error", S, "malformed"), F]),
    Case("hermes-fence-twice", "hermes",
         '<tool_call>```json\n```json\n{"name": "search", "arguments": {}}```</tool_call>',
         [("error", None, "malformed"), F]),
    # -- several calls in one block --------------------------------------------------
    # a JSON array of calls (Llama 3, Qwen, many fine-tunes) and objects one after
    # another: each is a call, ending where the next begins; both were one error
    Case("hermes-array-of-calls", "hermes",
         '<tool_call>\n[{"name": "search", "arguments": {"q": "x"}}, '
         '{"name": "calc", "arguments": {"a": 1}}]\n</tool_call> ok',
         [call(S, q="x"), call("calc", a=1), ("text", " ok"), F]),
    Case("hermes-objects-in-one-block", "hermes",
         '<tool_call>\n{"name": "search", "arguments": {"q": "x"}}\n'
         '{"name": "calc", "arguments": {"a": 1}}{"name": "search", "arguments": {}}\n</tool_call>',
         [call(S, q="x"), call("calc", a=1), call(S), F]),
    Case("hermes-fenced-array-stop-removed-marker", "hermes",
         '<tool_call>\n```json\n[\n  {"name": "search", "arguments": {"q": "x"}},\n'
         '  {"name": "calc", "arguments": {"a": 1}}\n]\n```\n',
         [call(S, q="x"), call("calc", a=1), F], finish_reason="stop"),
    Case("hermes-array-of-one", "hermes",
         '<tool_call>[{"name": "search", "arguments": {}}]</tool_call>', [call(S), F]),
    # what is not a call in the array is an error of its own; the calls before it stand
    Case("hermes-array-bad-element", "hermes",
         '<tool_call>[{"name": "search", "arguments": {}}, 5]</tool_call>x',
         [call(S), ("error", None, "invalid_json"), ("text", "x"), F]),
    Case("hermes-array-one-unknown", "hermes",
         '<tool_call>[{"name": "rm", "arguments": {}}, {"name": "calc", "arguments": {}}]'
         "</tool_call>",
         [("error", "rm", "unknown_tool"), call("calc"), F]),
    Case("hermes-array-cut-after-comma", "hermes",
         '<tool_call>[{"name": "search", "arguments": {}},',
         [call(S), ("error", None, "unterminated"), F], finish_reason="stop"),
    Case("hermes-empty-array", "hermes", "<tool_call>[]</tool_call>",
         [("error", None, "invalid_json"), F]),
    Case("hermes-array-in-array", "hermes",
         '<tool_call>[[{"name": "search", "arguments": {}}]]</tool_call>',
         [("error", None, "invalid_json"), F]),
    Case("action-array-of-calls", "json_action",
         '```json action\n[{"tool": "search", "parameters": {"q": "x"}}, '
         '{"tool": "calc", "parameters": {"a": 1}}]\n```',
         [call(S, q="x"), call("calc", a=1), F]),
    Case("action-objects-in-one-block", "json_action",
         '```json action\n{"tool": "search", "parameters": {"q": "x"}}\n'
         '{"tool": "calc", "parameters": {"a": 1}}\n```\nDone.',
         [call(S, q="x"), call("calc", a=1), ("text", "\nDone."), F]),
    # -- am_xml: the parameter elements in a <parameters> wrapper -------------------
    # (Anthropic's old <invoke><parameters>…</parameters> format): with a schema that
    # names no such parameter it is markup; it was a string parameter "parameters"
    # holding the elements' text, and the tool ran without its arguments
    Case("am-parameters-wrapper", "am_xml",
         '<am:tool_call name="search">\n<parameters>\n<q>x</q>\n</parameters>\n</am:tool_call>',
         [call(S, q="x"), F], extra={"catalog": True}),
    Case("am-arguments-wrapper-typed", "am_xml",
         '<am:tool_call name="calc"><arguments><a>1</a><b>2</b></arguments></am:tool_call>',
         [call("calc", a=1, b=2), F], extra={"catalog": True}),
    Case("am-wrapper-not-closed", "am_xml",
         '<am:tool_call name="search"><parameters><q>x</q></am:tool_call>',
         [call(S, q="x"), F], extra={"catalog": True}),
    # text in the wrapper is outside the parameter elements, as anywhere in a call
    Case("am-wrapper-with-text", "am_xml",
         '<am:tool_call name="search"><parameters>x</parameters></am:tool_call>',
         [("error", S, "malformed"), F], extra={"catalog": True}),
    # not first, or without a schema (a tool may take a "parameters" value): a value
    Case("am-wrapper-after-a-parameter", "am_xml",
         '<am:tool_call name="calc"><a>1</a><args>2</args></am:tool_call>',
         [call("calc", a=1, args="2"), F], extra={"catalog": True}),
    Case("am-wrapper-without-schema", "am_xml",
         '<am:tool_call name="search"><parameters><q>x</q></parameters></am:tool_call>',
         [call(S, parameters="<q>x</q>"), F]),
    # -- json_action: the fence lines models write for a call ------------------------
    # (they were an ordinary code fence: the call was text, never run)
    Case("action-fence-underscore", "json_action",
         '```json_action\n{"tool": "search", "parameters": {"q": "x"}}\n```',
         [call(S, q="x"), F]),
    Case("action-fence-hyphen", "json_action",
         '```json-action\r\n{"tool": "search", "parameters": {"q": "x"}}\r\n```',
         [call(S, q="x"), F]),
    Case("action-fence-action", "json_action",
         'Sure.\n```action\n{"tool": "search", "parameters": {"q": "x"}}\n```\nok',
         [("text", "Sure.\n"), call(S, q="x"), ("text", "\nok"), F]),
    Case("action-fence-trailing-space", "json_action",
         '```json action \n{"tool": "search", "parameters": {"q": "x"}}\n```',
         [call(S, q="x"), F]),
    Case("action-fence-trailing-spaces-tab", "json_action",
         '```json action \t  \r\n{"tool": "search"}\n```', [call(S), F]),
    Case("action-fence-upper-case", "json_action",
         '```JSON action\n{"tool": "search"}\n```\n```Json Action\n{"tool": "calc"}\n```'
         '\n```json ACTION\n{"tool": "search"}\n```\n```ACTION\n{"tool": "calc"}\n```',
         [call(S), ("text", "\n"), call("calc"), ("text", "\n"), call(S), ("text", "\n"),
          call("calc"), F]),
    # a variant right after the fence that ended a call opens the next, as the taught one
    Case("action-fence-variant-after-open-block", "json_action",
         '```action\n{"tool": "search"}\n```JSON_action\n{"tool": "calc"}\n```',
         [call(S), call("calc"), F]),
    # not a call's fence line: text, as before (a plain json fence shows an example)
    Case("action-fence-not-a-call", "json_action",
         '```JSON\n{"tool": "search"}\n```\n```actions\n{}\n```\n```asm\nx\n```\n'
         '```json action     \n{}\n```\n```Json_Actions\n{}\n```',
         [("text", '```JSON\n{"tool": "search"}\n```\n```actions\n{}\n```\n```asm\nx\n```\n'
           '```json action     \n{}\n```\n```Json_Actions\n{}\n```'), F]),
    Case("action-fence-line-cut", "json_action", "x ```json_act", [("text", "x ```json_act"), F]),
    # -- the end-of-turn tokens of other chat templates, where a closing marker is due:
    # layout, as <|im_end|> is (they were text the call could not hold: malformed)
    Case("hermes-gemma4-end-of-turn", "hermes",
         '<tool_call>\n{"name": "search", "arguments": {"q": "x"}}\n<turn|>',
         [call(S, q="x"), F], finish_reason="stop"),
    Case("action-deepseek-end-of-sentence", "json_action",
         '```json action\n{"tool": "search", "parameters": {"q": "x"}}\n'
         "<\uff5cend\u2581of\u2581sentence\uff5c>",
         [call(S, q="x"), F], finish_reason="stop"),
    Case("am-gemma4-turn-before-close", "am_xml",
         '<am:tool_call name="search"><q>x</q>\n<turn|>\n</am:tool_call>', [call(S, q="x"), F]),
    Case("am-deepseek-token-ends-the-turn", "am_xml",
         '<am:tool_call name="search">\n<q>x</q>\n<\uff5cAssistant\uff5c>',
         [call(S, q="x"), F], finish_reason="stop"),
    # still prose after it, or a tag of another shape: the call is malformed, as before
    Case("hermes-gemma4-token-then-prose", "hermes",
         '<tool_call>{"name": "search", "arguments": {}}<turn|>Done.',
         [("error", S, "malformed"), F]),
    Case("hermes-html-tag-after-object", "hermes",
         '<tool_call>{"name": "search", "arguments": {}}<b>x</b></tool_call>',
         [("error", S, "malformed"), F]),
    # -- command: the name as a function call's, or quoted ---------------------------
    # a quoted name is the name (it was an unknown tool '"search"')
    Case("command-quoted-name", "command", '@tool "search" {"q": "x"}\nok',
         [call(S, q="x"), ("text", "\nok"), F]),
    Case("command-single-quoted-name", "command", "@tool 'search'", [call(S), F],
         finish_reason="stop"),
    # parentheses are an error naming the real tool (it was an unknown tool 'search('),
    # the whole line its raw text, the closing parenthesis not left as text
    Case("command-parenthesised-args", "command", '@tool search({"q": "x"})\nok',
         [("error", S, "malformed"), ("text", "\nok"), F]),
    Case("command-parenthesised-args-after-space", "command", '@tool search ({"q": "x"})',
         [("error", S, "malformed"), F]),
    Case("command-unbalanced-quote", "command", '@tool "search {"q": "x"}',
         [("error", S, "malformed"), F]),
    # a tool named so is that tool (a renderer offers such names: its calls read back)
    Case("command-known-name-with-parenthesis", "command", '@tool f( {"a": 1}',
         [call("f(", a=1), F], tools=("f(", "f")),
    Case("command-known-quoted-name", "command", '@tool "q" {}',
         [call('"q"'), F], tools=('"q"', "q")),
    # -- arguments that are JSON but no object ------------------------------------------
    # one error with the whole object, nothing run: it was cut at the "[", the "["
    # and "]}" left as text and the inner object run as a call the model never wrote
    Case("inline-args-a-list-of-calls", "inline_json",
         '{"tool": "search", "arguments": [{"tool": "search", "arguments": {}}]} ok',
         [("error", S, "invalid_json"), ("text", " ok"), F]),
    Case("inline-args-a-number", "inline_json", '{"tool": "search", "arguments": 5} ok',
         [("error", S, "invalid_json"), ("text", " ok"), F]),
    # a later JSON mistake still cuts the call there
    Case("inline-args-a-broken-list", "inline_json", '{"tool": "search", "arguments": [1,}',
         [("error", S, "invalid_json"), ("text", "}"), F]),
    # in a block of several, the next call stands (it went into the error's raw)
    Case("hermes-args-a-list-then-a-call", "hermes",
         '<tool_call>[{"name": "search", "arguments": [1]}, '
         '{"name": "search", "arguments": {"q": "x"}}]</tool_call>',
         [("error", S, "invalid_json"), call(S, q="x"), F]),
    Case("object-args-a-list", "json_object", '{"action": {"tool": "search", "args": [1]}}',
         [("error", S, "invalid_json"), F]),
    # -- am_xml: an opening tag broken off, and the call begun again -----------------------
    # the broken tag fails alone and the new call stands: it was one call, the broken
    # tag in its raw, ``<am:tool_call`` read as an attribute and its name the broken tag's
    Case("am-broken-tag-then-call", "am_xml",
         '<am:tool_call\n<am:tool_call name="search"><q>x</q></am:tool_call> ok',
         [("error", None, "unterminated"), call(S, q="x"), ("text", " ok"), F]),
    Case("am-broken-named-tag-then-call", "am_xml",
         '<am:tool_call name="calc" <am:tool_call name="search"><q>x</q></am:tool_call>',
         [("error", None, "unterminated"), call(S, q="x"), F]),
    Case("am-broken-tag-then-nameless-call", "am_xml",
         "<am:tool_call <am:tool_call></am:tool_call>",
         [("error", None, "unterminated"), ("error", None, "malformed"), F]),
    # -- json_action: <think> right after the closing fence ----------------------------
    # the fence's backtick quotes nothing: reasoning, as after a space (it was text)
    Case("action-think-right-after-fence", "json_action",
         '```json action\n{"tool": "search", "parameters": {}}\n```<think>r</think>ok',
         [call(S), ("think", "r"), ("text", "ok"), F]),
    # a backtick of the model's own after it still quotes the tag
    Case("action-quoted-think-after-fence", "json_action",
         '```json action\n{"tool": "search", "parameters": {}}\n```\n`<think>`',
         [call(S), ("text", "\n`<think>`"), F]),
    # and prose's fence before a tag is still prose's
    Case("action-prose-fence-then-think", "json_action", "```<think>x",
         [("text", "```<think>x"), F]),
    # a "<" in the tag that begins no call is the tag's, as before
    Case("am-lt-in-tag", "am_xml",
         '<am:tool_call name="search" <am:tool_calls><q>x</q></am:tool_call>',
         [call(S, q="x"), F]),
    # -- am_xml: a parameter given twice --------------------------------------------------
    # (a list as repeated elements): the arguments held the last value only, the first
    # silently lost; it is an error that says to write one JSON array
    Case("am-parameter-twice", "am_xml",
         '<am:tool_call name="search"><q>a</q><q>b</q></am:tool_call> ok',
         [("error", S, "malformed"), ("text", " ok"), F]),
    Case("am-parameter-twice-other-form", "am_xml",
         '<am:tool_call name="search">\n<q>a</q>\n<parameter name="q">b</parameter>\n'
         "</am:tool_call>", [("error", S, "malformed"), F]),
    Case("am-parameter-twice-typed", "am_xml",
         '<am:tool_call name="calc"><a>1</a><b>2</b><a>3</a></am:tool_call>',
         [("error", "calc", "malformed"), F], extra={"catalog": True}),
    # -- am_xml: parameters as attributes of the call's tag ------------------------------
    # (the way the tool definitions write theirs): the ones the schema declares are
    # read, typed by it; they were ignored and the tool ran without them
    Case("am-parameter-as-attribute", "am_xml", '<am:tool_call name="search" q="cats"/>',
         [call(S, q="cats"), F], extra={"catalog": True}),
    Case("am-parameters-as-attributes-typed", "am_xml",
         "<am:tool_call name='calc' a=\"1.5\" b=2 id=\"c1\"></am:tool_call>",
         [call("calc", a=1.5, b=2), F], extra={"catalog": True}),
    Case("am-parameter-as-attribute-entity", "am_xml",
         '<am:tool_call q="a &amp; b" name="search">\n</am:tool_call>',
         [call(S, q="a & b"), F], extra={"catalog": True}),
    Case("am-parameter-as-attribute-and-element", "am_xml",
         '<am:tool_call name="search" q="cats"><q>dogs</q></am:tool_call>',
         [("error", S, "malformed"), F], extra={"catalog": True}),
    # -- am_xml: a self-closing parameter element with a value attribute -----------------
    # (after the definitions' <parameter name=… type=…/>): it was the empty string
    Case("am-parameter-value-attribute", "am_xml",
         '<am:tool_call name="search"><parameter name="q" value="cats &amp; dogs"/>'
         "</am:tool_call>", [call(S, q="cats & dogs"), F]),
    Case("am-element-value-attribute-typed", "am_xml",
         '<am:tool_call name="calc">\n<a value="1.5"/>\n<b value=2 />\n</am:tool_call>',
         [call("calc", a=1.5, b=2), F], extra={"catalog": True}),
    Case("am-empty-element-still-empty", "am_xml",
         '<am:tool_call name="search"><q/></am:tool_call>', [call(S, q=""), F]),
    # -- am_xml: <parameter=NAME>, Qwen3-Coder's spelling (a stray tag: malformed) --------
    Case("am-qwen-parameter", "am_xml",
         '<am:tool_call name="search">\n<parameter=q>\ncats\n</parameter>\n</am:tool_call>',
         [call(S, q="cats"), F]),
    Case("am-qwen-parameter-typed", "am_xml",
         '<am:tool_call name="calc"><parameter=a>1.5</parameter><parameter="b">2</parameter>'
         "</am:tool_call>", [call("calc", a=1.5, b=2), F], extra={"catalog": True}),
    # -- hermes: Qwen3-Coder's <function=NAME><parameter=P> form inside the tags ------------
    # (it was malformed, a repair turn every time): read as am_xml reads element values,
    # typed by the schema, the newline after <parameter=P> and before </parameter> layout
    Case("hermes-qwen-call", "hermes",
         "ok <tool_call>\n<function=search>\n<parameter=q>\ncats\n</parameter>\n</function>\n"
         "</tool_call> done", [("text", "ok "), call(S, q="cats"), ("text", " done"), F],
         extra={"catalog": True}),
    Case("hermes-qwen-typed", "hermes",
         "<tool_call>\n<function=calc>\n<parameter=a>\n1.5\n</parameter>\n<parameter=b>\n2\n"
         "</parameter>\n</function>\n</tool_call>", [call("calc", a=1.5, b=2), F],
         extra={"catalog": True}),
    Case("hermes-qwen-untyped-names-only", "hermes",
         '<tool_call><function=search><parameter=q>5</parameter><parameter=o>{"k": [1]}'
         "</parameter></function></tool_call>", [call(S, q="5", o={"k": [1]}), F]),
    # the value is the text as written: markup and entities in it are content, only
    # </parameter> ends it; more newlines than the layout ones stay, CRLF layout too
    Case("hermes-qwen-value-as-written", "hermes",
         "<tool_call>\n<function=search>\n<parameter=q>\n\nif a < b && c:\n  x = '</tool_call>"
         " &amp; <b>\"'\n\n</parameter>\n</function>\n</tool_call>",
         [call(S, q="\nif a < b && c:\n  x = '</tool_call> &amp; <b>\"'\n"), F],
         extra={"catalog": True}),
    Case("hermes-qwen-crlf", "hermes",
         "<tool_call>\r\n<function=search>\r\n<parameter=q>\r\nx\r\n</parameter>\r\n"
         "</function>\r\n</tool_call>", [call(S, q="x"), F], extra={"catalog": True}),
    Case("hermes-qwen-no-parameters", "hermes",
         "<tool_call>\n<function=search>\n</function>\n</tool_call>", [call(S), F]),
    Case("hermes-qwen-dotted-quoted-name", "hermes",
         '<tool_call><function="kom.memory.v1.search_memory"><parameter=q>x</parameter>'
         "</function></tool_call>", [call("kom.memory.v1.search_memory", q="x"), F]),
    # the provider removed </tool_call> as a stop string; a template's end token
    Case("hermes-qwen-stop-removed-marker", "hermes",
         "<tool_call>\n<function=search>\n<parameter=q>\nx\n</parameter>\n</function>\n",
         [call(S, q="x"), F], finish_reason="stop"),
    Case("hermes-qwen-end-token", "hermes",
         "<tool_call>\n<function=search>\n<parameter=q>x</parameter>\n</function>\n<|im_end|>",
         [call(S, q="x"), F], finish_reason="stop"),
    # a stutter before it, several calls in one block, one block after another
    Case("hermes-qwen-stutter", "hermes",
         "<tool_call>\n<tool_call>\n<function=search>\n<parameter=q>x</parameter>\n</function>"
         "\n</tool_call>", [call(S, q="x"), F]),
    Case("hermes-qwen-two-in-one-block", "hermes",
         "<tool_call>\n<function=search>\n<parameter=q>x</parameter>\n</function>\n"
         "<function=calc>\n<parameter=a>1</parameter>\n</function>\n</tool_call>",
         [call(S, q="x"), call("calc", a=1), F], extra={"catalog": True}),
    Case("hermes-qwen-two-in-one-block-cut", "hermes",
         "<tool_call><function=search></function>\n<function=search><parameter=q>x",
         [call(S), ("error", S, "unterminated"), F]),
    Case("hermes-qwen-then-json", "hermes",
         "<tool_call>\n<function=search>\n<parameter=q>x</parameter>\n</function>\n"
         '</tool_call>\n<tool_call>\n{"name": "calc", "arguments": {"a": 1}}\n</tool_call>',
         [call(S, q="x"), ("text", "\n"), call("calc", a=1), F], extra={"catalog": True}),
    # broken forms: a CallError with the raw text, as the JSON form's
    Case("hermes-qwen-unknown-tool", "hermes",
         "<tool_call>\n<function=nope>\n<parameter=q>x</parameter>\n</function>\n</tool_call>",
         [("error", "nope", "unknown_tool"), F]),
    Case("hermes-qwen-function-not-closed", "hermes",
         "<tool_call>\n<function=search>\n<parameter=q>\nx\n</parameter>\n</tool_call> ok",
         [("error", S, "malformed"), ("text", " ok"), F]),
    Case("hermes-qwen-parameter-outside-function", "hermes",
         "<tool_call>\n<parameter=q>\nx\n</parameter>\n</tool_call> ok",
         [("error", None, "malformed"), ("text", " ok"), F]),
    Case("hermes-qwen-parameter-after-function", "hermes",
         "<tool_call><function=search></function><parameter=q>x</parameter></tool_call>",
         [("error", S, "malformed"), F]),
    Case("hermes-qwen-text-between-parameters", "hermes",
         "<tool_call><function=search><parameter=q>x</parameter> y </function></tool_call>",
         [("error", S, "malformed"), F]),
    Case("hermes-qwen-parameter-twice", "hermes",
         "<tool_call><function=search><parameter=q>x</parameter><parameter=q>y</parameter>"
         "</function></tool_call>", [("error", S, "malformed"), F]),
    Case("hermes-qwen-other-tag", "hermes",
         "<tool_call>\n<name>search</name>\n</tool_call> ok",
         [("error", None, "malformed"), ("text", " ok"), F]),
    Case("hermes-qwen-next-call-before-close", "hermes",
         "<tool_call><function=search><parameter=q>x</parameter>\n<tool_call>"
         "<function=search></function></tool_call>",
         [("error", S, "unterminated"), call(S), F]),
    Case("hermes-qwen-cut-in-value", "hermes",
         "<tool_call>\n<function=search>\n<parameter=q>\nca", [("error", S, "unterminated"), F],
         finish_reason="stop"),
    Case("hermes-qwen-cut-in-function-tag", "hermes", "<tool_call>\n<function=sea",
         [("error", None, "unterminated"), F], finish_reason="stop"),
    # prose on a line of its own where </tool_call> is due: the model left the tag out
    # and went on writing; the call is complete at </function>, the prose is text, a
    # closing tag after it too (it was malformed: tests/test_parser_s18b_prose_after_call)
    Case("hermes-qwen-text-after-function-at-end", "hermes",
         "<tool_call><function=search><parameter=q>x</parameter></function>\nDone.",
         [call(S, q="x"), ("text", "Done."), F], finish_reason="stop"),
    Case("hermes-qwen-text-after-function", "hermes",
         "<tool_call><function=search><parameter=q>x</parameter></function>\nDone. Now the"
         " answer.</tool_call>",
         [call(S, q="x"), ("text", "Done. Now the answer.</tool_call>"), F]),
    Case("hermes-qwen-text-after-function-same-line", "hermes",
         "<tool_call><function=search><parameter=q>x</parameter></function> Done.</tool_call>",
         [("error", S, "malformed"), F]),
    # -- am_xml: Qwen3-Coder's native form, which its models write out of habit ------------
    # (it was text: the call lost without a word); read as hermes reads it
    Case("am-qwen-call", "am_xml",
         "ok <tool_call>\n<function=search>\n<parameter=q>\ncats\n</parameter>\n</function>\n"
         "</tool_call> done", [("text", "ok "), call(S, q="cats"), ("text", " done"), F],
         extra={"catalog": True}),
    Case("am-qwen-typed-as-written", "am_xml",
         "<tool_call>\n<function=calc>\n<parameter=a>\n1.5\n</parameter>\n<parameter=b>2"
         "</parameter>\n</function>\n</tool_call>", [call("calc", a=1.5, b=2), F],
         extra={"catalog": True}),
    Case("am-qwen-value-as-written", "am_xml",
         "<tool_call><function=search><parameter=q>a < b && '</am:tool_call>' &amp;"
         "</parameter></function></tool_call>",
         [call(S, q="a < b && '</am:tool_call>' &amp;"), F], extra={"catalog": True}),
    Case("am-qwen-stutter-end-token", "am_xml",
         "<tool_call><tool_call>\n<function=search>\n<parameter=q>x</parameter>\n</function>"
         "\n<|im_end|>", [call(S, q="x"), F], finish_reason="stop"),
    Case("am-qwen-two-in-one-block-then-own-form", "am_xml",
         "<tool_call><function=search></function><function=calc><parameter=a>1</parameter>"
         '</function></tool_call><am:tool_call name="search"><q>y</q></am:tool_call>',
         [call(S), call("calc", a=1), call(S, q="y"), F], extra={"catalog": True}),
    Case("am-own-form-then-qwen", "am_xml",
         '<am:tool_call name="search"><q>y</q></am:tool_call>\n<tool_call><function=search>'
         "<parameter=q>x</parameter></function></tool_call>",
         [call(S, q="y"), ("text", "\n"), call(S, q="x"), F]),
    # am_xml's own call in those tags (Qwen's templates wrap calls in them): the tags are
    # the call's markup (they were text, around the call; now they would fail it)
    Case("am-own-form-in-qwen-tags", "am_xml",
         '<tool_call>\n<am:tool_call name="search"><q>x</q></am:tool_call>\n</tool_call >\nok',
         [call(S, q="x"), ("text", "\nok"), F]),
    Case("am-own-form-in-qwen-tags-unclosed", "am_xml",
         '<tool_call><am:tool_call name="search"/>\nok <tool_call><am:tool_call name="search">'
         "<q>y</q></am:tool_call>\n</tool_", [call(S), ("text", "ok "), call(S, q="y"), F]),
    Case("am-own-form-in-qwen-tags-cut", "am_xml", '<tool_call>\n<tool_call><am:tool_call'
         ' name="search"><q>x', [("error", S, "unterminated"), F]),
    # quoted in backticks it is prose, as every marker is
    Case("am-qwen-quoted-tag", "am_xml", "Qwen writes `<tool_call>` blocks.",
         [("text", "Qwen writes `<tool_call>` blocks."), F]),
    # hermes' JSON form, which Qwen models' templates teach, is read in am_xml too
    Case("am-qwen-json-body", "am_xml",
         '<tool_call>{"name": "search", "arguments": {"q": "x"}}</tool_call> ok',
         [call(S, q="x"), ("text", " ok"), F]),
    # broken forms: a CallError, never text
    Case("am-qwen-unknown-tool", "am_xml",
         "<tool_call><function=nope><parameter=q>x</parameter></function></tool_call>",
         [("error", "nope", "unknown_tool"), F]),
    Case("am-qwen-function-not-closed", "am_xml",
         "<tool_call><function=search><parameter=q>x</parameter></tool_call> ok",
         [("error", S, "malformed"), ("text", " ok"), F]),
    Case("am-qwen-next-call-before-close", "am_xml",
         "<tool_call><function=search><parameter=q>x</parameter>\n<tool_call>"
         "<function=search></function></tool_call>",
         [("error", S, "unterminated"), call(S), F]),
    Case("am-qwen-cut-in-value", "am_xml", "<tool_call>\n<function=search>\n<parameter=q>\nca",
         [("error", S, "unterminated"), F], finish_reason="stop"),
    Case("am-qwen-marker-at-the-end", "am_xml", "Calling: <tool_call>",
         [("text", "Calling: "), ("error", None, "unterminated"), F]),
    # -- am_xml: a CDATA section outside the parameter elements --------------------------
    # was taken for a declaration and dropped: the call ran without it
    Case("am-cdata-as-the-body", "am_xml",
         '<am:tool_call name="search"><![CDATA[{"q": "x"}]]></am:tool_call>',
         [("error", S, "malformed"), F]),
    Case("am-cdata-between-parameters", "am_xml",
         '<am:tool_call name="search"><q>a</q>\n<![CDATA[b]]>\n</am:tool_call>',
         [("error", S, "malformed"), F]),
    Case("am-declarations-still-layout", "am_xml",
         '<am:tool_call name="search"><!-- note --><q>a</q><!DOCTYPE x></am:tool_call>',
         [call(S, q="a"), F]),
    # -- a stop string with a marker after its first character ---------------------------
    # the marker ends first; where it is prose (quoted, mid-line) the stop string that
    # began before it counts, as for a provider (it was missed: the text showed it)
    Case("stop-around-a-quoted-marker", "hermes", "Use `<tool_call>` tags",
         [("text", "Use "), ("finish", "stop", "`<tool_call>`")], stop="`<tool_call>`"),
    Case("am-stop-around-a-quoted-marker", "am_xml",
         'Write `<am:tool_call name="search">` first',
         [("text", "Write "), ("finish", "stop", '`<am:tool_call name="')],
         stop='`<am:tool_call name="'),
    Case("stop-around-a-quoted-think-tag", "hermes", "a `<think>` b <think>c</think>",
         [("text", "a "), ("finish", "stop", "`<think>` b")], stop=("`<think>` b",)),
    Case("command-stop-around-a-mid-line-marker", "command", "say @tool x\n@tool search {}",
         [("text", "sa"), ("finish", "stop", "y @tool x")], stop="y @tool x"),
    # not there after all: the text it held comes out as text
    Case("stop-around-a-quoted-marker-not-there", "hermes", "Use `<tool_call>` tags",
         [("text", "Use `<tool_call>` tags"), F], stop="`<tool_call>`!"),
    # the marker opens a call: it ended first and decides, the stop string is content
    Case("stop-around-a-marker-that-opens", "hermes",
         '`x <tool_call>{"name": "search", "arguments": {}}</tool_call>',
         [("text", "`x "), call(S), F], stop="x <tool_call>{"),
]


@pytest.mark.parametrize("case", MODEL_CASES, ids=[c.id for c in MODEL_CASES])
def test_model_case_every_chunking(case: Case) -> None:
    tools = SchemaCatalog() if case.extra.get("catalog") else list(case.tools)
    every_chunking(case.dialect, case.text, tools, case.expect, case.stop, case.finish_reason)


def test_stop_string_around_a_marker_whose_body_is_rejected() -> None:
    # a provider cuts at 'ab{"q'; the parser opened a body at '{', emitting "say ab",
    # then the body turned out to be prose: the stop string's start had gone out
    events = run_checked("inline_json", ['say ab{"q": 1} more'], ["search"], 'ab{"q')
    assert summary(events) == [("text", "say "), ("finish", "stop", 'ab{"q')]


def _error(dialect: str, text: str) -> CallError:
    (error,) = [e for e in run_checked(dialect, [text], ["search"]) if isinstance(e, CallError)]
    assert error.raw.strip() in text
    return error


def test_arguments_under_an_unread_key_say_where_they_go() -> None:
    msg = _error("hermes", '<tool_call>{"name": "search", "options": {"q": 1}}</tool_call>')
    assert '"options"' in msg.message and 'under "arguments"' in msg.message
    msg = _error("json_action", '```json action\n{"tool": "search", "kw": {}}\n```')
    assert '"kw"' in msg.message and 'under "parameters"' in msg.message
    msg = _error("json_object", '{"action": {"tool": "search", "params": {}}}')
    assert '"params"' in msg.message and 'under "args"' in msg.message


def test_arguments_that_are_no_object_say_so_with_the_whole_call() -> None:
    text = '{"tool": "search", "arguments": [{"tool": "search", "arguments": {}}]}'
    error = _error("inline_json", text)
    assert error.raw == text and "'arguments' must be a JSON object" in error.message


def test_a_broken_off_opening_tag_says_so_and_names_its_tool() -> None:
    text = '<am:tool_call name="calc"\n<am:tool_call name="search"><q>x</q></am:tool_call>'
    events = run_checked("am_xml", [text], ["search", "calc"])
    (error,) = [e for e in events if isinstance(e, CallError)]
    assert error.raw == '<am:tool_call name="calc"\n'
    assert "opening tag of the call to calc was not finished with >" in error.message


def test_arguments_given_twice_say_so() -> None:
    msg = _error("hermes", '<tool_call>{"name": "search", "arguments": {}, "args": {}}</tool_call>')
    assert "more than once" in msg.message
    msg = _error("am_xml", '<am:tool_call name="search"><q>a</q><q>b</q></am:tool_call>')
    assert "The parameter 'q' is given more than once" in msg.message
    assert '<q>["a", "b"]</q>' in msg.message


@pytest.mark.parametrize(
    ("dialect", "text", "hint"),
    [
        # what the model must change, said in its terms (it was "'True' is not a JSON
        # value (strings need double quotes)" and "unexpected '}' where a
        # double-quoted key should be")
        ("hermes", '<tool_call>{"name": "search", "arguments": {"q": True}}</tool_call>',
         "'True' is Python, not JSON: write true"),
        ("command", '@tool search {"a": [None]}', "'None' is Python, not JSON: write null"),
        ("hermes", '<tool_call>{"name": "search", "arguments": {"q": "x",}}</tool_call>',
         "a comma before '}' (JSON allows no trailing comma)"),
        ("json_action", '```json action\n{"tool": "search", "parameters": {"q": [1,]}}\n```',
         "a comma before ']' (JSON allows no trailing comma)"),
        ("inline_json", '{"tool": "search", "arguments": {"q": "x"},}',
         "a comma before '}' (JSON allows no trailing comma)"),
        ("hermes", "<tool_call>{'name': 'search', 'arguments': {}}</tool_call>",
         "JSON strings and keys take double quotes"),
        ("command", "@tool search {'q': 'x'}", "JSON strings and keys take double quotes"),
        ("command", '@tool search {"q": \'x\'}', "JSON strings and keys take double quotes"),
    ],
)
def test_json_mistakes_models_make_are_named(dialect: str, text: str, hint: str) -> None:
    (error,) = [e for e in run_checked(dialect, [text], ["search"]) if isinstance(e, CallError)]
    assert error.reason == "invalid_json" and hint in error.message, error.message


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ('@tool search({"q": "x"})', 'without parentheses: @tool search {"param": "value"}'),
        ("@tool search()", 'without parentheses: @tool search {"param": "value"}'),
        ('@tool search ({"q": "x"})', "without parentheses: @tool search"),
        ('@tool "search {"q": "x"}', "Write the tool name without quotes."),
    ],
)
def test_command_name_mistakes_say_what_to_fix(text: str, hint: str) -> None:
    error = _error("command", text)
    assert error.reason == "malformed" and error.name == "search", error
    assert hint in error.message, error.message


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ('<am:tool_call tool="search"><q>x</q></am:tool_call>',
         '<am:tool_call name="search">, not in a tool attribute'),
        ("<am:tool_call tool_name='search'/>",
         '<am:tool_call name="search">, not in a tool_name attribute'),
        ("<am:tool_call>\n<name>search</name>\n<q>x</q>\n</am:tool_call>",
         '<am:tool_call name="search">, not in a <name> element'),
        ("<am:tool_call><q>x</q></am:tool_call>", "give it in the name attribute."),
    ],
)
def test_am_xml_call_without_name_says_use_the_name_attribute(text: str, hint: str) -> None:
    # it was only "The call has no tool name."
    error = _error("am_xml", text)
    assert error.reason == "malformed" and error.name is None, error
    assert hint in error.message, error.message


@settings(max_examples=300, deadline=None)
@given(st.text("<>|\uff5ca\u2581 [", max_size=24))
def test_special_tokens_are_the_shape_the_prompts_defuse(text: str) -> None:
    # what the parser takes as layout is what the render side defuses in results
    ours = [(m.start(), m.group()) for m in calls.SPECIAL_TOKEN.finditer(text)]
    assert ours == [(m.start(), m.group()) for m in special_tokens.SPECIAL_TOKEN.finditer(text)]
    for k in range(len(text) + 1):
        if special_tokens.SPECIAL_TOKEN.fullmatch(text[:k]) is not None:
            for j in range(1, k):  # each start of one is a start still arriving
                assert calls.SPECIAL_TOKEN_START.match(text[:j]) is not None, text[:j]


@pytest.mark.parametrize("text", [
    "<tool_call>\n<function=>\n</function>\n</tool_call>",
    "<tool_call>\n<function=web search>\n<parameter=q>x</parameter>\n</function>\n</tool_call>",
])
def test_qwen_function_tag_without_a_tool_name_says_so(text: str) -> None:
    # (it was told to write one JSON object, as for a body of no form at all)
    error = _error("hermes", text)
    assert error.reason == "malformed" and error.raw == text
    assert "names no tool" in error.message and "<function=TOOL>" in error.message


@pytest.mark.parametrize("body", [
    "search: x", "\n<name>search</name>\n", "\nsearch(q='x')",
])
def test_am_xml_tool_call_tag_of_no_form_shows_the_form(body: str) -> None:
    # Qwen3-Coder's tag in am_xml with a body that is not its form: the call is an
    # error the model can act on (it was text, the call lost without a word)
    error = _error("am_xml", f"<tool_call>{body}</tool_call>")
    assert error.reason == "malformed" and error.raw == f"<tool_call>{body}</tool_call>"
    assert "<function=TOOL>" in error.message


def test_qwen_form_streams_its_events_early() -> None:
    """CallStart from the feed that closes the function tag, a string value as it
    grows (the layout newline after the tag held back, the one before
    </parameter> too, until the next piece shows what it is), CallEnd from the
    feed that brings </tool_call>."""
    parser = Parser("hermes", SchemaCatalog())

    def step(delta: str) -> list[object]:
        return [
            ("start", e.name) if isinstance(e, CallStart)
            else ("args", e.delta) if isinstance(e, ArgsDelta)
            else ("end", e.arguments) if isinstance(e, CallEnd)
            else e
            for e in parser.feed(delta)
        ]

    assert step("<tool_call>\n<function=search") == []
    assert step(">\n") == [("start", "search")]
    assert step("<parameter=q>\nca") == [("args", '{"q": "'), ("args", "ca")]
    assert step("ts\n") == [("args", "ts")]
    assert step("dogs\n") == [("args", "\\ndogs")]
    assert step("</parameter>\n</function>\n") == [("args", '"'), ("args", "}")]
    assert step("</tool_call>") == [("end", {"q": "cats\ndogs"})]
