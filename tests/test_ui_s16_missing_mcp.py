"""``streamtools ui --mcp`` without the MCP SDK says what to install, in one line."""

from __future__ import annotations

import sys

import pytest

from streamtools.cli import _install_line, main


def test_ui_mcp_without_the_sdk_says_what_to_install(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK is imported inside the command's task group, which wrapped the
    ModuleNotFoundError in an exception group: a traceback, not the line
    ``streamtools chat --mcp`` gives."""
    for name in list(sys.modules):  # as if never imported, by any earlier test either
        if name.partition(".")[0] == "mcp" or name.startswith("streamtools.mcp"):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)  # import raises ModuleNotFoundError
    assert main(["ui", "--port", "0", "--instant", "--mcp", "some-server"]) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        "streamtools ui: error: missing optional dependency 'mcp' (the 'mcp' extra); "
        f"install it with: {_install_line('mcp')}\n"
    )
    assert "serving" not in captured.out
