"""Benchmark: many concurrent streaming clients through ``streamtools proxy``.

Three processes on loopback: a fast fake upstream (a raw ASGI app under
Uvicorn that streams OpenAI chunks, each carrying its send time), the proxy
(``python -m streamtools proxy``, am_xml dialect), and this process running N
concurrent streaming clients (httpx, SSE parsed by hand to keep the client
cheap). Phases:

1. direct, paced: clients read the upstream itself; per-chunk latency is
   arrival time minus the send time written into the chunk;
2. proxy, paced: the same through the proxy; the *added* latency per chunk is
   the difference of the two distributions (p50, p99), printed next to the
   target (p99 < 5 ms) with PASS or MISS. Phases 1 and 2 run at a light and
   at the heavy offered load (``--light-interval``, ``--interval``), one row
   each, so the knee shows. Each load runs ``--rounds`` times, direct and
   proxied in turn, and a row pools its rounds, so that a spell of load from
   outside (this machine's cores are shared) falls on both sides alike; the
   rounds' own added p99 are printed too;
3. proxy, unpaced (run first): the upstream sends as fast as it can; chunks
   per second delivered to all clients together;
4. proxy, short streams (one text chunk and the call, unpaced, arrivals over
   ``--ramp``): the proxy's CPU per *request*, which a paced stream's CPU per
   chunk carries amortised over its chunks.

Before each proxied paced phase, one short stream per client through the
proxy (not measured) reopens its upstream connections, which expired during
the direct phase (keep-alive 4 s), so a row measures streaming, not connection
setup. Each paced row also gets the added latency of the chunks sent once all
clients have arrived (``--ramp`` + 1 s on), which separates the cost of the
arrivals (each a new request) from steady streaming.

Each reply is text chunks followed by one tool call written in am_xml, so the
proxy parses, re-encodes text and ``tool_calls`` deltas. Errors are counted
(a stream without ``[DONE]``, a missing call, a non-200 status). Peak memory is
the proxy process's VmHWM. Everything is bounded: the run stops by itself.

    python bench/proxy.py [--clients 200] [--chunks 100] [--interval 0.02]
                          [--light-interval 0.05] [--ramp 0.5] [--rounds 3]
                          [--http auto|httptools|h11]

The harness keeps its own garbage collector out of the figures: the upstream
runs with the collector off (a bounded run), and the clients turn it off while
they stream and collect between phases. Left on, their full passes (up to
60 ms, measured with a ``gc.callbacks`` hook) fell on a direct or a proxied
round at random. The proxy runs as ``streamtools proxy`` does, collector on.

Clients arrive spread over ``--ramp`` seconds. The machine's other load shows
in the latencies; the proxy's CPU time per delivered chunk (from /proc, for the
paced and the unpaced phase) is the figure least affected by it. Paced chunks
each cost the proxy one upstream read and one client write; unpaced ones are
read and written in batches.
"""

from __future__ import annotations

import argparse
import gc
import os
import socket
import subprocess
import sys
import time
from typing import Any

import anyio
import httpx
import msgspec

CALLS = {
    "am_xml": ['<am:tool_call name="weather">', "<city>Pa", "ris</city>", "</am:tool_call>"],
    "hermes": [
        '<tool_call>{"name": "weather", ',
        '"arguments": {"city": "Pa',
        'ris"}}</tool_call>',
    ],
}
_enc = msgspec.json.Encoder().encode
_dec = msgspec.json.Decoder().decode


# --- the fake upstream (runs in its own process) --------------------------------------


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    body = {"id": "u", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    return b"data: " + _enc({**body, "choices": [choice]}) + b"\n\n"


async def upstream_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            else:
                await send({"type": "lifespan.shutdown.complete"})
                return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    chunks = int(os.environ.get("BENCH_CHUNKS", "40"))
    count = body.find(b"CHUNKS=")  # a per-request override (the per-request CPU row)
    if count >= 0:
        chunks = int(body[count + 7 : body.index(b";", count)])
    # the clients' pace travels through the proxy in the prompt: "PACE=<seconds>"
    marker = body.find(b"PACE=")
    interval = float(body[marker + 5 : body.index(b";", marker)]) if marker >= 0 else 0.0
    headers = [(b"content-type", b"text/event-stream")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    send_body = send

    async def out(data: bytes) -> None:
        await send_body({"type": "http.response.body", "body": data, "more_body": True})

    await out(_chunk({"role": "assistant", "content": ""}))
    for _ in range(chunks):
        if interval:
            await anyio.sleep(interval)
        await out(_chunk({"content": f"{time.time():.6f}|"}))
    for piece in CALLS[os.environ.get("BENCH_DIALECT", "am_xml")]:
        await out(_chunk({"content": piece}))
    await out(_chunk({}, "stop"))
    await out(b"data: [DONE]\n\n")
    await send({"type": "http.response.body", "body": b"", "more_body": False})


# --- clients --------------------------------------------------------------------------


class Stats:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.stamps: list[float] = []  # when each measured chunk left the upstream
        self.chunks = 0
        self.errors = 0
        self.calls = 0
        self.kinds: dict[str, int] = {}

    def error(self, kind: str) -> None:
        self.errors += 1
        self.kinds[kind] = self.kinds.get(kind, 0) + 1


async def one_stream(
    client: httpx.AsyncClient, url: str, stats: Stats, tools: bool, prompt: str
) -> None:
    body: dict[str, Any] = {
        "model": "m",
        "stream": True,
        "messages": [{"role": "user", "content": prompt}],
    }
    if tools:
        params = {"type": "object", "properties": {"city": {"type": "string"}}}
        body["tools"] = [
            {"type": "function", "function": {"name": "weather", "parameters": params}}
        ]
    done, called = False, False
    try:
        async with client.stream("POST", url, json=body) as response:
            if response.status_code != 200:
                stats.error(f"status {response.status_code}: {(await response.aread())[:200]!r}")
                return
            async for line in response.aiter_lines():
                if not line.startswith("data: "):
                    continue
                data = line[6:]
                if data == "[DONE]":
                    done = True
                    break
                now = time.time()
                chunk = _dec(data)
                if not chunk.get("choices"):
                    continue
                delta = chunk["choices"][0]["delta"]
                stats.chunks += 1
                content = delta.get("content") or ""
                for stamp in content.split("|")[:-1]:
                    if stamp and stamp[0].isdigit():
                        sent = float(stamp)
                        stats.latencies.append(now - sent)
                        stats.stamps.append(sent)
                if delta.get("tool_calls"):
                    called = True
    except httpx.HTTPError as exc:
        stats.error(repr(exc))
        return
    if not done:
        stats.error("no [DONE]")
    elif tools and not called:
        stats.error("no tool call")
    stats.calls += called


async def run_clients(
    url: str,
    clients: int,
    tools: bool,
    budget: float,
    prompt: str = "Weather in Paris?",
    ramp: float = 0.0,
) -> tuple[Stats, float]:
    stats = Stats()
    limits = httpx.Limits(max_connections=clients + 10, max_keepalive_connections=clients)
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:
        start = time.perf_counter()
        with anyio.fail_after(budget):
            async with anyio.create_task_group() as tg:
                for _ in range(clients):
                    tg.start_soon(one_stream, client, url, stats, tools, prompt)
                    if ramp:  # arrivals spread over `ramp` seconds, as real traffic comes
                        await anyio.sleep(ramp / clients)
        return stats, time.perf_counter() - start


# --- orchestration --------------------------------------------------------------------


def clients_run(*args: Any) -> Any:
    """Run the clients on uvloop when it is installed: cheaper clients leave the
    proxy and the upstream more of the shared cores, for both phases alike. The
    collector is off while they run and collects after (see the docstring)."""
    gc.disable()
    try:
        try:
            import uvloop  # noqa: F401
        except ImportError:
            return anyio.run(*args)
        return anyio.run(*args, backend_options={"use_uvloop": True})
    finally:
        gc.enable()
        gc.collect()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"process exited early with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listening on {port}")


def family(pid: int) -> list[int]:
    """The process and its children (Uvicorn workers)."""
    pids = [pid]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        pids.append(int(entry))
            except (OSError, ValueError, IndexError):
                continue
    return pids


def peak_rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its workers (robust to other load)."""
    total = 0
    for one in family(pid):
        try:
            with open(f"/proc/{one}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def pool(rounds: list[Stats]) -> Stats:
    """The rounds' figures together (latencies, counts, errors)."""
    out = Stats()
    for one in rounds:
        out.latencies += one.latencies
        out.stamps += one.stamps
        out.chunks += one.chunks
        out.errors += one.errors
        out.calls += one.calls
        for kind, count in one.kinds.items():
            out.kinds[kind] = out.kinds.get(kind, 0) + count
    return out


def steady(stats: Stats, skip: float) -> list[float]:
    """Latencies of chunks sent ``skip`` seconds or more after the first one (arrivals over)."""
    if not stats.stamps:
        return []
    start = min(stats.stamps)
    return [
        lat for lat, at in zip(stats.latencies, stats.stamps, strict=True) if at >= start + skip
    ]


TARGET_P99_MS = 5.0  # issue 6: p99 added latency per chunk under 5 ms


class Row:
    """One paced load over its rounds: direct and proxied latencies, pooled; the
    proxy's CPU per chunk."""

    def __init__(
        self, rate: float, directs: list[Stats], throughs: list[Stats], cpu: float
    ) -> None:
        self.rate, self.directs, self.throughs = rate, directs, throughs
        self.direct, self.through = pool(directs), pool(throughs)
        self.cpu_us = cpu / max(1, self.through.chunks) * 1e6
        self.cores = (0.0, 0.0)  # proxy, clients + upstream: cores busy while proxied

    def added(self, q: float) -> float:
        return (pct(self.through.latencies, q) - pct(self.direct.latencies, q)) * 1e3

    def rounds_line(self) -> str:
        each = [
            (pct(t.latencies, 0.99) - pct(d.latencies, 0.99)) * 1e3
            for d, t in zip(self.directs, self.throughs, strict=True)
        ]
        return (
            f"added p99 at {self.rate:g}/s, round by round: "
            + ", ".join(f"{x:.1f}" for x in each)
            + " ms"
        )

    def steady_line(self, skip: float) -> str:
        direct = [x for d in self.directs for x in steady(d, skip)]
        through = [x for t in self.throughs for x in steady(t, skip)]
        d50, d99, p50, p99 = (pct(v, q) * 1e3 for v in (direct, through) for q in (0.5, 0.99))
        return (
            f"after the arrivals (chunks sent {skip:g} s on) at {self.rate:g}/s: "
            f"added p50 {p50 - d50:.1f} ms, p99 {p99 - d99:.1f} ms"
        )

    def line(self, clients: int) -> str:
        d50, d99 = (pct(self.direct.latencies, q) * 1e3 for q in (0.5, 0.99))
        p50, p99 = (pct(self.through.latencies, q) * 1e3 for q in (0.5, 0.99))
        verdict = "PASS" if self.added(0.99) < TARGET_P99_MS else "MISS"
        load = f"{clients} x {self.rate:g}/s = {clients * self.rate / 1e3:g}k/s"
        return (
            f"{load:>20} | {d50:6.1f} {d99:6.1f} | {p50:6.1f} {p99:6.1f} | "
            f"{self.added(0.5):6.1f} {self.added(0.99):6.1f}  < {TARGET_P99_MS:g} {verdict} | "
            f"{self.cpu_us:5.0f} us"
        )


def paced(
    proxy: subprocess.Popen[bytes],
    urls: tuple[str, str],
    n: int,
    interval: float,
    ramp: float,
    rounds: int,
) -> Row:
    """``rounds`` times: the clients direct, then through the proxy. Pooled over
    the rounds, a moment of load from outside falls on both sides alike."""
    prompt = f"Weather? PACE={interval};"
    directs: list[Stats] = []
    throughs: list[Stats] = []
    cpu = wall = other = 0.0
    for _ in range(rounds):
        direct, _ = clients_run(run_clients, urls[0], n, False, 120.0, prompt, ramp)
        # The direct phase outlasts the proxy's upstream keep-alive (4 s): open its
        # connections again, so the row measures streaming, not connection setup.
        clients_run(run_clients, urls[1], n, True, 60.0, "CHUNKS=1;")
        cpu_before, others_before = cpu_seconds(proxy.pid), others()
        start = time.perf_counter()
        through, _ = clients_run(run_clients, urls[1], n, True, 120.0, prompt, ramp)
        wall += time.perf_counter() - start
        cpu += cpu_seconds(proxy.pid) - cpu_before
        other += others() - others_before
        directs.append(direct)
        throughs.append(through)
    row = Row(1 / interval, directs, throughs, cpu)
    row.cores = (cpu / wall, other / wall)
    return row


def others() -> float:
    """CPU seconds of this process (the clients) and the upstream (its child)."""
    mine = os.times()
    own = mine.user + mine.system
    return own + sum(cpu_seconds(p) for p in family(os.getpid())[1:] if is_upstream(p))


def is_upstream(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"--serve-upstream" in f.read()
    except OSError:
        return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=200)
    ap.add_argument("--chunks", type=int, default=100)
    ap.add_argument("--ramp", type=float, default=0.5, help="seconds over which clients start")
    ap.add_argument("--interval", type=float, default=0.02, help="heavy row: s between chunks")
    ap.add_argument("--light-interval", type=float, default=0.05, help="light row (0: skip)")
    ap.add_argument("--rounds", type=int, default=3, help="direct/proxied rounds per load")
    ap.add_argument("--dialect", choices=sorted(CALLS), default="am_xml")
    ap.add_argument("--workers", type=int, default=1, help="proxy worker processes")
    ap.add_argument("--http", choices=("auto", "httptools", "h11"), default="auto")
    ap.add_argument("--serve-upstream", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve_upstream is not None:
        import uvicorn

        gc.disable()  # the fake upstream's own pauses are not the proxy's (see above)
        uvicorn.run(upstream_app, host="127.0.0.1", port=args.serve_upstream, log_level="error")
        return 0

    env = {
        **os.environ,
        "BENCH_CHUNKS": str(args.chunks),
        "BENCH_DIALECT": args.dialect,
    }
    up_port, proxy_port = free_port(), free_port()
    upstream = subprocess.Popen(
        [sys.executable, __file__, "--serve-upstream", str(up_port)], env=env
    )
    proxy = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamtools",
            "proxy",
            "--upstream",
            f"http://127.0.0.1:{up_port}/v1",
            "--port",
            str(proxy_port),
            "--log-level",
            "warning",
            "--dialect",
            args.dialect,
            "--workers",
            str(args.workers),
            *(["--http", args.http] if args.http != "auto" else []),
        ]
    )
    try:
        wait_port(up_port, upstream)
        wait_port(proxy_port, proxy)
        direct_url = f"http://127.0.0.1:{up_port}/v1/chat/completions"
        proxy_url = f"http://127.0.0.1:{proxy_port}/v1/chat/completions"
        urls, n, ramp = (direct_url, proxy_url), args.clients, args.ramp
        intervals = [i for i in (args.light_interval, args.interval) if i > 0]
        # unpaced first: it also opens the proxy's upstream connections, so the
        # paced rows measure steady streaming, not connection setup
        cpu_before = cpu_seconds(proxy.pid)
        fast, elapsed = clients_run(run_clients, proxy_url, n, True, 60.0, "unpaced")
        cpu = cpu_seconds(proxy.pid) - cpu_before
        # per-request cost: streams of one text chunk (+ the call), unpaced
        cpu_before = cpu_seconds(proxy.pid)
        short, _ = clients_run(run_clients, proxy_url, n, True, 60.0, "CHUNKS=1;", ramp)
        per_request = (cpu_seconds(proxy.pid) - cpu_before) / n * 1e6
        rows = [paced(proxy, urls, n, interval, ramp, args.rounds) for interval in intervals]
        print(
            f"{n} concurrent streams, {args.chunks} text chunks + 1 call each, "
            f"arrivals over {ramp} s, {args.rounds} rounds per load; latencies in ms per "
            f"chunk (http: {args.http})"
        )
        print(
            f"{'offered load':>20} | {'direct':>13} | {'proxied':>13} | {'added by proxy':>14}"
            f"  {'p99 target':>11} | proxy CPU"
        )
        print(
            f"{'':>20} | {'p50':>6} {'p99':>6} | {'p50':>6} {'p99':>6} | {'p50':>6} {'p99':>6}"
            f"  {'':>11} | per chunk"
        )
        for row in rows:
            print(row.line(n))
        for row in rows:
            print(row.rounds_line())
        for row in rows:
            print(row.steady_line(ramp + 1.0))
        for row in rows:
            proxy_cores, other_cores = row.cores
            print(
                f"cores busy at {row.rate:g}/s (proxied phase): proxy {proxy_cores:.2f}, "
                f"clients + upstream {other_cores:.2f}, of {os.cpu_count()}"
            )
        print(f"throughput (unpaced upstream): {fast.chunks / elapsed:,.0f} chunks/s to clients")
        per_chunk = cpu / fast.chunks * 1e6 if fast.chunks else float("nan")
        print(f"proxy CPU per delivered chunk (unpaced): {per_chunk:.0f} us")
        calls = sum(r.through.calls for r in rows) + fast.calls + short.calls
        wanted = n * (len(rows) * args.rounds + 2)
        print(
            f"proxy CPU per request (streams of 1 text chunk + the call, ~6 chunks): "
            f"{per_request:.0f} us"
        )
        print(f"tool calls received: {calls} of {wanted}")
        errors = ", ".join(
            f"{r.rate:g}/s direct {r.direct.errors} proxied {r.through.errors}" for r in rows
        )
        print(f"errors: {errors}, unpaced {fast.errors}, short {short.errors}")
        for stats in [*(r.direct for r in rows), *(r.through for r in rows), fast, short]:
            for kind, count in stats.kinds.items():
                print(f"  {count} x {kind}")
        peak = sum(peak_rss_mb(p) for p in family(proxy.pid))
        print(f"proxy peak memory (VmHWM, all its processes): {peak:.1f} MB")
    finally:
        for proc in (proxy, upstream):
            proc.terminate()
        for proc in (proxy, upstream):
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
