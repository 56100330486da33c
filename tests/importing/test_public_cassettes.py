"""Real vcrpy cassettes from a well-known open-source LLM project (tests/importing/public/, licence noted there),
recorded against the real OpenAI API: imported, they read as llmproxy's own recordings of the same calls."""

from pathlib import Path

from llmproxy.cassette.decode import decode_exchange
from llmproxy.cassette.store import load_cassette
from tests.importing.test_import import run

PUBLIC = Path(__file__).with_name("public")


def test_pydantic_ai_cassettes_import_with_their_answers_and_usage(tmp_path: Path) -> None:
    output = tmp_path / "pydantic-ai.json"
    code, said = run("cassette", "import", str(PUBLIC / "pydantic-ai"), "-o", str(output))
    assert code == 0, said
    assert said.startswith(f"imported 3 exchanges to {output} (openai 3; 2 streamed, 1 not)")
    exchanges = load_cassette(output).exchanges
    assert [(e.operation, e.model) for e in exchanges] == [("chat_completions", "gpt-4o")] + [
        ("chat_completions", "gpt-4o-mini")
    ] * 2
    decoded = [decode_exchange(exchange) for exchange in exchanges]
    completions = [d.completion for d in decoded]
    assert all(completion is not None for completion in completions)
    assert [c.text if c else None for c in completions] == [
        "The capital of France is Paris.",
        "",
        "The capital of the UK is London.",
    ]
    assert completions[1] is not None
    assert [(call.name, call.arguments) for call in completions[1].tool_calls] == [("get_capital", {"country": "UK"})]
    assert [(u.input_tokens, u.output_tokens) for d in decoded if (u := d.usage)] == [(24, 8), (53, 15), (78, 9)]
    assert str(exchanges[0].timings.started_at) == "2026-03-06 19:22:51.849479+00:00"  # its recorded_at
    assert run("cassette", "check", str(output))[0] == 0
