"""The control API over a full journal (the control plane's speed targets: the last 100 entries in ≤ 20 ms,
verify over 10,000 entries in ≤ 200 ms): a journal of 10,000 exchanges filled as the journal tap fills it, then
each endpoint called through the API's router, in process — what the control port's handler runs, without the
HTTP around it.

    .venv/bin/python scripts/bench/control_verify.py [--entries 10000] [--rounds 5]

The exchanges are OpenAI chat completions of an agent (a 1 KB system prompt, a user question; every fourth
answer a tool call, usage on each), answered by the mock, sent by ten tests (`x-llmproxy-test-id`). A journal
entry is converted and redacted the first time something reads it, and its request read as the chain reads it
the first time a verify judges it: so each call is measured **cold** (the first, on a journal nothing has read
yet: a fresh one per round) and **warm** (the same call again, nothing new in the journal: the gates — tool-call,
cost — read again none of the calls they read the first time). Medians over rounds, in milliseconds of wall
time and of this process's CPU; the goal is judged on CPU, the steadier figure on a shared machine.

    .venv/bin/python scripts/bench/control_verify.py --callgrind [--entries 10000] [--only verify/cost --only tool-call]

counts instead the instructions each call executes, cold and warm (valgrind's callgrind, switched on only around
the call, in a process of its own that fills its journal uncounted): a figure the machine's load does not move.
"""

import argparse
import dataclasses
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from llmproxy.chain.incoming import Door, Incoming  # noqa: E402
from llmproxy.chain.reply import Reply  # noqa: E402
from llmproxy.chain.taps.journal import JournalTap  # noqa: E402
from llmproxy.control.api import BASE, control_api  # noqa: E402
from llmproxy.control.auth import Access  # noqa: E402
from llmproxy.model.exchange import RawExchange, RawRequest, RawResponse  # noqa: E402
from llmproxy.plan import mock_plan  # noqa: E402
from llmproxy.proxy_session import Session  # noqa: E402

SYSTEM = "You are a careful assistant. " * 36  # about 1 KB
CALLS: dict[str, tuple[str, str, dict[str, Any] | None]] = {
    "last 100 entries (GET /journal?limit=100)": ("GET", "/journal?limit=100", None),
    "verify/requests, model": ("POST", "/verify/requests", {"match": {"model": "gpt-4o"}, "atLeast": 1}),
    "verify/requests, latest message": (
        "POST",
        "/verify/requests",
        {"match": {"latestMessageContains": "question 9999"}, "exactly": 1},
    ),
    "verify/sequence, 3 steps": (
        "POST",
        "/verify/sequence",
        {"sequence": [{"latestMessageContains": f"question {n}"} for n in (10, 5000, 9990)]},
    ),
    "verify/tool-call": ("POST", "/verify/tool-call", {"name": "search", "atLeast": 1}),
    "verify/cost": ("POST", "/verify/cost", {"maxUsd": "100"}),
}


def exchange(number: int) -> RawExchange:
    """The `number`th request, sent by one of ten tests, and its answer."""
    test = f"test-{number % 10}"
    body = {
        "model": "gpt-4o-mini" if number % 2 else "gpt-4o",
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Answer question {number}, please."},
        ],
    }
    headers = (
        ("host", "api.openai.com"),
        ("content-type", "application/json"),
        ("authorization", "Bearer sk-bench-0000000000000000"),
        ("x-llmproxy-test-id", test),
    )
    request = RawRequest("POST", "https", "api.openai.com", 443, "/v1/chat/completions", "HTTP/1.1", headers,
                         json.dumps(body).encode(), None)  # fmt: skip
    if number % 4 == 0:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{number}",
                    "type": "function",
                    "function": {"name": "search", "arguments": json.dumps({"query": f"q{number}"})},
                }
            ],
        }
        finish = "tool_calls"
    else:
        message, finish = {"role": "assistant", "content": f"The answer to {number} is {number * 2}."}, "stop"
    answer = {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 1_770_000_000,
        "model": body["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 260, "completion_tokens": 20, "total_tokens": 280},
    }
    response = RawResponse(200, "OK", "HTTP/1.1", (("content-type", "application/json"),),
                           json.dumps(answer).encode(), None, None)  # fmt: skip
    return RawExchange(request, response, None, datetime.now(UTC), 5.0, 6.0)


def filled(entries: int) -> Session:
    """A mock session whose journal holds `entries` exchanges, each kept by the session's own journal tap as the
    mock's reply to it."""
    session = Session.of(dataclasses.replace(mock_plan(None), journal=entries))
    tap = next(tap for tap in session.chain.taps if isinstance(tap, JournalTap))
    for number in range(1, entries + 1):
        raw = exchange(number)
        response = raw.response
        assert response is not None
        assert response.body is not None
        tap.reply(Incoming(raw.request, Door.RELAY), Reply(response.status, response.headers, response.body))
    assert session.journal is not None
    assert session.journal.kept == entries
    return session


def timed(run: Callable[[], Any]) -> tuple[float, float]:
    """Wall and CPU milliseconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def calling(name: str, entries: int) -> Callable[[], Any]:
    """The call `name` on a control API over a journal of `entries` nothing has read yet."""
    method, path, body = CALLS[name]
    router = control_api(filled(entries))
    data = json.dumps(body).encode() if body is not None else b""

    def call() -> None:
        answer = router.handle(method, BASE + path, data, Access.MUTATE)
        assert answer.status == 200, answer.body

    return call


def counted(entries: int) -> None:
    """Under callgrind: each call cold then warm, each after the parent said go (it switches counting on and
    off around it), on stdin and stdout. Each is first made over a journal of ten, uncounted: the modules it
    loads once a process are not what it costs (the rounds of the timed bench leave them out too)."""
    for name in CALLS:
        calling(name, 10)()
    for name in CALLS:
        call = calling(name, entries)
        for _ in ("cold", "warm"):
            print("ready", flush=True)
            sys.stdin.readline()
            call()
            print("done", flush=True)
            sys.stdin.readline()


def count_instructions(entries: int, only: list[str]) -> int:
    """Each call's instructions, cold and warm, counted in a process of its own under callgrind."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("--callgrind needs valgrind (Debian: apt-get install valgrind)")
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "cg.%p"
        argv = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}", sys.executable]
        argv += [__file__, "--counted", "--entries", str(entries), *(f"--only={text}" for text in only)]
        child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 text=True)  # fmt: skip
        assert child.stdin is not None
        assert child.stdout is not None

        print(f"instructions per call over a journal of {entries:,} exchanges:")
        print(f"  {'':<44} {'cold':>14} {'warm':>14}")
        try:
            for name in CALLS:
                found = []
                for _ in ("cold", "warm"):
                    found.append(counted_step(child, Path(scratch)))
                print(f"  {name:<44} {found[0]:14,} {found[1]:14,}", flush=True)
        finally:
            child.stdin.close()
            child.wait()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--callgrind", action="store_true", help="count each call's instructions instead")
    parser.add_argument(
        "--only", metavar="TEXT", action="append", help="only the calls whose name holds TEXT (repeatable: any of them)"
    )
    parser.add_argument("--counted", action="store_true", help=argparse.SUPPRESS)  # the process callgrind counts
    args = parser.parse_args()
    if args.only:
        for name in [name for name in CALLS if not any(text in name for text in args.only)]:
            del CALLS[name]
    if args.counted:
        counted(args.entries)
        return 0
    if args.callgrind:
        return count_instructions(args.entries, args.only or [])
    figures: dict[str, dict[str, list[tuple[float, float]]]] = {name: {"cold": [], "warm": []} for name in CALLS}
    for _ in range(args.rounds):
        for name in CALLS:
            call = calling(name, args.entries)  # cold: a journal nothing has read yet
            figures[name]["cold"].append(timed(call))
            figures[name]["warm"].append(timed(call))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"the control API over a journal of {args.entries:,} exchanges, medians of {args.rounds} rounds (ms):")
    print(f"  {'':<44} {'cold wall':>10} {'cold CPU':>9} {'warm wall':>10} {'warm CPU':>9}")
    for name, found in figures.items():
        cold = [statistics.median(values) for values in zip(*found["cold"], strict=True)]
        warm = [statistics.median(values) for values in zip(*found["warm"], strict=True)]
        print(f"  {name:<44} {cold[0]:10.1f} {cold[1]:9.1f} {warm[0]:10.1f} {warm[1]:9.1f}")
    print(f"peak memory of the process: {rss:.0f} MB")
    return 0


def counted_step(child: "subprocess.Popen[str]", scratch: Path) -> int:
    """Instructions of one step of a child run under callgrind with instrumentation off: the child says `ready`,
    is counted from `go` until it says `done`, and is told `next` once its count is dumped and read."""
    pid = str(child.pid)
    assert child.stdin is not None
    assert child.stdout is not None

    def control(*options: str) -> None:
        subprocess.run(["callgrind_control", *options, pid], capture_output=True, check=True)

    assert child.stdout.readline().strip() == "ready"
    before = set(scratch.glob(f"cg.{pid}.*"))
    control("--zero")
    control("--instr=on")
    child.stdin.write("go\n")
    child.stdin.flush()
    assert child.stdout.readline().strip() == "done"
    control("--instr=off")
    control("--dump")
    (dump,) = set(scratch.glob(f"cg.{pid}.*")) - before
    totals = next(line for line in dump.read_text(errors="replace").splitlines() if line.startswith("totals:"))
    child.stdin.write("next\n")
    child.stdin.flush()
    return int(totals.split()[1])


if __name__ == "__main__":
    raise SystemExit(main())
