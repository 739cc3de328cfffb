"""GLM's call form inside ``<tool_call>``: the name, then ``<arg_key>``/``<arg_value>`` pairs.

Theory of operation
-------------------
GLM-4.5 and later (GLM-4.6, 4.7, 5) write a call, in their chat template's
special tokens, as::

    <tool_call>get_weather
    <arg_key>city</arg_key>
    <arg_value>Paris</arg_value>
    </tool_call>

the same outer tags as ``hermes`` but not JSON (``<tool_call>list_mailboxes
</tool_call>`` for a tool without parameters: osaurus-ai/vmlx-swift#228). A GLM
model given ``hermes``' prompt writes it out of habit, as Qwen3-Coder writes its
own form; it was ``CallError(malformed)``, telling the model to write one JSON
object. ``GlmForm`` is a part of ``hermes_xml``'s machine (a base of
``QwenXmlCall``), so ``hermes`` and ``am_xml``'s ``<tool_call>`` read it: a body
whose first character is a name's (a letter or ``_``) is this form.

=======  ==========================================  ================================
state    looks for                                   then
=======  ==========================================  ================================
GNAME    the name (name characters, at most 256),    FBODY (``CallStart``); anything
         up to the first ``<``                       else in it: ``malformed``
FBODY    ``<arg_key>``, ``</tool_call>``             GKEY; the call ends
GKEY     ``</arg_key>`` (the key, at most 256)       GOPEN
GOPEN    ``<arg_value>``, or a value's first text    GVALUE
GVALUE   ``</arg_value>``                            FBODY
=======  ==========================================  ================================

A value is read as ``am_xml`` and Qwen3-Coder values are (``xml_values``: typed
by the tool's schema, a string streamed as it grows); GLM's template writes a
string as it is and any other value as JSON, which is what that reads. Only
``</arg_value>`` ends a value. A closing token repeated where nothing is open
(``</arg_key></arg_key><arg_value>``, GLM-4.7 in vllm-project/vllm#54971;
``<tool_call>tool_12</arg_value></tool_call>``, GLM 5.2 on calls without
arguments, fw-ai-external/python-sdk#119) closes nothing and is layout: it was
``malformed``, the call lost for a stray token the model cannot be told to
avoid. A value written without its opening ``<arg_value>``
(``</arg_key>how many days</arg_value>``: GLM-4.7-family models under load,
vllm-project/vllm#49248) is the value, read from its first character other
than whitespace (one that is not ``<``) to ``</arg_value>``: it was
``malformed``, the call lost. Without its opening tag such a value ends at any
of the form's tags: ``</tool_call>``, ``<arg_key>`` or ``<arg_value>`` before
``</arg_value>`` means no value was written where one is due (``malformed``,
as before). Anything else out of place is ``malformed`` with the
call's raw text, as in Qwen3-Coder's form; what this module finds wrong once the
name is read (text where ``<arg_value>`` is due, a key too long) shows GLM's form
as the example (``GLM_EXAMPLE``), not Qwen3-Coder's: the model wrote this one.
A ``<tool_call>`` in FBODY (the model left ``</tool_call>`` out and began its
next call) ends the call there as ``</tool_call>`` would (``hermes_xml``'s
``ends_here``), as in the JSON and Qwen3-Coder forms; inside a key or a value it
is content, as any tag but the one that ends it is.
A reply the provider stopped at ``</tool_call>`` (the stop marker) right after a
tool's name completes that call without arguments (``glm_named``), as it
completes one after its last value: ``<tool_call>list_mailboxes`` was
``malformed``, so a tool without parameters could not be called in GLM's form
where ``</tool_call>`` is a stop string.

Core package: standard library only.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from streamtools.events import CallErrorReason, ParserEvent
from streamtools.parser.catalog import tool_named

if TYPE_CHECKING:
    from streamtools.parser.calls import Call

__all__ = [
    "GKEY", "GLM_EXAMPLE", "GNAME", "GOPEN", "GVALUE", "GlmForm", "KEY_OPEN", "NAME_START",
    "VALUE_END",
]

GNAME, GKEY, GOPEN, GVALUE = range(9, 13)  # (after ``hermes_xml``'s states)
KEY_OPEN, KEY_END = "<arg_key>", "</arg_key>"
VALUE_OPEN, VALUE_END = "<arg_value>", "</arg_value>"
_LIMIT = 256
# where a value written without its opening tag ends (``GlmForm._glm_bare``)
_BARE_END = re.compile(r"</arg_value>|</tool_call>|<arg_(?:key|value)>")
_BARE_TAGS = ("</arg_value>", "</tool_call>", "<arg_key>", "<arg_value>")
_NAME = re.compile(r"[A-Za-z_][\w.\-:]*\Z")
# the first character of a name: a body beginning so is this form
NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
GLM_EXAMPLE = (
    " Write <tool_call>TOOL\n<arg_key>PARAM</arg_key>\n<arg_value>value</arg_value>\n"
    "</tool_call>, one <arg_key> and <arg_value> pair per parameter."
)


class GlmForm:
    """The GLM half of ``hermes_xml.QwenXmlCall``'s machine (see above)."""

    # the machine's state and its ``ParamValues``/``QwenXmlCall`` methods
    state: int
    param_state: int
    skip_state: int  # (``hermes_xml``'s SKIP: the rest up to </tool_call> is the error's)
    out: list[ParserEvent]
    json_message: str
    failure: tuple[CallErrorReason, str] | None
    glm_text = ""  # the name or key read so far
    glm_bare = False  # the open value was written without <arg_value>
    streaming: int  # (``xml_values``: the core's lane)

    if TYPE_CHECKING:
        call: Call

        def _named(self, name: str) -> None: ...
        def _open_param(self, name: str, element: str) -> None: ...
        def _content(self, text: str) -> None: ...
        def _close_param(self) -> None: ...
        def _wrong(self, i: int, what: str) -> int: ...

    def begin_glm(self) -> None:
        """The body is GLM's form, from its name on."""
        self.state = GNAME
        self.param_state = GVALUE  # (``ParamValues`` opens a value in it)
        self.glm_text = ""

    def _glm(self, s: str, i: int) -> int:
        """GNAME, GKEY, GOPEN, GVALUE (see the module docstring)."""
        state = self.state
        if state == GVALUE:
            return self._glm_value(s, i)
        if state == GOPEN:
            n = len(s)
            while i < n and s[i] in " \t\r\n":
                i += 1
            if s.startswith(VALUE_OPEN, i):
                key, self.glm_text = self.glm_text, ""
                self._open_param(key, "arg_value")
                self.glm_bare = False
                return i + len(VALUE_OPEN)
            if s.startswith(KEY_END, i):
                return i + len(KEY_END)  # the key's closing token again: layout
            if i == n or VALUE_OPEN.startswith(s[i:]) or KEY_END.startswith(s[i:]):
                return i  # still arriving
            if s[i] != "<":  # the value without its opening tag (see above)
                key, self.glm_text = self.glm_text, ""
                self._open_param(key, "arg_value")
                self.glm_bare = True
                return i
            return self._glm_wrong(
                i, f"Text where {VALUE_OPEN} is due after {KEY_END} in the call to {self.call.name}"
            )
        end = "<" if state == GNAME else KEY_END
        k = s.find(end, i)
        piece = s[i:] if k < 0 else s[i:k]
        if k < 0 and state == GKEY:  # (a closing tag's start at the end: held)
            cut = s.rfind("<", max(i, len(s) - len(KEY_END) + 1))
            if cut >= 0 and KEY_END.startswith(s[cut:]):
                piece = s[i:cut]
                k = cut
        self.glm_text += piece
        text = self.glm_text.strip()
        if state == GKEY and len(self.glm_text) > _LIMIT:
            return self._glm_wrong(i, f"A key in <arg_key> longer than {_LIMIT} characters")
        if len(self.glm_text) > _LIMIT or (state == GNAME and text and not _NAME.match(text)):
            self.failure = ("malformed", self.json_message)  # (a name so: maybe not this form)
            self.state = self.skip_state
            return i
        if k < 0 or (state == GKEY and not s.startswith(KEY_END, k)):
            return len(s) if k < 0 else k
        self.glm_text = ""
        if state == GNAME:
            if not text:
                self.failure = ("malformed", self.json_message)
                self.state = self.skip_state
                return k
            self._named(text)
            return k
        self.glm_text = text  # the key, until its value opens
        self.state = GOPEN
        return k + len(KEY_END)

    def glm_named(self) -> bool:
        """At the end of a reply the provider stopped at ``</tool_call>`` (the stop
        marker), in GNAME: whether the text so far is the name of a tool of the
        catalog alone (``<tool_call>list_mailboxes``, a call without arguments
        cut so); if so the call is named, and complete with none. Any other text
        there may be prose, and stays ``malformed``."""
        name = self.glm_text.strip()
        if not _NAME.match(name) or tool_named(self.call.ctx.catalog, name) is None:
            return False
        self.glm_text = ""
        self._named(name)
        return True

    def _glm_wrong(self, i: int, what: str) -> int:
        """``what`` at ``i`` is out of place: the call fails with GLM's form as the
        example, and the rest up to ``</tool_call>`` is its raw text."""
        self.failure = ("malformed", f"{what} is out of place.{GLM_EXAMPLE}")
        self.state = self.skip_state
        return i

    def _glm_value(self, s: str, i: int) -> int:
        """GVALUE: the value's text up to ``</arg_value>`` (its start at the end held)."""
        if self.glm_bare:
            return self._glm_bare(s, i)
        k = s.find(VALUE_END, i)
        if k >= 0:
            if k > i:
                self._content(s[i:k])
            self._close_param()
            return k + len(VALUE_END)
        n = len(s)
        cut = s.rfind("<", max(i, n - len(VALUE_END) + 1))
        if cut < 0 or not VALUE_END.startswith(s[cut:]):
            cut = n
        if cut > i:
            self._content(s[i:cut])
        return cut

    def _glm_bare(self, s: str, i: int) -> int:
        """GVALUE for a value written without ``<arg_value>``: its text up to
        ``</arg_value>``; any other of the form's tags first (``</tool_call>``,
        ``<arg_key>``, ``<arg_value>``) means no value was written where one is
        due, and the call is ``malformed`` as it was before this was read."""
        m = _BARE_END.search(s, i)
        k = len(s) if m is None else m.start()
        if m is None:  # (a tag's start at the end: held)
            cut = s.rfind("<", max(i, k - len(VALUE_END) + 1))
            if cut >= 0 and any(tag.startswith(s[cut:]) for tag in _BARE_TAGS):
                k = cut
        if k > i:
            self._content(s[i:k])
        if m is None:
            return k
        if m.group() == VALUE_END:
            self._close_param()
            return m.end()
        self.streaming = 0  # (the rest is the error's: not the core's lane)
        return self._glm_wrong(
            k, f"Text where {VALUE_OPEN} is due after {KEY_END} in the call to {self.call.name}"
        )
