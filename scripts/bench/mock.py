"""What the mock serves (docs/performance.md#mock): `llmproxy mock` for clients set by base URL (answered on the
loopback relay) and for HTTPS_PROXY-style clients (through the proxy: its lean door, and mitmproxy as a session that
needs it would), against a minimal raw asyncio server returning a canned body (upstream.py: the practical limit) and
against mitmproxy relaying to that server (mitmdump as a plain proxy: what any request through mitmproxy costs).

    .venv/bin/python scripts/bench/mock.py [--quick] [--rounds N] [--seconds S] [--peers DIR]
                                           [--base-url-only] [--versus CHECKOUT …]

Every process is its own; the load generator (load.py) sends the same small OpenAI Chat Completions request
again and again (keep-alive, concurrency 1 and 8), non-streaming and streaming (`"stream": true`; the mock's
physics are zero, so its stream goes out at once). Rounds alternate the order of the targets; tables give
medians over rounds.

Peer mock servers join the run when `--peers DIR` names a directory where they were installed with
`npm install @copilotkit/aimock @dwmkerr/mock-llm` (they are not dependencies of llmproxy): aimock with a
catch-all fixture, mock-llm with its default echo rule (it always listens on port 6556).

The "matching" targets answer only requests whose latest message contains a word of the prompt: a second
`llmproxy mock` (base URL) whose expectation has `latestMessageContains`, so every request is decoded into a
conversation, and with `--peers` aimock with a `userMessage` fixture.

`--base-url-only` measures only the base-URL door, beside the raw server and aimock. `--versus CHECKOUT` adds
the base-URL door of another source tree of llmproxy (`git worktree add DIR main`, say), run with this venv's
interpreter and that tree first on `PYTHONPATH`: a change to the relay measured against what it replaces, in the
same run. The ratio tables compare CPU per request (the steadier figure on a shared machine) as well as req/s.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import payloads  # noqa: E402
from proxy import BIN, Target, free_port, start, stop, wait_listening  # noqa: E402

CASES = [("small", 1), ("small", 8), ("small-stream", 1), ("small-stream", 8)]
WORD = "haiku"  # in the latest message of the benchmark's request (payloads.chat_request)


def expectations(path: Path, match: dict[str, str]) -> None:
    """One expectation that answers what `match` matches with the same text as the raw server's canned body."""
    text = json.loads(payloads.reply())["content"][0]["text"]
    usage = {"inputTokens": 12, "outputTokens": 8}
    path.write_text(json.dumps({"expectations": [{"match": match, "respond": {"text": text, "usage": usage}}]}))


def start_upstream(workdir: Path, started: list[subprocess.Popen[bytes]]) -> Target:
    log = workdir / "upstream.log"
    argv = [sys.executable, str(BENCH / "upstream.py"), "--events", "10", "--interval-ms", "0"]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=log.open("wb"))
    started.append(process)
    assert process.stdout is not None
    port = int(process.stdout.readline())
    wait_listening(port, process, "upstream", log)
    return Target("raw asyncio", port, process.pid, process, proxy=False)


def start_mock(
    workdir: Path, started: list[subprocess.Popen[bytes]], match: dict[str, str], on_mitmproxy: bool = False
) -> tuple[Target, Target]:
    """One `llmproxy mock` process, measured on both of its doors. `on_mitmproxy`: through mitmproxy rather than
    the lean door (an `--map` of a host nobody asks for makes the session mitmproxy's, with nothing else changed)."""
    kind = " matching" if match else ""
    file = workdir / f"expectations{kind.strip()}.json"
    expectations(file, match)
    base_url_port = free_port()
    argv = [str(BIN / "llmproxy"), "mock", "--expectations", str(file), "--port", "{port}"]
    argv += ["--base-url-port", str(base_url_port)]
    if on_mitmproxy:
        argv += ["--map", "unasked.invalid=http://127.0.0.1:9"]
        kind += ", mitmproxy door"
    proxied = start(f"llmproxy mock{kind} (HTTPS_PROXY)", argv, workdir, started)
    direct = Target(f"llmproxy mock{kind} (base URL)", base_url_port, proxied.pid, proxied.process, proxy=False)
    return direct, proxied


def start_versus(checkout: Path, workdir: Path, started: list[subprocess.Popen[bytes]]) -> Target:
    """The base-URL door of `llmproxy mock` from another source tree: that tree's code, this venv's libraries."""
    file = workdir / f"expectations-{checkout.name}.json"
    expectations(file, {})
    port = free_port()
    argv = [sys.executable, "-m", "llmproxy", "mock", "--expectations", str(file), "--port", str(free_port())]
    argv += ["--base-url-port", str(port)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(checkout), str(checkout / "addons")])}
    name = f"llmproxy mock (base URL) @ {checkout.name}"
    log = workdir / f"versus-{checkout.name}.log"
    process = subprocess.Popen(argv, stdout=log.open("wb"), stderr=subprocess.STDOUT, cwd=workdir, env=env)
    started.append(process)
    wait_listening(port, process, name, log)
    return Target(name, port, process.pid, process, proxy=False)


def start_peers(
    peers: Path, workdir: Path, started: list[subprocess.Popen[bytes]], base_url_only: bool
) -> list[Target]:
    targets = []
    aimock = peers / "node_modules" / ".bin" / "llmock"
    text = json.loads(payloads.reply())["content"][0]["text"]
    fixtures = (("aimock", {}),) if base_url_only else (("aimock", {}), ("aimock matching", {"userMessage": WORD}))
    for name, match in fixtures:
        if aimock.exists():
            fixture = workdir / f"{name.replace(' ', '-')}.json"
            fixture.write_text(json.dumps({"fixtures": [{"match": match, "response": {"content": text}}]}))
            argv = [str(aimock), "-p", "{port}", "-f", str(fixture), "--log-level", "silent"]
            targets.append(start(name, argv, workdir, started, proxy=False))
    mock_llm = peers / "node_modules" / ".bin" / "mock-llm"
    if mock_llm.exists() and not base_url_only:
        log = workdir / "mock-llm.log"
        process = subprocess.Popen([str(mock_llm)], cwd=workdir, stdout=log.open("wb"), stderr=subprocess.STDOUT)
        started.append(process)
        wait_listening(6556, process, "mock-llm", log)
        targets.append(Target("mock-llm", 6556, process.pid, process, proxy=False))
    return targets


def load(target: Target, upstream_port: int, body: str, concurrency: int, seconds: float) -> dict[str, Any]:
    argv = [sys.executable, str(BENCH / "load.py"), "--port", str(target.port), "--upstream-port", str(upstream_port)]
    argv += ["--body", body, "--api", "openai", "--concurrency", str(concurrency), "--seconds", str(seconds)]
    argv += ["--cpu-pid", str(target.pid)] + (["--proxy"] if target.proxy else [])
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"load against {target.name} ({body}, c={concurrency}) failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    result["cpu_ms"] = result["cpu_ms"][str(target.pid)]
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--quick", action="store_true", help="one short round")
    parser.add_argument("--peers", type=Path, help="where peer mock servers were installed with npm")
    parser.add_argument("--base-url-only", action="store_true", help="only the base-URL door, the raw server, aimock")
    parser.add_argument(
        "--versus", type=Path, action="append", default=[], help="another llmproxy source tree (repeatable)"
    )
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.seconds = 1, 1.0
    started: list[subprocess.Popen[bytes]] = []
    runs: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch)
        try:
            upstream = start_upstream(workdir, started)
            direct, proxied = start_mock(workdir, started, {})
            targets = [upstream, direct]
            if not args.base_url_only:
                mitmdump = [str(BIN / "mitmdump"), "-q", "--listen-host", "127.0.0.1", "--listen-port", "{port}"]
                relay = start("mitmdump relay", mitmdump, workdir, started)
                matching, _ = start_mock(workdir, started, {"latestMessageContains": WORD})
                _, on_mitmproxy = start_mock(workdir, started, {}, on_mitmproxy=True)
                targets += [proxied, on_mitmproxy, relay, matching]
            targets += [start_versus(checkout.resolve(), workdir, started) for checkout in args.versus]
            if args.peers:
                targets += start_peers(args.peers, workdir, started, args.base_url_only)
            for round_ in range(args.rounds):
                for body, concurrency in CASES:
                    for target in targets if round_ % 2 == 0 else targets[::-1]:
                        result = load(target, upstream.port, body, concurrency, args.seconds)
                        runs.setdefault(f"{body}/{concurrency}/{target.name}", []).append(result)
                        print(
                            f"round {round_ + 1} {body:<12} c={concurrency} {target.name:<34} "
                            f"{result['rps']:8.0f} req/s",
                            file=sys.stderr,
                        )
        finally:
            stop(started)
    print(report(runs, [t.name for t in targets]))
    return 0


def report(runs: dict[str, list[dict[str, Any]]], names: list[str]) -> str:
    def med(key: str, field: str) -> float:
        return statistics.median(run[field] for run in runs[key])

    lines = [
        "| body | concurrency | target | req/s | p50 ms | p99 ms | server CPU ms/req |",
        "|---|---|---|---|---|---|---|",
    ]
    for body, concurrency in CASES:
        for name in names:
            key = f"{body}/{concurrency}/{name}"
            lines.append(
                f"| {body} | {concurrency} | {name} | {med(key, 'rps'):.0f} | {med(key, 'p50_ms'):.2f} | "
                f"{med(key, 'p99_ms'):.2f} | {med(key, 'cpu_ms'):.3f} |"
            )
    base_url = "llmproxy mock (base URL)"
    # each comparison: (column, numerator target, denominator target); req/s ratios read n ÷ d, CPU ratios d ÷ n
    pairs = [("base URL ÷ raw server", base_url, "raw asyncio")]
    pairs += [("HTTPS_PROXY ÷ mitmdump relay", "llmproxy mock (HTTPS_PROXY)", "mitmdump relay")]
    on_mitmproxy = "llmproxy mock, mitmproxy door (HTTPS_PROXY)"
    pairs += [("HTTPS_PROXY on mitmproxy ÷ mitmdump relay", on_mitmproxy, "mitmdump relay")]
    pairs += [("base URL ÷ aimock", base_url, "aimock")]
    pairs += [("matching: base URL ÷ aimock", "llmproxy mock matching (base URL)", "aimock matching")]
    pairs += [(f"base URL ÷ {name.split(' @ ')[1]}", base_url, name) for name in names if " @ " in name]
    pairs = [pair for pair in pairs if pair[1] in names and pair[2] in names]
    lines += [
        "",
        "Ratios, req/s (a ÷ b) and CPU per request (b's ÷ a's), medians over rounds:",
        "",
        "| body | concurrency | " + " | ".join(f"{column} req/s | {column} CPU" for column, _, _ in pairs) + " |",
        "|---|---|" + "---|---|" * len(pairs),
    ]
    for body, concurrency in CASES:
        line = f"| {body} | {concurrency} |"
        for _, a, b in pairs:
            rps = med(f"{body}/{concurrency}/{a}", "rps") / med(f"{body}/{concurrency}/{b}", "rps")
            cpu = med(f"{body}/{concurrency}/{b}", "cpu_ms") / med(f"{body}/{concurrency}/{a}", "cpu_ms")
            line += f" {rps:.2f}× | {cpu:.2f}× |"
        lines.append(line)
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
