"""A HAR written by Chromium itself: a page making the fetch calls an LLM web app makes (a chat completion, a
streamed one, an Anthropic message, gzip-encoded), recorded through the DevTools protocol by Playwright's
`record_har_path`, in Debian's chromium; imported, it reads as llmproxy's recording of the same calls."""

from pathlib import Path

import pytest

from llmproxy.cassette.decode import decode_exchange
from llmproxy.cassette.store import load_cassette
from tests.analysis.browser import FLAGS, chromium
from tests.conformance.server import Reply
from tests.e2e.clis import ScriptedServer
from tests.importing.conftest import gzipping
from tests.importing.test_import import run
from tests.record.world import turns

PAGE = b"""<!doctype html><title>chat</title><script>
async function call(path, body) {
  const headers = {"content-type": "application/json",
    "x-api-key": "sk-ant-api03-page-key-that-is-not-real-0000000000000000000000000000000000"};
  const response = await fetch(path, {method: "POST", headers, body: JSON.stringify(body)});
  return await response.text();
}
window.done = (async () => [
  await call("/v1/chat/completions", {model: "gpt-5-mini", messages: [{role: "user", content: "one"}]}),
  await call("/v1/chat/completions", {model: "gpt-5-mini", messages: [{role: "user", content: "two"}], stream: true,
    stream_options: {include_usage: true}}),
  await call("/v1/messages",
    {model: "claude-sonnet-4-6", max_tokens: 64, messages: [{role: "user", content: "three"}]}),
])();
</script>"""


@pytest.mark.service
def test_a_har_chromium_wrote_imports_as_if_recorded(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    executable = chromium()
    answers = turns(3)
    server = ScriptedServer(answers)
    scripted = gzipping(server.scripted)
    server.answer = lambda received: (
        Reply(200, {"content-type": "text/html"}, PAGE) if received.path == "/" else (scripted(received))
    )
    har = tmp_path / "page.har"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=executable, headless=True, args=FLAGS)
            context = browser.new_context(record_har_path=str(har))
            page = context.new_page()
            page.goto(server.url + "/")
            bodies = page.evaluate("window.done")
            context.close()  # the HAR is written now
            browser.close()
    finally:
        server.close()
    assert len(bodies) == 3
    output = tmp_path / "page.json"
    code, said = run("cassette", "import", str(har), "-o", str(output))
    assert code == 0, said
    assert "dropped 1 request to no LLM API (127.0.0.1 1)" in said  # the page itself
    exchanges = load_cassette(output).exchanges
    assert [(e.provider, e.streaming) for e in exchanges] == [("openai", False), ("openai", True), ("anthropic", False)]
    completions = [decode_exchange(exchange).completion for exchange in exchanges]
    assert [c.text if c else None for c in completions] == [answer.text for answer in answers]
    assert all(e.timings.ttfb_ms is not None and e.timings.total_ms is not None for e in exchanges)
    assert b"page-key-that-is-not-real" not in output.read_bytes()
    assert run("cassette", "check", str(output))[0] == 0
