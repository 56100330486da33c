"""The journal a recording appends to beside its cassette, held under an exclusive lock from the first moment
of the recording to the last.

The lock is the journal file's own `flock`: it dies with the process that holds it, so a journal a killed
recorder left is told apart from a live one, and a second recorder on the same cassette is refused with the
first one's name (its header says who it is). Claiming comes before anything else is read or written, so a
refused recorder — `--record-mode rewrite` included — has touched nothing. Without `fcntl` (Windows) there
is no lock.
"""

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from llmproxy.cassette.files import journal_path
from llmproxy.cassette.redact import Redactor
from llmproxy.errors import CassetteError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

_CLAIM_ATTEMPTS = 5
_BUSY_ATTEMPTS = 10  # a reader's look (`held`) takes the lock for a moment: a claim tries again before it is refused
_BUSY_PAUSE = 0.02


def this_process() -> str:
    """Who is recording, for the message a second recorder gets: the pid and the command line (redacted: the
    journal is on disk)."""
    program = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
    if program == "__main__.py":  # python -m llmproxy, python -m pytest: the package's name
        program = Path(sys.argv[0]).parent.name
    command = " ".join([program, *sys.argv[1:]])
    if len(command) > 200:
        command = command[:199] + "…"
    return f"pid {os.getpid()}: {Redactor().text(command)}"


class Journal:
    def __init__(self, cassette: Path, path: Path, fd: int) -> None:
        """Use `claim`."""
        self.cassette = cassette
        self.path = path
        self._fd = fd

    @classmethod
    def claim(cls, cassette: Path) -> "Journal":
        """The cassette's journal, locked for this process (created empty if there is none). Raises
        CassetteError naming the recording that holds it."""
        path = journal_path(cassette)
        for _ in range(_CLAIM_ATTEMPTS):
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
            except OSError as exc:
                raise CassetteError(
                    f"cannot record to {cassette}: cannot create {path}: {exc.strerror or exc}"
                ) from None
            if not _lock(fd):
                owner = _owner(fd)
                os.close(fd)
                raise CassetteError(f"cannot record to {cassette}: another recording is writing it ({owner})")
            if _still_named(fd, path):
                return cls(cassette, path, fd)
            os.close(fd)  # the recorder that held it finished and removed it: claim the file at the path now
        raise CassetteError(f"cannot record to {cassette}: {path} keeps changing; is another recording starting?")

    @property
    def stale(self) -> bool:
        """Whether an earlier recording left something in it (it was killed before finishing its cassette)."""
        return os.fstat(self._fd).st_size > 0

    def begin(self, header: dict[str, Any], lines: Sequence[bytes] = ()) -> None:
        """Start the journal afresh: the header, then `lines` (one JSON line each), on disk before returning."""
        os.ftruncate(self._fd, 0)
        os.lseek(self._fd, 0, os.SEEK_SET)
        self.append(b"".join([orjson.dumps(header) + b"\n", *lines]))
        os.fsync(self._fd)

    def rewrite_header(self, header: dict[str, Any]) -> None:
        """The header line again, in place and on disk: it must be exactly as long as the one it replaces (a
        rewrite's ``"pending"`` becoming ``"started"``), so the lines after it stay as they are."""
        line = orjson.dumps(header) + b"\n"
        if os.pread(self._fd, len(line), 0)[-1:] != b"\n":
            raise ValueError("a journal header can only be replaced by one of the same length")
        os.pwrite(self._fd, line, 0)
        os.fsync(self._fd)

    def append(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def sync(self) -> None:
        os.fsync(self._fd)

    def release(self, *, remove: bool) -> None:
        """Unlock it; removed first (while still locked) when the cassette holds everything now."""
        if self._fd < 0:
            return
        try:
            if remove:
                self.path.unlink(missing_ok=True)
        finally:
            os.close(self._fd)
            self._fd = -1


def held(path: Path) -> bool:
    """Whether a live recording holds the journal at `path` (a journal no one holds was left by one that died).
    Looking takes a shared lock for a moment, which `Journal.claim` waits out. Without `fcntl`: never known."""
    if fcntl is None:  # pragma: no cover - Windows
        return False
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # and with it the shared lock
    return False


def _lock(fd: int) -> bool:
    """Take the exclusive lock, or say another recording holds it."""
    if fcntl is None:  # pragma: no cover - Windows
        return True
    for attempt in range(_BUSY_ATTEMPTS):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if attempt + 1 < _BUSY_ATTEMPTS:
                time.sleep(_BUSY_PAUSE)
    return False


def _owner(fd: int) -> str:
    """The `owner` its header names, as far as it can be read."""
    try:
        first = os.pread(fd, 4096, 0).partition(b"\n")[0]
        owner = orjson.loads(first).get("owner") if first else None
    except (OSError, orjson.JSONDecodeError, AttributeError):
        owner = None
    return str(owner) if owner else "it has not said who it is yet"


def _still_named(fd: int, path: Path) -> bool:
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino)
