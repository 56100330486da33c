"""One small request per API llmproxy answers, as its clients send it: host, path and body, streaming or not.
Tests that must cover every provider (decoding recorded exchanges, both doors answering alike) walk these."""

from dataclasses import dataclass
from typing import Any

import orjson

USER = "Say hi"


@dataclass(frozen=True, slots=True)
class Sample:
    name: str
    host: str
    path: str
    body: dict[str, Any]
    kind: str = "chat"  # chat, embedding, rerank or count: the kind of answer the mock gives it

    @property
    def data(self) -> bytes:
        return orjson.dumps(self.body)


def _messages(streams: bool, **extra: Any) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": USER}], **({"stream": True} if streams else {}), **extra}


def _chat(stream: bool) -> list[Sample]:
    gemini = {"contents": [{"role": "user", "parts": [{"text": USER}]}]}
    converse = {"messages": [{"role": "user", "content": [{"text": USER}]}]}
    invoke = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 64, **_messages(False)}
    bedrock = "bedrock-runtime.us-east-1.amazonaws.com"
    suffix = "-stream" if stream else ""
    gemini_method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    tag = "stream" if stream else "body"
    usage = {"stream_options": {"include_usage": True}} if stream else {}  # Chat Completions streams usage on request
    return [
        Sample(
            f"anthropic-{tag}",
            "api.anthropic.com",
            "/v1/messages",
            _messages(stream, model="claude-haiku-4-5", max_tokens=64),
        ),
        Sample(
            f"openai-chat-{tag}",
            "api.openai.com",
            "/v1/chat/completions",
            _messages(stream, model="gpt-4o-mini", **usage),
        ),
        Sample(
            f"openai-responses-{tag}",
            "api.openai.com",
            "/v1/responses",
            {"model": "gpt-5", "input": USER, **({"stream": True} if stream else {})},
        ),
        Sample(
            f"azure-chat-{tag}",
            "llmproxy-test.openai.azure.com",
            "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
            _messages(stream, **usage),
        ),
        Sample(f"ollama-chat-{tag}", "localhost", "/api/chat", _messages(False, model="llama3.2", stream=stream)),
        Sample(
            f"ollama-generate-{tag}",
            "localhost",
            "/api/generate",
            {"model": "llama3.2", "prompt": USER, "stream": stream},
        ),
        Sample(f"bedrock-converse-{tag}", bedrock, f"/model/anthropic.claude-3-haiku/converse{suffix}", converse),
        Sample(
            f"bedrock-invoke-{tag}",
            bedrock,
            "/model/anthropic.claude-3-haiku/invoke" + ("-with-response-stream" if stream else ""),
            invoke,
        ),
        Sample(
            f"gemini-{tag}",
            "generativelanguage.googleapis.com",
            f"/v1beta/models/gemini-2.5-flash:{gemini_method}",
            gemini,
        ),
        Sample(
            f"cohere-chat-{tag}",
            "api.cohere.com",
            "/v2/chat",
            _messages(stream, model="command-a-03-2025"),
        ),
        Sample(  # a compatible host whose paths drop `/v1`
            f"deepseek-chat-{tag}",
            "api.deepseek.com",
            "/chat/completions",
            _messages(stream, model="deepseek-chat", **usage),
        ),
        Sample(
            f"code-assist-{tag}",
            "cloudcode-pa.googleapis.com",
            f"/v1internal:{gemini_method}",
            {"model": "gemini-2.5-pro", "project": "p-1", "request": gemini},
        ),
    ]


CHAT = [*_chat(stream=False), *_chat(stream=True)]

VECTORS = [
    Sample(
        "openai-embeddings",
        "api.openai.com",
        "/v1/embeddings",
        {"model": "text-embedding-3-small", "input": [USER]},
        "embedding",
    ),
    Sample(
        "gemini-embeddings",
        "generativelanguage.googleapis.com",
        "/v1beta/models/gemini-embedding-001:embedContent",
        {"content": {"parts": [{"text": USER}]}},
        "embedding",
    ),
    Sample("ollama-embeddings", "localhost", "/api/embed", {"model": "nomic-embed-text", "input": USER}, "embedding"),
    Sample(
        "cohere-embeddings",
        "api.cohere.com",
        "/v2/embed",
        {"model": "embed-v4.0", "texts": [USER], "input_type": "search_query", "embedding_types": ["float"]},
        "embedding",
    ),
    Sample(
        "voyage-embeddings",
        "api.voyageai.com",
        "/v1/embeddings",
        {"model": "voyage-3.5", "input": [USER]},
        "embedding",
    ),
    Sample(
        "cohere-rerank",
        "api.cohere.com",
        "/v2/rerank",
        {"model": "rerank-v3.5", "query": USER, "documents": ["hi", "bye"]},
        "rerank",
    ),
    Sample(
        "voyage-rerank",
        "api.voyageai.com",
        "/v1/rerank",
        {"model": "rerank-2.5", "query": USER, "documents": ["hi", "bye"]},
        "rerank",
    ),
]

# count-token endpoints: the mock answers each with its estimate
COUNTS = [
    Sample(
        "anthropic-count-tokens",
        "api.anthropic.com",
        "/v1/messages/count_tokens",
        {"model": "claude-haiku-4-5", "messages": [{"role": "user", "content": USER}]},
        "count",
    ),
    Sample(
        "openai-input-tokens",
        "api.openai.com",
        "/v1/responses/input_tokens",
        {"model": "gpt-5", "input": USER},
        "count",
    ),
    Sample(
        "gemini-count-tokens",
        "generativelanguage.googleapis.com",
        "/v1beta/models/gemini-2.5-flash:countTokens",
        {"contents": [{"role": "user", "parts": [{"text": USER}]}]},
        "count",
    ),
]

ALL = [*CHAT, *VECTORS, *COUNTS]
