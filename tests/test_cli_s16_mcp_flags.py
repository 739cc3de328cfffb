"""``--mcp-header`` and ``--mcp-timeout`` with nothing to apply to are usage
errors, in ``streamtools chat`` and ``streamtools ui`` alike."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest
from mcp_servers.harness import memory_command

from streamtools.cli.mcp_options import add_mcp_options, wants_mcp

HEADER = "--mcp-header is for HTTP MCP servers (--mcp-url URL, or a URL given to --mcp)"
TIMEOUT = "--mcp-timeout is for MCP servers (--mcp, --mcp-url)"
CASES = [
    (["--mcp-header", "Authorization: Bearer s3cret"], HEADER),
    (["--mcp", memory_command(), "--mcp-header", "Authorization: Bearer s3cret"], HEADER),
    (["--mcp-timeout", "300"], TIMEOUT),
]


@pytest.mark.parametrize("command", ["chat", "ui"])
@pytest.mark.parametrize(("flags", "message"), CASES, ids=["header", "header-stdio", "timeout"])
def test_an_mcp_option_with_nothing_to_apply_to_is_a_usage_error(
    command: str, flags: list[str], message: str
) -> None:
    """A token given with --mcp-header to a stdio server (or to no server) was
    never sent, and --mcp-timeout alone waited for nothing: both were ignored
    without a word."""
    argv = [sys.executable, "-m", "streamtools", command, *flags]
    argv += ["--model", "m", "--base-url", "http://127.0.0.1:9/v1"]
    if command == "ui":
        argv += ["--port", "0"]
    try:
        proc = subprocess.run(argv, input="", capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:  # the ui served, the flag ignored
        pytest.fail(f"streamtools {command} ran with {flags} instead of refusing them")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [f"streamtools {command}: error: {message}"]
    assert proc.stdout == ""


@pytest.mark.parametrize(
    "flags",
    [
        ["--mcp", "remote=https://example.com/mcp", "--mcp-header", "A: b"],
        ["--mcp-url", "https://example.com/mcp", "--mcp-header", "A: b", "--mcp-timeout", "5"],
        ["--mcp", "server-command", "--mcp-timeout", "5"],
        [],
    ],
)
def test_options_with_a_server_to_apply_to_are_taken(flags: list[str]) -> None:
    parser = argparse.ArgumentParser()
    add_mcp_options(parser)
    assert wants_mcp(parser.parse_args(flags)) is bool(flags)
