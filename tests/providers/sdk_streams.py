"""What the official anthropic SDK's own stream helper assembles from a stream llmproxy encoded."""

from typing import Any

import httpx2 as httpx
import pytest


def anthropic_final_message(stream: bytes) -> dict[str, Any]:
    """The final message `client.beta.messages.stream(...)` builds from `stream` (served by a mock transport), as
    the JSON the SDK would write of it; the test skips where the SDK is not installed."""
    anthropic = pytest.importorskip("anthropic")

    def serve(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=stream)

    http = httpx.Client(transport=httpx.MockTransport(serve))
    with anthropic.Anthropic(api_key="sk-ant-test", http_client=http) as client:
        asked = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
        with client.beta.messages.stream(**asked) as events:
            final: dict[str, Any] = events.get_final_message().model_dump(mode="json", exclude_unset=True)
    return final
