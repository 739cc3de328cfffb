"""``streamtools proxy``: serve OpenAI/Anthropic-compatible tool calling over a plain model.

Example::

    streamtools proxy --upstream http://127.0.0.1:11434/v1 --dialect hermes

then point any OpenAI client at ``http://127.0.0.1:8400/v1`` (or an Anthropic
client at ``http://127.0.0.1:8400``). The upstream API key is the client's own
(``Authorization`` / ``x-api-key``) unless ``--api-key`` or the environment
variable ``STREAMTOOLS_UPSTREAM_API_KEY`` configures one, which then wins.

The port is tried before Uvicorn starts (``listen``, which ``streamtools ui``
binds its socket with too): one that is taken is one line on stderr with the
way out, exit status 1, where Uvicorn logged ``ERROR: [Errno 98] error while
attempting to bind on address …`` and ended with status 3. The address it
serves is then said in one line on stderr (``streamtools proxy: serving on
http://127.0.0.1:8400 …``, the port taken with ``--port 0``), Uvicorn's own
start-up lines being shown only at ``--log-level info``; one process serves on
the socket bound here, so that port is the one served.
"""

from __future__ import annotations

import argparse
import errno
import gc
import os
import socket
import sys
from typing import Any

from streamtools.cli import at_least, http_url, json_object, log_level, port, positive_number
from streamtools.prompts import RENDERERS

__all__ = ["listen", "register", "run"]


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "proxy",
        help="serve OpenAI/Anthropic-compatible tool calling",
        description="OpenAI- and Anthropic-compatible tool calling in front of a plain chat model.",
    )
    parser.add_argument("--upstream", required=True, type=http_url, help="the upstream's base URL")
    parser.add_argument(
        "--upstream-kind",
        choices=("openai", "anthropic", "ollama"),
        default="openai",
        help="the upstream's API (default: openai, chat completions)",
    )
    parser.add_argument(
        "--dialect",
        choices=sorted(RENDERERS),
        default="am_xml",
        help="how tools are described to the upstream and called in its text (default am_xml)",
    )
    parser.add_argument(
        "--think-open",
        action="store_true",
        help="the upstream's chat template ends the prompt with <think> (DeepSeek-R1, QwQ): "
        "replies begin inside reasoning, up to </think>",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=port, default=8400, help="port (default 8400)")
    parser.add_argument(
        "--api-key",
        default=os.environ.get("STREAMTOOLS_UPSTREAM_API_KEY"),
        help="upstream API key (default: $STREAMTOOLS_UPSTREAM_API_KEY, else the client's key)",
    )
    parser.add_argument("--model", default=None, help="upstream model, overriding the request's")
    parser.add_argument(
        "--max-body",
        type=at_least(1),
        default=32 * 1024 * 1024,  # ProxyConfig's (not imported here: Starlette loads late)
        help="request body limit in bytes (default 32 MiB)",
    )
    parser.add_argument(
        "--max-repairs", type=at_least(0), default=1, help="re-prompts per request (default 1)"
    )
    parser.add_argument(
        "--timeout",
        type=positive_number,
        default=120.0,
        metavar="SECONDS",
        help="how long the upstream may take to accept a request and between two reads of "
        "its answer (default 120; not a bound on the whole answer)",
    )
    parser.add_argument(
        "--upstream-retries",
        type=at_least(0),
        default=0,
        help="retries of a refused upstream request (default 0: the client retries)",
    )
    parser.add_argument(
        "--connect-wait",
        type=positive_number,
        default=0.0,
        metavar="SECONDS",
        help="how long each request waits for an upstream that refuses connections, as vLLM "
        "and SGLang do until their model is loaded (default none: it fails at once)",
    )
    parser.add_argument(
        "--ping-interval",
        type=seconds_or_off,
        default=15.0,
        metavar="SECONDS",
        help="the longest a streaming client waits for a byte: the answer begins then if "
        "the upstream has not answered, else a keep-alive is sent (default 15; 0: neither)",
    )
    parser.add_argument(
        "--upstream-body",
        type=json_object,
        default={},
        metavar="JSON",
        help="fields added to every upstream request, as a JSON object merged one level deep, "
        """e.g. '{"options": {"num_ctx": 32768}}' for Ollama""",
    )
    parser.add_argument(
        "--workers",
        type=at_least(1),
        default=1,
        help="worker processes (default 1; the proxy is stateless, so more may serve at once)",
    )
    parser.add_argument(
        "--http",
        choices=("auto", "httptools", "h11"),
        default="auto",
        help="Uvicorn's HTTP implementation (default auto: httptools when installed, else h11)",
    )
    parser.add_argument(
        "--loop",
        choices=("auto", "asyncio", "uvloop"),
        default="auto",
        help="Uvicorn's event loop (default auto: uvloop when installed, else asyncio)",
    )
    parser.add_argument(
        "--log-level",
        type=log_level,
        default="warning",
        help="uvicorn log level (default warning)",
    )
    parser.add_argument(
        "--access-log",
        action="store_true",
        help="log every request (off by default: a log line per request costs the proxy CPU)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import msgspec
    import uvicorn

    from streamtools.browser_guard import LOOPBACK_NAMES, is_loopback
    from streamtools.proxy import ProxyConfig, create_app
    from streamtools.proxy.app import CONFIG_ENV

    config = ProxyConfig(
        upstream=args.upstream.rstrip("/"),
        upstream_kind=args.upstream_kind,
        dialect=args.dialect,
        think_open=args.think_open,
        api_key=args.api_key,
        model=args.model,
        max_body=args.max_body,
        max_repairs=args.max_repairs,
        timeout=args.timeout,
        upstream_retries=args.upstream_retries,
        connect_wait=args.connect_wait,
        upstream_body=args.upstream_body,
        ping_interval=args.ping_interval,
        # bound to a loopback address, it answers to its own names only (DNS rebinding)
        hosts=LOOPBACK_NAMES if is_loopback(args.host) else None,
    )
    app = create_app(config)  # also checks the configuration before serving
    # A port in use is said in one line now, the port taken (--port 0) after it;
    # one process serves the socket bound here, --workers processes the one
    # Uvicorn's supervisor binds on the same port.
    probe = listen(args.host, args.port, "proxy")
    if probe is None:
        return 1
    bound = probe.getsockname()[1]  # --port 0: the free port it took
    where = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{where}:{bound}"
    said = f"streamtools proxy: serving on {url} (OpenAI clients: {url}/v1, Anthropic: {url})"
    print(said, file=sys.stderr)
    sys.stderr.flush()
    if args.workers > 1:
        probe.close()  # Uvicorn's supervisor binds the port itself, for its workers
        # each worker process builds its own app from the same configuration
        os.environ[CONFIG_ENV] = msgspec.json.encode(config).decode()
        uvicorn.run(
            "streamtools.cli.proxy:worker_app",
            factory=True,
            workers=args.workers,
            host=args.host,
            port=bound,
            log_level=args.log_level,
            access_log=args.access_log,
            http=args.http,
            loop=args.loop,
        )
        return 0
    # served on the socket bound above: the port announced is the one served,
    # and a client that connects at once waits in its backlog
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=args.host,
            port=bound,
            log_level=args.log_level,
            access_log=args.access_log,
            http=args.http,
            loop=args.loop,
        )
    )
    freeze_heap()
    try:
        server.run(sockets=[probe])
    except KeyboardInterrupt:  # Uvicorn raises the SIGINT it caught again, once stopped
        pass
    finally:
        probe.close()
    return 0 if server.started else 3  # as uvicorn.run ends when the app fails to start


def listen(host: str, port: int, command: str) -> socket.socket | None:
    """A socket bound to ``host``:``port`` and listening, as Uvicorn binds one
    (``SO_REUSEADDR``; an IPv6 address, ``::1``, on an IPv6 socket); None when
    it cannot be, said on stderr in one line naming ``streamtools COMMAND``,
    with ``--port 0`` as the way out of a port in use (another server, a
    second run), where Uvicorn's own bind logged ``[Errno 98]``."""
    ipv6 = ":" in host
    sock = socket.socket(socket.AF_INET6 if ipv6 else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        # listening before a URL is announced: a client that connects at once is
        # queued in the backlog rather than refused while the server starts
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        hint = " (--port 0 takes any free one)" if exc.errno == errno.EADDRINUSE else ""
        why = exc.strerror or str(exc)
        where = f"[{host}]" if ipv6 else host
        said = f"streamtools {command}: cannot listen on {where}:{port}: {why}{hint}"
        print(said, file=sys.stderr)
        return None
    return sock


def seconds_or_off(text: str) -> float:
    """An ``argparse`` type: a positive number of seconds, or 0 for off (``--ping-interval``)."""
    try:
        if float(text) == 0:
            return 0.0
    except ValueError:
        pass  # positive_number says what is wrong
    return positive_number(text)


def freeze_heap() -> None:
    """Keep the garbage collector's full passes rare and short while serving.

    Everything imported and built before serving (modules, the app) lives as
    long as the process. Frozen, a full collection no longer walks it: measured
    under ``bench/proxy.py``, the one full collection that falls while 200
    streams arrive went from 38-44 ms to 17-26 ms, a pause every open stream
    waits through.

    A full pass still came about every ten seconds at 4k chunks/s, 20-46 ms each,
    and found nothing to collect: a request leaves no reference cycles behind
    (see ``providers.base._DONE``), but the objects of the streams in flight
    survive the younger passes, and CPython starts a full one when those
    survivors have grown by a quarter. It now waits for a hundred passes of the
    middle generation instead of ten, so a full pass comes about ten times more
    rarely; the younger passes run as before.
    """
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, 100)


def worker_app() -> Any:
    """The app of one ``--workers`` process: ``create_app_from_env``, heap frozen."""
    from streamtools.proxy.app import create_app_from_env

    app = create_app_from_env()
    freeze_heap()
    return app
