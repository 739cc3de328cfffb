"""``streamtools proxy`` says where it serves, in one line on stderr at start.

It printed nothing (Uvicorn's start-up lines only with ``--log-level info``), so
``--port 0``, which its port-in-use error offers as the way out, took a port
nobody was told; a probe socket was also closed and the port bound again by
Uvicorn, which for port 0 was another one."""

from __future__ import annotations

import select
import signal
import subprocess
import sys

import httpx


def test_port_0_is_announced_and_served() -> None:
    argv = [sys.executable, "-m", "streamtools", "proxy", "--upstream", "http://127.0.0.1:9/v1"]
    argv += ["--port", "0"]
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        try:
            ready, _, _ = select.select([proc.stderr], [], [], 60)  # generous: a loaded machine
            assert ready, "nothing said on stderr in 60 s"
            line = proc.stderr.readline()
            assert line.startswith("streamtools proxy: serving on http://127.0.0.1:"), line
            url = line.split()[4]
            assert not url.endswith(":0")
            assert line.endswith(f"(OpenAI clients: {url}/v1, Anthropic: {url})\n")
            # served there (a request the proxy refuses itself, without its upstream)
            response = httpx.post(f"{url}/v1/chat/completions", json={}, timeout=30)
            assert response.status_code == 400
            assert response.json()["error"]["message"] == "'model' is required"
        finally:
            proc.send_signal(signal.SIGINT)
            _, rest = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert rest == ""  # the one line, and nothing more
