"""What a recording that died left beside its cassette — its journal, which no live recording holds, and the new
cassette it was writing (`.NAME.PID.tmp`) — and what the next run does with them, said in one line that names
the file.

A journal counts (`files.journal_counts`) when its recording had begun for good: `llmproxy record`, which has no
end to wait for (each exchange counts once it is journalled), a rewrite that had started, a test whose
recording had ended whole. The next recording of the cassette recovers such a journal into it. A pending
journal (a test that never ended, a rewrite that never started), or one whose header was never written whole,
never counted: the next recording discards it. A run that only reads the cassette (a replay, a mock, the pytest
plugin replaying) changes no file: it reads a counting journal with the cassette, saying the recording is
partial, and ignores the others, saying so. The temporary files of a writer that is gone are removed by the
next recording, which holds the journal's lock (so no live recording is writing one), and never a file whose
process still runs.

Each line is a warning of this module's logger; the pytest plugin gathers them (`gathered`) for the end of its
run.
"""

import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from llmproxy.cassette.files import STARTED, journal_path, pending, temporaries
from llmproxy.cassette.journal import held
from llmproxy.words import plural

logger = logging.getLogger(__name__)

_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class Leftover:
    """A journal as a recording that died left it."""

    journal: Path
    header: dict[str, Any] | None  # None: never written whole
    exchanges: int  # whole lines after the header (a last line the kill cut is not one)
    stopped: float  # when it was last written (its modification time)

    @classmethod
    def read(cls, journal: Path) -> "Leftover | None":
        """None when there is no such journal, or nothing in it."""
        try:
            with journal.open("rb") as handle:
                first = handle.readline()
                lines = 0
                while chunk := handle.read(_CHUNK):
                    lines += chunk.count(b"\n")
                stopped = os.fstat(handle.fileno()).st_mtime
        except OSError:
            return None
        if not first:
            return None
        if not first.endswith(b"\n"):
            return cls(journal, None, 0, stopped)
        try:
            header = orjson.loads(first)
        except orjson.JSONDecodeError:
            header = {}  # reading it says what is wrong
        return cls(journal, header if isinstance(header, dict) else {}, lines, stopped)

    @property
    def counts(self) -> bool:
        """Whether its exchanges are part of the cassette (`files.journal_counts`)."""
        return self.header is not None and not pending(self.header)

    def recovered(self) -> str:
        return f"recovered {plural(self.exchanges, 'exchange')} from {self.journal} {self._left_by()}"

    def discarded(self) -> str:
        return f"discarded {self.journal}: {self._what()}, {self._left_by()}"

    def read_with(self, cassette: Path) -> str:
        """What a run that reads `cassette`, and this counting journal with it, says."""
        held_there = f"the {plural(self.exchanges, 'exchange')} {self.journal} holds"
        are = "is" if self.exchanges == 1 else "are"
        header = self.header or {}
        if header.get("append") == STARTED:  # a test's recording, ended whole: not partial
            return (
                f"{cassette}: {held_there}, a test's whole recording whose run {self._stopped()} before writing it"
                f" in, {are} read with it; the next recording of it recovers them"
            )
        how = "in its place" if header.get("rewrite") == STARTED else "with it"
        return (
            f"{cassette} is partial: the run recording it {self._stopped()} before it ended; {held_there} {are} read"
            f" {how}, and the next recording of it recovers them"
        )

    def ignored(self, cassette: Path) -> str:
        """What a run that reads `cassette` says of this journal, which does not count."""
        what = f"{self._what()}, {self._left_by()}"
        return f"{cassette}: ignoring {self.journal}: {what}; the next recording of it discards them"

    def _what(self) -> str:
        if self.header is None:
            return "a recording that stopped as it began"
        return f"{plural(self.exchanges, 'exchange')} of a recording that never finished"

    def _left_by(self) -> str:
        return f"left by a run that {self._stopped()}"

    def _stopped(self) -> str:
        """``stopped at 10:32 (pid 1909 is gone)``: when the journal was last written, and its owner's fate."""
        when = f"stopped at {_when(self.stopped)}"
        pid = _owner(self.header)
        if pid is None:
            return when
        return f"{when} (pid {pid} {'still runs, but no longer records it' if alive(pid) else 'is gone'})"


def reading(cassette: Path) -> None:
    """Before a run reads `cassette` (and only reads it): say what it does with a journal that a recording which
    died left beside it."""
    journal = journal_path(cassette)
    if not journal.exists() or held(journal):
        return
    left = Leftover.read(journal)
    if left is not None:
        say(left.read_with(cassette) if left.counts else left.ignored(cassette))


def remove_dead_temporaries(cassette: Path) -> list[str]:
    """Remove the temporary files of `cassette` whose writer is gone; their names. Call it holding the cassette's
    journal: no live recording writes one then, and a file whose process still runs is left as it is."""
    removed = []
    for temporary, pid in temporaries(cassette):
        if pid == os.getpid() or alive(pid):
            continue
        try:
            temporary.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            logger.warning("%s: cannot remove %s: %s", cassette, temporary.name, exc.strerror or exc)
            continue
        removed.append(temporary.name)
    return removed


def say(line: str, removed: list[str] | None = None) -> None:
    """One line for what happened to what a dead recording left (and the temporary files removed with it)."""
    logger.warning("%s", line + (f"; removed {', '.join(removed)}" if removed else ""))


@contextmanager
def gathered() -> Iterator[list[str]]:
    """The lines said (`say`, `reading`) while in the block, as well as logged."""
    lines: list[str] = []
    handler = _Gathering(lines)
    logger.addHandler(handler)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)


class _Gathering(logging.Handler):
    def __init__(self, lines: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.lines = lines

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def alive(pid: int) -> bool:
    """Whether process `pid` runs (one that ended but is not yet reaped does not). Another user's process
    counts as running."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()[0]
    except (OSError, IndexError):
        return True  # not Linux: os.kill is all there is to ask
    return state != b"Z"


def _owner(header: dict[str, Any] | None) -> int | None:
    """The pid its header names (`journal.this_process`: ``"pid 4242: llmproxy record …"``)."""
    owner = header.get("owner") if header is not None else None
    if not isinstance(owner, str) or not owner.startswith("pid "):
        return None
    number = owner[4:].partition(":")[0]
    return int(number) if number.isdecimal() and number.isascii() else None


def _when(stamp: float) -> str:
    local = time.localtime(stamp)
    if time.strftime("%Y-%m-%d", local) == time.strftime("%Y-%m-%d"):
        return time.strftime("%H:%M", local)
    return time.strftime("%Y-%m-%d %H:%M", local)
