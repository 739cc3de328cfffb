"""Which of this process's sockets are connections their peer closed and this end
never did (CLOSE_WAIT): what an unclosed client's keep-alive pool holds once its
server stops. Read from Linux's /proc; elsewhere nothing is found."""

from __future__ import annotations

import os
from pathlib import Path

FDS = Path("/proc/self/fd")
_TCP_TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
_CLOSE_WAIT = "08"  # the kernel's number for the TCP state


def socket_inodes() -> set[str]:
    """The inodes of this process's open sockets."""
    inodes: set[str] = set()
    try:
        fds = os.listdir(FDS)
    except OSError:
        return inodes
    for fd in fds:
        try:
            target = os.readlink(FDS / fd)
        except OSError:  # closed meanwhile (the listing's own descriptor among them)
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    return inodes


def _port(hex_address: str) -> int:
    """The port of ``0100007F:1F90``, an address as /proc/net/tcp writes it."""
    return int(hex_address.rsplit(":", 1)[1], 16)


def closed_by_peer(inodes: set[str]) -> list[str]:
    """Those of ``inodes`` that are TCP connections in CLOSE_WAIT, each as
    ``port LOCAL -> port REMOTE``."""
    found: list[str] = []
    if not inodes:  # the usual case, after each test: no need to read the tables
        return found
    for table in _TCP_TABLES:
        try:
            rows = table.read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) > 9 and fields[9] in inodes and fields[3] == _CLOSE_WAIT:
                found.append(f"port {_port(fields[1])} -> port {_port(fields[2])}")
    return found
