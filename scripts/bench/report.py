"""`llmproxy report` over a 10,000-exchange agent cassette (docs/performance.md#report): goal under 2 s, memory that
grows with one conversation, not with the history every turn re-sends.

    .venv/bin/python scripts/bench/report.py [--rounds 3] [--against DIR]

Cassettes are written by llmproxy's own recorder (`CassetteWriter`, histories shared as `llmproxy record`
stores them): agent conversations of tool-loop turns (a 2 KB system prompt, three tools, a tool call and a
tool result per turn, usage with cache reads). The whole command is measured — `llmproxy report CASSETTE
--format json --max-calls 0 -o /dev/null`, start-up and imports included — by the process's own accounting
(CPU seconds and peak RSS), with its wall time, medians over rounds:

* one exchange: the fixed cost (imports, the price data);
* 10,000 exchanges: the goal;
* 2,000 exchanges as one 2,000-turn session, and as twenty 100-turn sessions: the long session re-sends
  twenty times more history in total (its requests are 1,000 turns long on average, not 50), so a report
  whose cost followed what was re-sent would be far slower and larger on it; one that reads each history
  once costs the same on both.

Bytecode is compiled once, into a scratch cache, before the rounds: an installed llmproxy has its bytecode,
and a process started with PYTHONDONTWRITEBYTECODE=1 (as on the project's shared machine) would otherwise
compile llmproxy's modules again on every run (~0.2 s).

`--against DIR` measures another source tree (a `git worktree` or `git archive` of an earlier commit) in the
same rounds, alternating with this one, and prints its figures and the ratios: the machine is shared and
noisy, so compare figures measured in the same run, and quote CPU seconds.

`--callgrind` counts instead the instructions the whole command executes (valgrind's callgrind, once per
cassette and tree, string hashing seeded alike): a figure the machine's load does not move, for changes
too small to see through its noise. About fifty times slower: minutes for the 10,000 exchanges.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from llmproxy.cassette.redact import Redactor  # noqa: E402
from llmproxy.cassette.store import CassetteWriter  # noqa: E402
from llmproxy.model.exchange import RawExchange, RawRequest, RawResponse  # noqa: E402

SYSTEM = "You are a coding agent. " * 90
TOOLS = [
    {
        "name": name,
        "description": f"{name} a file",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
    for name in ("read_file", "write_file", "run")
]
START = datetime(2026, 6, 1, tzinfo=UTC)


def write_cassette(path: Path, sessions: int, turns: int) -> None:
    writer = CassetteWriter.open(path, Redactor())
    moment = START
    for session in range(sessions):
        history: list[object] = [{"role": "user", "content": f"Session {session}: fix the failing tests."}]
        for turn in range(turns):
            call_id = f"toolu_{session}_{turn}"
            body = {
                "model": "claude-sonnet-4-5",
                "max_tokens": 4096,
                "system": SYSTEM,
                "tools": TOOLS,
                "messages": history,
            }
            answer = {
                "id": f"msg_{session}_{turn}",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [
                    {"type": "tool_use", "id": call_id, "name": "read_file", "input": {"path": f"src/m{turn}.py"}}
                ],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 40, "cache_read_input_tokens": 900 + 60 * turn, "output_tokens": 25},
            }
            moment += timedelta(seconds=1)
            writer.add(_raw(body, answer, moment))
            history = [
                *history,
                {"role": "assistant", "content": answer["content"]},
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": call_id, "content": f"line {turn}\n" * 8}],
                },
            ]
    writer.close()


def _raw(body: object, answer: object, moment: datetime) -> RawExchange:
    headers = (("content-type", "application/json"),)
    request = RawRequest(
        "POST", "https", "api.anthropic.com", 443, "/v1/messages", "HTTP/1.1", headers, orjson.dumps(body), None
    )
    response = RawResponse(200, "OK", "HTTP/1.1", headers, orjson.dumps(answer), None, None)
    return RawExchange(request, response, None, moment, 300.0, 900.0)


_MEASURED = """
import resource, sys
from llmproxy.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
usage = resource.getrusage(resource.RUSAGE_SELF)
peak = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:"))  # kB, since exec
print(usage.ru_utime + usage.ru_stime, peak, file=sys.stderr)
"""


def measure(path: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MB) of `llmproxy report PATH --format json --max-calls 0 -o /dev/null`, start-up
    and imports included, as the process itself accounts them (Linux: the peak is VmHWM, which, unlike
    ru_maxrss, does not carry the benchmark's own peak across exec)."""
    started = time.perf_counter()
    command = ["report", str(path), "--format", "json", "--max-calls", "0", "-o", "/dev/null"]
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED, *command],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=path.parent,
    )
    wall = time.perf_counter() - started
    cpu, rss = done.stderr.split()[-2:]
    return wall, float(cpu), int(rss) / 1024


def instructions(path: Path, env: dict[str, str], scratch: Path) -> int:
    """The instructions `measure`'s command executes, as callgrind counts them."""
    out = scratch / "callgrind.out"
    command = ["report", str(path), "--format", "json", "--max-calls", "0", "-o", "/dev/null"]
    subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-m", "llmproxy", *command],
        capture_output=True,
        check=True,
        env={**env, "PYTHONHASHSEED": "0"},
        cwd=path.parent,
    )
    totals = next(line for line in out.read_text().splitlines() if line.startswith("totals:"))
    return int(totals.split()[1])


def environment(tree: Path, scratch: Path) -> dict[str, str]:
    """The measured process's environment: `tree`'s llmproxy first on the path, bytecode cached apart."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(tree), "PYTHONPYCACHEPREFIX": str(scratch / "bytecode" / tree.name)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another source tree, measured in the same rounds")
    parser.add_argument("--callgrind", action="store_true", help="count instructions instead (valgrind)")
    args = parser.parse_args()
    if args.callgrind and shutil.which("valgrind") is None:
        sys.exit("--callgrind needs valgrind (Debian: apt-get install valgrind)")
    shapes = {  # name: (sessions, turns)
        "one exchange": (1, 1),
        "10,000 exchanges (20 sessions x 500 turns)": (20, 500),
        "2,000 exchanges in 1 session of 2,000 turns": (1, 2000),
        "2,000 exchanges in 20 sessions of 100 turns": (20, 100),
    }
    trees = {"this tree": ROOT} | ({f"against {args.against}": args.against.resolve()} if args.against else {})
    with tempfile.TemporaryDirectory() as temporary:
        scratch = Path(temporary)
        paths = {}
        for number, (name, (sessions, turns)) in enumerate(shapes.items()):
            paths[name] = scratch / f"{number}.json"
            write_cassette(paths[name], sessions, turns)
        envs = {tree: environment(root, scratch) for tree, root in trees.items()}
        for env in envs.values():
            measure(paths["one exchange"], env)  # compiles the bytecode
        if args.callgrind:
            counts = {
                (tree, name): instructions(path, env, scratch)
                for name, path in paths.items()
                for tree, env in envs.items()
            }
            print("llmproxy report --format json --max-calls 0, instructions of the whole command (callgrind),")
            print(f"{' and '.join(trees)}:")
            for name in paths:
                found = [counts[tree, name] for tree in trees]
                ratio = f"  ratio {found[0] / found[1]:.3f}" if len(found) == 2 else ""
                print(f"  {name:<46} " + "  ".join(f"{count / 1e9:6.2f} G" for count in found) + ratio)
            return 0
        figures: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
        for _ in range(args.rounds):
            for name, path in paths.items():
                for tree, env in envs.items():
                    figures.setdefault((tree, name), []).append(measure(path, env))
        print(f"llmproxy report --format json --max-calls 0, medians of {args.rounds} rounds (whole command):")
        medians = {
            key: tuple(statistics.median(run[i] for run in runs) for i in range(3)) for key, runs in figures.items()
        }
        for tree in trees:
            print(f"{tree}:")
            for name, path in paths.items():
                wall, cpu, rss = medians[tree, name]
                size = path.stat().st_size / 1e6
                print(f"  {name:<46} {size:6.1f} MB cassette: {cpu:5.2f} s CPU, {wall:5.2f} s wall, {rss:5.0f} MB peak")
        if args.against:
            print("this tree / against, CPU and peak:")
            for name in paths:
                (_, cpu, rss), (_, cpu_against, rss_against) = (
                    medians["this tree", name],
                    medians[f"against {args.against}", name],
                )
                print(f"  {name:<46} {cpu / cpu_against:5.2f} CPU, {rss / rss_against:5.2f} peak")
    return 0


if __name__ == "__main__":
    sys.exit(main())
