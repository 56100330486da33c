"""The command `record`, `replay` and `mock` run around (`-- CMD ARGS…`), and how llmproxy waits and stops:
the command is looked up before anything starts, Ctrl-C reaches the child from the terminal, SIGTERM is passed
on, and the child's exit status becomes llmproxy's (the README's table of exit statuses). The control API's stop
is a Ctrl-C without a terminal (`Interrupt`)."""

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import IO

from llmproxy.cli.reporting import Stopped
from llmproxy.errors import CommandError

type Output = Callable[[str], None]


def check_runnable(command: Sequence[str], environ: Mapping[str, str]) -> None:
    """Raise CommandError unless the command can be run — it exists (on `environ`'s PATH when it names no
    folder), and is an executable file — so that a typo fails at once, before a proxy starts or a cassette is
    touched, with a shell's exit status: 127 for none, 126 for one that cannot be executed."""
    program = command[0]
    if os.sep in program or (os.altsep and os.altsep in program):
        found: str | None = program if os.path.lexists(program) else None
    else:
        found = shutil.which(program, path=environ.get("PATH", os.defpath))
    if found is None:
        raise CommandError(f"cannot run {program!r}: no such command", 127)
    if os.path.isdir(found):
        raise CommandError(f"cannot run {program!r}: it is a folder", 126)
    if not os.access(found, os.X_OK):
        raise CommandError(f"cannot run {program!r}: Permission denied", 126)


class Interrupt:
    """Ctrl-C without a terminal — the control API's stop: the command, when one runs, gets the SIGINT a
    terminal would send it (it and every process it started in llmproxy's process group, the foreground group
    a terminal signals; llmproxy itself and whatever ran llmproxy get nothing), and llmproxy ends once it has
    ended, with its exit status; without a command, `wait_for_stop` returns as if Ctrl-C had been pressed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._child: subprocess.Popen[bytes] | None = None
        self.requested = threading.Event()

    def __call__(self) -> None:
        with self._lock:
            self.requested.set()
            child = self._child
        if child is not None:
            interrupt_tree(child.pid)

    def running(self, child: subprocess.Popen[bytes] | None) -> None:
        """`child` runs from now (None: it has ended); interrupted at once when a stop came before it started."""
        with self._lock:
            self._child = child
            due = child is not None and self.requested.is_set()
        if due and child is not None:
            interrupt_tree(child.pid)


def interrupt_tree(pid: int) -> None:
    """SIGINT to `pid` and to each process under it that is in this process's group, as a terminal's Ctrl-C
    reaches them; never to this process, nor to any process above it."""
    group = os.getpgrp()
    for each in [pid, *_descendants(pid, group)]:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(each, signal.SIGINT)


def _descendants(pid: int, group: int) -> list[int]:
    """The processes under `pid` in process group `group`, from /proc (Linux) or `ps` (elsewhere)."""
    parents: dict[int, list[int]] = {}
    for each, parent, pgid in _processes():
        if pgid == group:
            parents.setdefault(parent, []).append(each)
    found: list[int] = []
    waiting = [pid]
    while waiting:
        children = parents.get(waiting.pop(), [])
        found += children
        waiting += children
    return found


def _processes() -> list[tuple[int, int, int]]:
    """Every process as (pid, parent pid, process group)."""
    proc = Path("/proc")
    if proc.is_dir():
        found = []
        for entry in proc.iterdir():
            if entry.name.isdigit():
                with contextlib.suppress(OSError, ValueError, IndexError):
                    stat = (entry / "stat").read_text()
                    fields = stat[stat.rindex(")") + 2 :].split()  # after the command name, which may hold spaces
                    found.append((int(entry.name), int(fields[1]), int(fields[2])))
        return found
    listed = subprocess.run(["ps", "-A", "-o", "pid=,ppid=,pgid="], capture_output=True, text=True, check=False)
    return [
        (int(fields[0]), int(fields[1]), int(fields[2]))
        for line in listed.stdout.splitlines()
        if len(fields := line.split()) == 3 and all(field.isdigit() for field in fields)
    ]


def run_child(
    command: Sequence[str],
    env: dict[str, str],
    started: Callable[[], None],
    *,
    output: Output | None = None,
    stdout_to_stderr: bool = False,
    interrupt: Interrupt | None = None,
) -> int:
    """Run the command to its end and return its exit status; `started` once it runs. `output`: each line the
    command prints (both streams) goes there instead of the terminal (the live view prints it above its
    table). `stdout_to_stderr`: its standard output goes to llmproxy's stderr (`--json` keeps stdout for the
    document). `interrupt`: the control API's stop, which interrupts the command as Ctrl-C would."""
    stdout: int | None = None
    if output is not None:
        stdout = subprocess.PIPE
    elif stdout_to_stderr:
        stdout = sys.stderr.fileno()
    children: list[subprocess.Popen[bytes]] = []
    pending: list[int] = []

    def forward(signum: int, _frame: FrameType | None) -> None:
        if children:
            children[0].send_signal(signum)
        else:
            pending.append(signum)

    def child_hears_it(_signum: int, _frame: FrameType | None) -> None:
        """Ctrl-C: the terminal sent it to the child too; llmproxy stops once the child has ended."""

    # Set before the child exists: a signal between its start and our wait must not unwind llmproxy while
    # the child runs. Python-level handlers (not SIG_IGN) are reset to the defaults in the child by exec.
    previous = {
        signal.SIGTERM: signal.signal(signal.SIGTERM, forward),
        signal.SIGINT: signal.signal(signal.SIGINT, child_hears_it),
    }
    try:
        try:
            child = subprocess.Popen(
                list(command), env=env, stdout=stdout, stderr=subprocess.STDOUT if output is not None else None
            )
        except FileNotFoundError:
            raise CommandError(f"cannot run {command[0]!r}: no such command", 127) from None
        except OSError as error:
            raise CommandError(f"cannot run {command[0]!r}: {error.strerror or error}", 126) from None
        children.append(child)
        for signum in pending:
            child.send_signal(signum)
        if interrupt is not None:
            interrupt.running(child)
        started()
        reader = None
        if output is not None and child.stdout is not None:
            pipe = child.stdout
            reader = threading.Thread(target=lambda: _pass_on(pipe, output), name="llmproxy-child-output", daemon=True)
            reader.start()
        status = child.wait()
        if interrupt is not None:
            interrupt.running(None)
        if reader is not None:
            reader.join()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 128 - status if status < 0 else status


def _pass_on(pipe: IO[bytes], output: Output) -> None:
    for line in iter(pipe.readline, b""):
        output(line.decode("utf-8", "replace"))
    pipe.close()


@contextmanager
def stopped_by_sigterm() -> Iterator[None]:
    """SIGTERM while the proxy starts or stops unwinds like Ctrl-C does (`Stopped`), so the proxy stops and
    the cassette is finished; the writer process, in a group of its own, finishes it even if llmproxy is
    interrupted again."""

    def stop(signum: int, _frame: FrameType | None) -> None:
        raise Stopped(signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def wait_for_stop(interrupt: Interrupt | None = None) -> int:
    """Wait for Ctrl-C or SIGTERM, or the control API's stop (`interrupt`: as Ctrl-C); the signal's number."""
    stop = interrupt.requested if interrupt is not None else threading.Event()
    received: list[int] = []

    def request_stop(signum: int, _frame: FrameType | None) -> None:
        received.append(signum)
        stop.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        while not stop.wait(0.5):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return received[0] if received else signal.SIGINT
