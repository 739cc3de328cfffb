"""The ``am_xml`` dialect: ``<am:tool_call name="calculator"><a>5</a></am:tool_call>``.

Theory of operation
-------------------
Text mode looks for ``<am:tool_call``, ``<am:request_tools>`` and
``<tool_call>`` (Qwen3-Coder's form, below). The body is a small element machine:

=======  ==================================  =====================================
state    looks for                           then
=======  ==================================  =====================================
TAG      the ``>`` of the opening tag        BODY; the call starts if the tag has a
                                             ``name`` attribute
BODY     ``<`` of a child or closing tag     PARAM, or the call ends
PARAM    ``</NAME>``, ``<![CDATA[``, ``&``   BODY; CDATA; an entity is decoded
CDATA    ``]]>``                             PARAM
=======  ==================================  =====================================

Arguments are built as JSON text (``streamtools.parser.xml_values``) and streamed
as ``ArgsDelta``: ``{"a": "`` when a string parameter opens, its escaped content
as it grows, ``"`` when it closes, ``}`` when the call closes. Parameter kinds
come from the catalog's schema (``type: string`` streams, once its start
cannot be ``null`` if the schema allows null; any other type is emitted when
its element closes, as the element's JSON text, or as a string if
it is not JSON so that validation can say what is wrong; an object or array
written as nested elements, ``<address><city>Paris</city></address>`` or
``<tags><item>a</item></tags>``, is read by the schema: ``xml_nested``). Without a type (no
schema, a parameter it does not declare or types not) a value is the text the
model wrote, but an array, an object or ``null``: a start of ``[``, ``{`` or
``null`` is held until it closes and kept as JSON if it decodes; anything else
streams as a string at once (``<n>5</n>`` is ``"5"``). A schema that allows
several types, a number or literal among them (``int | str``), lets JSON
decide: a number, ``true`` or ``false`` is held and kept as JSON too. A CDATA
section says "text": a number or literal in one is a string (``<![CDATA[5]]>``
is ``"5"``), an array or object still JSON (it may need the section for a
``<`` in one of its strings).

String values are the element's text with XML entities decoded and CDATA
unwrapped; one newline (``\\n`` or ``\\r\\n``) directly after the opening tag
and one directly before the closing tag are layout, not content
(``<code>\\nx = 1\\n</code>`` is ``"x = 1"``). Typed values are stripped.
``<parameter name="a">…</parameter>`` (the tag the tool definitions use) is
accepted as parameter ``a``; an element that closes itself takes its value
from a ``value`` attribute (``<parameter name="q" value="cats"/>``,
``<q value="cats"/>``, written after the definitions' self-closing tags: it
was the empty string), else it is empty. ``<parameter=a>…</parameter>``, the
form Qwen3-Coder models are trained on, is parameter ``a`` too (it was a stray
tag: the call failed as malformed). A ``<parameters>`` (or ``<arguments>``, ``<args>``)
element around the parameter elements, as models trained on Anthropic's old
``<invoke><parameters>…`` format write, is markup (its closing tag too; left
open, ``</am:tool_call>`` still closes the call) when it is the call's first
element and the tool's schema names no parameter so: otherwise, and without a
schema, it is a parameter like any other (a tool may take a ``parameters``
value). A ``name`` attribute's value may be quoted or not
(``name=search``, as HTML allows), and only a ``name`` attribute of the tag
counts, not ``name=`` inside another attribute's value. Another attribute
that the tool's schema declares as a parameter (``<am:tool_call name="search"
q="cats"/>``, written the way the tool definitions write theirs) is that
parameter, read as its element would be (an element of it as well: given
twice); any other attribute is ignored. A call without a name is
``CallError(reason="malformed")`` saying to use the ``name`` attribute, and
quoting back a name the model put elsewhere (``<am:tool_call tool="x">``,
``<name>x</name>`` among the elements) in it. Inside a
parameter only its own closing tag ends it, so ``</am:tool_call>`` in a value is
content; but where the model left ``</parameter>`` out, a ``<parameter …>`` tag at
a line's start naming a declared parameter not given yet, or ``</NAME>`` closing
``<parameter name="NAME">`` before such a tag or the call's end, ends the value
(``_param_ends``). A closing tag may have whitespace before its ``>`` (``</q >``,
``</am:tool_call >``), as XML allows: at most 8 characters of it, so that a
run of them is not held on and on (``</q`` and a longer run is content). A
body with no child elements but a JSON object as its text is taken as the
arguments object.

Between, before and after the parameter elements only whitespace, comments
(``<!-- … -->``), declarations (not a CDATA section: text, which was dropped)
and chat-template special tokens (``<|im_end|>``,
Gemma 4's ``<turn|>``, DeepSeek's full-width ``<｜…｜>``: ``calls.SPECIAL_TOKEN``;
a server that does not strip them, a model ending its turn where
``</am:tool_call>`` is due) are allowed. Any other text there, or a stray
closing tag, means a value was cut short (``<a>{"s": "</a>"}</a>``: the value's
own ``</a>`` closed the element and ``"}`` fell outside) or is not where the
model meant it: the call ends as ``CallError(reason="malformed")`` naming the
text and the element it follows, and saying to put every value in its element
and a value containing the closing tag in CDATA. So no character the model wrote
inside a call is silently dropped from its arguments; the ``ArgsDelta`` already
streamed stay as they were (append-only) and the error supersedes them.

A parameter given twice (``<q>a</q><q>b</q>``, a list written as repeated
elements) is ``malformed`` too, saying to write a list as one JSON array: the
arguments would hold the last value only, the first silently lost (as the
JSON dialects refuse arguments given twice).

A new ``<am:tool_call …>`` after an open call's elements, each closed (the
model left ``</am:tool_call>`` out and began its next call, as models leave the
closing tag out before the next call in ``hermes``), ends the open one as
``</am:tool_call>`` would there (complete, or failed for what it holds) and
starts the new one. Inside its opening tag before the ``>`` (the model broke
the tag off and began again) it ends the open one as
``CallError(reason="unterminated")``; inside a parameter it is content.

``<am:request_tools>a, b</am:request_tools>`` is a call too: ``CallStart`` with
name ``"am:request_tools"`` when the tag opens and ``CallEnd(name=
"am:request_tools", arguments={"tools": ["a", "b"]})`` when it closes; it is not
checked against the catalog (the runtime acts on it: hybrid mode adds the
named tools' definitions and continues).

``<tool_call>`` opens a call in Qwen3-Coder's native form, ``<tool_call>
<function=NAME><parameter=P>value</parameter></function></tool_call>``, which
its models write out of habit whatever the prompt teaches (``<function=`` too,
the opener left out: ``qwen_bare``): read by ``hermes_xml.QwenXmlBody``, the machine
``hermes`` reads that form with, its values typed by the schema as here but
written as they are (no entities, no CDATA: only ``</parameter>`` ends one).
An ``<am:tool_call …>`` call inside those tags (Qwen models wrap calls in
their template's tags) is read as a call of its own, the tags its markup, and
``hermes``' JSON form as ``hermes`` reads it (``am_xml_wrap``); any other body
is ``CallError(reason="malformed")``. Quoted in backticks the tag is prose.
``<function_calls>`` (DeepSeek's DSML spelling of it and of ``tool_calls``,
``<minimax:tool_call>``) opens a block of ``<invoke name=…>`` calls, the form
DeepSeek, GLM, Kimi and MiniMax models write: ``xml_invoke``, as in ``hermes``.

``</am:tool_call>`` is the stop marker: ``end(finish_reason="stop")`` in BODY
completes the call the provider cut at the marker. A reply that ends inside the
opening tag (``<am:tool_call name="sea``) ends an unterminated call, as in the
other dialects; ``<am:tool_call`` with nothing after it is still prose.
"""

from __future__ import annotations

import html
import re
from typing import Any

from streamtools.events import ParserEvent
from streamtools.parser.am_xml_attrs import ATTR, attribute, name_attribute, no_name
from streamtools.parser.am_xml_fast import (
    BODY,
    CDATA,
    CDATA_CLOSE,
    CDATA_OPEN,
    CLOSE,
    OPEN,
    OPEN_TAG,
    PARAM,
    TAG,
    TAG_LIMIT,
    WRAPPERS,
    AmXmlFastPaths,
)
from streamtools.parser.calls import (
    DONE,
    NEVER_HOLDS,
    PROVIDER_STOP,
    REJECTED,
    RUNNING,
    SPECIAL_TOKEN,
    Call,
    CallBody,
    CallContext,
    DialectSyntax,
)
from streamtools.parser.hermes_xml import OPEN as QWEN_OPEN
from streamtools.parser.qwen_bare import FUNCTION, HOLD_BOUND
from streamtools.parser.request_tools import REQUEST_OPEN, RequestToolsBody
from streamtools.parser.xml_invoke import OPENERS, InvokeBody
from streamtools.parser.xml_values import PARAMETER_IS, equals_tag, kinds_from_schema

__all__ = ["AM_XML", "PARAMETER_IS", "AmXmlBody", "equals_tag"]

# the common opening tag, nothing but the name in it (no parameter in an attribute)
_ONLY_NAME = re.compile(r"""\s*name\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'<>`=/]+)\s*/?>\Z""")


_CONTENT_SPECIAL = re.compile(r"[<&]")
# a value whose </parameter> was left out (``_param_ends``): the next parameter's
# tag, the element's closing tag written with its name attribute's value
_PARAM_TAG, _PARAMETER_CLOSE = "<parameter", "</parameter>"
_PARAM_NEXT = re.compile(r"<parameter[\s=]")
_NAMED_CLOSE = re.compile(r"[ \t\r\n]{0,8}>")
_SPACE_RUN = re.compile(r"[ \t\r\n]{0,8}")
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#x[0-9a-fA-F]{1,6}|[A-Za-z]{2,8});")
_ENTITY_PART = re.compile(r"&(?:#[0-9]{0,7}|#x[0-9a-fA-F]{0,6}|[A-Za-z]{0,8})\Z")
# the whitespace XML allows before a closing tag's ">" (``</q >``), at most 8
# characters (a longer run is content, not held on and on), and the ">" if there
_TAG_END = re.compile(r"[ \t\r\n]{1,8}(>)?")
_LOOSE_CLOSE = re.compile(re.escape(CLOSE[:-1]) + r"[ \t\r\n]{1,8}>\Z")
_EXAMPLE = (
    ' Write <am:tool_call name="TOOL"><param>value</param></am:tool_call>, one element '
    "per parameter."
)
# The first character after ``<am:tool_call`` decides: whitespace, ``>`` or ``/``
# make it a call (a tag without a name then fails as ``malformed`` when it
# closes); anything else (``<am:tool_calls>``) is text. Deciding there keeps the
# hold-back within the marker's length.


class AmXmlBody(AmXmlFastPaths, CallBody):
    """The ``<am:tool_call>`` element machine (see the module docstring)."""

    param_state = PARAM
    body_state = BODY

    def __init__(self, ctx: CallContext, marker: str) -> None:
        super().__init__(ctx, marker)
        self.undecided = True
        self.call = Call(ctx)
        self.state = TAG
        self.tag: list[str] = [marker]
        self.stray: list[str] = []
        self.out: list[ParserEvent] = []
        self._start_values()  # (``bad``: why the call is malformed, e.g. text outside elements)
        self.restart = False  # a new <am:tool_call> began inside this one
        self.gap = 0  # index in ``stray`` where the text since the last tag begins
        self.wrapper = ""  # the closing tag of an open <parameters> wrapper (see WRAPPERS)

    renews = True

    def renew(self, marker: str) -> None:
        """Be the body ``__init__(ctx, marker)`` makes, reusing this finished one
        and its call (``CallBody.renews``)."""
        self.status = RUNNING  # ``CallBody.renew``, inline
        self.raw = [marker]
        self.size = len(marker)
        self.holds = NEVER_HOLDS
        self.rest = ""
        self.undecided = True
        self.call.renew()
        self.state = TAG
        self.tag = [marker]
        self.stray = []
        self.out = []
        self._start_values()
        self.restart = False
        self.gap = 0
        self.wrapper = ""

    # -- the machine (the fast paths are in ``am_xml_fast``) ---------------------------


    def feed(self, s: str, pos: int, out: list[ParserEvent]) -> int:
        self.out = out
        i, n = pos, len(s)
        while i < n and self.status not in (DONE, REJECTED):
            state = self.state
            if state == PARAM:
                j = self._param(s, i)
            elif state == BODY:
                j = self._body(s, i)
            elif state == CDATA:
                j = self._cdata(s, i)
            else:
                j = self._tag(s, i)
            if j < 0:  # the call closed
                j = -j
                self.record(s, pos, j)
                self._close()
                return j
            if self.restart:
                self.record(s, pos, j)
                if self.state == BODY:  # (``_body``: between the elements, all closed)
                    self._close()
                    return j
                self.status = DONE
                if self.state == TAG:  # (a name in the broken tag is quoted back)
                    name = name_attribute("".join(self.tag), len(OPEN)) or "the tool"
                    message = (
                        f"The opening tag of the call to {name} was not finished with > "
                        f"before the next call began. Write whole calls, ending with {CLOSE}."
                    )
                else:
                    message = (
                        f"The call to {self.call.name or 'the tool'} was not closed before the "
                        f"next call began. End every call with {CLOSE}."
                    )
                self.call.fail(self.raw_text(), "unterminated", message, out)
                return j
            if j == i and self.state == state and self.status == 0:
                break  # needs more input
            i = j
        self.record(s, pos, i)
        return i

    def _tag(self, s: str, i: int) -> int:
        if self.undecided:
            if s[i] not in " \t\r\n>/":
                self.status = REJECTED  # <am:tool_callx …: a different word, text
                return i
            self.undecided = False  # from here on it is a call (holds back nothing more)
        k = s.find(">", i)
        lt = s.find("<", i, k) if k >= 0 else s.find("<", i)
        if lt >= 0:  # (rare: no call for the common tag)
            j = self._new_call_in_tag(s, lt, k)
            if j >= 0:
                self.tag.append(s[i:j])
                return j
        if k < 0:
            self.tag.append(s[i:])
            return len(s)
        tag = "".join(self.tag) + s[i : k + 1]
        self.tag = []
        name = name_attribute(tag, len(OPEN))
        self.state = BODY
        if name is not None:
            name = name.strip()
            self.call.named(name, self.out)
            if self.call.started:
                schema = self.ctx.catalog.schema(self.call.name or name)
                self.kinds = kinds_from_schema(schema)
                if schema and not _ONLY_NAME.match(tag, len(OPEN)):
                    self._attribute_params(tag, schema)
        if tag.endswith("/>"):
            return -(k + 1)
        return k + 1

    def _attribute_params(self, tag: str, schema: dict[str, Any]) -> None:
        """Parameters the model wrote as attributes of the call's tag
        (``<am:tool_call name="search" q="cats"/>``, the way the tool
        definitions write theirs): each the tool's schema declares is read as
        that parameter's element would be; any other attribute is ignored, as
        before (``id="call_1"``). They were all ignored: the tool ran without
        them."""
        props = schema.get("properties")
        if not isinstance(props, dict) or not props:
            return
        pos = len(OPEN)
        while (m := ATTR.match(tag, pos)) is not None:
            pos = m.end()
            key = m.group(1)
            value = m.group(2) if m.group(2) is not None else m.group(3)
            if value is None:
                value = m.group(4)
            if key == "name" or key not in props or value is None:
                continue
            self._open_param(key, key)
            if value:
                self._content(html.unescape(value) if "&" in value else value)
            self._close_param()

    def _new_call_in_tag(self, s: str, lt: int, k: int) -> int:
        """Where a new call's marker begins in the opening tag's text ``s[lt:k]``
        (``k`` its ``>``, or -1; ``s[lt]`` is a ``<``), or where one may be
        arriving at the end of ``s`` (the rest is held until it shows); -1 if
        neither. A new call there (the model broke the tag off and began again)
        sets ``restart``: this call ends unterminated, as one cut by a new call
        between its parameters does. Read as this tag, its ``name`` would have
        been the broken tag's (running that tool with the next call's arguments),
        or ``<am:tool_call`` an attribute."""
        end = k if k >= 0 else len(s)
        while lt >= 0:
            after = lt + len(OPEN)
            if after < len(s):
                if s.startswith(OPEN, lt) and s[after] in " \t\r\n>/":
                    self.restart = True
                    return lt
            elif k < 0 and OPEN.startswith(s[lt:]):
                return lt  # maybe a new call: wait for it
            lt = s.find("<", lt + 1, end)
        return -1

    def _body(self, s: str, i: int) -> int:
        k = s.find("<", i)
        if k < 0:
            self.stray.append(s[i:])
            return len(s)
        if k > i:
            self.stray.append(s[i:k])
        if s.startswith(CLOSE, k):
            return -(k + len(CLOSE))  # ``_close`` checks the last gap
        after = k + len(OPEN)
        if s.startswith(OPEN, k) and after < len(s) and s[after] in " \t\r\n>/":
            # a new call after this one's elements: ``</am:tool_call>`` was left out
            # (``feed`` ends this one as that tag would); the marker is the core's
            self.restart = True
            return k
        # a tag is at most TAG_LIMIT characters before its ">": a longer one is stray
        # text up to the limit, as it is when held a character at a time (so too
        # whole, or the split would decide what the text is)
        limit = k + TAG_LIMIT + 1
        e = s.find(">", k, limit)
        if e < 0:
            if len(s) >= limit:
                self.stray.append(s[k:limit])
                return limit
            return k  # wait for the whole tag
        tag = s[k : e + 1]
        m = OPEN_TAG.match(tag)
        q = PARAMETER_IS.match(tag) if m is None else None
        self._gap_done(m is not None or q is not None)
        if q is not None:  # <parameter=q>: Qwen3-Coder's spelling
            self._open_param(html.unescape(q.group(1)), "parameter")
            return e + 1
        if m is None:
            if _LOOSE_CLOSE.match(tag) is not None:
                return -(e + 1)  # </am:tool_call >
            if self.wrapper and tag == self.wrapper:
                self.wrapper = ""  # </parameters>: markup, like its opening tag
                return e + 1
            if self.bad is None and tag.startswith(CDATA_OPEN):
                # text, not a declaration: it was dropped (the call ran without it)
                self.bad = (
                    f"A CDATA section {tag[:40]!r}{self._after()} is outside a parameter "
                    "element."
                ) + self._advice()
            elif (
                self.bad is None
                and tag[1] not in "!?"  # comments, declarations: layout
                and SPECIAL_TOKEN.fullmatch(tag) is None  # <|im_end|>: layout too
            ):
                self.bad = (
                    f"Stray {'closing tag' if tag[1] == '/' else 'tag'} {tag[:40]!r}"
                    f"{self._after()} is outside a parameter "
                    "element."
                ) + self._advice()
            return e + 1
        name = m.group(1)
        if name in WRAPPERS and not self.params and not m.group(3) and self._wraps(name):
            # <parameters> around the parameter elements (Anthropic's old format,
            # models trained on it): markup, for a tool with no parameter so named
            self.wrapper = f"</{name}>"
            return e + 1
        if name == "parameter":
            given = name_attribute(tag, m.end(1))
            if given is not None:
                name = given
        self._open_param(name, m.group(1))
        if m.group(3):  # <a/>: an empty value, or the one a value attribute gives
            value = attribute(tag, m.end(1), "value")
            if value:
                self._content(value)
            self._close_param()
        return e + 1

    def _wraps(self, name: str) -> bool:
        """``<name>`` opening the call's elements is a wrapper: no other is open,
        and the started call's tool has a schema that names none of ``WRAPPERS``."""
        if self.wrapper or not self.call.started:
            return False
        schema = self.ctx.catalog.schema(self.call.name or "")
        props = schema.get("properties") if isinstance(schema, dict) else None
        return isinstance(props, dict) and WRAPPERS.isdisjoint(props)

    def _gap_done(self, param_follows: bool) -> None:
        """A run of text between tags ended: only whitespace may be there (and,
        as the whole body of a call with no elements, a JSON arguments object)."""
        stray = self.stray
        if self.gap == len(stray):
            return
        text = "".join(stray[self.gap :]).strip()
        self.gap = len(stray)
        if text and self.bad is None and (self.params or param_follows):
            self.bad = f"Text {text[:40]!r}{self._after()} is outside a parameter element."
            self.bad += self._advice()

    def _after(self) -> str:
        return f" after {self.pclose}" if self.params else " before the first parameter"

    def _advice(self) -> str:
        tip = " Put every value inside its own element"
        if self.params:
            tip += f"; write a value that contains {self.pclose!r} as <![CDATA[...]]>"
        return tip + "." + _EXAMPLE

    def _param(self, s: str, i: int) -> int:
        n = len(s)
        while i < n:
            m = _CONTENT_SPECIAL.search(s, i)
            j = m.start() if m is not None else n
            if j > i:
                self._content(s[i:j])
            if j == n:
                return n
            if s[j] == "&":
                e = _ENTITY.match(s, j)
                if e is not None:
                    self._reference(e.group())
                    i = e.end()
                    continue
                if _ENTITY_PART.match(s, j) is not None:
                    return j  # a partial entity: wait
                self._content("&")
                i = j + 1
                continue
            close = self.pclose
            if s.startswith(close, j):
                self._close_param()
                self.state = BODY
                return j + len(close)
            if s.startswith(CDATA_OPEN, j):
                self._cdata_opens()
                self.state = CDATA
                self.streaming = 0
                return j + len(CDATA_OPEN)
            if s.startswith(close[:-1], j):
                e = _TAG_END.match(s, j + len(close) - 1)
                if e is not None:
                    if e.group(1) is not None:  # </q >
                        self._close_param()
                        self.state = BODY
                        return e.end()
                    if e.end() == n:
                        return j  # maybe </q >: wait
            if s.startswith(_PARAM_TAG, j) or (
                s.startswith("</", j) and close == _PARAMETER_CLOSE
            ):
                k = self._param_ends(s, j)
                if k >= 0:
                    return k
            # a partial closing tag or CDATA opener (the rest is shorter than both:
            # one large delta is not sliced per "<" in a value): wait
            if len(s) - j < max(len(close), len(CDATA_OPEN), len(_PARAM_TAG)):
                rest = s[j:]
                if close.startswith(rest) or CDATA_OPEN.startswith(rest) or (
                    _PARAM_TAG.startswith(rest)
                ):
                    return j
            self._content("<")
            i = j + 1
        return i

    def _param_ends(self, s: str, j: int) -> int:
        """Where a value whose ``</parameter>`` the model left out ends, at the
        ``<`` at ``s[j]``: before a ``<parameter …>`` tag at a line's start that
        names a parameter the tool declares, not given yet (the value's last
        newline layout), or at ``</NAME>`` closing ``<parameter name="NAME">``
        when whitespace and such a tag or ``</am:tool_call>`` follow (Claude
        models write both: anthropics/claude-code#83088). It was content, the
        next parameter silently lost in this one. Returns where to read on
        (BODY, the value closed), ``j`` while the tag may still be one (held),
        or -1: content."""
        n = len(s)
        if s[j + 1] == "/":  # </NAME>
            closer = f"</{self.pname}"
            if not s.startswith(closer, j):
                return j if n - j < len(closer) and closer.startswith(s[j:]) else -1
            m = _NAMED_CLOSE.match(s, j + len(closer))
            if m is None:
                return j if _SPACE_RUN.fullmatch(s, j + len(closer)) else -1
            t = _SPACE_RUN.match(s, m.end()).end()  # type: ignore[union-attr]
            rest = s[t : t + len(CLOSE)]
            after = rest.startswith(CLOSE) or _PARAM_NEXT.match(s, t) is not None
            if not after:
                if len(rest) < len(CLOSE) and (
                    CLOSE.startswith(rest) or _PARAM_TAG.startswith(rest[: len(_PARAM_TAG)])
                ):
                    return j  # what follows still arriving: wait
                return -1
            self._close_param()
            self.state = BODY
            return m.end()
        if not self._line_start(s, j, j):
            return -1
        e = s.find(">", j, j + TAG_LIMIT + 1)
        if e < 0:
            return j if n - j <= TAG_LIMIT else -1
        tag = s[j : e + 1]
        q = PARAMETER_IS.match(tag)
        name = q.group(1) if q is not None else None
        if name is None and OPEN_TAG.match(tag) is not None:
            name = name_attribute(tag, len(_PARAM_TAG))
        if name is None or not self._undeclared_yet(name):
            return -1
        self._close_param()
        self.state = BODY
        return j

    def _cdata(self, s: str, i: int) -> int:
        k = s.find(CDATA_CLOSE, i)
        if k >= 0:
            if k > i:
                self._content(s[i:k])
            self.state = PARAM
            return k + len(CDATA_CLOSE)
        n = len(s)
        j = n - 2 if s.endswith("]]") else n - 1 if s.endswith("]") else n
        j = max(j, i)
        if j > i:
            self._content(s[i:j])
        return j

    def _close(self) -> None:
        self.status = DONE
        self.undecided = False
        raw = self.raw_text()
        if self.call.name is None:
            self.call.fail(raw, "malformed", no_name(raw, OPEN, _EXAMPLE), self.out)
            return
        self._gap_done(False)
        if self.bad is not None:
            self.call.fail(raw, "malformed", self.bad, self.out)
            return
        if self.params:
            self.call.add_args("}", self.out)
        else:
            stray = "".join(self.stray).strip()
            if stray:
                if stray.startswith("{"):
                    self.call.add_args(stray, self.out)
                else:
                    self.call.fail(
                        raw, "malformed",
                        f"Text {stray[:40]!r} is not a parameter element.{_EXAMPLE}", self.out,
                    )
                    return
        self.call.complete(raw, self.out, example=_EXAMPLE)

    def end(self, tail: str, finish_reason: str, out: list[ParserEvent]) -> str | None:
        self.out = out
        if self.state == TAG and self.undecided:
            return self.raw_text() + tail  # ``<am:tool_call`` and nothing more: prose
        self.record(tail, 0, len(tail))
        if self.state == BODY and finish_reason in PROVIDER_STOP:
            rest = tail.strip()
            if not rest or CLOSE.startswith(rest):
                self._close()  # the provider removed </am:tool_call> as a stop string
                return None
        self.status = DONE
        name = self.call.name or "the tool"
        where = (
            f" inside <{self.pname}>" if self.state in (PARAM, CDATA)
            else " in its opening tag" if self.state == TAG
            else ""
        )
        raw = self.raw_text()
        # a closing tag written with JSON's escaped slash (<\/q>) closes nothing
        tag = self.pname or "name"
        slash = f" A closing tag has no backslash: </{tag}>, not <\\/{tag}>." * ("<\\/" in raw)
        self.call.fail(
            raw, "unterminated",
            f"The call to {name} was cut off{where} before {CLOSE}. Write the whole call, "
            f"closing every parameter element and ending with {CLOSE}.{slash}", out,
        )
        return None


def _open(marker: str, ctx: CallContext) -> CallBody | None:
    if marker == REQUEST_OPEN:
        return RequestToolsBody(ctx, marker)
    if marker == QWEN_OPEN or marker == FUNCTION:  # Qwen3-Coder's form (also bare: qwen_bare)
        from streamtools.parser.am_xml_wrap import qwen_body  # (it imports this module)

        return qwen_body(marker, ctx)
    if marker in OPENERS:  # <function_calls><invoke …> (``xml_invoke``)
        return InvokeBody(ctx, marker)
    body = AmXmlBody.spare(ctx)
    if body is None:
        return AmXmlBody(ctx, marker)
    body.renew(marker)
    return body


AM_XML = DialectSyntax(
    name="am_xml", stop_marker=CLOSE, markers=(OPEN, REQUEST_OPEN, QWEN_OPEN, FUNCTION, *OPENERS),
    open=_open, hold_bound=HOLD_BOUND,
)
