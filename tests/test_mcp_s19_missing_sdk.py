"""``from streamtools.mcp import mcp_tools`` without the ``mcp`` extra said only
``No module named 'mcp'``: nothing told a user that it is an extra of
streamtools, nor how to add it. It says so, as the commands do, and stays the
``ModuleNotFoundError`` of the module ``mcp`` that code may catch."""

from __future__ import annotations

import importlib
import sys

import pytest

from streamtools.cli import _install_line


def test_importing_without_the_sdk_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in list(sys.modules):  # as if never imported, by any earlier test either
        if name.partition(".")[0] == "mcp" or name.startswith("streamtools.mcp"):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)  # import raises ModuleNotFoundError
    with pytest.raises(ModuleNotFoundError) as caught:
        importlib.import_module("streamtools.mcp")
    assert str(caught.value) == (
        "streamtools.mcp: missing optional dependency 'mcp' (the 'mcp' extra); "
        f"install it with: {_install_line('mcp')}"
    )
    assert caught.value.name == "mcp"
