"""Parse -> write back -> parse, where a model ended its turn with a chat
template's special token: what the parser reads as the model's end of turn,
the render side leaves out of the history, whatever the token's shape."""

from __future__ import annotations

import pytest

from streamtools.events import CallEnd, TextDelta
from streamtools.parser import Parser
from streamtools.prompts import RENDERERS, get_renderer
from streamtools.transcript import ToolCall

# the end-of-turn tokens of several templates, each of a shape the parser reads
# as layout where a call's closing marker is due (``parser.calls.SPECIAL_TOKEN``)
TOKENS = ["<|im_end|>", "<turn|>", "<｜end▁of▁sentence｜>", "<|end-of-turn|>", "<|eot_id|>\n"]
BODIES = {
    "am_xml": ('<am:tool_call name="t">\n<q>v</q>\n', "</am:tool_call>"),
    "hermes": ('<tool_call>\n{"name": "t", "arguments": {"q": "v"}}\n', "</tool_call>"),
    "json_action": ('```json action\n{"tool": "t", "parameters": {"q": "v"}}\n', "```"),
}


@pytest.mark.parametrize("token", TOKENS)
@pytest.mark.parametrize("dialect", list(BODIES))
def test_a_call_ended_by_any_token_the_parser_reads_is_written_back_as_written(
    dialect: str, token: str
) -> None:
    """The parser reads Gemma 4's ``<turn|>``, DeepSeek's full-width token and
    ``<|end-of-turn|>`` where the closing marker is due, as it reads
    ``<|im_end|>``; the render side knew only ASCII ``<|name|>`` with a word
    name, so such a call lost the model's own text (the canonical form was
    written, a line break put before it) while an ``<|im_end|>`` one kept it.
    Now each is written as the model wrote it, the token replaced by the marker."""
    body, marker = BODIES[dialect]
    parser = Parser(dialect, ["t"])
    events = parser.feed("Hi " + body + token) + parser.end("stop")
    [end] = [e for e in events if isinstance(e, CallEnd)]
    call = ToolCall(id="c", name=end.name, arguments=end.arguments, raw=end.raw, offset=3)
    written = get_renderer(dialect).render_reply("Hi ", [call])
    assert written == "Hi " + body + marker
    again = Parser(dialect, ["t"])
    back = again.feed(written) + again.end("stop")
    assert [(e.name, e.arguments) for e in back if isinstance(e, CallEnd)] == [("t", {"q": "v"})]
    assert "".join(e.text for e in back if isinstance(e, TextDelta)) == "Hi "


@pytest.mark.parametrize("token", TOKENS)
@pytest.mark.parametrize("dialect", list(RENDERERS))
def test_a_token_ending_a_final_reply_is_left_out_whatever_its_shape(
    dialect: str, token: str
) -> None:
    """README: a token ending a past reply (a server that did not strip the
    model's end of turn) is left out. ``<turn|>`` was written back as
    ``&lt;turn|&gt;``, an end of turn spelled out in the model's own history."""
    r = get_renderer(dialect)
    assert r.render_final("Done." + token) == r.render_final("Done.")
