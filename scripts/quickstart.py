"""The README's first run: the official Anthropic SDK asks a question and streams the answer.

    .venv/bin/llmproxy replay --cassette cassettes/quickstart.json -- .venv/bin/python scripts/quickstart.py

Replayed from the committed cassette, offline: no API key, no network. It reaches `api.anthropic.com` only
through the proxy and CA settings llmproxy puts in its environment.
"""

import os

import anthropic

QUESTION = "In two sentences: what does an LLM traffic recorder let me do in CI?"


def main() -> None:
    client = anthropic.Anthropic(api_key=os.environ.get("ANTHROPIC_API_KEY", "no-key-needed-for-replay"))
    with client.messages.stream(
        model="claude-haiku-4-5", max_tokens=200, messages=[{"role": "user", "content": QUESTION}]
    ) as stream:
        for text in stream.text_stream:
            print(text, end="", flush=True)
    print()


if __name__ == "__main__":
    main()
