"""One session of the official SDKs against a base URL: OpenAI chat completions (plain and streamed) and Anthropic
messages (plain and streamed). Run in-process under vcrpy to record a cassette, or as a child of `llmproxy replay`
(`python sdk_session.py BASE_URL --times N`) to replay imported ones; prints the answers as JSON."""

import json
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import anthropic
    import openai


def session(base_url: str, api_key: str, proxy: str | None = None) -> dict[str, str]:
    import anthropic
    import httpx2
    import openai

    with httpx2.Client(proxy=proxy) as http:
        return _session(
            openai.OpenAI(base_url=f"{base_url}/v1", api_key=api_key, max_retries=0, http_client=http),
            anthropic.Anthropic(base_url=base_url, api_key=api_key, max_retries=0, http_client=http),
        )


def _session(chat: "openai.OpenAI", claude: "anthropic.Anthropic") -> dict[str, str]:
    first = chat.chat.completions.create(model="gpt-5-mini", messages=[{"role": "user", "content": "one"}])
    chunks = chat.chat.completions.create(
        model="gpt-5-mini",
        messages=[{"role": "user", "content": "two"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    second = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    third = claude.messages.create(
        model="claude-sonnet-4-6", max_tokens=64, messages=[{"role": "user", "content": "three"}]
    )
    with claude.messages.stream(
        model="claude-sonnet-4-6", max_tokens=64, messages=[{"role": "user", "content": "four"}]
    ) as stream:
        fourth = "".join(stream.text_stream)
    return {
        "openai": first.choices[0].message.content or "",
        "openai-stream": second,
        "anthropic": third.content[0].text,  # type: ignore[union-attr]
        "anthropic-stream": fourth,
    }


if __name__ == "__main__":  # BASE_URL --times N: the session N times, a list of their answers
    times = int(sys.argv[3]) if sys.argv[2:3] == ["--times"] else 1
    print(json.dumps([session(sys.argv[1], os.environ.get("SESSION_KEY", "sk-none")) for _ in range(times)]))
