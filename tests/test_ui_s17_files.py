"""Files a user attaches in a ``useChat`` front end reach the model.

``sendMessage({ text, files })`` sends each file as a ``file`` part of the user's
UI message (a ``data:`` URL, its ``mediaType`` and ``filename``). They were
skipped, and the model answered as if nothing had been attached. A text file
now comes in the user's text after a line naming it; any other file as a line
naming it, its type and size.

The SDK's own client sends them in the Node test (ai 6 and ai 5, skipped
without Node.js); the rest reads request bodies of that shape in Python.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from typing import Any
from urllib.parse import quote

import pytest
from test_ui_node import JS, SDKS, node_available
from test_ui_support import ScriptedSource, serve

from streamtools.events import Event, Final, Finish, TextDelta, TurnEnd, TurnStart
from streamtools.transcript import UserMessage
from streamtools.ui import create_app, parse_chat_request

NOTES = "line one\nüber zwei\n"


def data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode()}"


def file_part(name: str, media_type: str, url: str) -> dict[str, Any]:
    return {"type": "file", "mediaType": media_type, "filename": name, "url": url}


def user_text(*parts: dict[str, Any]) -> str:
    body = {"messages": [{"id": "u1", "role": "user", "parts": list(parts)}]}
    transcript = parse_chat_request(json.dumps(body).encode())
    (message,) = transcript.messages
    assert isinstance(message, UserMessage)
    return message.content


def test_a_text_file_comes_before_the_question_named_and_decoded() -> None:
    text = user_text(
        file_part("notes.txt", "text/plain", data_url("text/plain", NOTES.encode())),
        {"type": "text", "text": "Summarize the notes."},
    )
    assert text == f"[file: notes.txt, text/plain]\n{NOTES}\n\nSummarize the notes."


def test_json_yaml_and_percent_encoded_data_urls_are_text_too() -> None:
    text = user_text(
        file_part("a.json", "application/json", data_url("application/json", b'{"k": 1}')),
        file_part("b.yaml", "application/yaml", "data:application/yaml," + quote("k: 2")),
        file_part("c.svg", "image/svg+xml", data_url("image/svg+xml", b"<svg/>")),
    )
    assert text.split("\n\n") == [
        '[file: a.json, application/json]\n{"k": 1}',
        "[file: b.yaml, application/yaml]\nk: 2",
        "[file: c.svg, image/svg+xml]\n<svg/>",
    ]


@pytest.mark.parametrize("size", [0, 1, 2, 3, 1000])
def test_a_picture_is_named_with_its_type_and_size_not_its_bytes(size: int) -> None:
    text = user_text(
        {"type": "text", "text": "What is this?"},
        file_part("cat.png", "image/png", data_url("image/png", bytes(size))),
    )
    assert text == f"What is this?\n\n[file: cat.png, image/png, {size} bytes]"


def test_a_text_file_that_is_not_utf8_and_a_link_are_named() -> None:
    text = user_text(
        file_part("latin.txt", "text/plain", data_url("text/plain", b"caf\xe9")),
        file_part("r.pdf", "application/pdf", "https://files.test/r.pdf"),
        {"type": "file", "mediaType": "image/png", "url": "blob:http://x/1"},
    )
    assert text.split("\n\n") == [
        "[file: latin.txt, text/plain, 4 bytes]",
        "[file: r.pdf <https://files.test/r.pdf>, application/pdf]",
        "[file: unnamed, image/png]",
    ]


def test_a_source_file_a_browser_gives_another_type_is_read_by_its_bytes() -> None:
    source = b"const answer: number = 42;"
    pdf = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj"
    text = user_text(
        file_part("a.ts", "video/mp2t", data_url("video/mp2t", source)),
        file_part("q.sql", "application/sql", data_url("application/sql", b"select 1;")),
        {"type": "file", "mediaType": "", "filename": "Makefile", "url": data_url("", b"all:")},
        file_part("r.pdf", "application/pdf", data_url("application/pdf", pdf)),
        file_part("z.zip", "application/zip", data_url("application/zip", b"PK\x03\x04\x14\x00")),
        file_part("a.png", "image/png", data_url("image/png", b"looks like text")),
    )
    assert text.split("\n\n") == [
        "[file: a.ts, video/mp2t]\nconst answer: number = 42;",
        "[file: q.sql, application/sql]\nselect 1;",
        "[file: Makefile, application/octet-stream]\nall:",
        f"[file: r.pdf, application/pdf, {len(pdf)} bytes]",
        "[file: z.zip, application/zip, 6 bytes]",
        "[file: a.png, image/png, 15 bytes]",
    ]


def test_text_parts_alone_read_as_before() -> None:
    assert user_text({"type": "text", "text": "a"}, {"type": "text", "text": "b"}) == "ab"
    assert user_text() == ""


ANSWER: list[Event] = [
    TurnStart(turn=1),
    TextDelta(text="Read it."),
    Finish(reason="stop"),
    TurnEnd(turn=1, reason="final"),
    Final(text="Read it.", turns=1),
]


@pytest.mark.parametrize("sdk", list(SDKS))
def test_files_the_sdks_client_attaches_reach_the_agent(sdk: str) -> None:
    node = node_available()
    if node is None:
        pytest.skip("Node.js/npm not installed (CI installs them: apt-get install nodejs npm)")
    files = [
        file_part("notes.txt", "text/plain", data_url("text/plain", NOTES.encode())),
        file_part("cat.png", "image/png", data_url("image/png", bytes(30))),
    ]
    source = ScriptedSource(ANSWER)
    with serve(create_app(source)) as server:
        done = subprocess.run(
            [node, str(JS / "chat_client.mjs"), server.url + "/api/chat", "Summarize."],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "AI_PACKAGE": sdk, "FILES": json.dumps(files)},
            check=False,
        )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["sdkVersion"].startswith(SDKS[sdk])
    assert result["errors"] == []
    (prompt,) = source.prompts
    assert prompt.messages == [  # type: ignore[union-attr]
        UserMessage(
            content=f"[file: notes.txt, text/plain]\n{NOTES}\n\n"
            "[file: cat.png, image/png, 30 bytes]\n\nSummarize."
        )
    ]
