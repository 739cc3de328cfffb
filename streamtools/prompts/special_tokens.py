"""Chat-template special tokens in the text we write into a prompt, defused.

Theory of operation
-------------------
A local server (llama.cpp, vLLM through Hugging Face tokenizers, Ollama) renders
a request's messages through the model's chat template into one string, then
tokenizes that string with special-token parsing on: ``<|im_end|>`` anywhere in
it, inside a message's content too, becomes the token that ends a turn. A tool's
output (a web page, a file) holding ``<|im_end|>\\n<|im_start|>system\\n…`` would
end the tool's message and open a system turn of its own; the same text in a
tool's description (an MCP server's, a proxy client's) would do it from the
system prompt. The dialects' own escaping (``&lt;`` in ``am_xml``, ``\\u003c`` in
``hermes`` and the JSON results) does not cover every place we write such text,
so the render side defuses it here, in one way, wherever it goes.

**What counts** (``SPECIAL_TOKEN``, the parser's ``calls.SPECIAL_TOKEN``, which
reads the same shape as layout where a call's closing marker is due): the shape
chat templates give their special tokens, not a list of names, so that the
tokens of models not yet released are covered too: ``<|name|>`` (ChatML, Llama
3, Phi, gpt-oss's Harmony, Command R, Granite, GLM), each half of it,
``<|name>`` and ``<name|>`` (Gemma 4's ``<|turn>`` … ``<turn|>``), and the same
with the full-width bar ``｜`` (DeepSeek's ``<｜end▁of▁sentence｜>``). A name is 1
to 64 characters other than whitespace, angle and square brackets and the bars
(no template's token has a square bracket, and so ``am_xml``'s CDATA markup,
``<![CDATA[`` and ``]]>``, never completes one with the text beside it). Tokens
of other shapes (Gemma 2 and 3's ``<start_of_turn>``, Mistral's ``[INST]``,
``</s>``) are left alone: they look like an HTML tag or a bracketed word, and
rewriting every such one would alter ordinary content. Code stays as it is: R's
and Elixir's ``x |> f`` or Elm's ``f <| x`` have no name between the bar and the
angle bracket.

**How** a token is defused: its opening ``<`` and closing ``>`` (the characters
next to a bar) are written another way, so that no tokenizer can match it, while
a reader still sees what it was:

* JSON text (``defuse_json``): ``\\u003c`` and ``\\u003e``. In JSON a ``<`` can only
  stand inside a string, where the escape decodes to exactly the same text: a
  past call still reads back as the same arguments and a result as the same
  content. ``json_text``, which writes every JSON value the render side
  writes, applies it.
* plain text (``defuse_text``): ``&lt;`` and ``&gt;``, the spelling ``am_xml``
  gives every angle bracket, which any model reads as one: ``&lt;|im_end|&gt;``.
  Not reversible, so it is used only where nothing reads the text back.
* ``am_xml``'s CDATA sections are split between the angle bracket and the bar,
  as a ``]]>`` is split (``cdata``): lossless too.

**Where** it applies: everything the render side writes from what a tool or a
model produced. Tool names that hold a token are refused
(``Renderer.name_problem``); descriptions and schemas in the definitions and
the hybrid summaries; results and errors (in ``json_action`` and
``inline_json`` a result holding a token is written as an escaped JSON string,
as one holding a fence is, so it still reads back verbatim); past calls,
canonical or as the model wrote them (a raw call that holds a token, other
than one ending it where a server left the model's end of turn, is written in
the canonical form instead, so the token cannot stand outside a JSON string or
inside CDATA); and past replies' visible text. In native mode, results and
replies' text get the plain spelling; a native call's arguments are an object
the server's template writes, out of our reach.

The caller's own words, the system prompt and user messages, are left as they
are: they are the caller's to trust, and a user may mean to write a token.

Core module: standard library only.
"""

from __future__ import annotations

# the parser's pattern (where a call's closing marker is due it reads such a
# token as layout): one shape, read and defused alike
from streamtools.parser.calls import SPECIAL_TOKEN

__all__ = ["SPECIAL_TOKEN", "defuse_json", "defuse_text", "defused", "holds_special_token"]


def defused(text: str, *, lt: str, gt: str) -> str:
    """``text`` with the ``<`` and ``>`` of each special token written as ``lt`` and
    ``gt``. Neither may put an angle bracket next to a bar (``lt`` may not end
    with ``<``, nor ``gt`` begin with ``>``), so that no new token appears; the
    text is searched again all the same, until none is left."""
    count = 1
    while count:
        text, count = SPECIAL_TOKEN.subn(lambda t: lt + t[0][1:-1] + gt, text)
    return text


def defuse_json(text: str) -> str:
    """JSON text with each special token's ``<`` and ``>`` as ``\\u003c`` and ``\\u003e``:
    inside a JSON string it decodes to the same text."""
    return defused(text, lt="\\u003c", gt="\\u003e")


def defuse_text(text: str) -> str:
    """Plain text with each special token's ``<`` and ``>`` as ``&lt;`` and ``&gt;``."""
    return defused(text, lt="&lt;", gt="&gt;")


def holds_special_token(text: str) -> bool:
    """Whether ``text`` holds anything of a special token's shape."""
    return SPECIAL_TOKEN.search(text) is not None
