"""Client programs run as children of `llmproxy record -- python tests/record/clients.py NAME`.

They use the official SDKs with their default hosts and nothing but the environment llmproxy injects (proxy
and CA variables): no base URL, no CA option. Each plants the secret it is given in a header, a query
parameter and a message, so the tests can show none of them reaches the cassette.
"""

import json
import os
import sys

SECRET = os.environ["PLANTED_SECRET"]
QUESTION = os.environ.get("QUESTION", "What is the capital of France? Answer in one word.")


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


def gemini_session() -> dict[str, str]:
    from google import genai

    client = genai.Client(api_key=SECRET)
    first = client.models.generate_content(model="gemini-2.5-flash", contents=QUESTION)
    chunks = client.models.generate_content_stream(model="gemini-2.5-flash", contents=f"My key is {SECRET}.")
    return {"first": first.text or "", "second": "".join(chunk.text or "" for chunk in chunks)}


def bedrock_session() -> dict[str, str]:
    import boto3

    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="AKIA" + SECRET[-16:].upper().replace("-", "A").replace("_", "B"),
        aws_secret_access_key=SECRET[:40],
    )
    model = "amazon.nova-pro-v1:0"
    first = client.converse(modelId=model, messages=[{"role": "user", "content": [{"text": QUESTION}]}])
    stream = client.converse_stream(
        modelId=model, messages=[{"role": "user", "content": [{"text": f"My key is {SECRET}."}]}]
    )
    second = "".join(
        event["contentBlockDelta"]["delta"].get("text", "")
        for event in stream["stream"]
        if "contentBlockDelta" in event
    )
    return {"first": first["output"]["message"]["content"][0]["text"], "second": second}


def ollama_session() -> dict[str, str]:
    import ollama

    client = ollama.Client(host="https://ollama.com", headers={"authorization": f"Bearer {SECRET}"})
    first = client.chat(model="gpt-oss:120b", messages=[{"role": "user", "content": QUESTION}], stream=False)
    parts = client.chat(
        model="gpt-oss:120b", messages=[{"role": "user", "content": f"My key is {SECRET}."}], stream=True
    )
    return {"first": first.message.content or "", "second": "".join(part.message.content or "" for part in parts)}


def azure_session() -> dict[str, str]:
    import openai

    client = openai.AzureOpenAI(
        azure_endpoint="https://llmproxy-test.openai.azure.com",
        api_key=SECRET,
        api_version="2024-10-21",
        max_retries=0,
    )
    first = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": QUESTION}])
    chunks = client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": f"My key is {SECRET}."}], stream=True
    )
    second = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    return {"first": first.choices[0].message.content or "", "second": second}


def compatible_session() -> dict[str, str]:
    """DeepSeek's OpenAI-compatible API (no /v1 prefix, as its docs give the base URL), then a private
    gateway at a path of its own that speaks Chat Completions (declared with --route)."""
    import httpx
    import openai

    client = openai.OpenAI(api_key=SECRET, base_url="https://api.deepseek.com", max_retries=0)
    first = client.responses.create(model="deepseek-v4-flash", input=QUESTION)
    body = {"model": "corp-large", "messages": [{"role": "user", "content": QUESTION}]}
    answer = httpx.post("https://llm.corp.example/llm/generate", json=body, headers={"authorization": SECRET}).json()
    return {"first": first.output_text, "second": answer["choices"][0]["message"]["content"]}


def cohere_session() -> dict[str, str]:
    import cohere

    client = cohere.ClientV2(api_key=SECRET)
    first = client.chat(model="command-a-03-2025", messages=[{"role": "user", "content": QUESTION}])
    events = client.chat_stream(
        model="command-a-03-2025", messages=[{"role": "user", "content": f"My key is {SECRET}."}]
    )
    second = "".join(
        event.delta.message.content.text or ""  # type: ignore[union-attr]
        for event in events
        if event.type == "content-delta"
    )
    return {"first": first.message.content[0].text, "second": second}  # type: ignore[index,union-attr]


def coping_session() -> dict[str, str]:
    """Code that survives an API that does not answer, as an agent with a fallback does: it catches the SDKs'
    errors and carries on, so its exit status says nothing; only llmproxy can tell the recording is not whole.
    One OpenAI and one Anthropic question (PROMPT: the Anthropic one), each its answer or the SDK's error."""
    import anthropic
    import openai

    outcome: dict[str, str] = {}
    try:
        chat = openai.OpenAI(api_key=SECRET, max_retries=0).chat.completions.create(
            model="gpt-5-mini", messages=[{"role": "user", "content": QUESTION}]
        )
        outcome["openai"] = chat.choices[0].message.content or ""
    except openai.APIError as error:
        outcome["openai"] = type(error).__name__
    try:
        with anthropic.Anthropic(api_key=SECRET, max_retries=0, timeout=anthropic.Timeout(60, read=3)) as client:
            prompt = os.environ.get("PROMPT", QUESTION)
            with client.messages.stream(
                model="claude-sonnet-4-5", max_tokens=64, messages=[{"role": "user", "content": prompt}]
            ) as stream:
                outcome["anthropic"] = "".join(stream.text_stream)
    except Exception as error:  # an APIError, or what a stream that broke off raises as it is read
        outcome["anthropic"] = type(error).__name__
    return outcome


def agent_session() -> dict[str, str]:
    """A coding agent's first turn, as CLIs without a preset of their own make it (on the OpenAI SDK, as Kilo
    and Cline do): where it runs and the time in its system prompt, a fresh session id, a budget sized to what
    the prompt leaves of the context window."""
    import datetime
    import pathlib
    import uuid

    import openai

    cwd, home = pathlib.Path.cwd(), pathlib.Path.home()
    system = (
        f"You are a coding agent. Working directory: {cwd}\n"
        f"Settings: {os.path.relpath(home / '.agent' / 'settings.json', cwd)}\n"
        f"Project folder: {home}/.agent/projects/{str(cwd).replace('/', '-')}\n"
        f"<current_datetime>{datetime.datetime.now(datetime.UTC).isoformat(timespec='milliseconds')}</current_datetime>"
    )
    client = openai.OpenAI(api_key=SECRET, max_retries=0)
    first = client.chat.completions.create(
        model="gpt-5-mini",
        messages=[{"role": "system", "content": system}, {"role": "user", "content": QUESTION}],
        max_tokens=250_000 - len(system) // 4,
        metadata={"session_id": str(uuid.uuid4())},
    )
    return {"first": first.choices[0].message.content or ""}


SESSIONS = {
    "agent": agent_session,
    "coping": coping_session,
    "compatible": compatible_session,
    "anthropic": anthropic_session,
    "openai": openai_session,
    "gemini": gemini_session,
    "bedrock": bedrock_session,
    "ollama": ollama_session,
    "azure": azure_session,
    "cohere": cohere_session,
}

if __name__ == "__main__":
    print(json.dumps(SESSIONS[sys.argv[1]]()))
