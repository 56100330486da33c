"""What the answer chain itself costs a request (docs/performance.md#mock): `Chain.answer` around a stage that
answers at once, with the stages and taps a `llmproxy mock` run has (the intercept slot, the journal), less
that stage called alone; then each part added in turn. In process, no sockets: the figure the base-URL mock's
lead over its peers depends on once the parse (`Incoming`, also printed) is paid.

    .venv/bin/python scripts/bench/chain_bookkeeping.py [--versus CHECKOUT] [--rounds 5]

`--versus CHECKOUT` runs the same measure on another source tree (this venv's libraries), the trees taking
turns; medians of `--rounds` rounds of 50,000 requests, CPU microseconds a request.
"""

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
REQUESTS = 50_000


def measure(rounds: int) -> dict[str, float]:
    """This tree's figures (run in a child whose path puts the tree first)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import payloads

    from llmproxy.chain import Chain, Context, Door, Incoming, Reply, Stage
    from llmproxy.chain.reply import ReplySource
    from llmproxy.session import Listening, mocking
    from llmproxy_addons.stream_relay import StreamRelay

    answer = Reply(200, (("content-type", "application/json"),), b"{}", source=ReplySource.MOCK)

    class Answering(Stage):
        name = "mock"

        def decide(self, incoming: Incoming, context: Context) -> Reply | None:
            return answer

    body = payloads.chat_request()
    headers = {"host": "127.0.0.1:8000", "content-type": "application/json", "content-length": str(len(body))}
    with tempfile.TemporaryDirectory() as directory:
        expectations = Path(directory) / "expectations.json"
        expectations.write_text(json.dumps({"expectations": [{"respond": {"text": "hi"}}]}))
        with mocking(expectations, Listening(ca_directory=Path(directory) / "ca")) as session:
            run = session.chain
            stages = {stage.name: stage for stage in run.stages}
            taps = {tap.name: tap for tap in run.taps}
            stage = Answering()
            chains = {
                "the chain, as a mock run has it": Chain(
                    [*(s for s in run.stages if s.name != "mock"), stage], run.taps, run.network, run.redactor
                ),
                "  the chain alone": Chain([stage], [], run.network, run.redactor),
                "  + the intercept stage": Chain([stages["intercept"], stage], [], run.network, run.redactor),
                "  + the intercept tap": Chain(
                    [stages["intercept"], stage], [taps["intercept"]], run.network, run.redactor
                ),
                "  + the journal tap": Chain(
                    [stages["intercept"], stage], [taps["intercept"], taps["journal"]], run.network, run.redactor
                ),
            }
            raw = StreamRelay(run)._request("POST", "/v1/chat/completions", headers, body, "http")
            context = Context(Door.RELAY, forwards=False)
            figures: dict[str, list[float]] = {name: [] for name in ["the parse (Incoming)", *chains]}
            for _ in range(rounds):
                made = [Incoming(raw, Door.RELAY) for _ in range(REQUESTS)]
                gc.collect()
                gc.disable()
                start = time.process_time()
                for _ in range(REQUESTS):
                    Incoming(raw, Door.RELAY)
                figures["the parse (Incoming)"].append(time.process_time() - start)
                start = time.process_time()
                for incoming in made:
                    stage.decide(incoming, context)
                alone = time.process_time() - start
                for name, chain in chains.items():
                    start = time.process_time()
                    for incoming in made:
                        chain.answer(incoming, context)
                    figures[name].append(time.process_time() - start - alone)
                gc.enable()
    return {name: statistics.median(values) / REQUESTS * 1e6 for name, values in figures.items()}


def child(tree: Path, rounds: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(tree / "addons")])}
    argv = [sys.executable, __file__, "--child", "--rounds", str(rounds)]
    run = subprocess.run(argv, capture_output=True, text=True, check=True, env=env, cwd=tree)
    figures: dict[str, float] = json.loads(run.stdout.splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--versus", type=Path, help="another source tree, measured in turn")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.rounds)))
        return
    trees = [ROOT, *([args.versus.resolve()] if args.versus else [])]
    results: dict[Path, list[dict[str, Any]]] = {tree: [] for tree in trees}
    for _ in range(3):  # the trees take turns: the machine's load falls on both
        for tree in trees:
            results[tree].append(child(tree, args.rounds))
    names = list(results[ROOT][0])
    print("CPU µs a request".ljust(36) + "".join(tree.name.rjust(16) for tree in trees))
    for name in names:
        cells = "".join(f"{statistics.median(r[name] for r in results[tree]):16.2f}" for tree in trees)
        print(name.ljust(36) + cells)


if __name__ == "__main__":
    main()
