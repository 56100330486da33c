"""Where a request to llmproxy's own base URL goes: the public API its route names, found by path."""

import pytest

from llmproxy.providers.origins import origin_for
from llmproxy.providers.routes import detect


@pytest.mark.parametrize(
    ("path", "origin"),
    [
        ("/v1/messages?beta=true", "https://api.anthropic.com"),
        ("/v1/chat/completions", "https://api.openai.com"),
        ("/v1/responses", "https://api.openai.com"),
        ("/backend-api/codex/responses", "https://chatgpt.com"),
        ("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "https://generativelanguage.googleapis.com"),
        (
            "/v1/projects/p/locations/europe-west4/publishers/google/models/gemini-2.5-pro:generateContent",
            "https://europe-west4-aiplatform.googleapis.com",
        ),
        (
            "/v1/projects/p/locations/global/publishers/google/models/g:generateContent",
            "https://aiplatform.googleapis.com",
        ),
        ("/v1internal:streamGenerateContent?alt=sse", "https://cloudcode-pa.googleapis.com"),
        ("/api/chat", "http://localhost:11434"),
        ("/v2/rerank", "https://api.cohere.com"),
        ("/openai/deployments/gpt/chat/completions?api-version=2024-10-21", None),  # Azure: a resource of yours
        ("/model/anthropic.claude-v2/converse", None),  # Bedrock: a region of yours
    ],
)
def test_each_route_goes_to_its_public_api(path: str, origin: str | None) -> None:
    route = detect("127.0.0.1", path, {}, method="POST")
    assert route is not None
    assert origin_for(route, path.split("?")[0]) == origin
