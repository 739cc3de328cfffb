"""``exit_if_threads_remain``: the process leaves at once past a thread that
hangs, and what was written before is not lost on the way out (``os._exit``
skips the interpreter's own flushing)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

# a non-daemon thread that never ends, output still in the buffers, then the exit
CHILD = textwrap.dedent(
    """
    import logging, sys, threading
    from streamtools.cli import exit_if_threads_remain

    threading.Thread(target=threading.Event().wait, daemon=False).start()
    if sys.argv[1] == "closed-reader":
        print("ready", file=sys.stderr)  # the parent closes its end of stdout
        sys.stdin.readline()  # it has by now
    logging.basicConfig(stream=sys.stderr, format="%(message)s")
    logging.getLogger("x").warning("logged")
    sys.stdout.write("printed, no newline")
    sys.stderr.write("said, no newline")
    if sys.argv[1] == "no-stdout":
        sys.stdout = None
    exit_if_threads_remain(3)
    print("not reached", file=sys.stderr)
    """
)


def _run(case: str, *, close_stdout: bool = False) -> tuple[int, str, str]:
    pipe = subprocess.PIPE
    argv = [sys.executable, "-c", CHILD, case]
    # buffered as a user's terminal session is, whatever this one says
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    with subprocess.Popen(argv, stdin=pipe, stdout=pipe, stderr=pipe, text=True, env=env) as proc:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        try:
            # the timeouts bound the hang this is about: the thread never ends
            if close_stdout:
                assert proc.stderr.readline() == "ready\n"
                proc.stdout.close()
                proc.stdin.write("go\n")
                proc.stdin.flush()
                code, out, err = proc.wait(timeout=20), "", proc.stderr.read()
            else:
                out, err = proc.communicate(timeout=20)
                code = proc.returncode
        finally:
            proc.kill()
    return code, out, err


def test_output_still_in_the_buffers_is_written_before_leaving() -> None:
    code, out, err = _run("plain")
    assert code == 3
    assert out == "printed, no newline"
    assert err == "logged\nsaid, no newline"


def test_a_reader_that_went_away_does_not_keep_the_process_waiting() -> None:
    """Flushing stdout into a closed pipe (``| head``) raised BrokenPipeError out of
    exit_if_threads_remain before os._exit: a traceback, then the interpreter waited
    at exit for the thread, for ever."""
    code, _, err = _run("closed-reader", close_stdout=True)
    assert code == 3
    assert err == "logged\nsaid, no newline"  # no traceback


def test_no_stdout_at_all_still_exits() -> None:
    """``sys.stdout`` is None under pythonw and when a program drops it."""
    code, _, err = _run("no-stdout")
    assert code == 3
    assert err == "logged\nsaid, no newline"
