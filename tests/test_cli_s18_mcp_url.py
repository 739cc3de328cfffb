"""``--mcp-url`` took any text: ``--mcp-url localhost:8000/mcp`` (the scheme left
out, as people type a local address) was tried as a server, and the command
said ``MCP server 'localhost:8000/mcp' could not be loaded: UnsupportedProtocol:
Request URL is missing an 'http://' or 'https://' protocol`` with exit status 1,
the status of a server that failed, after starting up. It is a usage error now
(exit 2, before anything starts), worded as ``--base-url``'s and ``--upstream``'s
are; ``NAME=URL`` keeps its namespace."""

from __future__ import annotations

import argparse

import pytest

from streamtools.cli import main
from streamtools.cli.mcp_options import add_mcp_options


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_mcp_options(parser)
    return parser.parse_args(list(argv))


@pytest.mark.parametrize(
    "given", ["localhost:8000/mcp", "mem=localhost:8000/mcp", "http://", "ftp://h/mcp", ""]
)
def test_a_url_without_http_or_a_host_is_a_usage_error(
    given: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        _parse("--mcp-url", given)
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert "argument --mcp-url: expected an http:// or https:// URL with a host" in err


def test_urls_and_named_urls_are_kept_as_given() -> None:
    args = _parse(
        "--mcp-url", "http://127.0.0.1:8000/mcp", "--mcp-url", "mem=https://example.com/mcp?x=1"
    )
    assert args.mcp_url == ["http://127.0.0.1:8000/mcp", "mem=https://example.com/mcp?x=1"]


@pytest.mark.parametrize("command", ["chat", "ui"])
def test_the_commands_exit_2_before_starting(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    model = ["--model", "m", "--base-url", "http://127.0.0.1:9/v1"]
    with pytest.raises(SystemExit) as caught:
        main([command, *model, "--mcp-url", "localhost:8000/mcp"])
    assert caught.value.code == 2
    captured = capsys.readouterr()
    assert "expected an http:// or https:// URL with a host, got 'localhost:8000/mcp'" in (
        captured.err
    )
    assert "could not be loaded" not in captured.err and "serving" not in captured.out
