"""Write the crafted cassettes under cassettes/report/: one run that triggers each optimisation signal, a
clean, well-cached run that triggers none, and a test suite's cassettes, one per test as the pytest plugin
names them (test-suite/); the report's tests and docs/report.md use them.

    .venv/bin/python scripts/make_report_cassettes.py

Each is an ordinary cassette (format v1) of Anthropic or OpenAI exchanges in their real wire formats, with
the usage a provider would report for such a run.
"""

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "cassettes" / "report"
START = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)

# A long, unchanging system prompt (about 1,700 tokens) and a large document (about 2,600 tokens).
SYSTEM = " ".join(f"Rule {n}: keep answers short, cite files by path and line, never invent APIs." for n in range(90))
DOCUMENT = "\n".join(f"Section {n}. The service retries failed uploads with exponential backoff." for n in range(150))
TOOLS = [
    {
        "name": name,
        "description": f"{name.replace('_', ' ').capitalize()}: " + "detailed usage notes. " * 40,
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    }
    for name in ("read_file", "write_file", "list_dir", "search", "run_tests")
]


WEATHER_SYSTEM = "You are the Acme weather assistant. Answer briefly."
WEATHER_TOOLS = [
    {
        "name": "get_weather",
        "description": "The current weather for a city: temperature in degrees Celsius and the sky.",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
    {
        "name": "search_docs",
        "description": "Search the Acme documentation: returns the titles and first lines of matching pages.",
        "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    },
]


class Run:
    """Exchanges of one cassette, a second apart, from `start`."""

    def __init__(self, start: datetime = START) -> None:
        self.exchanges: list[dict[str, Any]] = []
        self.start = start

    def anthropic(
        self,
        messages: list[dict[str, Any]],
        answer: list[dict[str, Any]],
        usage: tuple[int, int, int, int],  # uncached input, cache read, cache write, output
        *,
        model: str = "claude-sonnet-4-5",
        system: str | None = SYSTEM,
        tools: list[dict[str, Any]] | None = None,
    ) -> None:
        body: dict[str, Any] = {"model": model, "max_tokens": 4096, "messages": messages}
        if system:
            body["system"] = [{"type": "text", "text": system}]
        if tools:
            body["tools"] = tools
        uncached, read, write, output = usage
        reply = {
            "id": f"msg_{len(self.exchanges) + 1:04d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": answer,
            "stop_reason": "tool_use" if any(part["type"] == "tool_use" for part in answer) else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": uncached,
                "cache_read_input_tokens": read,
                "cache_creation_input_tokens": write,
                "output_tokens": output,
            },
        }
        self._add("anthropic", "messages", model, "https://api.anthropic.com/v1/messages", body, reply)

    def openai(self, messages: list[dict[str, Any]], text: str, usage: tuple[int, int, int], model: str) -> None:
        prompt, cached, output = usage
        body = {"model": model, "messages": messages}
        reply = {
            "id": f"chatcmpl-{len(self.exchanges) + 1:04d}",
            "object": "chat.completion",
            "created": 1780304400,
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": output,
                "total_tokens": prompt + output,
                "prompt_tokens_details": {"cached_tokens": cached},
            },
        }
        self._add("openai", "chat_completions", model, "https://api.openai.com/v1/chat/completions", body, reply)

    def _add(self, provider: str, operation: str, model: str, url: str, body: Any, reply: Any) -> None:
        number = len(self.exchanges) + 1
        started = self.start + timedelta(seconds=number)
        self.exchanges.append(
            {
                "id": number,
                "provider": provider,
                "operation": operation,
                "model": model,
                "request": {
                    "method": "POST",
                    "url": url,
                    "http_version": "HTTP/1.1",
                    "headers": ["content-type: application/json"],
                    "body": {"json": body},
                },
                "response": {
                    "status": 200,
                    "reason": "OK",
                    "http_version": "HTTP/1.1",
                    "headers": ["content-type: application/json"],
                    "body": {"json": reply},
                },
                "timings": {
                    "started_at": started.isoformat().replace("+00:00", "Z"),
                    "ttfb_ms": 400.0 + number,
                    "total_ms": 900.0 + 10 * number,
                },
            }
        )

    def write(self, name: str) -> None:
        data = {"llmproxy_cassette": 1, "exchanges": self.exchanges}
        path = OUT / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def said(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


def tool_use(ident: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": ident, "name": name, "input": arguments}


def result(ident: str, text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": ident, "content": text}]}


def assistant(content: list[dict[str, Any]]) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


def three_questions(run: Run, usage: tuple[int, int, int, int], **options: Any) -> None:
    history: list[dict[str, Any]] = []
    for question in ("Where is the retry logic?", "Which tests cover it?", "What is the backoff cap?"):
        history.append(user(question))
        run.anthropic(list(history), said("In src/upload.py."), usage, **options)
        history.append(assistant(said("In src/upload.py.")))


def weather_question(run: Run, history: list[dict[str, Any]], question: str, city: str | None) -> None:
    """The weather assistant's tool loop on Claude Haiku 4.5: a `get_weather` call when there is a city, its
    result sent back, the answer."""
    options: dict[str, Any] = {"model": "claude-haiku-4-5", "system": WEATHER_SYSTEM, "tools": WEATHER_TOOLS}
    history.append(user(question))
    prompt = 190 + 40 * len(history)
    if city is not None:
        ident = f"toolu_{len(run.exchanges) + 1:02d}"
        call = tool_use(ident, "get_weather", {"city": city})
        run.anthropic(list(history), [call], (prompt, 0, 0, 40), **options)
        history += [assistant([call]), result(ident, "12 C, clear")]
        prompt += 60
    answer = said(f"It is 12 C and clear in {city}." if city else "See the account page.")
    run.anthropic(list(history), answer, (prompt, 0, 0, 15), **options)
    history.append(assistant(answer))


def test_suite() -> None:
    """Six tests of a weather assistant, one cassette each: three ask the same question, one asks it twice, two
    need no tool; no test makes the model search the docs."""
    tests = {
        "test_weather[Oslo]": [("What is the weather in Oslo?", "Oslo")],
        "test_weather[Lima]": [("What is the weather in Lima?", "Lima")],
        "test_weather_on_the_home_page": [("What is the weather in Oslo?", "Oslo")],
        "test_weather_follow_up": [("What is the weather in Oslo?", "Oslo"), ("And tonight in Oslo?", "Oslo")],
        "test_password_reset": [("How do I reset my password?", None)],
        "test_plans": [("Which plans are there?", None)],
    }
    for number, (name, questions) in enumerate(tests.items()):
        run = Run(START + timedelta(minutes=number))
        history: list[dict[str, Any]] = []
        for question, city in questions:
            weather_question(run, history, question, city)
        run.write(f"test-suite/test_weather_app/{name}")


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    test_suite()

    run = Run()  # the system prompt re-sent three times, never cached
    three_questions(run, (1800, 0, 0, 40))
    run.write("repeated-system-prompt")

    run = Run()  # a large document pasted in the first message, re-sent every turn
    history = [user(f"Read this design document:\n{DOCUMENT}\n\nWhat does it say about retries?")]
    for turn in range(3):
        run.anthropic(list(history), said("It retries with backoff."), (2900 + 20 * turn, 0, 0, 30), system=None)
        history += [assistant(said("It retries with backoff.")), user(f"And question {turn + 2}?")]
    run.write("large-static-context")

    run = Run()  # the model asked three times to read the same file
    history = [user("Check the config, then again after each step.")]
    for turn in range(3):
        call = tool_use(f"toolu_{turn}", "read_file", {"path": "config.json"})
        run.anthropic(list(history), [call], (300 + 50 * turn, 0, 0, 25), system=None)
        history += [assistant([call]), result(f"toolu_{turn}", '{"retries": 3}')]
    run.write("deterministic-tool-call")

    run = Run()  # a tool returns a whole log file
    call = tool_use("toolu_log", "read_file", {"path": "build.log"})
    history = [user("Why did the build fail?")]
    run.anthropic(list(history), [call], (200, 0, 0, 20), system=None)
    history += [
        assistant([call]),
        result("toolu_log", "\n".join(f"[{n:05d}] compiling module {n}" for n in range(400))),
    ]
    run.anthropic(list(history), said("Module 17 failed."), (3400, 0, 0, 15), system=None)
    history += [assistant(said("Module 17 failed.")), user("Fix it.")]
    run.anthropic(list(history), said("Done."), (3450, 0, 0, 10), system=None)
    run.write("oversized-tool-result")

    run = Run()  # one answer ten times longer than the rest
    for n, output in enumerate((120, 110, 2400, 130)):
        answer = said("Summary. " * (output // 2))
        run.anthropic(
            [user(f"Summarise change {n}.")], answer, (90, 0, 0, output), model="claude-haiku-4-5", system=None
        )
    run.write("output-token-bloat")

    run = Run()  # the same request sent twice in a row after a successful answer
    for _ in range(2):
        answer = said("Three are open.")
        run.anthropic([user("List the open issues.")], answer, (150, 0, 0, 12), model="claude-haiku-4-5", system=None)
    run.write("duplicate-consecutive-call")

    run = Run()  # an OpenAI agent whose long system prompt is never read from the cache
    history = [{"role": "system", "content": SYSTEM}]
    for question in ("Where is the retry logic?", "Which tests cover it?", "What is the backoff cap?"):
        history.append(user(question))
        run.openai(list(history), "In src/upload.py.", (1900, 0, 40), "gpt-4o")
        history.append({"role": "assistant", "content": "In src/upload.py."})
    run.write("low-cache-hit-rate")

    run = Run()  # yes/no checks on the largest model
    for n in range(3):
        question = user(f"Is file {n} a test file? Answer yes or no.")
        run.anthropic([question], said("yes"), (60, 0, 0, 2), model="claude-opus-4-5", system=None)
    run.write("model-overspend")

    run = Run()  # five tools offered on every call, one used
    history = [user("Show me the README.")]
    call = tool_use("toolu_readme", "read_file", {"path": "README.md"})
    run.anthropic(list(history), [call], (2400, 0, 0, 20), system=None, tools=TOOLS)
    history += [assistant([call]), result("toolu_readme", "# Project\nA small service.")]
    run.anthropic(list(history), said("It describes a small service."), (2450, 0, 0, 12), system=None, tools=TOOLS)
    run.write("unused-tool-schema")

    run = Run()  # the clean run: the system prompt cached after the first call, short answers, tools all used
    history = []
    for n, question in enumerate(("Where is the retry logic?", "Which tests cover it?", "What is the backoff cap?")):
        history.append(user(question))
        usage = (60, 0, 1700, 20) if n == 0 else (60 + 20 * n, 1700, 0, 20)
        run.anthropic(list(history), said(f"Answer {n}."), usage, model="claude-haiku-4-5")
        history.append(assistant(said(f"Answer {n}.")))
    run.write("clean")
    return 0


if __name__ == "__main__":
    sys.exit(main())
