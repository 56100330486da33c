"""docs/control.md's sections on verify, misses, report and explain run as written: each request body it shows
for an endpoint (a ```json block named with the endpoint's path) is sent to a real running mock after the
traffic it describes and holds, and its Python example runs in a folder holding the expectations file it names,
printing what its comments say."""

import contextlib
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llmproxy.session import Listening, Session, mocking
from tests.control.test_api import call
from tests.mock.sdk_clients import openai_client
from tests.test_session_page import BLOCK, PRINTED, said

PAGE = Path(__file__).resolve().parents[2] / "docs" / "control.md"
BODIES = re.compile(r"```json ([a-z/-]+)\n(.*?)```", re.S)  # a request body, fenced with its endpoint's path
EXAMPLE = re.compile(r"```py\n(.*?)```", re.S)
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]


def files() -> dict[str, str]:
    return {name: code for name, language, code in BLOCK.findall(PAGE.read_text()) if language == "json" and name}


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    """The page's agent.json, answering the tool loop it describes (sent with the test id `forecast`)."""
    folder = tmp_path_factory.mktemp("page")
    (folder / "agent.json").write_text(files()["agent.json"])
    with mocking(folder / "agent.json", Listening(ca_directory=folder / "ca")) as session:
        with openai_client(session) as client:
            asked: list[Any] = [{"role": "user", "content": "The weather in Paris?"}]
            forecast = {"x-llmproxy-test-id": "forecast"}
            first = client.chat.completions.create(
                model="gpt-4o-mini", messages=asked, tools=TOOLS, extra_headers=forecast
            )
            use = first.choices[0].message.tool_calls[0]
            asked += [
                first.choices[0].message.model_dump(exclude_none=True),
                {"role": "tool", "tool_call_id": use.id, "content": "sunny"},
            ]
            client.chat.completions.create(model="gpt-4o-mini", messages=asked, tools=TOOLS, extra_headers=forecast)
        yield session


@pytest.mark.parametrize(("path", "body"), BODIES.findall(PAGE.read_text()))
def test_each_documented_body_holds_for_what_it_describes(agent: Session, path: str, body: str) -> None:
    status, answer, _ = call(agent, "POST", f"/{path}", json.loads(body), token="read-only")
    assert status == 200, answer
    if path == "misses/debug":
        assert answer["answeredBy"] == "expectation 1"
    else:
        assert answer["ok"], answer


def test_the_documented_bodies_are_there() -> None:
    paths = [path for path, _ in BODIES.findall(PAGE.read_text())]
    assert paths == ["verify/sequence", "verify/tool-call", "verify/structured-output", "verify/cost", "misses/debug"]


def test_the_python_example_runs_and_prints_what_it_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LLMPROXY_HOME", str(tmp_path / "home"))
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "SSL_CERT_FILE", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    for name, code in files().items():
        (tmp_path / name).write_text(code)
    [code] = EXAMPLE.findall(PAGE.read_text())
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(code, f"{PAGE}, the verify example", "exec"), {"__name__": "__main__"})
    for comment in PRINTED.findall(code):
        assert said(comment) in output.getvalue(), (comment, output.getvalue())
