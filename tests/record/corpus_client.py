"""The client of the secret-corpus recording: run as `llmproxy record … -- python corpus_client.py`.

A raw HTTP client (httpx) with nothing but the proxy and CA settings llmproxy injects talks to the real
provider hosts; it plants every corpus secret in request headers, URLs and bodies (one body gzip-encoded),
and asks the local upstream for every answer shape in `tests/record/test_secret_corpus.py`, each holding the
corpus again: split across stream deltas, in content-encoded bodies, in Bedrock's base64 chunks.
"""

import gzip
import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.secret_corpus import FIELDS, HEADERS, QUERIES, SHAPES, planted_text

ANSWERS = (  # (host, path, answer the upstream sends)
    ("api.anthropic.com", "/v1/messages", "anthropic"),
    ("api.openai.com", "/v1/chat/completions", "openai-chat"),
    ("api.openai.com", "/v1/responses", "openai-responses"),
    ("generativelanguage.googleapis.com", "/v1beta/models/gemini-2.5-flash:streamGenerateContent", "gemini"),
    ("bedrock-runtime.us-east-1.amazonaws.com", "/model/amazon.nova-pro-v1:0/converse-stream", "bedrock-converse"),
    (
        "bedrock-runtime.us-east-1.amazonaws.com",
        "/model/anthropic.claude-sonnet-4-5-v1:0/invoke-with-response-stream",
        "bedrock-invoke",
    ),
    ("ollama.com", "/api/chat", "ollama"),
    ("api.openai.com", "/v1/chat/completions", "gzip"),
    ("api.openai.com", "/v1/chat/completions", "deflate"),
    ("api.openai.com", "/v1/chat/completions", "br"),
    ("api.openai.com", "/v1/chat/completions", "zstd"),
    ("api.openai.com", "/v1/chat/completions", "deflate, gzip"),
)


ENCODED = frozenset({"gzip", "deflate", "br", "zstd", "deflate, gzip"})  # JSON answers, content-encoded


def main() -> None:
    headers = {
        **HEADERS,
        "x-api-key": SHAPES["sk-ant"],
        "authorization": f"Bearer {SHAPES['sk']}",
        "cookie": f"session={SHAPES['github']}",
        "user-agent": f"corpus/1.0 (key {SHAPES['gitlab']})",
    }
    query = "&".join(f"{key}={value}" for key, value in QUERIES.items()) + f"&key={SHAPES['google']}"
    body = {
        "model": "corpus-model",
        "messages": [{"role": "user", "content": planted_text()}],
        **FIELDS,
    }
    with httpx.Client(timeout=60) as client:
        for number, (host, path, answer) in enumerate(ANSWERS):
            sent = dict(headers, **{"x-corpus-answer": answer, "content-type": "application/json"})
            data = httpx.Request(
                "POST", "https://x", json={**body, "stream": "," not in answer and len(answer) > 4}
            ).content
            if number == 0:  # a request body sent gzip-encoded
                data, sent["content-encoding"] = gzip.compress(data), "gzip"
            reply = client.post(f"https://{host}{path}?alt=sse&{query}", content=data, headers=sent)
            reply.raise_for_status()
            print(answer, len(reply.content))


if __name__ == "__main__":
    main()
