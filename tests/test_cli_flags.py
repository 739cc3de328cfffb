"""A bad flag value is refused by the command line itself, with a message that
names the flag and exit status 2: never a traceback, a server that starts
anyway, or a run that goes on with a value it cannot use."""

from __future__ import annotations

import io
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from streamtools.cli import SUBCOMMANDS, _build_parser, _install_line, _missing, main

BAD = [
    (["proxy", "--upstream", ""], "--upstream"),
    (["proxy", "--upstream", "ftp://host"], "--upstream"),
    (["proxy", "--upstream", "localhost:11434"], "--upstream"),
    (["proxy", "--upstream", "http://x", "--port", "99999"], "--port"),
    (["proxy", "--upstream", "http://x", "--workers", "0"], "--workers"),
    (["proxy", "--upstream", "http://x", "--max-body", "-5"], "--max-body"),
    (["proxy", "--upstream", "http://x", "--max-repairs", "-1"], "--max-repairs"),
    (["proxy", "--upstream", "http://x", "--upstream-retries", "-3"], "--upstream-retries"),
    (["proxy", "--upstream", "http://x", "--timeout", "-1"], "--timeout"),
    (["proxy", "--upstream", "http://x", "--timeout", "nan"], "--timeout"),
    (["proxy", "--upstream", "http://x", "--ping-interval", "-1"], "--ping-interval"),
    (["proxy", "--upstream", "http://x", "--ping-interval", "inf"], "--ping-interval"),
    (["proxy", "--upstream", "http://x", "--log-level", "bogus"], "--log-level"),
    (["ui", "--log-level", "bogus"], "--log-level"),
    (["ui", "--port", "99999"], "--port"),
    (["ui", "--speed", "-1"], "--speed"),
    (["ui", "--dialect", "bogus"], "--dialect"),
    # an origin has no path: it never matched a browser's Origin header
    (["ui", "--cors-origin", "http://localhost:3000/app"], "--cors-origin"),
    (["ui", "--cors-origin", "localhost:3000"], "--cors-origin"),
    (["demo", "--speed", "nan"], "--speed"),
    (["demo", "--speed", "0"], "--speed"),
    (["chat", "--model", "m", "--max-turns", "0"], "--max-turns"),
    # float() takes these, and msgspec writes them as null: the server's default
    (["chat", "--model", "m", "--temperature", "nan"], "--temperature"),
    (["chat", "--model", "m", "--temperature=-inf"], "--temperature"),
    (["chat", "--model", "m", "--top-p", "NaN"], "--top-p"),
    (["chat", "--model", "m", "--top-p", "infinity"], "--top-p"),
    (["chat", "--model", "m", "--temperature", "warm"], "--temperature"),
    (["chat", "--model", "m", "--timeout", "-1"], "--timeout"),
    (["chat", "--model", "m", "--base-url", "127.0.0.1:11434/v1"], "--base-url"),
    (["chat", "--model", "m", "--base-url", "http://127.0.0.1:99999/v1"], "--base-url"),
    (["proxy", "--upstream", "http://x:0x50"], "--upstream"),
]


@pytest.mark.parametrize(("argv", "flag"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_flag_value_is_a_usage_error(
    argv: list[str], flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # parsing alone: a value let through here would start a server or a run
    with pytest.raises(SystemExit) as info:
        _build_parser(argv).parse_args(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}:" in err and "Traceback" not in err


def test_good_values_still_parse() -> None:
    argv = ["proxy", "--upstream", "https://api.example.com/v1/", "--port", "0"]
    argv += ["--timeout", "2.5", "--max-repairs", "0", "--log-level", "INFO"]
    args = _build_parser(argv).parse_args(argv)
    assert (args.upstream, args.port, args.timeout) == ("https://api.example.com/v1/", 0, 2.5)
    assert (args.max_repairs, args.log_level) == (0, "info")
    assert args.ping_interval == 15.0
    assert args.think_open is False
    argv = ["proxy", "--upstream", "http://x", "--think-open"]
    assert _build_parser(argv).parse_args(argv).think_open is True
    argv = ["chat", "--model", "m", "--temperature", "0.7", "--top-p", "1e-3"]
    args = _build_parser(argv).parse_args(argv)
    assert (args.temperature, args.top_p) == (0.7, 0.001)
    for given, seconds in (("0", 0.0), ("0.5", 0.5)):
        argv = ["proxy", "--upstream", "http://x", "--ping-interval", given]
        assert _build_parser(argv).parse_args(argv).ping_interval == seconds


def test_a_value_the_provider_refuses_is_a_usage_error_not_a_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the flag parses, but no HTTP header can carry it: the provider's UsageError
    # is said as argparse says a bad flag, exit status 2
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    argv = ["chat", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--api-key", "k\u20acy"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("streamtools chat: error: api_key holds a character")
    assert "Traceback" not in err and "k\u20acy" not in err


@pytest.mark.parametrize(
    ("argv", "module", "extra"),
    [
        (["proxy", "--upstream", "http://127.0.0.1:9"], "uvicorn", "proxy"),
        (["ui", "--instant"], "uvicorn", "ui"),
        (["chat", "--model", "m", "--base-url", "http://x:9/v1", "--mcp", "x"], "mcp", "mcp"),
    ],
)
def test_a_missing_extra_says_what_to_install(
    argv: list[str], module: str, extra: str,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the commands import their server or the MCP SDK when they run: a plain
    # ``pip install streamtools`` gets the install line, not a traceback
    for name in list(sys.modules):  # as if never imported, by any earlier test either
        if name.partition(".")[0] == module or name.startswith(f"streamtools.{module}"):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, module, None)  # import raises ModuleNotFoundError
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"missing optional dependency {module!r} (the {extra!r} extra)" in err
    # not a PyPI line: the package named streamtools there is another project
    assert "pip install 'streamtools[" not in err and "Traceback" not in err
    assert f"install it with: {_install_line(extra)}" in err


class _Recorded:
    """A distribution whose ``direct_url.json`` (PEP 610) is ``text``."""

    def __init__(self, text: str | None) -> None:
        self.text = text

    def read_text(self, name: str) -> str | None:
        return self.text if name == "direct_url.json" else None


def _gone(name: str) -> Any:
    raise metadata.PackageNotFoundError(name)


@pytest.mark.parametrize(
    ("recorded", "line"),
    [
        # an editable install of a clone: the clone's directory, usable from anywhere
        ('{"url": "file:///home/me/streamtools", "dir_info": {"editable": true}}',
         "pip install -e '/home/me/streamtools[proxy]'"),
        ('{"url": "file:///home/me/my%20tools", "dir_info": {}}',
         "pip install '/home/me/my tools[proxy]'"),
        # installed from elsewhere, or run from a source tree: the clone's own line
        ('{"url": "https://example.com/st.tar.gz", "archive_info": {}}',
         "pip install -e '.[proxy]' (in the streamtools clone)"),
        (None, "pip install -e '.[proxy]' (in the streamtools clone)"),
        ("not json", "pip install -e '.[proxy]' (in the streamtools clone)"),
    ],
)
def test_the_install_line_is_for_this_copy_not_pypi(
    recorded: str | None, line: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hint said ``pip install 'streamtools[proxy]'``, a PyPI install, where
    the package of that name is another project; it now names the extra and
    installs it into the copy that runs."""
    monkeypatch.setattr(metadata, "distribution", lambda name: _Recorded(recorded))
    exc = ModuleNotFoundError("No module named 'uvicorn'", name="uvicorn")
    assert _missing(exc, "proxy") == (
        "streamtools proxy: error: missing optional dependency 'uvicorn' "
        f"(the 'proxy' extra); install it with: {line}"
    )
    monkeypatch.setattr(metadata, "distribution", _gone)
    assert _install_line("ui") == "pip install -e '.[ui]' (in the streamtools clone)"


USAGE = [
    # ``ui`` ended this one through SystemExit: exit status 1
    ["ui", "--port", "0", "--model", "m", "--instant"],
    ["ui", "--port", "0", "--base-url", "http://127.0.0.1:9/v1"],
    ["ui", "--port", "0", "--fixture", "{missing}"],
    ["ui", "--port", "0", "--tools", "no_such_module_here:TOOLS"],
    ["demo", "--instant", "--fixture", "{missing}"],
    ["demo", "--instant", "--fixture", "{empty}"],
    ["replay", "{missing}"],
    ["replay", "{empty}"],
    ["chat", "--model", "m", "--native", "--hybrid"],
    ["chat", "--model", "m", "--record", "{missing}/session.jsonl"],
]


@pytest.mark.parametrize("argv", USAGE, ids=[" ".join(a) for a in USAGE])
def test_every_usage_error_is_one_line_and_exit_status_2(
    argv: list[str], tmp_path: Path,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "empty.jsonl").write_bytes(b"")
    paths = {"missing": str(tmp_path / "missing"), "empty": str(tmp_path / "empty.jsonl")}
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main([a.format(**paths) for a in argv]) == 2
    captured = capsys.readouterr()
    [line] = captured.err.splitlines()
    assert line.startswith(f"streamtools {argv[0]}: error: "), line
    assert "serving" not in captured.out


def test_a_command_whose_module_lacks_an_extra_is_a_usage_error_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a command module that imports its server at the top (none does today):
    # the install line, exit status 2 as ``main`` gives it, not SystemExit's 1
    (tmp_path / "cli_needs_uvicorn.py").write_text("import uvicorn\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    monkeypatch.setitem(SUBCOMMANDS, "ui", ("cli_needs_uvicorn", "serve"))
    with pytest.raises(SystemExit) as info:
        main(["ui"])
    assert info.value.code == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("streamtools ui: error: missing optional dependency 'uvicorn'")


def test_chat_help_says_mcp_header_reaches_a_url_given_to_mcp(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # 2143fc4 sent --mcp-header to a URL given to --mcp too; the help still said
    # it reached only the --mcp-url servers
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit):
        main(["chat", "--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps the help
    assert (
        "--mcp-header 'NAME: VALUE' an HTTP header for the HTTP MCP servers "
        "(--mcp-url, or a URL given to --mcp)"
    ) in text
