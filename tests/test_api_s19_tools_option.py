"""``--tools MODULE:ATTRIBUTE`` (``streamtools chat`` and ``ui``): a first try
with the module alone, or a wrong attribute, is told the attribute to write:
the module's ToolRegistry (else its list of tools, else its tools). It said
only ``expects module:attribute, got 'mytools'``, leaving the user to guess
what goes after the colon."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from streamtools.cli.model_options import load_tools
from streamtools.errors import UsageError

_SOURCE = '''
from streamtools import ToolRegistry, tool

registry = ToolRegistry()


@registry.add
def shout(text: str) -> str:
    """Say it louder."""
    return text.upper()


@tool
def whisper(text: str) -> str:
    """Say it softly."""
    return text.lower()


tools = [shout, whisper]
'''
_count = itertools.count()


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A tools module in the current directory, named anew for each test (the
    import system keeps what it imported)."""
    name = f"s19_user_tools_{next(_count)}"
    (tmp_path / f"{name}.py").write_text(_SOURCE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def test_the_module_alone_is_told_its_registry(module: str) -> None:
    with pytest.raises(UsageError) as raised:
        load_tools(module)
    assert str(raised.value) == (
        f"--tools expects module:attribute, got {module!r}; try --tools {module}:registry"
    )


def test_a_wrong_attribute_is_told_its_registry(module: str) -> None:
    with pytest.raises(UsageError) as raised:
        load_tools(f"{module}:regsitry")
    assert str(raised.value) == (
        f"--tools {module}:regsitry: {module!r} has no 'regsitry'; try --tools {module}:registry"
    )


def test_what_it_names_loads(module: str) -> None:
    assert list(load_tools(f"{module}:registry")) == ["shout"]
    assert list(load_tools(f"{module}:tools")) == ["shout", "whisper"]
