"""Caching advice respects what each provider caches (docs/providers.md#prompt-caching, whose figures
tests/providers/test_prompt_caching.py holds): a prompt shorter than its model's minimum is never said to be
worth caching, and the minimum a signal quotes is that of the models its calls used."""

from pathlib import Path

import orjson
import pytest

from llmproxy.model import Provider
from llmproxy.model.exchange import RawExchange
from llmproxy.providers.registry import facts
from tests.analysis.reports import recorded, report_of
from tests.cassette.factory import STARTED, exchange, request, response


def run(folder: Path, model: str, system_tokens: int, *, calls: int = 3) -> str:
    """A cassette of `calls` one-off questions sharing a system prompt of about `system_tokens` tokens (four
    bytes each), none read from the cache, billed as the provider would bill them."""
    system = "Keep answers short. " * (system_tokens // 5)
    exchanges: list[RawExchange] = []
    for number in range(1, calls + 1):
        question = f"Question {number}?"
        billed = system_tokens + 10
        if model.startswith("claude"):
            body: object = {
                "model": model,
                "max_tokens": 256,
                "system": system,
                "messages": [{"role": "user", "content": question}],
            }
            answer: object = {
                "id": f"msg_{number}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": "Yes."}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": billed, "output_tokens": 300},
            }
            sent = request(body)
        elif model.startswith("gpt"):
            body = {
                "model": model,
                "messages": [{"role": "system", "content": system}, {"role": "user", "content": question}],
            }
            answer = {
                "id": f"chatcmpl-{number}",
                "object": "chat.completion",
                "created": 1767225600,
                "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "Yes."}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": billed, "completion_tokens": 300, "total_tokens": billed + 300},
            }
            sent = request(body, host="api.openai.com", path="/v1/chat/completions")
        else:
            body = {
                "systemInstruction": {"parts": [{"text": system}]},
                "contents": [{"role": "user", "parts": [{"text": question}]}],
            }
            answer = {
                "candidates": [
                    {"index": 0, "finishReason": "STOP", "content": {"role": "model", "parts": [{"text": "Yes."}]}}
                ],
                "usageMetadata": {
                    "promptTokenCount": billed,
                    "candidatesTokenCount": 300,
                    "totalTokenCount": billed + 300,
                },
                "modelVersion": model,
            }
            path = f"/v1beta/models/{model}:generateContent"
            sent = request(body, host="generativelanguage.googleapis.com", path=path)
        exchanges.append(exchange(sent, response(orjson.dumps(answer)), started_at=STARTED.replace(second=number)))
    return recorded(folder / f"{model}-{system_tokens}.json", exchanges)


CACHING_SIGNALS = {"REPEATED_SYSTEM_PROMPT", "LOW_CACHE_HIT_RATE"}


@pytest.mark.parametrize(
    ("model", "system_tokens", "worth_caching"),
    [
        ("claude-sonnet-4-5", 1_500, True),
        ("claude-sonnet-4-5", 600, False),
        ("claude-haiku-4-5", 1_500, False),  # Haiku 4.5 caches 4,096 tokens or more
        ("claude-haiku-4-5", 4_500, True),
        ("claude-3-5-haiku-20241022", 1_500, False),
        ("claude-3-5-haiku-20241022", 2_500, True),
        ("claude-opus-4-5", 3_000, False),
        ("claude-opus-4-7", 3_000, True),  # Opus 4.7 caches from 2,048
        ("claude-opus-5-5", 800, True),  # Opus 5.5 caches from 512
        ("claude-opus-5-5", 300, False),
        ("gpt-4.1-mini", 1_200, True),
        ("gpt-4.1-mini", 20, False),
        ("gemini-2.5-flash", 1_500, False),
        ("gemini-2.5-flash", 2_500, True),
    ],
)
def test_a_repeated_system_prompt_is_worth_caching_only_from_its_models_minimum(
    tmp_path: Path, model: str, system_tokens: int, worth_caching: bool
) -> None:
    report = report_of(run(tmp_path, model, system_tokens))
    found = {s.id: s for s in report.signals if s.id in CACHING_SIGNALS}
    if not worth_caching:
        assert found == {}
        return
    assert set(found) == CACHING_SIGNALS
    minimum = facts(Provider(report.calls[0].provider)).prompt_caching(model).minimum
    assert found["LOW_CACHE_HIT_RATE"].detail.startswith("0% of input tokens were read from the cache, while ")
    assert f"(the model's caching minimum is {minimum:,} tokens)" in found["LOW_CACHE_HIT_RATE"].detail


@pytest.mark.parametrize(("model", "cacheable"), [("claude-haiku-4-5", False), ("claude-sonnet-4-5", True)])
def test_a_large_block_is_worth_caching_only_in_a_prompt_its_model_caches(
    tmp_path: Path, model: str, cacheable: bool
) -> None:
    """A 2,500-token document re-sent every turn, in prompts under 4,096 tokens: Claude Sonnet 4.5 would cache
    them (from 1,024 tokens), Claude Haiku 4.5 would not (from 4,096)."""
    document = "The service retries failed uploads with exponential backoff. " * 160
    exchanges: list[RawExchange] = []
    history: list[dict[str, object]] = [{"role": "user", "content": f"Read this:\n{document}\nWhat does it say?"}]
    for turn in range(3):
        body = {"model": model, "max_tokens": 256, "messages": list(history)}
        answer = {
            "id": f"msg_{turn}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": "It retries."}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 2_500 + 20 * turn, "output_tokens": 10},
        }
        started = STARTED.replace(second=turn + 1)
        exchanges.append(exchange(request(body), response(orjson.dumps(answer)), started_at=started))
        history += [{"role": "assistant", "content": "It retries."}, {"role": "user", "content": f"And {turn}?"}]
    report = report_of(recorded(tmp_path / "document.json", exchanges))
    assert ("LARGE_STATIC_CONTEXT_RESENT" in {s.id for s in report.signals}) is cacheable
