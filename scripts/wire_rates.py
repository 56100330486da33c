"""How much of the LLM wire llmproxy reads: routes recognised per provider, and the decode and usage-agreement
rates over the project's real-shape fixtures (tests/fixtures, cassettes/).

    .venv/bin/python scripts/wire_rates.py            # this checkout
    .venv/bin/python scripts/wire_rates.py --routes   # only the route table (works on old checkouts too:
                                                      # PYTHONPATH=<old checkout> … --routes)

Usage agreement compares the `Usage` a codec derives with the provider's own usage object, read here apart
from the codecs, in `Usage`'s documented meaning (the whole prompt as input, reasoning inside output).
"""

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# (provider, what, method, host, path): one probe per kind of request a real client sends
PROBES: list[tuple[str, str, str, str, str]] = [
    ("anthropic", "messages", "POST", "api.anthropic.com", "/v1/messages"),
    ("anthropic", "count_tokens", "POST", "api.anthropic.com", "/v1/messages/count_tokens"),
    ("anthropic", "models", "GET", "api.anthropic.com", "/v1/models"),
    ("openai", "chat", "POST", "api.openai.com", "/v1/chat/completions"),
    ("openai", "responses", "POST", "api.openai.com", "/v1/responses"),
    ("openai", "responses retrieve", "GET", "api.openai.com", "/v1/responses/resp_1"),
    ("openai", "responses resume stream", "GET", "api.openai.com", "/v1/responses/resp_1?stream=true&starting_after=3"),
    ("openai", "responses cancel", "POST", "api.openai.com", "/v1/responses/resp_1/cancel"),
    ("openai", "responses delete", "DELETE", "api.openai.com", "/v1/responses/resp_1"),
    ("openai", "responses input_items", "GET", "api.openai.com", "/v1/responses/resp_1/input_items"),
    ("openai", "responses input_tokens", "POST", "api.openai.com", "/v1/responses/input_tokens"),
    ("openai", "responses compact", "POST", "api.openai.com", "/v1/responses/compact"),
    ("openai", "codex compact", "POST", "chatgpt.com", "/backend-api/codex/responses/compact"),
    ("openai", "embeddings", "POST", "api.openai.com", "/v1/embeddings"),
    ("azure", "chat", "POST", "x.openai.azure.com", "/openai/deployments/d/chat/completions"),
    ("azure", "responses", "POST", "x.openai.azure.com", "/openai/v1/responses"),
    ("bedrock", "converse", "POST", "bedrock-runtime.us-east-1.amazonaws.com", "/model/m/converse"),
    ("bedrock", "converse-stream", "POST", "bedrock-runtime.us-east-1.amazonaws.com", "/model/m/converse-stream"),
    ("bedrock", "invoke", "POST", "bedrock-runtime.us-east-1.amazonaws.com", "/model/anthropic.c/invoke"),
    ("bedrock", "count-tokens", "POST", "bedrock-runtime.us-east-1.amazonaws.com", "/model/m/count-tokens"),
    ("gemini", "generateContent", "POST", "generativelanguage.googleapis.com", "/v1beta/models/g:generateContent"),
    ("gemini", "stream", "POST", "generativelanguage.googleapis.com", "/v1beta/models/g:streamGenerateContent"),
    ("gemini", "countTokens", "POST", "generativelanguage.googleapis.com", "/v1beta/models/g:countTokens"),
    (
        "gemini",
        "vertex",
        "POST",
        "aiplatform.googleapis.com",
        "/v1/projects/p/locations/l/publishers/google/models/g:generateContent",
    ),
    ("code assist", "generateContent", "POST", "cloudcode-pa.googleapis.com", "/v1internal:generateContent"),
    ("code assist", "countTokens", "POST", "cloudcode-pa.googleapis.com", "/v1internal:countTokens"),
    ("cohere", "chat v2", "POST", "api.cohere.com", "/v2/chat"),
    ("cohere", "chat v1", "POST", "api.cohere.com", "/v1/chat"),
    ("cohere", "embed", "POST", "api.cohere.com", "/v2/embed"),
    ("ollama", "chat", "POST", "localhost", "/api/chat"),
    ("ollama", "generate", "POST", "localhost", "/api/generate"),
    ("compatible", "deepseek chat (no /v1)", "POST", "api.deepseek.com", "/chat/completions"),
    ("compatible", "deepseek responses (no /v1)", "POST", "api.deepseek.com", "/responses"),
    ("compatible", "openrouter chat", "POST", "openrouter.ai", "/api/v1/chat/completions"),
    ("compatible", "groq chat", "POST", "api.groq.com", "/openai/v1/chat/completions"),
    ("compatible", "mistral chat", "POST", "api.mistral.ai", "/v1/chat/completions"),
    ("compatible", "xai responses", "POST", "api.x.ai", "/v1/responses"),
    ("compatible", "cerebras chat", "POST", "api.cerebras.ai", "/v1/chat/completions"),
    ("compatible", "hugging face router", "POST", "router.huggingface.co", "/v1/chat/completions"),
]

REQUEST_FIXTURES = {
    "anthropic": "anthropic-messages",
    "bedrock_converse": "bedrock-converse",
    "bedrock_invoke": "bedrock-invoke-anthropic",
    "cohere_chat": "cohere-chat",
    "cohere_chat_v1": "cohere-chat-v1",
    "gemini": "gemini-generate",
    "gemini_code_assist": "gemini-code-assist",
    "ollama": "ollama-chat",
    "openai_chat": "openai-chat",
    "openai_responses": "openai-responses",
}
CAPTURED = {
    "claude": "anthropic-messages",
    "codex": "openai-responses",
    "gemini": "gemini-code-assist",
    "opencode": "anthropic-messages",
}


def routes() -> dict[str, dict[str, str | None]]:
    from llmproxy.providers.routes import detect

    table: dict[str, dict[str, str | None]] = {}
    for provider, what, method, host, path in PROBES:
        route = detect(host, path, {}, method=method)
        table.setdefault(provider, {})[what] = None if route is None else route.operation.value
    return table


def _provider_usage(provider: str, payloads: list[Any]) -> tuple[int, int] | None:
    """(input, output) as the provider reports them, in Usage's meaning, from a body or a stream's events."""
    found: tuple[int, int] | None = None
    anthropic: dict[str, int] = {}
    for payload in payloads:
        if not isinstance(payload, dict):
            continue
        if provider == "anthropic":
            usage = payload.get("usage") or (payload.get("message") or {}).get("usage")
            if isinstance(usage, dict):
                anthropic.update({k: v for k, v in usage.items() if isinstance(v, int)})
                keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
                found = (sum(anthropic.get(k, 0) for k in keys), anthropic.get("output_tokens", 0))
        elif provider == "openai":
            usage = payload.get("usage") or (payload.get("response") or {}).get("usage")
            if isinstance(usage, dict) and "input_tokens" in usage:
                found = (usage["input_tokens"], usage["output_tokens"])
            elif isinstance(usage, dict) and "prompt_tokens" in usage:
                total = usage.get("total_tokens", 0)
                found = (usage["prompt_tokens"], max(usage["completion_tokens"], total - usage["prompt_tokens"]))
        elif provider in ("gemini", "gemini_code_assist"):
            body = payload.get("response", payload)
            usage = body.get("usageMetadata") if isinstance(body, dict) else None
            if isinstance(usage, dict):
                prompt = usage.get("promptTokenCount", 0) + usage.get("toolUsePromptTokenCount", 0)
                found = (prompt, usage.get("candidatesTokenCount", 0) + usage.get("thoughtsTokenCount", 0))
    return found


def _payloads(exchange: Any) -> list[Any]:
    from llmproxy.cassette.bodies import body_bytes, event_bytes
    from llmproxy.framing.sse import decode_all

    response = exchange.response
    if response.events is not None:
        raw = [event_bytes(event) for event in response.events]
        texts = [event.data for event in decode_all(raw)] or [chunk.decode() for chunk in raw]
    else:
        texts = [body_bytes(response.body).decode()] if response.body is not None else []
    payloads = []
    for text in texts:
        try:
            payloads.append(json.loads(text))
        except ValueError:
            continue
    return payloads


def fixtures() -> dict[str, Counter[str]]:
    from llmproxy.cassette.decode import decode_exchange, exchange_route
    from llmproxy.cassette.files import read_exchanges
    from llmproxy.providers.registry import CHAT_CODECS, chat_codec

    counts: dict[str, Counter[str]] = {}

    def tally(provider: str, key: str, ok: bool) -> None:
        counter = counts.setdefault(provider, Counter())
        counter[f"{key} total"] += 1
        counter[f"{key} ok"] += ok

    for folder, codec in REQUEST_FIXTURES.items():
        for path in sorted((ROOT / "tests/fixtures/requests" / folder).glob("*.json")):
            if path.name.startswith("generate"):  # Ollama's other API
                codec = "ollama-generate"
            try:
                CHAT_CODECS[codec].decode_request(path.read_bytes())
                ok = True
            except Exception:
                ok = False
            tally(CHAT_CODECS[codec].provider.value, "requests", ok)
    for path in sorted((ROOT / "tests/fixtures/captured").glob("*.json")):
        captured = json.loads(path.read_text())
        if captured["cli"] not in CAPTURED:  # a CLI this table does not know yet: say so, do not guess
            print(f"{path.name}: no codec listed for {captured['cli']}", file=sys.stderr)
            continue
        chat = CHAT_CODECS[CAPTURED[captured["cli"]]]
        body = captured["body"]
        if isinstance(body, dict) and body.get("type") == "response.create":  # a WebSocket message
            body = {key: value for key, value in body.items() if key != "type"}
        try:
            chat.decode_request(json.dumps(body).encode())
            ok = True
        except Exception:
            ok = False
        tally(chat.provider.value, "requests", ok)
    for path in sorted((ROOT / "cassettes").rglob("*.json")):
        for exchange in read_exchanges(path):
            route = exchange_route(exchange)
            if route is None or chat_codec(route) is None:
                continue
            provider = route.provider.value
            try:
                decoded = decode_exchange(exchange)
            except Exception:
                tally(provider, "requests", False)
                continue
            tally(provider, "requests", True)
            if exchange.response is None or exchange.response.status >= 400 or decoded.completion is None:
                continue
            tally(provider, "answers", decoded.completion.error is None)
            reported = _provider_usage(provider, _payloads(exchange))
            if reported is not None and decoded.usage is not None:
                usage = decoded.usage
                tally(provider, "usage agrees", (usage.input_tokens, usage.output_tokens) == reported)
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--routes", action="store_true", help="only the route table")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    result: dict[str, Any] = {"routes": routes()}
    if not args.routes:
        result["fixtures"] = {provider: dict(counter) for provider, counter in sorted(fixtures().items())}
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    for provider, table in result["routes"].items():
        known = sum(operation is not None for operation in table.values())
        missing = [what for what, operation in table.items() if operation is None]
        print(
            f"{provider:12} {known}/{len(table)} routes recognised"
            + (f"; not: {', '.join(missing)}" if missing else "")
        )
    for provider, counter in result.get("fixtures", {}).items():
        shown = [
            f"{key} {counter[f'{key} ok']}/{counter[f'{key} total']}"
            for key in ("requests", "answers", "usage agrees")
            if counter.get(f"{key} total")
        ]
        print(f"{provider:12} " + ", ".join(shown))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
