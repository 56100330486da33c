"""The stdio MCP tap's overhead (docs/mcp.md#recording-a-stdio-server-mcp-tap): the same stdio server driven
directly and through `llmproxy mcp-tap` (recording to a cassette of its own), and the tap replaying that
cassette with no server at all.

    .venv/bin/python scripts/bench/mcp_tap.py [--rounds N] [--calls N]

The server is a minimal one (each request answered at once with a fixed `tools/call` result), so that what is
measured is the tap, not a server. The client sends one request, waits for its answer, and sends the next:
the time between them is one round trip, two messages (the request, the answer). Rounds alternate the order;
the table gives medians over rounds, and the tap's overhead per message: half the difference of round trips.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SERVER = r"""
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" in message:
        result = {"content": [{"type": "text", "text": "Sunny, 21 C"}], "isError": False}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
        sys.stdout.flush()
"""
CALL = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "get_forecast", "arguments": {"city": "Paris"}}}


def round_trips(command: list[str], calls: int) -> list[float]:
    """Each request's round trip, in ms, after a warm-up."""
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdin is not None
    assert process.stdout is not None
    timings = []
    for n in range(calls + 50):
        line = json.dumps({**CALL, "id": n}).encode() + b"\n"
        started = time.perf_counter()
        process.stdin.write(line)
        process.stdin.flush()
        answer = process.stdout.readline()
        if n >= 50:
            timings.append((time.perf_counter() - started) * 1000)
        assert json.loads(answer)["id"] == n, answer
    process.stdin.close()
    process.wait()
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=2000)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        server = Path(folder) / "server.py"
        server.write_text(SERVER)
        cassette = Path(folder) / "tap.json"
        direct = [sys.executable, str(server)]
        tap = [sys.executable, "-m", "llmproxy", "mcp-tap", "--name", "bench", "--cassette", str(cassette)]
        # the recording the replay serves (identical requests are served in recorded order, so one per call)
        round_trips([*tap, "--mode", "record", "--", *direct], arguments.calls)
        commands = {
            "direct": direct,
            "tap, recording": [*tap, "--mode", "record", "--", *direct],
            "tap, replaying": [*tap, "--mode", "replay", "--", *direct],
        }
        medians: dict[str, list[float]] = {name: [] for name in commands}
        for round_ in range(arguments.rounds):
            order = list(commands) if round_ % 2 == 0 else list(reversed(commands))
            for name in order:
                if name == "tap, recording":
                    cassette.rename(cassette.with_suffix(".kept"))
                timings = round_trips(commands[name], arguments.calls)
                if name == "tap, recording":
                    cassette.unlink()
                    cassette.with_suffix(".kept").rename(cassette)
                medians[name].append(statistics.median(timings))
    base = statistics.median(medians["direct"])
    print(f"{'':16} {'round trip (ms)':>16} {'overhead per message (ms)':>26}")
    for name, values in medians.items():
        median = statistics.median(values)
        overhead = "" if name == "direct" else f"{(median - base) / 2:.3f}"
        print(f"{name:16} {median:16.3f} {overhead:>26}")


if __name__ == "__main__":
    main()
