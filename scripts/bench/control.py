"""What the control API's journal costs (docs/performance.md#the-control-apis-journal): `llmproxy mock` with the
journal on (`--journal-size N`: it keeps every exchange of the run) against the same mock with it off
(`--journal-size 0`), each a process of its own, in the same run; and the memory each entry holds.

    .venv/bin/python scripts/bench/control.py [--requests N] [--rounds R] [--callgrind] [--quick]

* **CPU per request**: N exchanges (10,000) sent one after another on one keep-alive connection to each
  process, on both of its doors (base URL, the cheaper: there the journal is the larger share; HTTPS_PROXY);
  the process's CPU time over them, per request. Rounds alternate the order of the two; the table gives the
  median over rounds of each round's ratio on ÷ off (goal ≤ 1.03). `--callgrind` counts instructions per
  request instead (valgrind's callgrind, switched on only around the N requests): the machine's load does not
  move it.
* **Memory per entry**, in this process: the same request (each a bytes object of its own, as a door makes
  them) answered N times by a mock chain built from the same plan; the allocations still held afterwards
  (tracemalloc) with the journal on less those with it off, per entry, less the request and answer bodies the
  entries keep (goal ≤ 2 KB beyond them); then again once every entry has been read whole through the control
  API (`GET /journal/{seq}`: converted to the cassette's shape and redacted, the last few kept for the next
  read), and once a report has read them all (`GET /report`, its read kept by the control API for the next).
"""

import argparse
import dataclasses
import gc
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import payloads  # noqa: E402
from chaos import _exchange, instructions  # noqa: E402 (scripts/bench/chaos.py: one request, its answer read)
from load import cpu_ms  # noqa: E402
from mock import expectations  # noqa: E402, UP026 (scripts/bench/mock.py)
from proxy import BIN, CALLGRIND_LISTEN_TIMEOUT, LISTEN_TIMEOUT, Target, free_port, start, stop  # noqa: E402

GOAL_CPU = 1.03  # journal on ÷ off, CPU per request
GOAL_BYTES = 2048  # per entry, beyond the bodies it keeps
JOURNALS = ("off", "on")


def start_mocks(workdir: Path, started: list[subprocess.Popen[bytes]], requests: int, callgrind: bool) -> list[Target]:
    """The two mock processes (journal off, on), each measured on both doors: base URL, then HTTPS_PROXY."""
    answers = workdir / "expectations.json"
    expectations(answers, {})
    under = _under_callgrind(workdir) if callgrind else []
    targets = []
    for journal in JOURNALS:
        relay = free_port()
        size = requests + 200 if journal == "on" else 0  # room for every exchange, the warm-ups' too
        argv = [*under, str(BIN / "llmproxy"), "mock", "--expectations", str(answers), "--port", "{port}"]
        argv += ["--base-url-port", str(relay), "--journal-size", str(size)]
        timeout = CALLGRIND_LISTEN_TIMEOUT if callgrind else LISTEN_TIMEOUT
        proxied = start(f"HTTPS_PROXY, journal {journal}", argv, workdir, started, listen_timeout=timeout)
        targets.append(Target(f"base URL, journal {journal}", relay, proxied.pid, proxied.process, proxy=False))
        targets.append(proxied)
    return targets


def _under_callgrind(workdir: Path) -> list[str]:
    """The command prefix that runs a process under callgrind, counting nothing until told to."""
    out = workdir / "cg.%p"
    return ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}", sys.executable]


def _request(target: Target, upstream_port: int) -> bytes:
    body = payloads.chat_request()
    path = f"http://127.0.0.1:{upstream_port}/v1/chat/completions" if target.proxy else "/v1/chat/completions"
    return (
        f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1:{upstream_port}\r\ncontent-type: application/json\r\n"
        f"authorization: Bearer {payloads.API_KEY}\r\ncontent-length: {len(body)}\r\n\r\n"
    ).encode() + body


def cpu_per_request(target: Target, upstream_port: int, requests: int) -> float:
    """CPU milliseconds the target's process spends per request over `requests` sent one after another."""
    request = _request(target, upstream_port)
    with socket.create_connection(("127.0.0.1", target.port)) as connection:
        for _ in range(20):  # warm up
            _exchange(connection, request)
        before = cpu_ms(target.pid)
        for _ in range(requests):
            _exchange(connection, request)
        return (cpu_ms(target.pid) - before) / requests


def measure_cpu(args: argparse.Namespace) -> list[str]:
    """The table of CPU (or instructions) per request, journal off and on, per door."""
    upstream_port = free_port()  # nothing listens there: the mock needs no upstream
    started: list[subprocess.Popen[bytes]] = []
    costs: dict[str, dict[str, list[float]]] = {}  # door → journal → per round
    ratios: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch)
        try:
            targets = start_mocks(workdir, started, args.requests * max(1, args.rounds), args.callgrind)
            doors = {"base URL": targets[0::2], "HTTPS_PROXY": targets[1::2]}  # each door: journal off, on
            for round_ in range(1 if args.callgrind else args.rounds):
                for door, pair in doors.items():
                    spent: dict[str, float] = {}
                    for journal, target in (
                        zip(JOURNALS, pair, strict=True)
                        if round_ % 2 == 0
                        else reversed(list(zip(JOURNALS, pair, strict=True)))
                    ):
                        if args.callgrind:
                            spent[journal] = instructions(target, upstream_port, "openai", args.requests, workdir)
                        else:
                            spent[journal] = cpu_per_request(target, upstream_port, args.requests)
                        costs.setdefault(door, {}).setdefault(journal, []).append(spent[journal])
                    ratios.setdefault(door, []).append(spent["on"] / spent["off"])
                    print(f"round {round_ + 1}, {door}: off {spent['off']:.4g}, on {spent['on']:.4g}", file=sys.stderr)
        finally:
            stop(started)
    unit = "instructions/request" if args.callgrind else "CPU ms/request"
    lines = [f"| door | journal off, {unit} | journal on | on ÷ off (per round) | goal ≤ {GOAL_CPU} |"]
    lines.append("|---" * 5 + "|")
    for door, found in ratios.items():
        ratio = statistics.median(found)
        off, on = (statistics.median(costs[door][journal]) for journal in JOURNALS)
        figures = f"{off:,.0f} | {on:,.0f}" if args.callgrind else f"{off:.4f} | {on:.4f}"
        rounds = ", ".join(f"{value:.3f}" for value in found)
        lines.append(f"| {door} | {figures} | {ratio:.3f} ({rounds}) | {'met' if ratio <= GOAL_CPU else 'NOT MET'} |")
    return lines


def measure_memory(requests: int) -> list[str]:
    """The table of bytes the journal holds per entry, in this process, beyond the bodies: before it is read,
    once every entry has been read whole (`GET /journal/{seq}`), and once a report has read them all (`GET
    /report`, which the control API keeps for its next read), each through the control API's router."""
    from llmproxy.chain.incoming import Door, Incoming
    from llmproxy.chain.stage import Context
    from llmproxy.control.api import BASE, control_api
    from llmproxy.control.auth import Access
    from llmproxy.model.exchange import RawRequest
    from llmproxy.plan import mock_plan
    from llmproxy.proxy_session import Session

    sent = payloads.chat_request()
    headers = (("host", "127.0.0.1"), ("content-type", "application/json"), ("authorization", "Bearer sk-x"))
    context = Context(Door.RELAY, forwards=False)
    with tempfile.TemporaryDirectory() as scratch:
        answers = Path(scratch) / "expectations.json"
        expectations(answers, {})

        def held(journal: int) -> tuple[float, Session]:
            """Bytes per request still allocated after `requests` answers; the session."""
            session = Session.of(dataclasses.replace(mock_plan(answers), journal=journal))
            gc.collect()
            tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0]
            for _ in range(requests):
                body = bytes(bytearray(sent))  # a bytes object of its own, as a door makes each request's
                raw = RawRequest(
                    "POST", "http", "127.0.0.1", 80, "/v1/chat/completions", "HTTP/1.1", headers, body, None
                )
                session.chain.answer(Incoming(raw, Door.RELAY), context)
            gc.collect()
            after = tracemalloc.get_traced_memory()[0]
            tracemalloc.stop()
            return (after - before) / requests, session

        off, _ = held(0)
        on, session = held(requests)
        assert session.journal is not None
        bodies = _bodies(session.journal._captures) / requests  # before any read: no entry made yet
        unread = on - off - bodies
        router = control_api(session)

        def grown(paths: list[str]) -> float:
            """Bytes per entry still allocated once `paths` have been read through the control API."""
            gc.collect()
            tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0]
            for path in paths:
                answer = router.handle("GET", BASE + path, b"", Access.READ)
                assert answer.status == 200, answer.body
            del answer
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - before
            tracemalloc.stop()
            return held / requests

        read = unread + grown([f"/journal/{seq}" for seq in range(1, requests + 1)])
        report = grown(["/report?format=json"])
    return [
        f"| journal memory per entry, {requests:,} entries | bytes | goal ≤ {GOAL_BYTES} |",
        "|---|---|---|",
        f"| the bodies it keeps: the request's ({len(sent)} B) and the answer's, as bytes objects | {bodies:,.0f} | |",
        f"| beyond them, until first read | {unread:,.0f} | {_met(unread)} |",
        f"| beyond them, after `GET /journal/{{seq}}` of every entry | {read:,.0f} | {_met(read)} |",
        f"| beyond them, after a report over every entry too | {read + report:,.0f} | |",
        f"| of which the report's read, kept by the control API for its next (its calls, their requests) "
        f"| {report:,.0f} | |",
    ]


def _met(held: float) -> str:
    return "met" if held <= GOAL_BYTES else "NOT MET"


def _bodies(captures: Any) -> int:
    """The bytes objects of the request and answer bodies the journal's captures keep, each counted once (an
    answer the mock built once and sends again is shared)."""
    from llmproxy.model.exchange import RawRequest

    kept: dict[int, int] = {}
    for capture in captures:
        first = capture[4]  # after who answered, the test, the reader and the door: a stage's request, or the
        # upstream's exchange
        if isinstance(first, RawRequest):  # a stage's reply, in parts: its body is the one bytes object among them
            bodies = [first.body, *(part for part in capture[5:] if isinstance(part, bytes))]
        else:
            response = first.response
            bodies = [first.request.body]
            bodies += [response.body] if response is not None and response.body is not None else []
        for body in bodies:
            kept[id(body)] = sys.getsizeof(body)
    return sum(kept.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=10_000, help="exchanges per measure (default 10,000)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="one round of 1,000 requests")
    parser.add_argument("--callgrind", action="store_true", help="count instructions per request instead of CPU")
    parser.add_argument("--memory-only", action="store_true", help="only the memory per entry, in this process")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.requests = 1, 1_000
    if args.callgrind and (shutil.which("valgrind") is None or shutil.which("callgrind_control") is None):
        sys.exit("--callgrind needs valgrind (Debian: apt-get install valgrind)")
    lines = [] if args.memory_only else [*measure_cpu(args), ""]
    print("\n".join([*lines, *measure_memory(args.requests)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
