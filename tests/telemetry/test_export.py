"""`llmproxy export otlp CASSETTE…`: a committed cassette's exchanges reach an OTLP receiver as spans at the
times they were recorded, with their usage; a collector that is not there is a failed export, said once."""

import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from llmproxy.cassette.files import read_exchanges
from tests.telemetry.backends import free_port
from tests.telemetry.receiver import receiver

pytestmark = pytest.mark.slow

REPOSITORY = Path(__file__).resolve().parents[2]
QUICKSTART = REPOSITORY / "cassettes" / "quickstart.json"


def export(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "llmproxy", "export", "otlp", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPOSITORY,
        env=os.environ | (env or {}),
    )


def nanoseconds(at: datetime) -> int:
    return int(at.timestamp() * 1_000_000) * 1000


def test_a_committed_cassette_is_exported_at_its_recorded_times() -> None:
    (recorded,) = read_exchanges(QUICKSTART)
    with receiver() as (url, received):
        done = export(str(QUICKSTART), "--otlp", url)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "llmproxy export otlp: sent 1 span of 1 exchange"
    (span,) = received.spans
    assert span.name == "chat claude-haiku-4-5"
    assert abs(span.start_ns - nanoseconds(recorded.timings.started_at)) < 1_000_000  # within a millisecond
    assert recorded.timings.total_ms is not None
    assert abs((span.end_ns - span.start_ns) / 1e6 - recorded.timings.total_ms) < 1
    assert span.attributes["gen_ai.usage.input_tokens"] == 21
    assert span.attributes["gen_ai.usage.output_tokens"] == 46
    assert span.attributes["llmproxy.source"] == "live"
    assert span.attributes["llmproxy.cassette"] == str(QUICKSTART)


def test_a_collector_that_is_not_there_fails_the_export_in_one_warning() -> None:
    done = export(
        str(QUICKSTART), "--otlp", f"http://127.0.0.1:{free_port()}", env={"OTEL_EXPORTER_OTLP_TIMEOUT": "1000"}
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert lines[-1] == "llmproxy export otlp: sent 0 spans of 1 exchange"
    assert len(lines) == 2
    assert "telemetry spans dropped" in lines[0]
