"""With ``include_tracebacks=True`` the model is shown the traceback of a tool's
exception from the tool's own code down: the frames of the executor, anyio and
the worker thread above it (ten of them for a sync tool) said nothing about
the error and spent the model's context on the install's paths (peers trim
them too: agentlys strips its thread offload frames). Frames the tool itself
runs through (a library it calls) stay."""

from __future__ import annotations

import anyio
import pytest

from streamtools.events import CallEnd, ToolFailed
from streamtools.runtime.executor import Executor
from streamtools.tools import ToolRegistry, tool

pytestmark = pytest.mark.anyio


def helper(n: int) -> float:
    return 1 / n


@tool
async def async_divide(n: int) -> float:
    """Divide one by n."""
    return helper(n)


@tool
def sync_divide(n: int) -> float:
    """Divide one by n."""
    return helper(n)


@tool
async def threaded_divide(n: int) -> float:
    """Divide one by n in a thread."""
    return await anyio.to_thread.run_sync(helper, n)


@pytest.mark.parametrize("name", ["async_divide", "sync_divide", "threaded_divide"])
async def test_the_traceback_starts_at_the_tool(anyio_backend: str, name: str) -> None:
    executor = Executor(
        ToolRegistry([async_divide, sync_divide, threaded_divide]), include_tracebacks=True
    )
    with anyio.fail_after(10):
        outcome = await executor.execute(
            CallEnd(index=0, id="c1", name=name, arguments={"n": 0}, raw="")
        )
    assert isinstance(outcome, ToolFailed) and outcome.kind == "exception"
    head, _, trace = outcome.message.partition("\n")
    assert head == f"Tool {name!r} raised ZeroDivisionError: division by zero"
    frames = [line.strip() for line in trace.splitlines() if line.strip().startswith("File ")]
    assert frames[0].endswith(f"in {name}"), frames
    assert frames[-1].endswith("in helper")
    assert "streamtools" not in trace.replace(__file__, "")
    assert trace.rstrip().endswith("ZeroDivisionError: division by zero")
    if name == "threaded_divide":  # the tool's own way through anyio stays
        assert any("anyio" in frame for frame in frames)
