"""A watching page's work per journal entry, in process (docs/performance.md#the-dashboard): the mock chain
answers N requests through the relay (the bench's chat request, `scripts/bench/ui.py`'s expectation), then each
entry's event is made as the event stream's publisher makes it (`Rows.event`, the batch joined) — the glance,
the row, its JSON — uncounted work left out.

    .venv/bin/python scripts/bench/ui_rows.py [--entries 2000] [--rounds 15]

gives the best over rounds of this process's CPU time per entry (a fresh journal each round, filled
uncounted), and

    .venv/bin/python scripts/bench/ui_rows.py --callgrind [--entries 2000]

counts the instructions per entry instead (valgrind's callgrind, switched on only around the events made, in a
process of its own): a figure the machine's load does not move.
"""

import argparse
import dataclasses
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parents[1]
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(ROOT))

import payloads  # noqa: E402 (scripts/bench/payloads.py)
from control_verify import counted_step  # noqa: E402 (scripts/bench/control_verify.py)
from mock import expectations  # noqa: E402, UP026 (scripts/bench/mock.py)

from llmproxy.chain.incoming import Door, Incoming  # noqa: E402
from llmproxy.chain.stage import Context  # noqa: E402
from llmproxy.control.rows import Rows  # noqa: E402
from llmproxy.journal import Entry  # noqa: E402
from llmproxy.model.exchange import RawRequest  # noqa: E402
from llmproxy.plan import mock_plan  # noqa: E402
from llmproxy.proxy_session import Session  # noqa: E402


def filled(answers: Path, entries: int) -> list[Entry]:
    """A fresh mock session's journal after `entries` requests answered through the relay, read as entries
    (nothing of them read yet: the glance is made when the event is)."""
    session = Session.of(dataclasses.replace(mock_plan(answers), journal=entries))
    headers = (("content-type", "application/json"), ("authorization", f"Bearer {payloads.API_KEY}"))
    body = payloads.chat_request()
    context = Context(Door.RELAY, forwards=False)
    for _ in range(entries):
        raw = RawRequest("POST", "http", "127.0.0.1", 9, "/v1/chat/completions", "HTTP/1.1", headers, body, None)
        session.chain.answer(Incoming(raw, Door.RELAY), context)
    journal = session.journal
    assert journal is not None
    found = journal.read()
    assert len(found) == entries, f"{len(found)} entries of {entries}: the journal keeps fewer"
    return found


def events(entries: list[Entry]) -> bytes:
    """What the publisher does with a batch: each entry's event made, joined."""
    rows = Rows(len(entries))
    return b"".join([rows.event(entry) for entry in entries])


def timed(answers: Path, entries: int, rounds: int) -> float:
    """The best over `rounds` of the CPU microseconds making one entry's event takes."""
    events(filled(answers, 10))  # what a process loads once (the price data) is not what an entry costs
    best = float("inf")
    for _ in range(rounds):
        found = filled(answers, entries)
        start = time.process_time()
        events(found)
        best = min(best, (time.process_time() - start) / entries * 1e6)
    return best


PHASES = ("the glance", "the row", "the event's JSON")


def counted(answers: Path, entries: int) -> None:
    """Under callgrind: each phase of making the events, after the parent said go (it switches counting on and
    off around each): the entries' glances, then their rows (the glances kept), then the events (the rows
    kept)."""
    events(filled(answers, 10))
    found = filled(answers, entries)
    rows = Rows(len(found))
    phases = (
        lambda: [entry.glance for entry in found],
        lambda: [rows.of(entry) for entry in found],
        lambda: b"".join([rows.event(entry) for entry in found]),
    )
    for phase in phases:
        print("ready", flush=True)
        sys.stdin.readline()
        phase()
        print("done", flush=True)
        sys.stdin.readline()


def count_instructions(entries: int) -> int:
    """Instructions per entry, counted in a process of its own under callgrind."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("--callgrind needs valgrind (Debian: apt-get install valgrind)")
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "cg.%p"
        argv = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}", sys.executable]
        argv += [__file__, "--counted", "--entries", str(entries)]
        child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 text=True)  # fmt: skip
        assert child.stdin is not None
        assert child.stdout is not None

        found = []
        try:
            for _ in PHASES:
                found.append(counted_step(child, Path(scratch)) // entries)
        finally:
            child.stdin.close()
            child.wait()
    print(f"instructions per entry's event, over {entries:,}: {sum(found):,}")
    for phase, count in zip(PHASES, found, strict=True):
        print(f"  {phase:<16} {count:10,}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--callgrind", action="store_true", help="count instructions per entry instead")
    parser.add_argument("--counted", action="store_true", help=argparse.SUPPRESS)  # the process callgrind counts
    args = parser.parse_args()
    if args.callgrind and not args.counted:
        return count_instructions(args.entries)
    with tempfile.TemporaryDirectory() as scratch:
        answers = Path(scratch) / "expectations.json"
        expectations(answers, {})
        if args.counted:
            counted(answers, args.entries)
            return 0
        print(f"CPU µs per entry's event, best of {args.rounds} rounds over {args.entries:,}: "
              f"{timed(answers, args.entries, args.rounds):.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
