"""A team's test suite recorded through the pytest plugin: a small weather assistant (the official Anthropic
and OpenAI SDKs, a short system prompt, two tools offered on every call, a tool loop), fifteen tests, one
cassette each, recorded against the stand-in upstream (tests/testing/upstream.py: a prompt that mentions the
weather gets a `get_weather` call for Oslo) — what `llmproxy report tests/cassettes` reads in such a project.

The same question is asked in several tests; one test asks for the same tool call twice; no test makes the
model call `search_docs`; one test runs under chaos (two 529s the SDK retries).
"""

import os
import subprocess
import sys
from pathlib import Path

from llmproxy.testing.plugin import CI_VARIABLES

APP = '''
import anthropic
import openai
import pytest

UPSTREAM = "{url}"
SYSTEM = "You are the Acme weather assistant. Answer briefly."
TOOLS = [
    {{"name": "get_weather", "description": "Current weather for a city.",
     "input_schema": {{"type": "object", "properties": {{"city": {{"type": "string"}}}}, "required": ["city"]}}}},
    {{"name": "search_docs", "description": "Search the Acme documentation.",
     "input_schema": {{"type": "object", "properties": {{"query": {{"type": "string"}}}}, "required": ["query"]}}}},
]


def ask(prompt, retries=0):
    """The assistant's tool loop: ask, run the tools the model calls, send their results back."""
    with anthropic.Anthropic(api_key="sk-ant-api03-test", base_url=UPSTREAM, max_retries=retries) as client:
        messages = [{{"role": "user", "content": prompt}}]
        while True:
            message = client.messages.create(
                model="claude-sonnet-4-5", max_tokens=256, system=SYSTEM, tools=TOOLS, messages=messages
            )
            uses = [block for block in message.content if block.type == "tool_use"]
            if not uses:
                return message.content[0].text
            messages.append({{"role": "assistant", "content": [block.model_dump() for block in message.content]}})
            results = [{{"type": "tool_result", "tool_use_id": use.id, "content": "12 C, clear"}} for use in uses]
            messages.append({{"role": "user", "content": results}})


def ask_openai(prompt):
    tools = [{{"type": "function", "function": {{"name": tool["name"], "description": tool["description"],
              "parameters": tool["input_schema"]}}}} for tool in TOOLS]
    with openai.OpenAI(api_key="sk-proj-test", base_url=UPSTREAM + "/v1", max_retries=0) as client:
        completion = client.chat.completions.create(
            model="gpt-4.1-mini", tools=tools,
            messages=[{{"role": "system", "content": SYSTEM}}, {{"role": "user", "content": prompt}}],
        )
    return completion.choices[0].message.content


def test_weather_in_oslo(llmproxy):
    assert "answer" in ask("What is the weather in Oslo?")
    assert [call.name for call in llmproxy.tool_calls] == ["get_weather"]


def test_weather_for_the_home_page(llmproxy):
    assert "answer" in ask("What is the weather in Oslo?")  # test_weather_in_oslo's question


@pytest.mark.parametrize("city", ["Lima", "Rome", "Cairo", "Oslo"])
def test_weather_by_city(llmproxy, city):
    assert "answer" in ask(f"What is the weather in {{city}}?")


def test_weather_follow_up(llmproxy):
    ask("What is the weather in Oslo?")
    ask("And the weather in Oslo tonight?")  # the same tool call, twice in one test


@pytest.mark.parametrize("question", ["How do I reset my password?", "Which plans are there?", "Who are you?"])
def test_questions(llmproxy, question):
    assert "answer" in ask(question)


@pytest.mark.llmproxy(chaos="--fail-first 2 --retry-after 0")
def test_survives_two_overloads(llmproxy):
    assert "answer" in ask("Who are you?", retries=2)
    assert [fault.next.value for fault in llmproxy.injected] == ["retried", "retried"]


def test_greeting(llmproxy):
    assert "answer" in ask_openai("Say hello")


def test_farewell(llmproxy):
    assert "answer" in ask_openai("Say goodbye")


def test_greeting_again(llmproxy):
    assert "answer" in ask_openai("Say hello")  # test_greeting's question


def test_weather_openai(llmproxy):
    assert "answer" in ask_openai("What is the weather in Oslo?")
'''

TESTS = 15


def record_suite(project: Path, upstream: str, home: Path) -> Path:
    """Record the suite's cassettes (`pytest --llmproxy-mode once` in `project`, as a developer would) and
    return their folder."""
    (project / "pytest.ini").write_text("[pytest]\nfilterwarnings = ignore::DeprecationWarning\n")
    (project / "test_weather_app.py").write_text(APP.format(url=upstream))
    hidden = {*CI_VARIABLES, "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "NO_PROXY", "no_proxy"}
    environment = {name: value for name, value in os.environ.items() if name not in hidden}
    environment |= {"LLMPROXY_HOME": str(home), "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--llmproxy-mode", "once"]
    run = subprocess.run(command, cwd=project, env=environment, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"{TESTS} passed" in run.stdout, run.stdout
    return project / "cassettes" / "test_weather_app"
