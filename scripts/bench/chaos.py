"""What chaos costs (docs/performance.md#chaos): `llmproxy mock` (both doors) and `llmproxy replay` serving the same
small request again and again, each as processes of its own: without chaos (the baseline); with an inactive profile (a
chaos file whose rule is for another host: chaos is configured, this traffic meets none of it); with a profile armed on
every request that never fires (`--fail 500@0`: every request is counted, drawn for and let through — what an evaluated
profile costs, reported, no target); and with a 10% fault rate (`--fail 500@0.1 --seed 1`: provider-correct 500s,
counted as answers). Targets: inactive ≥ 0.97 of the baseline's requests per second, 10% faults ≥ 0.90.

    .venv/bin/python scripts/bench/chaos.py [--quick] [--rounds N] [--seconds S]
    .venv/bin/python scripts/bench/chaos.py --callgrind N

The machine is shared and noisy: each variant is measured right after (or before: rounds alternate the
order) its baseline, the ratio is taken per round, and the table gives the median ratio over rounds, for
requests per second and for the server's CPU time per request (baseline ÷ variant: the share of the
baseline's capacity left, steadier than req/s when other processes compete for the cores; the verdict reads it).

`--callgrind N` counts instead the instructions each process executes per request, over N requests sent one
after another on one connection (valgrind's callgrind, switched on only around them): a figure the machine's
load does not move, and the ratio baseline ÷ variant the capacity the variant leaves, user space only.
"""

import argparse
import json
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import payloads  # noqa: E402
from mock import expectations  # noqa: E402, UP026 (scripts/bench/mock.py)
from proxy import BIN, Target, free_port, start, stop  # noqa: E402
from replay import bodies, write_cassette  # noqa: E402

ELSEWHERE = {"rules": [{"match": {"host": "api.example.invalid"}, "chaos": {"errorStatus": 500}}]}
VARIANTS = {
    "baseline": [],
    "inactive": ["--chaos", "{elsewhere}"],
    "armed at 0%": ["--fail", "500@0"],
    "10% faults": ["--fail", "500@0.1", "--seed", "1"],
}
TARGETS = {"inactive": 0.97, "10% faults": 0.90}  # the least share of the baseline's throughput
CONCURRENCY = (1, 8)
REPEAT = ("--on-exhausted", "repeat-last")  # replay serves its one recording again and again
_AS = ", "  # between a target's door and its variant: "mock base URL, inactive"


def start_family(
    family: str, argv: list[str], workdir: Path, started: list[subprocess.Popen[bytes]], callgrind: bool = False
) -> list[Target]:
    """One process per variant; a mock is measured on its relay (base URL) door too."""
    elsewhere = workdir / "elsewhere.json"
    elsewhere.write_text(json.dumps(ELSEWHERE))
    targets = []
    for variant, given in VARIANTS.items():
        options = [option.replace("{elsewhere}", str(elsewhere)) for option in given]
        relay = free_port()
        extra = ["--base-url-port", str(relay)] if family == "mock" else []
        name = f"{family} HTTPS_PROXY{_AS}{variant}"
        under = _uninstrumented(workdir) if callgrind else []
        proxied = start(name, [*under, *argv, *options, *extra], workdir, started)
        targets.append(proxied)
        if family == "mock":
            targets.append(Target(f"{family} base URL{_AS}{variant}", relay, proxied.pid, proxied.process, proxy=False))
    return targets


def load(target: Target, upstream_port: int, api: str, concurrency: int, seconds: float) -> dict[str, Any]:
    argv = [sys.executable, str(BENCH / "load.py"), "--port", str(target.port), "--upstream-port", str(upstream_port)]
    argv += ["--body", "small", "--api", api, "--concurrency", str(concurrency), "--seconds", str(seconds)]
    argv += ["--cpu-pid", str(target.pid), "--accept-errors"] + (["--proxy"] if target.proxy else [])
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"load against {target.name} (c={concurrency}) failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    result["cpu_ms"] = result["cpu_ms"][str(target.pid)]
    return result


def _uninstrumented(workdir: Path) -> list[str]:
    """The command prefix that runs a process under callgrind, counting nothing until told to."""
    out = workdir / "cg.%p"  # valgrind puts the process id in
    return ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}", sys.executable]


def instructions(target: Target, upstream_port: int, api: str, count: int, workdir: Path, settle: float = 0.0) -> int:
    """Instructions the target's process executes per request, over `count` requests sent one after another
    (after 100 not counted): callgrind switched on around them, its counts dumped and read. `settle`: seconds
    more counted after the last answer, for what a thread of the process does with the requests afterwards."""
    path = "/v1/chat/completions" if api == "openai" else "/v1/messages"
    body = payloads.chat_request() if api == "openai" else payloads.small_request()
    target_url = f"http://127.0.0.1:{upstream_port}{path}" if target.proxy else path
    request = (
        f"POST {target_url} HTTP/1.1\r\nhost: 127.0.0.1:{upstream_port}\r\ncontent-type: application/json\r\n"
        f"anthropic-version: 2023-06-01\r\nx-api-key: {payloads.API_KEY}\r\ncontent-length: {len(body)}\r\n\r\n"
    ).encode() + body
    dumps = f"cg.{target.pid}.*"  # the process's own counts (valgrind runs it in its own process)
    before = set(workdir.glob(dumps))
    with socket.create_connection(("127.0.0.1", target.port)) as connection:
        for _ in range(100):
            _exchange(connection, request)
        subprocess.run(["callgrind_control", "--zero", str(target.pid)], capture_output=True, check=True)
        subprocess.run(["callgrind_control", "--instr=on", str(target.pid)], capture_output=True, check=True)
        for _ in range(count):
            _exchange(connection, request)
        time.sleep(settle)
        subprocess.run(["callgrind_control", "--instr=off", str(target.pid)], capture_output=True, check=True)
    subprocess.run(["callgrind_control", "--dump", str(target.pid)], capture_output=True, check=True)
    (dump,) = set(workdir.glob(dumps)) - before
    totals = next(line for line in dump.read_text(errors="replace").splitlines() if line.startswith("totals:"))
    return int(totals.split()[1]) // count


def _exchange(connection: socket.socket, request: bytes) -> None:
    connection.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data:
        data += connection.recv(65536)
    head, _, rest = data.partition(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
    while len(rest) < length:
        rest += connection.recv(65536)


def count_instructions(args: argparse.Namespace) -> int:
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("--callgrind needs valgrind (Debian: apt-get install valgrind)")
    upstream_port = free_port()
    started: list[subprocess.Popen[bytes]] = []
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch)
        try:
            families = _families(workdir, upstream_port)
            for family, (api, argv) in families.items():
                for target in start_family(family, argv, workdir, started, callgrind=True):
                    counts[target.name] = instructions(target, upstream_port, api, args.callgrind, workdir)
                    print(f"{target.name:<34} {counts[target.name]:>10,} instructions/request", file=sys.stderr)
        finally:
            stop(started)
    lines = ["| door | variant | instructions/request | ÷ baseline: capacity left | target | |", "|---" * 6 + "|"]
    for name, count in counts.items():
        door, variant = name.split(_AS, 1)
        if variant == "baseline":
            lines.append(f"| {door} | baseline | {count:,} | | | |")
            continue
        capacity = counts[f"{door}{_AS}baseline"] / count
        target = TARGETS.get(variant)
        verdict = "" if target is None else "ok" if capacity >= target else "BELOW"
        limit = f"≥ {target}" if target is not None else "—"
        lines.append(f"| {door} | {variant} | {count:,} | {capacity:.3f} | {limit} | {verdict} |")
    print("\n".join(lines))
    return 0


def _families(workdir: Path, upstream_port: int) -> dict[str, tuple[str, list[str]]]:
    """Each family's API and command line; its expectations or cassette written to `workdir`."""
    answers, cassette = workdir / "expectations.json", workdir / "cassette.json"
    expectations(answers, {})
    write_cassette(cassette, upstream_port, bodies(1))
    return {
        "mock": ("openai", [str(BIN / "llmproxy"), "mock", "--expectations", str(answers), "--port", "{port}"]),
        "replay": (
            "anthropic",
            [str(BIN / "llmproxy"), "replay", "--cassette", str(cassette), "--port", "{port}", *REPEAT],
        ),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--quick", action="store_true", help="one short round")
    parser.add_argument("--callgrind", type=int, metavar="N", help="count instructions over N requests instead")
    args = parser.parse_args()
    if args.callgrind:
        return count_instructions(args)
    if args.quick:
        args.rounds, args.seconds = 1, 1.0
    upstream_port = free_port()  # nothing listens there: mock and replay must not need it
    started: list[subprocess.Popen[bytes]] = []
    runs: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch)
        try:
            families = _families(workdir, upstream_port)
            groups = {family: start_family(family, argv, workdir, started) for family, (_, argv) in families.items()}
            for round_ in range(args.rounds):
                for concurrency in CONCURRENCY:
                    for family, targets in groups.items():
                        api = families[family][0]
                        for target in targets if round_ % 2 == 0 else targets[::-1]:
                            result = load(target, upstream_port, api, concurrency, args.seconds)
                            runs.setdefault(f"{concurrency}/{target.name}", []).append(result)
                            print(
                                f"round {round_ + 1} c={concurrency} {target.name:<34} {result['rps']:8.0f} req/s"
                                f" ({result['errors']} errors)",
                                file=sys.stderr,
                            )
        finally:
            stop(started)
    names = [target.name for targets in groups.values() for target in targets]
    print(report(runs, names))
    return 0


def report(runs: dict[str, list[dict[str, Any]]], names: list[str]) -> str:
    lines = ["| concurrency | target | req/s | p50 ms | p99 ms | CPU ms/req | faulted |", "|---" * 7 + "|"]
    for concurrency in CONCURRENCY:
        for name in names:
            rounds = runs[f"{concurrency}/{name}"]
            faulted = sum(run["errors"] for run in rounds) / sum(run["sent"] for run in rounds)
            lines.append(
                f"| {concurrency} | {name} | {_median(rounds, 'rps'):.0f} | {_median(rounds, 'p50_ms'):.2f} | "
                f"{_median(rounds, 'p99_ms'):.2f} | {_median(rounds, 'cpu_ms'):.3f} | {faulted:.1%} |"
            )
    lines += ["", "| concurrency | door | variant | req/s ÷ baseline | capacity (CPU) ÷ baseline | target | |"]
    lines.append("|---" * 7 + "|")
    for concurrency in CONCURRENCY:
        for name in names:
            door, variant = name.split(_AS, 1)
            if variant == "baseline":
                continue
            pairs = list(zip(runs[f"{concurrency}/{name}"], runs[f"{concurrency}/{door}{_AS}baseline"], strict=True))
            speed = statistics.median(run["rps"] / baseline["rps"] for run, baseline in pairs)
            capacity = statistics.median(baseline["cpu_ms"] / run["cpu_ms"] for run, baseline in pairs)
            target = TARGETS.get(variant)
            verdict = "" if target is None else "ok" if capacity >= target else "BELOW"  # the steadier figure
            limit = f"≥ {target}" if target is not None else "—"
            lines.append(f"| {concurrency} | {door} | {variant} | {speed:.3f} | {capacity:.3f} | {limit} | {verdict} |")
    return "\n".join(lines)


def _median(rounds: list[dict[str, Any]], field: str) -> float:
    return statistics.median(run[field] for run in rounds)


if __name__ == "__main__":
    sys.exit(main())
