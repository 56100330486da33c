"""How long `llmproxy cassette import` takes over 10,000 exchanges (target: ≤ 5 s each format; docs/import.md).

    .venv/bin/python scripts/bench/importing.py [--exchanges N] [--rounds N]

A cassette of independent chat calls is written in process (half Anthropic streams of 24 SSE events, half OpenAI
plain answers; about 1 KB of request and 1 KB of answer each, an API key in every request's headers), exported
as a vcrpy YAML cassette and a HAR file by `cassette export`, and each is imported again by the command's own
code (`importing.run.import_files`: reading, redaction, conversion, the decode audit, writing), best of the
rounds, in one process on one core: wall time, and the process's CPU time (steadier on a shared machine).
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "addons"))

from llmproxy.cassette.redact import Redactor  # noqa: E402
from llmproxy.cassette.store import CassetteWriter  # noqa: E402
from llmproxy.importing.export import export_cassette  # noqa: E402
from llmproxy.importing.run import ImportOptions, import_files  # noqa: E402
from llmproxy.model.exchange import RawExchange  # noqa: E402
from llmproxy_addons.flow_files import read_flows  # noqa: E402
from tests.cassette.factory import exchange, request, response, sse_events  # noqa: E402

TARGET_S = 5.0


def calls(count: int) -> list[RawExchange]:
    made = []
    for n in range(count):
        question = f"Question {n}: " + "what does this function do, and why? " * 20
        if n % 2:
            body = {"model": "gpt-5-mini", "messages": [{"role": "user", "content": question}]}
            answer = {
                "id": f"chatcmpl-{n}",
                "object": "chat.completion",
                "model": "gpt-5-mini",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "It sorts. " * 90}}],
                "usage": {"prompt_tokens": 200, "completion_tokens": 180, "total_tokens": 380},
            }
            headers = (("content-type", "application/json"), ("authorization", "Bearer sk-proj-" + "a1B2c3D4" * 6))
            made.append(
                exchange(
                    request(body, host="api.openai.com", path="/v1/chat/completions", headers=headers),
                    response(__import__("orjson").dumps(answer)),
                )
            )
            continue
        body = {
            "model": "claude-x",
            "max_tokens": 512,
            "stream": True,
            "messages": [{"role": "user", "content": question}],
        }
        events = sse_events(
            {
                "type": "message_start",
                "message": {"id": f"msg_{n}", "usage": {"input_tokens": 200, "output_tokens": 1}},
            },
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            *(
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "It sorts. " * 4}}
                for _ in range(20)
            ),
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 180}},
        )
        made.append(exchange(request(body), response(events=events, content_type="text/event-stream")))
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exchanges", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        source = folder / "source.json"
        writer = CassetteWriter.open(source, Redactor())
        for made in calls(args.exchanges):
            writer.write(made)
        writer.start()
        writer.close()
        inputs = {form: folder / f"source.{'har' if form == 'har' else 'yaml'}" for form in ("vcrpy", "har")}
        for form, path in inputs.items():
            export_cassette(source, form, path)
        for form, path in inputs.items():
            best = cpu = float("inf")
            for round_ in range(args.rounds):
                output = folder / f"imported-{form}-{round_}.json"
                started, used = time.perf_counter(), time.process_time()
                summary = import_files([path], output, ImportOptions(read_flows, Redactor()))
                best = min(best, time.perf_counter() - started)
                cpu = min(cpu, time.process_time() - used)
            written = summary.written[0].exchanges
            size = path.stat().st_size / 1e6
            verdict = "met" if best <= TARGET_S else "NOT met"
            print(
                f"{form:6} {size:6.1f} MB, {written:,} exchanges imported in {best:.2f} s, {cpu:.2f} s of CPU", end=""
            )
            print(f" ({cpu / written * 1000:.2f} ms each; ≤ {TARGET_S:.0f} s: {verdict})")


if __name__ == "__main__":
    main()
