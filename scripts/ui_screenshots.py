"""Write docs/ui/*.png, docs/ui.md's pictures of each view of the dashboard: `llmproxy ui` over the committed
cassettes (Traffic, Trace, Sessions, Optimise) and `llmproxy mock --ui` sent a few requests by the official
OpenAI SDK, one of them missed and one met by chaos (Misses, Chaos, Expectations), each opened in headless
Chromium (Debian's `chromium`).

    .venv/bin/python scripts/ui_screenshots.py
"""

import contextlib
import json
import sys
import tempfile
from pathlib import Path

import openai

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.analysis.browser import browsing  # noqa: E402
from tests.ui.dashboard import read_json  # noqa: E402
from tests.ui.test_dashboard_in_chromium import Running, ask, started  # noqa: E402

TARGET = ROOT / "docs" / "ui"
WIDTH = 1280


def shoot(running: Running, views: dict[str, str]) -> None:
    with browsing(running.url, WIDTH) as (page, _):
        page.wait_for_selector("[data-state=live]")
        for name, ready in views.items():
            view, _, ready_selector = ready.partition(" ")
            page.goto(f"{running.origin}/llmproxy/ui/#/{view}")
            page.wait_for_selector(ready_selector)
            page.wait_for_timeout(300)  # the last paint
            path = TARGET / f"{name}.png"
            page.screenshot(path=str(path), clip={"x": 0, "y": 0, "width": WIDTH, "height": 900})
            print(f"wrote {path.relative_to(ROOT)}")


def _second_turn(running: Running, cassette: str) -> int:
    """The journal number of the second LLM call recorded in `cassette`: a turn that adds to the one before."""
    token = running.url.partition("token=")[2]
    entries = read_json(running.url, "/llmproxy/api/v1/journal", token)["entries"]
    calls = [entry["seq"] for entry in entries if entry["testId"] == cassette and entry.get("provider")]
    return int(calls[1])


def main() -> int:
    TARGET.mkdir(exist_ok=True)
    with started("ui", "cassettes", "--no-open", cwd=ROOT) as at_rest:
        turn = _second_turn(at_rest, "cassettes/claude-code-tool-loop.json")
        shoot(
            at_rest,
            {
                "traffic": "traffic [data-testid=traffic-row]",
                "trace": f"trace/{turn} [data-testid=added] [data-change=messages]",
                "sessions": "sessions [data-testid=call-graph]",
                "optimise": "optimise [data-testid=signal]",
            },
        )
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        expectations = {
            "expectations": [
                {"match": {"latestMessageContains": "capital"}, "respond": {"text": "Paris is the capital of France."}},
                {"match": {"latestMessageContains": "weather"}, "respond": {"text": "Sunny."}, "times": 10},
            ]
        }
        (folder / "expectations.json").write_text(json.dumps(expectations))
        with started("mock", "--expectations", "expectations.json", "--ui", "--no-open", cwd=folder) as mock:
            ask(mock, "What is the capital of France?")
            ask(mock, "The weather in Paris?")
            mock.control("POST", "/save", {"path": "saved.json"})  # in the mock's folder: no machine path shown
            mock.control("POST", "/load", {"path": "saved.json"})
            with contextlib.suppress(openai.BadRequestError):  # the miss the Misses view shows
                ask(mock, "What is the population of France?")
            mock.control("PUT", "/llmproxy/chaos", {"host": "api.openai.com", "chaos": {"errorStatus": 529}})
            with contextlib.suppress(openai.APIStatusError):  # the fault the Chaos view counts
                ask(mock, "The weather in Rome?")
            shoot(
                mock,
                {
                    "misses": "misses [data-testid=miss]",
                    "chaos": "chaos [data-testid=chaos-injected] [data-kind]",
                    "expectations": "expectations [data-testid=expectation]",
                },
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
