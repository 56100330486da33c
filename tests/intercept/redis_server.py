"""A real `redis-server` (the Debian package) on 127.0.0.1 and a free port, for the tests of shared counters.

CI installs it (`.ci/run`); on a machine without it these tests skip, saying how to get it."""

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from llmproxy_addons.proxy import free_port

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def redis_available() -> bool:
    return Path(REDIS_SERVER).exists()


@contextmanager
def redis_server(directory: Path) -> Iterator[str]:
    """A fresh server without persistence; yields its URL (database 0)."""
    if not redis_available():
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    port = free_port()  # redis-server must be told its port (port 0 turns its TCP listener off)
    command = [REDIS_SERVER, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"]
    process = subprocess.Popen(
        [*command, "--dir", str(directory)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not start on port {port}") from None
                time.sleep(0.02)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)
