"""``streamtools ui --max-body BYTES``: ``create_app(max_body=...)`` had no flag,
so the page refused any conversation over 4 MiB of attachments."""

from __future__ import annotations

import argparse

import httpx
import msgspec
import pytest
from test_ui_support import read_ui_stream, serve

from streamtools.cli.ui import build_app, register

CHAT = {"messages": [{"role": "user", "content": "x" * 3000}]}


def _parser() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    register(subparsers)
    return parser, subparsers.choices["ui"]


def _post(*flags: str) -> httpx.Response:
    parser, _ = _parser()
    args = parser.parse_args(["ui", "--instant", *flags])
    app, _ = build_app(args)
    with serve(app) as server:
        return httpx.post(server.url + "/api/chat", content=msgspec.json.encode(CHAT), timeout=30)


def test_max_body_bounds_what_the_page_takes() -> None:
    refused = _post("--max-body", "2000")
    assert refused.status_code == 413
    assert refused.json()["error"]["message"] == "request body larger than 2000 bytes"
    taken = _post("--max-body", "4000")
    assert taken.status_code == 200 and read_ui_stream(taken.content).text
    parser, _ = _parser()
    assert parser.parse_args(["ui"]).max_body == 4 * 1024 * 1024  # create_app's own


@pytest.mark.parametrize("bad", ["0", "-5", "1.5", "4MB"])
def test_max_body_that_is_no_size_is_a_usage_error(bad: str) -> None:
    parser, _ = _parser()
    with pytest.raises(SystemExit) as exit_:
        parser.parse_args(["ui", "--max-body", bad])
    assert exit_.value.code == 2
