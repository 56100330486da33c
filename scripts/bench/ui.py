"""What the dashboard costs the proxy, and how fast it shows a long run (docs/ui.md#speed).

    .venv/bin/python scripts/bench/ui.py [--requests N] [--rounds R] [--no-browser] [--callgrind]

* **CPU per request**, in the same run: three `llmproxy mock` processes answering the same requests on their
  base URL (the cheaper door: there anything the dashboard adds is the larger share) — without `--ui`, with
  `--ui` and no browser, and with `--ui` and one reader of the event stream (what an open browser costs:
  every entry summarised and sent) — N requests (10,000) each, one after another on one keep-alive
  connection; the process's CPU time over them, per request. Rounds rotate the order; the table gives the
  median over rounds of each ratio to "without" (goals: ≤ 1.02 with no browser, ≤ 1.10 with one watching).
  `--callgrind` counts instructions per request instead, every thread of the process (the event stream's
  publisher too), switched on only around the N requests: the machine's load does not move it. Before any
  round the watched mock answers 100 exchanges and the reader receives their events, so what its publisher
  does once a process (the price data loaded, modules imported) is not counted as the requests' cost.
* **A live run, paced** (`--paced RATE`, instead of the above): the same requests sent at RATE a second (500)
  for `--requests` of them, on one keep-alive connection, to the mock without `--ui` and to the one with a
  reader of the event stream: each request's latency as the client sees it (median, 99th percentile), the
  process's CPU time per request, and the events the reader received and was told were dropped.
* **A long run in the browser**: the run's N exchanges saved to a cassette (`POST /save`), `llmproxy ui` on
  it, opened in headless Chromium (Debian's `chromium`, as the browser tests): the time from opening the URL
  until the Traffic view shows its newest rows (goal ≤ 1.5 s), then the time to scroll to the middle of the
  list and see its rows drawn.
"""

import argparse
import http.client
import json
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parents[1]
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(ROOT))

from chaos import instructions  # noqa: E402 (scripts/bench/chaos.py)
from control import _exchange, _request, _under_callgrind, cpu_ms, cpu_per_request  # noqa: E402 (scripts/bench/control.py)
from mock import expectations  # noqa: E402, UP026 (scripts/bench/mock.py)
from proxy import BIN, CALLGRIND_LISTEN_TIMEOUT, LISTEN_TIMEOUT, Target, free_port, start, stop  # noqa: E402

GOALS = {"--ui, no browser": 1.02, "--ui, one reader": 1.10}
GOAL_SHOWN_S = 1.5
MODES = ("without --ui", "--ui, no browser", "--ui, one reader")
READ_TIMEOUT = 600  # seconds a read of the event stream may wait: under callgrind on a busy machine, minutes
WARM_UP = 100  # exchanges the watched mock answers, and the reader receives, before anything is counted


def _exported(log: Path, name: str) -> str:
    for _ in range(600):
        found = re.search(rf"^export {name}=(\S+)$", log.read_text(errors="replace"), re.MULTILINE)
        if found:
            return found.group(1)
        time.sleep(0.05)
    sys.exit(f"{log.name}: no {name} printed")


def _read_events(
    control_url: str, token: str, stop_reading: threading.Event, counted: list[int], reading: threading.Event
) -> None:
    """What a watching browser does to the proxy: hold the event stream open and read every event; `counted`:
    the entry events received, then the drops told. `reading` is set at the stream's first event: an exchange
    answered before then is in the journal the stream's `hello` stands on, never pushed as an entry."""
    origin = control_url.removesuffix("/llmproxy/chaos").removeprefix("http://")
    host, port = origin.split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=READ_TIMEOUT)
    connection.request("GET", "/llmproxy/api/v1/events", headers={"authorization": f"Bearer {token}"})
    response = connection.getresponse()
    for line in response:
        reading.set()
        if line.startswith(b"event: entry"):
            counted[0] += 1
        elif line.startswith(b'data: {"dropped":'):
            counted[1] = int(line.split(b":")[2].rstrip(b"}\r\n"))
        if stop_reading.is_set():
            break
    connection.close()


def start_mocks(
    workdir: Path, started: list[subprocess.Popen[bytes]], size: int, callgrind: bool
) -> dict[str, tuple[Target, Path]]:
    answers = workdir / "expectations.json"
    expectations(answers, {})
    under = _under_callgrind(workdir) if callgrind else []
    found = {}
    for mode in MODES:
        relay = free_port()
        argv = [*under, str(BIN / "llmproxy"), "mock", "--expectations", str(answers), "--port", "{port}"]
        argv += ["--base-url-port", str(relay), "--journal-size", str(size)]
        if mode != "without --ui":
            argv += ["--ui", "--no-open"]
        name = mode.replace(" ", "").replace(",", "-")
        timeout = CALLGRIND_LISTEN_TIMEOUT if callgrind else LISTEN_TIMEOUT
        proxied = start(name, argv, workdir, started, listen_timeout=timeout)
        found[mode] = (Target(mode, relay, proxied.pid, proxied.process, proxy=False), workdir / f"{name}.log")
    return found


def measure(args: argparse.Namespace) -> list[str]:
    upstream_port = free_port()
    started: list[subprocess.Popen[bytes]] = []
    costs: dict[str, list[float]] = {mode: [] for mode in MODES}
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch)
        try:
            mocks = start_mocks(workdir, started, args.requests * args.rounds + 200, args.callgrind)
            reader = mocks["--ui, one reader"][1]
            stop_reading = threading.Event()
            counted = [0, 0]
            reading = threading.Event()
            thread = threading.Thread(
                target=_read_events,
                args=(
                    _exported(reader, "LLMPROXY_CONTROL_URL"),
                    _exported(reader, "LLMPROXY_CONTROL_TOKEN"),
                    stop_reading,
                    counted,
                    reading,
                ),
                daemon=True,
            )
            thread.start()
            if not reading.wait(READ_TIMEOUT):
                sys.exit(f"the event stream sent nothing in {READ_TIMEOUT} s")
            if args.paced:
                stop_reading.set()  # after the next event: the paced run's reader is its own
                return paced(mocks, upstream_port, args.paced, args.requests)
            watched(mocks["--ui, one reader"][0], upstream_port, counted)
            for round_ in range(args.rounds):
                order = MODES[round_ % 3 :] + MODES[: round_ % 3]
                for mode in order:
                    target = mocks[mode][0]
                    if args.callgrind:
                        cost = instructions(target, upstream_port, "openai", args.requests, workdir)
                    else:
                        cost = cpu_per_request(target, upstream_port, args.requests)
                    costs[mode].append(cost)
                print(f"round {round_ + 1}: " + ", ".join(f"{m} {costs[m][-1]:.4f}" for m in MODES), file=sys.stderr)
            stop_reading.set()
            unit = "instructions/request" if args.callgrind else "CPU ms/request"
            lines.append(f"| mode | {unit} | ÷ without (per round) | goal |")
            lines.append("|---|---|---|---|")
            for mode in MODES:
                ratios = [value / base for value, base in zip(costs[mode], costs["without --ui"], strict=True)]
                ratio = statistics.median(ratios)
                goal = GOALS.get(mode)
                verdict = "" if goal is None else f"≤ {goal}: {'met' if ratio <= goal else 'NOT MET'}"
                per_round = ", ".join(f"{r:.3f}" for r in ratios)
                cpu = statistics.median(costs[mode])
                figure = f"{cpu:,.0f}" if args.callgrind else f"{cpu:.4f}"
                lines.append(f"| {mode} | {figure} | {ratio:.3f} ({per_round}) | {verdict} |")
            lines.append(f"\nthe reader received {counted[0]:,} entry events")
            if args.browser:
                lines += browse(workdir, mocks["without --ui"][1], args.requests)
        finally:
            stop(started)
    return lines


def watched(target: Target, upstream_port: int, counted: list[int]) -> None:
    """Answer `WARM_UP` exchanges and wait until the reader has received their events: what the publisher does
    once a process (the price data loaded for the first entry with a usage, its modules imported) is then done
    before anything is counted, which under callgrind's slowdown could otherwise fall into the count."""
    request = _request(target, upstream_port)
    with socket.create_connection(("127.0.0.1", target.port)) as connection:
        for _ in range(WARM_UP):
            _exchange(connection, request)
    deadline = time.monotonic() + READ_TIMEOUT
    while counted[0] < WARM_UP:
        if time.monotonic() > deadline:
            sys.exit(f"the reader received {counted[0]} of the {WARM_UP} warm-up events in {READ_TIMEOUT} s")
        time.sleep(0.5)
    counted[0] = 0  # the events of what is measured, from here


def paced(mocks: dict[str, tuple[Target, Path]], upstream_port: int, rate: int, requests: int) -> list[str]:
    """`requests` requests at `rate` a second to the mock without --ui and to one a reader watches."""
    lines = [
        f"| {requests:,} requests at {rate}/s | latency p50 ms | p99 ms | CPU ms/request | events received, dropped |",
        "|---|---|---|---|---|",
    ]
    for mode in ("without --ui", "--ui, one reader"):
        target, log = mocks[mode]
        stop_reading, counted = threading.Event(), [0, 0]
        if mode != "without --ui":
            url, token = _exported(log, "LLMPROXY_CONTROL_URL"), _exported(log, "LLMPROXY_CONTROL_TOKEN")
            threading.Thread(target=_read_events, args=(url, token, stop_reading, counted), daemon=True).start()
        request = _request(target, upstream_port)
        latencies = []
        with socket.create_connection(("127.0.0.1", target.port)) as connection:
            for _ in range(20):  # warm up
                _exchange(connection, request)
            time.sleep(1)
            before = cpu_ms(target.pid)
            start = time.monotonic()
            for number in range(requests):
                due = start + number / rate
                if (wait := due - time.monotonic()) > 0:
                    time.sleep(wait)
                sent = time.monotonic()
                _exchange(connection, request)
                latencies.append((time.monotonic() - sent) * 1000)
            time.sleep(1)  # the publisher's last batch
            cpu = (cpu_ms(target.pid) - before) / requests
        stop_reading.set()
        latencies.sort()
        p50, p99 = latencies[len(latencies) // 2], latencies[int(len(latencies) * 0.99)]
        events = f"{counted[0]:,}, {counted[1]:,}" if mode != "without --ui" else ""
        lines.append(f"| {mode} | {p50:.2f} | {p99:.2f} | {cpu:.4f} | {events} |")
    return lines


def browse(workdir: Path, log: Path, requests: int) -> list[str]:
    """The run's last `requests` exchanges saved to a cassette, shown by `llmproxy ui` in Chromium."""
    from tests.analysis.browser import browsing

    control = _exported(log, "LLMPROXY_CONTROL_URL").removesuffix("/llmproxy/chaos")
    token = _exported(log, "LLMPROXY_CONTROL_TOKEN")
    cassette = workdir / "long-run.json"
    host, port = control.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=600)
    authorised = {"authorization": f"Bearer {token}"}
    connection.request("GET", "/llmproxy/api/v1/journal?limit=1", headers=authorised)
    last = json.loads(connection.getresponse().read())["counts"]["last"]
    body = json.dumps({"path": str(cassette), "since": max(0, last - requests)})
    connection.request("POST", "/llmproxy/api/v1/save", body, authorised)
    saved = json.loads(connection.getresponse().read())
    exchanges = saved["exchanges"]
    process = subprocess.Popen(
        [str(BIN / "llmproxy"), "ui", str(cassette), "--no-open"], stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stderr is not None
        url = next(found.group(1) for line in process.stderr if (found := re.search(r"dashboard (\S+)", line)))
        with browsing(url) as (page, _):
            started = time.monotonic()
            page.goto(url)
            page.wait_for_selector(f"[data-testid=traffic-row][data-seq='{exchanges}']")
            shown = time.monotonic() - started
            scroller = page.locator("[data-testid=traffic]")
            started = time.monotonic()
            scroller.evaluate("element => { element.scrollTop = element.scrollHeight / 2; }")
            page.wait_for_selector(f"[data-testid=traffic-row][data-seq='{exchanges // 2}']")
            scrolled = time.monotonic() - started
            rows = page.locator("[data-testid=traffic-row]").count()
    finally:
        process.terminate()
        process.communicate(timeout=30)
    verdict = "met" if shown <= GOAL_SHOWN_S else "NOT MET"
    return [
        "",
        f"| {exchanges:,} exchanges in `llmproxy ui` (Chromium) | seconds | goal |",
        "|---|---|---|",
        f"| opened until the newest rows show | {shown:.2f} | ≤ {GOAL_SHOWN_S}: {verdict} |",
        f"| scrolled to the middle until its rows show ({rows} rows in the page) | {scrolled:.3f} | |",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-browser", dest="browser", action="store_false")
    parser.add_argument("--callgrind", action="store_true", help="count instructions per request (valgrind)")
    parser.add_argument("--paced", type=int, metavar="RATE", help="a live run at RATE requests a second instead")
    args = parser.parse_args()
    print("\n".join(measure(args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
