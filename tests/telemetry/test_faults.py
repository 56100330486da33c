"""A collector that answers 500, is slow, or is not there never breaks the traffic: every call is answered,
the spans it could not take are dropped and counted (on `/metrics` too), and the run says so once. A bad
endpoint, or an `OTEL_*` variable llmproxy cannot follow, is one line at start-up. Exporting needs no
OpenTelemetry package; telemetry off never imports one."""

import json
import logging
import os
import subprocess
import sys
import urllib.request
from dataclasses import replace
from pathlib import Path

import pytest

from llmproxy.chain.taps.meter import MeterTap
from llmproxy.plan import mock_plan
from llmproxy.session import Listening, Session, running
from llmproxy.telemetry import otlp
from llmproxy.telemetry.settings import TelemetryPlan
from tests.telemetry.backends import free_port
from tests.telemetry.receiver import receiver
from tests.telemetry.test_backends import ask

REPOSITORY = Path(__file__).resolve().parents[2]
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
CALLS = ("one?", "two?", "three?")


@pytest.fixture
def expectations(tmp_path: Path) -> Path:
    path = tmp_path / "expectations.json"
    usage = {"inputTokens": 10, "outputTokens": 2}
    path.write_text(json.dumps({"expectations": [{"respond": {"text": "ok", "usage": usage}}]}))
    return path


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch about every call (hardly any lingering), and a send given up after a second."""
    monkeypatch.setattr(otlp, "LINGER", 0.05)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1000")


def metrics(proxy: Session) -> str:
    with DIRECT.open(proxy.control_url.removesuffix("/llmproxy/chaos") + "/metrics", timeout=5) as answer:
        text: str = answer.read().decode()
        return text


def dropped(text: str) -> float:
    line = next(line for line in text.splitlines() if line.startswith("llmproxy_telemetry_dropped_spans_total"))
    return float(line.split()[-1])


@pytest.mark.parametrize("fault", ["500", "slow", "down"])
def test_a_failing_collector_drops_and_counts_spans_and_warns_once(
    fault: str, expectations: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with receiver() as (url, received):
        if fault == "500":
            received.status = 500
        elif fault == "slow":
            received.delay = 3.0  # beyond the exporter's timeout
        else:
            url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
        telemetry = TelemetryPlan(export=True, endpoint=url, metrics=True)
        plan = replace(mock_plan(expectations), telemetry=telemetry)
        with caplog.at_level(logging.WARNING, "llmproxy.telemetry"):
            with running(Session.of(plan), Listening(ca_directory=tmp_path / "ca")) as proxy:
                answers = ask(proxy, CALLS)
                assert [answer.content[0].text for answer in answers] == ["ok"] * len(CALLS)
                assert "llmproxy_calls_total" in metrics(proxy)
            meter = proxy.meter  # the run went on to the end, its calls all metered
            assert meter is not None
            assert len(meter.calls) == len(CALLS)
        if fault != "slow":  # a slow collector may keep what it answers too late
            with received.lock:
                assert received.spans == []
    warnings = [record for record in caplog.records if record.name.startswith("llmproxy.telemetry")]
    assert len(warnings) == 1, [record.getMessage() for record in warnings]
    assert "dropped" in warnings[0].getMessage() or "did not take" in warnings[0].getMessage()


def test_dropped_spans_are_counted_on_metrics(expectations: Path, tmp_path: Path) -> None:
    with receiver() as (url, received):
        received.status = 500
        plan = replace(mock_plan(expectations), telemetry=TelemetryPlan(export=True, endpoint=url, metrics=True))
        with running(Session.of(plan), Listening(ca_directory=tmp_path / "ca")) as proxy:
            ask(proxy, CALLS[:1])
            received.wait(lambda got: got.posts >= 1)
            meter = next(tap for tap in proxy.chain.taps if isinstance(tap, MeterTap))
            export = meter.telemetry.export if meter.telemetry is not None else None
            assert export is not None
            received.wait(lambda got: export.dropped >= 1)
            assert dropped(metrics(proxy)) == export.dropped


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "llmproxy", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPOSITORY,
        env=env,
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "env", "said"),
    [
        (["--otlp", "collector:4318"], {}, "--otlp 'collector:4318' is not an http:// or https:// URL with a host"),
        (["--otlp", "http://[::1"], {}, "--otlp 'http://[::1' is not a URL"),
        (["--otel"], {"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://x"}, "OTEL_EXPORTER_OTLP_ENDPOINT 'ftp://x' is not"),
        (["--otel-content"], {}, "--otel-content puts the messages on the spans: it needs --otel or --otlp URL"),
    ],
)
def test_a_bad_telemetry_option_is_one_line_at_start_up(args: list[str], env: dict[str, str], said: str) -> None:
    done = run_cli("replay", "--cassette", "cassettes/quickstart.json", *args, "--", "true", env=os.environ | env)
    assert done.returncode == 2
    assert said in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


BLOCKED = """
import sys, runpy
class Missing:
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None
sys.meta_path.insert(0, Missing())
sys.argv = ["llmproxy", *sys.argv[1:]]
runpy.run_module("llmproxy", run_name="__main__")
"""


@pytest.mark.slow
def test_exporting_needs_no_opentelemetry_package() -> None:
    """Every `opentelemetry` module made unimportable: `export otlp` still sends its span, which the receiver
    decodes with the OTLP specification's own messages."""
    with receiver() as (url, received):
        done = subprocess.run(
            [sys.executable, "-c", BLOCKED, "export", "otlp", "cassettes/quickstart.json", "--otlp", url],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=REPOSITORY,
        )
    assert done.returncode == 0, done.stderr
    assert [span.name for span in received.spans] == ["chat claude-haiku-4-5"]


UNTOUCHED = """
import sys
import anthropic
from llmproxy.session import Listening, replaying

from pathlib import Path
with replaying("cassettes/quickstart.json", listening=Listening(ca_directory=Path(sys.argv[1])), timing=None) as proxy:
    http = anthropic.DefaultHttpxClient(proxy=proxy.url, verify=proxy.environment["SSL_CERT_FILE"])
    with anthropic.Anthropic(api_key="k", http_client=http, max_retries=0) as client:
        with client.messages.stream(model="claude-haiku-4-5", max_tokens=200, messages=[
            {"role": "user", "content": "In two sentences: what does an LLM traffic recorder let me do in CI?"}
        ]) as stream:
            text = stream.get_final_text()
assert text, "no answer"
print(sorted(name for name in sys.modules if name.startswith(("opentelemetry.sdk", "opentelemetry.exporter"))))
"""


@pytest.mark.slow
def test_telemetry_off_never_imports_the_sdk(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", UNTOUCHED, str(tmp_path / "ca")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPOSITORY,
        check=True,
    )
    assert done.stdout.strip() == "[]"
