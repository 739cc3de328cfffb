"""The conftest's guards and settings, run as the suite runs them (one pytest of
their own, over asyncio and trio): a test that leaves a process, a thread or a
socket behind fails, naming it, and a test that ends what it started passes; a
property whose examples are slow, as on a loaded machine, is judged by what it
asserts, not by how long an example took."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from leak_guards import live_children

HERE = Path(__file__).parent

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc")

LEAKY = '''
import socket, subprocess, sys, threading, time
import anyio
import pytest

SLEEP = [sys.executable, "-c", "import time; time.sleep(120)"]
KEPT = []

def test_what_it_starts_it_ends():
    with subprocess.Popen(SLEEP) as proc:
        proc.kill()
    thread = threading.Thread(target=time.sleep, args=(0.01,))
    thread.start()
    thread.join()

def test_a_kept_popen():
    KEPT.append(subprocess.Popen(SLEEP))

def test_a_thread_never_joined():
    threading.Thread(target=time.sleep, args=(120,), daemon=True).start()

def test_a_socket_dropped():
    socket.socket().bind(("127.0.0.1", 0))

@pytest.mark.anyio
async def test_a_process_never_closed(anyio_backend):
    KEPT.append(await anyio.open_process(SLEEP))  # kept: not collected in a later test

@pytest.mark.anyio
async def test_a_thread_left_by_async_code(anyio_backend):
    threading.Thread(target=time.sleep, args=(120,), daemon=True).start()

@pytest.mark.anyio
async def test_a_connection_its_server_closed(anyio_backend):
    with socket.create_server(("127.0.0.1", 0)) as server:
        client = await anyio.connect_tcp("127.0.0.1", server.getsockname()[1])
        KEPT.append(client)
        accepted, _ = server.accept()  # queued already
        accepted.close()
    with pytest.raises(anyio.EndOfStream):  # the server's close has arrived
        await client.receive()

@pytest.mark.anyio
async def test_async_code_that_ends_what_it_starts(anyio_backend):
    async with await anyio.open_process(SLEEP) as proc:
        proc.kill()
    await anyio.to_thread.run_sync(time.sleep, 0.01)  # the pool's idle worker stays
'''

SLOW = '''
import time
from hypothesis import given, settings, strategies as st

def _slowly(n):
    time.sleep(0.15)  # a busy machine: ten of them are more than a second
    return n

@settings(max_examples=2)  # a test's own settings, as test_prompts' have
@given(st.integers())
def test_slow_examples_that_hold(n):
    time.sleep(0.25)  # over hypothesis's 200 ms deadline
    with open("ran", "a") as ran:
        ran.write("slow\\n")

@settings(max_examples=10)
@given(st.integers().map(_slowly))
def test_slowly_drawn_examples_that_hold(n):
    with open("ran", "a") as ran:
        ran.write("drawn\\n")
'''


@pytest.fixture(scope="module")
def inner(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the inner run ran. The processes the guard found must have been
    killed by its end."""
    here = tmp_path_factory.mktemp("inner")
    for helper in ("conftest.py", "leak_guards.py", "socket_leaks.py"):
        shutil.copy(HERE / helper, here / helper)
    (here / "pytest.ini").write_text("[pytest]\nfilterwarnings = error\n")
    (here / "test_leaky.py").write_text(LEAKY)
    (here / "test_slow.py").write_text(SLOW)
    report = here / "report.xml"
    before = live_children()
    subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--junitxml={report}"],
        cwd=here, capture_output=True, text=True, timeout=240,
        env={**os.environ, "STREAMTOOLS_TEST_GRACE": "0.2"},
    )
    assert live_children() == before
    return here


@pytest.fixture(scope="module")
def outcomes(inner: Path) -> dict[str, dict[str, str]]:
    """Each test of the inner run, by module and name: "passed", or what failed it."""
    found: dict[str, dict[str, str]] = {}
    for case in ET.parse(inner / "report.xml").iter("testcase"):
        faults = [f"{e.tag}: {e.get('message', '')}" for e in case if e.tag in ("error", "failure")]
        module = found.setdefault(case.get("classname", ""), {})
        module[case.get("name", "")] = " | ".join(faults) or "passed"
    return found


def test_leaks_fail_and_tidy_tests_pass(outcomes: dict[str, dict[str, str]]) -> None:
    leaky = dict(outcomes["test_leaky"])
    assert leaky.pop("test_what_it_starts_it_ends") == "passed"
    for backend in ("asyncio", "trio"):
        assert leaky.pop(f"test_async_code_that_ends_what_it_starts[{backend}]") == "passed"
        said = leaky.pop(f"test_a_process_never_closed[{backend}]")
        assert "the test left running: process pid" in said and "time.sleep(120)" in said
        said = leaky.pop(f"test_a_thread_left_by_async_code[{backend}]")
        assert "the test left running: thread 'Thread-" in said
        said = leaky.pop(f"test_a_connection_its_server_closed[{backend}]")
        assert "the test left a connection open after its server closed it" in said
    said = leaky.pop("test_a_kept_popen")
    assert "the test left running: process pid" in said and "time.sleep(120)" in said
    assert "the test left running: thread 'Thread-" in leaky.pop("test_a_thread_never_joined")
    said = leaky.pop("test_a_socket_dropped")
    assert "PytestUnraisableExceptionWarning: Exception ignored in: <socket.socket" in said
    assert leaky == {}


def test_slow_examples_are_not_failures(inner: Path, outcomes: dict[str, dict[str, str]]) -> None:
    assert outcomes["test_slow"] == {
        "test_slow_examples_that_hold": "passed",
        "test_slowly_drawn_examples_that_hold": "passed",
    }
    ran = (inner / "ran").read_text().split()
    assert ran.count("slow") >= 2 and ran.count("drawn") >= 10  # every example, slow as it was
