"""Qwen3-Coder's call form inside ``hermes``' tags: the body's XML half.

Theory of operation
-------------------
Qwen3-Coder (and the Qwen3.5 coder-style chat templates) write a call as

    <tool_call>
    <function=search>
    <parameter=q>
    cats
    </parameter>
    </function>
    </tool_call>

where Hermes writes ``<tool_call>{"name": …, "arguments": {…}}</tool_call>``.
The ``hermes`` body (``HermesBody.prefix``) chooses between the two once per
call, at the first character of the body past whitespace and the markup it
takes as layout (a stuttered ``<tool_call>``, a Markdown fence's line): ``{``
(or ``[``) is the JSON form and its machine, unchanged; a ``<`` that begins no
``<tool_call>`` makes the body this form's (``HermesXmlBody``, the JSON body's
class with ``QwenXmlCall`` put first), which reads the rest of the call. The
JSON form pays nothing for it per delta: no test of its own on any path a
JSON delta takes.

The element machine:

=======  ==================================  =====================================
state    looks for                           then
=======  ==================================  =====================================
FUNC     ``<function=NAME>``                 FBODY; ``CallStart`` if the tool is
                                             known (else ``unknown_tool`` at the
                                             close, as in the JSON form)
FBODY    ``<parameter=P>``, ``</function>``  PARAM; AFTER
PARAM    ``</parameter>``                    FBODY
AFTER    ``</tool_call>``                    the call ends (also at prose on a
                                             line of its own: ``calls.prose_line``)
SKIP     ``</tool_call>``                    the call ends as ``CallError``
JARGS    the end of a JSON object            FBODY (AFTER after ``FNAME``)
FNAME    ``</function>``                     FBODY, the element's text the name
=======  ==================================  =====================================

The arguments may be one JSON object instead of parameter elements, as
``<function=NAME>{…}</function>`` (Llama 3.1's function form, LocalAI's) or
``<function>NAME</function>`` and the object after it (Gemma 3, Qwen3.6:
madroidmaq/mlx-omni-server#126); they were ``malformed``. The object is read by
the JSON dialects' scanner (``JARGS``: a ``</function>`` in one of its strings
is content) and streamed as written, as in the JSON form.

Outside a parameter, tags are read whole (a ``<`` waits for its ``>``, at most
``TAG_LIMIT`` characters) and only whitespace may stand between them.
Parameter values are read as ``am_xml`` reads element values
(``xml_values.ParamValues``, the same code): typed by the tool's schema, string
values streamed as they grow, one newline right after ``<parameter=P>`` and
one right before ``</parameter>`` layout (vLLM's ``qwen3_coder`` parser drops
the same two). Unlike ``am_xml``, a value is the text as written: Qwen3-Coder
escapes nothing (code with ``a < b && c`` in it), so there are no entities and
no CDATA, and only ``</parameter>`` ends a value: ``</function>`` and
``</tool_call>`` in one are content. Where the model left ``</parameter>`` out
(Qwen models do, in long contexts), a ``<parameter=NAME>`` at a line's start
naming a parameter the tool declares and not given yet ends the value and
begins that parameter (``_next_param``), and ``</function>``, layout and
``</tool_call>`` ending the reply end the value and the call (held until
more text shows they do not). The arguments' ``}`` goes out at
``</function>``; the call ends at ``</tool_call>`` (also ``</tool_call >``),
or at ``end("stop")`` after ``</function>`` (the provider removed the stop
marker); chat-template special tokens (``<|im_end|>``) after ``</function>``
are layout. Another ``<function=…>`` there is the block's next call (several
calls in one block, as the JSON form allows), this one complete as if its
closing marker had come, the next one's raw text from its ``<``.

A parameter written ``<parameter=NAME=VALUE</parameter>`` (the ``>`` left out, an
``=`` before the value: Qwen3-Coder writes it so in OpenHands, QwenLM/Qwen3-Coder#457)
is that parameter with that value, which it plainly means (a value with ``<`` or
``>`` in it, or longer than a tag may be, stays out of place). So is a tag whose
``>`` was left out where the name ends its line (``<parameter=path`` + newline +
the value, ``<function=search`` + newline: Qwen3-Coder and Qwen3.6 write it in
long runs, ml-explore/mlx-lm#1881, #1811): the end of line is the value's layout.

Broken forms are ``CallError`` with the call's raw text: a body that begins
with no ``<function=…>`` (``malformed``, the JSON form's message, which the
prompt teaches), a ``<parameter=…>`` outside the function or anything else out
of place (``malformed``, then the rest up to ``</tool_call>`` is the error's,
as after a JSON error), ``</tool_call>`` before ``</function>`` (``malformed``:
the function was not closed), a parameter given twice (``malformed``, as in
``am_xml``), ``<tool_call>`` between the elements (``unterminated``, the next
call opens; after ``</function>`` the call is complete there, as it is before
prose on the next line, and so is GLM's form after its name or a value), a
reply cut off inside (``unterminated``).

``am_xml`` reads this form too, where Qwen3-Coder models write it out of
habit: ``QwenXmlBody`` is the machine alone, from ``<tool_call>`` on (a
stuttered ``<tool_call>`` markup, as in ``hermes``), with no JSON form.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from streamtools.events import CallErrorReason, ParserEvent
from streamtools.parser.am_xml_fast import TAG_LIMIT
from streamtools.parser.calls import (
    DONE,
    NEVER_HOLDS,
    PROVIDER_STOP,
    RUNNING,
    SPECIAL_TOKEN,
    Call,
    CallBody,
    CallContext,
    Holds,
    prose_line,
)
from streamtools.parser.catalog import tool_named
from streamtools.parser.envelope import Envelope
from streamtools.parser.jsonscan import CONTROL, ValueScanner
from streamtools.parser.xml_glm import (
    GKEY,
    GLM_EXAMPLE,
    GNAME,
    GVALUE,
    KEY_OPEN,
    NAME_START,
    VALUE_END,
    GlmForm,
)
from streamtools.parser.xml_values import (
    PARAMETER_IS,
    ParamValues,
    equals_tag,
    kinds_from_schema,
)

__all__ = ["CLOSE", "LOOSE_CLOSE", "OPEN", "QwenXmlBody", "QwenXmlCall"]

OPEN, CLOSE = "<tool_call>", "</tool_call>"
FUNCTION, FUNCTION_END, PARAMETER_END = "<function=", "</function>", "</parameter>"
NEXT_PARAMETER = "<parameter="
# the end of a call in a value whose </parameter> the model left out: </function>,
# layout, </tool_call> (or the stream's end; or Qwen's end-of-turn token, layout
# after a call as in the closed form), layout; at most this long
IM_END = "<|im_end|>"
_FUNCTION_TAIL = re.compile(
    r"</function>[ \t\r\n]{0,8}(?:(?:</tool_call>|<\|im_end\|>)[ \t\r\n]{0,8})?"
)
_TAIL_MAX = len(FUNCTION_END) + 8 + len("</tool_call>") + 8
# the end of a call in a value whose </parameter> was left out, when the block's next
# call follows: </function>, layout, <function=NAME> (NAME a tool of the catalog)
_FUNCTION_NEXT = re.compile(r"</function>[ \t\r\n]{0,8}<function=([^<>\s]*)(>?)")
_ARRIVING = re.compile(  # its start, still arriving at the end of a delta
    r"</function>[ \t\r\n]{0,8}(?:<(?:f(?:u(?:n(?:c(?:t(?:i(?:o(?:n)?)?)?)?)?)?)?)?)?"
)
# the machine's states (see above); CUT: a new call began, this one ends unterminated;
# NEXT: the block's next call begins; JARGS: a JSON arguments object; FNAME: the
# tool's name in <function>NAME</function>
FUNC, FBODY, PARAM, AFTER, SKIP, CUT, NEXT, JARGS, FNAME = range(9)
NAME_OPEN = "<function>"
_FUNCTION_IS = equals_tag("function")
# a parameter written with its value after a second "=" and no ">" (Qwen3-Coder in
# OpenHands writes it often: QwenLM/Qwen3-Coder#457), read as the tag it stands for;
# a "<" or ">" in the value, or one longer than a tag may be, stays out of place
_JOINED = re.compile(r"""<parameter=["']?([^\s"'<>=/]+)["']?=([^<>]*)</parameter>\Z""")
# a function's or parameter's tag whose ">" was left out, the name ending its line
# (Qwen3-Coder and Qwen3.6 write it so: ml-explore/mlx-lm#1811, #1881): the tag
# it stands for, the end of line the value's layout (the decision waits for the
# "\n": whatever the cuts, it is made on the same text)
_UNENDED = re.compile(r"""<(function|parameter)=["']?([^\s"'<>=/]+)["']?[ \t]*(?=\r?\n)""")
# </tool_call> with whitespace before its ">", as XML allows (at most 8 characters,
# so a run of them is not held on and on): in both forms
LOOSE_CLOSE = re.compile(r"</tool_call[ \t\r\n]{1,8}>")
_EXAMPLE = (
    " Write <tool_call>\n<function=TOOL>\n<parameter=PARAM>\nvalue\n</parameter>\n"
    "</function>\n</tool_call>, one <parameter=…> element per parameter."
)


def _ends_call(after: str) -> bool:
    """Whether the text after a ``</function>`` in a value may still be the rest
    of ``_FUNCTION_TAIL`` (held until the stream's end or more text shows)."""
    rest = after.lstrip(" \t\r\n")
    if len(after) - len(rest) > 8:
        return False
    if CLOSE.startswith(rest) or IM_END.startswith(rest):
        return True
    end = CLOSE if rest.startswith(CLOSE) else IM_END if rest.startswith(IM_END) else ""
    return bool(end) and len(rest) - len(end) <= 8 and not rest[len(end) :].strip()


class QwenXmlCall(ParamValues, GlmForm):
    """The element machine of a ``hermes`` call in Qwen3-Coder's form (see the
    module docstring): the first base of ``hermes.HermesXmlBody``."""

    # the body's state, kept by ``CallBody`` and ``JsonCallBody``
    ctx: CallContext
    status: int
    raw: list[str]
    size: int
    holds: Holds
    env: Envelope
    failure: tuple[CallErrorReason, str] | None
    json_message: str  # what a body that is neither form is told (the JSON form's words)
    record: Callable[[str, int, int], None]  # (``CallBody``'s)
    raw_text: Callable[[], str]

    param_state = PARAM
    body_state = FBODY
    skip_state = SKIP
    ends_here = False  # (``begin_xml``)

    def begin_xml(self) -> None:
        """Start reading the call in this form, at the ``<`` that chose it."""
        self.state = FUNC
        self.ends_here = False  # the call ends complete where the text after it begins
        self.param_state = PARAM  # (GLM's form has its own: ``xml_glm``)
        self.holds = NEVER_HOLDS
        self.streaming = 0
        self.failure = None
        self._start_values()
        self._start_json()

    def _start_json(self) -> None:
        self.scanner: ValueScanner | None = None  # the JSON arguments, once they begin
        self.name_element = False  # named by <function>NAME</function>

    # -- the ``JsonCallBody`` methods this form replaces ------------------------------

    def prefix(self, s: str, i: int) -> int:
        return i  # (the JSON machine that chose this form asks once more: nothing)

    # the raw text the call's machine recorded, kept aside by ``HermesXmlBody.take_over``
    # while the JSON machine's ``feed`` that handed the call over records it again
    kept: tuple[list[str], int] | None = None

    def _settle(self) -> None:
        # (``streaming`` is kept by ``ParamValues``): only the end of that ``feed``
        # gets here, having recorded what it handed over; the call's raw text is
        # the one its machine recorded (from the next call's ``<function=`` on, if
        # the block's first call ended)
        kept = self.kept
        if kept is not None:
            self.raw, self.size = kept
            self.kept = None

    def fast(self, delta: str) -> list[ParserEvent] | None:
        return None  # plain value text takes the core's lane; the rest, the machine

    def feed(self, s: str, pos: int, out: list[ParserEvent]) -> int:
        self.out = out
        i, n = pos, len(s)
        while i < n:
            state = self.state
            if state == PARAM:
                j = self._param(s, i)
            elif state == JARGS:
                j = self._json_args(s, i)
            elif state == FNAME:
                j = self._name_element(s, i)
            elif state >= GNAME:
                j = self._glm(s, i)  # GLM's form (``xml_glm``)
            elif state == SKIP:
                j = s.find(CLOSE, i)
                if j >= 0:
                    j = -(j + len(CLOSE))
                else:  # the closing tag's start, still arriving, held
                    j = max(i, n - len(CLOSE) + 1)
                    while j < n and not CLOSE.startswith(s[j:]):
                        j += 1
            else:
                j = self._tags(s, i)
            if j < 0 or self.state == CUT:  # the call ends (its closing tag, a new call)
                j = -j if j < 0 else j
                self.record(s, pos, j)
                self._close_call()
                return j
            if self.state == NEXT:  # the block's next call
                self.record(s, pos, j)
                self.state = AFTER
                self._close_call()
                self._next_in_block(out)
                pos = i = j
                continue
            if j == i and self.state == state:
                break  # needs more input
            i = j
        self.record(s, pos, i)
        return i

    def _tags(self, s: str, i: int) -> int:
        """FUNC, FBODY, AFTER: whitespace, then one whole tag."""
        n = len(s)
        while i < n and s[i] in " \t\r\n":
            i += 1
        if i == n:
            return i
        state = self.state
        if s[i] == "{" and state == FBODY and not self.params and self.scanner is None:
            self.scanner = ValueScanner()  # the arguments as one JSON object
            self.state = JARGS
            return i
        if state == FUNC and s[i] in NAME_START:
            self.begin_glm()  # GLM's form: the name first (``xml_glm``)
            return i
        if s[i] != "<":
            if state == AFTER and prose_line(self.raw, s, 0, i):
                # </tool_call> left out, prose on the next line: the call ended at
                # </function> (and its layout), the prose is text (``calls.prose_line``;
                # ``s`` holds no text before the call's here: whitespace back to its
                # start came in this delta, after the call's earlier text)
                self.ends_here = True
                self.state = CUT
                return i
            # quoted up to the next tag, at most 40 characters (so the same whatever the cut)
            k = s.find("<", i, i + 40)
            if k < 0 and n - i < 40:
                return i  # wait for them
            return self._wrong(i, f"Text {s[i : k if k >= 0 else i + 40].rstrip()!r}")
        e = s.find(">", i, i + TAG_LIMIT + 1)
        line = s.find("\n", i, e if e >= 0 else i + TAG_LIMIT + 1)
        if line >= 0 and (
            state == FUNC or (state == FBODY and self.param_state == PARAM and not self.scanner)
        ):
            unended = _UNENDED.match(s, i, line + 1)
            if unended is not None and (unended.group(1) == "function") == (state == FUNC):
                # <parameter=path\n/tmp/x: the ">" left out; the end of line is layout
                if state == FUNC:
                    self._named(unended.group(2))
                else:
                    self._open_param(unended.group(2), "parameter")
                return unended.end()
        if e < 0:
            if n - i > TAG_LIMIT:
                return self._wrong(i, f"Text {s[i : i + 40]!r} (a tag with no >)")
            return i  # the tag still arriving: wait
        tag = s[i : e + 1]
        if tag == CLOSE or LOOSE_CLOSE.fullmatch(tag) is not None:
            return -(e + 1)
        if tag == OPEN and (state == AFTER or (state == FBODY and self.param_state == GVALUE)):
            # </tool_call> left out before the next call: complete at </function>, as
            # before prose (above), or in GLM's form after its name or last value
            self.ends_here = True
            self.state = CUT
            return i
        if tag == OPEN and state != FUNC:
            self.failure = (
                "unterminated",
                f"The call to {self.call.name or 'the tool'} was not closed before the next "
                f"call began. End every call with {CLOSE}.",
            )
            self.state = CUT
            return i  # the new call's marker is left for the core
        if state == FBODY and self.param_state == GVALUE:  # GLM's form: keys only
            if tag == KEY_OPEN:
                self.state = GKEY
                return e + 1
            if tag == VALUE_END:
                return e + 1  # a stray closing token, no value open: layout (``xml_glm``)
        elif state == FBODY:
            q = PARAMETER_IS.match(tag) if self.scanner is None else None
            if q is not None:
                self._open_param(q.group(1), "parameter")
                return e + 1
            q = _JOINED.match(tag) if self.scanner is None else None
            if q is not None:  # <parameter=command=create</parameter>
                self._open_param(q.group(1), "parameter")
                if q.group(2):
                    self._content(q.group(2))
                self._close_param()
                return e + 1
            if tag == FUNCTION_END:
                self.state = AFTER
                if self.params:
                    self.call.add_args("}", self.out)
                return e + 1
        elif state == AFTER:
            if SPECIAL_TOKEN.fullmatch(tag) is not None:
                return e + 1  # <|im_end|>: layout, as in the JSON form
            f = _FUNCTION_IS.match(tag)
            if f is not None:  # the block's next call: ``feed`` ends this one first
                self.state = NEXT
                return i
        else:  # FUNC
            f = _FUNCTION_IS.match(tag)
            if f is not None:
                self._named(f.group(1))
                return e + 1
            if tag == OPEN:
                return e + 1  # a stutter, part of the markup (``hermes``' prefix takes it)
            if tag == NAME_OPEN:
                self.state = FNAME
                return e + 1
            if tag.startswith(FUNCTION):  # ``<function=>``, ``<function=my tool>``
                self.failure = (
                    "malformed",
                    f"The tag {tag[:40]!r} names no tool: write the tool's name right after "
                    f"the =, as <function=TOOL>.{_EXAMPLE}",
                )
                self.state = SKIP
                return i
            if PARAMETER_IS.match(tag) is None:
                self.failure = ("malformed", self.json_message)
                self.state = SKIP
                return i
        return self._wrong(i, f"The tag {tag[:40]!r}")

    def _json_args(self, s: str, i: int) -> int:
        """JARGS: the arguments as JSON (``<function=NAME>{…}</function>``, or
        after ``<function>NAME</function>``), streamed as written, read by the
        JSON dialects' scanner (a ``</function>`` in a string is content)."""
        scanner = self.scanner
        assert scanner is not None
        j = scanner.feed(s, i)
        if j > i:
            self.call.add_args(s[i:j], self.out)
        while scanner.error is CONTROL:  # a raw newline in a string: escaped
            self.call.add_args(scanner.take_control(s[j]), self.out)
            i = j + 1
            j = scanner.feed(s, i)
            if j > i:
                self.call.add_args(s[i:j], self.out)
        if scanner.error is not None:
            self.failure = (
                "invalid_json",
                f"The arguments of {self.call.name} are not valid JSON ({scanner.error}). "
                "Write them as one JSON object with double-quoted keys and strings.",
            )
            self.state = SKIP
            return j
        if scanner.done:
            self.state = AFTER if self.name_element else FBODY
        return j

    def _name_element(self, s: str, i: int) -> int:
        """FNAME: ``<function>NAME</function>``, the tool's name as the element's
        text (Gemma 3 and Qwen3.6 write it so, the arguments a JSON object after
        it: madroidmaq/mlx-omni-server#126)."""
        k = s.find(FUNCTION_END, i, i + 256 + len(FUNCTION_END))
        if k < 0 and len(s) - i < 256 + len(FUNCTION_END):
            return i  # the name still arriving
        name = s[i:k].strip() if k >= 0 else ""
        if not name or any(c in name for c in " \t\r\n<>"):
            self.failure = (
                "malformed",
                f"<function>…</function> must hold the tool's name alone.{_EXAMPLE}",
            )
            self.state = SKIP
            return i
        self.name_element = True
        self._named(name)
        return k + len(FUNCTION_END)

    def _named(self, name: str) -> None:
        self.state = FBODY
        self.call.named(name, self.out)
        if self.call.started:
            self.kinds = kinds_from_schema(self.ctx.catalog.schema(self.call.name or name))

    def _wrong(self, i: int, what: str) -> int:
        """``what`` at ``i`` is out of place: the call fails, and the rest up to
        ``</tool_call>`` is its raw text."""
        state = self.state
        where = (
            "before <function=…>" if state == FUNC
            else f"after {FUNCTION_END}" if state == AFTER
            else f"between the parameters of {self.call.name}"
        )
        self.failure = ("malformed", f"{what} {where} is out of place.{self._example()}")
        self.state = SKIP
        return i

    def _example(self) -> str:
        """The form to show the model: GLM's for a call it wrote in GLM's form."""
        return GLM_EXAMPLE if self.param_state == GVALUE else _EXAMPLE

    def _param(self, s: str, i: int) -> int:
        k = s.find(PARAMETER_END, i)
        n = len(s)
        end = n if k < 0 else k
        # what ends the value first in the text decides (so any cut decides alike):
        # the next parameter's tag, or </function> and the block's next call
        start = i
        f = s.find(FUNCTION_END, i, end)
        while f >= 0:
            p = s.find(NEXT_PARAMETER, start, f)
            if p >= 0:
                j = self._next_param(s, i, f, p)
                if j >= 0:
                    return j
            j = self._next_call(s, i, f)
            if j >= 0:
                return j
            start = f
            f = s.find(FUNCTION_END, f + 1, end)
        p = s.find(NEXT_PARAMETER, start, end)
        if p >= 0:
            j = self._next_param(s, i, end, p)
            if j >= 0:
                return j
        if k >= 0:
            if k > i:
                self._content(s[i:k])
            self._close_param()
            return k + len(PARAMETER_END)
        # the end, if it may begin the closing tag, is held until it shows (the next
        # parameter's tag and the function's end, when this one's was left out, too)
        k = s.rfind(FUNCTION_END, max(i, n - _TAIL_MAX))
        if k < 0 or not _ends_call(s[k + len(FUNCTION_END) :]):
            k = s.find("<", max(i, n - len(PARAMETER_END) + 1))
            while k >= 0 and not (
                PARAMETER_END.startswith(s[k:])
                or NEXT_PARAMETER.startswith(s[k:])
                or FUNCTION_END.startswith(s[k:])
            ):
                k = s.find("<", k + 1)
            if k < 0:
                k = n
        if k > i:
            self._content(s[i:k])
        return k

    def _next_call(self, s: str, i: int, f: int) -> int:
        """``</function>``, layout and ``<function=NAME>`` in the value ``s[i:]``
        (``s[f]`` begins a ``</function>``), NAME a tool of the catalog:
        the model left this value's ``</parameter>`` out before the block's next
        call (vLLM's qwen3_coder ends a value at ``</function>``). The value ends
        before the ``</function>``, which ends the call as it would after
        ``</parameter>``. Returns where the machine resumes (at the
        ``</function>``, or at one that may still become this, held), or -1."""
        n = len(s)
        m = _FUNCTION_NEXT.match(s, f)
        if m is not None and len(m.group(1)) <= TAG_LIMIT:
            if m.group(2):  # the next call's tag whole
                if not m.group(1) or tool_named(self.ctx.catalog, m.group(1)) is None:
                    return -1  # (no name: no call, whatever the catalog takes)
                if f > i:
                    self._content(s[i:f])
                self._close_param()
                return f
            if m.end() < n:
                return -1
        elif n - f > len(FUNCTION_END) + 8 + len(FUNCTION) or _ARRIVING.fullmatch(s, f) is None:
            return -1
        if f > i:  # </function> and layout, the next call's tag still arriving: held
            self._content(s[i:f])
        return f

    def _next_param(self, s: str, i: int, end: int, p: int) -> int:
        """A ``<parameter=NAME>`` tag at a line's start in the value ``s[i:end]``
        begins the next parameter when NAME is one the tool declares (any, without
        a schema) and is not given yet: the model left this value's
        ``</parameter>`` out (Qwen models do, in long contexts), and this value
        ends before the tag, its newline layout. It was content, the next
        parameter silently lost in this one (vLLM, Ollama and LightLLM end a value
        at the next tag too). Returns where the value's text resumes: after the
        tag (the next parameter open), at a tag still arriving (held), or -1;
        ``s[p]`` begins the first ``<parameter=`` in it."""
        while p >= 0:
            if self._line_start(s, i, p):
                e = s.find(">", p, min(end, p + TAG_LIMIT + 1))
                if e < 0:
                    if end == len(s) and end - p <= TAG_LIMIT:
                        if p > i:
                            self._content(s[i:p])
                        return p  # the tag still arriving: wait
                    return -1
                q = PARAMETER_IS.match(s[p : e + 1])
                if q is not None and self._undeclared_yet(q.group(1)):
                    if p > i:
                        self._content(s[i:p])
                    self._close_param()
                    self._open_param(q.group(1), "parameter")
                    return e + 1
            p = s.find(NEXT_PARAMETER, p + 1, end)
        return -1

    def _close_call(self) -> None:
        """The call's text is all in ``raw``: its last event."""
        if self.ends_here:  # (``CUT`` took the text after it back to the core)
            self.state = FBODY if self.param_state == GVALUE else AFTER  # (GLM's: FBODY)
        self.status = DONE
        self.streaming = 0
        raw = self.raw_text()
        out = self.out
        if self.failure is not None:
            self.call.fail(raw, *self.failure, out)
        elif self.bad is not None:
            self.call.fail(raw, "malformed", self.bad, out)
        elif self.state == FUNC:
            self.call.fail(raw, "malformed", self.json_message, out)
        elif self.state == FBODY and self.param_state == GVALUE:  # GLM's form: complete
            if self.params:
                self.call.add_args("}", out)
            self.call.complete(raw, out, example=GLM_EXAMPLE)
        elif self.state != AFTER:
            self.call.fail(
                raw, "malformed",
                f"The function {self.call.name} was not closed: end it with {FUNCTION_END} "
                f"before {CLOSE}.{_EXAMPLE}", out,
            )
        else:
            self.call.complete(raw, out, example=_EXAMPLE)
        self._let_go()

    def _let_go(self) -> None:
        self.env.detach()  # (``hermes``: the envelope lets go of the body)

    def _next_in_block(self, out: list[ParserEvent]) -> None:
        """Another ``<function=…>`` after ``</function>``: a new call in the same
        block (``status`` running again, a fresh ``Call``, nothing in ``raw``)."""
        self.status = RUNNING
        self.raw = []
        self.size = 0
        self.call = Call(self.ctx)
        self.out = out
        self.state = FUNC
        self._start_values()
        self._start_json()

    def end(self, tail: str, finish_reason: str, out: list[ParserEvent]) -> str | None:
        self.out = out
        self.record(tail, 0, len(tail))
        if (
            self.state == PARAM
            and _FUNCTION_TAIL.fullmatch(tail) is not None
            and (CLOSE in tail or finish_reason in PROVIDER_STOP)
        ):
            # the reply ends with the function's end in a value the model did not
            # close (vLLM's qwen3_coder lost the value): it ends there, as the call
            self._close_param()
            self.state = AFTER
            self.call.add_args("}", out)
            self._close_call()
            return None
        rest = tail.strip()
        if rest and rest[0] != "<" and (self.state == FBODY or self.state == AFTER):
            self._wrong(0, f"Text {rest!r}")  # as ``_tags`` says once it has seen enough
        if (
            (self.state == AFTER or (self.state == FBODY and self.param_state == GVALUE))
            and finish_reason in PROVIDER_STOP and (not rest or CLOSE.startswith(rest))
        ) or (self.state == SKIP and self.failure is not None):
            self._close_call()  # the provider removed </tool_call> as a stop string
            return None
        if self.state == GNAME and finish_reason in PROVIDER_STOP and self.glm_named():
            self._close_call()  # a call without arguments, </tool_call> removed as a stop
            return None
        if self.state == GNAME:  # (no <arg_key> or </tool_call> yet: maybe prose)
            self.failure = ("malformed", self.json_message)
        elif self.state != FUNC or rest.startswith(FUNCTION) or FUNCTION.startswith(rest):
            # (else, in FUNC: ``_close_call`` says what a body must hold)
            where = f" inside <parameter={self.pname}>" if self.state == PARAM else ""
            self.failure = (
                "unterminated",
                f"The call to {self.call.name or 'the tool'} was cut off{where} before "
                f"{CLOSE}.{self._example()}",
            )
        self._close_call()
        return None


class QwenXmlBody(QwenXmlCall, CallBody):
    """A call in Qwen3-Coder's form in a dialect whose own form is another
    (``am_xml``, whose Qwen3-Coder models write their native form out of habit):
    the element machine from the ``<tool_call>`` marker on, no JSON form (a body
    that does not begin with ``<function=…>`` is ``malformed``)."""

    failure: tuple[CallErrorReason, str] | None = None
    json_message = f"<tool_call> must hold one <function=TOOL> element.{_EXAMPLE}"

    def __init__(self, ctx: CallContext, marker: str) -> None:
        CallBody.__init__(self, ctx, marker)
        self.call = Call(ctx)
        self.out = []
        self.begin_xml()

    def _let_go(self) -> None:
        pass  # (no envelope)
