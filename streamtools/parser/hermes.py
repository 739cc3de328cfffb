"""The ``hermes`` dialect: ``<tool_call>{"name": …, "arguments": {…}}</tool_call>``.

Theory of operation
-------------------
Text mode looks for ``<tool_call>``; from the marker on it is a call (prose that
quotes the tag in backticks stays text, see the core). It looks for ``<function=``
too, Qwen3-Coder's form with its opener left out (``qwen_bare``), and the openers of
the ``<function_calls><invoke name=…>`` form DeepSeek, GLM, Kimi and MiniMax
models write (DeepSeek's DSML spelling too: ``xml_invoke``), Gemma 4's
``<|tool_call>call:NAME{…}<tool_call|>`` (``gemma_call``), and Kimi K2's
``<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0
<|tool_call_argument_begin|>{…}<|tool_call_end|>…`` and DeepSeek V3.1's
``<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}…`` (``kimi_call``), and
gpt-oss's ``<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}
<|call|>`` and ``<|start|>assistant to=functions.NAME<|channel|>commentary json
<|message|>{…}<|call|>`` (``harmony_call``), and, where ``<think>`` may open
(the reply's start, after a call), Mistral's ``[TOOL_CALLS]NAME[ARGS]{…}``
(``mistral_call``).
The body expects, after optional whitespace, a JSON object, or Qwen3-Coder's ``<function=NAME>
<parameter=P>value</parameter></function>`` (a ``<`` there chooses that form,
read by ``hermes_xml``), or GLM's ``NAME<arg_key>K</arg_key><arg_value>V</arg_value>``
(a letter or ``_`` there: ``xml_glm``); anything else is ``CallError(reason=
"malformed")`` reaching to the next ``</tool_call>``, except ``<tool_call>``
again (``<tool_call><tool_call>{…}``, a stutter small models write), which is
part of the call's markup, and a Markdown fence around the object
(````` ```json `````, or ````` ``` ````` alone, any case, then a newline or the ``{``),
which models trained on fenced JSON write inside the tags: the fence is markup,
and its closing ````` ``` ````` after the object is layout before ``</tool_call>``
(a closing fence with no opening one, a fence of another language or a second
fence is still malformed). The envelope's ``name`` starts the call,
``arguments`` (also ``parameters``, ``args``, or Anthropic's ``input``; or
OpenAI's nested ``{"function": {"name", "arguments" or "parameters"}}``; a
double-encoded string of JSON is accepted too) streams as ``ArgsDelta``.
Arguments given twice, or none while an object stands under a key read nowhere
(``"options": {…}``), are ``CallError(reason="malformed")`` naming the key:
run without them, the call would do something else (see ``JsonCallBody``).
Several calls in one block, as a JSON array (``<tool_call>[{…}, {…}]
</tool_call>``) or one object after another, are each a call, ending where the
next begins (see ``JsonCallBody``); an element that is not an object is an
error of its own, the calls before it stand.
After the object only whitespace and ``</tool_call>`` may follow,
the tag also written ``</tool_call >`` as XML allows (at most 8 whitespace
characters, so a run of them is not held on and on), and chat-template special
tokens such as ``<|im_end|>`` (a server that does not strip them, a model
ending its turn where the closing tag is due): they are layout, so the call
completes when ``</tool_call>`` follows or, the provider having stopped there,
at ``end("stop")``. A ``<tool_call>`` there (the model forgot ``</tool_call>``
and began its next call) ends this one complete, as ``</tool_call>`` would, and
opens the next.

``</tool_call>`` inside a JSON string is content: the closing tag is looked for
only once the object is complete. On a JSON error the body skips to the next
``</tool_call>`` and reports ``CallError(reason="invalid_json")`` with the whole
raw call. ``</tool_call>`` is the stop marker: when a provider removed it,
``end(finish_reason="stop")`` after a complete object completes the call.
"""

from __future__ import annotations

import re

from streamtools.parser.calls import RUNNING, CallBody, CallContext, DialectSyntax
from streamtools.parser.envelope import ARGS, NAME
from streamtools.parser.gemma_call import GEMMA_OPEN, GemmaCallBody
from streamtools.parser.gemma_call import HOLD_BOUND as GEMMA_HOLD
from streamtools.parser.harmony_call import CHANNEL, START, HarmonyCallBody
from streamtools.parser.hermes_xml import CLOSE, LOOSE_CLOSE, OPEN, QwenXmlCall
from streamtools.parser.jsoncall import ENVELOPE, SKIP_TO_CLOSE, JsonCallBody
from streamtools.parser.kimi_call import HOLD_BOUND as KIMI_HOLD
from streamtools.parser.kimi_call import OPENERS as SECTION_OPENERS
from streamtools.parser.kimi_call import KimiCallBody
from streamtools.parser.mistral_call import TOOL_CALLS, MistralCallBody
from streamtools.parser.qwen_bare import FUNCTION, HOLD_BOUND, BareFunctionBody
from streamtools.parser.xml_glm import NAME_START
from streamtools.parser.xml_invoke import OPENERS, InvokeBody

__all__ = ["HERMES", "HermesBody", "HermesXmlBody"]

# where </tool_call> is due (``loose_suffix``): the closing tag with whitespace
# before its ">" (``LOOSE_CLOSE``), and its start
_LOOSE_START = re.compile(r"</tool_call[ \t\r\n]{0,8}\Z")
# a Markdown fence around the object inside the tags (``<tool_call>\n```json\n{…}
# \n```\n</tool_call>``): its opening line, whole or still arriving
FENCE = "```"
# (the line ends at a newline or the "{": the same whatever the cut)
_FENCE_OPEN = re.compile(r"```[ \t]{0,4}(?:json)?[ \t]{0,4}(?=[\r\n{])", re.IGNORECASE)
_FENCE_START = re.compile(r"`{1,3}|```[ \t]{0,4}(?:j|js|jso|json[ \t]{0,4})?", re.IGNORECASE)


class HermesBody(JsonCallBody):
    roles = {
        ("name",): NAME,
        ("arguments",): ARGS,
        ("parameters",): ARGS,
        ("args",): ARGS,
        ("input",): ARGS,
        ("function", "name"): NAME,
        ("function", "arguments"): ARGS,
        ("function", "parameters"): ARGS,
    }
    close = CLOSE
    reopen = OPEN
    several = True
    fenced = False  # a Markdown fence opened inside the tags and is not closed yet
    on_error = SKIP_TO_CLOSE
    example = (
        'Write exactly <tool_call>{"name": "TOOL", "arguments": {"param": "value"}}'
        "</tool_call>."
    )

    def renew(self, marker: str, *, prefix: bool = True) -> None:
        JsonCallBody.renew(self, marker, prefix=prefix)  # (super(): a lookup more)
        self.fenced = False

    def prefix(self, s: str, i: int) -> int:
        start, n = i, len(s)
        while True:
            while i < n and s[i] in " \t\r\n":
                i += 1
            if i == n:
                return i
            if s[i] == "{" or s[i] == "[":  # an array of calls: see ``JsonCallBody``
                self.phase = ENVELOPE
            elif s.startswith(OPEN, i):
                i += len(OPEN)  # <tool_call> again: a stutter, part of the markup
                continue
            elif n - i < len(OPEN) and OPEN.startswith(s[i:]):
                pass  # maybe that stutter: wait for the rest
            elif s[i] == "`" and not self.fenced:
                m = _FENCE_OPEN.match(s, i)
                if m is not None:
                    self.fenced = True  # markup: its closing fence is awaited after the object
                    i = m.end()
                    continue
                if _FENCE_START.fullmatch(s, i) is None:
                    self._error("malformed", "<tool_call> must contain one JSON object.")
            elif (s[i] == "<" or s[i] in NAME_START) and not self.fenced:
                # Qwen3-Coder's form, or GLM's (the tool's name first: ``xml_glm``)
                return HermesXmlBody.take_over(self, s, start, i)
            else:
                self._error("malformed", "<tool_call> must contain one JSON object.")
            return i

    def loose_suffix(self, s: str, i: int) -> tuple[int, bool] | None:
        if self.fenced and s[i] == "`":
            if s.startswith(FENCE, i):
                self.fenced = False  # the fence closed: layout, as the one that opened
                return i + len(FENCE), False
            if FENCE.startswith(s[i:]):
                return i, False  # the closing fence still arriving: wait
        m = LOOSE_CLOSE.match(s, i)
        if m is not None:
            return m.end(), True
        if _LOOSE_START.match(s, i) is not None:
            return i, False
        return super().loose_suffix(s, i)  # a special token


class HermesXmlBody(QwenXmlCall, HermesBody):
    """A ``hermes`` body reading Qwen3-Coder's form (``hermes_xml``). A body
    becomes one (``take_over``) where its prefix finds that form, so the JSON
    body's paths test nothing for it, and a JSON body again when ``_open``
    renews it for a later call (``CallBody.renews``)."""

    json_message = "<tool_call> must contain one JSON object. " + HermesBody.example

    @staticmethod
    def take_over(body: HermesBody, s: str, start: int, i: int) -> int:
        """``body``'s prefix, called at ``start`` by ``JsonCallBody.feed``, met
        this form at ``s[i]``: the body reads it from there, as ``prefix``
        would, and returns where it stopped."""
        body.__class__ = HermesXmlBody  # (the same layout: both are plain classes)
        assert isinstance(body, HermesXmlBody)
        body.record(s, start, i)
        body.begin_xml()
        k = body.feed(s, i, body.out)
        if body.status == RUNNING:
            # ``JsonCallBody.feed`` records ``s[start:k]`` when the prefix returns
            # (nothing for a call that ended), then calls ``_settle``, which puts
            # back the raw text recorded here
            body.kept = (body.raw, body.size)
            body.raw = []
        return k


def _open(marker: str, ctx: CallContext) -> CallBody | None:
    if marker != OPEN:
        if marker == FUNCTION:  # Qwen3-Coder's form without its <tool_call> (``qwen_bare``)
            return BareFunctionBody(ctx, marker)
        if marker == GEMMA_OPEN:  # Gemma 4's own form (``gemma_call``)
            return GemmaCallBody(ctx, marker)
        if marker in SECTION_OPENERS:  # Kimi K2's or DeepSeek's own form (``kimi_call``)
            return KimiCallBody(ctx, marker)
        if marker in (CHANNEL, START):  # gpt-oss's harmony message to a function (``harmony_call``)
            return HarmonyCallBody(ctx, marker)
        if marker == TOOL_CALLS:  # Mistral's own form, a quiet marker (``mistral_call``)
            return MistralCallBody(ctx, marker)
        return InvokeBody(ctx, marker)  # <function_calls><invoke …> (``xml_invoke``)
    body = HermesBody.spare(ctx)
    if body is None:
        xml = HermesXmlBody.spare(ctx)  # (a body that read Qwen3-Coder's form)
        if xml is None:
            body = HermesBody(ctx, marker)
        else:
            # JSON's again, until its prefix chooses (mypy takes the class for fixed)
            xml.__class__ = HermesBody  # type: ignore[assignment]
            body = xml
            body.renew(marker)
    else:
        body.renew(marker)
    body.undecided = False  # <tool_call> is distinctive: it is a call from the marker on
    return body


HERMES = DialectSyntax(
    name="hermes", stop_marker=CLOSE,
    markers=(OPEN, FUNCTION, GEMMA_OPEN, *SECTION_OPENERS, CHANNEL, START, *OPENERS),
    open=_open, hold_bound=max(HOLD_BOUND, GEMMA_HOLD, KIMI_HOLD), quiet_markers=(TOOL_CALLS,),
)
