"""What a test leaves running when it ends: child processes and threads it started
and never ended (a server never stopped, a ``Popen`` or ``anyio.open_process``
never waited for, a thread never joined). Read by conftest's guard after each
test. Child processes are read from Linux's /proc; elsewhere none are found."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

_TASKS = Path("/proc/self/task")

# Pools that keep idle threads between uses and end them themselves: trio's thread
# cache, anyio's workers over asyncio, asyncio's default executor
_POOL_THREADS = ("Trio thread ", "AnyIO worker thread", "asyncio_")


def live_children() -> set[int]:
    """The process ids of this process's children that still run (an exited child
    not yet waited for, a zombie, runs no more)."""
    pids: set[int] = set()
    try:
        tasks = os.listdir(_TASKS)
    except OSError:
        return pids
    for task in tasks:
        try:
            pids.update(int(pid) for pid in (_TASKS / task / "children").read_text().split())
        except OSError:  # the thread ended meanwhile, or no such file on this kernel
            continue
    return {pid for pid in pids if _runs(pid)}


def _runs(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _command(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return f"pid {pid}"
    command = raw.replace(b"\0", b" ").decode(errors="replace").strip()
    return f"pid {pid} ({command[:120]})"


def own_threads() -> set[threading.Thread]:
    """The threads alive now, but for the pools' idle workers."""
    return {t for t in threading.enumerate() if not t.name.startswith(_POOL_THREADS)}


def left_running(
    children: set[int], threads: set[threading.Thread], grace: float
) -> tuple[list[str], list[str]]:
    """The children and threads started since ``children`` and ``threads`` were
    read that still run after up to ``grace`` seconds (what is ending, a killed
    process, a thread past its last line, gets that long, as a loaded machine
    needs): each process said by its command line, each thread by its name.
    The processes found are killed, so that they do not run on into later tests."""
    deadline = time.monotonic() + grace
    while True:
        new_children = live_children() - children
        new_threads = {t for t in own_threads() - threads if t.is_alive()}
        if not (new_children or new_threads) or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    processes = [_command(pid) for pid in sorted(new_children)]
    for pid in new_children:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue
    return processes, sorted(t.name for t in new_threads)
