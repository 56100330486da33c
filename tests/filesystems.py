"""Hostile filesystems for tests, made for real: a read-only directory and a small, full disk.

A directory's mode does not stop root, so as root these mount: the directory bound onto itself read-only, or a
tmpfs of a few kilobytes. Where neither works (no root, no mount), a test that needs them skips and says why.
"""

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


def _umount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)


@contextmanager
def read_only(directory: Path) -> Iterator[Path]:
    """`directory`, with what it holds, read-only while the block runs."""
    if os.geteuid() != 0:
        mode = directory.stat().st_mode
        directory.chmod(0o555)
        try:
            yield directory
        finally:
            directory.chmod(mode)
        return
    if not (_mount("--bind", str(directory), str(directory)) and _mount("-o", "remount,bind,ro", str(directory))):
        _umount(directory)
        pytest.skip("as root, a read-only directory needs a bind mount, and mount failed here")
    try:
        yield directory
    finally:
        _umount(directory)


@contextmanager
def small_disk(directory: Path, kilobytes: int = 64) -> Iterator[Path]:
    """`directory` as a tmpfs of `kilobytes`, empty, while the block runs."""
    directory.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or not _mount("-t", "tmpfs", "-o", f"size={kilobytes}k", "tmpfs", str(directory)):
        pytest.skip("a small disk needs a tmpfs mount (root), and it could not be made here")
    try:
        yield directory
    finally:
        _umount(directory)
