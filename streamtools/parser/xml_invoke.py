"""The ``<function_calls><invoke name=…>`` call form, and DeepSeek's DSML spelling of it.

Theory of operation
-------------------
Anthropic's old XML tool format survives in the habits of several open models,
which write it whatever the prompt teaches::

    <function_calls>
    <invoke name="cronjob">
    <parameter name="action" string="true">list</parameter>
    </invoke>
    </function_calls>

DeepSeek V3.2, GLM-5.1 and Kimi K2.5 behind Ollama's cloud (NousResearch/
hermes-agent#8965; nesquena/hermes-webui#702, an ``<invoke>`` without
parameters); DeepSeek V3.2 and V4 in their template's DSML tokens, each tag
spelled with ``｜DSML｜`` after its ``<`` or ``</`` and V4 saying ``tool_calls``
for ``function_calls`` (hermes-agent#54283, #119261: the tags on one line,
spaces between them); MiniMax M2 inside ``<minimax:tool_call>`` (hermes-agent
#27834). Each was text: the call lost, the run ended as if answered. vLLM's and
SGLang's DeepSeek V3.2 parsers read the same grammar.

Each opening tag of a block is a marker (``OPENERS``) of ``hermes`` and
``am_xml``. Prose may name one (``write <function_calls> tags``), so the body
is undecided until the block's first ``<invoke`` (its DSML spelling where the
opener was) and a whitespace character after it arrive, at most ``LEAD``
whitespace characters after the opener; anything else there makes the text
prose, as it was. The hold-back is so at most 22 + 16 + 13 = 51 characters, under
the dialects' stated ``hold_bound``.

One block holds one call per ``<invoke name="TOOL">…</invoke>`` (``<invoke
name="TOOL"/>`` takes no arguments). Between its parameters whitespace and
chat-template special tokens are layout. ``<parameter name="P">`` opens a
value, read as ``am_xml`` and Qwen3-Coder values are (``xml_values``: typed by
the tool's schema, a string streamed as it grows), but written as it is: no
entities, no CDATA, only ``</parameter>`` ends it. Where the schema names no
one type (none, or several: ``int | str``, ``str | None``), the ``string``
attribute the DeepSeek template teaches decides: ``string="true"`` is text
(``5`` is ``"5"``), ``string="false"`` JSON (with no type: a number, literal,
array or object kept as such if it decodes, else text; with several, as the
schema's types let JSON decide). An ``<invoke>`` whose body is one JSON object (SGLang's
second form) takes it as the arguments. Any other text or tag there, or a
parameter given twice, makes the call ``CallError(malformed)`` at its
``</invoke>``. Where the model left ``</invoke>`` out, the next ``<invoke …>``
or the block's closing tag between the parameters stands for it (DeepSeek V4
does: Luce-Org/lucebox#742). In a DSML block a parameter's tag may be
spelled without the token, as DeepSeek V4 sometimes writes it
(``<parameter name="P">V</｜DSML｜parameter>``: sgl-project/sglang#39435, where
the value was lost); its value ends at either closing tag. A value whose
closing tag was left out ends where the next parameter's tag begins, as the
model meant (DeepSeek does: vllm-project/vllm#54838, where it swallowed that
parameter): in a DSML block at any ``<｜DSML｜parameter …>`` tag or
``</｜DSML｜invoke>`` (tokens no value holds); a plain ``<parameter …>`` tag only
at a line's start, naming a parameter the tool declares, not given yet (as in
``am_xml``: a value may quote the tag).

A call ends where what follows its ``</invoke>`` is known (so its raw text
takes the whitespace after it, and the last one the block's closing tag):
another ``<invoke`` starts the next call, the block's closing tag ends the
body, and anything else (text, the stream's end) ends the block there, the
call complete; the rest is text again. The stream ending inside an
``<invoke>`` is ``CallError(unterminated)``.

Core package: standard library only.
"""

from __future__ import annotations

from streamtools.events import ParserEvent
from streamtools.parser.am_xml_attrs import attribute, name_attribute
from streamtools.parser.am_xml_fast import TAG_LIMIT
from streamtools.parser.calls import DONE, REJECTED, SPECIAL_TOKEN, Call, CallBody, CallContext
from streamtools.parser.xml_values import (
    AUTO,
    STRING,
    TYPED,
    UNTYPED,
    WORD,
    ParamValues,
    kinds_from_schema,
)

__all__ = ["LEAD", "OPENERS", "InvokeBody"]

DSML = "\uff5cDSML\uff5c"
OPENERS = (
    "<function_calls>", f"<{DSML}function_calls>", f"<{DSML}tool_calls>", "<minimax:tool_call>",
)
LEAD = 16  # whitespace characters at most between the opener and the first <invoke
_SPACE = " \t\r\n"
_LEAD, _TAG, _BODY, _PARAM, _JSON, _AFTER = range(6)
_EXAMPLE = (
    ' Write <function_calls><invoke name="TOOL"><parameter name="P">value</parameter>'
    "</invoke></function_calls>."
)


class InvokeBody(ParamValues, CallBody):
    """A block of ``<invoke>`` calls (see the module docstring)."""

    param_state = _PARAM
    body_state = _BODY

    def __init__(self, ctx: CallContext, marker: str) -> None:
        super().__init__(ctx, marker)
        p = DSML if DSML in marker else ""
        self.invoke = f"<{p}invoke"
        self.invoke_close = f"</{p}invoke>"
        self.param_open = f"<{p}parameter"
        # in a DSML block the plain spelling too, then closed either way (sgl-project/sglang#39435)
        self.param_opens = (self.param_open, "<parameter") if p else (self.param_open,)
        self.alt_close = ""  # the open value's other closing tag (see ``param_opens``)
        self.close = "</" + marker[1:]
        self.undecided = True
        self.state = _LEAD
        self.lead = 0
        self.out: list[ParserEvent] = []
        self._next()

    def _next(self) -> None:
        """A new call of the block, nothing of it read."""
        self.call = Call(self.ctx)
        self._start_values()
        self.element = self.param_open[1:]  # the open parameter's element (for messages)
        self.stray: list[str] = []  # text between the parameters (layout, or an error)
        self.strayed = False  # some of it is not whitespace

    def feed(self, s: str, pos: int, out: list[ParserEvent]) -> int:
        self.out = out
        i, n = pos, len(s)
        while i < n and self.status != DONE and self.status != REJECTED:
            state = self.state
            if state == _PARAM:
                j = self._param(s, i)
            elif state == _BODY:
                j = self._body(s, i)
            elif state == _AFTER:
                j = self._after(s, i, pos)
                if self.status == DONE:
                    return j  # (recorded)
                if self.state == _TAG:
                    pos = j  # the next call began: the last one's raw text ended there
            elif state == _TAG:
                j = self._tag(s, i)
            elif state == _JSON:
                j = self._json(s, i)
            else:
                j = self._lead(s, i)
            if j == i and self.state == state:
                break  # needs more input
            i = j
        self.record(s, pos, i)
        return i

    def _lead(self, s: str, i: int) -> int:
        """Undecided: whitespace, then ``<invoke`` and a whitespace character."""
        n = len(s)
        while i < n and s[i] in _SPACE and self.lead < LEAD:
            self.lead += 1
            i += 1
        if i == n:
            return i
        k = i + len(self.invoke)
        if k >= n:
            if self.invoke.startswith(s[i:]):
                return i  # maybe the tag: wait
        elif s.startswith(self.invoke, i) and s[k] in _SPACE:
            self.undecided = False
            self.state = _TAG
            return i
        self.status = REJECTED  # prose naming the tag
        return i

    def _tag(self, s: str, i: int) -> int:
        """The ``<invoke …>`` tag at ``s[i]``: the call's name."""
        e = s.find(">", i, i + TAG_LIMIT + 1)
        if e < 0:
            if len(s) - i <= TAG_LIMIT:
                return i  # wait for the whole tag
            self.bad = f"The tag {s[i : i + 40]!r} is not closed with >."
            self.state = _BODY
            return i + TAG_LIMIT
        tag = s[i : e + 1]
        name = name_attribute(tag, len(self.invoke))
        if name is not None and name.strip():
            name = name.strip()
            self.call.named(name, self.out)
            if self.call.started:
                self.kinds = kinds_from_schema(self.ctx.catalog.schema(self.call.name or name))
        self.state = _AFTER if tag.endswith("/>") else _BODY
        return e + 1

    def _body(self, s: str, i: int) -> int:
        n = len(s)
        if s[i] != "<":
            k = s.find("<", i)
            k = n if k < 0 else k
            text = s[i:k]
            lead = text.lstrip()
            if lead and lead[0] == "{" and not self.params and not self.strayed:
                self.state = _JSON  # the arguments as one JSON object
                return k - len(lead)
            # (whitespace too, so that the error quotes the text as written, whatever the cut)
            self.stray.append(text)
            self.strayed = self.strayed or bool(lead)
            return k
        if s.startswith(self.invoke_close, i):
            self.state = _AFTER
            return i + len(self.invoke_close)
        e = s.find(">", i, i + TAG_LIMIT + 1)
        if e < 0:
            if n - i <= TAG_LIMIT:
                return i  # wait for the whole tag
            self.stray.append(s[i : i + TAG_LIMIT])
            self.strayed = True
            return i + TAG_LIMIT
        tag = s[i : e + 1]
        k = len(self.invoke)
        if tag == self.close or (tag.startswith(self.invoke) and tag[k] in _SPACE):
            self.state = _AFTER  # </invoke> left out: read as if it were there
            return i
        for opener in self.param_opens:
            p = len(opener)
            if tag.startswith(opener) and (tag[p] in _SPACE or tag[p] == ">"):
                name = name_attribute(tag, p)
                if name is not None:
                    self._open_value(name, attribute(tag, p, "string"), opener)
                    if tag.endswith("/>"):
                        self._close_param()
                    return e + 1
        if SPECIAL_TOKEN.fullmatch(tag) is None:  # (special tokens: layout)
            self.stray.append(tag)
            self.strayed = True
        return e + 1

    def _open_value(self, name: str, string: str | None, opener: str) -> None:
        kind = self.kinds.get(name, UNTYPED)
        if string is not None and kind != STRING and kind != TYPED and kind != WORD:
            # the schema names no one type: the model's attribute says text or JSON
            if string.strip().lower() == "true":
                self.kinds[name] = STRING
            elif kind == UNTYPED:
                self.kinds[name] = AUTO
        self.element = opener[1:]
        self.alt_close = f"</{self.param_open[1:]}>" if opener != self.param_open else ""
        self._open_param(name, self.element)

    def _param(self, s: str, i: int) -> int:
        close = self.pclose
        n = len(s)
        while i < n:
            j = s.find("<", i)
            if j < 0:
                self._content(s[i:])
                return n
            if j > i:
                self._content(s[i:j])
            if s.startswith(close, j):
                self._close_param()
                return j + len(close)
            alt = self.alt_close
            if alt and s.startswith(alt, j):
                self._close_param()
                return j + len(alt)
            k = self._value_ends(s, j)
            if k >= 0:
                return k
            if n - j < max(len(close), len(alt)) and (
                close.startswith(s[j:]) or (alt and alt.startswith(s[j:]))
            ):
                return j  # maybe the closing tag: wait
            self._content("<")
            i = j + 1
        return i

    def _value_ends(self, s: str, j: int) -> int:
        """Where a value whose closing tag the model left out ends, at the ``<``
        at ``s[j]`` (see above): ``j`` with the value closed, ``j`` while the tag
        may still be one (held), or -1 (content)."""
        dsml = self.param_open != "<parameter"
        if dsml and s.startswith(self.invoke_close, j):
            self._close_param()  # </｜DSML｜invoke>: never a value's text
            return j
        rest = s[j : j + TAG_LIMIT + 1]
        for opener in self.param_opens:
            if rest.startswith(opener):
                break
        else:
            if len(rest) < max(len(self.invoke_close), len(self.param_open)) and (
                any(o.startswith(rest) for o in self.param_opens)
                or (dsml and self.invoke_close.startswith(rest))
            ):
                return j  # maybe one of them: wait
            return -1
        e = rest.find(">")
        if e < 0:
            return j if len(rest) <= TAG_LIMIT else -1  # wait for the whole tag
        p = len(opener)
        name = name_attribute(rest[: e + 1], p) if rest[p] in _SPACE else None
        if name is None:
            return -1
        if (opener != self.param_open or not dsml) and not (
            self._line_start(s, j, j) and self._undeclared_yet(name)
        ):
            return -1  # the plain tag: only at a line's start, for a parameter due
        self._close_param()
        return j

    def _json(self, s: str, i: int) -> int:
        """An ``<invoke>`` body that is one JSON object, to its ``</invoke>``."""
        close = self.invoke_close
        k = s.find(close, i)
        if k < 0:
            n = len(s)
            j = n
            for c in range(min(len(close) - 1, n - i), 0, -1):
                if close.startswith(s[n - c :]):
                    j = n - c  # maybe the closing tag: wait
                    break
            self.stray.append(s[i:j])
            return j
        self.stray.append(s[i:k])
        self.call.add_args("".join(self.stray).strip(), self.out)
        self.stray = []
        self.state = _AFTER
        return k + len(close)

    def _after(self, s: str, i: int, pos: int) -> int:
        """After ``</invoke>``: whitespace, then the next call, the block's
        closing tag or anything else, which ends the block (see above)."""
        n = len(s)
        while i < n and s[i] in _SPACE:
            i += 1
        if i == n:
            return i
        if s.startswith(self.close, i):
            self.record(s, pos, i + len(self.close))
            self._complete()
            self.status = DONE
            return i + len(self.close)
        k = i + len(self.invoke)
        if k < n and s.startswith(self.invoke, i) and s[k] in _SPACE:
            self.record(s, pos, i)
            self._complete()
            self.raw, self.size = [], 0
            self._next()
            self.state = _TAG
            return i
        rest = s[i:]
        if self.close.startswith(rest) or self.invoke.startswith(rest):
            return i  # one of them may be arriving: wait
        self.record(s, pos, i)
        self._complete()  # the block ends here; the rest is text
        self.status = DONE
        return i

    def _complete(self) -> None:
        raw = self.raw_text()
        text = "".join(self.stray).strip()
        if self.bad is None and text:
            self.bad = f"Text {text[:40]!r} is not a parameter element."
        if self.bad is not None:
            self.call.fail(raw, "malformed", self.bad + _EXAMPLE, self.out)
            return
        if self.params:
            self.call.add_args("}", self.out)
        self.call.complete(raw, self.out, example=_EXAMPLE)

    def end(self, tail: str, finish_reason: str, out: list[ParserEvent]) -> str | None:
        self.out = out
        if self.state == _LEAD:
            return self.raw_text() + tail  # no <invoke: prose
        if self.state == _AFTER:
            self.status = DONE
            if tail and self.close.startswith(tail):
                self.record(tail, 0, len(tail))  # the block's closing tag, cut
                self._complete()
                return None
            self._complete()  # closed by </invoke>; the rest is text
            return tail
        self.record(tail, 0, len(tail))
        self.status = DONE
        where = f" inside <{self.element} name={self.pname!r}>" if self.state == _PARAM else ""
        name = self.call.name or "the tool"
        self.call.fail(
            self.raw_text(), "unterminated",
            f"The call to {name} was cut off{where} before {self.invoke_close}. Write the "
            f"whole call, closing every parameter and ending with {self.invoke_close}.{_EXAMPLE}",
            out,
        )
        return None
