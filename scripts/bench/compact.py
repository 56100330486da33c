"""What shared parts save (docs/cassette-format.md#shared-parts), and what reading them costs.

    .venv/bin/python scripts/bench/compact.py [--rounds N]

For the example cassettes (cassettes/) and a generated 40-turn Anthropic session recorded in process (11 KB of
system prompt and 12 tools, about 2 KB of new conversation and 1 KB of answer per turn), each written both ways —
as llmproxy wrote cassettes before shared parts (one value per line, every request's system prompt and tools
again) and compacted — the file's size against the largest request body it holds (its compact JSON, as replay
sends it: targets ≤ 1.3×, Codex's ≤ 1.5×), and, in the same run, rounds alternating, how long loading takes
(`load_cassette`: reports, check, to-expectations) and replaying every request (`load_recorded`, the replay
index, and `take` for each recorded request): compacted against before (target: within ±5%); and what the
recorder's writer spends per exchange of the 40-turn session (`CassetteWriter.write`: redact, convert, share the
history, compact, journal, write), CPU per exchange, compacting against not (the same run, alternating).
"""

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import orjson

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from llmproxy.cassette.files import encode_cassette, read_exchanges  # noqa: E402
from llmproxy.cassette.model import JsonBody, dump  # noqa: E402
from llmproxy.cassette.parts import Compactor, compacted  # noqa: E402
from llmproxy.cassette.recorded import load_recorded  # noqa: E402
from llmproxy.cassette.redact import Redactor  # noqa: E402
from llmproxy.cassette.replay_index import ReplayHit, ReplayIndex  # noqa: E402
from llmproxy.cassette.store import CassetteWriter, load_cassette  # noqa: E402
from llmproxy.model.exchange import RawExchange  # noqa: E402
from tests.cassette.factory import exchange, request, response, sse_events  # noqa: E402

EXAMPLES = ("claude-code-tool-loop", "opencode-tool-loop", "codex-tool-loop", "gemini-cli-tool-loop", "codex-websocket")
TARGETS = {"40-turn session": 1.3, "claude-code-tool-loop": 1.3, "opencode-tool-loop": 1.3, "codex-tool-loop": 1.5}


def session(turns: int = 40) -> list[RawExchange]:
    """An Anthropic SDK agent session: the same system prompt and tools every turn, its history re-sent, each
    answer streamed as the API streams it (a text block, 100 characters a delta) and sent back in the next turn."""
    system = " ".join(f"Rule {n}: keep the change small and say what you did and why." for n in range(180))
    tools = [
        {
            "name": f"tool_{n}",
            "description": f"Tool {n}: " + "reads, edits or runs what the task needs. " * 12,
            "input_schema": {"type": "object", "properties": {"path": {"type": "string"}, "text": {"type": "string"}}},
        }
        for n in range(12)
    ]
    messages: list[dict[str, object]] = []
    recorded = []
    for turn in range(turns):
        messages.append({"role": "user", "content": f"Step {turn}: " + f"the output of step {turn} was fine. " * 30})
        body = {"model": "claude-x", "max_tokens": 4096, "system": system, "tools": tools, "messages": list(messages)}
        answer = f"Turn {turn}: " + "I looked at the file and changed one line. " * 22
        start = {"id": f"msg_{turn}", "type": "message", "role": "assistant", "model": "claude-x", "content": []}
        events = sse_events(
            {"type": "message_start", "message": {**start, "usage": {"input_tokens": 10 * turn, "output_tokens": 1}}},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            *(
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}
                for piece in (answer[i : i + 100] for i in range(0, len(answer), 100))
            ),
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 250}},
            {"type": "message_stop"},
        )
        recorded.append(
            exchange(request({**body, "stream": True}), response(events=events, content_type="text/event-stream"))
        )
        messages.append({"role": "assistant", "content": answer})
    return recorded


def both_ways(path: Path, folder: Path) -> tuple[Path, Path]:
    """The cassette as llmproxy wrote it before shared parts, and compacted."""
    stored = [dump(exchange) for exchange in read_exchanges(path)]
    before, after = folder / f"{path.stem}.before.json", folder / f"{path.stem}.compact.json"
    before.write_bytes(orjson.dumps({"llmproxy_cassette": 1, "exchanges": stored}, option=orjson.OPT_INDENT_2) + b"\n")
    after.write_bytes(encode_cassette(list(compacted(stored))))
    return before, after


def largest_request(path: Path) -> int:
    bodies = [e.request.body.json_ for e in load_cassette(path).exchanges if isinstance(e.request.body, JsonBody)]
    return max(len(orjson.dumps(body)) for body in bodies)


def replay_all(path: Path) -> None:
    index = ReplayIndex(load_recorded(path))
    for recorded in list(index.recorded):
        if recorded.websocket is None:
            assert isinstance(index.take(recorded.request, recorded.provider), ReplayHit)


def cpu(action: Callable[[Path], object], path: Path, calls: int) -> float:
    """CPU seconds per call (steadier than wall time on a machine shared with other work)."""
    start = time.process_time()
    for _ in range(calls):
        action(path)
    return (time.process_time() - start) / calls


def speed(action: Callable[[Path], object], before: Path, after: Path, rounds: int) -> float:
    """Compacted ÷ before: the median over rounds, each timing enough calls for 50 ms, alternating which goes
    first."""
    calls = max(1, round(0.05 / max(cpu(action, before, 1), 1e-6)))
    ratios = []
    for round_ in range(rounds):
        if round_ % 2:
            a, b = cpu(action, after, calls), cpu(action, before, calls)
        else:
            b, a = cpu(action, before, calls), cpu(action, after, calls)
        ratios.append(a / b)
    return statistics.median(ratios)


def write_session(folder: Path, exchanges: list[RawExchange], compact: bool) -> float:
    """CPU seconds per exchange that the writer spends recording `exchanges` into a new cassette."""
    path = folder / f"written-{compact}.json"
    path.unlink(missing_ok=True)
    with mock.patch.object(Compactor, "compact", Compactor.compact if compact else _as_it_is):
        writer = CassetteWriter.open(path, Redactor())
        writer.start()
        start = time.process_time()
        for raw in exchanges:
            writer.write(raw)
        spent = time.process_time() - start
        writer.close()
    return spent / len(exchanges)


def _as_it_is(self: Compactor, exchange: dict[str, Any]) -> dict[str, Any]:
    return exchange


def writer_cost(folder: Path, rounds: int) -> tuple[float, float]:
    """Milliseconds per exchange, compacting and not: medians over rounds, alternating which goes first."""
    exchanges = session()
    with_parts, without = [], []
    for round_ in range(rounds):
        for compact in (True, False) if round_ % 2 else (False, True):
            (with_parts if compact else without).append(write_session(folder, exchanges, compact))
    return statistics.median(with_parts) * 1e3, statistics.median(without) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        generated = folder / "40-turn session.json"
        writer = CassetteWriter.open(generated, Redactor())
        writer.start()
        for raw in session():
            writer.add(raw)
        writer.close()
        sources = [generated, *(ROOT / "cassettes" / f"{name}.json" for name in EXAMPLES)]
        print(
            "| cassette | exchanges | largest request | before | compacted | before ÷ largest | compacted ÷ largest "
            "| target | load | replay |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|")
        for source in sources:
            before, after = both_ways(source, folder)
            assert load_cassette(before) == load_cassette(after), source
            largest = largest_request(after)
            old, new = before.stat().st_size, after.stat().st_size
            target = TARGETS.get(source.stem)
            met = "" if target is None else f"≤ {target}× {'✓' if new / largest <= target else '✗'}"
            load = speed(load_cassette, before, after, rounds)
            replay = speed(replay_all, before, after, rounds)
            count = len(read_exchanges(after))
            print(
                f"| {source.stem} | {count} | {largest / 1024:,.0f} KB | {old / 1024:,.0f} KB | {new / 1024:,.0f} KB "
                f"| {old / largest:.1f}× | {new / largest:.2f}× | {met} | {load:.2f}× | {replay:.2f}× |"
            )
        compacting, plain = writer_cost(folder, rounds)
        print(
            f"\nwriter, per exchange of the 40-turn session: {compacting:.2f} ms compacting, {plain:.2f} ms not "
            f"({compacting / plain:.2f}×)"
        )


if __name__ == "__main__":
    main()
