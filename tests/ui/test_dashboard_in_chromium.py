"""The dashboard in a real headless Chromium, against the commands a user runs: `llmproxy mock --ui` (the
official OpenAI SDK sending through its proxy) and `llmproxy ui CASSETTE`. Each view loads; a request appears in
Traffic as it is answered (waited for in the DOM); a trace shows what a turn added; a miss shows its diff; a
chaos edit in the page meets the next request; model text that looks like HTML stays text; and the page asks
nothing of any origin but its own."""

import json
import re
import ssl
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

import openai
import pytest
from playwright.sync_api import Page

from llmproxy.cassette.files import read_exchanges
from llmproxy.cassette.model import dump
from tests.analysis.browser import browsing
from tests.ui.dashboard import get

pytestmark = pytest.mark.service

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = [
    "<script>window.pwned = 'script'</script>",
    '<img src="x" onerror="window.pwned = \'img\'">',
    "[open me](javascript:window.pwned='link') <a href=\"javascript:window.pwned='a'\">here</a>",
]
LONG_LINE = "x" * (5 * 1024 * 1024)  # a 5 MB answer on one line
EXPECTATIONS = {
    "expectations": [
        {"match": {"latestMessageContains": "capital"}, "respond": {"text": "Paris is the capital of France."}},
        {"match": {"latestMessageContains": "hostile"}, "respond": {"text": "\n".join(HOSTILE)}},
        {"match": {"latestMessageContains": "long"}, "respond": {"text": LONG_LINE}},
    ]
}


@dataclass
class Running:
    """A command run by the test, its dashboard's URL, and (a proxy's) the variables it exported."""

    process: subprocess.Popen[str]
    url: str
    exported: dict[str, str]

    @property
    def origin(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    def client(self) -> openai.OpenAI:
        trust = ssl.create_default_context(cafile=self.exported["SSL_CERT_FILE"])
        http = openai.DefaultHttpxClient(proxy=self.exported["HTTPS_PROXY"], verify=trust)
        return openai.OpenAI(api_key="sk-test", http_client=http, max_retries=0)

    def control(self, method: str, path: str, body: Any) -> None:
        """A call to the control API (`path` under its base, or the chaos endpoint) that must succeed."""
        headers = {"authorization": f"Bearer {self.exported['LLMPROXY_CONTROL_TOKEN']}"}
        where = path if path.startswith("/llmproxy/") else f"/llmproxy/api/v1{path}"
        answer = get(self.url, where, headers, method, json.dumps(body).encode())
        assert answer.status == 200, answer.status


def _line(stream: IO[str], pattern: str) -> re.Match[str]:
    for line in stream:
        found = re.search(pattern, line)
        if found:
            return found
    raise AssertionError(f"the command ended without printing {pattern}")


@contextmanager
def started(*args: str, cwd: Path) -> Iterator[Running]:
    command = [sys.executable, "-m", "llmproxy", *args]
    with subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        try:
            assert process.stderr is not None
            assert process.stdout is not None
            url = _line(process.stderr, r"dashboard (http://\S+)").group(1)
            exported: dict[str, str] = {}
            if args[0] != "ui":
                while "LLMPROXY_CONTROL_TOKEN_READONLY" not in exported:
                    found = _line(process.stdout, r"^export (\w+)=(.*)$")
                    exported[found.group(1)] = found.group(2)
            yield Running(process, url, exported)
        finally:
            process.terminate()
            process.communicate(timeout=30)


@pytest.fixture(scope="module")
def mock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    folder = tmp_path_factory.mktemp("dashboard")
    (folder / "expectations.json").write_text(json.dumps(EXPECTATIONS))
    with started("mock", "--expectations", "expectations.json", "--ui", "--no-open", cwd=folder) as running:
        yield running


def ask(running: Running, text: str, **extra: Any) -> Any:
    with running.client() as client:
        return client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": text}], **extra
        )


@contextmanager
def page_of(running: Running, view: str = "traffic") -> Iterator[tuple[Page, list[str]]]:
    with browsing(running.url) as (page, requested):
        page.wait_for_selector("[data-state=live]")
        if view != "traffic":
            page.goto(f"{running.origin}/llmproxy/ui/#/{view}")
        yield page, requested
        own = [url for url in requested if not url.startswith(running.origin + "/")]
        assert own == []  # every request of the page went to its own origin


def test_an_sdk_request_appears_in_traffic_as_it_is_answered(mock: Running) -> None:
    with page_of(mock) as (page, _):
        before = page.locator("[data-testid=traffic-row]").count()
        ask(mock, "What is the capital of France?")
        row = page.locator("[data-testid=traffic-row]").last
        row.locator(".c-model", has_text="gpt-4o-mini").wait_for()  # pushed by the event stream, never polled
        assert page.locator("[data-testid=traffic-row]").count() == before + 1
        assert row.locator(".c-source").inner_text() == "mocked"
        assert row.locator(".c-provider").inner_text() == "openai"
        assert int(row.locator(".c-output").inner_text()) > 0
        row.click()
        page.wait_for_selector("[data-testid=answer]")
        assert "Paris is the capital of France." in page.inner_text("[data-testid=answer]")
        assert "What is the capital of France?" in page.inner_text("[data-testid=conversation]")
        assert '"x-api-key"' not in page.inner_text("[data-testid=raw-request]")


def test_each_view_loads_from_a_running_mock(mock: Running) -> None:
    ask(mock, "The capital of Italy?")
    with page_of(mock) as (page, _):
        page.wait_for_selector("[data-testid=traffic-row]")
        for view, ready in [
            ("trace", "[data-testid=answer]"),
            ("sessions", "[data-testid=call-graph]"),
            ("optimise", "[data-testid=verdict]"),
            ("misses", "[data-testid=misses] > *:not(.loading)"),
            ("chaos", "[data-testid=chaos-state]:not(:text('Loading…'))"),
            ("expectations", "[data-testid=expectation]"),
        ]:
            page.goto(f"{mock.origin}/llmproxy/ui/#/{view}")
            page.wait_for_selector(ready)
            assert page.locator("[data-testid=error]").count() == 0, view
        assert page.locator("[data-testid=expectation]").count() == len(EXPECTATIONS["expectations"])


def test_model_text_that_looks_like_html_stays_text(mock: Running) -> None:
    answer = ask(mock, "hostile " + HOSTILE[1])
    with page_of(mock) as (page, _):
        page.locator("[data-testid=traffic-row]").last.click()
        page.wait_for_selector("[data-testid=answer]")
        shown = page.inner_text("[data-testid=answer]")
        for hostile in HOSTILE:
            assert hostile in shown  # shown as written
        assert answer.choices[0].message.content == "\n".join(HOSTILE)
        assert HOSTILE[1] in page.inner_text("[data-testid=conversation]")
        assert page.locator("[data-testid=trace] img, [data-testid=trace] script").count() == 0
        links = page.locator("[data-testid=trace] a").evaluate_all("links => links.map(link => link.href)")
        assert all(link.startswith(mock.origin + "/") for link in links)
        assert page.evaluate("window.pwned") is None


def test_a_5_mb_line_is_cut_and_the_page_stays_responsive(mock: Running) -> None:
    ask(mock, "long")
    with page_of(mock) as (page, _):
        page.locator("[data-testid=traffic-row]").last.click()
        page.wait_for_selector("[data-testid=answer] button.more")
        assert len(page.inner_text("[data-testid=answer]")) < 10_000  # cut until asked
        page.click("[data-testid=answer] button.more")
        assert page.evaluate("document.querySelector('[data-testid=answer]').textContent.length") >= len(LONG_LINE)
        page.click("nav a[data-view=traffic]")
        page.wait_for_selector("[data-testid=traffic-row]")


def test_a_stream_shows_its_timeline_and_first_token(mock: Running) -> None:
    with mock.client() as client:
        chunks = list(
            client.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "capital?"}], stream=True
            )
        )
    assert "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices) == (
        "Paris is the capital of France."
    )
    with page_of(mock) as (page, _):
        page.locator("[data-testid=traffic-row]").last.click()
        timeline = page.locator("[data-testid=timeline]")
        timeline.wait_for()
        events = int(timeline.get_attribute("data-events") or 0)
        assert events >= len(chunks)  # every event the client read, and the stream's end
        assert page.locator("[data-testid=timeline] line.tick").count() == events
        assert page.locator("[data-testid=timeline] circle.first").count() == 1
        assert f"{events} events over" in page.inner_text("[data-testid=trace]")
        assert "first token at" in page.inner_text("[data-testid=trace]")


def test_the_raw_request_and_response_are_shown_redacted(mock: Running) -> None:
    secret = "sk-proj-" + "Q9w8E7r6T5y4U3i2" * 3  # key-shaped, in the prompt: redacted as a cassette is
    answer = ask(mock, f"capital? my key is {secret}")
    assert answer.choices[0].message.content == "Paris is the capital of France."
    with page_of(mock) as (page, _):
        page.locator("[data-testid=traffic-row]").last.click()
        page.wait_for_selector("[data-testid=raw-request]")
        page.click("[data-testid=raw-request] summary")
        page.click("[data-testid=raw-response] summary")
        request = page.inner_text("[data-testid=raw-request] pre")
        response = page.inner_text("[data-testid=raw-response] pre")
        assert "capital? my key is <redacted:" in request
        assert "sk-test" not in request  # the client's key, sent in its authorization header
        assert "Paris is the capital of France." in response
        assert secret not in page.content()  # nowhere in the page: not the conversation, not the raw request
        assert secret[:20] not in page.content()


def test_a_miss_shows_the_json_paths_that_differ(mock: Running, tmp_path: Path) -> None:
    ask(mock, "What is the capital of France?")
    saved = tmp_path / "saved.json"
    mock.control("POST", "/save", {"path": str(saved), "sources": ["mocked"]})
    mock.control("POST", "/load", {"path": str(saved)})
    with pytest.raises(openai.BadRequestError):
        ask(mock, "What is the population of France?")
    with page_of(mock, "misses") as (page, _):
        miss = page.locator("[data-testid=miss]").first
        miss.wait_for()
        paths = miss.locator("[data-testid=difference-path]").all_inner_texts()
        assert any("messages" in path for path in paths)
        assert "population" in miss.inner_text()


def test_a_chaos_edit_in_the_page_meets_the_next_request(mock: Running) -> None:
    with page_of(mock, "chaos") as (page, _):
        page.fill("[data-testid=chaos-host]", "api.openai.com")
        page.fill("[data-testid=chaos-profile]", '{"errorStatus": 529}')
        page.fill("[data-testid=chaos-ttl]", "60")
        page.click("[data-testid=chaos-apply]")
        page.wait_for_selector("[data-testid=chaos-message]:has-text('Put for api.openai.com')")
        with pytest.raises(openai.APIStatusError) as raised:
            ask(mock, "What is the capital of France?")
        assert raised.value.status_code == 529
        page.locator("[data-testid=chaos-injected] [data-kind]").first.wait_for()  # the counter moved, pushed
        page.click("[data-testid=chaos-clear]")
        page.wait_for_selector("[data-testid=chaos-message]:has-text('removed')")
    assert ask(mock, "What is the capital of France?").choices[0].message.content


def test_without_the_token_the_page_is_401(mock: Running) -> None:
    with browsing(f"{mock.origin}/llmproxy/ui/") as (page, requested):
        assert "needs the run's bearer token" in page.inner_text("body")
        response = page.request.get(f"{mock.origin}/llmproxy/api/v1/journal")
        assert response.status == 401
        assert requested == [f"{mock.origin}/llmproxy/ui/"]  # nothing else: no script ran


@pytest.fixture(scope="module")
def at_rest() -> Iterator[Running]:
    with started("ui", "cassettes/claude-code-tool-loop.json", "--no-open", cwd=ROOT) as running:
        yield running


def test_a_trace_shows_a_changed_system_prompt_changed_tools_and_moved_cache_breakpoints(tmp_path: Path) -> None:
    # each exchange whole, its shared parts in place, so that one turn's system prompt and tools can be changed
    exchanges = [dump(exchange) for exchange in read_exchanges(ROOT / "cassettes" / "claude-code-tool-loop.json")]
    recorded = {"llmproxy_cassette": 1, "exchanges": exchanges}
    turn = next(exchange for exchange in recorded["exchanges"] if exchange["id"] == 4)["request"]["body"]["json"]
    turn["system"][-1]["text"] = "You are a careful reviewer."
    tools = [tool for tool in turn["tools"] if tool["name"] != "ListAgents"]
    read = next(tool for tool in tools if tool["name"] == "Read")
    read["description"] = "Read a file, and say why."
    glob = {"name": "Glob", "description": "Find files.", "input_schema": {"type": "object"}}
    turn["tools"] = [*tools, glob | {"cache_control": {"type": "ephemeral"}}]
    cassette = tmp_path / "changed.json"
    cassette.write_text(json.dumps(recorded))
    with started("ui", str(cassette), "--no-open", cwd=tmp_path) as running, page_of(running, "trace/4") as (page, _):
        changes = page.locator("[data-testid=added] [data-change]")
        changes.first.wait_for()
        shown = {item.get_attribute("data-change"): item.inner_text() for item in changes.all()}
        assert shown["system"] == "system prompt changed"
        assert shown["tools-added"] == "tools added: Glob"
        assert shown["tools-removed"] == "tools removed: ListAgents"
        assert shown["tools-changed"] == "tools changed: Read"
        before, _, after = shown["cache"].removeprefix("cache breakpoints moved: ").partition(" → ")
        assert f"$.tools[{len(tools)}]" in after.split(", ")  # the part that carries the breakpoint
        assert "$.tools" not in before
        assert shown["messages"] == "2 new messages (from message 3)"  # what the unchanged test sees too


def test_each_view_loads_from_cassettes_at_rest(at_rest: Running) -> None:
    with page_of(at_rest) as (page, _):
        page.wait_for_selector("[data-testid=traffic-row]")
        assert "read-only" in page.inner_text("[data-testid=status]")
        for view, ready in [
            ("trace", "[data-testid=answer]"),
            ("sessions", "[data-testid=call-graph]"),
            ("optimise", "[data-testid=verdict]"),
            ("misses", "[data-testid=no-misses]"),
            ("chaos", "[data-testid=chaos-apply][disabled]"),
            ("expectations", "[data-testid=expectations] .empty"),
        ]:
            page.goto(f"{at_rest.origin}/llmproxy/ui/#/{view}")
            page.wait_for_selector(ready)


def test_a_trace_shows_what_a_turn_added(at_rest: Running) -> None:
    with page_of(at_rest, "trace/4") as (page, _):
        added = page.locator("[data-testid=added] [data-change=messages]")
        added.wait_for()
        assert added.inner_text() == "2 new messages (from message 3)"
        new = page.locator("[data-testid=added] .new-messages .message")
        assert new.count() == 2
        assert "Bash" in new.nth(0).inner_text()  # the assistant's tool call
        assert "llmproxy-ok" in new.nth(1).inner_text()  # and its result
        assert page.locator("[data-testid=timeline]").get_attribute("data-events")
