"""Whether recording keeps up with the traffic, in bounded memory
(docs/performance.md#large-answers-keeping-up-in-bounded-memory): `llmproxy record` against bare mitmdump, with
request and response bodies of the same size (1 KB and 200 KB by default), the answers whole JSON bodies or
streamed.

    .venv/bin/python scripts/bench/recording.py [--rounds N] [--seconds S] [--sizes 1000,200000]
                                               [--answers json,stream] [--concurrency 8] [--json PATH]
                                               [--versus CHECKOUT]

A streamed answer (an agent's usual traffic) is an SSE stream of one content_block_delta per 100 characters
of its text, sent as fast as the upstream can (10 events for 1 KB, 2,000 for 200 KB). `llmproxy record` passes
each event on as it comes and records them all; for streamed answers mitmdump runs with
`--set stream_large_bodies=1`, so it too passes each piece on as it comes (bare, it would buffer the stream and
send it whole: a cheaper job than the one llmproxy must do). `--versus CHECKOUT` adds `llmproxy record` from
another source tree (a worktree of main, say) on this venv's libraries, measured in the same rounds.

Each measurement starts the proxy afresh (so its peak memory and its shutdown are its own) and sends load
(load.py, keep-alive connections, absolute-form requests) through it to a fake Anthropic upstream
(upstream.py) for S seconds. Measured per proxy:

* requests/s the client got through, and the CPU each request cost the proxy's whole process tree (for
  `record`, the proxy and its cassette writer: what recording costs the machine, whichever core pays);
* peak RSS of the proxy's whole process tree (for `record`: the proxy and its cassette writer), sampled
  every 20 ms from /proc;
* for `record`, the journalled exchanges per second: exchanges in the cassette's journal over the time from
  the first request until the journal held every request sent (the writer keeps up when this is at least
  the rate requests were sent), the backlog left when the load stopped, and the exchanges missing from
  the cassette at the end (must be 0);
* shutdown: from the end of the load (SIGTERM sent at once) to exit, the backlog drained, the cassette
  written and the journal gone.

Rounds alternate the order of the proxies; the table gives medians over rounds and the ratios against
mitmdump measured in the same round. The machine is shared: read the ratios, not the absolute figures.
"""

import argparse
import itertools
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proxy import BENCH, BIN, free_port, wait_listening

SAMPLE_S = 0.02
PAGE = os.sysconf("SC_PAGE_SIZE")


def tree(pid: int) -> list[int]:
    """`pid` and every process below it."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as children:
                    todo += [int(child) for child in children.read().split()]
        except OSError:
            continue
    return found


def rss(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm") as statm:
                total += int(statm.read().split()[1]) * PAGE
        except OSError:
            continue
    return total


@dataclass
class Watch:
    """Samples a process tree's RSS, and counts the lines a journal gains, on a thread of its own."""

    pid: int
    journal: Path | None
    peak: int = 0
    lines: int = 0
    stamps: list[tuple[float, int]] = field(default_factory=list)  # (time, journalled exchanges)
    _stop: threading.Event = field(default_factory=threading.Event)
    _offset: int = 0

    def start(self) -> "Watch":
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def journalled(self) -> int:
        return max(0, self.lines - 1)  # the header line is not an exchange

    def _run(self) -> None:
        pids, refreshed = tree(self.pid), time.monotonic()
        while not self._stop.wait(SAMPLE_S):
            now = time.monotonic()
            if now - refreshed > 0.5:  # the writer process starts with the proxy; look again now and then
                pids, refreshed = tree(self.pid), now
            self.peak = max(self.peak, rss(pids))
            if self.journal is not None:
                self._count()
                self.stamps.append((now, self.journalled()))

    def _count(self) -> None:
        try:
            with self.journal.open("rb") as handle:  # type: ignore[union-attr]
                handle.seek(self._offset)
                data = handle.read()
        except OSError:
            return
        self._offset += len(data)
        self.lines += data.count(b"\n")


def measure(
    name: str, size: int, answer: str, upstream_port: int, workdir: Path, args: argparse.Namespace
) -> dict[str, Any]:
    port = free_port()
    cassette = workdir / f"{name}-{size}-{time.monotonic_ns()}.json"
    if name.startswith("record"):
        argv = [str(BIN / "llmproxy"), "record", "--cassette", str(cassette), "--port", str(port)]
        if name in args.trees:  # that tree's code on this venv's libraries (env execs: the same pid)
            tree = args.trees[name]
            path = f"PYTHONPATH={tree}{os.pathsep}{tree / 'addons'}"
            argv = ["env", path, sys.executable, "-m", "llmproxy", *argv[1:]]
    else:
        argv = [str(BIN / "mitmdump"), "-q", "--listen-host", "127.0.0.1", "--listen-port", str(port)]
        if answer == "stream":  # as llmproxy does: each piece passed on as it comes
            argv += ["--set", "stream_large_bodies=1"]
    log = workdir / f"{name}-{time.monotonic_ns()}.log"
    process = subprocess.Popen(argv, stdout=log.open("wb"), stderr=subprocess.STDOUT, cwd=workdir)
    try:
        wait_listening(port, process, name, log)
        journal = cassette.with_name(cassette.name + ".journal") if name.startswith("record") else None
        watch = Watch(process.pid, journal).start()
        load = [sys.executable, str(BENCH / "load.py"), "--port", str(port), "--upstream-port", str(upstream_port)]
        body = "sized-stream" if answer == "stream" else "sized"
        load += ["--proxy", "--body", body, "--request-bytes", str(size), "--concurrency", str(args.concurrency)]
        load += ["--seconds", str(args.seconds), "--cpu-pid", str(process.pid)]
        started = time.monotonic()
        done = subprocess.run(load, capture_output=True, text=True)
        ended = time.monotonic()
        if done.returncode != 0:
            sys.exit(f"load through {name} failed:\n{done.stderr}\n{log.read_text()}")
        result: dict[str, Any] = json.loads(done.stdout)
        result["cpu_ms"] = result["cpu_ms"][str(process.pid)]  # the whole tree: the proxy and its writer
        process.send_signal(signal.SIGTERM)  # at once: what is still queued must drain within the shutdown
        process.wait(timeout=600)
        result["shutdown_s"] = time.monotonic() - ended
        watch.stop()
        result["peak_rss_mb"] = watch.peak / 1e6
        if journal is not None:
            at_end = next((count for stamp, count in watch.stamps if stamp >= ended), watch.journalled())
            caught_up = next((stamp for stamp, count in watch.stamps if count >= result["sent"]), time.monotonic())
            result["backlog_at_end"] = result["sent"] - at_end
            result["journal_rate"] = watch.journalled() / (caught_up - started)
            result["load_rate"] = result["sent"] / (ended - started)
            data = cassette.read_bytes() if cassette.exists() else b""
            result["lost"] = result["sent"] - data.count(b'\n      "id": ')
            result["cassette_mb"] = len(data) / 1e6
            cassette.unlink(missing_ok=True)
        return result
    finally:
        if process.poll() is None:
            process.kill()


def report(runs: dict[str, list[dict[str, Any]]], args: argparse.Namespace) -> str:
    def med(cell: list[dict[str, Any]], key: str) -> float:
        return statistics.median(run[key] for run in cell)

    lines = [
        f"Concurrency {args.concurrency}, {args.seconds:g} s of load per measurement, medians over {args.rounds} "
        "round(s).",
        "",
        "| bodies | proxy | req/s | CPU ms/req (tree) | peak RSS MB (tree) | journalled/s | backlog at end | lost "
        "| shutdown s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for size, answer in cases(args):
        for name in args.names:
            cell = runs[f"{size}/{answer}/{name}"]
            journal = (
                f"{med(cell, 'journal_rate'):.0f} | {med(cell, 'backlog_at_end'):.0f} | {max(r['lost'] for r in cell)}"
                if name != "mitmdump"
                else "– | – | –"
            )
            lines.append(
                f"| {size:,} B {answer} | {name} | {med(cell, 'rps'):.0f} | {med(cell, 'cpu_ms'):.2f} "
                f"| {med(cell, 'peak_rss_mb'):.0f} | {journal} "
                f"| {med(cell, 'shutdown_s'):.2f} |"
            )
    lines += [
        "",
        "| bodies | proxy | req/s ÷ mitmdump (≥ 1.5) | CPU/req (tree) ÷ mitmdump's | journalled/s ÷ sent/s (≥ 1) "
        "| peak RSS ÷ mitmdump (≤ 2) | shutdown ≤ 2 s |",
        "|---|---|---|---|---|---|---|",
    ]
    for size, answer in cases(args):
        base = runs[f"{size}/{answer}/mitmdump"]
        for name in args.names[1:]:
            record = runs[f"{size}/{answer}/{name}"]
            keeps_up = statistics.median(run["journal_rate"] / run["load_rate"] for run in record)
            memory = statistics.median(r["peak_rss_mb"] / b["peak_rss_mb"] for r, b in zip(record, base, strict=True))
            throughput = statistics.median(r["rps"] / b["rps"] for r, b in zip(record, base, strict=True))
            cpu = statistics.median(r["cpu_ms"] / b["cpu_ms"] for r, b in zip(record, base, strict=True))
            shutdown = med(record, "shutdown_s")
            lines.append(
                f"| {size:,} B {answer} | {name} | {throughput:.2f} | {cpu:.2f} | {keeps_up:.2f} | {memory:.2f} "
                f"| {shutdown:.2f} {'yes' if shutdown <= 2 else 'NO'} |"
            )
    return "\n".join(lines)


def cases(args: argparse.Namespace) -> list[tuple[int, str]]:
    return [(size, answer) for size in args.sizes for answer in args.answers]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0, help="of load per measurement")
    parser.add_argument("--sizes", default="1000,200000", help="request and response body sizes, comma-separated")
    parser.add_argument("--answers", default="json,stream", help="json (a whole body), stream (SSE), or both")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--json", type=Path, help="also write every measurement's raw figures here")
    parser.add_argument("--versus", type=Path, action="append", default=[], help="another llmproxy source tree")
    args = parser.parse_args()
    args.trees = {f"record @ {tree.resolve().name}": tree.resolve() for tree in args.versus}
    args.names = ["mitmdump", "record", *args.trees]
    args.sizes = [int(size) for size in args.sizes.split(",")]
    args.answers = args.answers.split(",")
    runs: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="llmproxy-bench-") as tmp:
        for size in args.sizes:
            up = [sys.executable, str(BENCH / "upstream.py"), "--reply-bytes", str(size), "--interval-ms", "0"]
            up += ["--events", str(max(1, size // 100)), "--delta-chars", "100"]
            upstream = subprocess.Popen(up, stdout=subprocess.PIPE)
            try:
                assert upstream.stdout is not None
                port = int(upstream.stdout.readline())
                for round_, answer in itertools.product(range(args.rounds), args.answers):
                    names = args.names if round_ % 2 == 0 else args.names[::-1]
                    for name in names:
                        result = measure(name, size, answer, port, Path(tmp), args)
                        runs.setdefault(f"{size}/{answer}/{name}", []).append(result)
                        extra = (
                            f"  journalled {result['journal_rate']:.0f}/s, backlog {result['backlog_at_end']}, "
                            f"lost {result['lost']}"
                            if name != "mitmdump"
                            else ""
                        )
                        print(
                            f"round {round_ + 1} {size:>7} B {answer:<6} {name:<8} {result['rps']:7.0f} req/s  "
                            f"{result['cpu_ms']:.2f} CPU ms/req  peak RSS {result['peak_rss_mb']:6.0f} MB  "
                            f"shutdown {result['shutdown_s']:.2f} s{extra}",
                            file=sys.stderr,
                        )
            finally:
                upstream.kill()
    print(report(runs, args))
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1))


if __name__ == "__main__":
    main()
