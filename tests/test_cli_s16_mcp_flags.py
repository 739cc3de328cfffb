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


@pytest.mark.parametrize("command", ["chat", "ui"])
def test_a_variable_set_before_an_mcp_command_is_explained(command: str) -> None:
    """``--mcp "GITHUB_TOKEN=… npx server"``, as a shell line sets a variable for
    a command, ran the token as the command (NAME= is a namespace): the error
    said only 'No such file or directory' for it."""
    argv = [sys.executable, "-m", "streamtools", command]
    argv += ["--model", "m", "--base-url", "http://127.0.0.1:9/v1"]
    argv += ["--mcp", "ST_TEST_TOKEN=s3cret-value no-such-mcp-command"]
    if command == "ui":
        argv += ["--port", "0"]
    proc = subprocess.run(argv, input="", capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"streamtools {command}: MCP server ")
    assert line.endswith(
        "; ST_TEST_TOKEN= before a --mcp command names a namespace for its tools, it does "
        "not set a variable: export it instead (the command runs with your environment)"
    )


def test_a_namespace_is_not_taken_for_a_variable() -> None:
    argv = [sys.executable, "-m", "streamtools", "chat", "--model", "m"]
    argv += ["--base-url", "http://127.0.0.1:9/v1", "--mcp", "fs=no-such-mcp-command"]
    proc = subprocess.run(argv, input="", capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "could not be loaded" in proc.stderr and "export it" not in proc.stderr
