"""Client programs run as children of `llmproxy record -- python tests/record/clients.py NAME`.

They use the official SDKs with their default hosts and nothing but the environment llmproxy injects (proxy
and CA variables): no base URL, no CA option. Each plants the secret it is given in a header, a query
parameter and a message, so the tests can show none of them reaches the cassette.
"""

import json
import os
import sys

SECRET = os.environ["PLANTED_SECRET"]
QUESTION = "What is the capital of France? Answer in one word."


def anthropic_session() -> dict[str, str]:
    import anthropic

    client = anthropic.Anthropic(api_key=SECRET, max_retries=0)
    history = [{"role": "user", "content": QUESTION}]
    first = client.messages.create(model="claude-sonnet-4-5", max_tokens=64, messages=history)
    history += [
        {"role": "assistant", "content": first.content[0].text},  # type: ignore[union-attr]
        {"role": "user", "content": f"My key is {SECRET}. Now stream a longer answer."},
    ]
    with client.messages.stream(
        model="claude-sonnet-4-5", max_tokens=64, messages=history, extra_query={"key": SECRET}
    ) as stream:
        second = "".join(stream.text_stream)
    return {"first": first.content[0].text, "second": second}  # type: ignore[union-attr]


def openai_session() -> dict[str, str]:
    import openai

    client = openai.OpenAI(api_key=SECRET, max_retries=0)
    chunks = client.chat.completions.create(
        model="gpt-5-mini",
        messages=[{"role": "user", "content": QUESTION}],
        stream=True,
        stream_options={"include_usage": True},
        extra_query={"api_key": SECRET},
    )
    first = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    second = client.responses.create(model="gpt-5-mini", input=f"My key is {SECRET}. Say hi.")
    return {"first": first, "second": second.output_text}


if __name__ == "__main__":
    print(json.dumps({"anthropic": anthropic_session, "openai": openai_session}[sys.argv[1]]()))
