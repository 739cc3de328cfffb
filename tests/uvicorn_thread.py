"""Uvicorn for the tests' servers in threads, stopped as soon as it is told to.

``uvicorn.Server`` looks at ``should_exit`` on a 0.1 s tick, then pauses 0.1 s
after asking its connections to close and looks again every 0.1 s: 0.15-0.3 s
of sleep per server stopped, which the suite paid about a thousand times (the
proxy's and the UI's tests start one or two servers each). ``QuickStop`` keeps
uvicorn's tick for its own work (the date header) but looks at the flag every
few milliseconds, and then waits for the connections and tasks exactly as
uvicorn does (bounded by ``timeout_graceful_shutdown``, forever without one),
looking every few milliseconds; the lifespan ends as it does in uvicorn.
"""

from __future__ import annotations

import asyncio
import math
import socket

import uvicorn

_LOOK = 0.005  # seconds between looks at the flag, the connections and the tasks
_TICK = 20  # looks per uvicorn tick (0.1 s)


class QuickStop(uvicorn.Server):
    async def main_loop(self) -> None:
        ticks = 0
        while not await self.on_tick(ticks):
            ticks = (ticks + 1) % 864_000
            for _ in range(_TICK):
                await asyncio.sleep(_LOOK)
                if self.should_exit:
                    return

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        loop = asyncio.get_running_loop()
        grace = self.config.timeout_graceful_shutdown
        deadline = loop.time() + (math.inf if grace is None else grace)
        state = self.server_state
        while (state.connections or state.tasks) and not self.force_exit:
            if loop.time() >= deadline:
                for task in state.tasks:
                    task.cancel(msg="Task cancelled, timeout graceful shutdown exceeded")
                break
            await asyncio.sleep(_LOOK)
        else:
            for server in self.servers:
                await server.wait_closed()
        if not self.force_exit:
            await self.lifespan.shutdown()
