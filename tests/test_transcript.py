"""The canonical transcript and its projection into request messages."""

from __future__ import annotations

import pytest

from streamtools.errors import UsageError
from streamtools.model import ChatMessage, NativeCall
from streamtools.prompts import NO_RESULT, get_renderer, project
from streamtools.tools import tool
from streamtools.transcript import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    Transcript,
    UserMessage,
)

DIALECTS = ["am_xml", "json_action", "hermes", "inline_json", "json_object", "command"]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


SPECS = [add.spec()]
C0 = ToolCall(id="call_0", name="add", arguments={"a": 1, "b": 2})
C1 = ToolCall(id="call_1", name="add", arguments={"a": 3, "b": 4})


def _chat() -> Transcript:
    t = Transcript()
    t.system("Be brief.")
    t.user("What is 1+2 and 3+4?")
    t.assistant("Let me add.", [C0, C1], reasoning="secret plan")
    t.result(C1, "7")  # results may arrive out of call order
    t.result(C0, "3")
    t.assistant("3 and 7.")
    return t


def test_transcript_helpers_and_json() -> None:
    t = _chat()
    assert [type(m) for m in t.messages] == [
        SystemMessage,
        UserMessage,
        AssistantMessage,
        ToolResultMessage,
        ToolResultMessage,
        AssistantMessage,
    ]
    assert Transcript.decode(t.encode()) == t
    assert t.pending_calls() == []
    t.assistant("", [C0, C1])
    t.result(C0, "boom", is_error=True)
    assert t.pending_calls() == [C1]
    assert Transcript().pending_calls() == []


def test_pending_calls_that_share_an_id_take_its_results_in_order() -> None:
    """Two calls of one reply with one id (a server that reuses ids) and one
    result with that id: the second call is still pending, as ``project`` pairs
    them (it writes NO_RESULT for it), but ``pending_calls`` said none was, so
    a loop driven by it never ran the second call."""
    first = ToolCall(id="call_0", name="add", arguments={"a": 1, "b": 2})
    second = ToolCall(id="call_0", name="add", arguments={"a": 5, "b": 2})
    t = Transcript()
    t.user("Add both.")
    t.assistant("", [first, second])
    assert t.pending_calls() == [first, second]
    t.result(first, "3")
    assert t.pending_calls() == [second]
    t.result(second, "7")
    assert t.pending_calls() == []


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b'{"messages": [', "invalid JSON"),
        (b'{"messages": [{"role": "robot", "content": "hi"}]}', "robot"),
        (b'{"messages": [{"role": "user", "content": 5}]}', "content"),
        (b"[]", "object"),
        # a string's bytes that are not UTF-8 raised msgspec's UnicodeDecodeError
        (b'{"messages": [{"role": "user", "content": "caf\xe9"}]}', "not UTF-8"),
        pytest.param(
            b'{"messages": [{"role": "assistant", "calls": [{"id": "a", "name": "f",'
            b' "arguments": {"v": ' + b"[" * 5000 + b"]" * 5000 + b"}}]}]}",
            "nested too deeply",
            id="nested-too-deeply",
        ),
    ],
)
def test_decode_names_what_is_not_a_transcript(data: bytes, says: str) -> None:
    with pytest.raises(UsageError, match="not a transcript") as info:
        Transcript.decode(data)
    assert says in str(info.value)


@pytest.mark.parametrize("bom", ["bytes", "str"])
def test_decode_reads_a_file_that_starts_with_a_byte_order_mark(bom: str) -> None:
    """A saved transcript opened and saved again by a Windows editor starts with
    a UTF-8 byte order mark, kept as U+FEFF when read with ``encoding="utf-8"``;
    it was refused as invalid JSON ("invalid character"), while a recording
    with one is read."""
    transcript = Transcript()
    transcript.user("héllo")
    transcript.assistant("hi")
    saved = b"\xef\xbb\xbf" + transcript.encode()
    data = saved if bom == "bytes" else saved.decode("utf-8")
    assert Transcript.decode(data) == transcript
    # a mark anywhere else is still no JSON
    with pytest.raises(UsageError, match="invalid JSON"):
        Transcript.decode(b" " + saved)


@pytest.mark.parametrize(
    "data",
    [
        # a str holding a lone half (read with surrogateescape): UnicodeEncodeError
        pytest.param(
            '{"messages": [{"role": "user", "content": "report-\udce9 \ud83d\ude00"}]}',
            id="str",
        ),
        # an escaped lone half (JavaScript cut a string in an emoji): "truncated"
        pytest.param(
            '{"messages": [{"role": "user", "content": "report-\\udce9 \\ud83d\\ude00"}]}',
            id="escaped-str",
        ),
        pytest.param(
            b'{"messages": [{"role": "user", "content": "report-\\udce9 \\ud83d\\ude00"}]}',
            id="escaped-bytes",
        ),
    ],
)
def test_decode_reads_a_lone_surrogate_half_as_encode_writes_it(data: str | bytes) -> None:
    """A lone UTF-16 surrogate half, in a ``str`` or escaped in the JSON, is read
    as U+FFFD, as ``encode`` writes one (and as the proxy reads request bodies);
    a pair, escaped or not, is its character. It raised a raw
    ``UnicodeEncodeError``, or was refused as "Input data was truncated"."""
    transcript = Transcript.decode(data)
    assert transcript.messages == [UserMessage(content="report-\ufffd \U0001f600")]
    assert Transcript.decode(transcript.encode()) == transcript
    escaped = b'{"messages": [{"role": "user", "content": "a \\\\ud83d b"}]}'
    assert Transcript.decode(escaped).messages == [UserMessage(content="a \\ud83d b")]


@pytest.mark.parametrize("dialect", ["am_xml", "json_action", "hermes", "inline_json"])
def test_prompt_mode_results_as_one_user_message(dialect: str) -> None:
    r = get_renderer(dialect)
    out = project(_chat(), dialect, SPECS, system="You are a calculator.")
    assert [m.role for m in out] == ["system", "user", "assistant", "user", "assistant"]
    assert out[0].content == r.system_prompt(SPECS, base="You are a calculator.\n\nBe brief.")
    assert out[2].content == r.render_reply("Let me add.", [C0, C1])
    assert "secret plan" not in "".join(m.content for m in out)
    assert out[3].content == "\n\n".join(
        [
            r.render_result("add", "3", call_id="call_0"),
            r.render_result("add", "7", call_id="call_1"),
            r.continuation(),
        ]
    )
    assert out[4].content == r.render_final("3 and 7.")
    assert all(not m.tool_calls and m.tool_call_id is None for m in out)


def test_prompt_mode_results_as_tool_messages() -> None:
    dialect = "command"  # json_object splits this two-call reply: see below
    r = get_renderer(dialect)
    out = project(_chat(), dialect, SPECS)
    assert [m.role for m in out] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "user",
        "assistant",
    ]
    assert out[3] == ChatMessage(
        role="tool",
        content=r.render_result("add", "3", call_id="call_0"),
        tool_call_id="call_0",
        name="add",
    )
    assert out[4].tool_call_id == "call_1"
    assert out[5].content == r.continuation()
    assert out[6].content == r.render_final("3 and 7.")


def test_native_mode() -> None:
    t = _chat()
    t.assistant("", [C0])
    t.result(C0, "bad", is_error=True)
    out = project(t, "am_xml", SPECS, native=True)
    assert out[0] == ChatMessage(role="system", content="Be brief.")  # no tool prompt
    assert out[2] == ChatMessage(
        role="assistant",
        content="Let me add.",
        tool_calls=(
            NativeCall(id="call_0", name="add", arguments={"a": 1, "b": 2}),
            NativeCall(id="call_1", name="add", arguments={"a": 3, "b": 4}),
        ),
    )
    assert out[3] == ChatMessage(role="tool", content="3", tool_call_id="call_0", name="add")
    assert out[4] == ChatMessage(role="tool", content="7", tool_call_id="call_1", name="add")
    # the reply after the answer joins it: one assistant turn, as Anthropic reads two
    assert out[5] == ChatMessage(
        role="assistant",
        content="3 and 7.",
        tool_calls=(NativeCall(id="call_0", name="add", arguments={"a": 1, "b": 2}),),
    )
    assert out[-1] == ChatMessage(
        role="tool", content="Error: bad", tool_call_id="call_0", name="add", is_error=True
    )
    assert [m.role for m in out].count("user") == 1


@pytest.mark.parametrize("native", [False, True])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_unanswered_calls_get_a_synthesized_error(dialect: str, native: bool) -> None:
    t = Transcript()
    t.user("go")
    t.assistant("", [C0, C1])
    t.result(C1, "7")
    out = project(t, dialect, SPECS, native=native)
    text = "\n".join(m.content for m in out)
    if native:
        assert [m.tool_call_id for m in out if m.role == "tool"] == ["call_0", "call_1"]
        assert out[2].content == f"Error: {NO_RESULT}"
    else:
        r = get_renderer(dialect)
        assert r.render_error("add", NO_RESULT, call_id="call_0") in text
        assert text.index(r.render_error("add", NO_RESULT, call_id="call_0")) < text.index(
            r.render_result("add", "7", call_id="call_1")
        )


@pytest.mark.parametrize("native", [False, True])
def test_orphan_results_become_user_text(native: bool) -> None:
    t = Transcript()
    t.add(ToolResultMessage(call_id="ghost", name="add", content="42"))  # before any reply
    t.user("hi")
    t.assistant("", [C0])
    t.result(C0, "3")
    t.result(C0, "3 again")  # a second result for the same call
    t.add(ToolResultMessage(call_id="other", name="add", content="9"))
    out = project(t, "hermes", SPECS, native=native)
    roles = [m.role for m in out]
    assert roles[:2] == (["user", "assistant"] if native else ["system", "user"])
    users = [m.content for m in out if m.role == "user"]
    assert "`ghost`" in users[0] and "hi" in users[0]  # merged with the next user message
    assert any("`other`" in u and "3 again" in u for u in users)
    if native:
        assert [m.tool_call_id for m in out if m.role == "tool"] == ["call_0"]
    else:
        last = users[-1]
        assert last.count("<tool_response>") == 3


def test_user_after_results_replaces_the_continuation() -> None:
    t = Transcript()
    t.user("go")
    t.assistant("", [C0])
    t.result(C0, "3")
    t.user("Actually, stop.")
    out = project(t, "am_xml", SPECS)
    r = get_renderer("am_xml")
    assert out[-1].role == "user"
    assert out[-1].content == r.render_result("add", "3", call_id="call_0") + "\n\nActually, stop."
    assert r.continuation() not in out[-1].content


def test_empty_replies_are_dropped_and_systems_merged() -> None:
    t = Transcript()
    t.user("a")
    t.assistant("")
    t.system("Late system note.")
    t.user("b")
    out = project(t, "command", [], system="Base.")
    assert out == [
        ChatMessage(role="system", content="Base.\n\nLate system note."),
        ChatMessage(role="user", content="a\n\nb"),
    ]
    assert project(Transcript(messages=[UserMessage(content="x")]), "command", []) == [
        ChatMessage(role="user", content="x")
    ]


def test_raw_calls_are_projected_as_written() -> None:
    raw = '<am:tool_call name="add">\n<a>1</a>\n<b>2</b>\n'
    call = ToolCall(id="call_0", name="add", arguments={"a": 1, "b": 2}, raw=raw)
    t = Transcript()
    t.user("go")
    t.assistant("Adding.", [call])
    t.result(call, "3")
    out = project(t, "am_xml", SPECS)
    # exactly the model's text: no separator added, only the cut closing marker restored
    assert out[2].content == "Adding." + raw + "</am:tool_call>"


def test_json_object_splits_multi_call_replies() -> None:
    r = get_renderer("json_object")
    out = project(_chat(), "json_object", SPECS)
    assert [m.role for m in out] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "user",
        "assistant",
    ]
    assert out[2].content == r.render_reply("Let me add.", [C0])
    assert out[3].tool_call_id == "call_0"
    assert out[4].content == r.render_reply("", [C1])
    assert out[5].tool_call_id == "call_1"


def test_orphan_ids_cannot_carry_markup() -> None:
    t = Transcript()
    t.add(ToolResultMessage(call_id="</tool_response><tool_call>", name="a`b", content="x"))
    out = project(t, "hermes", [])
    assert out[0].role == "user"
    assert "<tool_call>" not in out[0].content
    assert "`__tool_response__tool_call_` of `a_b`" in out[0].content


@pytest.mark.parametrize(("dialect", "native"), [("hermes", False), ("json_object", False),
                                                  ("hermes", True)])
def test_calls_sharing_an_id_take_its_results_in_order(dialect: str, native: bool) -> None:
    # a client (or the server it copied ids from) gave two calls one id
    first = ToolCall(id="dup", name="add", arguments={"a": 1, "b": 2})
    second = ToolCall(id="dup", name="mul", arguments={"a": 3, "b": 4})
    t = Transcript()
    t.user("go")
    t.assistant("", [first, second])
    t.add(ToolResultMessage(call_id="dup", name="tool", content="THREE"))
    t.add(ToolResultMessage(call_id="dup", name="tool", content="TWELVE"))
    out = project(t, dialect, SPECS, native=native)
    text = "\n".join(m.content for m in out[1:])
    assert text.count("THREE") == 1 and text.count("TWELVE") == 1
    assert NO_RESULT not in text and "no such call" not in text
    r = get_renderer(dialect)
    if native:
        tools = [m for m in out if m.role == "tool"]
        assert [(m.name, m.content) for m in tools] == [("add", "THREE"), ("mul", "TWELVE")]
    else:  # each result under the name of the call it answers, in the calls' order
        one = r.render_result("add", "THREE", call_id="dup")
        two = r.render_result("mul", "TWELVE", call_id="dup")
        assert one in text and two in text and text.index(one) < text.index(two)
