import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def _orphans_at_home_under(base: Path) -> list[int]:
    """The processes adopted by init whose HOME lies under `base`: what a CLI run with a fresh home there left
    running after it exited (Cline's CLI starts a hub daemon that outlives it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            variables = (entry / "environ").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile, or not ours to read
        homes = [v[5:] for v in variables if v.startswith(b"HOME=")]
        if parent == 1 and homes and Path(os.fsdecode(homes[0])).is_relative_to(base):
            found.append(int(entry.name))
    return found


@pytest.fixture(autouse=True)
def _no_daemon_outlives_its_test(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Stop what the CLIs under test left running, so that a daemon does not take a core from every test after
    it. Only orphans whose home is this run's temporary folder: a server a fixture keeps for the next test is
    the child of this process, not of init."""
    yield
    if not Path("/proc").is_dir():
        return
    base = tmp_path_factory.getbasetemp()
    left = _orphans_at_home_under(base)
    for pid in left:
        with contextlib.suppress(OSError):  # gone meanwhile
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 3
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = [pid for pid in left if Path(f"/proc/{pid}").exists()]
    for pid in left:
        with contextlib.suppress(OSError):  # gone meanwhile
            os.kill(pid, signal.SIGKILL)
